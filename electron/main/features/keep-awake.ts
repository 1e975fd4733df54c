/**
 * The display stays awake (Electron's powerSaveBlocker; kiosk/lifecycle.ts decides): during a call, and
 * in window mode `kiosk` whenever the window shows. The OS settings that still turn a screen off or lock
 * it are in docs/packaging.md ("Always on").
 */
import { powerSaveBlocker } from 'electron';
import { createPowerSaveGuard } from '../../kiosk/lifecycle.ts';
import type { Feature } from './feature.ts';

export function keepAwake(): Feature {
  let unsubscribe: (() => void) | null = null;
  return {
    name: 'keep awake',
    start({ kiosk, settings, window, logger }) {
      const guard = createPowerSaveGuard(powerSaveBlocker, logger, { whileShown: settings.config.window.mode === 'kiosk' });
      const shown = () => guard.windowShown(true);
      const hidden = () => guard.windowShown(false);
      window.on('show', shown);
      window.on('restore', shown);
      window.on('hide', hidden);
      window.on('minimize', hidden);
      if (window.isVisible()) shown();
      const off = kiosk.events.onEvent((event) => guard.onEvent(event));
      unsubscribe = () => {
        off();
        window.removeListener('show', shown);
        window.removeListener('restore', shown);
        window.removeListener('hide', hidden);
        window.removeListener('minimize', hidden);
      };
    },
    stop() {
      unsubscribe?.();
    },
  };
}
