/**
 * The Visitors tab's figures (renderer/src/staff/visitor-report.ts): how a count reads under the privacy
 * threshold, the funnel's steps and conversions, the largest drop, the week's heat map and busiest hours,
 * and the conclusions as the tab writes them, in English and German through the real catalogues.
 */
/// <reference types="svelte" />
import '../../helpers/svelte-runes.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { emptyFunnelCounts } from '../../../electron/core/funnel.ts';

const { Locale } = await import('../../../renderer/src/i18n/locale.svelte.ts');
const R = await import('../../../renderer/src/staff/visitor-report.ts');
type FunnelCounts = import('../../../renderer/src/staff/visitor-report.ts').FunnelCounts;
type VisitorReport = import('../../../renderer/src/staff/visitor-report.ts').VisitorReport;

function counts(over: Partial<Omit<FunnelCounts, 'refused'>> & { refused?: Partial<FunnelCounts['refused']> } = {}): FunnelCounts {
  const { refused, ...rest } = over;
  const empty = emptyFunnelCounts();
  return { ...empty, ...rest, refused: { ...empty.refused, ...refused } };
}

function report(over: Partial<VisitorReport> = {}): VisitorReport {
  return { timeZone: 'Europe/Berlin', threshold: 5, today: { day: '2026-03-01', counts: counts() }, hours: [], days: [], counting: { presence: true }, ...over };
}

function format(lang: 'en' | 'de') {
  const l = new Locale();
  l.set(lang);
  return R.formatFor(lang, (key, options) => l.t(key, options));
}

/** A busy day: 200 noticed, 120 stopped, 100 greeted, 100 tapped (10 refused, 37 gave up, 6 failed), 47 live. */
const BUSY = counts({ noticed: 200, approached: 120, greeted: 100, tapped: 100, refused: { ageGate: 6, closed: 4 }, gaveUp: 37, failed: 6, live: 47, endedWell: 40, endedBadly: 7 });

describe('a count under the threshold', () => {
  it('reads "fewer than N" from 1 on, never the number; 0 as 0 and from the threshold on the number itself', () => {
    const en = format('en');
    assert.deepEqual(
      [0, 1, 4, 5, 1234].map((v) => R.countText(R.shownCount(v, 5), en)),
      ['0', 'fewer than 5', 'fewer than 5', '5', '1,234'],
    );
    assert.equal(R.countText(R.shownCount(9, 10), en), 'fewer than 10');
    assert.equal(R.countText(R.shownCount(3, 5), format('de')), 'weniger als 5');
    assert.equal(R.countText({ kind: 'notCounted' }, en), 'not counted');
  });

  it('gives no percentage whose part or whole is below it (a share would give the small count away)', () => {
    assert.deepEqual(
      [R.percentOf(37, 100, 5), R.percentOf(4, 100, 5), R.percentOf(4, 4, 5), R.percentOf(5, 5, 5), R.percentOf(0, 0, 5), R.percentOf(0, 40, 5), R.percentOf(0, 4, 5), R.percentOf(1, 3, 1)],
      [37, null, null, 100, null, 0, null, 33],
    );
  });
});

describe('the funnel', () => {
  it('lists the six steps with each bar against the widest and the conversion from the step before', () => {
    assert.deepEqual(R.funnelSteps(BUSY, 5, true), [
      { id: 'noticed', shown: { kind: 'exact', value: 200 }, bar: 1, conversion: null },
      { id: 'approached', shown: { kind: 'exact', value: 120 }, bar: 0.6, conversion: 60 },
      { id: 'greeted', shown: { kind: 'exact', value: 100 }, bar: 0.5, conversion: 83 },
      { id: 'tapped', shown: { kind: 'exact', value: 100 }, bar: 0.5, conversion: 100 },
      { id: 'live', shown: { kind: 'exact', value: 47 }, bar: 0.235, conversion: 47 },
      { id: 'endedWell', shown: { kind: 'exact', value: 40 }, bar: 0.2, conversion: 85 },
    ]);
  });

  it('with presence detection off, says noticed and approached are not counted and starts at the greeting', () => {
    const steps = R.funnelSteps(counts({ greeted: 30, tapped: 20, live: 12, endedWell: 3 }), 5, false);
    assert.deepEqual(
      steps.map((s) => [s.id, s.shown.kind, s.conversion]),
      [
        ['noticed', 'notCounted', null],
        ['approached', 'notCounted', null],
        ['greeted', 'exact', null],
        ['tapped', 'exact', 67],
        ['live', 'exact', 60],
        ['endedWell', 'fewer', null],
      ],
    );
    assert.equal(steps[5]!.bar, 0, 'a count shown as "fewer than" draws no bar that would measure it');
  });

  it('gives no conversion where a step outnumbers the one before (taps without a greeting)', () => {
    const steps = R.funnelSteps(counts({ noticed: 50, approached: 20, greeted: 10, tapped: 14 }), 5, true);
    assert.deepEqual(steps.map((s) => s.conversion), [null, 40, 50, null, 0, null]);
  });
});

describe('the largest drop', () => {
  it('names the biggest loss among the counted causes, against the step it was lost from', () => {
    assert.deepEqual(R.largestDrop(BUSY, 5, true), { id: 'walkedOn', lost: 80, of: 200, percent: 40 });
    const noPresence = R.largestDrop(BUSY, 5, false);
    assert.deepEqual(noPresence, { id: 'gaveUp', lost: 37, of: 100, percent: 37 });
  });

  it('is none when every loss or its base is under the threshold', () => {
    assert.equal(R.largestDrop(counts({ tapped: 40, gaveUp: 4, failed: 3, live: 33, endedWell: 33 }), 5, false), null);
    assert.equal(R.largestDrop(counts({ tapped: 4, gaveUp: 4 }), 5, false), null);
    assert.equal(R.largestDrop(counts(), 5, true), null);
  });
});

describe('the week', () => {
  const hours = [
    { hour: '2026-02-22T12', counts: counts({ noticed: 500, tapped: 90 }) }, // eight days back: not this week
    { hour: '2026-02-23T12', counts: counts({ noticed: 30, tapped: 6 }) },
    { hour: '2026-02-28T17', counts: counts({ noticed: 42, tapped: 9 }) },
    { hour: '2026-03-01T12', counts: counts({ noticed: 14, tapped: 4 }) },
    { hour: '2026-03-01T09', counts: counts({ noticed: 3, tapped: 3 }) },
    { hour: '2026-03-01T10', counts: counts({ noticed: 20, tapped: 1 }) },
  ];

  it('lays the last 7 days out as 7 rows × 24 hours, oldest first, across the month boundary', () => {
    const map = R.heatMap(report({ hours }));
    assert.equal(map.measure, 'noticed');
    assert.deepEqual(map.days.map((d) => d.day), ['2026-02-23', '2026-02-24', '2026-02-25', '2026-02-26', '2026-02-27', '2026-02-28', '2026-03-01']);
    assert.ok(map.days.every((d) => d.hours.length === 24 && d.bins.length === 24));
    assert.equal(map.days[0]!.hours[12], 30);
    assert.equal(map.days[6]!.hours[9], 3);
    assert.deepEqual(map.bounds, [8, 15, 27, 43]);
    assert.deepEqual([map.days[6]!.bins[9], map.days[6]!.bins[8], map.days[6]!.bins[12], map.days[6]!.bins[10], map.days[0]!.bins[12], map.days[5]!.bins[17]], [0, 0, 2, 3, 4, 4]);
  });

  it('shows a count under the threshold in the same colour as none', () => {
    const map = R.heatMap(report({ hours: [{ hour: '2026-03-01T09', counts: counts({ noticed: 4 }) }] }));
    assert.deepEqual(map.bounds, []);
    assert.ok(map.days.every((d) => d.bins.every((b) => b === 0)));
  });

  it('counts taps when presence detection is off', () => {
    const map = R.heatMap(report({ hours, counting: { presence: false } }));
    assert.equal(map.measure, 'tapped');
    assert.equal(map.days[5]!.hours[17], 9);
  });

  it('names the busiest hours of the day over the week, each at the threshold or above', () => {
    assert.deepEqual(R.busiestHours(report({ hours })), [
      { hour: 12, total: 44 },
      { hour: 17, total: 42 },
      { hour: 10, total: 20 },
    ]);
    assert.deepEqual(R.busiestHours(report({ hours, counting: { presence: false } })), [
      { hour: 12, total: 10 },
      { hour: 17, total: 9 },
    ]);
  });

  it('splits the scale into at most four bins above "fewer than the threshold", on a square scale', () => {
    assert.deepEqual(R.heatBins(4, 5), []);
    assert.deepEqual(R.heatBins(5, 5), [6]);
    assert.deepEqual(R.heatBins(7, 5), [6, 7, 8]);
    assert.deepEqual(R.heatBins(104, 5), [12, 30, 62, 105]);
    assert.deepEqual([4, 5, 11, 12, 29, 30, 61, 62, 104].map((v) => R.binOf(v, 5, [12, 30, 62, 105])), [0, 1, 1, 2, 2, 3, 3, 4, 4]);
  });
});

describe('the conclusions', () => {
  it('say where most were lost today and the busiest hours of the week, in plain sentences', () => {
    const r = report({ today: { day: '2026-03-01', counts: BUSY }, counting: { presence: false }, hours: [{ hour: '2026-03-01T12', counts: counts({ tapped: 60 }) }, { hour: '2026-02-27T17', counts: counts({ tapped: 40 }) }] });
    assert.deepEqual(R.conclusions(r, format('en')), [
      '37% of taps gave up while connecting.',
      'The busiest hours this week, by taps: 12:00–13:00 and 17:00–18:00.',
      'Presence detection is off: people passing by and stopping in front of the kiosk are not counted.',
    ]);
    assert.deepEqual(R.conclusions(r, format('de')), [
      '37\u00a0% der Tipper gaben während des Verbindens auf.',
      'Die meistbesuchten Stunden dieser Woche, nach Tippern: 12:00–13:00 und 17:00–18:00.',
      'Die Anwesenheitserkennung ist aus: Wer vorbeigeht oder vor dem Kiosk stehen bleibt, wird nicht gezählt.',
    ]);
  });

  it('say honestly that there is too little to say on a new kiosk', () => {
    assert.deepEqual(R.conclusions(report(), format('en')), [
      'Too few visitors today to say where people give up: a share is named once both of its counts reach 5.',
      'Too few passers-by this week to name the busiest hours.',
    ]);
  });

  it('name each cause of loss in its own words', () => {
    const en = format('en');
    const said = (c: FunnelCounts) => R.conclusions(report({ today: { day: '2026-03-01', counts: c } }), en)[0];
    assert.equal(said(counts({ tapped: 50, refused: { closed: 20 }, live: 30, endedWell: 30 })), '40% of taps were turned away before the call (age check, closed hours or out of order).');
    assert.equal(said(counts({ tapped: 50, failed: 10, live: 40, endedWell: 40 })), '20% of taps failed before the conversation began.');
    assert.equal(said(counts({ tapped: 50, live: 50, endedWell: 25, endedBadly: 25 })), '50% of conversations ended badly (an error, a stall or a forced hang-up).');
    assert.equal(said(counts({ noticed: 40, approached: 40, greeted: 10, tapped: 10, live: 10, endedWell: 10 })), '75% of those who stopped were not greeted.');
    assert.equal(said(counts({ greeted: 40, tapped: 10, live: 10, endedWell: 10 })), '75% of those greeted walked on without tapping.');
  });
});

describe('the tab\'s state (visitors.svelte.ts)', async () => {
  const { Visitors } = await import('../../../renderer/src/staff/visitors.svelte.ts');
  const { StaffCalls } = await import('../../../renderer/src/staff/calls.svelte.ts');
  const { FakeClock } = await import('../../helpers/fake-clock.ts');
  type Staff = import('../../../electron/contract.ts').KioskApi['staff'];
  type Res = import('../../../electron/contract.ts').Result<VisitorReport>;

  function visitorsAnswering(answers: Res[]) {
    const unauthorized: string[] = [];
    const calls = new StaffCalls({ staff: {} as Staff, clock: new FakeClock(), onUnauthorized: () => unauthorized.push('unauthorized') });
    const v = new Visitors(calls, async () => answers.shift()!);
    return { v, unauthorized };
  }

  it('loads the report, and forgets it when cleared', async () => {
    const r = report({ today: { day: '2026-03-01', counts: BUSY } });
    const { v } = visitorsAnswering([{ ok: true, value: r }]);
    assert.equal(v.report, null);
    assert.equal(await v.load(), null);
    assert.deepEqual(v.report, r);
    v.clear();
    assert.equal(v.report, null);
  });

  it('answers the error of a refused load, and the panel hears of an unauthorized one', async () => {
    const { v, unauthorized } = visitorsAnswering([{ ok: false, error: { code: 'unauthorized', message: 'Enter the PIN again.' } }]);
    assert.deepEqual(await v.load(), { code: 'unauthorized', message: 'Enter the PIN again.' });
    assert.equal(v.report, null);
    assert.deepEqual(unauthorized, ['unauthorized']);
  });

  it('reads in English until staff choose another language, for the report alone', async () => {
    const { v } = visitorsAnswering([]);
    assert.deepEqual([v.lang, v.dir, R.countText({ kind: 'fewer', than: 5 }, v.format)], ['en', 'ltr', 'fewer than 5']);
    v.lang = 'ar';
    assert.deepEqual([v.lang, v.dir, R.countText({ kind: 'fewer', than: 5 }, v.format)], ['ar', 'rtl', `أقل من ${new Intl.NumberFormat('ar').format(5)}`]);
    v.lang = 'xx' as never;
    assert.equal(v.lang, 'ar', 'a code that is not a kiosk language changes nothing');
    const { staffLocale } = await import('../../../renderer/src/i18n/locale.svelte.ts');
    assert.equal(staffLocale.lang, 'en', 'the rest of the panel stays in English');
    v.clear();
    assert.equal(v.lang, 'en', 'the panel closed: the next person starts in English');
  });
});
