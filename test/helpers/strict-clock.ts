import { FakeClock, type Clock, type TimerHandle } from '../../electron/core/clock.ts';

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
