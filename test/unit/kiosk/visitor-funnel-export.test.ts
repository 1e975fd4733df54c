/**
 * The visitor funnel as it leaves the kiosk (kiosk/visitor-funnel-export.ts): the threshold at its edges,
 * the terminal text exactly, and a property test over random event sequences through the real counter and
 * store: nothing finer than an hour, no count under the threshold, no field beyond the funnel's own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KioskEvent, VisitorReport } from '../../../electron/contract.ts';
import { emptyFunnelCounts, REFUSAL_KINDS } from '../../../electron/core/funnel.ts';
import { funnelCountsSchema } from '../../../electron/core/funnel-schema.ts';
import { createVisitorFunnel } from '../../../electron/kiosk/visitor-funnel.ts';
import { exportFunnel, funnelText, largestDrop, showCount } from '../../../electron/kiosk/visitor-funnel-export.ts';
import { openVisitorFunnelStore } from '../../../electron/kiosk/visitor-funnel-store.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';

describe('the threshold', () => {
  it('shows 0 and counts from the threshold up exactly, 1 to threshold − 1 as "fewer than"', () => {
    assert.deepEqual([0, 1, 4, 5, 6, 1000].map((n) => showCount(n, 5)), [0, { lessThan: 5 }, { lessThan: 5 }, 5, 6, 1000]);
    assert.deepEqual([1, 9, 10].map((n) => showCount(n, 10)), [{ lessThan: 10 }, { lessThan: 10 }, 10]);
  });
});

function report(): VisitorReport {
  const today = emptyFunnelCounts();
  Object.assign(today, { tapped: 40, live: 25, endedWell: 20, endedBadly: 5, gaveUp: 12, failed: 3 });
  today.refused.closed = 2;
  today.byLanguage = { en: { tapped: 30, live: 20 }, de: { tapped: 10, live: 5 } };
  const before = emptyFunnelCounts();
  Object.assign(before, { tapped: 3, live: 1, endedWell: 1 });
  return {
    timeZone: 'Europe/Berlin',
    threshold: 5,
    today: { day: '2026-03-11', counts: today },
    hours: [{ hour: '2026-03-11T14', counts: today }],
    days: [
      { day: '2026-03-10', counts: before },
      { day: '2026-03-11', counts: today },
    ],
    counting: { presence: false },
  };
}

describe('the export', () => {
  it('thresholds every count, breakdowns included, and keeps the hours as hours', () => {
    const ex = exportFunnel(report());
    assert.deepEqual(ex.today.counts.refused, { ageGate: 0, closed: { lessThan: 5 }, outOfOrder: 0 });
    assert.deepEqual(ex.today.counts.byLanguage, { en: { tapped: 30, live: 20 }, de: { tapped: 10, live: 5 } });
    assert.deepEqual(ex.days[0]!.counts.tapped, { lessThan: 5 });
    assert.deepEqual(ex.hours.map((h) => h.hour), ['2026-03-11T14']);
  });

  it('names the largest drop only between steps with enough people', () => {
    const c = report().today.counts;
    // tapped 40 → live 25: 38 %; live 25 → ended well 20: 20 %.
    assert.deepEqual(largestDrop(c, 5, false), { from: 'tapped', to: 'went live', percent: 38 });
    assert.equal(largestDrop(report().days[0]!.counts, 5, false), null);
    // 10 taps and 2 conversations: "80 % of taps did not go live" would say exactly 2, a hidden count.
    const few = { ...emptyFunnelCounts(), tapped: 10, live: 2, endedWell: 2 };
    assert.equal(largestDrop(few, 5, false), null);
    // 10 taps, 7 live, 6 ended well: 3 and then 1 lost, both hidden, so no percentage may name them.
    assert.equal(largestDrop({ ...emptyFunnelCounts(), tapped: 10, live: 7, endedWell: 6 }, 5, false), null);
  });

  it('prints today, the last 7 days and the largest drop for a terminal', () => {
    assert.equal(
      funnelText(report()),
      [
        'Visitors (counts only; times in Europe/Berlin; counts under 5 are shown as "fewer than 5")',
        'Presence detection is off: passers-by are not counted, only taps and calls.',
        '',
        'Today (2026-03-11)',
        '  Tapped                     40',
        '  Refused: age gate          0',
        '  Refused: closed            fewer than 5',
        '  Refused: out of order      0',
        '  Gave up while connecting   12',
        '  Failed before live         fewer than 5',
        '  Went live                  25',
        '  Ended well                 20',
        '  Ended badly                5',
        '',
        'The last 7 days',
        '  Day                  Tapped      Went live     Ended well',
        '  2026-03-10     fewer than 5   fewer than 5   fewer than 5',
        '  2026-03-11               40             25             20',
        '',
        'Largest drop over the last 7 days: 40 % of those who tapped never went live.',
        '',
      ].join('\n'),
    );
  });
});

describe('the terminal text with presence counted, and with little or nothing counted', () => {
  const counts = (over: Record<string, number>) => Object.assign(emptyFunnelCounts(), over);
  const day = (d: number, over: Record<string, number>) => ({ day: `2026-03-${String(d).padStart(2, '0')}`, counts: counts(over) });

  it('passers-by first when presence is counted; the largest drop may be between them; only the last 7 days', () => {
    const today = counts({ noticed: 100, approached: 30, greeted: 25, tapped: 24, live: 20, endedWell: 18, endedBadly: 2 });
    const old = counts({ noticed: 9, approached: 9, tapped: 1000, live: 0 });
    const r: VisitorReport = {
      timeZone: 'UTC',
      threshold: 5,
      today: { day: '2026-03-11', counts: today },
      hours: [],
      days: [{ day: '2026-03-03', counts: old }, ...[4, 5, 6, 7, 8, 9].map((d) => day(d, { noticed: 10, approached: 5, tapped: 5, live: 5, endedWell: 5 })), { day: '2026-03-11', counts: today }],
      counting: { presence: true },
    };
    const text = funnelText(r, 'never said when presence is on');
    assert.equal(text.includes('never said'), false);
    const lines = text.split('\n');
    assert.deepEqual(lines.slice(2, 7), ['Today (2026-03-11)', '  Noticed                    100', '  Stopped in front           30', '  Greeted                    25', '  Tapped                     24']);
    assert.equal(lines.includes('  2026-03-03               1000              0              0'), false, 'eight days back is not in the last 7');
    assert.equal(lines.filter((l) => /^  2026-03-\d\d /.test(l)).length, 7);
    // Over the last 7 days: noticed 160, stopped 60 (62 % lost), tapped 54, live 50, ended well 48.
    assert.equal(lines.at(-2), 'Largest drop over the last 7 days: 63 % of those who noticed never stopped in front.');
  });

  it('nothing counted yet, and too few to name a drop', () => {
    const r: VisitorReport = { timeZone: 'UTC', threshold: 5, today: { day: '2026-03-11', counts: emptyFunnelCounts() }, hours: [], days: [], counting: { presence: false } };
    const text = funnelText(r, 'Custom presence line.');
    assert.equal(
      text,
      [
        'Visitors (counts only; times in UTC; counts under 5 are shown as "fewer than 5")',
        'Custom presence line.',
        '',
        'Today (2026-03-11)',
        '  Tapped                     0',
        '  Refused: age gate          0',
        '  Refused: closed            0',
        '  Refused: out of order      0',
        '  Gave up while connecting   0',
        '  Failed before live         0',
        '  Went live                  0',
        '  Ended well                 0',
        '  Ended badly                0',
        '',
        'The last 7 days',
        '  Nothing counted yet.',
        '',
        'Largest drop: too few visitors to say yet.',
        '',
      ].join('\n'),
    );
  });

  it('the drop over a week adds the days up step by step', () => {
    const r: VisitorReport = {
      timeZone: 'UTC',
      threshold: 5,
      today: { day: '2026-03-11', counts: emptyFunnelCounts() },
      hours: [],
      days: [day(10, { tapped: 6, live: 5, endedWell: 5 }), day(11, { tapped: 14, live: 5, endedWell: 5 })],
      counting: { presence: false },
    };
    // 20 taps, 10 live: 50 %; 10 live, 10 ended well: 0 %.
    assert.match(funnelText(r), /Largest drop over the last 7 days: 50 % of those who tapped never went live\.\n$/);
  });

  it('the presence steps count in the drop only when presence is counted', () => {
    const c = counts({ noticed: 100, approached: 10, tapped: 10, live: 10, endedWell: 10 });
    assert.deepEqual(largestDrop(c, 5, true), { from: 'noticed', to: 'stopped in front', percent: 90 });
    assert.deepEqual(largestDrop(c, 5, false), { from: 'tapped', to: 'went live', percent: 0 }, 'the first of equal drops');
    assert.deepEqual(largestDrop(counts({ noticed: 10, approached: 10, tapped: 5, live: 5, endedWell: 5 }), 5, true), { from: 'stopped in front', to: 'tapped', percent: 50 });
  });
});

// --- the property test ----------------------------------------------------------------------------------

type Op =
  | { kind: 'step'; step: 'noticed' | 'approached' | 'greeted' }
  | { kind: 'tap'; language: string; callMode: string; avatarId: string }
  | { kind: 'refused'; refusal: (typeof REFUSAL_KINDS)[number] }
  | { kind: 'live' }
  | { kind: 'cause'; cause: string }
  | { kind: 'end'; phase: 'ended' | 'failed' }
  | { kind: 'wait'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('step' as const), step: fc.constantFrom('noticed' as const, 'approached' as const, 'greeted' as const) }),
  fc.record({ kind: fc.constant('tap' as const), language: fc.constantFrom('en', 'de', 'zh-Hans', 'x y', ''), callMode: fc.constantFrom('audio', 'video'), avatarId: fc.constantFrom('kim', 'a.b-c_1', 'ünicode', 'x'.repeat(80)) }),
  fc.record({ kind: fc.constant('refused' as const), refusal: fc.constantFrom(...REFUSAL_KINDS) }),
  fc.record({ kind: fc.constant('live' as const) }),
  fc.record({ kind: fc.constant('cause' as const), cause: fc.constantFrom('visitor', 'idle', 'media_stalled', 'operator', 'max_call') }),
  fc.record({ kind: fc.constant('end' as const), phase: fc.constantFrom('ended' as const, 'failed' as const) }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.oneof(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 3 * 86_400_000 }), fc.integer({ min: 0, max: 120 * 86_400_000 })) }),
);

const COUNT_KEYS = Object.keys(emptyFunnelCounts()).sort();
const HOUR = /^\d{4}-\d{2}-\d{2}T\d{2}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Every number in an exported value, with where it is. */
function numbers(value: unknown, path = ''): Array<[string, number]> {
  if (typeof value === 'number') return [[path, value]];
  if (typeof value !== 'object' || value === null) return [];
  if ('lessThan' in value) return [];
  return Object.entries(value).flatMap(([k, v]) => numbers(v, `${path}.${k}`));
}

describe('whatever the visitors do (property)', () => {
  it('exports nothing finer than an hour, no count under the threshold, and only the funnel’s fields', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 120 }), fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe'), fc.integer({ min: 2, max: 10 }), (ops, timeZone, threshold) => {
        const clock = new FakeClock(Date.UTC(2026, 2, 1));
        const store = openVisitorFunnelStore({ timeZone, clock });
        const funnel = createVisitorFunnel({ store, clock, presence: () => true, threshold });
        let liveId = 0;
        const state = (s: unknown) => funnel.onEvent({ type: 'state', state: s, previous: 'idle' } as KioskEvent);
        for (const op of ops) {
          if (op.kind === 'step') funnel.step(op.step);
          else if (op.kind === 'tap') {
            liveId += 1;
            funnel.tap(op);
            state({ phase: 'connecting', liveId: `L${liveId}`, attempt: 1 });
          } else if (op.kind === 'refused') funnel.refused(op.refusal);
          else if (op.kind === 'live') state({ phase: 'live', liveId: `L${liveId}`, sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
          else if (op.kind === 'cause') funnel.noteCause(op.cause, null);
          else if (op.kind === 'end') {
            if (op.phase === 'ended') state({ phase: 'ended', liveId: `L${liveId}`, summary: null });
            else state({ phase: 'failed', liveId: `L${liveId}`, error: { code: 'network', message: 'x' }, summary: null });
          } else clock.jump(op.ms);
        }
        const r = funnel.report();
        // The counts themselves keep to the shared schema (its bounds, no extra field, breakdown keys safe).
        for (const b of [r.today, ...r.hours, ...r.days]) funnelCountsSchema.parse(b.counts);
        const ex = exportFunnel(r);
        assert.deepEqual(Object.keys(ex).sort(), ['days', 'hours', 'threshold', 'timeZone', 'today']);
        assert.ok(ex.hours.every((h) => HOUR.test(h.hour) && Object.keys(h).sort().join() === 'counts,hour'));
        assert.ok(ex.days.every((d) => DAY.test(d.day) && Object.keys(d).sort().join() === 'counts,day'));
        assert.ok(DAY.test(ex.today.day));
        for (const b of [ex.today, ...ex.hours, ...ex.days]) {
          assert.deepEqual(Object.keys(b.counts).sort(), COUNT_KEYS);
          for (const [where, n] of numbers(b.counts)) assert.ok(n === 0 || n >= threshold, `${where} = ${n} is under the threshold ${threshold}`);
          for (const v of JSON.stringify(b.counts).match(/"lessThan":\d+/g) ?? []) assert.equal(v, `"lessThan":${threshold}`);
        }
        // Nothing in it that reads as a time finer than the hour.
        assert.doesNotMatch(JSON.stringify(ex), /T\d{2}:\d{2}|\d{10,}/);
        // The store keeps only hour and day buckets.
        assert.ok([...store.hours.keys()].every((k) => HOUR.test(k)) && [...store.days.keys()].every((k) => DAY.test(k)));
      }),
      { seed: 20_260_311, numRuns: 300 },
    );
  });
});
