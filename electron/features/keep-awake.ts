/**
 * The display stays awake (kiosk/lifecycle.ts decides): during a call, and in window mode `kiosk` whenever
 * the window shows. Only a host with a window of its own can hold the display (the app); the browser mode's
 * browser is not ours to keep awake. The OS settings that still turn a screen off or lock it are in
 * docs/packaging.md ("Always on").
 */
import { createPowerSaveGuard } from '../kiosk/lifecycle.ts';
import type { Feature } from './feature.ts';

export function keepAwake(): Feature {
  let unsubscribe: (() => void) | null = null;
  return {
    name: 'keep awake',
    start({ kiosk, settings, host, logger }) {
      const window = host.window;
      if (!window) return;
      const guard = createPowerSaveGuard(window.powerSaveBlocker, logger, { whileShown: settings.config.window.mode === 'kiosk' });
      const offVisibility = window.onVisibility((shown) => guard.windowShown(shown));
      if (window.isVisible()) guard.windowShown(true);
      const offEvents = kiosk.events.onEvent((event) => guard.onEvent(event));
      unsubscribe = () => {
        offEvents();
        offVisibility();
      };
    },
    stop() {
      unsubscribe?.();
    },
  };
}
