/**
 * The day's field figures for the fleet status (electron/kiosk/call-figures.ts): nearest-rank p50/p95 per
 * figure over today's calls, figures a call did not have left out, a new local day starting afresh.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CallFigures } from '../../../electron/contract.ts';
import { DayFigures, localDayBounds, percentile } from '../../../electron/kiosk/call-figures.ts';

const call = (over: Partial<CallFigures>): CallFigures => ({
  liveId: 'L',
  callMode: 'video',
  tapToRtcReadyMs: null,
  tapToConnInitAckMs: null,
  tapToAvatarPublishedMs: null,
  tapToFirstFrameMs: null,
  tapToFirstAudioMs: null,
  joinMs: null,
  proxy: 'off',
  endReason: 'user_end',
  ...over,
});

describe('DayFigures', () => {
  it('nearest-rank percentiles', () => {
    const values = Array.from({ length: 20 }, (_, i) => (i + 1) * 10);
    assert.equal(percentile(values, 50), 100);
    assert.equal(percentile(values, 95), 190);
    assert.equal(percentile([7], 95), 7);
    assert.equal(percentile([], 50), null);
  });

  it('summarises today\'s calls per figure; a figure no call had is null; a new day starts afresh', () => {
    const day = new DayFigures();
    const noon = new Date(2026, 10, 24, 12).getTime();
    for (let i = 1; i <= 20; i++) day.add(call({ tapToFirstFrameMs: i * 100, tapToRtcReadyMs: 50 }), noon + i);
    day.add(call({ callMode: 'audio', tapToFirstAudioMs: 900 }), noon + 30);
    const s = day.summary(noon + 60);
    assert.equal(s.day, '2026-11-24');
    assert.equal(s.calls, 21);
    assert.equal(s.p50.tapToFirstFrameMs, 1_000);
    assert.equal(s.p95.tapToFirstFrameMs, 1_900);
    assert.equal(s.p50.tapToRtcReadyMs, 50);
    assert.equal(s.p50.tapToFirstAudioMs, 900);
    assert.equal(s.p50.joinMs, null);
    const tomorrow = day.summary(new Date(2026, 10, 25, 0, 1).getTime());
    assert.deepEqual([tomorrow.day, tomorrow.calls, tomorrow.p50.tapToFirstFrameMs], ['2026-11-25', 0, null]);
  });
});

describe('DayFigures edges', () => {
  it('names the local day with a two-digit month and day', () => {
    const day = new DayFigures();
    assert.equal(day.summary(new Date(2027, 0, 5, 9).getTime()).day, '2027-01-05');
  });

  it('ranks the figures by value, not by the order the calls ended in nor as text', () => {
    const day = new DayFigures();
    const noon = new Date(2026, 10, 24, 12).getTime();
    for (const [i, ms] of [1_000, 95, 300, 2_000, 120].entries()) day.add(call({ joinMs: ms }), noon + i);
    const s = day.summary(noon + 10);
    assert.deepEqual([s.calls, s.p50.joinMs, s.p95.joinMs], [5, 300, 2_000]);
  });
});

describe('localDayBounds: the local day the status counts', () => {
  it('the date, and its local midnight to the next as ISO times', () => {
    const before = process.env.TZ;
    try {
      process.env.TZ = 'Europe/Berlin';
      assert.deepEqual(localDayBounds(Date.UTC(2026, 10, 24, 22, 30)), { day: '2026-11-24', from: '2026-11-23T23:00:00.000Z', to: '2026-11-24T23:00:00.000Z' });
      assert.deepEqual(localDayBounds(Date.UTC(2026, 10, 24, 23, 30)), { day: '2026-11-25', from: '2026-11-24T23:00:00.000Z', to: '2026-11-25T23:00:00.000Z' });
      // The day summer time ends is 25 hours long.
      assert.deepEqual(localDayBounds(Date.UTC(2026, 9, 25, 12)), { day: '2026-10-25', from: '2026-10-24T22:00:00.000Z', to: '2026-10-25T23:00:00.000Z' });
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});

describe('percentile edges', () => {
  it('p0 is the smallest, p100 the largest; a rank between values rounds up', () => {
    assert.equal(percentile([1, 2, 3, 4], 0), 1);
    assert.equal(percentile([1, 2, 3, 4], 100), 4);
    assert.equal(percentile([1, 2, 3, 4], 51), 3);
    assert.equal(percentile([1, 2, 3, 4], 50), 2);
  });
});
