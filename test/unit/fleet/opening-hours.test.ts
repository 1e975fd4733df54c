/**
 * Opening hours (opening-hours.ts): a venue's wall-clock times as instants (through both clock changes),
 * whether the kiosk is open at an instant and when that next changes (ranges in any order, ranges that meet
 * at midnight, closed dates, daylight saving), the intervals it looks at, the schedule checks, and the watch
 * (exact to the minute, never waiting more than a minute, silent once disposed). Time is a FakeClock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { localParts, openingIntervals, openingState, watchOpeningHours, zonedTimeToMs, type OpeningState } from '../../../electron/fleet/opening-hours.ts';
import { resolveConfig, unknownConfigKeys } from '../../../electron/kiosk/config.ts';
import { scheduleSchema, type Schedule } from '../../../electron/kiosk/fleet-config.ts';

const berlin: Schedule = scheduleSchema.parse({
  timeZone: 'Europe/Berlin',
  weekly: { mon: ['09:00-12:00', '13:00-18:00'], tue: ['09:00-18:00'], wed: ['09:00-18:00'], thu: ['09:00-18:00'], fri: ['09:00-24:00'], sat: ['00:00-02:00', '10:00-16:00'] },
  closedDates: ['2026-12-25'],
});
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const schedule = (s: Record<string, unknown>) => scheduleSchema.parse({ timeZone: 'Europe/Berlin', ...s });

describe('opening hours', () => {
  describe('venue wall-clock times as instants', () => {
    it('converts venue wall-clock times to instants, summer and winter', () => {
      assert.equal(zonedTimeToMs(2026, 7, 6, 9 * 60, 'Europe/Berlin'), at('2026-07-06T07:00:00Z')); // CEST, +2
      assert.equal(zonedTimeToMs(2026, 1, 5, 9 * 60, 'Europe/Berlin'), at('2026-01-05T08:00:00Z')); // CET, +1
      assert.equal(zonedTimeToMs(2026, 1, 5, 9 * 60, 'America/New_York'), at('2026-01-05T14:00:00Z'));
      // 02:30 does not exist on 2026-03-29 in Berlin (clocks jump 02:00 → 03:00): the gap moves it on.
      assert.equal(zonedTimeToMs(2026, 3, 29, 2 * 60 + 30, 'Europe/Berlin'), at('2026-03-29T01:30:00Z'));
      assert.deepEqual(localParts(at('2026-07-06T07:00:00Z'), 'Europe/Berlin'), { year: 2026, month: 7, day: 6, hour: 9, minute: 0, second: 0 });
    });

    it('a wall-clock time that happens twice (autumn change) is its first occurrence', () => {
      // 2026-10-25 in Berlin: 03:00 CEST becomes 02:00 CET, so 02:30 happens at 00:30Z and again at 01:30Z.
      assert.equal(iso(zonedTimeToMs(2026, 10, 25, 2 * 60 + 30, 'Europe/Berlin')), '2026-10-25T00:30:00.000Z');
      // The same in New York (2026-11-01, 02:00 EDT becomes 01:00 EST): 01:30 EDT is 05:30Z.
      assert.equal(iso(zonedTimeToMs(2026, 11, 1, 90, 'America/New_York')), '2026-11-01T05:30:00.000Z');
      // And a skipped time (spring change) is moved on by the gap: 02:30 on 2026-03-08 in New York is 03:30 EDT.
      assert.equal(iso(zonedTimeToMs(2026, 3, 8, 150, 'America/New_York')), '2026-03-08T07:30:00.000Z');
    });
  });

  describe('open or closed, and when that changes', () => {
    it('is open inside a range and says when it closes', () => {
      // Monday 2026-11-23 10:00 Berlin (CET) = 09:00Z
      assert.deepEqual(openingState(berlin, at('2026-11-23T09:00:00Z')), { open: true, nextChangeAtMs: at('2026-11-23T11:00:00Z'), nextOpenAtMs: null });
    });

    it('is closed over lunch and names the next opening', () => {
      assert.deepEqual(openingState(berlin, at('2026-11-23T11:30:00Z')), { open: false, nextChangeAtMs: at('2026-11-23T12:00:00Z'), nextOpenAtMs: at('2026-11-23T12:00:00Z') });
    });

    it('treats a range ending at 24:00 that meets the next day as one opening (Friday into Saturday night)', () => {
      // Friday 2026-11-27 23:00 Berlin: open until Saturday 02:00.
      assert.deepEqual(openingState(berlin, at('2026-11-27T22:00:00Z')), { open: true, nextChangeAtMs: at('2026-11-28T01:00:00Z'), nextOpenAtMs: null });
    });

    it('skips a day with no hours and a closed date', () => {
      // Saturday 17:00 → Sunday closed → Monday 09:00.
      assert.deepEqual(openingState(berlin, at('2026-11-28T16:00:00Z')).nextOpenAtMs, at('2026-11-30T08:00:00Z'));
      // Thursday 2026-12-24 after 18:00 → Friday 25th is a closed date → Saturday 26th 00:00.
      assert.equal(openingState(berlin, at('2026-12-24T18:00:00Z')).nextOpenAtMs, at('2026-12-25T23:00:00Z'));
      assert.equal(openingState(berlin, at('2026-12-25T10:00:00Z')).open, false);
    });

    it('is always open with no schedule, and never opens with an empty week', () => {
      assert.deepEqual(openingState(undefined, 0), { open: true, nextChangeAtMs: null, nextOpenAtMs: null });
      const never = scheduleSchema.parse({ timeZone: 'UTC', weekly: {} });
      assert.deepEqual(openingState(never, at('2026-11-23T10:00:00Z')), { open: false, nextChangeAtMs: null, nextOpenAtMs: null });
    });

    it('follows the daylight-saving change: the same 09:00 opening is an hour earlier in UTC after it', () => {
      const daily = scheduleSchema.parse({ timeZone: 'Europe/Berlin', weekly: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, ['09:00-17:00']])) });
      assert.equal(openingState(daily, at('2026-03-28T20:00:00Z')).nextOpenAtMs, at('2026-03-29T07:00:00Z'));
      assert.equal(openingState(daily, at('2026-03-27T20:00:00Z')).nextOpenAtMs, at('2026-03-28T08:00:00Z'));
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
  });

  describe('the intervals it looks at', () => {
    it('covers the local day before and the days ahead up to the one asked for', () => {
      const s = schedule({ weekly: { sun: ['20:00-22:00'], mon: ['09:00-12:00'], tue: ['09:00-12:00'] } });
      const monday = at('2026-11-23T10:00:00Z');
      assert.deepEqual(openingIntervals(s, monday, 0).map(([a, b]) => [iso(a), iso(b)]), [
        ['2026-11-22T19:00:00.000Z', '2026-11-22T21:00:00.000Z'],
        ['2026-11-23T08:00:00.000Z', '2026-11-23T11:00:00.000Z'],
      ]);
      assert.equal(openingIntervals(s, monday, 1).length, 3);
    });
  });

  describe('schedule checks', () => {
    it('rejects bad schedules with a human message naming the field', () => {
      const bad = (schedule: unknown) => {
        try {
          resolveConfig({ schedule }, {}, { readText: () => 'p' });
          return 'accepted';
        } catch (error) {
          return (error as Error).message;
        }
      };
      assert.match(bad({ timeZone: 'Mars/Olympus', weekly: {} }), /"schedule\.timeZone".*"Mars\/Olympus" is not a known time zone/);
      assert.match(bad({ timeZone: 'UTC', weekly: { mon: ['18:00-09:00'] } }), /"schedule\.weekly\.mon\.0".*"18:00-09:00" is not an opening range/);
      // A key this version does not know is never fatal (a newer version may have written it): it is left out
      // and named for staff as unknown, so a mistyped day shows on the Status tab.
      assert.equal(bad({ timeZone: 'UTC', weekly: { funday: ['09:00-10:00'] } }), 'accepted');
      assert.deepEqual(unknownConfigKeys({ schedule: { timeZone: 'UTC', weekly: { funday: ['09:00-10:00'] } } }), ['schedule.weekly.funday']);
      assert.match(bad({ timeZone: 'UTC', weekly: {}, closedDates: ['25.12.2026'] }), /"schedule\.closedDates\.0".*2026-12-25/);
      assert.equal(bad({ timeZone: 'UTC', weekly: { mon: ['00:00-24:00'] } }), 'accepted');
    });
  });

  describe('the watch', () => {
    const s = schedule({ weekly: { mon: ['09:00-12:00'] } });

    it('the watch reports each opening and closing on the injected clock', async () => {
      const clock = new FakeClock(at('2026-11-23T10:55:00Z')); // Monday 11:55 Berlin, open until 12:00
      const seen: OpeningState[] = [];
      const watch = watchOpeningHours({ schedule: berlin, clock, onChange: (s) => seen.push(s) });
      assert.deepEqual(seen.map((s) => s.open), [true]);
      await clock.advance(5 * 60_000);
      assert.deepEqual(seen.map((s) => s.open), [true, false]);
      assert.equal(seen[1]!.nextOpenAtMs, at('2026-11-23T12:00:00Z'));
      await clock.advance(60 * 60_000);
      assert.deepEqual(seen.map((s) => s.open), [true, false, true]);
      watch.setSchedule(undefined);
      assert.deepEqual(seen.at(-1), { open: true, nextChangeAtMs: null, nextOpenAtMs: null });
      assert.equal(clock.pendingCount, 0);
      watch.dispose();
    });

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
