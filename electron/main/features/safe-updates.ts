/**
 * Safe updates (fleet/safe-updates.ts) with electron-updater's `autoUpdater` on the `update` settings:
 * background download, install only outside the opening hours or after the kiosk was idle, never during
 * a call. Its quit goes through the lifecycle ('before-quit-for-update' in index.ts).
 */
import { app } from 'electron';
import electronUpdater from 'electron-updater';
import { systemClock } from '../../core/clock.ts';
import { defaultKioskId } from '../../fleet/mqtt-link.ts';
import { startSafeUpdates, type SafeUpdates, type UpdaterLike } from '../../fleet/safe-updates.ts';
import type { Feature } from './feature.ts';
import type { FleetLinkFeature } from './fleet-link.ts';

export function safeUpdates(fleet: FleetLinkFeature): Feature {
  let updates: SafeUpdates | null = null;
  let unsubscribe: (() => void) | null = null;
  return {
    name: 'safe updates',
    start({ service, settings, logger }) {
      const update = settings.config.update;
      if (!update?.url) return;
      let lastActivityMs = systemClock.now();
      updates = startSafeUpdates({
        updater: electronUpdater.autoUpdater as unknown as UpdaterLike,
        settings: update,
        currentVersion: app.getVersion(),
        kioskId: settings.config.mqtt?.kioskId ?? defaultKioskId(),
        clock: systemClock,
        logger,
        inCall: () => service.running,
        opening: () => (service.config.schedule ? (fleet.host?.opening ?? null) : null),
        lastActivityMs: () => lastActivityMs,
      });
      unsubscribe = service.onEvent((event) => {
        if (event.type === 'state') {
          lastActivityMs = systemClock.now();
          if (event.state.phase === 'ended' || event.state.phase === 'failed' || event.state.phase === 'idle') updates?.poke();
        } else if (event.type === 'opening') updates?.poke();
      });
    },
    stop() {
      unsubscribe?.();
      updates?.dispose();
    },
  };
}
