/**
 * The visitor funnel as it may leave the kiosk's own store (docs/analytics.md): every count from 1 to
 * threshold − 1 becomes "fewer than N" (`{ lessThan: N }` in JSON), nothing finer than an hour, and only
 * the fields listed here (counts by step, refusal kind, call length, language, call mode and avatar):
 * no field that could identify a person exists to be copied. Pure functions: the CLI, tests and any later
 * export share them.
 */
import type { VisitorReport } from '../contract.ts';
import { hiddenCount, shareOf, type FunnelCounts } from '../core/funnel.ts';

/** A count as exported: exact when 0 or at least the threshold, else only "fewer than N". */
export type ShownCount = number | { lessThan: number };

type Thresholded<T> = T extends number ? ShownCount : { [K in keyof T]: Thresholded<T[K]> };
export type ShownCounts = Thresholded<FunnelCounts>;

export interface FunnelExport {
  timeZone: string;
  threshold: number;
  today: { day: string; counts: ShownCounts };
  /** The last 7 days hour by hour (the finest the funnel has). */
  hours: Array<{ hour: string; counts: ShownCounts }>;
  days: Array<{ day: string; counts: ShownCounts }>;
}

export function showCount(n: number, threshold: number): ShownCount {
  return hiddenCount(n, threshold) ? { lessThan: threshold } : n;
}

/** Every count of `counts` thresholded; the shape (and only it) is kept. */
export function thresholdCounts(counts: FunnelCounts, threshold: number): ShownCounts {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'number') return showCount(v, threshold);
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
  };
  return walk(counts) as ShownCounts;
}

export function exportFunnel(report: VisitorReport): FunnelExport {
  const t = report.threshold;
  return {
    timeZone: report.timeZone,
    threshold: t,
    today: { day: report.today.day, counts: thresholdCounts(report.today.counts, t) },
    hours: report.hours.map((h) => ({ hour: h.hour.slice(0, 13), counts: thresholdCounts(h.counts, t) })),
    days: report.days.map((d) => ({ day: d.day, counts: thresholdCounts(d.counts, t) })),
  };
}

/** A shown count in words: "12", "fewer than 5". */
export function showText(v: ShownCount): string {
  return typeof v === 'number' ? String(v) : `fewer than ${v.lessThan}`;
}

/** The steps a visitor passes, in order, as the conversion is read (presence steps only where counted). */
const CHAIN = [
  ['noticed', 'noticed'],
  ['approached', 'stopped in front'],
  ['tapped', 'tapped'],
  ['live', 'went live'],
  ['endedWell', 'ended well'],
] as const;

export interface Drop {
  from: string;
  to: string;
  /** Share of `from` that did not reach `to`, in whole percent. */
  percent: number;
}

/**
 * Where most visitors are lost between two steps, among steps whose counts (and what was lost between
 * them) are shown as themselves: a percentage would otherwise give a hidden count back. Null: too few.
 */
export function largestDrop(counts: FunnelCounts, threshold: number, presence: boolean): Drop | null {
  const chain = CHAIN.filter(([k]) => presence || (k !== 'noticed' && k !== 'approached'));
  let best: Drop | null = null;
  for (let i = 0; i + 1 < chain.length; i++) {
    const [fk, fromLabel] = chain[i]!;
    const [tk, toLabel] = chain[i + 1]!;
    const from = counts[fk];
    // Both ends shown as themselves: with `from` known, a percentage lost gives `to` (and what was lost) back.
    if (hiddenCount(counts[tk], threshold)) continue;
    const percent = shareOf(Math.max(0, from - counts[tk]), from, threshold);
    if (percent === null) continue;
    if (!best || percent > best.percent) best = { from: fromLabel, to: toLabel, percent };
  }
  return best;
}

/** The steps in the order a person reads them (label, value). */
export function stepLines(c: ShownCounts, presence: boolean): Array<[string, string]> {
  const lines: Array<[string, ShownCount]> = [];
  if (presence) lines.push(['Noticed', c.noticed], ['Stopped in front', c.approached], ['Greeted', c.greeted]);
  lines.push(
    ['Tapped', c.tapped],
    ['Refused: age gate', c.refused.ageGate],
    ['Refused: closed', c.refused.closed],
    ['Refused: out of order', c.refused.outOfOrder],
    ['Gave up while connecting', c.gaveUp],
    ['Failed before live', c.failed],
    ['Went live', c.live],
    ['Ended well', c.endedWell],
    ['Ended badly', c.endedBadly],
  );
  return lines.map(([label, v]) => [label, showText(v)]);
}

/** What is said when passers-by are not in the figures: the kiosk knows its setting; a reader of its
 *  file only sees that none were counted. */
export const PRESENCE_OFF_LINE = 'Presence detection is off: passers-by are not counted, only taps and calls.';
export const NO_PASSERS_BY_LINE = 'No passers-by were counted (presence detection is off, or nobody was noticed): only taps and calls.';

/** The funnel for a terminal: today, the last 7 days by day, the largest drop. Plain ASCII. */
export function funnelText(report: VisitorReport, presenceOffLine = PRESENCE_OFF_LINE): string {
  const ex = exportFunnel(report);
  const presence = report.counting.presence;
  const out: string[] = [];
  out.push(`Visitors (counts only; times in ${report.timeZone}; counts under ${ex.threshold} are shown as "fewer than ${ex.threshold}")`);
  if (!presence) out.push(presenceOffLine);
  out.push('', `Today (${ex.today.day})`);
  for (const [label, v] of stepLines(ex.today.counts, presence)) out.push(`  ${label.padEnd(26)} ${v}`);
  const week = ex.days.slice(-7);
  out.push('', 'The last 7 days');
  if (week.length === 0) out.push('  Nothing counted yet.');
  else {
    out.push(`  ${'Day'.padEnd(12)} ${'Tapped'.padStart(14)} ${'Went live'.padStart(14)} ${'Ended well'.padStart(14)}`);
    for (const d of week) out.push(`  ${d.day.padEnd(12)} ${showText(d.counts.tapped).padStart(14)} ${showText(d.counts.live).padStart(14)} ${showText(d.counts.endedWell).padStart(14)}`);
  }
  const weekCounts = report.days.slice(-7).reduce<FunnelCounts | null>((sum, d) => (sum ? addSteps(sum, d.counts) : structuredClone(d.counts)), null);
  const drop = weekCounts ? largestDrop(weekCounts, ex.threshold, presence) : null;
  out.push('', drop ? `Largest drop over the last 7 days: ${drop.percent} % of those who ${drop.from} never ${drop.to}.` : 'Largest drop: too few visitors to say yet.');
  return out.join('\n') + '\n';
}

function addSteps(a: FunnelCounts, b: FunnelCounts): FunnelCounts {
  for (const [k] of CHAIN) a[k] += b[k];
  return a;
}
