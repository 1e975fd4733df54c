/**
 * Helpers for tests that mix a FakeClock with real I/O (HTTP and WebSockets on loopback): fake time only
 * moves when the test advances it, and between advances the real sockets need a moment to deliver.
 */
import type { FakeClock } from './fake-clock.ts';

/** Real milliseconds. */
export function realDelay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `condition` (setImmediate first, then every real millisecond) until it holds; throws after
 * `realTimeoutMs` of real time with `message`.
 */
export async function until(condition: () => boolean, options: { realTimeoutMs?: number; message?: string } = {}): Promise<void> {
  const deadline = Date.now() + (options.realTimeoutMs ?? 2_000);
  for (let i = 0; !condition(); i++) {
    if (Date.now() > deadline) throw new Error(`until: timed out${options.message ? `: ${options.message}` : ''}`);
    await (i < 50 ? new Promise((resolve) => setImmediate(resolve)) : realDelay(1));
  }
}

/**
 * Advances `clock` by `totalMs` in steps of `stepMs`, letting real I/O run (`settleMs` of real time)
 * after each step, so pings, pongs and acks cross the loopback as fake time passes.
 */
export async function advanceInSteps(clock: FakeClock, totalMs: number, options: { stepMs?: number; settleMs?: number } = {}): Promise<void> {
  const stepMs = options.stepMs ?? 500;
  const settleMs = options.settleMs ?? 3;
  let left = totalMs;
  while (left > 0) {
    const step = Math.min(stepMs, left);
    await clock.advance(step);
    left -= step;
    await realDelay(settleMs);
  }
}

/**
 * Advances fake time in steps (letting real I/O settle between them) until `condition` holds. Throws when
 * `maxFakeMs` of fake time or `realTimeoutMs` of real time pass first.
 */
export async function advanceUntil(
  clock: FakeClock,
  condition: () => boolean,
  options: { stepMs?: number; settleMs?: number; maxFakeMs?: number; realTimeoutMs?: number; message?: string } = {},
): Promise<void> {
  const stepMs = options.stepMs ?? 100;
  const settleMs = options.settleMs ?? 3;
  const maxFakeMs = options.maxFakeMs ?? 60_000;
  const deadline = Date.now() + (options.realTimeoutMs ?? 10_000);
  let advanced = 0;
  await realDelay(settleMs);
  while (!condition()) {
    if (advanced >= maxFakeMs || Date.now() > deadline) {
      throw new Error(`advanceUntil: condition not met after ${advanced} fake ms${options.message ? `: ${options.message}` : ''}`);
    }
    await clock.advance(stepMs);
    advanced += stepMs;
    await realDelay(settleMs);
  }
}

/** Resolves `promise` while advancing fake time (for calls that poll on the clock, like the billing query). */
export async function driveUntilSettled<T>(
  clock: FakeClock,
  promise: Promise<T>,
  options: { stepMs?: number; settleMs?: number; maxFakeMs?: number; realTimeoutMs?: number } = {},
): Promise<T> {
  let settled = false;
  const tracked = promise.finally(() => (settled = true));
  tracked.catch(() => {});
  await advanceUntil(clock, () => settled, { message: 'promise did not settle', ...options });
  return tracked;
}
