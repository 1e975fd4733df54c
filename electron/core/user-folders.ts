/**
 * Where the operating system keeps a user's application folders, one rule for every part that needs one
 * (Electron's own userData under `npm start`, the browser mode's data folder, the fleet console's, the
 * cache that remembers a failed Electron download). An empty XDG variable counts as unset, as the XDG
 * base-directory spec says.
 */
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

/** The per-user folder applications keep their settings and data in (Electron's `appData`). */
export function userConfigRoot(env: Env, platform: NodeJS.Platform, home: string): string {
  if (platform === 'win32') return env.APPDATA ?? join(home, 'AppData', 'Roaming');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support');
  return env.XDG_CONFIG_HOME || join(home, '.config');
}

/** This app's per-user cache folder. */
export function userCacheDir(env: Env, platform: NodeJS.Platform, home: string): string {
  if (platform === 'win32') return join(env.LOCALAPPDATA ?? join(home, 'AppData', 'Local'), 'avatar-kiosk', 'Cache');
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'avatar-kiosk');
  return join(env.XDG_CACHE_HOME || join(home, '.cache'), 'avatar-kiosk');
}

/** The data folder AVATAR_KIOSK_DATA names (null when unset or blank): the one reading of it, for the
 *  browser mode and the CLI's ledger and doctor commands. */
export function dataDirFromEnv(env: Env): string | null {
  return env.AVATAR_KIOSK_DATA?.trim() || null;
}
