/**
 * The desktop companion (window mode `companion`): tray, global shortcut, hide on close, remembered
 * bounds (main/companion-window.ts). Does nothing in the other window modes.
 */
import type { CompanionSetup } from '../companion-window.ts';
import { setupCompanion } from '../companion-window.ts';
import type { Feature } from './feature.ts';

export function desktopCompanion(): Feature {
  let companion: CompanionSetup | null = null;
  return {
    name: 'desktop companion',
    async start({ kiosk, settings, window, lifecycle, logger }) {
      if (settings.config.window.mode !== 'companion') return;
      const publicCast = await kiosk.appearance.getConfig();
      companion = setupCompanion({
        win: window,
        kiosk,
        config: settings.config,
        cast: publicCast.ok ? publicCast.value.cast : settings.config.cast,
        requestQuit: () => lifecycle.requestQuit('tray'),
        isRunning: () => lifecycle.phase === 'running',
        logger,
      });
    },
    stop() {
      companion?.dispose();
    },
  };
}
