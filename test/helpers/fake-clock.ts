/**
 * Time for tests: `FakeClock` implements the core's `Clock` (electron/core/clock.ts) deterministically, so
 * a test drives backoffs, heartbeats and timeouts in milliseconds; `StrictClock` is one that also notes
 * every clear of a handle it never issued; `flushMicrotasks` lets promise chains settle between steps.
 * Test code only: production code takes a `Clock` and is given `systemClock`.
 */
import type { Clock, TimerHandle } from '../../electron/core/clock.ts';

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

/**
 * A FakeClock that notes every clearTimeout of a handle it never issued (the Clock contract takes a
 * TimerHandle; an implementation may rely on getting one of its own).
 */
export class StrictClock extends FakeClock implements Clock {
  readonly #issued = new Set<TimerHandle>();
  readonly foreignClears: unknown[] = [];
  override setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const handle = super.setTimeout(fn, delayMs);
    this.#issued.add(handle);
    return handle;
  }
  override clearTimeout(handle: TimerHandle): void {
    if (!this.#issued.has(handle)) this.foreignClears.push(handle);
    super.clearTimeout(handle);
  }
}
