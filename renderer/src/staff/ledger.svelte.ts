/** The Ledger tab's state: what the kiosk spent (today, 7 days, this month) and the CSV export. */
import type { ErrorInfo, LedgerTotals } from '../../../electron/contract.ts';
import type { StaffCalls } from './calls.svelte.ts';

export class Ledger {
  readonly #calls: StaffCalls;
  #totals = $state<LedgerTotals | null>(null);

  constructor(calls: StaffCalls) {
    this.#calls = calls;
  }

  /** Null until loaded. */
  get totals(): LedgerTotals | null {
    return this.#totals;
  }

  async load(): Promise<ErrorInfo | null> {
    const r = await this.#calls.call((s) => s.ledgerTotals());
    if (r.ok) this.#totals = r.value;
    return r.ok ? null : r.error;
  }

  /** The ledger as CSV (the component turns it into a download). */
  async exportCsv(since?: string): Promise<{ fileName: string; csv: string } | null> {
    const r = await this.#calls.call((s) => s.ledgerCsv(since ? { since } : {}));
    if (!r.ok) {
      this.#calls.notice = r.error.message;
      return null;
    }
    this.#calls.notice = `Exported ${r.value.fileName}.`;
    return r.value;
  }

  clear(): void {
    this.#totals = null;
  }
}
