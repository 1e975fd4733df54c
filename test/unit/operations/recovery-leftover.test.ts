/**
 * recoverLeftover (recovery.ts) on a scripted service: a leftover that is still running is hung up (one
 * type 5, no conn_init) and its final billing waited for on the injected clock; what the ledger gets
 * (credits are money: `unknown` unless the service said what it cost) and what the operator reads in
 * the log, for every way the check can go. The test plays the service: query answers and the socket.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { LiveRecord } from '../../../electron/core/protocol.ts';
import type { ServiceClient } from '../../../electron/core/rest-client.ts';
import type { TransportFactory } from '../../../electron/core/transport.ts';
import type { Ledger, SessionRecord } from '../../../electron/operations/ledger.ts';
import { recoverLeftover, type CurrentSession } from '../../../electron/operations/recovery.ts';
import { FakeTransports, type FakeTransport } from '../../helpers/fake-transport.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';
import { driveUntilSettled, until } from '../../helpers/until.ts';

const T0 = 1_700_000_000_000;
const NOW = T0 + 600_000;
const tempDir = tempDirsRemovedAfterEach('kiosk-recover-');

const LEFTOVER: CurrentSession = { v: 1, liveId: 'live-9', surface: 'direct', serviceUrl: 'https://svc.test', callMode: 'video', startAtMs: T0, liveAtMs: T0 + 4_000 };
const live = (status: string, over: Partial<LiveRecord> = {}): LiveRecord => ({ id: 'live-9', status, created_at: undefined, started_at: undefined, ended_at: undefined, ...over });

type Answer = LiveRecord | Error | ((n: number) => LiveRecord | Error);

/** Everything a recovery needs, scripted: `answers` are the query endpoint's replies in order (the last repeats). */
function rig(options: { answers?: Answer[]; leftover?: Partial<CurrentSession>; noClient?: boolean; ledgerFails?: boolean; autoOpen?: boolean } = {}) {
  const path = join(tempDir(), 'current-session.json');
  writeFileSync(path, JSON.stringify({ ...LEFTOVER, ...options.leftover }));
  const clock = new FakeClock(NOW);
  const logger = recordingLogger();
  const transports = new FakeTransports();
  const factory: TransportFactory = (url, headers, handlers) => {
    const t = transports.factory(url, headers, handlers) as FakeTransport;
    if (options.autoOpen !== false) queueMicrotask(() => t.open());
    return t;
  };
  const answers = [...(options.answers ?? [])];
  const queries: number[] = [];
  const client = {
    socketRequest: (liveId: string) => ({ url: `wss://svc.test/live/ws?live_id=${liveId}`, headers: { Authorization: 'Token k' } }),
    querySession: async (liveId: string) => {
      assert.equal(liveId, 'live-9');
      queries.push(clock.now());
      const a = answers.length > 1 ? answers.shift()! : answers[0]!;
      const r = typeof a === 'function' ? a(queries.length) : a;
      if (r instanceof Error) throw r;
      return r;
    },
  } as unknown as ServiceClient;
  const records: SessionRecord[] = [];
  const ledger = {
    append: async (r: SessionRecord) => {
      if (options.ledgerFails) throw new Error('disk full');
      records.push(r);
    },
  } as unknown as Ledger;
  const clients: CurrentSession[] = [];
  const run = (extra: { pollMs?: number; queryTimeoutMs?: number } = {}) =>
    recoverLeftover({
      path,
      ledger,
      clientFor: (l) => (clients.push(l), options.noClient ? null : client),
      clock,
      logger,
      transportFactory: factory,
      ...extra,
    });
  return { path, clock, logger, transports, queries, records, clients, run };
}

/** The record every recovery writes, with what this case found. */
const record = (over: Partial<SessionRecord>): SessionRecord => ({
  kind: 'session',
  v: 1,
  start_at: new Date(T0).toISOString(),
  live_at: new Date(T0 + 4_000).toISOString(),
  end_at: new Date(NOW).toISOString(),
  live_id: 'live-9',
  surface: 'direct',
  call_mode: 'video',
  time_to_live_ms: 4_000,
  not_ready_retries: 0,
  reconnects: 0,
  end_reason: 'app_crash',
  ended_by: null,
  billed_seconds: null,
  credits_cost: 'unknown',
  recovered: true,
  ...over,
});

const checking = { level: 'warn', message: 'A session was left over from the last run; checking it', data: { liveId: 'live-9', surface: 'direct' } };
const recovered = (data: Record<string, unknown>) => ({ level: 'info', message: 'Leftover session recovered', data: { liveId: 'live-9', ...data } });

describe('recoverLeftover', () => {
  it('a session still running: one type 5 without conn_init, the final billing read, recorded as ended by the kiosk', async () => {
    const h = rig({ answers: [live('live', { credits_cost: 1 }), live('ended', { billed_seconds: 42, credits_cost: 7 })] });
    const outcome = await h.run();
    assert.equal(h.transports.all.length, 1);
    assert.equal(h.transports.last.url, 'wss://svc.test/live/ws?live_id=live-9');
    assert.deepEqual(h.transports.last.frames(), [{ type: 5, live_id: 'live-9', seq_id: 1, payload: { hangup: { hangup_reason: 'user_end' } } }]);
    const expected = record({ ended_by: 'client', billed_seconds: 42, credits_cost: 7 });
    assert.deepEqual(outcome, { liveId: 'live-9', hungUp: true, record: expected });
    assert.deepEqual(h.records, [expected]);
    assert.equal(h.queries.length, 2);
    assert.equal(existsSync(h.path), false);
    assert.deepEqual(h.logger.lines, [checking, recovered({ hungUp: true, ended: true, billedSeconds: 42, creditsCost: 7 })]);
  });

  it('the leftover as read from the file is what the client is built for', async () => {
    const h = rig({ leftover: { surface: 'gateway', serviceUrl: 'https://gw.test' }, answers: [live('ended', { billed_seconds: 3, credits_cost: 1 })] });
    await h.run();
    assert.deepEqual(h.clients, [{ ...LEFTOVER, surface: 'gateway', serviceUrl: 'https://gw.test' }]);
  });

  it('an ended billing without a cost is recorded as unknown, never as a missing cost', async () => {
    const h = rig({ answers: [live('live'), live('ended', { billed_seconds: 42 })] });
    const outcome = await h.run();
    assert.deepEqual(outcome!.record, record({ ended_by: 'client', billed_seconds: 42, credits_cost: 'unknown' }));
    const ended = rig({ answers: [live('ended', { billed_seconds: 5, credits_cost: null })] });
    assert.deepEqual((await ended.run())!.record, record({ ended_by: 'server', billed_seconds: 5, credits_cost: 'unknown' }));
  });

  it('the hangup socket fails: not hung up, still waits for the billing, and says why in the log', async () => {
    const h = rig({ autoOpen: false, answers: [live('live'), live('ended', { billed_seconds: 10, credits_cost: 2 })] });
    const outcome = h.run();
    await until(() => h.transports.all.length === 1);
    h.transports.last.fail(new AvatarError('forbidden', 'refused'));
    const result = await outcome;
    assert.deepEqual(result!.record, record({ ended_by: 'server', billed_seconds: 10, credits_cost: 2 }));
    assert.equal(result!.hungUp, false);
    assert.deepEqual(h.logger.lines, [
      checking,
      { level: 'warn', message: 'remote hangup: the socket ended before the hangup was sent', data: { outcome: 'error' } },
      recovered({ hungUp: false, ended: true, billedSeconds: 10, creditsCost: 2 }),
    ]);
  });

  it('polls the billing every pollMs on the injected clock, and query failures reach the log', async () => {
    const h = rig({ answers: [live('live'), new AvatarError('network', 'down'), live('ending'), live('ended', { billed_seconds: 42, credits_cost: 7 })] });
    const outcome = h.run({ pollMs: 100 });
    await until(() => h.queries.length === 2);
    await h.clock.advance(99);
    assert.equal(h.queries.length, 2);
    await h.clock.advance(1);
    await until(() => h.queries.length === 3);
    await h.clock.advance(100);
    const result = await outcome;
    assert.deepEqual(h.queries, [NOW, NOW, NOW + 100, NOW + 200]);
    assert.equal(result!.record.billed_seconds, 42);
    assert.deepEqual(h.logger.lines[1], { level: 'warn', message: 'remote hangup: query failed', data: { code: 'network' } });
  });

  it('gives up on the billing after queryTimeoutMs: hung up, but cost and billed time unknown', async () => {
    const h = rig({ answers: [live('live'), live('ending', { billed_seconds: 30, credits_cost: 5 })] });
    const result = await driveUntilSettled(h.clock, h.run({ pollMs: 100, queryTimeoutMs: 300 }), { stepMs: 50, maxFakeMs: 2_000 });
    assert.deepEqual(h.queries, [NOW, NOW, NOW + 100, NOW + 200, NOW + 300]);
    assert.deepEqual(result!.record, record({ end_at: new Date(NOW + 300).toISOString(), ended_by: 'client', billed_seconds: null, credits_cost: 'unknown' }));
    assert.deepEqual(h.logger.lines.at(-1), recovered({ hungUp: true, ended: false, billedSeconds: null, creditsCost: 'unknown' }));
  });

  it('the check fails: recorded with the error code and unknown cost, and the operator is told', async () => {
    const h = rig({ answers: [new AvatarError('forbidden', 'no')] });
    const result = await h.run();
    assert.equal(h.transports.all.length, 0, 'nothing is hung up blind');
    assert.deepEqual(result, { liveId: 'live-9', hungUp: false, record: record({ error_code: 'forbidden' }) });
    assert.deepEqual(h.logger.lines, [
      checking,
      { level: 'warn', message: 'Could not check the leftover session', data: { liveId: 'live-9', code: 'forbidden' } },
      recovered({ hungUp: false, ended: false, billedSeconds: null, creditsCost: 'unknown' }),
    ]);
  });

  it('no client for its service: recorded as not ended, unknown cost, unreachable', async () => {
    const h = rig({ noClient: true, leftover: { surface: 'demo', serviceUrl: null, liveAtMs: null } });
    const result = await h.run();
    assert.deepEqual(result!.record, record({ surface: 'demo', live_at: null, time_to_live_ms: null, ended_by: null, error_code: 'unreachable' }));
    assert.deepEqual(h.logger.lines, [
      { ...checking, data: { liveId: 'live-9', surface: 'demo' } },
      { level: 'warn', message: 'The leftover session cannot be checked (its service is not available now)', data: { liveId: 'live-9', surface: 'demo' } },
      recovered({ hungUp: false, ended: false, billedSeconds: null, creditsCost: 'unknown' }),
    ]);
    assert.equal(existsSync(h.path), false);
  });

  it('live and time-to-live come from the journal (never live: both null)', async () => {
    const late = rig({ leftover: { startAtMs: T0 + 1_000, liveAtMs: T0 + 7_500 }, answers: [live('ended', { billed_seconds: 1, credits_cost: 1 })] });
    const r1 = (await late.run())!.record;
    assert.deepEqual([r1.start_at, r1.live_at, r1.time_to_live_ms], [new Date(T0 + 1_000).toISOString(), new Date(T0 + 7_500).toISOString(), 6_500]);
    const never = rig({ leftover: { liveAtMs: null }, answers: [live('ended', { billed_seconds: 0, credits_cost: 0 })] });
    const r2 = (await never.run())!.record;
    assert.deepEqual([r2.live_at, r2.time_to_live_ms, r2.billed_seconds, r2.credits_cost, r2.ended_by], [null, null, 0, 0, 'server']);
  });

  it('a ledger that cannot write: logged as an error, the journal still removed, no throw', async () => {
    const h = rig({ ledgerFails: true, answers: [live('ended', { billed_seconds: 1, credits_cost: 1 })] });
    const result = await h.run();
    assert.equal(result!.record.credits_cost, 1);
    assert.equal(existsSync(h.path), false);
    assert.deepEqual(h.logger.lines[1], { level: 'error', message: 'Could not record the recovered session', data: { error: 'Error: disk full' } });
  });

  it('a journal removed by someone else during the check is not an error', async () => {
    const h = rig({
      answers: [
        () => {
          rmSync(h.path);
          return live('ended', { billed_seconds: 1, credits_cost: 1 });
        },
      ],
    });
    const result = await h.run();
    assert.equal(h.records.length, 1);
    assert.equal(result!.hungUp, false);
  });
});
