/**
 * Safe updates (fleet/safe-updates.ts) on the `update` settings, with the host's in-app updater:
 * background download from the signed feed, install only outside the opening hours or after the kiosk was
 * idle, never during a call. How this installation updates is the host's to say (HostUpdater.model: a deb
 * is updated by the OS's package manager, and the in-app updater stays off).
 */
import { defaultKioskId } from '../fleet/mqtt-link.ts';
import { startSafeUpdates, type SafeUpdates, type UpdaterLike } from '../fleet/safe-updates.ts';
import type { Feature } from './feature.ts';
import type { FleetLinkFeature } from './fleet-link.ts';

export interface SafeUpdatesFeature extends Feature {
  readonly updates: SafeUpdates | null;
}

export function safeUpdates(fleet: FleetLinkFeature): SafeUpdatesFeature {
  let updates: SafeUpdates | null = null;
  let unsubscribe: (() => void) | null = null;
  return {
    name: 'safe updates',
    get updates() {
      return updates;
    },
    start({ kiosk, settings, host, logger }) {
      const update = settings.config.update;
      if (!update?.url) return;
      if (!host.updater) {
        logger.info('Updates: this host has no in-app updater; the update settings are not used', { url: update.url });
        return;
      }
      const { model, updater } = host.updater();
      // electron-updater's getter would pick DebUpdater (pkexec dpkg -i): not even created.
      if (!model.inApp) logger.info('Updates: the in-app updater is off', { why: model.why });
      const clock = host.clock;
      let lastActivityMs = clock.now();
      updates = startSafeUpdates({
        updater: updater ?? inactiveUpdater(),
        settings: update,
        currentVersion: host.version,
        kioskId: settings.config.mqtt?.kioskId ?? defaultKioskId(),
        dataDir: host.dataDir,
        clock,
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
          lastActivityMs = clock.now();
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
