/**
 * Safe updates (fleet/safe-updates.ts) with electron-updater's `autoUpdater` on the `update` settings:
 * background download from the signed feed, install only outside the opening hours or after the kiosk was
 * idle, never during a call. How this installation updates is read from what the build wrote beside the
 * app (`package-type` in a deb: the OS's package manager updates it, the in-app updater stays off). Its
 * quit goes through the lifecycle ('before-quit-for-update' in index.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { app } from 'electron';
import electronUpdater from 'electron-updater';
import { systemClock } from '../../core/clock.ts';
import { defaultKioskId } from '../../fleet/mqtt-link.ts';
import { startSafeUpdates, type SafeUpdates, type UpdaterLike } from '../../fleet/safe-updates.ts';
import { installModel } from '../../fleet/update-policy.ts';
import type { Feature } from './feature.ts';
import type { FleetLinkFeature } from './fleet-link.ts';

export interface SafeUpdatesFeature extends Feature {
  readonly updates: SafeUpdates | null;
}

/** The `package-type` file electron-builder writes into a deb's (rpm's) resources, or null. */
function packageType(): string | null {
  try {
    return readFileSync(join(process.resourcesPath, 'package-type'), 'utf8').trim().slice(0, 16) || null;
  } catch {
    return null;
  }
}

export function safeUpdates(fleet: FleetLinkFeature): SafeUpdatesFeature {
  let updates: SafeUpdates | null = null;
  let unsubscribe: (() => void) | null = null;
  return {
    name: 'safe updates',
    get updates() {
      return updates;
    },
    start({ kiosk, settings, logger }) {
      const update = settings.config.update;
      if (!update?.url) return;
      const model = installModel({ platform: process.platform, isPackaged: app.isPackaged, packageType: packageType(), appImage: Boolean(process.env.APPIMAGE) });
      if (!model.inApp) {
        // electron-updater's getter would pick DebUpdater (pkexec dpkg -i): not even created.
        logger.info('Updates: the in-app updater is off', { why: model.why });
      }
      let lastActivityMs = systemClock.now();
      updates = startSafeUpdates({
        updater: model.inApp ? (electronUpdater.autoUpdater as unknown as UpdaterLike) : inactiveUpdater(),
        settings: update,
        currentVersion: app.getVersion(),
        kioskId: settings.config.mqtt?.kioskId ?? defaultKioskId(),
        dataDir: app.getPath('userData'),
        clock: systemClock,
        model,
        logger,
        inCall: () => kiosk.calls.running,
        opening: () => (kiosk.config.schedule ? (fleet.host?.opening ?? null) : null),
        lastActivityMs: () => lastActivityMs,
        // From the decision to the quit no call may start (Squirrel.Mac fetches only now): "back in a moment".
        holdCalls: () => kiosk.availability.setHold('updating'),
        releaseCalls: () => kiosk.availability.setHold(null),
        onChange: () => fleet.host?.link?.statusChanged(),
      });
      fleet.updates = updates;
      unsubscribe = kiosk.events.onEvent((event) => {
        if (event.type === 'state') {
          lastActivityMs = systemClock.now();
          if (event.state.phase === 'ended' || event.state.phase === 'failed' || event.state.phase === 'idle') updates?.poke();
        } else if (event.type === 'opening') updates?.poke();
      });
    },
    stop() {
      unsubscribe?.();
      fleet.updates = null;
      updates?.dispose();
    },
  };
}

/** Stands in where the in-app updater is off (never asked: the phase stays `off`). */
function inactiveUpdater(): UpdaterLike {
  const refuse = () => Promise.reject(new Error('the in-app updater is off for this installation'));
  return {
    autoDownload: false,
    autoInstallOnAppQuit: false,
    allowDowngrade: false,
    isUserWithinRollout: () => false,
    setFeedURL() {},
    checkForUpdates: refuse,
    downloadUpdate: refuse,
    quitAndInstall() {},
    on() {},
  };
}
