/**
 * The session machine where sessions are given up, checked to the exact effect and error: whether a
 * created room gets its type 5 or only a closed socket, which error the visitor is shown, who ended the
 * call and why. These are the paths where credits are lost, so each rule here is pinned by a test that
 * fails when the rule is changed (found by mutation testing, `npm run mutate -- session`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ErrorCode, ErrorInfo } from '../../../electron/core/errors.ts';
import {
  backoffPolicy,
  classify,
  createLiveReconnectPolicy,
  createNotReadyPolicy,
  liveReconnectPolicy,
  notReadyPolicy,
  type ReconnectPolicy,
  type RetryContext,
} from '../../../electron/core/reconnect-policy.ts';
import {
  initialMachine,
  transition,
  type Machine,
  type MachineConfig,
  type MachineEffect,
  type MachineEvent,
} from '../../../electron/core/session-machine.ts';
import type { SessionSummary } from '../../../electron/core/session-types.ts';

const T0 = 5_000_000;
const BASE: MachineConfig = { notReadyPolicy, liveReconnectPolicy, durationGraceMs: 2_000 };

/** Feeds events in order; returns the machine and the effects of the last event. */
function play(events: MachineEvent[], config: MachineConfig = BASE, from: Machine = initialMachine()) {
  let machine = from;
  let effects: MachineEffect[] = [];
  for (const event of events) {
    ({ machine, effects } = transition(machine, event, config));
  }
  return { machine, effects };
}

const start = (dt = 0): MachineEvent => ({ type: 'start', atMs: T0 + dt, callMode: 'video' });
const created = (dt: number): MachineEvent => ({ type: 'created', atMs: T0 + dt, liveId: 'L1', liveDurationS: 600, callMode: 'video' });
const open = (dt: number): MachineEvent => ({ type: 'socket-open', atMs: T0 + dt });
const ack = (dt: number): MachineEvent => ({ type: 'ack-success', atMs: T0 + dt });
const notReady = (dt: number): MachineEvent => ({ type: 'ack-not-ready', atMs: T0 + dt });
const retryDue = (dt: number): MachineEvent => ({ type: 'retry-due', atMs: T0 + dt });
const lost = (dt: number, code: ErrorCode, message = `lost: ${code}`): MachineEvent => ({ type: 'socket-lost', atMs: T0 + dt, error: { code, message } });
const confirmed = (dt: number): MachineEvent => ({ type: 'end-confirmed', atMs: T0 + dt, record: null });

/** Start, created at +100, socket open at +200: waiting for the conn_init answer. */
const CONNECTING = [start(), created(100), open(200)];
/** … acked at +300: live. */
const LIVE = [...CONNECTING, ack(300)];

/** A summary with nothing billed (the final record could not be read), for the fields given. */
function summary(fields: Partial<SessionSummary> & Pick<SessionSummary, 'timingsMs'>): SessionSummary {
  return {
    liveId: 'L1',
    callMode: 'video',
    wentLive: false,
    hangupReason: null,
    endedBy: null,
    finalStatus: null,
    billedSeconds: null,
    creditsCost: null,
    notReadyRetries: 0,
    reconnects: 0,
    liveDurationS: 600,
    ...fields,
  };
}

/** A policy that answers like `inner` and records what it was asked. */
function recording(inner: ReconnectPolicy) {
  const asked: RetryContext[] = [];
  const policy: ReconnectPolicy = {
    nextDelayMs(context) {
      asked.push(context);
      return inner.nextDelayMs(context);
    },
  };
  return { policy, asked };
}

const TYPE_5: MachineEffect = { type: 'send-hangup', reason: 'user_end' };
const CLOSE: MachineEffect = { type: 'close-socket' };

describe('session machine: giving up a created room', () => {
  describe('when the socket fails for good before the avatar is live', () => {
    for (const code of ['not_found', 'unauthorized', 'forbidden'] as const) {
      it(`${code}: the room is gone or refuses us, so the socket is only closed (no type 5 to send it)`, () => {
        const { machine, effects } = play([...CONNECTING, lost(300, code, 'refused')]);
        assert.deepEqual(effects, [CLOSE]);
        assert.deepEqual(machine.state, {
          phase: 'failed',
          liveId: 'L1',
          error: { code, message: 'refused' },
          summary: summary({ timingsMs: { create: 100, socketOpen: 200, live: null, ended: 300 } }),
        });
      });
    }

    for (const code of ['invalid_request', 'invalid_config', 'insufficient_credits', 'cancelled', 'init_failed', 'content_blocked', 'token_expired'] as const) {
      it(`${code}: the room still exists, so it is closed with type 5 user_end`, () => {
        const { machine, effects } = play([...CONNECTING, lost(300, code, 'no')]);
        assert.deepEqual(effects, [TYPE_5]);
        assert.equal(machine.state.phase, 'failed');
        assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, { code, message: 'no' });
      });
    }
  });

  describe('when the pre-live retry budget runs out on a drop', () => {
    it('with no earlier NOT_READY: fails with the error of the drop itself, after a type 5', () => {
      const config = { ...BASE, notReadyPolicy: createNotReadyPolicy(0) };
      const { machine, effects } = play([...CONNECTING, lost(300, 'network', 'closed 1006')], config);
      assert.deepEqual(effects, [TYPE_5]);
      assert.deepEqual(machine.state, {
        phase: 'failed',
        liveId: 'L1',
        error: { code: 'network', message: 'closed 1006' },
        summary: summary({ timingsMs: { create: 100, socketOpen: 200, live: null, ended: 300 } }),
      });
    });

    it('after an earlier drop: fails with the last drop, not as not_ready', () => {
      const config = { ...BASE, notReadyPolicy: createNotReadyPolicy(3_000) };
      const { machine, effects } = play([...CONNECTING, lost(300, 'network'), retryDue(2_300), lost(2_400, 'timeout', 'no answer')], config);
      assert.deepEqual(effects, [TYPE_5]);
      assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, { code: 'timeout', message: 'no answer' });
    });

    it('after NOT_READY: tells the visitor the avatar was not ready, and still closes the room with type 5', () => {
      const config = { ...BASE, notReadyPolicy: createNotReadyPolicy(3_000) };
      const { machine, effects } = play([...CONNECTING, notReady(300), retryDue(2_300), lost(2_400, 'network')], config);
      assert.deepEqual(effects, [TYPE_5]);
      assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, {
        code: 'not_ready',
        message: 'The avatar was still not ready after the warm-up wait.',
      });
    });

    it('after NOT_READY, a 404 is reported as such and only closes the socket (the room is gone)', () => {
      const config = { ...BASE, notReadyPolicy: createNotReadyPolicy(3_000) };
      const { machine, effects } = play([...CONNECTING, notReady(300), retryDue(2_300), lost(2_400, 'not_found', 'gone')], config);
      assert.deepEqual(effects, [CLOSE]);
      assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, { code: 'not_found', message: 'gone' });
    });
  });

  it('drops before the ack back off 2, 4 and 8 s, opening socket 2, 3 and 4, without counting NOT_READY', () => {
    let { machine } = play(CONNECTING);
    const delays: number[] = [];
    const attempts: number[] = [];
    let atMs = T0 + 300;
    for (let i = 0; i < 3; i++) {
      const drop = transition(machine, { type: 'socket-lost', atMs, error: { code: 'network', message: 'x' } }, BASE);
      assert.equal(drop.machine.state.phase === 'warming' && drop.machine.state.notReadyRetries, 0);
      assert.deepEqual(drop.effects[0], CLOSE);
      const retry = drop.effects[1];
      assert.ok(retry?.type === 'schedule-retry');
      delays.push(retry.delayMs);
      atMs += retry.delayMs;
      const due = transition(drop.machine, { type: 'retry-due', atMs }, BASE);
      assert.deepEqual(due.effects, [{ type: 'open-socket' }]);
      assert.ok(due.machine.state.phase === 'connecting');
      attempts.push(due.machine.state.attempt);
      machine = due.machine;
      atMs += 100;
    }
    assert.deepEqual(delays, [2_000, 4_000, 8_000]);
    assert.deepEqual(attempts, [2, 3, 4]);
  });

  it('NOT_READY past the warm-up budget fails with a message that says to try later, after a type 5', () => {
    const config = { ...BASE, notReadyPolicy: createNotReadyPolicy(0) };
    const { machine, effects } = play([...CONNECTING, notReady(300)], config);
    assert.deepEqual(effects, [TYPE_5]);
    assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, {
      code: 'not_ready',
      message: 'The avatar was still not ready after the warm-up wait; try again later.',
    });
  });
});

describe('session machine: a drop while live', () => {
  for (const code of ['forbidden', 'unauthorized', 'insufficient_credits', 'invalid_config', 'content_blocked', 'token_expired'] as const) {
    it(`${code} is fatal: the call ends (network) without a reconnect, and fails with that error`, () => {
      const ending = play([...LIVE, lost(1_000, code, 'fatal drop')]);
      assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
      assert.deepEqual(ending.effects, [{ type: 'cancel-duration-guard' }, CLOSE, { type: 'query-final' }]);
      const end = play([confirmed(1_500)], BASE, ending.machine);
      assert.deepEqual(end.machine.state, {
        phase: 'failed',
        liveId: 'L1',
        error: { code, message: 'fatal drop' },
        summary: summary({ wentLive: true, endedBy: 'network', timingsMs: { create: 100, socketOpen: 200, live: 300, ended: 1_000 } }),
      });
    });
  }

  it('a fatal error on the reconnect socket ends the call the same way (network, with that error)', () => {
    const ending = play([...LIVE, lost(1_000, 'network'), lost(1_100, 'forbidden', 'not yours')]);
    assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
    assert.deepEqual(ending.effects, [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, CLOSE, { type: 'query-final' }]);
    const end = play([confirmed(1_500)], BASE, ending.machine);
    assert.equal(end.machine.state.phase, 'failed');
    assert.ok(end.machine.state.phase === 'failed');
    assert.deepEqual(end.machine.state.error, { code: 'forbidden', message: 'not yours' });
    assert.equal(end.machine.state.summary?.endedBy, 'network');
    assert.equal(end.machine.state.summary?.reconnects, 1);
  });

  it('LIVE_CONN_INIT_FAILED on the reconnect socket ends the call (network) with init_failed naming the code', () => {
    const ending = play([...LIVE, lost(1_000, 'network'), { type: 'ack-failed', atMs: T0 + 1_100, errorCode: 'LIVE_CONN_INIT_FAILED' }]);
    assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
    const end = play([confirmed(1_500)], BASE, ending.machine);
    assert.ok(end.machine.state.phase === 'failed');
    assert.deepEqual(end.machine.state.error, {
      code: 'init_failed',
      message: 'The avatar could not be started (LIVE_CONN_INIT_FAILED); create a new session.',
    });
    assert.equal(end.machine.state.summary?.endedBy, 'network');
    assert.equal(end.machine.state.summary?.hangupReason, null);
  });

  it('reconnecting past the budget sends type 5 and fails with connection_lost saying how long it tried', () => {
    const config = { ...BASE, liveReconnectPolicy: { nextDelayMs: ({ elapsedMs }: RetryContext) => (elapsedMs >= 6_400 ? null : 100) } };
    const ending = play([...LIVE, lost(1_000, 'network'), lost(7_400, 'network')], config);
    assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
    assert.deepEqual(ending.effects, [CLOSE, { type: 'cancel-duration-guard' }, TYPE_5, { type: 'query-final' }]);
    const end = play([confirmed(7_500)], config, ending.machine);
    assert.ok(end.machine.state.phase === 'failed');
    assert.deepEqual(end.machine.state.error, {
      code: 'connection_lost',
      message: 'The connection to the service was lost and could not be restored within 6 s.',
    });
    assert.equal(end.machine.state.summary?.endedBy, 'network');
  });

  describe('when the status query says the server closed the session meanwhile', () => {
    for (const status of ['ending', 'ended']) {
      it(`status ${status}: stops reconnecting and reads the final figures (server, reason unknown when not given)`, () => {
        const { machine, effects } = play([
          ...LIVE,
          lost(1_000, 'network'),
          { type: 'status-known', atMs: T0 + 1_050, record: { status, billedSeconds: null, creditsCost: null } },
        ]);
        assert.deepEqual(machine.state, { phase: 'ending', liveId: 'L1', reason: 'unknown' });
        assert.deepEqual(effects, [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, CLOSE, { type: 'query-final' }]);
        const end = play([confirmed(1_500)], BASE, machine);
        assert.ok(end.machine.state.phase === 'ended');
        assert.equal(end.machine.state.summary.endedBy, 'server');
        assert.equal(end.machine.state.summary.hangupReason, null);
      });
    }

    it('keeps the reason the record carries', () => {
      const { machine } = play([
        ...LIVE,
        lost(1_000, 'network'),
        { type: 'status-known', atMs: T0 + 1_050, record: { status: 'ended', billedSeconds: 1, creditsCost: 2, hangupReason: 'client_reconnect_timeout' } },
      ]);
      assert.deepEqual(machine.state, { phase: 'ending', liveId: 'L1', reason: 'client_reconnect_timeout' });
    });

    it('status on_live: keeps reconnecting', () => {
      const reconnecting = play([...LIVE, lost(1_000, 'network')]).machine;
      const r = transition(reconnecting, { type: 'status-known', atMs: T0 + 1_050, record: { status: 'on_live', billedSeconds: null, creditsCost: null } }, BASE);
      assert.equal(r.machine, reconnecting);
      assert.deepEqual(r.effects, []);
    });
  });
});

describe('session machine: the retry policies are told what went wrong', () => {
  it('NOT_READY asks the warm-up policy with attempt 1, the time since the first NOT_READY and the NOT_READY', () => {
    const rec = recording(notReadyPolicy);
    play([...CONNECTING, notReady(300), retryDue(2_300), notReady(2_500)], { ...BASE, notReadyPolicy: rec.policy });
    assert.deepEqual(rec.asked, [
      { attempt: 1, elapsedMs: 0, lastError: 'NOT_READY' },
      { attempt: 2, elapsedMs: 2_200, lastError: 'NOT_READY' },
    ]);
  });

  it('a drop before the ack asks the warm-up policy with the error of the drop', () => {
    const rec = recording(notReadyPolicy);
    play([...CONNECTING, lost(300, 'network', 'closed 1006')], { ...BASE, notReadyPolicy: rec.policy });
    assert.deepEqual(rec.asked, [{ attempt: 1, elapsedMs: 0, lastError: { code: 'network', message: 'closed 1006' } }]);
  });

  it('NOT_READY on a reconnect asks the live policy, naming it as such', () => {
    const rec = recording(liveReconnectPolicy);
    play([...LIVE, lost(1_000, 'network'), notReady(1_200)], { ...BASE, liveReconnectPolicy: rec.policy });
    assert.deepEqual(rec.asked, [
      { attempt: 1, elapsedMs: 0, lastError: { code: 'network', message: 'lost: network' } },
      { attempt: 2, elapsedMs: 200, lastError: { code: 'not_ready', message: 'NOT_READY on reconnect' } },
    ]);
  });
});

describe('session machine: cancelled while the create request is in flight', () => {
  it('closes the room the answer names with type 5 and the reason given, ended by the client, never live', () => {
    const { machine, effects } = play([start(), { type: 'hangup-requested', atMs: T0 + 50, reason: 'timeout' }, created(200)]);
    assert.deepEqual(effects, [{ type: 'send-hangup', reason: 'timeout' }]);
    assert.deepEqual(machine.state, {
      phase: 'failed',
      liveId: 'L1',
      error: { code: 'cancelled', message: 'The session was cancelled while it was being created.' },
      summary: summary({ hangupReason: 'timeout', endedBy: 'client', timingsMs: { create: 200, socketOpen: null, live: null, ended: 200 } }),
    });
  });

  it('a failed create after the cancel is reported as cancelled, with nothing to close', () => {
    const { machine, effects } = play([
      start(),
      { type: 'hangup-requested', atMs: T0 + 50, reason: 'user_end' },
      { type: 'create-failed', atMs: T0 + 200, error: { code: 'network', message: 'reset' } },
    ]);
    assert.deepEqual(effects, []);
    assert.deepEqual(machine.state, {
      phase: 'failed',
      liveId: null,
      error: { code: 'cancelled', message: 'The session was cancelled while it was being created.' },
      summary: null,
    });
  });
});

describe('session machine: RTC first, then billing', () => {
  const RTC: MachineConfig = { ...BASE, awaitRtcReady: true };

  it('gives the renderer 30 s to get ready by default, or the configured time', () => {
    const guard = (config: MachineConfig) => play([start(), created(100)], config).effects.find((e) => e.type === 'schedule-rtc-guard');
    assert.deepEqual(guard(RTC), { type: 'schedule-rtc-guard', atMs: T0 + 100 + 30_000 });
    assert.deepEqual(guard({ ...RTC, rtcReadyTimeoutMs: 5_000 }), { type: 'schedule-rtc-guard', atMs: T0 + 100 + 5_000 });
  });

  it('a ready report before the session exists counts for nothing: conn_init waits for the ready after the credentials', () => {
    const early = play([start(), { type: 'rtc-ready', atMs: T0 + 50 }], RTC);
    assert.deepEqual(early.effects, []);
    const ready = play([created(100), open(200), { type: 'rtc-ready', atMs: T0 + 300 }], RTC, early.machine);
    assert.deepEqual(ready.effects, [{ type: 'cancel-rtc-guard' }, { type: 'send-conn-init' }]);
  });

  it('a hangup while waiting for the RTC side cancels its guard too, then sends type 5', () => {
    const { effects } = play([start(), created(100), { type: 'hangup-requested', atMs: T0 + 200, reason: 'user_end' }], RTC);
    assert.deepEqual(effects, [
      { type: 'cancel-retry' },
      { type: 'cancel-duration-guard' },
      { type: 'cancel-rtc-guard' },
      TYPE_5,
      { type: 'query-final' },
    ]);
  });

  it('a join failure ends the call as the client, with the RTC error and no hangup reason of ours', () => {
    const rtcError: ErrorInfo = { code: 'rtc_failed', message: 'join refused' };
    const ending = play([start(), created(100), open(200), { type: 'rtc-failed', atMs: T0 + 300, error: rtcError }], RTC);
    assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
    const end = play([confirmed(400)], RTC, ending.machine);
    assert.deepEqual(end.machine.state, {
      phase: 'failed',
      liveId: 'L1',
      error: rtcError,
      summary: summary({ endedBy: 'client', timingsMs: { create: 100, socketOpen: 200, live: null, ended: 300 } }),
    });
  });
});

describe('reconnect policy: what is never retried', () => {
  it('a bad configuration and blocked content are fatal, as codes and as hangup reasons', () => {
    for (const signal of ['invalid_config', 'content_blocked', 'invalid_request', 'audit_violation', 'credit_insufficient']) {
      assert.equal(classify(signal), 'fatal', signal);
    }
  });

  it('a live call that loses its socket with invalid_config or content_blocked is not reconnected', () => {
    for (const code of ['invalid_config', 'content_blocked'] as const) {
      const { machine, effects } = play([...LIVE, lost(1_000, code)]);
      assert.equal(machine.state.phase, 'ending', code);
      assert.ok(!effects.some((e) => e.type === 'open-socket' || e.type === 'schedule-retry'), code);
    }
  });

  it('refuses an empty delay table with a message that says why', () => {
    assert.throws(() => backoffPolicy({ delaysMs: [], budgetMs: 1 }), { name: 'RangeError', message: 'backoffPolicy needs at least one delay' });
  });

  it('the live budget is the one given', () => {
    const policy = createLiveReconnectPolicy(1_000);
    assert.equal(policy.nextDelayMs({ attempt: 4, elapsedMs: 0 }), 1_000);
    assert.equal(policy.nextDelayMs({ attempt: 4, elapsedMs: 1 }), null);
  });
});
