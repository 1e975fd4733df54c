import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { localParts, openingState, watchOpeningHours, zonedTimeToMs, type OpeningState } from '../../../electron/fleet/opening-hours.ts';
import { resolveConfig, unknownConfigKeys } from '../../../electron/kiosk/config.ts';
import { scheduleSchema, type Schedule } from '../../../electron/kiosk/fleet-config.ts';

const berlin: Schedule = scheduleSchema.parse({
  timeZone: 'Europe/Berlin',
  weekly: { mon: ['09:00-12:00', '13:00-18:00'], tue: ['09:00-18:00'], wed: ['09:00-18:00'], thu: ['09:00-18:00'], fri: ['09:00-24:00'], sat: ['00:00-02:00', '10:00-16:00'] },
  closedDates: ['2026-12-25'],
});
const at = (iso: string) => Date.parse(iso);

describe('opening hours', () => {
  it('converts venue wall-clock times to instants, summer and winter', () => {
    assert.equal(zonedTimeToMs(2026, 7, 6, 9 * 60, 'Europe/Berlin'), at('2026-07-06T07:00:00Z')); // CEST, +2
    assert.equal(zonedTimeToMs(2026, 1, 5, 9 * 60, 'Europe/Berlin'), at('2026-01-05T08:00:00Z')); // CET, +1
    assert.equal(zonedTimeToMs(2026, 1, 5, 9 * 60, 'America/New_York'), at('2026-01-05T14:00:00Z'));
    // 02:30 does not exist on 2026-03-29 in Berlin (clocks jump 02:00 → 03:00): the gap moves it on.
    assert.equal(zonedTimeToMs(2026, 3, 29, 2 * 60 + 30, 'Europe/Berlin'), at('2026-03-29T01:30:00Z'));
    assert.deepEqual(localParts(at('2026-07-06T07:00:00Z'), 'Europe/Berlin'), { year: 2026, month: 7, day: 6, hour: 9, minute: 0, second: 0 });
  });

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
});
