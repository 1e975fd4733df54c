/**
 * Opening hours beyond the everyday: the label a person reads, ranges that touch, a range swallowed by the
 * spring clock change, a range the schema would refuse, and a venue closed for longer than the
 * look-ahead (the watch keeps looking, once a minute, and reports the next opening once it comes within
 * reach). Time is a FakeClock; nothing sleeps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TimerHandle } from '../../../electron/core/clock.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { localLabel, MAX_WAIT_MS, openingState, watchOpeningHours, type OpeningState } from '../../../electron/fleet/opening-hours.ts';
import { scheduleSchema, type Schedule } from '../../../electron/kiosk/fleet-config.ts';

const at = (iso: string) => Date.parse(iso);
const schedule = (s: Record<string, unknown>) => scheduleSchema.parse({ timeZone: 'Europe/Berlin', ...s });

describe('opening hours: labels and intervals', () => {
  it('labels an instant as weekday, day, month and a 24-hour time in the venue\'s zone', () => {
    assert.equal(localLabel(at('2026-11-22T23:05:00Z'), 'Europe/Berlin'), 'Mon 23 Nov, 00:05');
    assert.equal(localLabel(at('2026-11-23T08:00:00Z'), 'Europe/Berlin'), 'Mon 23 Nov, 09:00');
    assert.equal(localLabel(at('2026-11-23T21:30:00Z'), 'America/New_York'), 'Mon 23 Nov, 16:30');
  });

  it('ranges that touch are one opening: no closing at the seam', () => {
    const s = schedule({ weekly: { mon: ['09:00-12:00', '12:00-17:00'] } });
    assert.deepEqual(openingState(s, at('2026-11-23T09:00:00Z')), { open: true, nextChangeAtMs: at('2026-11-23T16:00:00Z'), nextOpenAtMs: null });
  });

  it('a range that lies wholly in the hour skipped by the spring change is no opening', () => {
    // 2026-03-29 in Berlin: 02:00 CET becomes 03:00 CEST, so 02:00-03:00 never happens that Sunday.
    const s = schedule({ weekly: { sun: ['02:00-03:00'], mon: ['09:00-17:00'] } });
    assert.deepEqual(openingState(s, at('2026-03-28T23:30:00Z')), { open: false, nextChangeAtMs: at('2026-03-30T07:00:00Z'), nextOpenAtMs: at('2026-03-30T07:00:00Z') });
  });

  it('a range the schema would refuse (end before start) is skipped, not a crash', () => {
    const unchecked: Schedule = { timeZone: 'Europe/Berlin', weekly: { mon: ['17:00-09:00', '10:00-12:00'] } };
    assert.deepEqual(openingState(unchecked, at('2026-11-23T09:30:00Z')), { open: true, nextChangeAtMs: at('2026-11-23T11:00:00Z'), nextOpenAtMs: null });
  });
});

describe('opening hours: the watch', () => {
  it('shows its current state', () => {
    const clock = new FakeClock(at('2026-11-23T10:00:00Z'));
    const watch = watchOpeningHours({ schedule: schedule({ weekly: { mon: ['09:00-12:00'] } }), clock, onChange: () => {} });
    assert.deepEqual(watch.state, { open: true, nextChangeAtMs: at('2026-11-23T11:00:00Z'), nextOpenAtMs: null });
    watch.dispose();
  });

  it('a venue closed beyond the look-ahead is looked at again each minute, and the next opening is reported once it comes within reach', async () => {
    // Open on Mondays only, and the next five Mondays are holidays: nothing within 35 days of Tuesday 24 Nov.
    const s = schedule({ weekly: { mon: ['09:00-17:00'] }, closedDates: ['2026-11-30', '2026-12-07', '2026-12-14', '2026-12-21', '2026-12-28'] });
    const clock = new FakeClock(at('2026-11-24T10:00:00Z'));
    const seen: OpeningState[] = [];
    const watch = watchOpeningHours({ schedule: s, clock, onChange: (st) => seen.push(st) });
    assert.deepEqual(seen, [{ open: false, nextChangeAtMs: null, nextOpenAtMs: null }]);
    assert.deepEqual(clock.pendingDelays(), [MAX_WAIT_MS]);
    await clock.advance(MAX_WAIT_MS);
    assert.equal(seen.length, 1, 'nothing changed: nothing reported');
    // Six days later Monday 4 January is 35 days ahead: still closed, but now with a next opening.
    clock.jump(6 * 86_400_000 - MAX_WAIT_MS);
    await clock.advance(MAX_WAIT_MS);
    const opening = at('2027-01-04T08:00:00Z');
    assert.deepEqual(seen.slice(1), [{ open: false, nextChangeAtMs: opening, nextOpenAtMs: opening }]);
    watch.dispose();
  });

  it('clears only the timers it set: a watch without a schedule, disposed (even twice), clears none', () => {
    class RecordingClock extends FakeClock {
      cleared: unknown[] = [];
      override clearTimeout(handle: TimerHandle): void {
        this.cleared.push(handle);
        super.clearTimeout(handle);
      }
    }
    const clock = new RecordingClock(at('2026-11-23T10:00:00Z'));
    const watch = watchOpeningHours({ schedule: undefined, clock, onChange: () => {} });
    assert.equal(clock.pendingCount, 0);
    watch.dispose();
    watch.dispose();
    assert.deepEqual(clock.cleared, []);
  });
});
