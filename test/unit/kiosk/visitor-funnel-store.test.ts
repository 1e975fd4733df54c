/**
 * The visitor funnel's store (kiosk/visitor-funnel-store.ts): hour buckets in the kiosk's zone, rolled up
 * to days after 90 days and dropped after 13 months, DST days, a damaged file kept aside (and staff told
 * through the kiosk's attention list), a restart that keeps everything. Real files in a temporary folder,
 * an injected clock.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyFunnelCounts } from '../../../electron/core/funnel.ts';
import { createKiosk } from '../../../electron/kiosk/compose.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { HOURLY_DAYS, SAVE_DELAY_MS, VISITOR_FUNNEL_FILE, keepSince, localHour, openVisitorFunnelStore } from '../../../electron/kiosk/visitor-funnel-store.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'funnel-store-'));
  dirs.push(d);
  return d;
}
const tap = (c: ReturnType<typeof emptyFunnelCounts>) => (c.tapped += 1);
const DAY = 86_400_000;

describe('local hours', () => {
  it('a spring-forward day has 23 hours (no 02), an autumn one counts the repeated hour once', () => {
    const tz = 'Europe/Berlin';
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST. 00:30 UTC = 01:30 local, 01:30 UTC = 03:30 local.
    assert.deepEqual([Date.UTC(2026, 2, 29, 0, 30), Date.UTC(2026, 2, 29, 1, 30)].map((ms) => localHour(ms, tz)), ['2026-03-29T01', '2026-03-29T03']);
    const spring = new Set<string>();
    for (let ms = Date.UTC(2026, 2, 28, 23, 0); ms < Date.UTC(2026, 2, 29, 22, 0); ms += 3_600_000) spring.add(localHour(ms, tz));
    assert.equal([...spring].filter((h) => h.startsWith('2026-03-29')).length, 23);
    // 2026-10-25: 03:00 CEST falls back to 02:00 CET; 00:30 and 01:30 UTC are both 02:30 local.
    assert.deepEqual([Date.UTC(2026, 9, 25, 0, 30), Date.UTC(2026, 9, 25, 1, 30)].map((ms) => localHour(ms, tz)), ['2026-10-25T02', '2026-10-25T02']);
  });

  it('13 months back from the 31st of a month lands on the last day of a shorter month', () => {
    assert.deepEqual([keepSince('2026-03-15'), keepSince('2027-03-31'), keepSince('2026-01-01')], ['2025-02-15', '2026-02-28', '2024-12-01']);
  });
});

describe('the store', () => {
  it('counts two taps in the repeated autumn hour into one bucket, and keeps the DST day whole', () => {
    const clock = new FakeClock(Date.UTC(2026, 9, 25, 0, 30));
    const store = openVisitorFunnelStore({ timeZone: 'Europe/Berlin', clock });
    store.add(clock.now(), tap);
    store.add(clock.now() + 3_600_000, tap);
    assert.deepEqual([...store.hours].map(([k, c]) => [k, c.tapped]), [['2026-10-25T02', 2]]);
  });

  it('keeps hours for 90 local days, then rolls them up into their day, and drops days after 13 months', () => {
    const start = Date.UTC(2026, 0, 10, 12, 0); // 2026-01-10 12:00 UTC
    const clock = new FakeClock(start);
    const store = openVisitorFunnelStore({ timeZone: 'UTC', clock });
    store.add(start, tap);
    store.add(start + 3_600_000, tap);
    // The 89th day after: the 10th of January is still one of the last 90 days.
    store.compact(start + (HOURLY_DAYS - 1) * DAY);
    assert.deepEqual([...store.hours.keys()], ['2026-01-10T12', '2026-01-10T13']);
    assert.equal(store.days.size, 0);
    // The 90th: it is rolled up into one day, counts kept.
    store.compact(start + HOURLY_DAYS * DAY);
    assert.equal(store.hours.size, 0);
    assert.deepEqual([...store.days].map(([k, c]) => [k, c.tapped]), [['2026-01-10', 2]]);
    // 13 months later to the day it is still kept; a day after, gone.
    store.compact(Date.UTC(2027, 1, 10, 12));
    assert.deepEqual([...store.days.keys()], ['2026-01-10']);
    store.compact(Date.UTC(2027, 1, 11, 12));
    assert.equal(store.days.size, 0);
  });

  it('writes atomically half a minute after a change, and a restart reads back exactly what was counted', async () => {
    const dir = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 9, 15));
    const store = openVisitorFunnelStore({ dir, timeZone: 'America/New_York', clock });
    store.add(clock.now(), (c) => {
      c.tapped += 3;
      c.live += 2;
      c.byLanguage.de = { tapped: 3, live: 2 };
    });
    assert.equal(existsSync(join(dir, VISITOR_FUNNEL_FILE)), false);
    await clock.advance(SAVE_DELAY_MS);
    assert.deepEqual(readdirSync(dir), [VISITOR_FUNNEL_FILE]); // no temporary file left
    // Zeros are left out of the file.
    assert.deepEqual(JSON.parse(readFileSync(join(dir, VISITOR_FUNNEL_FILE), 'utf8')), {
      v: 1,
      timeZone: 'America/New_York',
      hours: { '2026-06-01T05': { tapped: 3, live: 2, byLanguage: { de: { tapped: 3, live: 2 } } } },
      days: {},
    });
    const again = openVisitorFunnelStore({ dir, timeZone: 'America/New_York', clock });
    const expected = emptyFunnelCounts();
    expected.tapped = 3;
    expected.live = 2;
    expected.byLanguage = { de: { tapped: 3, live: 2 } };
    assert.deepEqual([...again.hours], [['2026-06-01T05', expected]]);
    assert.equal(again.damaged, null);
  });

  it('close writes what the pending timer would have', () => {
    const dir = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 5, 1, 9, 15));
    const store = openVisitorFunnelStore({ dir, timeZone: 'UTC', clock });
    store.add(clock.now(), tap);
    store.close();
    assert.equal(openVisitorFunnelStore({ dir, timeZone: 'UTC', clock }).hours.get('2026-06-01T09')?.tapped, 1);
  });

  for (const [what, text] of [
    ['not JSON', '{"v":1,"timeZone":"UTC","hours":{"2026-06-01T09":{"tapped":1}'],
    ['a negative count', '{"v":1,"timeZone":"UTC","hours":{"2026-06-01T09":{"tapped":-1}},"days":{}}'],
    ['a finer time than the hour', '{"v":1,"timeZone":"UTC","hours":{"2026-06-01T09:15":{"tapped":1}},"days":{}}'],
    ['a field nobody counts', '{"v":1,"timeZone":"UTC","hours":{"2026-06-01T09":{"tapped":1,"visitorName":"x"}},"days":{}}'],
  ] as const) {
    it(`a damaged file (${what}) is kept aside, counting starts afresh, and the kiosk tells staff`, async () => {
      const dir = tempDir();
      writeFileSync(join(dir, VISITOR_FUNNEL_FILE), text);
      const clock = new FakeClock(Date.UTC(2026, 5, 1, 10));
      const store = openVisitorFunnelStore({ dir, timeZone: 'UTC', clock });
      assert.equal(store.hours.size, 0);
      const keptAs = join(dir, `${VISITOR_FUNNEL_FILE}.damaged-${clock.now()}`);
      assert.equal(store.damaged?.keptAs, keptAs);
      assert.equal(readFileSync(keptAs, 'utf8'), text);
      assert.equal(existsSync(join(dir, VISITOR_FUNNEL_FILE)), false);
      assert.match(store.damaged!.message, new RegExp(`^The visitor counts file .+ could not be read \\(.+\\); counting starts afresh, the damaged file is kept as ${keptAs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.$`));
      const kiosk = await createKiosk({ config: resolveConfig({}, {}), apiKey: null, apiKeySource: 'none', visitorStore: store, checkService: false, awaitRendererRtc: false });
      try {
        // What the Status tab lists (StaffStatus.attention).
        assert.deepEqual(
          kiosk.appearance.attention.filter((a) => a.kind === 'visitors'),
          [{ kind: 'visitors', code: 'invalid_config', message: store.damaged!.message }],
        );
      } finally {
        await kiosk.shutdown();
      }
    });
  }
});
