/**
 * Opt-in `/metrics` and `/healthz` for the venue's Prometheus (fleet/metrics.ts). A failure to bind never
 * stops the kiosk.
 */
import { join } from 'node:path';
import { kioskMetricsSource, startFleetMetrics, type FleetMetrics, type KioskMetrics } from '../fleet/metrics.ts';
import type { Feature } from './feature.ts';

export interface FleetMetricsFeature extends Feature {
  /** The running metrics (null before start or when `metrics.enabled` is off). */
  readonly metrics: KioskMetrics | null;
}

export function fleetMetrics(): FleetMetricsFeature {
  let fleet: FleetMetrics | null = null;
  return {
    name: 'fleet metrics',
    get metrics() {
      return fleet?.metrics ?? null;
    },
    async start({ kiosk, settings, host, logger }) {
      fleet = await startFleetMetrics({
        config: settings.config,
        service: kioskMetricsSource(kiosk),
        version: host.version,
        launchStatePath: join(host.dataDir, 'metrics-state.json'),
        // Every start-up problem staff are asked to look at (config, policy, cast, key).
        startupErrors: kiosk.appearance.attention.map((item) => item.code),
        logger,
      });
      const metrics = fleet?.metrics;
      if (metrics) host.window?.onRendererGone((reason) => metrics.rendererGone(reason));
    },
    async stop() {
      await fleet?.close();
    },
  };
}
