/**
 * Time, injected. Everything in the core that waits (backoff, heartbeats, timeouts, the live_duration
 * guard) takes a `Clock`, so tests drive time with `FakeClock` and run in milliseconds. `systemClock`
 * is the real one.
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

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A deterministic clock for tests. `advance(ms)` fires due timers in time order (timers scheduled by
 * fired timers run too if they fall inside the window) and yields to the microtask queue between
 * them, so promise chains settle as they would in real time.
 */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: FakeTimer[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const timer: FakeTimer = { id: this.#nextId++, at: this.#now + Math.max(0, delayMs), fn };
    this.#timers.push(timer);
    return { fakeTimerId: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    const id = (handle as { fakeTimerId?: number } | undefined)?.fakeTimerId;
    this.#timers = this.#timers.filter((t) => t.id !== id);
  }

  /** Number of timers still scheduled (a closed component must leave none). */
  get pendingCount(): number {
    return this.#timers.length;
  }

  /** Delays (from now) of the pending timers, sorted. */
  pendingDelays(): number[] {
    return this.#timers.map((t) => t.at - this.#now).sort((a, b) => a - b);
  }

  /** Move time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await flushMicrotasks();
    }
    this.#now = target;
    await flushMicrotasks();
  }

  /** Jump the wall clock without firing timers (simulates sleep/resume). */
  jump(ms: number): void {
    this.#now += ms;
  }
}

/** Let pending promise callbacks run (several turns, to settle short chains). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}
