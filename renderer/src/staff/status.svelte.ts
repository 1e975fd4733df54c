/**
 * What the Status and System tabs show: main's status (mode, service, whether a key is set — never the
 * key —, version, uptime, today's figures, recent errors, start at login).
 */
import type { StaffStatus } from '../../../electron/contract.ts';
import { StaffValue, type StaffCalls } from './calls.svelte.ts';

export class KioskStatus extends StaffValue<StaffStatus> {
  constructor(calls: StaffCalls) {
    super(calls, (s) => s.status());
  }

  /** Null until loaded. */
  get status(): StaffStatus | null {
    return this.value;
  }

  /** Main changed one field (start at login): show it without asking again. */
  update(change: Partial<StaffStatus>): void {
    if (this.value) this.value = { ...this.value, ...change };
  }
}
