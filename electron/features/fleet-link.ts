/**
 * Opening hours and the link to the operator's MQTT broker (fleet/fleet-host.ts), with what only the host
 * can do (fleetActions: reload the page, restart, a screenshot); a host without one says why, and the
 * commands needing it are refused in those words.
 */
import { DIRECT, routeFor } from '../core/proxy.ts';
import { startFleetHost, type FleetHost } from '../fleet/fleet-host.ts';
import type { SafeUpdates } from '../fleet/safe-updates.ts';
import type { Feature } from './feature.ts';
import type { FleetMetricsFeature } from './fleet-metrics.ts';
import type { StaffOperationsFeature } from './staff-operations.ts';

export interface FleetLinkFeature extends Feature {
  /** The running fleet host (null before start). */
  readonly host: FleetHost | null;
  /** Set by the safe-updates feature (it starts later): the status and the update commands read it. */
  updates: SafeUpdates | null;
}

export function fleetLink(staff: StaffOperationsFeature, metrics: FleetMetricsFeature): FleetLinkFeature {
  let fleetHost: FleetHost | null = null;
  const feature: FleetLinkFeature = {
    name: 'fleet link',
    updates: null,
    get host() {
      return fleetHost;
    },
    async start({ kiosk, settings, host, logger }) {
      const mqttUrl = kiosk.config.mqtt?.url;
      const mqttRoute = mqttUrl && host.proxy ? await routeFor(mqttUrl, host.proxy, logger) : DIRECT;
      const reload = host.fleetActions.reload;
      fleetHost = startFleetHost({
        mqttRoute,
        ...(host.sandbox !== undefined ? { sandbox: host.sandbox } : {}),
        kiosk,
        ledger: staff.ops?.ledger ?? null,
        dataDir: host.dataDir,
        version: host.version,
        clock: host.clock,
        logger,
        configFile: settings.persistence,
        env: host.env,
        policy: settings.policy.policy,
        // The fleet hears why the policy was not applied, or why the kiosk is out of order.
        policyError: staff.ops?.pin.state().outOfOrder ?? (settings.policy.problems.length ? settings.policy.problems.join(' ') : null),
        appRoot: host.appRoot,
        registry: metrics.metrics?.registry ?? null,
        lastErrorCode: () => metrics.metrics?.health().lastErrorCode ?? null,
        updates: () => feature.updates,
        actions: {
          ...host.fleetActions,
          // The attract screen shows the new name, cast and hours.
          ...(reload ? { afterApply: () => void Promise.resolve().then(reload).catch((e: unknown) => logger.warn('Reload after apply failed', { error: String(e) })) } : {}),
        },
      });
    },
    async stop() {
      await fleetHost?.close();
    },
  };
  return feature;
}
