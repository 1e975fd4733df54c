/**
 * The visitor funnel across the fleet: each kiosk's latest day (its status' `visitors`, read by intake.ts),
 * added up per group and for the fleet, with the conversions between steps and the largest drop in words.
 * Pure: the console's state hands it the kiosks' funnels, the server serves the result as JSON and CSV.
 *
 * Privacy (docs/analytics.md, the fleet section): a kiosk's count under the threshold is shown as "fewer than N", never as
 * a figure. A total adds up only the counts it may show, so it is a sum of figures already on the page:
 * no total minus the shown kiosks can give back a hidden count. It says how many kiosks it leaves out
 * ("at least 42 (2 kiosks with fewer than 5 not added)"). A conversion or a drop is worked out from shown
 * figures only, so no percentage leaks a hidden count either.
 */
import { csvCell } from '../../core/csv.ts';
import { DEFAULT_FUNNEL_THRESHOLD, REFUSAL_KINDS, type FunnelCounts, type FunnelDay } from '../../core/funnel.ts';
import type { VisitorConversion, VisitorFigure, VisitorLine, VisitorStep, VisitorsView } from './view.ts';

export const VISITOR_STEPS: readonly VisitorStep[] = ['noticed', 'approached', 'greeted', 'tapped', 'refused', 'gaveUp', 'failed', 'live', 'endedWell', 'endedBadly'];

/** Each step in a few words (the CSV's header, the CLI's first column). */
export const STEP_WORDS: Readonly<Record<VisitorStep, string>> = {
  noticed: 'noticed',
  approached: 'stopped',
  greeted: 'greeted',
  tapped: 'tapped',
  refused: 'refused before the call',
  gaveUp: 'gave up while connecting',
  failed: 'failed before live',
  live: 'went live',
  endedWell: 'ended well',
  endedBadly: 'ended badly',
};

/** The funnel's path, step to step: what the conversions are shown for. */
const PATH: ReadonlyArray<[VisitorStep, VisitorStep]> = [
  ['noticed', 'approached'],
  ['approached', 'greeted'],
  ['greeted', 'tapped'],
  ['tapped', 'live'],
  ['live', 'endedWell'],
];

/**
 * The drops a sentence can name: (lost, out of, words). `lost` null: out of minus the next step. The
 * losses between a tap and a conversation are told apart, as a venue acts on each differently.
 */
const DROPS: ReadonlyArray<{ lost: VisitorStep | null; next: VisitorStep | null; of: VisitorStep; words: string }> = [
  { lost: null, next: 'approached', of: 'noticed', words: 'of the passers-by noticed did not stop' },
  { lost: null, next: 'greeted', of: 'approached', words: 'of those who stopped were not greeted' },
  { lost: null, next: 'tapped', of: 'greeted', words: 'of those greeted did not tap' },
  { lost: 'refused', next: null, of: 'tapped', words: 'of taps were refused before the call (age gate, closed, out of order)' },
  { lost: 'gaveUp', next: null, of: 'tapped', words: 'of taps gave up while connecting' },
  { lost: 'failed', next: null, of: 'tapped', words: 'of taps failed before the conversation began' },
  { lost: 'endedBadly', next: null, of: 'live', words: 'of conversations ended badly (an error, a stall, a forced hang-up)' },
];

/** A kiosk's latest funnel as the console holds it. */
export interface KioskFunnel {
  kioskId: string;
  group: string | null;
  /** null: the kiosk sent none (or its last one was refused). */
  visitors: FunnelDay | null;
}

/** The steps' counts of one day (`refused` is the sum of its kinds). */
export function stepCounts(c: FunnelCounts): Record<VisitorStep, number> {
  return {
    noticed: c.noticed,
    approached: c.approached,
    greeted: c.greeted,
    tapped: c.tapped,
    refused: REFUSAL_KINDS.reduce((n, k) => n + c.refused[k], 0),
    gaveUp: c.gaveUp,
    failed: c.failed,
    live: c.live,
    endedWell: c.endedWell,
    endedBadly: c.endedBadly,
  };
}

const fewer = (threshold: number) => `fewer than ${threshold}`;
const kiosksWord = (n: number) => `${n} ${n === 1 ? 'kiosk' : 'kiosks'}`;

/** One kiosk's count, as it may be shown. */
export function kioskFigure(count: number, threshold: number): VisitorFigure {
  return count < threshold ? { value: null, leftOut: 0, text: fewer(threshold) } : { value: count, leftOut: 0, text: String(count) };
}

/** A total of kiosk figures: the shown ones added up, the hidden ones counted and named. */
export function totalFigure(figures: readonly VisitorFigure[], threshold: number): VisitorFigure {
  let value = 0;
  let leftOut = 0;
  for (const f of figures) {
    if (f.value === null) leftOut++;
    else value += f.value;
  }
  if (leftOut === 0) return { value, leftOut, text: String(value) };
  if (value === 0) return { value, leftOut, text: leftOut === 1 ? `${fewer(threshold)} (1 kiosk)` : `${fewer(threshold)} at each of ${kiosksWord(leftOut)}` };
  return { value, leftOut, text: `at least ${value} (${kiosksWord(leftOut)} with ${fewer(threshold)} not added)` };
}

/** Conversions and the largest drop of a line, from its shown and whole figures only. */
function line(figures: Record<VisitorStep, VisitorFigure>): VisitorLine {
  // A total that left kiosks out understates its step: no rate is worked out from it.
  const shown = (step: VisitorStep) => (figures[step].leftOut === 0 ? figures[step].value : null);
  const conversions: VisitorConversion[] = PATH.map(([from, to]) => {
    const a = shown(from);
    const b = shown(to);
    return { from, to, percent: a !== null && b !== null && a > 0 ? Math.round((100 * b) / a) : null };
  });
  let best: { share: number; words: string } | null = null;
  for (const d of DROPS) {
    const of = shown(d.of);
    let lost: number | null;
    if (d.lost !== null) lost = shown(d.lost);
    else {
      const next = shown(d.next!);
      lost = of === null || next === null ? null : of - next;
    }
    if (of === null || lost === null || of <= 0 || lost <= 0) continue;
    const share = lost / of;
    // The first of equal drops wins: the earlier step is where a venue can act first.
    if (best === null || share > best.share) best = { share, words: d.words };
  }
  const largestDrop = best ? `${Math.round(best.share * 100)} % ${best.words}.` : null;
  return { figures, conversions, largestDrop };
}

/** The day's funnel per kiosk, per group and for the fleet (`threshold`: DEFAULT_FUNNEL_THRESHOLD). */
export function visitorsView(funnels: readonly KioskFunnel[], threshold = DEFAULT_FUNNEL_THRESHOLD): VisitorsView {
  const reported = funnels.filter((f): f is KioskFunnel & { visitors: FunnelDay } => f.visitors !== null);
  // The latest day any kiosk reported: a kiosk still on yesterday (offline since, or in an earlier time
  // zone) is named apart, never added to today.
  const day = reported.reduce<string | null>((d, f) => (d === null || f.visitors.day > d ? f.visitors.day : d), null);
  const ofDay = reported.filter((f) => f.visitors.day === day).sort((a, b) => groupOrder(a.group, b.group) || a.kioskId.localeCompare(b.kioskId));
  const kiosks = ofDay.map((f) => {
    const counts = stepCounts(f.visitors.counts);
    const figures = Object.fromEntries(VISITOR_STEPS.map((s) => [s, kioskFigure(counts[s], threshold)])) as Record<VisitorStep, VisitorFigure>;
    return { kioskId: f.kioskId, group: f.group, ...line(figures) };
  });
  const total = (members: typeof kiosks) => line(Object.fromEntries(VISITOR_STEPS.map((s) => [s, totalFigure(members.map((k) => k.figures[s]), threshold)])) as Record<VisitorStep, VisitorFigure>);
  const groupNames = [...new Set(kiosks.map((k) => k.group))].sort(groupOrder);
  const groups = groupNames.map((group) => {
    const members = kiosks.filter((k) => k.group === group);
    return { group, kiosks: members.length, ...total(members) };
  });
  return {
    day,
    threshold,
    kiosks,
    groups,
    fleet: { kiosks: kiosks.length, ...total(kiosks) },
    otherDays: reported
      .filter((f) => f.visitors.day !== day)
      .map((f) => ({ kioskId: f.kioskId, day: f.visitors.day }))
      .sort((a, b) => a.kioskId.localeCompare(b.kioskId)),
    silent: funnels.length - reported.length,
  };
}

/** Groups by name; kiosks without one last. */
function groupOrder(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a.localeCompare(b);
}

/**
 * The visitors view as CSV (RFC 4180, formula-safe: core/csv.ts), thresholded as the page is: one row per
 * kiosk, then per group, then the fleet; each step's cell is the page's text.
 */
export function visitorsCsv(view: VisitorsView): string {
  const header = ['day', 'scope', 'group', 'kiosk', ...VISITOR_STEPS.map((s) => STEP_WORDS[s]), 'largest drop'];
  const row = (scope: string, group: string | null, kioskId: string, l: VisitorLine) => [view.day, scope, group ?? '', kioskId, ...VISITOR_STEPS.map((s) => l.figures[s].text), l.largestDrop ?? ''];
  const rows = [
    ...view.kiosks.map((k) => row('kiosk', k.group, k.kioskId, k)),
    ...view.groups.map((g) => row('group', g.group, '', g)),
    ...(view.day === null ? [] : [row('fleet', null, '', view.fleet)]),
  ];
  return `${[header, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n')}\r\n`;
}
