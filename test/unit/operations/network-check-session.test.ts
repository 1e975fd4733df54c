/**
 * The video-network check's test session, in-process with a scripted service, in-memory sockets and a
 * FakeClock: the ticket, the report (closed? what it cost? billed?), which check a report belongs to,
 * the timeout that closes a session the screen never reported on, and the operator's log lines.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { LiveRecord } from '../../../electron/core/protocol.ts';
import type { ServiceClient } from '../../../electron/core/rest-client.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { createNetworkCheck, type NetworkCheckOptions } from '../../../electron/operations/network-check.ts';
import { autoAnsweringTransports } from '../../helpers/fake-transport.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { driveUntilSettled, until } from '../../helpers/until.ts';

const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const T0 = 1_700_000_000_000;
const config = resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' }, rtc: { cloudProxy: 'tcp' } }, {});
const OUTCOME = { ok: true, joinMs: 412, state: 'connected' as const, proxy: 'tcp' as const, message: 'Joined the video network.' };

const rtcFor = (id: string) => ({ app_id: 'app', channel_id: `ch-${id}`, user_id: 'u1', token: 'tok', token_expire_at: '1700000300' });
/** A query answer with only the fields given (as the service may send them). */
const record = (id: string, fields: Partial<LiveRecord>) => ({ id, ...fields }) as LiveRecord;
const waiting = (id: string) => record(id, { status: 'waiting' });
const ended = (id: string, fields: Partial<LiveRecord> = {}) => record(id, { status: 'ended', billed_seconds: 0, credits_cost: 0, ...fields });

/**
 * A scripted service: sessions live-1, live-2, … ; `answers(id)` gives the query answers in order (the
 * last one repeats; an error is thrown). Its socket URL points at a closed port, so a check that did not
 * use the injected transports could not deliver the hang-up. `createGate` holds a create until released.
 */
function scriptedService(clock: FakeClock, answers: (id: string) => Array<LiveRecord | AvatarError> = (id) => [ended(id)]) {
  let n = 0;
  const queue = new Map<string, Array<LiveRecord | AvatarError>>();
  const queried: Array<{ id: string; at: number }> = [];
  const gates: Array<() => void> = [];
  let holdCreates = false;
  const client = {
    async createSession() {
      if (holdCreates) await new Promise<void>((resolve) => gates.push(resolve));
      const id = `live-${++n}`;
      return { live: { id, status: 'waiting', live_duration: 300, call_mode: 'audio' }, rtc: rtcFor(id) };
    },
    async querySession(id: string) {
      queried.push({ id, at: clock.now() - T0 });
      if (!queue.has(id)) queue.set(id, [...answers(id)]);
      const list = queue.get(id)!;
      const next = list.length > 1 ? list.shift()! : list[0]!;
      if (next instanceof Error) throw next;
      return next;
    },
    socketRequest(id: string) {
      return { url: `ws://127.0.0.1:1/live/ws?live_id=${id}`, headers: { Authorization: 'Token k' } };
    },
  } as unknown as ServiceClient;
  return {
    client,
    queried,
    hold: () => (holdCreates = true),
    held: () => gates.length,
    release: () => gates.shift()!(),
  };
}

function setup(answers?: Parameters<typeof scriptedService>[1], socket: 'open' | 'refuse' = 'open', options: NetworkCheckOptions = {}) {
  const clock = new FakeClock(T0);
  const logger = recordingLogger();
  const service = scriptedService(clock, answers);
  const { transports, factory } = autoAnsweringTransports(socket);
  const check = createNetworkCheck({ clock, logger, transportFactory: factory, ...options });
  const drive = <T>(p: Promise<T>) => driveUntilSettled(clock, p, { stepMs: 250 });
  /** The type of each frame sent on the control socket of the session `id`. */
  const framesOf = (id: string) => transports.all.filter((t) => t.url.endsWith(`live_id=${id}`)).flatMap((t) => t.frames().map((f) => f.type));
  return { clock, logger, service, transports, check, drive, framesOf };
}

const closedLine = (liveId: string, sent: boolean) => ({ level: 'info', message: 'Network check: test session closed with type 5', data: { liveId, sent } });
const OVER = { code: 'invalid_request', message: 'That network check is over (it took too long, or another one started). Start it again.' };

describe('network check: start', () => {
  it('refuses without a service client, with the reason', async () => {
    const { check } = setup();
    await assert.rejects(check.start(null, config), {
      name: 'AvatarError',
      code: 'invalid_config',
      message: 'The avatar service is not configured, so the video network cannot be checked.',
    });
  });

  it('hands the test session’s id, RTC credentials and the configured cloud proxy; nothing is sent yet', async () => {
    const { check, service, transports } = setup();
    const ticket = await check.start(service.client, config);
    assert.deepEqual(ticket, { checkId: 'live-1', rtc: rtcFor('live-1'), cloudProxy: 'tcp' });
    assert.equal(transports.all.length, 0);
    assert.deepEqual(service.queried, []);
  });
});

describe('network check: finish', () => {
  it('ends the session with type 5 only, polls every 250 ms on the clock until ended, and reports 0 credits', async () => {
    const { check, service, drive, framesOf, logger } = setup((id) => [waiting(id), ended(id)]);
    const ticket = await check.start(service.client, config);
    const report = await drive(check.finish(ticket.checkId, OUTCOME));
    assert.deepEqual(report, { ...OUTCOME, sessionClosed: true, creditsCost: 0 });
    assert.deepEqual(framesOf('live-1'), [5]);
    assert.deepEqual(service.queried, [{ id: 'live-1', at: 0 }, { id: 'live-1', at: 250 }], 'polled on the injected clock, every 250 ms');
    assert.deepEqual(logger.lines, [closedLine('live-1', true)]);
  });

  it('keeps the screen’s failure as it is when nothing was billed', async () => {
    const { check, service, drive } = setup();
    const ticket = await check.start(service.client, config);
    const failed = { ok: false, joinMs: null, state: 'failed' as const, proxy: 'tcp' as const, message: 'Could not join the video network.' };
    assert.deepEqual(await drive(check.finish(ticket.checkId, failed)), { ...failed, sessionClosed: true, creditsCost: 0 });
  });

  it('a hang-up that cannot be delivered is reported as not closed', async () => {
    const { check, service, drive, logger, transports } = setup(undefined, 'refuse');
    const ticket = await check.start(service.client, config);
    const report = await drive(check.finish(ticket.checkId, OUTCOME));
    assert.deepEqual(report, { ...OUTCOME, sessionClosed: false, creditsCost: 0 });
    assert.deepEqual(transports.last.sent, []);
    assert.deepEqual(logger.lines.filter((l) => l.level === 'info'), [closedLine('live-1', false)]);
  });

  it('a final record without a cost reports the cost as unknown (null)', async () => {
    const { check, service, drive } = setup((id) => [record(id, { status: 'ended' })]);
    const ticket = await check.start(service.client, config);
    assert.deepEqual(await drive(check.finish(ticket.checkId, OUTCOME)), { ...OUTCOME, sessionClosed: true, creditsCost: null });
  });

  it('a session the service no longer knows: still reported, closed, cost unknown', async () => {
    const { check, service, drive } = setup(() => [new AvatarError('not_found', 'No such session.', { status: 404 })]);
    const ticket = await check.start(service.client, config);
    assert.deepEqual(await drive(check.finish(ticket.checkId, OUTCOME)), { ...OUTCOME, sessionClosed: true, creditsCost: null });
  });

  it('credits charged turn the report into a failure that says so', async () => {
    const { check, service, drive } = setup((id) => [ended(id, { billed_seconds: 0, credits_cost: 3 })]);
    const ticket = await check.start(service.client, config);
    assert.deepEqual(await drive(check.finish(ticket.checkId, OUTCOME)), {
      ...OUTCOME,
      ok: false,
      message: 'The test session was billed (0 s, 3 credits) although it never went live.',
      sessionClosed: true,
      creditsCost: 3,
    });
  });

  it('billed seconds alone also turn the report into a failure', async () => {
    const { check, service, drive } = setup((id) => [ended(id, { billed_seconds: 4, credits_cost: 0 })]);
    const ticket = await check.start(service.client, config);
    assert.deepEqual(await drive(check.finish(ticket.checkId, OUTCOME)), {
      ...OUTCOME,
      ok: false,
      message: 'The test session was billed (4 s, 0 credits) although it never went live.',
      sessionClosed: true,
      creditsCost: 0,
    });
  });

  it('a report for another check is refused and leaves the open one alone', async () => {
    const { check, service, drive, transports } = setup();
    const ticket = await check.start(service.client, config);
    await assert.rejects(check.finish('live-99', OUTCOME), OVER);
    assert.equal(transports.all.length, 0, 'the open session was not hung up');
    assert.deepEqual(await drive(check.finish(ticket.checkId, OUTCOME)), { ...OUTCOME, sessionClosed: true, creditsCost: 0 });
    await assert.rejects(check.finish(ticket.checkId, OUTCOME), OVER, 'a check reports once');
  });
});

describe('network check: no report in time, dispose', () => {
  it('closes the session itself after the timeout on the clock, says so in the log, then refuses the late report', async () => {
    const { check, service, clock, logger, framesOf } = setup(undefined, 'open', { timeoutMs: 1_000 });
    const ticket = await check.start(service.client, config);
    await clock.advance(999);
    assert.deepEqual(framesOf('live-1'), [], 'not before the timeout');
    await clock.advance(1);
    await driveUntilSettled(clock, (async () => {
      while (logger.lines.length < 2) await new Promise((r) => setImmediate(r));
    })());
    assert.deepEqual(framesOf('live-1'), [5]);
    assert.deepEqual(logger.lines, [
      { level: 'warn', message: 'Network check: no result from the screen in time; closing the test session', data: { liveId: 'live-1' } },
      closedLine('live-1', true),
    ]);
    await assert.rejects(check.finish(ticket.checkId, OUTCOME), OVER);
  });

  it('an earlier check timing out does not drop a later one that started alongside it', async () => {
    const { check, service, clock, drive, framesOf } = setup(undefined, 'open', { timeoutMs: 1_000 });
    service.hold();
    const first = check.start(service.client, config);
    const second = check.start(service.client, config);
    await until(() => service.held() === 2, { message: 'both creates reached the service' });
    service.release();
    assert.equal((await first).checkId, 'live-1');
    await clock.advance(500);
    service.release();
    assert.equal((await second).checkId, 'live-2');
    await clock.advance(500); // the first one's timeout
    await drive(Promise.resolve());
    assert.deepEqual(framesOf('live-1'), [5], 'the first test session was closed by its timeout');
    assert.deepEqual(await drive(check.finish('live-2', OUTCOME)), { ...OUTCOME, sessionClosed: true, creditsCost: 0 });
  });

  it('dispose with no check open does nothing; with one open it ends it with type 5', async () => {
    const { check, service, drive, transports, framesOf } = setup();
    await check.dispose();
    assert.equal(transports.all.length, 0);
    const ticket = await check.start(service.client, config);
    await drive(check.dispose());
    assert.deepEqual(framesOf(ticket.checkId), [5]);
    await assert.rejects(check.finish(ticket.checkId, OUTCOME), OVER);
  });
});
