/**
 * How the staff panel talks to main: every staff call goes through `call()` (one busy flag for the
 * buttons, the time of the last call for the keep-alive, and `unauthorized` reported to the panel, which
 * goes back to the PIN pad). Also the panel's one-line notice about the last action (saved, exported…),
 * which any tab may set.
 */
import type { ErrorInfo, KioskApi, Result } from '../../../electron/contract.ts';
import type { RendererClock } from '../sensing/clock.ts';

export interface StaffCallsDeps {
  staff: KioskApi['staff'] | null;
  clock: RendererClock;
  /** A call answered `unauthorized`: main forgot the unlock. */
  onUnauthorized: () => void;
}

export class StaffCalls {
  readonly #deps: StaffCallsDeps;
  #busy = $state(false);
  #lastCallMs = 0;
  /** A one-line message about the last action (saved, exported…). */
  notice = $state<string | null>(null);

  constructor(deps: StaffCallsDeps) {
    this.#deps = deps;
  }

  /** A call is in flight (the buttons wait; a quiet keep-alive does not count). */
  get busy(): boolean {
    return this.#busy;
  }
  /** When the last staff call went out (main forgets the unlock 60 s after it). */
  get lastCallMs(): number {
    return this.#lastCallMs;
  }

  async call<T>(fn: (staff: KioskApi['staff']) => Promise<Result<T>>, options: { quiet?: boolean } = {}): Promise<Result<T>> {
    const staff = this.#deps.staff;
    if (!staff) return { ok: false, error: { code: 'internal', message: 'The staff panel needs the kiosk app.' } };
    this.#lastCallMs = this.#deps.clock.now();
    if (!options.quiet) this.#busy = true;
    try {
      const r = await fn(staff);
      if (!r.ok && r.error.code === 'unauthorized') this.#deps.onUnauthorized();
      return r;
    } finally {
      if (!options.quiet) this.#busy = false;
    }
  }
}

/** A view of main's state that the panel reads with one staff call (status, ledger totals, checks). */
export class StaffValue<T> {
  protected readonly calls: StaffCalls;
  readonly #fetch: (staff: KioskApi['staff']) => Promise<Result<T>>;
  #value = $state<T | null>(null);

  constructor(calls: StaffCalls, fetch: (staff: KioskApi['staff']) => Promise<Result<T>>) {
    this.calls = calls;
    this.#fetch = fetch;
  }

  /** Null until loaded. */
  protected get value(): T | null {
    return this.#value;
  }
  protected set value(value: T | null) {
    this.#value = value;
  }

  /** (Re)load; the error when it could not. */
  async load(): Promise<ErrorInfo | null> {
    const r = await this.calls.call(this.#fetch);
    if (r.ok) this.#value = r.value;
    return r.ok ? null : r.error;
  }

  clear(): void {
    this.#value = null;
  }
}
