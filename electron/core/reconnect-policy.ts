/**
 * When to try again, as tiny pure objects (after livekit's ReconnectPolicy). The session machine asks
 * `classify` first (is this worth retrying at all?) and only then the policy for the delay.
 *
 * - `notReadyPolicy` (spec §6 rule 2, §8): the delays of `NOT_READY_BACKOFF_MS`, then its last one again,
 *   until a warm-up budget is spent.
 * - `liveReconnectPolicy`: the control socket dropped while the avatar was live. The RTC call goes on, and
 *   the server keeps the session for a reconnect grace window before ending it with
 *   `client_reconnect_timeout` (spec §6 table). That window's length is not shown; we assume ~10 s and
 *   retry fast inside a 10 s budget (0, 250, 500, 1000, 2000, 2000 … ms), so a blip costs a fraction of a
 *   second and we stop about when the server would have ended the session anyway.
 */
import { isAvatarError } from './errors.ts';
import { NOT_READY_BACKOFF_MS } from './protocol.ts';

export interface RetryContext {
  /** 1-based number of the retry about to be scheduled. */
  attempt: number;
  /** Milliseconds since the episode began (first NOT_READY / the drop). */
  elapsedMs: number;
  lastError?: unknown;
}

export interface ReconnectPolicy {
  /** Delay before the next attempt, or `null` to give up. Pure. */
  nextDelayMs(context: RetryContext): number | null;
}

export interface BackoffPolicyOptions {
  /** Delays for attempts 1, 2, 3 …; the last one repeats. */
  delaysMs: readonly number[];
  /** Give up when waiting the next delay would end past this many milliseconds since the episode began. */
  budgetMs: number;
}

/** A table of delays whose last entry repeats, bounded by a total time budget. */
export function backoffPolicy(options: BackoffPolicyOptions): ReconnectPolicy {
  const { delaysMs, budgetMs } = options;
  if (delaysMs.length === 0) throw new RangeError('backoffPolicy needs at least one delay');
  return {
    nextDelayMs({ attempt, elapsedMs }) {
      const delayMs = delaysMs[Math.min(Math.max(attempt, 1), delaysMs.length) - 1]!;
      return elapsedMs + delayMs > budgetMs ? null : delayMs;
    },
  };
}

/** Default warm-up budget for NOT_READY retries: one minute (video warm-up normally takes seconds). */
export const NOT_READY_BUDGET_MS = 60_000;
/** Default budget to restore a dropped live control socket (our guess at the server's grace window). */
export const LIVE_RECONNECT_BUDGET_MS = 10_000;
export const LIVE_RECONNECT_DELAYS_MS = [0, 250, 500, 1_000, 2_000] as const;

export function createNotReadyPolicy(budgetMs = NOT_READY_BUDGET_MS): ReconnectPolicy {
  return backoffPolicy({ delaysMs: NOT_READY_BACKOFF_MS, budgetMs });
}
export function createLiveReconnectPolicy(budgetMs = LIVE_RECONNECT_BUDGET_MS): ReconnectPolicy {
  return backoffPolicy({ delaysMs: LIVE_RECONNECT_DELAYS_MS, budgetMs });
}

/** 2000, 4000, 8000, 8000 … within 60 s (spec §6 rule 2, §8). */
export const notReadyPolicy: ReconnectPolicy = createNotReadyPolicy();
/** 0, 250, 500, 1000, 2000, 2000 … within 10 s. */
export const liveReconnectPolicy: ReconnectPolicy = createLiveReconnectPolicy();

/**
 * Error codes, conn_init error codes and hangup reasons after which trying again cannot help (or is not
 * allowed: spec §6 rules 3 and 6, §7). Everything else (network, timeout, server, protocol, NOT_READY, a
 * closed or dead socket) is worth a retry.
 */
export const FATAL_SIGNALS: ReadonlySet<string> = new Set([
  'unauthorized',
  'forbidden',
  'not_found',
  'invalid_request',
  'invalid_config',
  'insufficient_credits',
  'cancelled',
  'init_failed',
  'content_blocked',
  'token_expired',
  'LIVE_CONN_INIT_FAILED',
  'credit_insufficient',
  'audit_violation',
]);

export type RetryDecision = 'retry' | 'fatal';

/** `error` may be an AvatarError, an error code, a conn_init `error_code` or a hangup reason. */
export function classify(error: unknown): RetryDecision {
  const signal = isAvatarError(error) ? error.code : typeof error === 'string' ? error : undefined;
  return signal !== undefined && FATAL_SIGNALS.has(signal) ? 'fatal' : 'retry';
}
