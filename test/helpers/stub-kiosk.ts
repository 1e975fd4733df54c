/**
 * A kiosk (kiosk/compose.ts) on the stub emulator: demo mode "starts" an emulator that answers nothing, so
 * the services can be driven up to the network and no further. Its channels are in a registry as a host's,
 * and its log is recorded.
 */
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk, type KioskOptions } from '../../electron/kiosk/compose.ts';
import { recordingLogger } from './recording-logger.ts';
import { stubEmulator } from './stub-emulator.ts';

export const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A one-pixel avatar with persona "P", no picture read; `options` over that. */
export async function stubKiosk(options: Partial<KioskOptions> = {}) {
  const emu = stubEmulator();
  const logger = recordingLogger();
  const channels = createChannelRegistry();
  const kiosk = await createKiosk({
    channels,
    config: resolveConfig({ avatar: { imagePath: TINY_PNG, persona: 'P' } }, {}),
    apiKey: null,
    apiKeySource: 'none',
    startEmulator: emu.start,
    loadAvatarImage: async () => null,
    logger,
    ...options,
  });
  return { kiosk, channels, emu, logger };
}
