/**
 * The day's field figures for the fleet status: every call's `CallFigures` (contract.ts) since local
 * midnight, summarised as the median and the 95th percentile of each figure. Pure, beside the telemetry
 * that makes the figures (call-telemetry.ts); the fleet host feeds it the kiosk's `call-figures` events
 * and reads `summary()` whenever the status is published.
 */
import type { CallFigures } from '../contract.ts';

/** The figures summarised, as named in the status (all ms from the tap, except `joinMs`). */
export const DAY_FIGURE_KEYS = ['tapToRtcReadyMs', 'tapToConnInitAckMs', 'tapToAvatarPublishedMs', 'tapToFirstFrameMs', 'tapToFirstAudioMs', 'joinMs'] as const;
export type DayFigureKey = (typeof DAY_FIGURE_KEYS)[number];

/** The status field: calls counted today, and p50/p95 per figure (null: no call had that figure). */
export interface DayCallFigures {
  /** Local date (YYYY-MM-DD) the figures are for. */
  day: string;
  calls: number;
  p50: Record<DayFigureKey, number | null>;
  p95: Record<DayFigureKey, number | null>;
}

/** Nearest-rank percentile of ascending `sorted` (p in 0..100); null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

const localDay = (ms: number): string => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

/** The kiosk's local day at `nowMs`: its date and its start and end as ISO times (the status' `today`
 *  says which day its counters are for, so the console can compare them with the calls it received). */
export function localDayBounds(nowMs: number): { day: string; from: string; to: string } {
  const d = new Date(nowMs);
  const from = new Date(d.getFullYear(), d.getMonth(), d.getDate());
  const to = new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1);
  return { day: localDay(nowMs), from: from.toISOString(), to: to.toISOString() };
}

export class DayFigures {
  #day = '';
  #calls: CallFigures[] = [];

  /** A call ended at `atMs` with these figures. A new local day starts a new list. */
  add(figures: CallFigures, atMs: number): void {
    this.#roll(atMs);
    this.#calls.push(figures);
  }

  summary(nowMs: number): DayCallFigures {
    this.#roll(nowMs);
    const p50 = {} as Record<DayFigureKey, number | null>;
    const p95 = {} as Record<DayFigureKey, number | null>;
    for (const key of DAY_FIGURE_KEYS) {
      const values = this.#calls.map((c) => c[key]).filter((v): v is number => v !== null).sort((a, b) => a - b);
      p50[key] = percentile(values, 50);
      p95[key] = percentile(values, 95);
    }
    return { day: this.#day, calls: this.#calls.length, p50, p95 };
  }

  #roll(atMs: number): void {
    const day = localDay(atMs);
    if (day !== this.#day) {
      this.#day = day;
      this.#calls = [];
    }
  }
}
