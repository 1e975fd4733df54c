/**
 * Main's log: electron-log (its Node flavour, so this runs under plain Node and in tests)
 * writing to `main.log` in the logs folder and to the console. Every line is formatted by the core
 * logger, which redacts it (electron/core/log.ts: the key, RTC tokens, registered secrets); a hook
 * redacts again anything logged through electron-log directly. The file rotates by size: past
 * `maxSizeBytes` it becomes `main.old.log` and a new one starts (two files at most). Both are private to
 * this user (0600 in a 0700 folder): what a call logs is the venue's business, not every local user's.
 */
import { chmodSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import elog from 'electron-log/node';
import { createLogger, redact, type Logger, type LogLevel } from '../core/log.ts';

export const LOG_FILE = 'main.log';
export const DEFAULT_LOG_MAX_BYTES = 1024 * 1024;
export const TAIL_LINES = 200;

export interface MainLog {
  logger: Logger;
  /** The log file's path (for the README and the panel). */
  readonly path: string;
  /** The last `n` lines of the log file (already redacted when written). */
  tail(n?: number): string[];
}

export interface MainLogOptions {
  dir: string;
  level?: LogLevel;
  maxSizeBytes?: number;
  /** Also print to the console (default true). */
  console?: boolean;
  /** electron-log instance id (tests use their own). */
  logId?: string;
  scope?: string;
}

export function createMainLog(options: MainLogOptions): MainLog {
  const path = join(options.dir, LOG_FILE);
  makeLogsPrivate(options.dir);
  const instance = elog.create({ logId: options.logId ?? 'kiosk-main' });
  instance.transports.file.resolvePathFn = () => path;
  instance.transports.file.writeOptions = { flag: 'a', mode: 0o600, encoding: 'utf8' };
  instance.transports.file.format = '{text}';
  instance.transports.file.maxSize = options.maxSizeBytes ?? DEFAULT_LOG_MAX_BYTES;
  instance.transports.file.level = 'silly';
  instance.transports.console.format = '{text}';
  instance.transports.console.level = options.console === false ? false : 'silly';
  instance.hooks.push((message) => ({ ...message, data: message.data.map((d: unknown) => (typeof d === 'string' ? redact(d) : d)) }));

  const sink = (line: string) => {
    const level = / (DEBUG|INFO|WARN|ERROR) /.exec(line)?.[1];
    if (level === 'ERROR') instance.error(line);
    else if (level === 'WARN') instance.warn(line);
    else if (level === 'DEBUG') instance.debug(line);
    else instance.info(line);
  };
  const logger = createLogger({ level: options.level ?? 'info', sink, ...(options.scope ? { scope: options.scope } : {}) });
  return { logger, path, tail: (n = TAIL_LINES) => tailLines(path, n) };
}

/** The logs folder at 0700, and log files an older version left readable at 0600 (POSIX only). */
function makeLogsPrivate(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') return;
  chmodSync(dir, 0o700);
  for (const file of [LOG_FILE, LOG_FILE.replace(/\.log$/, '.old.log')]) if (existsSync(join(dir, file))) chmodSync(join(dir, file), 0o600);
}

/** The last `n` lines of a text file, reading at most its last 512 KB. */
export function tailLines(path: string, n: number): string[] {
  if (!existsSync(path)) return [];
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const len = Math.min(size, 512 * 1024);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    const lines = buf.toString('utf8').split(/\r?\n/);
    if (len < size) lines.shift(); // a partial first line
    while (lines.length && lines.at(-1) === '') lines.pop();
    return lines.slice(-n);
  } finally {
    closeSync(fd);
  }
}
