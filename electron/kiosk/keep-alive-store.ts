/**
 * Which keep-alive works with each service, remembered across restarts (core/keep-alive.ts says why it can
 * differ: the spec shows no format for it). A small JSON file in the kiosk's data folder,
 *
 *     keep-alive.json   {"version":1,"services":{"https://avatar.example.com":"ping-echo"}}
 *
 * holds the style each service URL was last seen to accept. It is read once and validated: a missing file
 * means the default everywhere; a corrupt one also means the default (logged, and replaced on the next
 * change), never a failed start. It is written only when a service refuses a style (rare: once per service),
 * atomically (a temporary file, then a rename), and holds no secret: URLs and style names only.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { DEFAULT_KEEP_ALIVE_STYLE, KEEP_ALIVE_STYLES, KeepAlive, type KeepAliveStyle } from '../core/keep-alive.ts';
import { silentLogger, type Logger } from '../core/log.ts';

export const KEEP_ALIVE_FILE = 'keep-alive.json';
/** The file never grows past this many services (the oldest entries go first). */
export const MAX_REMEMBERED_SERVICES = 20;
/** A file bigger than this is not a file we wrote: it is treated as corrupt. */
const MAX_FILE_BYTES = 64 * 1024;

const fileSchema = z.strictObject({
  version: z.literal(1),
  services: z.record(z.string().min(1).max(2_048), z.enum(KEEP_ALIVE_STYLES)),
});

export interface KeepAliveStore {
  /** The `KeepAlive` of the service at `serviceUrl` (one per URL, shared by its calls and spares),
   *  starting with the style remembered for it. */
  keepAliveFor(serviceUrl: string): KeepAlive;
  /** The remembered styles, by service URL (a copy). */
  remembered(): Record<string, KeepAliveStyle>;
}

export interface KeepAliveStoreOptions {
  /** The kiosk's data folder. */
  dir: string;
  logger?: Logger;
}

export function createKeepAliveStore(options: KeepAliveStoreOptions): KeepAliveStore {
  const logger = options.logger ?? silentLogger;
  const path = join(options.dir, KEEP_ALIVE_FILE);
  const styles = new Map<string, KeepAliveStyle>(Object.entries(readStyles(path, logger)));
  const live = new Map<string, KeepAlive>();

  function remember(url: string, style: KeepAliveStyle): void {
    styles.delete(url); // re-inserted last: the newest entry
    styles.set(url, style);
    while (styles.size > MAX_REMEMBERED_SERVICES) styles.delete(styles.keys().next().value!);
    const text = JSON.stringify({ version: 1, services: Object.fromEntries(styles) }, null, 2) + '\n';
    try {
      mkdirSync(options.dir, { recursive: true, mode: 0o700 });
      const temp = `${path}.${process.pid}.tmp`;
      writeFileSync(temp, text, { mode: 0o600 });
      renameSync(temp, path);
      logger.info('Keep-alive remembered for this service', { service: url, style });
    } catch (error) {
      // The call goes on with the new style; only the next start would begin with the old one again.
      logger.warn('Could not store the keep-alive that works with this service', { path, error: String(error) });
    }
  }

  return {
    keepAliveFor(serviceUrl) {
      const url = normaliseUrl(serviceUrl);
      let keepAlive = live.get(url);
      if (!keepAlive) {
        keepAlive = new KeepAlive({ style: styles.get(url) ?? DEFAULT_KEEP_ALIVE_STYLE, logger, onChange: (style) => remember(url, style) });
        live.set(url, keepAlive);
      }
      return keepAlive;
    },
    remembered: () => Object.fromEntries(styles),
  };
}

/** The remembered styles, or none when the file is missing, unreadable or not ours (logged). */
function readStyles(path: string, logger: Logger): Record<string, KeepAliveStyle> {
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > MAX_FILE_BYTES) throw Object.assign(new Error('too large'), { code: 'EFBIG' });
    text = bytes.toString('utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ENOENT') logger.warn('The keep-alive file could not be read; using the default keep-alive', { path, code: code ?? 'error' });
    return {};
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    logger.warn('The keep-alive file is not valid JSON; using the default keep-alive (it is replaced on the next change)', { path });
    return {};
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    logger.warn('The keep-alive file is not in the expected form; using the default keep-alive (it is replaced on the next change)', {
      path,
      where: issue ? issue.path.join('.') || '(file)' : '(file)',
    });
    return {};
  }
  return parsed.data.services;
}

/** One key per service: scheme, host and path without a trailing slash (no user info, query or fragment:
 *  they name the same service, and the file must hold nothing secret). */
function normaliseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`.replace(/\/+$/, '');
  } catch {
    // Cut at the first ? or #: a pattern with `.` stops at a line break and would keep a query after one.
    return url.split(/[?#]/, 1)[0]!.replace(/\/+$/, '');
  }
}
