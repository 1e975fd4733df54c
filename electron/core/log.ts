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
const secrets = new Set<string>();

/** Register a secret (API key, RTC token) to be masked wherever it appears in log text. */
export function addSecret(secret: string | undefined | null): void {
  if (secret && secret.length >= 6) secrets.add(secret);
}

export function redact(text: string): string {
  let out = text.replace(TOKEN_HEADER, '$1***').replace(SECRET_FIELD, '"$1":"***"');
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('***');
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
