/**
 * What the fleet spent, as the console counts it: each call's credits from the kiosks' ledger events,
 * per kiosk, day (UTC, of the call's end) and avatar; and, where events never arrived, what the kiosks'
 * own day counters say (their status' `today`). Pure and clock-free (times are passed in); FleetState
 * feeds it, memory.ts keeps it on disk.
 *
 * Why the day counters: an event can be lost for good — a kiosk's full queue drops its oldest event
 * (the ledger on the kiosk keeps it), or a console crash lands between the broker's delivery and the
 * console's disk. The kiosk's `today` counts its ledger, so for each kiosk-day the console compares the
 * counter with the calls it received in the same hours (15-minute slots, so any time zone's midnight
 * falls on a slot's edge) and adds the difference as a row whose avatar is `(not received)`, dated by
 * the kiosk's own day. A counter sent while events still wait in the kiosk's queue (`queued` > 0) is
 * not compared: those calls are on their way. The counter holds real calls only (a demo call on the
 * kiosk's built-in emulator is counted apart), so only real calls are put in the slots it is compared
 * with; demo calls get rows of their own (`demo: true`) and never a `(not received)` one.
 *
 * A kiosk-day that began before the console's record did (its first start with this data folder, or
 * this start without one) is not compared as `(not received)`: its calls before that may well have been
 * received, by an earlier run that kept nothing, or happened before the console ever ran. The
 * difference is shown apart, as BEFORE_RECORD, so no row claims a loss the console cannot know of.
 *
 * Bounded: rows older than KEEP_SPEND_DAYS and slots and counters older than KEEP_COUNT_DAYS are
 * dropped (a counter's difference is kept as a row first).
 */
import { BEFORE_RECORD, NOT_RECEIVED, type SpendRow } from './view.ts';

// The labels of the rows made from counters live with the view (the page names them too).
export { BEFORE_RECORD, NOT_RECEIVED } from './view.ts';
export const SLOT_MS = 15 * 60_000;
export const DAY_MS = 24 * 60 * 60_000;
export const KEEP_SPEND_DAYS = 62;
/** Long enough for yesterday's last counter to be compared after a console that was down a day. */
export const KEEP_COUNT_DAYS = 3;

/** A kiosk's own count of one of its days (its status' `today`). */
export interface DayCount {
  /** The kiosk's local day, YYYY-MM-DD. */
  day: string;
  /** That day's start and end on the kiosk (ms). */
  fromMs: number;
  toMs: number;
  sessions: number;
  credits: number;
  /** Events waiting in the kiosk's queue when it said so. */
  queued: number;
}

export interface SpendSnapshot {
  rows: SpendRow[];
  /** [kiosk, slot index (ms / SLOT_MS), calls, credits]. */
  slots: Array<[string, number, number, number]>;
  counts: Array<[string, DayCount]>;
}

interface Sum {
  sessions: number;
  credits: number;
}

export class SpendBook {
  /** `recordBeganMs`: since when the console has kept count (see the header). */
  constructor(private recordBeganMs: number) {}

  /** Since when the console has kept count (ms). */
  get recordBegan(): number {
    return this.recordBeganMs;
  }

  /** The record began earlier than thought (read back from the console's memory). */
  set recordBegan(ms: number) {
    this.recordBeganMs = ms;
  }

  private readonly byKey = new Map<string, SpendRow>();
  private readonly slots = new Map<string, Map<number, Sum>>();
  private readonly counts = new Map<string, Map<string, DayCount>>();

  /** One call's end, as its ledger event says; `demo`: on the kiosk's built-in emulator (play money). */
  addCall(kioskId: string, endMs: number, avatar: string, credits: number, demo = false): void {
    const day = new Date(endMs).toISOString().slice(0, 10);
    this.addRow(kioskId, day, avatar, 1, credits, demo);
    if (demo) return;
    let slots = this.slots.get(kioskId);
    if (!slots) this.slots.set(kioskId, (slots = new Map()));
    const slot = Math.floor(endMs / SLOT_MS);
    const sum = slots.get(slot) ?? { sessions: 0, credits: 0 };
    sum.sessions++;
    sum.credits += credits;
    slots.set(slot, sum);
  }

  /** A kiosk's day counter (the latest it sent for that day). True when it changed. */
  dayCount(kioskId: string, count: DayCount): boolean {
    let days = this.counts.get(kioskId);
    if (!days) this.counts.set(kioskId, (days = new Map()));
    const was = days.get(count.day);
    if (was && was.sessions === count.sessions && was.credits === count.credits && was.queued === count.queued && was.fromMs === count.fromMs && was.toMs === count.toMs) return false;
    days.set(count.day, { ...count });
    return true;
  }

  /** Every row, the kiosks' counted-but-not-received calls included, by day, kiosk and avatar. */
  rows(): SpendRow[] {
    const out = [...this.byKey.values()].map((r) => ({ ...r }));
    for (const [kioskId, days] of this.counts) {
      for (const count of days.values()) {
        const gap = this.gap(kioskId, count);
        if (!gap) continue;
        const avatar = this.gapLabel(count);
        const kept = out.find((r) => r.kioskId === kioskId && r.day === count.day && r.avatar === avatar && !r.demo);
        if (kept) {
          kept.sessions += gap.sessions;
          kept.credits += gap.credits;
        } else out.push({ kioskId, day: count.day, avatar, ...gap, demo: false });
      }
    }
    return out.sort((a, b) => a.day.localeCompare(b.day) || a.kioskId.localeCompare(b.kioskId) || a.avatar.localeCompare(b.avatar) || Number(a.demo) - Number(b.demo));
  }

  /** Drop what is older than the bounds; a counter's gap is kept as a row before its counter goes. */
  prune(nowMs: number): void {
    const oldestDay = new Date(nowMs - KEEP_SPEND_DAYS * DAY_MS).toISOString().slice(0, 10);
    for (const [key, row] of this.byKey) if (row.day < oldestDay) this.byKey.delete(key);
    const countsBefore = nowMs - KEEP_COUNT_DAYS * DAY_MS;
    for (const [kioskId, days] of this.counts) {
      for (const [day, count] of days) {
        if (count.toMs > countsBefore) continue;
        const gap = this.gap(kioskId, count);
        if (gap) this.addRow(kioskId, day, this.gapLabel(count), gap.sessions, gap.credits, false);
        days.delete(day);
      }
      if (!days.size) this.counts.delete(kioskId);
    }
    const oldestSlot = Math.floor((countsBefore - DAY_MS) / SLOT_MS);
    for (const [kioskId, slots] of this.slots) {
      for (const slot of slots.keys()) if (slot < oldestSlot) slots.delete(slot);
      if (!slots.size) this.slots.delete(kioskId);
    }
  }

  snapshot(): SpendSnapshot {
    const slots: SpendSnapshot['slots'] = [];
    for (const [kioskId, m] of this.slots) for (const [slot, sum] of m) slots.push([kioskId, slot, sum.sessions, sum.credits]);
    const counts: SpendSnapshot['counts'] = [];
    for (const [kioskId, m] of this.counts) for (const count of m.values()) counts.push([kioskId, { ...count }]);
    return { rows: [...this.byKey.values()].map((r) => ({ ...r })), slots, counts };
  }

  restore(snapshot: SpendSnapshot): void {
    for (const r of snapshot.rows) this.addRow(r.kioskId, r.day, r.avatar, r.sessions, r.credits, r.demo);
    for (const [kioskId, slot, sessions, credits] of snapshot.slots) {
      let m = this.slots.get(kioskId);
      if (!m) this.slots.set(kioskId, (m = new Map()));
      m.set(slot, { sessions, credits });
    }
    for (const [kioskId, count] of snapshot.counts) this.dayCount(kioskId, count);
  }

  /** A kiosk-day that began before the record: what it counted beyond the calls received may have been received by an earlier run. */
  private gapLabel(count: DayCount): string {
    return count.fromMs < this.recordBeganMs ? BEFORE_RECORD : NOT_RECEIVED;
  }

  /** What the kiosk counted in its day beyond the calls received in the same hours, or null. */
  private gap(kioskId: string, count: DayCount): Sum | null {
    if (count.queued > 0) return null;
    let sessions = 0;
    let credits = 0;
    const from = Math.ceil(count.fromMs / SLOT_MS);
    const to = Math.ceil(count.toMs / SLOT_MS);
    for (const [slot, sum] of this.slots.get(kioskId) ?? []) {
      if (slot < from || slot >= to) continue;
      sessions += sum.sessions;
      credits += sum.credits;
    }
    const missing = { sessions: Math.max(0, count.sessions - sessions), credits: Math.max(0, round(count.credits - credits)) };
    return missing.sessions > 0 || missing.credits > 0 ? missing : null;
  }

  private addRow(kioskId: string, day: string, avatar: string, sessions: number, credits: number, demo: boolean): void {
    const key = `${kioskId}\u0000${day}\u0000${avatar}\u0000${demo ? 'demo' : 'real'}`;
    const row = this.byKey.get(key) ?? { kioskId, day, avatar, sessions: 0, credits: 0, demo };
    row.sessions += sessions;
    row.credits += credits;
    this.byKey.set(key, row);
  }
}

const round = (n: number) => Math.round(n * 1000) / 1000;
