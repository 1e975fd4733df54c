/**
 * Time, injected. Everything in the core that waits (backoff, heartbeats, timeouts, the live_duration
 * guard) takes a `Clock`, so tests drive time with a fake one (test/helpers/fake-clock.ts) and run in
 * milliseconds. `systemClock` is the real one.
 */
import { AvatarError } from './errors.ts';

export type TimerHandle = { readonly __timer: true } | number | object;

export interface Clock {
  /** Milliseconds since the epoch (or any monotonic-enough origin for a fake). */
  now(): number;
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, delayMs) => {
    const t = setTimeout(fn, Math.max(0, delayMs));
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `delayMs` on `clock`; rejects with `cancelled` when `signal` fires. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AvatarError('cancelled', 'The operation was cancelled.', { cause: signal.reason }));
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(new AvatarError('cancelled', 'The operation was cancelled.', { cause: signal?.reason }));
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Whether `work` settled (either way) within `ms` of wall time; what is left after that is the caller's to
 * drop. Wall time, not an injected clock: it bounds a shutdown, and a clock that does not move (a test's)
 * must not hold a closing process open.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
