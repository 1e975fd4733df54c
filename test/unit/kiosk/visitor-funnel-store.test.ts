/**
 * The visitor funnel's store (kiosk/visitor-funnel-store.ts): hour buckets in the kiosk's zone, rolled up
 * to days after 90 days and dropped after 13 months, DST days, a damaged file kept aside (and staff told
 * through the kiosk's attention list), a restart that keeps everything. Real files in a temporary folder,
 * an injected clock.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyFunnelCounts } from '../../../electron/core/funnel.ts';
import { createKiosk } from '../../../electron/kiosk/compose.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { HOURLY_DAYS, MAX_FILE_BYTES, SAVE_DELAY_MS, VISITOR_FUNNEL_FILE, addCounts, dayNumber, dayOfNumber, keepSince, localDay, localHour, openVisitorFunnelStore, readFile, toSparse } from '../../../electron/kiosk/visitor-funnel-store.ts';
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

describe('calendar days and counts', () => {
  it('a date is its day number since 1970 and back, whatever the month', () => {
    assert.equal(dayNumber('1970-01-01'), 0);
    assert.equal(dayNumber('1970-02-01'), 31);
    assert.equal(dayNumber('2026-03-01') - dayNumber('2026-02-28'), 1);
    assert.equal(dayNumber('2024-03-01') - dayNumber('2024-02-28'), 2, 'a leap year');
    for (const day of ['2026-01-01', '2026-12-31', '2024-02-29']) assert.equal(dayOfNumber(dayNumber(day)), day);
    assert.equal(localDay(Date.UTC(2026, 5, 1, 23, 30), 'Asia/Tokyo'), '2026-06-02');
    assert.equal(localHour(Date.UTC(2026, 5, 1, 0, 0), 'UTC'), '2026-06-01T00', 'midnight is hour 00');
  });

  it('two instants in the same quarter hour of one zone read the same hour; the next hour reads anew', () => {
    const tz = 'America/St_Johns'; // a half-hour zone: UTC−2:30 in summer
    assert.equal(localHour(Date.UTC(2026, 5, 1, 12, 29), tz), '2026-06-01T09');
    assert.equal(localHour(Date.UTC(2026, 5, 1, 12, 30), tz), '2026-06-01T10');
    assert.equal(localHour(Date.UTC(2026, 5, 1, 12, 44), tz), '2026-06-01T10');
    assert.equal(localHour(Date.UTC(2026, 5, 1, 12, 29), 'UTC'), '2026-06-01T12');
  });

  it('adding counts adds every field and every breakdown row', () => {
    const a = emptyFunnelCounts();
    a.tapped = 1;
    a.byAvatar = { kim: { tapped: 1, live: 1 } };
    const b = emptyFunnelCounts();
    Object.assign(b, { noticed: 1, approached: 2, greeted: 3, tapped: 4, gaveUp: 5, failed: 6, live: 7, endedWell: 8, endedBadly: 9 });
    b.refused.closed = 2;
    b.callLength.over10m = 3;
    b.byAvatar = { kim: { tapped: 2, live: 0 }, bo: { tapped: 1, live: 1 } };
    b.byLanguage = { de: { tapped: 4, live: 2 } };
    b.byCallMode = { audio: { tapped: 4, live: 3 } };
    const sum = addCounts(a, b);
    assert.equal(sum, a);
    const expected = emptyFunnelCounts();
    Object.assign(expected, { noticed: 1, approached: 2, greeted: 3, tapped: 5, gaveUp: 5, failed: 6, live: 7, endedWell: 8, endedBadly: 9 });
    expected.refused.closed = 2;
    expected.callLength.over10m = 3;
    expected.byAvatar = { kim: { tapped: 3, live: 1 }, bo: { tapped: 1, live: 1 } };
    expected.byLanguage = { de: { tapped: 4, live: 2 } };
    expected.byCallMode = { audio: { tapped: 4, live: 3 } };
    assert.deepEqual(sum, expected);
  });

  it('the file form leaves out zeros and empty groups, and keeps everything else', () => {
    const c = emptyFunnelCounts();
    c.refused.ageGate = 1;
    c.byAvatar = { kim: { tapped: 0, live: 2 } };
    assert.deepEqual(toSparse(c), { refused: { ageGate: 1 }, byAvatar: { kim: { live: 2 } } });
    assert.deepEqual(toSparse(emptyFunnelCounts()), {});
    assert.equal(toSparse(null), null);
    assert.equal(toSparse('x'), 'x');
  });
});

describe('the store file', () => {
  const clockAt = () => new FakeClock(Date.UTC(2026, 5, 1, 10));

  it('reads back day buckets, refusals, call lengths and breakdowns from their sparse form', () => {
    const dir = tempDir();
    writeFileSync(join(dir, VISITOR_FUNNEL_FILE), JSON.stringify({ v: 1, timeZone: 'UTC', hours: {}, days: { '2026-02-01': { tapped: 2, refused: { closed: 1 }, callLength: { over10m: 1 }, byCallMode: { audio: { live: 1 } } } } }));
    const store = openVisitorFunnelStore({ dir, timeZone: 'UTC', clock: clockAt() });
    const expected = emptyFunnelCounts();
    expected.tapped = 2;
    expected.refused.closed = 1;
    expected.callLength.over10m = 1;
    expected.byCallMode = { audio: { tapped: 0, live: 1 } };
    assert.deepEqual([...store.days], [['2026-02-01', expected]]);
    assert.equal(store.damaged, null);
  });

  it('days are written in date order, hours too', async () => {
    const dir = tempDir();
    const clock = clockAt();
    const store = openVisitorFunnelStore({ dir, timeZone: 'UTC', clock });
    store.add(clock.now() + 3_600_000, tap);
    store.add(clock.now(), tap);
    store.close();
    const file = JSON.parse(readFileSync(join(dir, VISITOR_FUNNEL_FILE), 'utf8')) as { hours: object };
    assert.deepEqual(Object.keys(file.hours), ['2026-06-01T10', '2026-06-01T11']);
  });

  it('one write for many changes within the half minute; nothing written when nothing changed', async () => {
    const dir = tempDir();
    const clock = clockAt();
    const store = openVisitorFunnelStore({ dir, timeZone: 'UTC', clock });
    store.flush();
    assert.equal(existsSync(join(dir, VISITOR_FUNNEL_FILE)), false, 'nothing to write');
    store.add(clock.now(), tap);
    await clock.advance(10_000);
    store.add(clock.now(), tap);
    assert.equal(clock.pendingCount, 1);
    await clock.advance(SAVE_DELAY_MS - 10_000);
    assert.equal(openVisitorFunnelStore({ dir, timeZone: 'UTC', clock }).hours.get('2026-06-01T10')?.tapped, 2);
    assert.equal(clock.pendingCount, 0);
  });

  it('in memory (no folder): counts, and never schedules a write', () => {
    const clock = clockAt();
    const store = openVisitorFunnelStore({ timeZone: 'UTC', clock });
    store.add(clock.now(), tap);
    assert.equal(clock.pendingCount, 0);
    store.close();
    assert.equal(store.hours.get('2026-06-01T10')?.tapped, 1);
  });

  it('a write that fails is logged and tried again with the next change', async () => {
    const root = tempDir();
    const dir = join(root, 'data');
    writeFileSync(dir, 'a file where the folder should be');
    const clock = clockAt();
    const warnings: unknown[] = [];
    const store = openVisitorFunnelStore({ dir, timeZone: 'UTC', clock, logger: { debug() {}, info() {}, error() {}, warn: (m, d) => void warnings.push([m, d]) } });
    store.add(clock.now(), tap);
    await clock.advance(SAVE_DELAY_MS);
    assert.equal(warnings.length, 1);
    assert.equal((warnings[0] as [string])[0], 'Visitor counts: could not write the file');
    rmSync(dir);
    mkdirSync(dir);
    store.flush();
    assert.equal(openVisitorFunnelStore({ dir, timeZone: 'UTC', clock }).hours.get('2026-06-01T10')?.tapped, 1, 'still to be written after the failure');
  });

  it('hours older than 13 months are dropped at once, not rolled up', () => {
    const dir = tempDir();
    writeFileSync(join(dir, VISITOR_FUNNEL_FILE), JSON.stringify({ v: 1, timeZone: 'UTC', hours: { '2024-01-01T10': { tapped: 1 }, '2026-06-01T09': { tapped: 1 } }, days: { '2024-01-02': { tapped: 1 } } }));
    const store = openVisitorFunnelStore({ dir, timeZone: 'UTC', clock: clockAt() });
    assert.deepEqual([...store.hours.keys()], ['2026-06-01T09']);
    assert.deepEqual([...store.days.keys()], []);
  });

  it('what makes a file unusable is said: not JSON, too big, which field, or the system\'s reason', () => {
    const dir = tempDir();
    const path = join(dir, VISITOR_FUNNEL_FILE);
    writeFileSync(path, '{');
    assert.deepEqual(readFile(path), { ok: false, message: 'it is not JSON' });
    writeFileSync(path, '{}');
    truncateSync(path, MAX_FILE_BYTES + 1);
    assert.deepEqual(readFile(path), { ok: false, message: `it is larger than ${16 * 1024 * 1024} bytes` });
    truncateSync(path, 0);
    writeFileSync(path, JSON.stringify({ v: 1, timeZone: 'UTC', hours: { '2026-06-01T09': { tapped: -1 } }, days: {} }));
    assert.match((readFile(path) as { message: string }).message, /^hours\.2026-06-01T09\.tapped: /);
    writeFileSync(path, '[]');
    assert.match((readFile(path) as { message: string }).message, /^the file: /);
    assert.match((readFile(join(dir, 'missing.json')) as { message: string }).message, /ENOENT/);
  });

  it('a damaged file that cannot be moved aside: counting starts afresh, and the message says it was not kept', () => {
    const root = tempDir();
    const dir = join(root, 'data');
    mkdirSync(join(dir, VISITOR_FUNNEL_FILE), { recursive: true }); // a folder named like the file: unreadable
    writeFileSync(join(dir, VISITOR_FUNNEL_FILE, 'x'), 'keeps the folder from being renamed over');
    mkdirSync(join(dir, `${VISITOR_FUNNEL_FILE}.damaged-${clockAt().now()}`));
    writeFileSync(join(dir, `${VISITOR_FUNNEL_FILE}.damaged-${clockAt().now()}`, 'y'), 'occupied');
    const warnings: unknown[] = [];
    const store = openVisitorFunnelStore({ dir, timeZone: 'UTC', clock: clockAt(), logger: { debug() {}, info() {}, error() {}, warn: (m, d) => void warnings.push([m, d]) } });
    assert.equal(store.damaged?.keptAs, null);
    assert.match(store.damaged!.message, /could not be read \(.+\); counting starts afresh\.$/);
    assert.deepEqual((warnings[0] as [string, { keptAs: unknown }])[1].keptAs, null);
  });
});
