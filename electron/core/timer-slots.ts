/**
 * Named one-shot timers on an injected clock: at most one pending per name (setting a name again
 * replaces it), each forgotten as it fires, and all cleared at once when their owner stops. The session
 * controller keeps its guards here (retry, duration, RTC, create-answer wait, hold expiry).
 */
import type { Clock, TimerHandle } from './clock.ts';

export class TimerSlots<Name extends string> {
  readonly #clock: Clock;
  readonly #handles = new Map<Name, TimerHandle>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Run `fn` after `delayMs` (negative counts as 0), replacing any timer pending under `name`. */
  set(name: Name, delayMs: number, fn: () => void): void {
    this.cancel(name);
    const handle = this.#clock.setTimeout(() => {
      this.#handles.delete(name);
      fn();
    }, Math.max(0, delayMs));
    this.#handles.set(name, handle);
  }

  has(name: Name): boolean {
    return this.#handles.has(name);
  }

  cancel(name: Name): void {
    const handle = this.#handles.get(name);
    if (handle === undefined) return;
    this.#handles.delete(name);
    this.#clock.clearTimeout(handle);
  }

  clearAll(): void {
    for (const name of [...this.#handles.keys()]) this.cancel(name);
  }
}
