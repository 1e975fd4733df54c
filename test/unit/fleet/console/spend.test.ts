/**
 * The console's spend book (spend.ts): rows per kiosk, day and avatar from the calls received; a kiosk's
 * own day counter compared with the calls received in the same hours, the difference shown as
 * "(not received)"; demo calls apart and never compared; a snapshot that restores the same rows; the
 * bounds (rows KEEP_SPEND_DAYS days, counters and slots KEEP_COUNT_DAYS).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BEFORE_RECORD, DAY_MS, KEEP_COUNT_DAYS, KEEP_SPEND_DAYS, NOT_RECEIVED, SLOT_MS, SpendBook, type DayCount } from '../../../../electron/fleet/console/spend.ts';

const at = (iso: string) => Date.parse(iso);
/** When the console began keeping count, well before the days below unless a test says otherwise. */
const BEGAN = Date.parse('2026-08-01T00:00:00Z');
/** A kiosk's UTC day as its status' `today` describes it. */
const utcDay = (day: string, sessions: number, credits: number, queued = 0): DayCount => ({ day, fromMs: at(`${day}T00:00:00Z`), toMs: at(`${day}T00:00:00Z`) + DAY_MS, sessions, credits, queued });

describe('SpendBook', () => {
  it('adds each call to its kiosk, UTC day and avatar, in day, kiosk and avatar order', () => {
    const book = new SpendBook(BEGAN);
    book.addCall('k-2', at('2026-11-24T10:00:00Z'), 'max', 3);
    book.addCall('k-1', at('2026-11-24T23:59:59Z'), 'ava', 2);
    book.addCall('k-1', at('2026-11-23T08:00:00Z'), 'ava', 1.5);
    book.addCall('k-1', at('2026-11-24T09:00:00Z'), 'ava', 2);
    assert.deepEqual(book.rows(), [
      { kioskId: 'k-1', day: '2026-11-23', avatar: 'ava', sessions: 1, credits: 1.5, demo: false },
      { kioskId: 'k-1', day: '2026-11-24', avatar: 'ava', sessions: 2, credits: 4, demo: false },
      { kioskId: 'k-2', day: '2026-11-24', avatar: 'max', sessions: 1, credits: 3, demo: false },
    ]);
  });

  it("shows what a kiosk's day counter holds beyond the calls received as one \"(not received)\" row of its day", () => {
    const book = new SpendBook(BEGAN);
    book.addCall('k', at('2026-11-24T09:00:00Z'), 'ava', 2);
    assert.equal(book.dayCount('k', utcDay('2026-11-24', 3, 7)), true);
    assert.equal(book.dayCount('k', utcDay('2026-11-24', 3, 7)), false, 'the same counter again is no change');
    assert.deepEqual(book.rows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: NOT_RECEIVED, sessions: 2, credits: 5, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 2, demo: false },
    ]);
    // The missing events arrive after all: the row goes.
    book.addCall('k', at('2026-11-24T09:30:00Z'), 'ava', 2.5);
    book.addCall('k', at('2026-11-24T09:45:00Z'), 'max', 2.5);
    assert.deepEqual(book.rows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 2, credits: 4.5, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'max', sessions: 1, credits: 2.5, demo: false },
    ]);
  });

  it("labels the difference of a kiosk-day that began before the console kept count apart: it cannot know those calls never came", () => {
    // The console (or its data folder) started at 09:00 on the 24th; the kiosk had 2 calls before.
    const book = new SpendBook(at('2026-11-24T09:00:00Z'));
    book.addCall('k', at('2026-11-24T09:30:00Z'), 'ava', 2);
    book.dayCount('k', utcDay('2026-11-24', 3, 9));
    book.dayCount('k', utcDay('2026-11-25', 1, 2));
    assert.deepEqual(book.rows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: BEFORE_RECORD, sessions: 2, credits: 7, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 2, demo: false },
      { kioskId: 'k', day: '2026-11-25', avatar: NOT_RECEIVED, sessions: 1, credits: 2, demo: false },
    ]);
    // Pruned, the counter's difference is kept under the same label.
    book.prune(at('2026-11-28T00:00:00Z'));
    assert.deepEqual(book.rows().map((r) => [r.day, r.avatar, r.sessions]), [['2026-11-24', BEFORE_RECORD, 2], ['2026-11-24', 'ava', 1], ['2026-11-25', NOT_RECEIVED, 1]]);
  });

  it('compares nothing while events still wait in the kiosk\'s queue: they are on their way', () => {
    const book = new SpendBook(BEGAN);
    book.dayCount('k', utcDay('2026-11-24', 2, 4, 2));
    assert.deepEqual(book.rows(), []);
    book.dayCount('k', utcDay('2026-11-24', 2, 4, 0));
    assert.deepEqual(book.rows(), [{ kioskId: 'k', day: '2026-11-24', avatar: NOT_RECEIVED, sessions: 2, credits: 4, demo: false }]);
  });

  it("compares by the kiosk's own day: a call before its local midnight is yesterday's there, whatever its UTC day", () => {
    const book = new SpendBook(BEGAN);
    // A kiosk at UTC+5:45 (a midnight at a quarter hour): its 2026-11-24 runs from 18:15 UTC the day before.
    const from = at('2026-11-23T18:15:00Z');
    book.addCall('k', at('2026-11-23T18:14:00Z'), 'ava', 1); // the 23rd there
    book.addCall('k', at('2026-11-23T18:16:00Z'), 'ava', 2); // the 24th there
    book.dayCount('k', { day: '2026-11-24', fromMs: from, toMs: from + DAY_MS, sessions: 1, credits: 2, queued: 0 });
    assert.deepEqual(book.rows(), [{ kioskId: 'k', day: '2026-11-23', avatar: 'ava', sessions: 2, credits: 3, demo: false }], 'its counter matches the one call of its day');
    assert.equal(from % SLOT_MS, 0, 'a quarter-hour midnight falls on a slot edge');
  });

  it('keeps demo calls in rows of their own and never counts them against the counter (which holds real calls only)', () => {
    const book = new SpendBook(BEGAN);
    book.addCall('k', at('2026-11-24T09:00:00Z'), 'ava', 3, true);
    book.addCall('k', at('2026-11-24T09:05:00Z'), 'ava', 2);
    // The kiosk counted 2 real calls; only 1 real event came. The demo call must not hide the missing one.
    book.dayCount('k', utcDay('2026-11-24', 2, 4));
    assert.deepEqual(book.rows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: NOT_RECEIVED, sessions: 1, credits: 2, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 2, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 3, demo: true },
    ]);
    // A demo fleet: every call is demo, the counter says 0 real calls: no "(not received)".
    const demo = new SpendBook(BEGAN);
    demo.addCall('d', at('2026-11-24T09:00:00Z'), 'ava', 3, true);
    demo.dayCount('d', utcDay('2026-11-24', 0, 0));
    assert.deepEqual(demo.rows(), [{ kioskId: 'd', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 3, demo: true }]);
  });

  it('a snapshot restores the same rows, slots and counters into a new book', () => {
    const book = new SpendBook(BEGAN);
    book.addCall('k', at('2026-11-24T09:00:00Z'), 'ava', 2);
    book.addCall('k', at('2026-11-24T09:00:00Z'), 'ava', 1, true);
    book.dayCount('k', utcDay('2026-11-24', 2, 5));
    const snapshot = book.snapshot();
    assert.deepEqual(snapshot.slots, [['k', at('2026-11-24T09:00:00Z') / SLOT_MS, 1, 2]]);
    const again = new SpendBook(BEGAN);
    again.restore(JSON.parse(JSON.stringify(snapshot)));
    assert.deepEqual(again.rows(), book.rows());
    assert.deepEqual(again.snapshot(), snapshot);
  });

  it(`stays bounded: rows older than ${KEEP_SPEND_DAYS} days go; a counter older than ${KEEP_COUNT_DAYS} days goes, its difference kept as a row first`, () => {
    const book = new SpendBook(BEGAN);
    book.addCall('k', at('2026-09-01T12:00:00Z'), 'ava', 1);
    book.addCall('k', at('2026-11-20T11:00:00Z'), 'ava', 2);
    book.dayCount('k', utcDay('2026-11-20', 3, 6));
    const now = at('2026-11-24T12:00:00Z');
    book.prune(now);
    const snapshot = book.snapshot();
    assert.deepEqual(snapshot.counts, [], 'the counter of the 20th is gone (older than 3 days)');
    assert.deepEqual(snapshot.slots, [], "its slots too (older than the oldest counter's day)");
    assert.deepEqual(book.rows(), [
      { kioskId: 'k', day: '2026-11-20', avatar: NOT_RECEIVED, sessions: 2, credits: 4, demo: false },
      { kioskId: 'k', day: '2026-11-20', avatar: 'ava', sessions: 1, credits: 2, demo: false },
    ]);
    // Day 62 back is the oldest kept.
    const edge = new SpendBook(BEGAN);
    edge.addCall('k', now - KEEP_SPEND_DAYS * DAY_MS, 'ava', 1);
    edge.addCall('k', now - (KEEP_SPEND_DAYS + 1) * DAY_MS, 'ava', 1);
    edge.prune(now);
    assert.deepEqual(edge.rows().map((r) => r.day), ['2026-09-23']);
  });
});
