/**
 * Opening hours and the link to the operator's MQTT broker (fleet/fleet-host.ts), with the actions only
 * the app can do: reload the page, restart the app, and a screenshot of the kiosk window with the
 * visitor's camera preview hidden while it is taken.
 */
import { app, type BrowserWindow } from 'electron';
import { systemClock } from '../../core/clock.ts';
import { AvatarError } from '../../core/errors.ts';
import { DIRECT, routeFor } from '../../core/proxy.ts';
import { startFleetHost, type FleetHost } from '../../fleet/fleet-host.ts';
import type { SafeUpdates } from '../../fleet/safe-updates.ts';
import type { StaffOperationsFeature } from './staff-operations.ts';
import { relaunchApp } from '../platform.ts';
import type { Feature } from './feature.ts';
import type { FleetMetricsFeature } from './fleet-metrics.ts';

/** Hides every element the page marks as showing the visitor's camera (the self-view). */
export const HIDE_CAMERA_PREVIEW_CSS = '[data-camera-preview] { visibility: hidden !important; }';

/** The window as PNG, the camera preview hidden for the capture only. */
export async function captureWithoutCamera(win: BrowserWindow): Promise<{ png: Buffer; width: number; height: number }> {
  if (win.isDestroyed()) throw new AvatarError('internal', 'The kiosk window is gone.');
  const key = await win.webContents.insertCSS(HIDE_CAMERA_PREVIEW_CSS); // eng-disable DANGEROUS_FUNCTIONS_JS_CHECK reviewed: a constant style of ours, never remote content
  try {
    // A frame for the style to take effect before the capture.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const image = await win.webContents.capturePage();
    const size = image.getSize();
    return { png: image.toPNG(), width: size.width, height: size.height };
  } finally {
    await win.webContents.removeInsertedCSS(key).catch(() => undefined);
  }
}

export interface FleetLinkFeature extends Feature {
  /** The running fleet host (null before start). */
  readonly host: FleetHost | null;
  /** Set by the safe-updates feature (it starts later): the status and the update commands read it. */
  updates: SafeUpdates | null;
}

export function fleetLink(staff: StaffOperationsFeature, metrics: FleetMetricsFeature): FleetLinkFeature {
  let host: FleetHost | null = null;
  const feature: FleetLinkFeature = {
    name: 'fleet link',
    updates: null,
    get host() {
      return host;
    },
    async start({ kiosk, settings, window, lifecycle, logger, proxy, reloadPage }) {
      const reload = reloadPage;
      const mqttUrl = kiosk.config.mqtt?.url;
      const mqttRoute = mqttUrl ? await routeFor(mqttUrl, proxy, logger) : DIRECT;
      host = startFleetHost({
        mqttRoute,
        sandbox: !kiosk.appearance.attention.some((item) => item.kind === 'sandbox'),
        kiosk,
        ledger: staff.ops?.ledger ?? null,
        dataDir: app.getPath('userData'),
        version: app.getVersion(),
        clock: systemClock,
        logger,
        configFile: settings.persistence,
        env: process.env,
        policy: settings.policy.policy,
        policyError: staff.ops?.pin.state().outOfOrder ?? (settings.policy.problems.length ? settings.policy.problems.join(' ') : null),
        appRoot: app.getAppPath(),
        registry: metrics.metrics?.registry ?? null,
        lastErrorCode: () => metrics.metrics?.health().lastErrorCode ?? null,
        updates: () => feature.updates,
        actions: {
          reload,
          restart: () => {
            relaunchApp();
            void lifecycle.requestQuit('other');
          },
          screenshot: () => captureWithoutCamera(window),
          // The attract screen shows the new name, cast and hours.
          afterApply: () => void reload().catch((e: unknown) => logger.warn('Reload after apply failed', { error: String(e) })),
        },
      });
    },
    async stop() {
      await host?.close();
    },
  };
  return feature;
}
