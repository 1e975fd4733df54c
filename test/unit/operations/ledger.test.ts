/**
 * The credit ledger (ledger.ts): one JSON line per session or spare in one file per month, private to this
 * user; what the reader keeps and skips (a torn last line after a crash, blank lines, JSON that is not a
 * record, files that are not month files); the writer refusing a record the reader would skip; listeners
 * and logs staff rely on; today / last 7 days / month totals at their exact bounds; a formula-safe CSV
 * whose numbers stay numbers; and the recorder that turns kiosk events into records, in the usual order
 * and in the less usual ones (a failure after going live, a late or early event, a cause meant for
 * another call).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { KioskEvent } from '../../../electron/contract.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { Logger } from '../../../electron/core/log.ts';
import type { SessionSummary } from '../../../electron/core/session-types.ts';
import {
  LEDGER_DIR,
  createLedger,
  createLedgerRecorder,
  monthFileName,
  parseLedger,
  readLedgerFile,
  toCsv,
  totalsOf,
  type LedgerRecord,
  type SessionRecord,
  type SpareRecord,
} from '../../../electron/operations/ledger.ts';
import { at, session, sessionSummary } from '../../helpers/ledger-records.ts';
import { openFilesCounterOrSkip } from '../../helpers/open-files.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const tmp = tempDirsRemovedAfterEach('kiosk-ledger-');

function spare(atMs: number, over: Partial<SpareRecord> = {}): SpareRecord {
  return { kind: 'spare', v: 1, at: new Date(atMs).toISOString(), live_id: 'S1', surface: 'direct', call_mode: 'video', status: 'created', ...over };
}

/** A logger that keeps what it was told, as `level message data-json`. */
function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string, data?: Record<string, unknown>) => void lines.push(`${level} ${message}${data ? ` ${JSON.stringify(data)}` : ''}`);
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

describe('the ledger file', () => {
  describe('writing', () => {
    it('appends one line per record into one file per month', async () => {
      const dir = tmp();
      const ledger = createLedger({ dir });
      await ledger.append(session(at(2026, 10, 31, 23)));
      await ledger.append(session(at(2026, 11, 1, 1)));
      await ledger.append(session(at(2026, 11, 2)));
      assert.deepEqual(readdirSync(dir).sort(), ['ledger-2026-10.jsonl', 'ledger-2026-11.jsonl']);
      assert.equal(readFileSync(join(dir, 'ledger-2026-11.jsonl'), 'utf8').split('\n').length, 3); // 2 lines + final newline
      const r = ledger.read();
      assert.equal(r.skipped, 0);
      assert.deepEqual(r.records.map((x) => (x.kind === 'session' ? x.live_id : null)), [`live-${at(2026, 10, 31, 23)}`, `live-${at(2026, 11, 1, 1)}`, `live-${at(2026, 11, 2)}`]);
      assert.equal(ledger.read(at(2026, 11, 1, 0)).records.length, 2);
    });
    it('names month files with two-digit months, in the folder the CLI and staff panel read', () => {
      assert.equal(monthFileName(at(2026, 3, 9)), 'ledger-2026-03.jsonl');
      assert.equal(monthFileName(at(2026, 12, 31, 23)), 'ledger-2026-12.jsonl');
      // The documented place: <user data>/ledger/ledger-YYYY-MM.jsonl (staff back this folder up).
      assert.equal(LEDGER_DIR, 'ledger');
    });
    it('every surface, call mode, spare status and proxy kind is written and read back', async () => {
      const ledger = createLedger({ dir: tmp() });
      const t = at(2026, 3, 5);
      const figures = { tap_to_rtc_ready_ms: 1, tap_to_conn_init_ack_ms: 2, tap_to_avatar_published_ms: null, tap_to_first_frame_ms: 4, tap_to_first_audio_ms: 5, join_ms: 6 };
      const written: LedgerRecord[] = [
        session(t, { surface: 'demo', call_mode: 'audio', figures: { ...figures, proxy: 'off' }, avatar: 'mara' }),
        session(t + 1, { surface: 'gateway', figures: { ...figures, proxy: 'udp' }, avatar: 'x'.repeat(64) }),
        session(t + 2, { surface: 'direct', figures: { ...figures, proxy: 'tcp' } }),
        ...(['created', 'used', 'expired', 'failed'] as const).map((status, i) => spare(t + 10 + i, { status, surface: i % 2 ? 'demo' : 'gateway' })),
      ];
      for (const r of written) await ledger.append(r);
      assert.deepEqual(ledger.read(), { records: written, skipped: 0 });
    });
    it('never writes a record the reader would skip', async () => {
      const ledger = createLedger({ dir: tmp() });
      await assert.rejects(ledger.append({ ...session(at(2026, 11, 5)), credits_cost: 'free' as never }));
    });
    it('refuses a record the reader would skip, saying which field is wrong', async () => {
      const ledger = createLedger({ dir: tmp() });
      await assert.rejects(ledger.append(session(at(2026, 3, 5), { end_at: 'yesterday' })), /must be an ISO time/);
      await assert.rejects(ledger.append(session(at(2026, 3, 5), { avatar: 'x'.repeat(65) })));
      assert.deepEqual(ledger.read(), { records: [], skipped: 0 });
    });
    it('a failed append is logged and does not stop the records after it', async () => {
      const logger = recordingLogger();
      const ledger = createLedger({ dir: tmp(), logger });
      const bad = ledger.append(session(at(2026, 3, 5), { start_at: 'soon' }));
      const good = ledger.append(session(at(2026, 3, 6), { live_id: 'kept' }));
      await assert.rejects(bad);
      await good;
      assert.deepEqual(ledger.read().records.map((r) => r.live_id), ['kept']);
      assert.equal(logger.lines.length, 1);
      // The error text names the field and the rule, for whoever reads the log.
      assert.match(logger.lines[0]!, /^error Ledger: could not append a record \{"error":".*start_at.*must be an ISO time/s);
    });
    it('listeners hear each record once it is on disk; one that throws is logged and the others still hear it; unsubscribing stops it', async () => {
      const dir = tmp();
      const logger = recordingLogger();
      const ledger = createLedger({ dir, logger });
      const heard: string[] = [];
      ledger.onAppend(() => {
        throw new Error('fleet link down');
      });
      const stop = ledger.onAppend((r) => {
        // On disk already: the reader sees it from inside the listener.
        heard.push(`${r.live_id} on disk: ${ledger.read().records.some((x) => x.live_id === r.live_id)}`);
      });
      await ledger.append(session(at(2026, 3, 5), { live_id: 'A' }));
      stop();
      await ledger.append(session(at(2026, 3, 6), { live_id: 'B' }));
      assert.deepEqual(heard, ['A on disk: true']);
      assert.deepEqual(logger.lines, ['warn Ledger: a listener threw {"error":"Error: fleet link down"}', 'warn Ledger: a listener threw {"error":"Error: fleet link down"}']);
    });
    it('each append closes its file (a kiosk appends for months: no descriptor may leak)', async (t) => {
      const openFiles = openFilesCounterOrSkip(t);
      if (!openFiles) return;
      const ledger = createLedger({ dir: tmp() });
      await ledger.append(session(at(2026, 3, 1)));
      const before = openFiles();
      for (let i = 0; i < 20; i++) await ledger.append(session(at(2026, 3, 1) + i));
      assert.equal(openFiles(), before);
    });
    it('the file is private to this user (0600): it says what the venue spends', async (t) => {
      if (process.platform === 'win32') return t.skip('POSIX modes');
      const dir = tmp();
      await createLedger({ dir }).append(session(at(2026, 3, 5)));
      assert.equal(statSync(join(dir, 'ledger-2026-03.jsonl')).mode & 0o777, 0o600);
    });
  });

  describe('reading', () => {
    it('a crash mid-write leaves earlier lines readable, and the next record starts on its own line', async () => {
      const dir = tmp();
      const ledger = createLedger({ dir });
      const t = at(2026, 11, 5);
      await ledger.append(session(t, { live_id: 'a' }));
      await ledger.append(session(t + 1000, { live_id: 'b' }));
      // What a kill during the third write leaves: part of a line, no newline.
      appendFileSync(join(dir, monthFileName(t)), JSON.stringify(session(t + 2000, { live_id: 'c' })).slice(0, 57));
      let r = ledger.read();
      assert.deepEqual(r.records.map((x) => x.live_id), ['a', 'b']);
      assert.equal(r.skipped, 1);
      await ledger.append(session(t + 3000, { live_id: 'd' }));
      r = ledger.read();
      assert.deepEqual(r.records.map((x) => x.live_id), ['a', 'b', 'd']);
      assert.equal(r.skipped, 1);
    });
    it('property: cutting the file anywhere keeps every complete line before the cut', () => {
      const dir = tmp();
      const lines = [1, 2, 3, 4, 5].map((i) => JSON.stringify(session(at(2026, 11, i), { live_id: `s${i}` })) + '\n');
      const text = lines.join('');
      fc.assert(
        fc.property(fc.integer({ min: 0, max: text.length }), (cut) => {
          const path = join(dir, 'cut.jsonl');
          writeFileSync(path, text);
          truncateSync(path, cut);
          const r = parseLedger(readFileSync(path, 'utf8'));
          let complete = 0;
          let len = 0;
          for (const l of lines) if ((len += l.length) <= cut) complete++;
          // A cut right after a record's closing brace (before its newline) leaves that record whole.
          const whole = r.records.length;
          assert.ok(whole === complete || whole === complete + 1, `cut ${cut}: ${whole} vs ${complete}`);
          assert.deepEqual(r.records.slice(0, complete).map((x) => x.live_id), lines.slice(0, complete).map((_, i) => `s${i + 1}`));
          assert.ok(r.skipped <= 1);
        }),
        { numRuns: 200 },
      );
    });
    it('blank and whitespace-only lines are not damage; JSON that is not a record is', () => {
      const text = [JSON.stringify(session(at(2026, 3, 2))), '   ', '\t', '', JSON.stringify({ kind: 'session', v: 2 }), '{"kind":"other"}', '[1,2]', ''].join('\n');
      const r = parseLedger(text);
      assert.deepEqual(r.records, [session(at(2026, 3, 2))]);
      assert.equal(r.skipped, 3);
    });
    it('unreadable lines are logged once per read with their count; a clean read logs nothing', async () => {
      const dir = tmp();
      const logger = recordingLogger();
      const ledger = createLedger({ dir, logger });
      await ledger.append(session(at(2026, 3, 5)));
      ledger.read();
      assert.deepEqual(logger.lines, []);
      writeFileSync(join(dir, 'ledger-2026-04.jsonl'), 'torn{\n{"kind":\n');
      ledger.read();
      assert.deepEqual(logger.lines, ['warn Ledger: skipped unreadable lines {"skipped":2}']);
    });
    it('reads one named file for the CLI, and says plainly when there is none', () => {
      const dir = tmp();
      const path = join(dir, 'ledger-2026-03.jsonl');
      writeFileSync(path, `${JSON.stringify(session(at(2026, 3, 2)))}\nnot json\n`);
      assert.deepEqual(readLedgerFile(path), { records: [session(at(2026, 3, 2))], skipped: 1 });
      const missing = join(dir, 'ledger-2026-04.jsonl');
      assert.throws(
        () => readLedgerFile(missing),
        (e: unknown) => e instanceof AvatarError && e.code === 'invalid_request' && e.message === `No ledger file at ${missing}.`,
      );
    });
    it('a ledger folder that does not exist yet reads as empty, with zero totals and a header-only CSV', () => {
      const ledger = createLedger({ dir: join(tmp(), 'never-written') });
      assert.deepEqual(ledger.read(), { records: [], skipped: 0 });
      const zero = { sessions: 0, credits: 0, billedSeconds: 0, unknownCredits: 0, demoSessions: 0 };
      assert.deepEqual(ledger.totals(at(2026, 3, 9)), { today: zero, last7Days: zero, month: zero });
      assert.equal(ledger.csv(), `${toCsv([]).split('\r\n')[0]}\r\n`);
    });
    it('reads only ledger-YYYY-MM.jsonl files: copies and other files in the folder are left alone', async () => {
      const dir = tmp();
      const ledger = createLedger({ dir });
      await ledger.append(session(at(2026, 3, 2), { live_id: 'real' }));
      const line = `${JSON.stringify(session(at(2026, 3, 3), { live_id: 'copy' }))}\n`;
      for (const name of ['old-ledger-2026-02.jsonl', 'ledger-2026-02.jsonl.bak', 'ledger-2026-2.jsonl', 'notes.txt']) writeFileSync(join(dir, name), line);
      const r = ledger.read();
      assert.deepEqual(r.records.map((x) => x.live_id), ['real']);
      assert.equal(r.skipped, 0);
    });
    it('read(since) keeps a record that ends exactly at `since`', async () => {
      const ledger = createLedger({ dir: tmp() });
      const t = at(2026, 3, 5);
      await ledger.append(session(t - 1, { live_id: 'before' }));
      await ledger.append(session(t, { live_id: 'at' }));
      await ledger.append(spare(t + 1, { live_id: 'after' }));
      assert.deepEqual(ledger.read(t).records.map((x) => x.live_id), ['at', 'after']);
    });
  });
});

describe('totals and CSV', () => {
  const row = (sessions: number, credits: number) => ({ sessions, credits, billedSeconds: sessions * 50, unknownCredits: 0, demoSessions: 0 });

  it('today / last 7 days / month, by end time; unknown costs are counted apart', () => {
    const now = at(2026, 11, 23, 15);
    const records = [
      session(at(2026, 10, 30), { credits_cost: 900, billed_seconds: 600 }), // last month, 24 days ago: in none
      session(at(2026, 11, 1), { credits_cost: 30, billed_seconds: 20 }),
      session(at(2026, 11, 17, 9), { credits_cost: 15, billed_seconds: 10 }), // 6 days back: in the 7 days
      session(at(2026, 11, 16, 23), { credits_cost: 3, billed_seconds: 2 }), // 7 days back: not
      session(at(2026, 11, 23, 8), { credits_cost: 90, billed_seconds: 60 }),
      session(at(2026, 11, 23, 9), { credits_cost: 'unknown', billed_seconds: null }),
      session(at(2026, 11, 23, 16), { credits_cost: 1000 }), // after now: ignored
      { kind: 'spare' as const, v: 1 as const, at: new Date(at(2026, 11, 23, 10)).toISOString(), live_id: 'sp', surface: 'direct' as const, call_mode: 'video' as const, status: 'expired' as const },
    ];
    assert.deepEqual(totalsOf(records, now), {
      today: { sessions: 2, credits: 90, billedSeconds: 60, unknownCredits: 1, demoSessions: 0 },
      last7Days: { sessions: 3, credits: 105, billedSeconds: 70, unknownCredits: 1, demoSessions: 0 },
      month: { sessions: 5, credits: 138, billedSeconds: 92, unknownCredits: 1, demoSessions: 0 },
    });
  });
  it('a demo call counts apart, and only once it went live: a demo attempt cancelled while connecting is no call', () => {
    const now = at(2026, 11, 23, 15);
    const notLive = { live_at: null, time_to_live_ms: null, billed_seconds: 0, credits_cost: 0, end_reason: 'user_end' } as const;
    const records = [
      session(at(2026, 11, 23, 9), { surface: 'demo', credits_cost: 6, billed_seconds: 4 }), // went live
      session(at(2026, 11, 23, 10), { surface: 'demo', ...notLive }), // cancelled while connecting
      session(at(2026, 11, 23, 11), { surface: 'direct', ...notLive }), // a real attempt: counted as today
    ];
    const today = { sessions: 1, credits: 0, billedSeconds: 0, unknownCredits: 0, demoSessions: 1 };
    assert.deepEqual(totalsOf(records, now), { today, last7Days: today, month: today });
  });
  it('a session ending exactly now counts; one ending exactly at midnight counts for today', () => {
    const now = at(2026, 3, 18, 15);
    const midnight = at(2026, 3, 18, 0);
    assert.deepEqual(totalsOf([session(now), session(midnight), session(now + 1), session(midnight - 1)], now), {
      today: row(2, 150),
      last7Days: row(3, 225),
      month: row(3, 225),
    });
  });
  it('early in the month, the 7 days reach into the month before (read from the earlier of the two bounds)', async () => {
    const ledger = createLedger({ dir: tmp() });
    await ledger.append(session(at(2026, 2, 27), { credits_cost: 10 }));
    await ledger.append(session(at(2026, 3, 2), { credits_cost: 20 }));
    assert.deepEqual(ledger.totals(at(2026, 3, 3, 9)), { today: row(0, 0), last7Days: row(2, 30), month: row(1, 20) });
  });
  it('late in the month, the month reaches further back than the 7 days', async () => {
    const ledger = createLedger({ dir: tmp() });
    await ledger.append(session(at(2026, 3, 2), { credits_cost: 20 }));
    await ledger.append(session(at(2026, 3, 27), { credits_cost: 5 }));
    assert.deepEqual(ledger.totals(at(2026, 3, 28, 9)), { today: row(0, 0), last7Days: row(1, 5), month: row(2, 25) });
  });
  it('CSV: a header, one row per record, quoted and formula-safe', () => {
    const t = Date.UTC(2026, 10, 23, 12);
    const csv = toCsv([
      session(t, { live_id: 'x,1', end_reason: '=HYPERLINK("evil")' }),
      { kind: 'spare', v: 1, at: new Date(t).toISOString(), live_id: null, surface: 'demo', call_mode: 'audio', status: 'expired', reason: 'max_age' },
    ]);
    assert.deepEqual(csv.split('\r\n'), [
      'kind,start_at,live_at,end_at,live_id,surface,call_mode,time_to_live_ms,not_ready_retries,reconnects,end_reason,ended_by,billed_seconds,credits_cost,recovered,spare_status',
      'session,2026-11-23T11:59:00.000Z,2026-11-23T11:59:10.000Z,2026-11-23T12:00:00.000Z,"x,1",direct,video,10000,0,0,"\'=HYPERLINK(""evil"")",client,50,75,false,',
      'spare,,,2026-11-23T12:00:00.000Z,,demo,audio,,,,max_age,,0,0,,expired',
      '',
    ]);
  });
  it('csv(since) exports only the records from `since`', async () => {
    const ledger = createLedger({ dir: tmp() });
    await ledger.append(session(Date.UTC(2026, 2, 5, 12), { live_id: 'old' }));
    await ledger.append(session(Date.UTC(2026, 2, 6, 12), { live_id: 'new' }));
    const lines = ledger.csv(Date.UTC(2026, 2, 6)).split('\r\n');
    assert.equal(lines.length, 3);
    assert.equal(lines[1], 'session,2026-03-06T11:59:00.000Z,2026-03-06T11:59:10.000Z,2026-03-06T12:00:00.000Z,new,direct,video,10000,0,0,user_end,client,50,75,false,');
  });
  it('numbers stay numbers in the CSV: a negative time to live (clock set back) is not turned into text', () => {
    const t = Date.UTC(2026, 2, 6, 12);
    const [, line] = toCsv([session(t, { live_id: '-x', time_to_live_ms: -120, credits_cost: 0 })]).split('\r\n');
    assert.equal(line, "session,2026-03-06T11:59:00.000Z,2026-03-06T11:59:10.000Z,2026-03-06T12:00:00.000Z,'-x,direct,video,-120,0,0,user_end,client,50,0,false,");
  });
});

describe('ledger recorder (observes kiosk events)', () => {
  function run(events: (clock: FakeClock) => KioskEvent[], cause?: 'idle' | 'max_call' | 'visitor') {
    const clock = new FakeClock(Date.UTC(2026, 10, 23, 10));
    const ledger = createLedger({ dir: tmp() });
    const rec = createLedgerRecorder({ ledger, clock, surface: () => 'direct' });
    const start = clock.now();
    const evs = events(clock);
    for (const e of evs) {
      if (e.type === 'state' && e.state.phase === 'live' && cause) {
        clock.jump(40_000);
        rec.onEvent(e);
        rec.noteCause(cause, 'L1');
        continue;
      }
      rec.onEvent(e);
    }
    return { ledger, rec, start, clock };
  }

  it('a call\'s field figures (sent just before its terminal state) are on its record', async () => {
    const figures = {
      liveId: 'L1',
      callMode: 'audio' as const,
      tapToRtcReadyMs: 420,
      tapToConnInitAckMs: 480,
      tapToAvatarPublishedMs: 510,
      tapToFirstFrameMs: null,
      tapToFirstAudioMs: 700,
      joinMs: 390,
      proxy: 'tcp' as const,
      endReason: 'user_end',
    };
    const { ledger, rec } = run((clock) => [
      { type: 'state', state: { phase: 'creating' }, previous: 'idle' },
      { type: 'state', state: { phase: 'live', liveId: 'L1', sinceMs: clock.now() + 480, endsAtMs: clock.now() + 600_480 }, previous: 'connecting' },
      { type: 'call-figures', figures },
      { type: 'state', state: { phase: 'ended', liveId: 'L1', summary: sessionSummary() }, previous: 'ending' },
    ]);
    await rec.flush();
    const [record] = ledger.read().records;
    assert.ok(record?.kind === 'session');
    assert.deepEqual(record.figures, {
      tap_to_rtc_ready_ms: 420,
      tap_to_conn_init_ack_ms: 480,
      tap_to_avatar_published_ms: 510,
      tap_to_first_frame_ms: null,
      tap_to_first_audio_ms: 700,
      join_ms: 390,
      proxy: 'tcp',
    });
  });
  it('writes one record per session from its events and summary; idle is recorded as the end reason', async () => {
    const { ledger, rec, start } = run(
      (clock) => [
        { type: 'state', state: { phase: 'creating' }, previous: 'idle' },
        { type: 'credentials', liveId: 'L1', callMode: 'audio', liveDurationS: 600, rtc: { appId: 'a', channelId: 'c', userId: 'u', token: 't', tokenExpireAt: '0' } as never },
        { type: 'state', state: { phase: 'live', liveId: 'L1', sinceMs: clock.now() + 6_200, endsAtMs: clock.now() + 606_200 }, previous: 'connecting' },
        { type: 'state', state: { phase: 'ended', liveId: 'L1', summary: sessionSummary() }, previous: 'ending' },
      ],
      'idle',
    );
    await rec.flush();
    const r = ledger.read();
    assert.deepEqual(r.records, [
      {
        kind: 'session',
        v: 1,
        start_at: new Date(start).toISOString(),
        live_at: new Date(start + 6_200).toISOString(),
        end_at: new Date(start + 40_000).toISOString(),
        live_id: 'L1',
        surface: 'direct',
        call_mode: 'audio',
        time_to_live_ms: 6_200,
        not_ready_retries: 2,
        reconnects: 1,
        end_reason: 'idle',
        ended_by: 'client',
        billed_seconds: 46,
        credits_cost: 69,
        recovered: false,
      },
    ]);
  });
  it('a server hangup keeps the server reason even if a cause was noted; unreadable billing is "unknown"', async () => {
    const { ledger, rec } = run(
      (clock) => [
        { type: 'state', state: { phase: 'creating' }, previous: 'idle' },
        { type: 'state', state: { phase: 'live', liveId: 'L1', sinceMs: clock.now(), endsAtMs: clock.now() + 1 }, previous: 'connecting' },
        { type: 'state', state: { phase: 'ended', liveId: 'L1', summary: sessionSummary({ hangupReason: 'timeout', endedBy: 'server', billedSeconds: null, creditsCost: null }) }, previous: 'live' },
      ],
      'max_call',
    );
    await rec.flush();
    const [r] = ledger.read().records as SessionRecord[];
    assert.equal(r!.end_reason, 'timeout');
    assert.equal(r!.credits_cost, 'unknown');
    assert.equal(r!.billed_seconds, null);
  });
  it('a failure before going live costs nothing and records the error code; spares get their own records', async () => {
    const { ledger, rec } = run(() => [
      { type: 'state', state: { phase: 'creating' }, previous: 'idle' },
      { type: 'state', state: { phase: 'failed', liveId: null, error: { code: 'insufficient_credits', message: 'x' }, summary: null }, previous: 'creating' },
      { type: 'spare', status: 'expired', liveId: 'S9', callMode: 'video', reason: 'max_age' },
    ]);
    await rec.flush();
    const records = ledger.read().records;
    assert.equal(records.length, 2);
    const [s, sp] = records as [SessionRecord, unknown];
    assert.deepEqual([s.end_reason, s.error_code, s.billed_seconds, s.credits_cost, s.live_id], ['insufficient_credits', 'insufficient_credits', 0, 0, null]);
    assert.deepEqual(sp, { kind: 'spare', v: 1, at: new Date(Date.UTC(2026, 10, 23, 10)).toISOString(), live_id: 'S9', surface: 'direct', call_mode: 'video', status: 'expired', reason: 'max_age' });
  });

  describe('when events come in a less usual order', () => {
    const T0 = Date.UTC(2026, 2, 5, 10);
    // The records these tests expect carry no not-ready retries or reconnects.
    const summary = (over: Partial<SessionSummary> = {}): SessionSummary => sessionSummary({ notReadyRetries: 0, reconnects: 0, ...over });
    const iso = (ms: number) => new Date(ms).toISOString();

    function recorder(over: { avatar?: () => string | null; logger?: Logger; dir?: string } = {}) {
      const clock = new FakeClock(T0);
      const ledger = createLedger({ dir: over.dir ?? tmp() });
      const rec = createLedgerRecorder({ ledger, clock, surface: () => 'gateway', ...over });
      const feed = (...events: Array<KioskEvent | number>) => {
        for (const e of events) if (typeof e === 'number') clock.jump(e);
        else rec.onEvent(e);
      };
      const records = async () => {
        await rec.flush();
        return ledger.read().records;
      };
      return { clock, rec, feed, records };
    }
    const state = (s: Extract<KioskEvent, { type: 'state' }>['state']): KioskEvent => ({ type: 'state', state: s, previous: 'idle' });
    const creating = state({ phase: 'creating' });
    const live = (sinceMs: number, liveId = 'L1') => state({ phase: 'live', liveId, sinceMs, endsAtMs: sinceMs + 600_000 });

    it('a failure after going live, hung up by us: the failure is the reason and the summary\'s billing is kept', async () => {
      const { feed, records } = recorder({ avatar: () => 'mara' });
      feed(creating, 6_000, live(T0 + 6_000), 30_000);
      feed(state({ phase: 'failed', liveId: 'L1', error: { code: 'media_unavailable', message: 'x' }, summary: summary({ callMode: 'video', hangupReason: 'user_end', endedBy: 'client' }) }));
      assert.deepEqual(await records(), [
        {
          kind: 'session',
          v: 1,
          start_at: iso(T0),
          live_at: iso(T0 + 6_000),
          end_at: iso(T0 + 36_000),
          live_id: 'L1',
          surface: 'gateway',
          call_mode: 'video',
          time_to_live_ms: 6_200,
          not_ready_retries: 0,
          reconnects: 0,
          end_reason: 'media_unavailable',
          ended_by: 'client',
          billed_seconds: 46,
          credits_cost: 69,
          recovered: false,
          error_code: 'media_unavailable',
          avatar: 'mara',
        },
      ]);
    });

    it('a failure the server ended keeps the server\'s reason', async () => {
      const { feed, records } = recorder();
      feed(creating, live(T0), state({ phase: 'failed', liveId: 'L1', error: { code: 'content_blocked', message: 'x' }, summary: summary({ hangupReason: 'audit_violation', endedBy: 'server' }) }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual([r!.end_reason, r!.error_code, r!.ended_by], ['audit_violation', 'content_blocked', 'server']);
    });

    it('a failure after going live with no summary: the time to live is measured here and the cost is unknown', async () => {
      const { feed, records } = recorder();
      feed(creating, 4_500, live(T0 + 4_500), 10_000, state({ phase: 'failed', liveId: 'L1', error: { code: 'connection_lost', message: 'x' }, summary: null }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual(
        [r!.live_at, r!.time_to_live_ms, r!.end_reason, r!.billed_seconds, r!.credits_cost, r!.call_mode],
        [iso(T0 + 4_500), 4_500, 'connection_lost', null, 'unknown', 'video'],
      );
    });

    it('a failure before going live with no summary: no live time, nothing billed, the credentials\' id and mode', async () => {
      const { feed, records } = recorder();
      feed(creating, { type: 'credentials', liveId: 'L9', callMode: 'audio', liveDurationS: 600, rtc: {} as never }, 2_000);
      feed(state({ phase: 'failed', liveId: null, error: { code: 'not_ready', message: 'x' }, summary: null }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual(
        [r!.live_id, r!.call_mode, r!.live_at, r!.time_to_live_ms, r!.billed_seconds, r!.credits_cost, r!.end_reason, r!.avatar],
        ['L9', 'audio', null, null, 0, 0, 'not_ready', undefined],
      );
    });

    it('an end with no hangup reason and no error is recorded as "unknown"; the summary\'s call mode wins over none', async () => {
      const { feed, records } = recorder();
      feed(creating, live(T0), state({ phase: 'ended', liveId: 'L1', summary: summary({ hangupReason: null, endedBy: null }) }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual([r!.end_reason, r!.ended_by, r!.call_mode], ['unknown', null, 'audio']);
    });

    it('the first live time is kept across a reconnect; the live id comes from the states', async () => {
      const { feed, records } = recorder();
      feed(creating, 1_000, state({ phase: 'connecting', liveId: 'L5', attempt: 1 }), 2_000, live(T0 + 3_000, 'L5'), 5_000);
      feed(state({ phase: 'reconnecting', liveId: 'L5', attempt: 1, sinceMs: T0 + 3_000, endsAtMs: T0 + 603_000 }), 2_000, live(T0 + 10_000, 'L5'));
      feed(state({ phase: 'failed', liveId: null, error: { code: 'connection_lost', message: 'x' }, summary: null }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual([r!.live_id, r!.live_at, r!.time_to_live_ms], ['L5', iso(T0 + 3_000), 3_000]);
    });

    it('a state without a live id does not erase the one from the credentials', async () => {
      const { feed, records } = recorder();
      feed(creating, { type: 'credentials', liveId: 'L2', callMode: 'video', liveDurationS: 600, rtc: {} as never });
      feed(state({ phase: 'failed', liveId: null, error: { code: 'network', message: 'x' }, summary: null }));
      const [r] = (await records()) as SessionRecord[];
      assert.equal(r!.live_id, 'L2');
    });

    it('idle between calls starts nothing: a session first seen when it connects starts then', async () => {
      const { feed, records } = recorder();
      feed(state({ phase: 'idle' }), 7_000, state({ phase: 'connecting', liveId: 'L3', attempt: 1 }), 1_000);
      feed(state({ phase: 'failed', liveId: 'L3', error: { code: 'network', message: 'x' }, summary: null }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual([r!.start_at, r!.end_at, r!.live_id], [iso(T0 + 7_000), iso(T0 + 8_000), 'L3']);
    });

    it('credentials seen before any state start the session then (the recorder joined mid-call), with the avatar', async () => {
      const { feed, records } = recorder({ avatar: () => 'kai' });
      feed({ type: 'credentials', liveId: 'L4', callMode: 'audio', liveDurationS: 600, rtc: {} as never }, 3_000, live(T0 + 3_000, 'L4'), 10_000);
      feed(state({ phase: 'ended', liveId: 'L4', summary: summary({ liveId: 'L4' }) }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual([r!.start_at, r!.live_id, r!.avatar], [iso(T0), 'L4', 'kai']);
    });

    it('credentials before any state without an avatar source record no avatar', async () => {
      const { feed, records } = recorder();
      feed({ type: 'credentials', liveId: 'L4', callMode: 'audio', liveDurationS: 600, rtc: {} as never }, state({ phase: 'failed', liveId: 'L4', error: { code: 'network', message: 'x' }, summary: null }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual([r!.live_id, r!.avatar, r!.call_mode], ['L4', undefined, 'audio']);
    });

    it('a new creating starts a fresh record, even if the last attempt never reached an end', async () => {
      const { feed, records } = recorder();
      feed(creating, live(T0, 'L1'), 20_000, creating, 1_000);
      feed(state({ phase: 'failed', liveId: null, error: { code: 'network', message: 'x' }, summary: null }));
      const [r] = (await records()) as SessionRecord[];
      assert.deepEqual([r!.start_at, r!.live_id, r!.live_at, r!.credits_cost], [iso(T0 + 20_000), null, null, 0]);
    });

    it('figures reported after the end, and other events, touch no record and throw nothing', async () => {
      const figures = { liveId: 'L1', callMode: 'audio' as const, tapToRtcReadyMs: 1, tapToConnInitAckMs: 2, tapToAvatarPublishedMs: 3, tapToFirstFrameMs: 4, tapToFirstAudioMs: 5, joinMs: 6, proxy: 'off' as const, endReason: 'user_end' };
      const { feed, records } = recorder();
      feed({ type: 'muted', muted: true }, { type: 'call-figures', figures });
      feed(creating, live(T0), { type: 'call-figures', figures }, { type: 'muted', muted: false }, { type: 'hold', hold: null });
      feed(state({ phase: 'ended', liveId: 'L1', summary: summary() }), { type: 'call-figures', figures }, { type: 'muted', muted: true });
      const all = (await records()) as SessionRecord[];
      assert.equal(all.length, 1);
      assert.deepEqual(all[0]!.figures, { tap_to_rtc_ready_ms: 1, tap_to_conn_init_ack_ms: 2, tap_to_avatar_published_ms: 3, tap_to_first_frame_ms: 4, tap_to_first_audio_ms: 5, join_ms: 6, proxy: 'off' });
    });

    describe('the cause of our own hangup', () => {
      const ended = state({ phase: 'ended', liveId: 'L1', summary: summary() });

      it('a cause noted between calls is dropped, not kept for the next call', async () => {
        const { feed, rec, records } = recorder();
        rec.noteCause('idle', null);
        feed(creating, live(T0), ended);
        assert.equal(((await records()) as SessionRecord[])[0]!.end_reason, 'user_end');
      });

      it('the visitor\'s own hangup keeps the summary\'s reason', async () => {
        const { feed, rec, records } = recorder();
        feed(creating, live(T0));
        rec.noteCause('visitor', 'L1');
        feed(ended);
        assert.equal(((await records()) as SessionRecord[])[0]!.end_reason, 'user_end');
      });

      it('a cause for another call is ignored; one for any call (null) or for this one applies', async () => {
        const other = recorder();
        other.feed(creating, live(T0));
        other.rec.noteCause('idle', 'L-old');
        other.feed(ended);
        const any = recorder();
        any.feed(creating, live(T0));
        any.rec.noteCause('idle', null);
        any.feed(ended);
        const same = recorder();
        same.feed(creating, live(T0));
        same.rec.noteCause('max_call', 'L1');
        same.feed(ended);
        const reasons = [other, any, same].map(async (r) => ((await r.records()) as SessionRecord[])[0]!.end_reason);
        assert.deepEqual(await Promise.all(reasons), ['user_end', 'idle', 'max_call']);
      });

      it('a cause noted before the live id is known applies to the call', async () => {
        const { feed, rec, records } = recorder();
        feed(creating);
        rec.noteCause('idle', 'L1');
        feed({ type: 'credentials', liveId: 'L1', callMode: 'video', liveDurationS: 600, rtc: {} as never }, live(T0), ended);
        assert.equal(((await records()) as SessionRecord[])[0]!.end_reason, 'idle');
      });

      it('a call that failed with no summary after our hangup records why we hung up', async () => {
        const { feed, rec, records } = recorder();
        feed(creating, live(T0));
        rec.noteCause('max_call', 'L1');
        feed(state({ phase: 'failed', liveId: 'L1', error: { code: 'network', message: 'x' }, summary: null }));
        const [r] = (await records()) as SessionRecord[];
        assert.deepEqual([r!.end_reason, r!.error_code], ['max_call', 'network']);
      });
    });

    it('a record that cannot be written is logged as lost, to the logger given', async () => {
      const parent = tmp();
      const notADir = join(parent, 'file');
      writeFileSync(notADir, 'x');
      const logger = recordingLogger();
      const { feed, rec } = recorder({ logger, dir: notADir });
      feed({ type: 'spare', status: 'created', liveId: 'S1', callMode: 'video' });
      await rec.flush();
      assert.equal(logger.lines.length, 1);
      assert.match(logger.lines[0]!, /^error Ledger: record lost \{"error":"Error: (EEXIST|ENOTDIR)/);
      assert.equal(readFileSync(notADir, 'utf8'), 'x');
    });
  });
});
