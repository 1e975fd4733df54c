/**
 * The one error type of the core. Every failure that reaches a caller (CLI, main process, renderer via
 * IPC) is an `AvatarError` with a string-union `code` a program can branch on and a human `message` a
 * person can read. `cause` keeps the original error for logs; it never crosses IPC.
 */

export const ERROR_CODES = [
  /** HTTP 401: missing or invalid API key (spec §7). */
  'unauthorized',
  /** HTTP 403: the caller is not the session's creator (spec §5). */
  'forbidden',
  /** HTTP 404: the session does not exist or has expired (spec §7). */
  'not_found',
  /** Balance under `MIN_BALANCE_TO_START` at launch, or credits ran out mid-call (spec §8). */
  'insufficient_credits',
  /** Bad input caught before sending, or a 400/422 from the service. */
  'invalid_request',
  /** Bad configuration (URLs, surface, config file). */
  'invalid_config',
  /** The connection could not be made or broke. */
  'network',
  /** No answer in time. */
  'timeout',
  /** The server said something we could not understand (bad JSON, wrong shape). */
  'protocol',
  /** HTTP 5xx or another unexpected server status. */
  'server',
  /** The caller cancelled (AbortSignal, hangup during start-up, SIGINT). */
  'cancelled',
  /** The avatar stayed NOT_READY past the bounded warm-up wait (spec §6 rule 2). */
  'not_ready',
  /** LIVE_CONN_INIT_FAILED: the session can never start; create a new one (spec §6 rule 3). */
  'init_failed',
  /** The live connection was lost and could not be restored within the grace budget. */
  'connection_lost',
  /** The content-safety system ended the call (audit_violation). */
  'content_blocked',
  /** The RTC token expired: a new session is needed (spec §7). */
  'token_expired',
  /** Microphone or camera denied or missing (renderer). */
  'media_unavailable',
  /** The RTC engine could not join or failed (renderer). */
  'rtc_failed',
  /** Anything else. */
  'internal',
  /** The staff PIN pad is locked after too many wrong tries (the message says for how long). */
  'locked',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** What crosses IPC and goes into JSON reports: no stack, no cause. */
export interface ErrorInfo {
  code: ErrorCode;
  message: string;
}

export interface AvatarErrorOptions {
  cause?: unknown;
  /** HTTP status when the error came from an HTTP answer. */
  status?: number;
  /** Extra machine-readable detail (e.g. the field that failed validation). Never secrets. */
  details?: Record<string, unknown>;
}

export class AvatarError extends Error {
  override readonly name = 'AvatarError';
  readonly code: ErrorCode;
  readonly status: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: AvatarErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.details = options.details;
  }

  toInfo(): ErrorInfo {
    return { code: this.code, message: this.message };
  }
}

export function isAvatarError(value: unknown): value is AvatarError {
  return value instanceof AvatarError;
}

/** Wrap anything thrown into an AvatarError, keeping AvatarErrors as they are. */
export function toAvatarError(value: unknown, fallback: ErrorCode = 'internal'): AvatarError {
  if (value instanceof AvatarError) return value;
  if (isAbortError(value)) return new AvatarError('cancelled', 'The operation was cancelled.', { cause: value });
  const message = value instanceof Error && value.message ? value.message : String(value);
  return new AvatarError(fallback, message, { cause: value });
}

export function isAbortError(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    'name' in value &&
    ((value as { name: unknown }).name === 'AbortError' || (value as { name: unknown }).name === 'TimeoutError')
  );
}

/** Throws `cancelled` if the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AvatarError('cancelled', 'The operation was cancelled.', { cause: signal.reason });
}
