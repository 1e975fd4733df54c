/**
 * The Visitors tab's figures, worked out from the kiosk's `VisitorReport` (pure: no runes, no DOM, so the
 * unit tests read exactly what the tab shows). What it owns:
 *   - how a count reads: from 1 to below the report's threshold "fewer than 5", never the exact small
 *     number (0 reads 0, as in the kiosk's exports);
 *     noticed/approached "not counted" when presence detection is off (a zero there would be untrue);
 *   - today's funnel step by step, with the conversion from each step to the next;
 *   - where visitors were lost between "tapped" and "ended well", cause by cause, and the largest loss;
 *   - the week as 7 days × 24 hours, in colour bins with a legend, and its busiest hours;
 *   - the conclusions in plain sentences, and an honest line when there is too little to say.
 * A percentage is shown only when both of its counts reach the threshold: 1 of 40 as "3 %" would give the
 * small count away as surely as the number itself.
 */
import type { VisitorReport } from '../../../electron/contract.ts';
import { hiddenCount, shareOf } from '../../../electron/core/funnel.ts';
import type { MessageKey } from '../i18n/catalogues/index.ts';

export type { VisitorReport };
export type FunnelCounts = VisitorReport['today']['counts'];

/** The funnel's steps on the tab, in the order a visitor meets them. */
export const FUNNEL_STEPS = ['noticed', 'approached', 'greeted', 'tapped', 'live', 'endedWell'] as const;
export type FunnelStepId = (typeof FUNNEL_STEPS)[number];
/** The steps only presence detection counts. */
const PRESENCE_STEPS: ReadonlySet<FunnelStepId> = new Set(['noticed', 'approached']);

/** A count as the tab may show it. */
export type ShownCount = { kind: 'exact'; value: number } | { kind: 'fewer'; than: number } | { kind: 'notCounted' };

/** 0 is shown as 0 (nobody to point at), as the kiosk's exports do; 1 to threshold − 1 as "fewer than". */
export function shownCount(value: number, threshold: number): ShownCount {
  return hiddenCount(value, threshold) ? { kind: 'fewer', than: threshold } : { kind: 'exact', value };
}

/** Whole percent of `part` in `whole`, or null when either count is shown as "fewer than" (or whole is 0). */
export const percentOf = shareOf;

export interface FunnelStep {
  id: FunnelStepId;
  shown: ShownCount;
  /** 0–1 of the widest counted step (the bar's length); 0 when not shown exactly. */
  bar: number;
  /** Percent of the previous counted step that reached this one (null: first, too few, or not a subset). */
  conversion: number | null;
}

/** Today's funnel (or any counts) as the tab's bars. */
export function funnelSteps(counts: FunnelCounts, threshold: number, presence: boolean): FunnelStep[] {
  const counted = FUNNEL_STEPS.filter((id) => presence || !PRESENCE_STEPS.has(id));
  const widest = Math.max(0, ...counted.map((id) => counts[id]));
  let previous: FunnelStepId | null = null;
  return FUNNEL_STEPS.map((id) => {
    if (!counted.includes(id)) return { id, shown: { kind: 'notCounted' }, bar: 0, conversion: null };
    const value = counts[id];
    const shown = shownCount(value, threshold);
    // A later step can outnumber an earlier one (a tap without a greeting): no "120 %" then.
    const from = previous === null ? null : counts[previous];
    const conversion = from === null || value > from ? null : percentOf(value, from, threshold);
    previous = id;
    return { id, shown, bar: shown.kind === 'exact' && widest > 0 ? value / widest : 0, conversion };
  });
}

/** Call-length buckets, shortest first. */
export const CALL_LENGTHS = ['under1m', 'from1to3m', 'from3to10m', 'over10m'] as const;

/** Where visitors were lost, each against the step they were lost from. */
export const LOSSES = ['walkedOn', 'notGreeted', 'noTap', 'refused', 'gaveUp', 'failed', 'endedBadly'] as const;
export type LossId = (typeof LOSSES)[number];

export interface Loss {
  id: LossId;
  lost: number;
  of: number;
}

export function losses(counts: FunnelCounts, presence: boolean): Loss[] {
  const refused = counts.refused.ageGate + counts.refused.closed + counts.refused.outOfOrder;
  const all: Loss[] = [
    { id: 'walkedOn', lost: counts.noticed - counts.approached, of: counts.noticed },
    { id: 'notGreeted', lost: counts.approached - counts.greeted, of: counts.approached },
    { id: 'noTap', lost: counts.greeted - counts.tapped, of: counts.greeted },
    { id: 'refused', lost: refused, of: counts.tapped },
    { id: 'gaveUp', lost: counts.gaveUp, of: counts.tapped },
    { id: 'failed', lost: counts.failed, of: counts.tapped },
    { id: 'endedBadly', lost: counts.endedBadly, of: counts.live },
  ];
  const needsPresence: ReadonlySet<LossId> = new Set(['walkedOn', 'notGreeted']);
  return all.filter((l) => (presence || !needsPresence.has(l.id)) && l.lost > 0);
}

/** The largest loss that can be named without giving a small count away (null: too few to say). */
export function largestDrop(counts: FunnelCounts, threshold: number, presence: boolean): (Loss & { percent: number }) | null {
  let best: (Loss & { percent: number }) | null = null;
  for (const loss of losses(counts, presence)) {
    const percent = percentOf(loss.lost, loss.of, threshold);
    if (percent !== null && loss.lost <= loss.of && (best === null || percent > best.percent)) best = { ...loss, percent };
  }
  return best;
}

/** What the heat map and the busiest hours count: passers-by where presence is counted, else taps. */
export function heatMeasure(presence: boolean): 'noticed' | 'tapped' {
  return presence ? 'noticed' : 'tapped';
}

export interface HeatDay {
  /** `YYYY-MM-DD`, the kiosk's local day. */
  day: string;
  /** 24 counts, hour 0 to 23. */
  hours: number[];
  /** 24 colour bins (0: fewer than the threshold, 1–4 darker to brighter). */
  bins: number[];
}

/** The day `n` days before `day` (calendar arithmetic on the date alone: no time zone involved). */
export function dayBefore(day: string, n: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d - n)).toISOString().slice(0, 10);
}

/**
 * Upper bounds of the colour bins above "fewer than the threshold" (each bin: from the previous bound to
 * below this one). Spaced on a square scale (1/16, 4/16, 9/16 of the range, then all of it): one busy hour
 * would otherwise paint every ordinary hour of the week in the same first colour.
 */
export function heatBins(max: number, threshold: number): number[] {
  if (max < threshold) return [];
  const span = max - threshold + 1;
  const bounds: number[] = [];
  for (let i = 1; i <= 4; i++) {
    const bound = threshold + Math.ceil((span * i * i) / 16);
    if (bounds.length === 0 || bound > bounds[bounds.length - 1]!) bounds.push(bound);
  }
  return bounds;
}

/** Which bin a count falls in: 0 below the threshold, else 1 + the index of the first bound above it. */
export function binOf(value: number, threshold: number, bounds: number[]): number {
  if (value < threshold) return 0;
  const i = bounds.findIndex((b) => value < b);
  return i === -1 ? bounds.length : i + 1;
}

/** The last 7 days (oldest first, ending with today) × 24 hours of the measure. */
export function heatMap(report: VisitorReport): { days: HeatDay[]; bounds: number[]; measure: 'noticed' | 'tapped' } {
  const measure = heatMeasure(report.counting.presence);
  const byHour = new Map(report.hours.map((h) => [h.hour, h.counts[measure]]));
  const raw = Array.from({ length: 7 }, (_, i) => {
    const day = dayBefore(report.today.day, 6 - i);
    return { day, hours: Array.from({ length: 24 }, (_, h) => byHour.get(`${day}T${String(h).padStart(2, '0')}`) ?? 0) };
  });
  const bounds = heatBins(Math.max(0, ...raw.flatMap((d) => d.hours)), report.threshold);
  return { days: raw.map((d) => ({ ...d, bins: d.hours.map((v) => binOf(v, report.threshold, bounds)) })), bounds, measure };
}

/** The hours of the day with the most of the measure over the week (at most three, each at the threshold or above). */
export function busiestHours(report: VisitorReport, top = 3): Array<{ hour: number; total: number }> {
  const measure = heatMeasure(report.counting.presence);
  const from = dayBefore(report.today.day, 6);
  const totals = new Array<number>(24).fill(0);
  for (const h of report.hours) {
    if (h.hour.slice(0, 10) < from) continue;
    const hour = Number(h.hour.slice(11, 13));
    if (hour >= 0 && hour < 24) totals[hour]! += h.counts[measure];
  }
  return totals
    .map((total, hour) => ({ hour, total }))
    .filter((h) => h.total >= report.threshold)
    .sort((a, b) => b.total - a.total || a.hour - b.hour)
    .slice(0, top);
}

export type Translate = (key: MessageKey, options?: Record<string, unknown>) => string;

/** How the tab writes numbers and hours in the report's language. */
export interface ReportFormat {
  t: Translate;
  number(value: number): string;
  percent(value: number): string;
  /** "12:00–13:00" for hour 12. */
  hourSpan(hour: number): string;
  /** "Sun, Mar 1" for `2026-03-01` (a calendar day: no time zone applies). */
  dayName(day: string): string;
  list(items: string[]): string;
}

export function formatFor(lang: string, t: Translate): ReportFormat {
  // 24-hour clock in every language: a heat map's columns read 00–23, and "12 PM" is a frequent misreading.
  const hourFmt = new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' });
  const dayFmt = new Intl.DateTimeFormat(lang, { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' });
  const at = (h: number) => hourFmt.format(Date.UTC(2026, 0, 1, h));
  return {
    t,
    number: (v) => new Intl.NumberFormat(lang).format(v),
    percent: (v) => new Intl.NumberFormat(lang, { style: 'percent' }).format(v / 100),
    hourSpan: (h) => `${at(h)}–${at((h + 1) % 24)}`,
    dayName: (day) => {
      const [y, m, d] = day.split('-').map(Number) as [number, number, number];
      return dayFmt.format(Date.UTC(y, m - 1, d));
    },
    list: (items) => new Intl.ListFormat(lang, { type: 'conjunction' }).format(items),
  };
}

/** A count in words: "12", "fewer than 5", "not counted". */
export function countText(shown: ShownCount, f: ReportFormat): string {
  if (shown.kind === 'exact') return f.number(shown.value);
  if (shown.kind === 'fewer') return f.t('staff.visitors.fewerThan', { n: f.number(shown.than) });
  return f.t('staff.visitors.notCounted');
}

/** The conclusions, one sentence each: the largest drop today, the busiest hours this week, or why not. */
export function conclusions(report: VisitorReport, f: ReportFormat): string[] {
  const presence = report.counting.presence;
  const out: string[] = [];
  const drop = largestDrop(report.today.counts, report.threshold, presence);
  if (drop) out.push(f.t(`staff.visitors.drop.${drop.id}`, { percent: f.percent(drop.percent) }));
  else out.push(f.t('staff.visitors.tooFewToday', { n: f.number(report.threshold) }));
  const busiest = busiestHours(report);
  const measure = heatMeasure(presence);
  if (busiest.length > 0) out.push(f.t(`staff.visitors.busiest.${measure}`, { hours: f.list(busiest.map((h) => f.hourSpan(h.hour))) }));
  else out.push(f.t(`staff.visitors.tooFewWeek.${measure}`));
  if (!presence) out.push(f.t('staff.visitors.presenceOff'));
  return out;
}
