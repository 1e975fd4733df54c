import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { KioskEvent } from '../../../electron/contract.ts';
import { FakeClock } from '../../../electron/core/clock.ts';
import { createLedger, createLedgerRecorder, monthFileName, parseLedger, toCsv, totalsOf, type SessionRecord } from '../../../electron/operations/ledger.ts';
import { at, session, sessionSummary } from '../../helpers/ledger-records.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'kiosk-ledger-'));

describe('ledger file', () => {
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

  it('never writes a record the reader would skip', async () => {
    const ledger = createLedger({ dir: tmp() });
    await assert.rejects(ledger.append({ ...session(at(2026, 11, 5)), credits_cost: 'free' as never }));
  });
});

describe('totals and CSV', () => {
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
});
