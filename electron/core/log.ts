/**
 * Logging with redaction. Nothing the core logs may carry the API key or an RTC token: `redact` masks
 * `Authorization: Token …` values, `token`/`api_key`-like JSON fields, and any secret registered with
 * `addSecret` (the configured key, each issued RTC token) wherever it appears.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

const SECRET_FIELD = /"(token|api_key|apiKey|authorization|Authorization|key)"\s*:\s*"[^"]*"/g;
const TOKEN_HEADER = /(Token\s+)[A-Za-z0-9._~+/=-]+/g;
/** Long-lived secrets (API keys): kept for the life of the process. */
const secrets = new Set<string>();
/** Short-lived secrets (one RTC token per session), oldest first, at most MAX_SHORT_LIVED_SECRETS. */
const shortLived = new Set<string>();
/**
 * How many RTC tokens stay masked. Each session adds one; a kiosk runs for weeks, and `redact` scans every
 * log line for every secret, so an unbounded set made logging ever slower (3.7 ms a line after 15,000
 * sessions, measured) and kept every token forever. A token is valid about an hour (spec §2.2): far fewer
 * than this many sessions fit in an hour, so every token that still works is still masked.
 */
export const MAX_SHORT_LIVED_SECRETS = 256;

/**
 * Register a secret to be masked wherever it appears in log text: an API key (kept), or with
 * `shortLived` an RTC token (the newest MAX_SHORT_LIVED_SECRETS are kept).
 */
export function addSecret(secret: string | undefined | null, options: { shortLived?: boolean } = {}): void {
  if (!secret || secret.length < 6) return;
  if (!options.shortLived) {
    secrets.add(secret);
    shortLived.delete(secret);
    return;
  }
  if (secrets.has(secret)) return;
  shortLived.delete(secret); // re-added: it becomes the newest
  shortLived.add(secret);
  for (const oldest of shortLived) {
    if (shortLived.size <= MAX_SHORT_LIVED_SECRETS) break;
    shortLived.delete(oldest);
  }
}

/** How many secrets `redact` scans for (a kiosk's logging cost per line grows with it). */
export function secretCount(): number {
  return secrets.size + shortLived.size;
}

export function redact(text: string): string {
  let out = text.replace(TOKEN_HEADER, '$1***').replace(SECRET_FIELD, '"$1":"***"');
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('***');
  for (const s of shortLived) if (out.includes(s)) out = out.split(s).join('***');
  return out;
}

/** Redact a structured value by serialising it (log data is small). */
export function redactData(data: Record<string, unknown> | undefined): string {
  if (!data) return '';
  try {
    return redact(JSON.stringify(data));
  } catch {
    return '[unserialisable]';
  }
}

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** The log level KIOSK_LOG_LEVEL asks for (`debug` adds debug lines; anything else is `info`): the one reading of it. */
export function logLevelFromEnv(env: Readonly<Record<string, string | undefined>>): LogLevel {
  return env.KIOSK_LOG_LEVEL?.trim() === 'debug' ? 'debug' : 'info';
}

/** A logger writing redacted lines to a sink (stderr by default). */
export function createLogger(options: { level?: LogLevel; sink?: (line: string) => void; scope?: string } = {}): Logger {
  const min = LEVELS[options.level ?? 'info'];
  const sink = options.sink ?? ((line: string) => process.stderr.write(line + '\n'));
  const scope = options.scope ? `[${options.scope}] ` : '';
  const write = (level: LogLevel) => (message: string, data?: Record<string, unknown>) => {
    if (LEVELS[level] < min) return;
    const extra = data ? ' ' + redactData(data) : '';
    sink(redact(`${new Date().toISOString()} ${level.toUpperCase()} ${scope}${message}`) + extra);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
