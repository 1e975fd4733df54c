/**
 * The desktop companion (window mode `companion`): tray, global shortcut, hide on close, remembered
 * bounds, on the host's window. Does nothing in the other window modes, nor where the host has no window.
 */
import type { Feature } from './feature.ts';

export function desktopCompanion(): Feature {
  let companion: { dispose(): void } | null = null;
  return {
    name: 'desktop companion',
    async start({ kiosk, settings, host }) {
      if (settings.config.window.mode !== 'companion' || !host.window) return;
      const publicCast = await kiosk.appearance.getConfig();
      companion = host.window.companion({
        kiosk,
        config: settings.config,
        cast: publicCast.ok ? publicCast.value.cast : settings.config.cast,
      });
    },
    stop() {
      companion?.dispose();
    },
  };
}
