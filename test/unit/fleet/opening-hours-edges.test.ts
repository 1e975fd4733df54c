/**
 * Opening hours at their edges: the autumn hour that happens twice, days listed out of order, closed
 * dates with one-digit months, the look-ahead window, and the watch's timer (exact, forced, disposed).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { openingIntervals, openingState, watchOpeningHours, zonedTimeToMs, type OpeningState } from '../../../electron/fleet/opening-hours.ts';
import { scheduleSchema } from '../../../electron/kiosk/fleet-config.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const schedule = (s: Record<string, unknown>) => scheduleSchema.parse({ timeZone: 'Europe/Berlin', ...s });

describe('opening hours at the edges', () => {
  it('a wall-clock time that happens twice (autumn change) is its first occurrence', () => {
    // 2026-10-25 in Berlin: 03:00 CEST becomes 02:00 CET, so 02:30 happens at 00:30Z and again at 01:30Z.
    assert.equal(iso(zonedTimeToMs(2026, 10, 25, 2 * 60 + 30, 'Europe/Berlin')), '2026-10-25T00:30:00.000Z');
    // The same in New York (2026-11-01, 02:00 EDT becomes 01:00 EST): 01:30 EDT is 05:30Z.
    assert.equal(iso(zonedTimeToMs(2026, 11, 1, 90, 'America/New_York')), '2026-11-01T05:30:00.000Z');
    // And a skipped time (spring change) is moved on by the gap: 02:30 on 2026-03-08 in New York is 03:30 EDT.
    assert.equal(iso(zonedTimeToMs(2026, 3, 8, 150, 'America/New_York')), '2026-03-08T07:30:00.000Z');
  });

  it('ranges written out of order are still each an opening', () => {
    const s = schedule({ weekly: { mon: ['13:00-18:00', '09:00-12:00'] } });
    assert.deepEqual(openingState(s, at('2026-11-23T09:00:00Z')), { open: true, nextChangeAtMs: at('2026-11-23T11:00:00Z'), nextOpenAtMs: null });
  });

  it('a closed date with a one-digit month and day closes that day', () => {
    const s = schedule({ weekly: { mon: ['09:00-18:00'] }, closedDates: ['2026-03-02'] });
    assert.equal(openingState(s, at('2026-03-02T10:00:00Z')).open, false);
    assert.equal(openingState(s, at('2026-03-09T10:00:00Z')).open, true);
  });

  it('covers the local day before and the days ahead up to the one asked for', () => {
    const s = schedule({ weekly: { sun: ['20:00-22:00'], mon: ['09:00-12:00'], tue: ['09:00-12:00'] } });
    const monday = at('2026-11-23T10:00:00Z');
    assert.deepEqual(openingIntervals(s, monday, 0).map(([a, b]) => [iso(a), iso(b)]), [
      ['2026-11-22T19:00:00.000Z', '2026-11-22T21:00:00.000Z'],
      ['2026-11-23T08:00:00.000Z', '2026-11-23T11:00:00.000Z'],
    ]);
    assert.equal(openingIntervals(s, monday, 1).length, 3);
  });

  describe('the watch', () => {
    const s = schedule({ weekly: { mon: ['09:00-12:00'] } });

    it('reports the closing at the minute it happens, not up to a minute late', async () => {
      const clock = new FakeClock(at('2026-11-23T10:59:30Z')); // Monday 11:59:30 in Berlin
      const seen: OpeningState[] = [];
      const watch = watchOpeningHours({ schedule: s, clock, onChange: (st) => seen.push(st) });
      await clock.advance(29_999);
      assert.deepEqual(seen.map((st) => st.open), [true]);
      await clock.advance(1);
      assert.deepEqual(seen.map((st) => st.open), [true, false]);
      watch.dispose();
    });

    it('never waits more than a minute, so a clock that jumps is caught up with', async () => {
      const clock = new FakeClock(at('2026-11-23T07:00:00Z')); // 08:00, opens at 09:00
      const seen: OpeningState[] = [];
      const watch = watchOpeningHours({ schedule: s, clock, onChange: (st) => seen.push(st) });
      assert.deepEqual(clock.pendingDelays(), [60_000]);
      clock.jump(3_600_000); // suspend/NTP: an hour passes without timers running
      await clock.advance(60_000);
      assert.deepEqual(seen.map((st) => st.open), [false, true]);
      watch.dispose();
    });

    it('reports a new schedule at once, even when open or closed stays the same', () => {
      const clock = new FakeClock(at('2026-11-23T10:00:00Z'));
      const seen: OpeningState[] = [];
      const watch = watchOpeningHours({ schedule: s, clock, onChange: (st) => seen.push(st) });
      watch.setSchedule(s);
      assert.equal(seen.length, 2);
      watch.dispose();
    });

    it('leaves no timer once disposed, and a later schedule arms none', () => {
      const clock = new FakeClock(at('2026-11-23T10:00:00Z'));
      const watch = watchOpeningHours({ schedule: s, clock, onChange: () => {} });
      assert.equal(clock.pendingCount, 1);
      watch.dispose();
      assert.equal(clock.pendingCount, 0);
      watch.setSchedule(s);
      assert.equal(clock.pendingCount, 0);
    });
  });
});
