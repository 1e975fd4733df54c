/** The Ledger tab's state: what the kiosk spent (today, 7 days, this month) and the CSV export. */
import type { LedgerTotals } from '../../../electron/contract.ts';
import { StaffValue, type StaffCalls } from './calls.svelte.ts';

export class Ledger extends StaffValue<LedgerTotals> {
  constructor(calls: StaffCalls) {
    super(calls, (s) => s.ledgerTotals());
  }

  /** Null until loaded. */
  get totals(): LedgerTotals | null {
    return this.value;
  }

  /** The ledger as CSV (the component turns it into a download). */
  async exportCsv(since?: string): Promise<{ fileName: string; csv: string } | null> {
    const r = await this.calls.call((s) => s.ledgerCsv(since ? { since } : {}));
    if (!r.ok) {
      this.calls.notice = r.error.message;
      return null;
    }
    this.calls.notice = `Exported ${r.value.fileName}.`;
    return r.value;
  }
}
