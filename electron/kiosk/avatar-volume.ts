/**
 * The avatar's volume on this kiosk: staff turn it up or down on the Status tab, operators with the
 * fleet's `set-volume`; the page plays the avatar's voice at it (every RTC engine). A whole percent,
 * 0–100 (`avatarVolumeSchema` in the contract says why 100 is the top), kept in its own small file in the
 * data folder so it survives a restart. Electron-free.
 *
 * The file is read once, at start, and checked: a damaged or out-of-range file is logged and the kiosk
 * plays at the default (100, the voice as the service sends it) rather than at a volume nobody chose. A
 * change is written (atomically, 0600) before it is taken: a volume that could not be kept is refused,
 * so what staff see is what the kiosk will have after a restart.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AVATAR_VOLUME_MAX, avatarVolumeSchema } from '../contract.ts';
import { AvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';

export const AVATAR_VOLUME_FILE = 'avatar-volume.json';
/** Until staff or the fleet choose: the avatar's voice as the service sends it. */
export const DEFAULT_AVATAR_VOLUME = AVATAR_VOLUME_MAX;

const fileSchema = z.strictObject({ v: z.literal(1), percent: avatarVolumeSchema });

export interface AvatarVolume {
  /** 0–100. */
  readonly percent: number;
  /** Keep `percent` (checked again here) and tell the listeners; resolves to the volume now in force. */
  set(percent: number): Promise<number>;
  /** Each change (not the start value); returns the unsubscribe function. */
  onChange(listener: (percent: number) => void): () => void;
}

/** The volume kept in `dir`/avatar-volume.json (the kiosk's data folder). */
export function openAvatarVolume(options: { dir: string; logger?: Logger }): AvatarVolume {
  const logger = options.logger ?? silentLogger;
  const path = join(options.dir, AVATAR_VOLUME_FILE);
  return createAvatarVolume(readVolume(path, logger), (percent) => {
    mkdirSync(options.dir, { recursive: true });
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, JSON.stringify({ v: 1, percent }), { mode: 0o600 });
    renameSync(tmp, path);
  });
}

/** A volume kept in memory only (a kiosk service built without a data folder: tests, tools). */
export function memoryAvatarVolume(percent: number = DEFAULT_AVATAR_VOLUME): AvatarVolume {
  return createAvatarVolume(avatarVolumeSchema.parse(percent), () => undefined);
}

function createAvatarVolume(initial: number, save: (percent: number) => void): AvatarVolume {
  let percent = initial;
  const listeners = new Set<(percent: number) => void>();
  return {
    get percent() {
      return percent;
    },
    async set(next) {
      const checked = avatarVolumeSchema.safeParse(next);
      if (!checked.success) throw new AvatarError('invalid_request', `The avatar volume ${String(next)} was refused: ${checked.error.issues[0]!.message}.`);
      try {
        save(checked.data);
      } catch (error) {
        throw new AvatarError('internal', `The avatar volume could not be saved (${(error as { code?: string }).code ?? String(error)}); it stays at ${percent} %.`, { cause: error });
      }
      if (checked.data === percent) return percent;
      percent = checked.data;
      for (const listener of [...listeners]) listener(percent);
      return percent;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The kept volume, or the default (a missing file silently; a damaged one with a log line). */
function readVolume(path: string, logger: Logger): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') logger.warn('The avatar volume file could not be read; playing at the default', { path, error: String(error), percent: DEFAULT_AVATAR_VOLUME });
    return DEFAULT_AVATAR_VOLUME;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined;
  }
  const parsed = fileSchema.safeParse(raw);
  if (parsed.success) return parsed.data.percent;
  logger.warn('The avatar volume file is damaged; playing at the default', { path, percent: DEFAULT_AVATAR_VOLUME });
  return DEFAULT_AVATAR_VOLUME;
}
