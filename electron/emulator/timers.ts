/**
 * Every timer the emulator makes goes through one `TimerSet` on the injected clock, so `close()` can
 * clear them all and a test with a FakeClock can assert that nothing is left pending. After `clearAll()`
 * the set refuses new timers (late socket callbacks during shutdown must not re-arm anything).
 */
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';

export class TimerSet {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #handles = new Set<TimerHandle>();
  #closed = false;

  constructor(clock: Clock, logger: Logger) {
    this.#clock = clock;
    this.#logger = logger;
  }

  /** Schedule `fn` after `delayMs` on the clock. Returns null once the set is closed. */
  set(fn: () => void, delayMs: number): TimerHandle | null {
    if (this.#closed) return null;
    const handle: TimerHandle = this.#clock.setTimeout(() => {
      this.#handles.delete(handle);
      try {
        fn();
      } catch (error) {
        // A bug in one timer must not take the emulator (or a test's clock.advance) down.
        this.#logger.error('emulator timer failed', { error: String(error) });
      }
    }, Math.max(0, delayMs));
    this.#handles.add(handle);
    return handle;
  }

  clear(handle: TimerHandle | null | undefined): void {
    if (handle === null || handle === undefined) return;
    if (this.#handles.delete(handle)) this.#clock.clearTimeout(handle);
  }

  /** Clear everything and refuse new timers from now on. */
  clearAll(): void {
    this.#closed = true;
    for (const handle of this.#handles) this.#clock.clearTimeout(handle);
    this.#handles.clear();
  }

  get size(): number {
    return this.#handles.size;
  }

  get closed(): boolean {
    return this.#closed;
  }
}
