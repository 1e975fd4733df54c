/** While a call is live the display stays awake (Electron's powerSaveBlocker; kiosk/lifecycle.ts). */
import { powerSaveBlocker } from 'electron';
import { createPowerSaveGuard } from '../../kiosk/lifecycle.ts';
import type { Feature } from './feature.ts';

export function keepAwake(): Feature {
  let unsubscribe: (() => void) | null = null;
  return {
    name: 'keep awake',
    start({ service, logger }) {
      const guard = createPowerSaveGuard(powerSaveBlocker, logger);
      unsubscribe = service.onEvent((event) => guard.onEvent(event));
    },
    stop() {
      unsubscribe?.();
    },
  };
}
