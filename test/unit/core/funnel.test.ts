/**
 * The visitor funnel's shape in core (funnel.ts, funnel-schema.ts): when a share may be shown at all (never
 * one that gives a hidden count back, never one of nobody), and what a day of counts may look like when it
 * is read back from a kiosk's store or a fleet message (whole counts, few short keys, a calendar day).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { emptyFunnelCounts, shareOf } from '../../../electron/core/funnel.ts';
import { funnelDaySchema } from '../../../electron/core/funnel-schema.ts';

describe('shareOf', () => {
  it('gives the whole percent once the whole reaches the threshold', () => {
    assert.equal(shareOf(0, 5, 5), 0, 'a whole of exactly the threshold is shown');
    assert.equal(shareOf(5, 8, 5), 63);
    assert.equal(shareOf(8, 8, 5), 100);
  });
  it('gives none while the whole is under the threshold, even for a part of 0', () => {
    assert.equal(shareOf(0, 4, 5), null);
    assert.equal(shareOf(4, 4, 5), null);
  });
  it('gives none when the part is itself a hidden count', () => {
    assert.equal(shareOf(3, 20, 5), null);
  });
  it('gives none of nobody, even where nothing is hidden (threshold 0)', () => {
    assert.equal(shareOf(0, 0, 0), null);
    assert.equal(shareOf(2, 4, 0), 50);
  });
});

describe('funnelDaySchema', () => {
  const day = (over: Record<string, unknown> = {}) => ({ day: '2026-11-30', counts: { ...emptyFunnelCounts(), ...over } });

  it('reads a day of counts with short breakdown keys', () => {
    const counts = { byLanguage: { en: { tapped: 3, live: 2 }, 'zh-Hans': { tapped: 1, live: 1 } }, byAvatar: { 'ava_2.0': { tapped: 1, live: 0 } } };
    assert.equal(funnelDaySchema.safeParse(day(counts)).success, true);
  });
  it('refuses a breakdown key with anything but letters, digits and _ . - anywhere in it', () => {
    for (const key of ['en US', 'en/../x', 'ok!', '<b>']) {
      assert.equal(funnelDaySchema.safeParse(day({ byLanguage: { [key]: { tapped: 1, live: 0 } } })).success, false, key);
    }
  });
  it('refuses more than 64 keys in one breakdown, saying so', () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, { tapped: 0, live: 0 }]));
    const result = funnelDaySchema.safeParse(day({ byAvatar: many }));
    assert.equal(result.success, false);
    assert.deepEqual(result.error?.issues.map((i) => i.message), ['at most 64 keys']);
    const enough = Object.fromEntries(Object.entries(many).slice(0, 64));
    assert.equal(funnelDaySchema.safeParse(day({ byAvatar: enough })).success, true);
  });
  it('refuses a day that is not exactly a calendar date YYYY-MM-DD', () => {
    for (const d of ['x2026-11-30', '2026-11-30x', '2026-11-30T00:00', '26-11-30', '']) {
      assert.equal(funnelDaySchema.safeParse({ ...day(), day: d }).success, false, d);
    }
  });
});
