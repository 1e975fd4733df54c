/**
 * The visitor funnel at the console: what the intake takes from a kiosk's status (`visitors`), how the
 * kiosks' days add up per group and for the fleet under the threshold, the CSV (formula-safe, thresholded)
 * and the /metrics series. Through the console's own entry points (FleetState.onStatus, the metrics'
 * render), with the statuses as the kiosk link publishes them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { emptyFunnelCounts, type FunnelCounts, type FunnelDay } from '../../../../electron/core/funnel.ts';
import { createConsoleMetrics } from '../../../../electron/fleet/console/metrics.ts';
import { FleetState } from '../../../../electron/fleet/console/state.ts';
import { VISITOR_STEPS, visitorsCsv, visitorsView, type KioskFunnel } from '../../../../electron/fleet/console/visitors.ts';
import { onlineStatus, T0 } from '../../../helpers/fleet-payloads.ts';

const DAY = '2026-11-24';
type Steps = Partial<Omit<FunnelCounts, 'refused'>> & { refused?: Partial<FunnelCounts['refused']> };
const funnel = (steps: Steps = {}, day = DAY): FunnelDay => {
  const base = emptyFunnelCounts();
  return { day, counts: { ...base, ...steps, refused: { ...base.refused, ...steps.refused } } };
};
const fleet = () => new FleetState({ now: () => T0 });
const series = (text: string, start: string) => text.split('\n').filter((l) => l.startsWith(start));

describe('the console reads a status\' visitors', () => {
  it('keeps a well-formed day as it came', () => {
    const state = fleet();
    const day = funnel({ noticed: 40, tapped: 12, live: 9, byLanguage: { en: { tapped: 8, live: 6 }, de: { tapped: 4, live: 3 } } });
    state.onStatus('k', onlineStatus({ visitors: day }), false);
    assert.deepEqual(state.funnels(), [{ kioskId: 'k', group: 'lobby', visitors: day }]);
    assert.equal(state.refusals.entries().length, 0);
  });

  it('drops a malformed day and counts it, and keeps the rest of that status', () => {
    const state = fleet();
    state.onStatus('k', onlineStatus({ visitors: funnel({ tapped: 3 }) }), false);
    state.onStatus('k', onlineStatus({ phase: 'live', visitors: funnel({ tapped: -1 }) }), false);
    assert.deepEqual(state.funnels(), [{ kioskId: 'k', group: 'lobby', visitors: null }]);
    assert.equal(state.row('k')!.phase, 'live', 'the status itself counted');
    assert.equal(state.row('k')!.refused, 1);
    assert.deepEqual(state.refusals.entries(), [{ topic: 'status', reason: 'negative', count: 1 }]);
  });

  it('refuses each kind of bad day with its reason: a fraction, JSON 1e999, a day that is no date, an unknown step', () => {
    const state = fleet();
    state.onStatus('k', onlineStatus({ visitors: funnel({ live: 1.5 }) }), false);
    state.onStatus('k', onlineStatus({ visitors: funnel({ live: 7 }) }).replace('"live":7', '"live":1e999'), false);
    state.onStatus('k', onlineStatus({ visitors: funnel({}, '24.11.2026') }), false);
    state.onStatus('k', onlineStatus({ visitors: { ...funnel(), counts: { ...funnel().counts, faces: 3 } } }), false);
    state.onStatus('k', onlineStatus({ visitors: funnel({ noticed: 10_000_001 }) }), false);
    assert.deepEqual(state.refusals.entries(), [
      { topic: 'status', reason: 'malformed', count: 3 },
      { topic: 'status', reason: 'not_finite', count: 1 },
      { topic: 'status', reason: 'too_large', count: 1 },
    ]);
    assert.equal(state.row('k')!.refused, 5);
    assert.deepEqual(state.funnels()[0]!.visitors, null);
  });

  it('refuses an oversized breakdown: 65 languages, a key of 65 characters, a key a spreadsheet would run', () => {
    const state = fleet();
    const languages = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`l${i}`, { tapped: 1, live: 1 }]));
    state.onStatus('k', onlineStatus({ visitors: funnel({ byLanguage: languages }) }), false);
    state.onStatus('k', onlineStatus({ visitors: funnel({ byAvatar: { ['a'.repeat(65)]: { tapped: 1, live: 0 } } }) }), false);
    state.onStatus('k', onlineStatus({ visitors: funnel({ byCallMode: { '=cmd|calc': { tapped: 1, live: 0 } } }) }), false);
    assert.deepEqual(state.refusals.entries(), [{ topic: 'status', reason: 'malformed', count: 3 }]);
    // 64 languages is within bounds.
    state.onStatus('k', onlineStatus({ visitors: funnel({ byLanguage: Object.fromEntries(Object.entries(languages).slice(0, 64)) }) }), false);
    assert.equal(Object.keys(state.funnels()[0]!.visitors!.counts.byLanguage).length, 64);
  });

  it('an older kiosk that sends none: no funnel, nothing refused; an offline status keeps the last day', () => {
    const state = fleet();
    state.onStatus('old', onlineStatus(), false);
    state.onStatus('k', onlineStatus({ visitors: funnel({ tapped: 6 }) }), false);
    state.onStatus('k', JSON.stringify({ online: false, kioskId: 'k', reason: 'connection lost' }), false);
    assert.deepEqual(state.funnels(), [
      { kioskId: 'old', group: 'lobby', visitors: null },
      { kioskId: 'k', group: 'lobby', visitors: funnel({ tapped: 6 }) },
    ]);
    assert.equal(state.refusals.entries().length, 0);
  });
});

/** The figure texts of a line, step by step. */
const texts = (l: { figures: Record<string, { text: string }> }) => VISITOR_STEPS.map((s) => l.figures[s]!.text);

describe('the fleet\'s funnel: per kiosk, per group, for the fleet, under the threshold', () => {
  const kiosks: KioskFunnel[] = [
    { kioskId: 'lobby-1', group: 'lobby', visitors: funnel({ noticed: 120, approached: 50, greeted: 40, tapped: 20, refused: { ageGate: 2, closed: 1 }, gaveUp: 6, failed: 0, live: 11, endedWell: 9, endedBadly: 2 }) },
    { kioskId: 'lobby-2', group: 'lobby', visitors: funnel({ noticed: 80, approached: 30, greeted: 30, tapped: 10, refused: { outOfOrder: 5 }, gaveUp: 0, failed: 0, live: 5, endedWell: 5 }) },
    { kioskId: 'shop-1', group: 'shop', visitors: funnel({ noticed: 60, approached: 20, greeted: 18, tapped: 8, gaveUp: 3, live: 5, endedWell: 5 }) },
    { kioskId: 'yesterday', group: 'shop', visitors: funnel({ tapped: 90, live: 90 }, '2026-11-23') },
    { kioskId: 'old', group: null, visitors: null },
  ];

  it('adds up only the kiosks of the latest day, names the others, and counts the silent ones', () => {
    const view = visitorsView(kiosks);
    assert.equal(view.day, DAY);
    assert.deepEqual(view.kiosks.map((k) => k.kioskId), ['lobby-1', 'lobby-2', 'shop-1']);
    assert.deepEqual(view.otherDays, [{ kioskId: 'yesterday', day: '2026-11-23' }]);
    assert.equal(view.silent, 1);
    assert.deepEqual(view.groups.map((g) => [g.group, g.kiosks]), [['lobby', 2], ['shop', 1]]);
    assert.equal(view.fleet.kiosks, 3);
  });

  it('shows a kiosk\'s count under 5 as "fewer than 5", and a total adds only the shown counts and says how many it left out', () => {
    const view = visitorsView(kiosks);
    assert.deepEqual(texts(view.kiosks[0]!), ['120', '50', '40', '20', 'fewer than 5', '6', 'fewer than 5', '11', '9', 'fewer than 5']);
    assert.deepEqual(texts(view.kiosks[1]!), ['80', '30', '30', '10', '5', 'fewer than 5', 'fewer than 5', '5', '5', 'fewer than 5']);
    assert.deepEqual(texts(view.groups[0]!), [
      '200', '80', '70', '30',
      'at least 5 (1 kiosk with fewer than 5 not added)',
      'at least 6 (1 kiosk with fewer than 5 not added)',
      'fewer than 5 at each of 2 kiosks',
      '16', '14',
      'fewer than 5 at each of 2 kiosks',
    ]);
    assert.deepEqual(texts(view.fleet), [
      '260', '100', '88', '38',
      'at least 5 (2 kiosks with fewer than 5 not added)',
      'at least 6 (2 kiosks with fewer than 5 not added)',
      'fewer than 5 at each of 3 kiosks',
      '21', '19',
      'fewer than 5 at each of 3 kiosks',
    ]);
    assert.deepEqual(view.kiosks[0]!.figures.refused, { value: null, leftOut: 0, text: 'fewer than 5' });
    assert.deepEqual(view.fleet.figures.gaveUp, { value: 6, leftOut: 2, text: 'at least 6 (2 kiosks with fewer than 5 not added)' });
  });

  it('gives the conversions step to step and the largest drop in a sentence, from shown figures only', () => {
    const view = visitorsView(kiosks);
    assert.deepEqual(view.fleet.conversions.map((c) => [c.from, c.to, c.percent]), [
      ['noticed', 'approached', 38],
      ['approached', 'greeted', 88],
      ['greeted', 'tapped', 43],
      ['tapped', 'live', 55],
      ['live', 'endedWell', 90],
    ]);
    assert.equal(view.fleet.largestDrop, '62 % of the passers-by noticed did not stop.');
    // lobby-1's refused and endedBadly are hidden: no drop is told from them.
    assert.deepEqual(view.kiosks[0]!.conversions.map((c) => c.percent), [42, 80, 50, 55, 82]);
    assert.equal(view.kiosks[0]!.largestDrop, '58 % of the passers-by noticed did not stop.');
    // A kiosk without presence detection: the drop is among the taps.
    const taps = visitorsView([{ kioskId: 'k', group: null, visitors: funnel({ tapped: 40, gaveUp: 15, refused: { closed: 5 }, failed: 0, live: 20, endedWell: 15, endedBadly: 5 }) }]);
    assert.equal(taps.fleet.largestDrop, '38 % of taps gave up while connecting.');
    assert.deepEqual(taps.fleet.conversions.map((c) => c.percent), [null, null, null, 50, 75]);
  });

  it('with no funnel at all: no day, no lines, nothing to say', () => {
    const view = visitorsView([{ kioskId: 'old', group: null, visitors: null }]);
    assert.deepEqual({ ...view, fleet: { ...view.fleet, figures: undefined } }, { day: null, threshold: 5, kiosks: [], groups: [], fleet: { kiosks: 0, figures: undefined, conversions: view.fleet.conversions, largestDrop: null }, otherDays: [], silent: 1 });
    assert.equal(visitorsCsv(view), 'day,scope,group,kiosk,noticed,stopped,greeted,tapped,refused before the call,gave up while connecting,failed before live,went live,ended well,ended badly,largest drop\r\n');
  });

  it('no total can give back a hidden count: every total is the sum of the figures shown for its kiosks (property)', () => {
    const count = fc.integer({ min: 0, max: 30 });
    const kiosk = fc.record({ group: fc.constantFrom('a', 'b', null), noticed: count, tapped: count, gaveUp: count, live: count, endedBadly: count, closed: count });
    fc.assert(
      fc.property(fc.array(kiosk, { minLength: 1, maxLength: 8 }), (specs) => {
        const view = visitorsView(specs.map((s, i) => ({ kioskId: `k${i}`, group: s.group, visitors: funnel({ noticed: s.noticed, tapped: s.tapped, gaveUp: s.gaveUp, live: s.live, endedBadly: s.endedBadly, refused: { closed: s.closed } }) })));
        for (const k of view.kiosks) for (const s of VISITOR_STEPS) {
          const f = k.figures[s];
          assert.ok(f.value === null ? f.text === 'fewer than 5' : f.value >= 5 && f.text === String(f.value), `${k.kioskId} ${s}: ${f.text}`);
        }
        for (const line of [...view.groups.map((g) => ({ ...g, members: view.kiosks.filter((k) => k.group === g.group) })), { ...view.fleet, members: view.kiosks }]) {
          for (const s of VISITOR_STEPS) {
            const shown = line.members.map((m) => m.figures[s].value).filter((v): v is number => v !== null);
            assert.equal(line.figures[s].value, shown.reduce((a, b) => a + b, 0));
            assert.equal(line.figures[s].leftOut, line.members.length - shown.length);
          }
        }
        // A percentage is worked out from shown figures only.
        for (const l of [...view.kiosks, ...view.groups, view.fleet]) for (const c of l.conversions) if (c.percent !== null) assert.ok(l.figures[c.from].value !== null && l.figures[c.to].value !== null && l.figures[c.from].leftOut === 0 && l.figures[c.to].leftOut === 0);
      }),
      { seed: 40, numRuns: 500 },
    );
  });
});

describe('the visitors CSV', () => {
  it('is thresholded as the page is, one row per kiosk, group (in their order) and the fleet, and defuses every cell a spreadsheet would run', () => {
    const view = visitorsView([
      { kioskId: '-2+3', group: '=HYPERLINK("http://evil.example","x")', visitors: funnel({ noticed: 12, approached: 3, tapped: 7, live: 7, endedWell: 7 }) },
      { kioskId: 'k-2', group: '@SUM(A1)', visitors: funnel({ tapped: 4 }) },
    ]);
    assert.equal(
      visitorsCsv(view),
      [
        'day,scope,group,kiosk,noticed,stopped,greeted,tapped,refused before the call,gave up while connecting,failed before live,went live,ended well,ended badly,largest drop',
        `${DAY},kiosk,'@SUM(A1),k-2,fewer than 5,fewer than 5,fewer than 5,fewer than 5,fewer than 5,fewer than 5,fewer than 5,fewer than 5,fewer than 5,fewer than 5,`,
        `${DAY},kiosk,"'=HYPERLINK(""http://evil.example"",""x"")",'-2+3,12,fewer than 5,fewer than 5,7,fewer than 5,fewer than 5,fewer than 5,7,7,fewer than 5,`,
        `${DAY},group,'@SUM(A1),,fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),`,
        `${DAY},group,"'=HYPERLINK(""http://evil.example"",""x"")",,12,fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),7,fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),fewer than 5 (1 kiosk),7,7,fewer than 5 (1 kiosk),`,
        `${DAY},fleet,,,at least 12 (1 kiosk with fewer than 5 not added),fewer than 5 at each of 2 kiosks,fewer than 5 at each of 2 kiosks,at least 7 (1 kiosk with fewer than 5 not added),fewer than 5 at each of 2 kiosks,fewer than 5 at each of 2 kiosks,fewer than 5 at each of 2 kiosks,at least 7 (1 kiosk with fewer than 5 not added),at least 7 (1 kiosk with fewer than 5 not added),fewer than 5 at each of 2 kiosks,`,
        '',
      ].join('\r\n'),
    );
  });
});

describe('the visitors in /metrics', () => {
  it('a series per kiosk and step only at or above the threshold, and the fleet\'s totals of those', async () => {
    const state = fleet();
    state.onStatus('a', onlineStatus({ kioskId: 'a', visitors: funnel({ noticed: 30, tapped: 9, live: 4 }) }), false);
    state.onStatus('b', onlineStatus({ kioskId: 'b', visitors: funnel({ noticed: 3, tapped: 6, live: 6, endedWell: 5 }) }), false);
    const text = await createConsoleMetrics(state, () => true).render();
    assert.deepEqual(series(text, 'avatar_fleet_kiosk_visitors{'), [
      'avatar_fleet_kiosk_visitors{kiosk="a",step="noticed"} 30',
      'avatar_fleet_kiosk_visitors{kiosk="a",step="tapped"} 9',
      'avatar_fleet_kiosk_visitors{kiosk="b",step="tapped"} 6',
      'avatar_fleet_kiosk_visitors{kiosk="b",step="live"} 6',
      'avatar_fleet_kiosk_visitors{kiosk="b",step="ended_well"} 5',
    ]);
    assert.deepEqual(series(text, 'avatar_fleet_visitors{'), [
      'avatar_fleet_visitors{step="noticed"} 30',
      'avatar_fleet_visitors{step="approached"} 0',
      'avatar_fleet_visitors{step="greeted"} 0',
      'avatar_fleet_visitors{step="tapped"} 15',
      'avatar_fleet_visitors{step="refused"} 0',
      'avatar_fleet_visitors{step="gave_up"} 0',
      'avatar_fleet_visitors{step="failed"} 0',
      'avatar_fleet_visitors{step="live"} 6',
      'avatar_fleet_visitors{step="ended_well"} 5',
      'avatar_fleet_visitors{step="ended_badly"} 0',
    ]);
  });
});
