/**
 * What the Status and System tabs show: main's status (mode, service, whether a key is set — never the
 * key —, version, uptime, today's figures, recent errors, start at login).
 */
import type { ErrorInfo, StaffStatus } from '../../../electron/contract.ts';
import type { StaffCalls } from './calls.svelte.ts';

export class KioskStatus {
  readonly #calls: StaffCalls;
  #status = $state<StaffStatus | null>(null);

  constructor(calls: StaffCalls) {
    this.#calls = calls;
  }

  /** Null until loaded. */
  get status(): StaffStatus | null {
    return this.#status;
  }

  /** (Re)load; the error when it could not. */
  async load(): Promise<ErrorInfo | null> {
    const r = await this.#calls.call((s) => s.status());
    if (r.ok) this.#status = r.value;
    return r.ok ? null : r.error;
  }

  /** Main changed one field (start at login): show it without asking again. */
  update(change: Partial<StaffStatus>): void {
    if (this.#status) this.#status = { ...this.#status, ...change };
  }

  clear(): void {
    this.#status = null;
  }
}
