/**
 * The renderer's injected time: the same shape as electron/core/clock.ts `Clock` (so the tests'
 * `FakeClock`, test/helpers/fake-clock.ts, drives renderer logic), declared here because the renderer imports nothing
 * from the core but the contract's types.
 */
export interface RendererClock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const browserClock: RendererClock = {
  now: () => Date.now(),
  setTimeout: (fn, delayMs) => setTimeout(fn, Math.max(0, delayMs)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
