/** The Logs tab's state: the last lines of main's log (main redacts them before they leave it). */
import type { ErrorInfo } from '../../../electron/contract.ts';
import type { StaffCalls } from './calls.svelte.ts';

export class LogTail {
  readonly #calls: StaffCalls;
  #lines = $state<string[] | null>(null);

  constructor(calls: StaffCalls) {
    this.#calls = calls;
  }

  /** Null until loaded. */
  get lines(): string[] | null {
    return this.#lines;
  }

  async load(): Promise<ErrorInfo | null> {
    const r = await this.#calls.call((s) => s.logTail());
    if (r.ok) this.#lines = r.value.lines;
    return r.ok ? null : r.error;
  }

  clear(): void {
    this.#lines = null;
  }
}
