/**
 * The pure session machine (session-machine.ts): every phase × event of its transition table, and the
 * paths a session takes through it, checked to the exact effect and error: the NOT_READY backoff, drops
 * before and after the avatar is live, hangups from either side, the retry policies it asks and what it
 * tells them, live_duration, and the RTC-first order. Where sessions are given up — whether a created
 * room gets its type 5 or only a closed socket, which error the visitor is shown, who ended the call and
 * why — credits are lost, so each rule there is pinned to the exact effect (`npm run mutate -- session`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ErrorCode, ErrorInfo } from '../../../electron/core/errors.ts';
import { createNotReadyPolicy, liveReconnectPolicy, notReadyPolicy, type ReconnectPolicy, type RetryContext } from '../../../electron/core/reconnect-policy.ts';
import {
  initialMachine,
  transition,
  type Machine,
  type MachineConfig,
  type MachineEffect,
  type MachineEvent,
} from '../../../electron/core/session-machine.ts';
import type { SessionPhase, SessionSummary } from '../../../electron/core/session-types.ts';

const config: MachineConfig = { notReadyPolicy, liveReconnectPolicy, durationGraceMs: 2_000 };
const T0 = 1_000_000;

type EventType = MachineEvent['type'];
/** One sample of each event, at time `atMs`. */
function sample(type: EventType, atMs: number): MachineEvent {
  switch (type) {
    case 'start':
      return { type, atMs, callMode: 'video' };
    case 'hold':
      return { type, atMs, callMode: 'video', holdForMs: 90_000 };
    case 'created':
      return { type, atMs, liveId: 'L1', liveDurationS: 600, callMode: 'video' };
    case 'create-failed':
      return { type, atMs, error: { code: 'unauthorized', message: 'bad key' } };
    case 'ack-failed':
      return { type, atMs, errorCode: 'LIVE_CONN_INIT_FAILED' };
    case 'forced-hangup':
      return { type, atMs, reason: 'credit_insufficient' };
    case 'socket-lost':
      return { type, atMs, error: { code: 'network', message: 'closed 1006' } };
    case 'hangup-requested':
      return { type, atMs, reason: 'user_end' };
    case 'status-known':
      return { type, atMs, record: { status: 'ended', billedSeconds: 4, creditsCost: 6 } };
    case 'end-confirmed':
      return { type, atMs, record: { status: 'ended', billedSeconds: 12, creditsCost: 18 } };
    case 'error':
      return { type, atMs, error: { code: 'internal', message: 'boom' } };
    case 'rtc-failed':
      return { type, atMs, error: { code: 'rtc_failed', message: 'blocked' } };
    default:
      return { type, atMs } as MachineEvent;
  }
}
const ALL_EVENTS: EventType[] = [
  'start',
  'hold',
  'release',
  'hold-expired',
  'created',
  'create-failed',
  'socket-open',
  'ack-success',
  'ack-not-ready',
  'ack-failed',
  'forced-hangup',
  'socket-lost',
  'retry-due',
  'hangup-requested',
  'duration-reached',
  'status-known',
  'end-confirmed',
  'error',
  'rtc-ready',
  'rtc-failed',
];

/** Runs events from idle (or `from`); each event happens 100 ms after the previous one. */
function run(events: Array<EventType | MachineEvent>, from: Machine = initialMachine(), startAtMs = T0, withConfig: MachineConfig = config) {
  let machine = from;
  const effects: MachineEffect[][] = [];
  const phases: SessionPhase[] = [];
  let atMs = startAtMs;
  for (const e of events) {
    const event = typeof e === 'string' ? sample(e, atMs) : e;
    atMs = event.atMs + 100;
    const result = transition(machine, event, withConfig);
    machine = result.machine;
    effects.push(result.effects);
    phases.push(machine.state.phase);
  }
  return { machine, effects, phases, lastEffects: effects.at(-1) ?? [], nextAtMs: atMs };
}
const types = (effects: MachineEffect[]) => effects.map((e) => e.type);

/** A machine in each phase, reached the normal way. */
const FIXTURES: Record<SessionPhase, EventType[]> = {
  idle: [],
  creating: ['start'],
  held: ['hold', 'created'],
  connecting: ['start', 'created'],
  warming: ['start', 'created', 'socket-open', 'ack-not-ready'],
  live: ['start', 'created', 'socket-open', 'ack-success'],
  reconnecting: ['start', 'created', 'socket-open', 'ack-success', 'socket-lost'],
  ending: ['start', 'created', 'socket-open', 'ack-success', 'hangup-requested'],
  ended: ['start', 'created', 'socket-open', 'ack-success', 'hangup-requested', 'end-confirmed'],
  failed: ['start', 'create-failed'],
};
function inPhase(phase: SessionPhase) {
  const r = run(FIXTURES[phase]);
  assert.equal(r.machine.state.phase, phase);
  return r;
}

const END_FX = ['cancel-retry', 'cancel-duration-guard'] as const;
const FAIL_FX = ['cancel-retry', 'cancel-duration-guard', 'close-socket'] as const;
/** Giving up on a created room the driver stops: type 5 (never only a close). */
const ABANDON_FX = ['cancel-retry', 'cancel-duration-guard', 'send-hangup'] as const;
/** Expected [next phase, effect types] per phase and event; missing = ignored (same machine, no effects). */
const TABLE: Record<SessionPhase, Partial<Record<EventType, [SessionPhase, string[]]>>> = {
  idle: {
    start: ['creating', ['create-session']],
    hold: ['creating', ['create-session']],
  },
  creating: {
    created: ['connecting', ['emit-credentials', 'open-socket']],
    'create-failed': ['failed', []],
    'hangup-requested': ['creating', ['abort-create']],
    error: ['failed', [...FAIL_FX, 'abort-create']],
  },
  held: {
    'socket-open': ['held', []],
    release: ['connecting', ['cancel-hold-expiry', 'emit-credentials', 'send-conn-init']],
    'hold-expired': ['ended', ['send-hangup']],
    'forced-hangup': ['ended', ['cancel-hold-expiry', 'close-socket']],
    'socket-lost': ['failed', ['cancel-hold-expiry', 'send-hangup']],
    'hangup-requested': ['ended', ['cancel-hold-expiry', 'send-hangup']],
    error: ['failed', ['cancel-retry', 'cancel-duration-guard', 'cancel-hold-expiry', 'send-hangup']],
  },
  connecting: {
    'socket-open': ['connecting', []],
    'ack-success': ['live', ['schedule-duration-guard']],
    'ack-not-ready': ['warming', ['close-socket', 'schedule-retry']],
    'ack-failed': ['failed', ['send-hangup']],
    'forced-hangup': ['ending', [...FAIL_FX, 'query-final']],
    'socket-lost': ['warming', ['close-socket', 'schedule-retry']],
    'hangup-requested': ['ending', [...END_FX, 'send-hangup', 'query-final']],
    error: ['failed', [...ABANDON_FX]],
    'rtc-failed': ['ending', [...END_FX, 'cancel-rtc-guard', 'send-hangup', 'query-final']],
  },
  warming: {
    'retry-due': ['connecting', ['open-socket']],
    'forced-hangup': ['ending', [...FAIL_FX, 'query-final']],
    'hangup-requested': ['ending', [...END_FX, 'send-hangup', 'query-final']],
    error: ['failed', [...ABANDON_FX]],
    'rtc-failed': ['ending', [...END_FX, 'cancel-rtc-guard', 'send-hangup', 'query-final']],
  },
  live: {
    'forced-hangup': ['ending', [...FAIL_FX, 'query-final']],
    'socket-lost': ['reconnecting', ['close-socket', 'query-status', 'open-socket']],
    'hangup-requested': ['ending', [...END_FX, 'send-hangup', 'query-final']],
    'duration-reached': ['ending', ['cancel-retry', 'send-hangup', 'query-final']],
    error: ['failed', [...ABANDON_FX]],
  },
  reconnecting: {
    'ack-success': ['live', []],
    'ack-not-ready': ['reconnecting', ['close-socket', 'schedule-retry']],
    'ack-failed': ['ending', [...FAIL_FX, 'query-final']],
    'forced-hangup': ['ending', [...FAIL_FX, 'query-final']],
    'socket-lost': ['reconnecting', ['close-socket', 'query-status', 'schedule-retry']],
    'retry-due': ['reconnecting', ['open-socket']],
    'hangup-requested': ['ending', [...END_FX, 'send-hangup', 'query-final']],
    'duration-reached': ['ending', ['cancel-retry', 'send-hangup', 'query-final']],
    'status-known': ['ending', [...FAIL_FX, 'query-final']],
    error: ['failed', [...ABANDON_FX]],
  },
  ending: {
    'end-confirmed': ['ended', []],
    error: ['failed', [...FAIL_FX]],
  },
  ended: {},
  failed: {},
};

/** Feeds events in order; returns the machine and the effects of the last event. */
function play(events: MachineEvent[], withConfig: MachineConfig = config, from: Machine = initialMachine()) {
  let machine = from;
  let effects: MachineEffect[] = [];
  for (const event of events) {
    ({ machine, effects } = transition(machine, event, withConfig));
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

describe('session machine', () => {
  describe('transition table', () => {
    for (const phase of Object.keys(TABLE) as SessionPhase[]) {
      describe(`in ${phase}`, () => {
        for (const eventType of ALL_EVENTS) {
          const expected = TABLE[phase][eventType];
          const title = expected ? `${eventType} → ${expected[0]} [${expected[1].join(', ')}]` : `${eventType} is ignored`;
          it(title, () => {
            const before = inPhase(phase);
            const result = transition(before.machine, sample(eventType, before.nextAtMs), config);
            if (!expected) {
              assert.equal(result.machine, before.machine, 'same machine object');
              assert.deepEqual(result.effects, []);
              return;
            }
            assert.equal(result.machine.state.phase, expected[0]);
            assert.deepEqual(types(result.effects), expected[1]);
          });
        }
      });
    }
  });

  describe('when the server answers NOT_READY', () => {
    it('waits 2, 4 and 8 seconds, then 8 s again, within the warm-up budget, then fails with not_ready', () => {
      let r = run(['start', 'created', 'socket-open']);
      const delays: number[] = [];
      const states: unknown[] = [];
      let atMs = r.nextAtMs;
      for (;;) {
        const t = transition(r.machine, { type: 'ack-not-ready', atMs }, config);
        if (t.machine.state.phase !== 'warming') {
          r = { ...r, machine: t.machine, lastEffects: t.effects };
          break;
        }
        states.push(t.machine.state);
        const retry = t.effects.find((e) => e.type === 'schedule-retry');
        assert.ok(retry && retry.type === 'schedule-retry');
        delays.push(retry.delayMs);
        atMs += retry.delayMs;
        const due = transition(t.machine, { type: 'retry-due', atMs }, config);
        assert.deepEqual(types(due.effects), ['open-socket']);
        r = { ...r, machine: due.machine };
      }
      assert.deepEqual(delays, [2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000]);
      assert.deepEqual(states[0], { phase: 'warming', liveId: 'L1', notReadyRetries: 1, retryInMs: 2000, retryAtMs: T0 + 300 + 2000 });
      assert.deepEqual(states[2], { phase: 'warming', liveId: 'L1', notReadyRetries: 3, retryInMs: 8000, retryAtMs: T0 + 300 + 6000 + 8000 });
      const state = r.machine.state;
      assert.equal(state.phase, 'failed');
      // Never abandoned: the room is closed with type 5 on the socket that answered NOT_READY.
      assert.deepEqual(r.lastEffects, [{ type: 'send-hangup', reason: 'user_end' }]);
      if (state.phase !== 'failed') return;
      assert.equal(state.error.code, 'not_ready');
      assert.equal(state.summary?.wentLive, false);
      assert.equal(state.summary?.notReadyRetries, 8);
      assert.equal(state.summary?.billedSeconds, null);
    });
    it('counts sockets opened as the connecting attempt', () => {
      const r = run(['start', 'created', 'socket-open', 'ack-not-ready', 'retry-due', 'ack-not-ready', 'retry-due']);
      assert.deepEqual(r.phases, ['creating', 'connecting', 'connecting', 'warming', 'connecting', 'warming', 'connecting']);
      assert.deepEqual(r.machine.state, { phase: 'connecting', liveId: 'L1', attempt: 3 });
    });
    it('past the warm-up budget, fails with a message that says to try later, after a type 5', () => {
      const withBudget = { ...config, notReadyPolicy: createNotReadyPolicy(0) };
      const { machine, effects } = play([...CONNECTING, notReady(300)], withBudget);
      assert.deepEqual(effects, [TYPE_5]);
      assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, {
        code: 'not_ready',
        message: 'The avatar was still not ready after the warm-up wait; try again later.',
      });
    });
  });

  describe('when conn_init fails with LIVE_CONN_INIT_FAILED', () => {
    it('fails with init_failed and never reconnects', () => {
      const r = run(['start', 'created', 'socket-open', 'ack-failed', 'retry-due', 'socket-lost']);
      const state = r.machine.state;
      assert.equal(state.phase, 'failed');
      assert.equal(state.phase === 'failed' && state.error.code, 'init_failed');
      assert.deepEqual(r.effects.slice(4), [[], []]);
    });
  });

  describe('when the socket fails before the avatar is live', () => {
    it('fails at once with the code of a fatal error (401 on the handshake)', () => {
      const r = run(['start', 'created', { type: 'socket-lost', atMs: T0 + 500, error: { code: 'unauthorized', message: '401' } }]);
      const state = r.machine.state;
      assert.equal(state.phase === 'failed' && state.error.code, 'unauthorized');
      assert.deepEqual(r.lastEffects, [{ type: 'close-socket' }]);
    });
    it('retries a network drop on the warm-up schedule without counting it as NOT_READY', () => {
      const r = run(['start', 'created', 'socket-lost']);
      assert.deepEqual(r.machine.state, { phase: 'warming', liveId: 'L1', notReadyRetries: 0, retryInMs: 2000, retryAtMs: T0 + 200 + 2000 });
    });
    it('drops before the ack back off 2, 4 and 8 s, opening socket 2, 3 and 4, without counting NOT_READY', () => {
      let { machine } = play(CONNECTING);
      const delays: number[] = [];
      const attempts: number[] = [];
      let atMs = T0 + 300;
      for (let i = 0; i < 3; i++) {
        const drop = transition(machine, { type: 'socket-lost', atMs, error: { code: 'network', message: 'x' } }, config);
        assert.equal(drop.machine.state.phase === 'warming' && drop.machine.state.notReadyRetries, 0);
        assert.deepEqual(drop.effects[0], CLOSE);
        const retry = drop.effects[1];
        assert.ok(retry?.type === 'schedule-retry');
        delays.push(retry.delayMs);
        atMs += retry.delayMs;
        const due = transition(drop.machine, { type: 'retry-due', atMs }, config);
        assert.deepEqual(due.effects, [{ type: 'open-socket' }]);
        assert.ok(due.machine.state.phase === 'connecting');
        attempts.push(due.machine.state.attempt);
        machine = due.machine;
        atMs += 100;
      }
      assert.deepEqual(delays, [2_000, 4_000, 8_000]);
      assert.deepEqual(attempts, [2, 3, 4]);
    });

    describe('for good', () => {
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
        const withBudget = { ...config, notReadyPolicy: createNotReadyPolicy(0) };
        const { machine, effects } = play([...CONNECTING, lost(300, 'network', 'closed 1006')], withBudget);
        assert.deepEqual(effects, [TYPE_5]);
        assert.deepEqual(machine.state, {
          phase: 'failed',
          liveId: 'L1',
          error: { code: 'network', message: 'closed 1006' },
          summary: summary({ timingsMs: { create: 100, socketOpen: 200, live: null, ended: 300 } }),
        });
      });

      it('after an earlier drop: fails with the last drop, not as not_ready', () => {
        const withBudget = { ...config, notReadyPolicy: createNotReadyPolicy(3_000) };
        const { machine, effects } = play([...CONNECTING, lost(300, 'network'), retryDue(2_300), lost(2_400, 'timeout', 'no answer')], withBudget);
        assert.deepEqual(effects, [TYPE_5]);
        assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, { code: 'timeout', message: 'no answer' });
      });

      it('after NOT_READY: tells the visitor the avatar was not ready, and still closes the room with type 5', () => {
        const withBudget = { ...config, notReadyPolicy: createNotReadyPolicy(3_000) };
        const { machine, effects } = play([...CONNECTING, notReady(300), retryDue(2_300), lost(2_400, 'network')], withBudget);
        assert.deepEqual(effects, [TYPE_5]);
        assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, {
          code: 'not_ready',
          message: 'The avatar was still not ready after the warm-up wait.',
        });
      });

      it('after NOT_READY, a 404 is reported as such and only closes the socket (the room is gone)', () => {
        const withBudget = { ...config, notReadyPolicy: createNotReadyPolicy(3_000) };
        const { machine, effects } = play([...CONNECTING, notReady(300), retryDue(2_300), lost(2_400, 'not_found', 'gone')], withBudget);
        assert.deepEqual(effects, [CLOSE]);
        assert.deepEqual(machine.state.phase === 'failed' && machine.state.error, { code: 'not_found', message: 'gone' });
      });
    });
  });

  describe('when the server hangs up (type 6)', () => {
    for (const reason of ['credit_insufficient', 'audit_violation', 'timeout']) {
      it(`ends with ${reason}, endedBy server, and never reconnects`, () => {
        const r = run([
          'start',
          'created',
          'socket-open',
          'ack-success',
          { type: 'forced-hangup', atMs: T0 + 5_000, reason },
          { type: 'socket-lost', atMs: T0 + 5_010, error: { code: 'network', message: 'closed' } },
          { type: 'retry-due', atMs: T0 + 5_020 },
          { type: 'hangup-requested', atMs: T0 + 5_030, reason: 'user_end' },
          { type: 'end-confirmed', atMs: T0 + 5_500, record: { status: 'ended', billedSeconds: 6, creditsCost: 9 } },
        ]);
        assert.deepEqual(r.phases, ['creating', 'connecting', 'connecting', 'live', 'ending', 'ending', 'ending', 'ending', 'ended']);
        assert.ok(!r.effects.slice(4).flat().some((e) => e.type === 'open-socket' || e.type === 'schedule-retry'), 'no reconnect');
        const state = r.machine.state;
        assert.equal(state.phase, 'ended');
        if (state.phase !== 'ended') return;
        assert.equal(state.summary.hangupReason, reason);
        assert.equal(state.summary.endedBy, 'server');
        assert.equal(state.summary.billedSeconds, 6);
        assert.equal(state.summary.creditsCost, 9);
      });
    }
  });

  describe('when the user hangs up', () => {
    it('while live: sends type 5 user_end, no reconnect, and ends with the billing figures', () => {
      const r = run([
        { type: 'start', atMs: 1_000, callMode: 'audio' },
        { type: 'created', atMs: 1_200, liveId: 'L9', liveDurationS: 600, callMode: 'audio' },
        { type: 'socket-open', atMs: 1_250 },
        { type: 'ack-success', atMs: 1_300 },
        { type: 'hangup-requested', atMs: 12_300, reason: 'user_end' },
        { type: 'socket-lost', atMs: 12_310, error: { code: 'network', message: 'closed' } },
        { type: 'end-confirmed', atMs: 12_800, record: { status: 'ended', billedSeconds: 12, creditsCost: 18 } },
      ]);
      assert.deepEqual(r.effects[4], [
        { type: 'cancel-retry' },
        { type: 'cancel-duration-guard' },
        { type: 'send-hangup', reason: 'user_end' },
        { type: 'query-final' },
      ]);
      assert.deepEqual(r.effects[5], []);
      assert.deepEqual(r.machine.state, {
        phase: 'ended',
        liveId: 'L9',
        summary: {
          liveId: 'L9',
          callMode: 'audio',
          wentLive: true,
          hangupReason: 'user_end',
          endedBy: 'client',
          finalStatus: 'ended',
          billedSeconds: 12,
          creditsCost: 18,
          notReadyRetries: 0,
          reconnects: 0,
          liveDurationS: 600,
          timingsMs: { create: 200, socketOpen: 250, live: 300, ended: 11_300 },
        },
      });
    });
    it('while warming: stops retrying and closes the room with a hangup (never conn_init)', () => {
      const r = run(['start', 'created', 'socket-open', 'ack-not-ready', 'hangup-requested', 'retry-due', 'end-confirmed']);
      assert.deepEqual(types(r.effects[4]!), ['cancel-retry', 'cancel-duration-guard', 'send-hangup', 'query-final']);
      assert.deepEqual(r.effects[5], [], 'a late retry timer does nothing');
      const state = r.machine.state;
      assert.equal(state.phase, 'ended');
      assert.equal(state.phase === 'ended' && state.summary.wentLive, false);
      assert.equal(state.phase === 'ended' && state.summary.notReadyRetries, 1);
    });
    it('while creating: aborts the request and fails with cancelled', () => {
      const r = run(['start', 'hangup-requested', { type: 'create-failed', atMs: T0 + 300, error: { code: 'cancelled', message: 'aborted' } }]);
      assert.deepEqual(r.effects[1], [{ type: 'abort-create' }]);
      assert.deepEqual(r.machine.state, { phase: 'failed', liveId: null, error: { code: 'cancelled', message: 'The session was cancelled while it was being created.' }, summary: null });
    });
    it('while creating, if the room is created anyway: closes it with a hangup, without credentials or conn_init', () => {
      const r = run(['start', 'hangup-requested', 'hangup-requested', 'created']);
      assert.deepEqual(r.effects[2], [], 'a second hangup changes nothing');
      assert.deepEqual(r.lastEffects, [{ type: 'send-hangup', reason: 'user_end' }]);
      const state = r.machine.state;
      assert.equal(state.phase, 'failed');
      assert.equal(state.phase === 'failed' && state.error.code, 'cancelled');
      assert.equal(state.phase === 'failed' && state.liveId, 'L1');
    });
    it('while creating, closes the room the answer names with type 5 and the reason given, ended by the client, never live', () => {
      const { machine, effects } = play([start(), { type: 'hangup-requested', atMs: T0 + 50, reason: 'timeout' }, created(200)]);
      assert.deepEqual(effects, [{ type: 'send-hangup', reason: 'timeout' }]);
      assert.deepEqual(machine.state, {
        phase: 'failed',
        liveId: 'L1',
        error: { code: 'cancelled', message: 'The session was cancelled while it was being created.' },
        summary: summary({ hangupReason: 'timeout', endedBy: 'client', timingsMs: { create: 200, socketOpen: null, live: null, ended: 200 } }),
      });
    });
    it('while creating, a failed create after the cancel is reported as cancelled, with nothing to close', () => {
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

  describe('when the control socket drops while live', () => {
    it('reconnects at once, then after 250, 500, 1000, 2000 ms … within 10 s, then fails with connection_lost after a hangup', () => {
      const r = run(['start', 'created', 'socket-open', 'ack-success']);
      const dropAt = r.nextAtMs;
      let t = transition(r.machine, { type: 'socket-lost', atMs: dropAt, error: { code: 'timeout', message: 'dead' } }, config);
      assert.deepEqual(types(t.effects), ['close-socket', 'query-status', 'open-socket']);
      assert.equal(t.machine.state.phase, 'reconnecting');
      let atMs = dropAt;
      const delays: number[] = [];
      // Each attempt fails 10 ms after it started.
      for (;;) {
        atMs += 10;
        t = transition(t.machine, { type: 'socket-lost', atMs, error: { code: 'network', message: 'refused' } }, config);
        const retry = t.effects.find((e) => e.type === 'schedule-retry');
        if (!retry || retry.type !== 'schedule-retry') break;
        delays.push(retry.delayMs);
        atMs += retry.delayMs;
        t = transition(t.machine, { type: 'retry-due', atMs }, config);
      }
      assert.deepEqual(delays, [250, 500, 1000, 2000, 2000, 2000, 2000]);
      assert.equal(t.machine.state.phase, 'ending');
      assert.deepEqual(types(t.effects), ['close-socket', 'cancel-duration-guard', 'send-hangup', 'query-final']);
      assert.deepEqual(t.effects[2], { type: 'send-hangup', reason: 'user_end' });
      t = transition(t.machine, { type: 'end-confirmed', atMs: atMs + 500, record: { status: 'ended', billedSeconds: 10, creditsCost: 15 } }, config);
      const state = t.machine.state;
      assert.equal(state.phase, 'failed');
      if (state.phase !== 'failed') return;
      assert.equal(state.error.code, 'connection_lost');
      assert.equal(state.summary?.endedBy, 'network');
      assert.equal(state.summary?.reconnects, 8);
      assert.equal(state.summary?.billedSeconds, 10);
    });
    it('goes back to live with the same live start and end, counting one reconnect', () => {
      const r = run(['start', 'created', 'socket-open', 'ack-success', 'socket-lost', 'socket-open', 'ack-success']);
      assert.deepEqual(r.phases.slice(3), ['live', 'reconnecting', 'reconnecting', 'live']);
      const live = run(FIXTURES.live).machine.state;
      assert.deepEqual(r.machine.state, live);
      assert.equal(r.machine.context.reconnects, 1);
    });
    it('shows the attempt number while reconnecting', () => {
      const r = run(['start', 'created', 'socket-open', 'ack-success', 'socket-lost', 'socket-lost']);
      const state = r.machine.state;
      assert.equal(state.phase, 'reconnecting');
      assert.equal(state.phase === 'reconnecting' && state.attempt, 2);
    });
    it('reconnecting past the budget sends type 5 and fails with connection_lost saying how long it tried', () => {
      const withBudget = { ...config, liveReconnectPolicy: { nextDelayMs: ({ elapsedMs }: RetryContext) => (elapsedMs >= 6_400 ? null : 100) } };
      const ending = play([...LIVE, lost(1_000, 'network'), lost(7_400, 'network')], withBudget);
      assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
      assert.deepEqual(ending.effects, [CLOSE, { type: 'cancel-duration-guard' }, TYPE_5, { type: 'query-final' }]);
      const end = play([confirmed(7_500)], withBudget, ending.machine);
      assert.ok(end.machine.state.phase === 'failed');
      assert.deepEqual(end.machine.state.error, {
        code: 'connection_lost',
        message: 'The connection to the service was lost and could not be restored within 6 s.',
      });
      assert.equal(end.machine.state.summary?.endedBy, 'network');
    });
    it('stops reconnecting when the server says the session ended', () => {
      const r = run([
        'start',
        'created',
        'socket-open',
        'ack-success',
        'socket-lost',
        { type: 'status-known', atMs: T0 + 600, record: { status: 'on_live', billedSeconds: 2, creditsCost: 3 } },
        { type: 'status-known', atMs: T0 + 700, record: { status: 'ended', billedSeconds: 2, creditsCost: 3, hangupReason: 'client_reconnect_timeout' } },
        'retry-due',
        'end-confirmed',
      ]);
      assert.deepEqual(r.phases.slice(4), ['reconnecting', 'reconnecting', 'ending', 'ending', 'ended']);
      assert.deepEqual(r.effects[5], [], 'on_live: keep going');
      assert.deepEqual(r.effects[7], [], 'no reconnect after the end');
      const state = r.machine.state;
      assert.equal(state.phase === 'ended' && state.summary.hangupReason, 'client_reconnect_timeout');
      assert.equal(state.phase === 'ended' && state.summary.endedBy, 'server');
    });
    it('does not reconnect after a fatal error (e.g. 403 on the new handshake)', () => {
      const r = run([
        'start',
        'created',
        'socket-open',
        'ack-success',
        'socket-lost',
        { type: 'socket-lost', atMs: T0 + 600, error: { code: 'forbidden', message: '403' } },
        'end-confirmed',
      ]);
      assert.deepEqual(types(r.effects[5]!), ['cancel-retry', 'cancel-duration-guard', 'close-socket', 'query-final']);
      const state = r.machine.state;
      assert.equal(state.phase === 'failed' && state.error.code, 'forbidden');
    });
    for (const code of ['forbidden', 'unauthorized', 'insufficient_credits', 'invalid_config', 'content_blocked', 'token_expired'] as const) {
      it(`${code} is fatal: the call ends (network) without a reconnect, and fails with that error`, () => {
        const ending = play([...LIVE, lost(1_000, code, 'fatal drop')]);
        assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
        assert.deepEqual(ending.effects, [{ type: 'cancel-duration-guard' }, CLOSE, { type: 'query-final' }]);
        const end = play([confirmed(1_500)], config, ending.machine);
        assert.deepEqual(end.machine.state, {
          phase: 'failed',
          liveId: 'L1',
          error: { code, message: 'fatal drop' },
          summary: summary({ wentLive: true, endedBy: 'network', timingsMs: { create: 100, socketOpen: 200, live: 300, ended: 1_000 } }),
        });
      });
    }
    it('a live call that loses its socket with invalid_config or content_blocked is not reconnected', () => {
      for (const code of ['invalid_config', 'content_blocked'] as const) {
        const { machine, effects } = play([...LIVE, lost(1_000, code)]);
        assert.equal(machine.state.phase, 'ending', code);
        assert.ok(!effects.some((e) => e.type === 'open-socket' || e.type === 'schedule-retry'), code);
      }
    });
    it('a fatal error on the reconnect socket ends the call the same way (network, with that error)', () => {
      const ending = play([...LIVE, lost(1_000, 'network'), lost(1_100, 'forbidden', 'not yours')]);
      assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
      assert.deepEqual(ending.effects, [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, CLOSE, { type: 'query-final' }]);
      const end = play([confirmed(1_500)], config, ending.machine);
      assert.equal(end.machine.state.phase, 'failed');
      assert.ok(end.machine.state.phase === 'failed');
      assert.deepEqual(end.machine.state.error, { code: 'forbidden', message: 'not yours' });
      assert.equal(end.machine.state.summary?.endedBy, 'network');
      assert.equal(end.machine.state.summary?.reconnects, 1);
    });
    it('LIVE_CONN_INIT_FAILED on the reconnect socket ends the call (network) with init_failed naming the code', () => {
      const ending = play([...LIVE, lost(1_000, 'network'), { type: 'ack-failed', atMs: T0 + 1_100, errorCode: 'LIVE_CONN_INIT_FAILED' }]);
      assert.deepEqual(ending.machine.state, { phase: 'ending', liveId: 'L1', reason: 'user_end' });
      const end = play([confirmed(1_500)], config, ending.machine);
      assert.ok(end.machine.state.phase === 'failed');
      assert.deepEqual(end.machine.state.error, {
        code: 'init_failed',
        message: 'The avatar could not be started (LIVE_CONN_INIT_FAILED); create a new session.',
      });
      assert.equal(end.machine.state.summary?.endedBy, 'network');
      assert.equal(end.machine.state.summary?.hangupReason, null);
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
          const end = play([confirmed(1_500)], config, machine);
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
        const r = transition(reconnecting, { type: 'status-known', atMs: T0 + 1_050, record: { status: 'on_live', billedSeconds: null, creditsCost: null } }, config);
        assert.equal(r.machine, reconnecting);
        assert.deepEqual(r.effects, []);
      });
    });
  });

  describe('the retry policies are told what went wrong', () => {
    it('NOT_READY asks the warm-up policy with attempt 1, the time since the first NOT_READY and the NOT_READY', () => {
      const rec = recording(notReadyPolicy);
      play([...CONNECTING, notReady(300), retryDue(2_300), notReady(2_500)], { ...config, notReadyPolicy: rec.policy });
      assert.deepEqual(rec.asked, [
        { attempt: 1, elapsedMs: 0, lastError: 'NOT_READY' },
        { attempt: 2, elapsedMs: 2_200, lastError: 'NOT_READY' },
      ]);
    });

    it('a drop before the ack asks the warm-up policy with the error of the drop', () => {
      const rec = recording(notReadyPolicy);
      play([...CONNECTING, lost(300, 'network', 'closed 1006')], { ...config, notReadyPolicy: rec.policy });
      assert.deepEqual(rec.asked, [{ attempt: 1, elapsedMs: 0, lastError: { code: 'network', message: 'closed 1006' } }]);
    });

    it('NOT_READY on a reconnect asks the live policy, naming it as such', () => {
      const rec = recording(liveReconnectPolicy);
      play([...LIVE, lost(1_000, 'network'), notReady(1_200)], { ...config, liveReconnectPolicy: rec.policy });
      assert.deepEqual(rec.asked, [
        { attempt: 1, elapsedMs: 0, lastError: { code: 'network', message: 'lost: network' } },
        { attempt: 2, elapsedMs: 200, lastError: { code: 'not_ready', message: 'NOT_READY on reconnect' } },
      ]);
    });
  });

  describe('live_duration', () => {
    it('guards the end at live start + live_duration + 2 s, then hangs up with timeout (endedBy limit)', () => {
      const r = run(['start', 'created', 'socket-open', { type: 'ack-success', atMs: 5_000 }]);
      assert.deepEqual(r.lastEffects, [{ type: 'schedule-duration-guard', atMs: 5_000 + 600_000 + 2_000 }]);
      assert.deepEqual(r.machine.state, { phase: 'live', liveId: 'L1', sinceMs: 5_000, endsAtMs: 605_000 });
      const end = run(['duration-reached', 'end-confirmed'], r.machine, 607_000);
      assert.deepEqual(end.effects[0], [{ type: 'cancel-retry' }, { type: 'send-hangup', reason: 'timeout' }, { type: 'query-final' }]);
      const state = end.machine.state;
      assert.equal(state.phase === 'ended' && state.summary.hangupReason, 'timeout');
      assert.equal(state.phase === 'ended' && state.summary.endedBy, 'limit');
    });
  });

  describe('create errors', () => {
    it('fail with the error of the HTTP answer, without a summary (no session exists)', () => {
      const r = run(['start', { type: 'create-failed', atMs: T0 + 50, error: { code: 'insufficient_credits', message: 'balance 10' } }]);
      assert.deepEqual(r.machine.state, { phase: 'failed', liveId: null, error: { code: 'insufficient_credits', message: 'balance 10' }, summary: null });
    });
  });
});

describe('session machine: RTC first, then billing (awaitRtcReady)', () => {
  const rtcConfig: MachineConfig = { ...config, awaitRtcReady: true, rtcReadyTimeoutMs: 30_000 };
  const runRtc = (events: Array<EventType | MachineEvent>) => run(events, initialMachine(), T0, rtcConfig);
  const RTC: MachineConfig = { ...config, awaitRtcReady: true };

  it('gives the renderer 30 s to get ready by default, or the configured time', () => {
    const guard = (config: MachineConfig) => play([start(), created(100)], config).effects.find((e) => e.type === 'schedule-rtc-guard');
    assert.deepEqual(guard(RTC), { type: 'schedule-rtc-guard', atMs: T0 + 100 + 30_000 });
    assert.deepEqual(guard({ ...RTC, rtcReadyTimeoutMs: 5_000 }), { type: 'schedule-rtc-guard', atMs: T0 + 100 + 5_000 });
  });
  it('opens the socket holding conn_init, and sends conn_init only once the RTC side is ready', () => {
    const r = runRtc(['start', 'created', 'socket-open', 'rtc-ready']);
    assert.deepEqual(r.effects[1], [
      { type: 'emit-credentials' },
      { type: 'open-socket', holdConnInit: true },
      { type: 'schedule-rtc-guard', atMs: T0 + 100 + 30_000 },
    ]);
    assert.deepEqual(r.effects[2], []);
    assert.deepEqual(r.effects[3], [{ type: 'cancel-rtc-guard' }, { type: 'send-conn-init' }]);
    assert.deepEqual(r.machine.state, { phase: 'connecting', liveId: 'L1', attempt: 1 });
    assert.equal(r.machine.context.rtcReady, true);
    // A second report changes nothing.
    const again = transition(r.machine, { type: 'rtc-ready', atMs: r.nextAtMs }, rtcConfig);
    assert.equal(again.machine, r.machine);
  });
  it('a ready report before the session exists counts for nothing: conn_init waits for the ready after the credentials', () => {
    const early = play([start(), { type: 'rtc-ready', atMs: T0 + 50 }], RTC);
    assert.deepEqual(early.effects, []);
    const ready = play([created(100), open(200), { type: 'rtc-ready', atMs: T0 + 300 }], RTC, early.machine);
    assert.deepEqual(ready.effects, [{ type: 'cancel-rtc-guard' }, { type: 'send-conn-init' }]);
  });
  it('keeps the NOT_READY backoff at exactly 2, 4 and 8 s once conn_init went out, and never holds again', () => {
    let r = runRtc(['start', 'created', 'socket-open', 'rtc-ready']);
    let machine = r.machine;
    let atMs = r.nextAtMs;
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = transition(machine, { type: 'ack-not-ready', atMs }, rtcConfig);
      const retry = t.effects.find((e) => e.type === 'schedule-retry');
      assert.ok(retry && retry.type === 'schedule-retry');
      delays.push(retry.delayMs);
      atMs += retry.delayMs;
      const due = transition(t.machine, { type: 'retry-due', atMs }, rtcConfig);
      assert.deepEqual(due.effects, [{ type: 'open-socket' }], 'the RTC side is ready: a plain conn_init socket');
      machine = due.machine;
    }
    assert.deepEqual(delays, [2000, 4000, 8000]);
    r = { ...r, machine };
  });
  it('a join failure before ready ends the session with type 5 and no conn_init, reported as rtc_failed', () => {
    const r = runRtc(['start', 'created', 'socket-open', { type: 'rtc-failed', atMs: T0 + 900, error: { code: 'rtc_failed', message: 'blocked' } }]);
    assert.deepEqual(r.effects[3], [
      { type: 'cancel-retry' },
      { type: 'cancel-duration-guard' },
      { type: 'cancel-rtc-guard' },
      { type: 'send-hangup', reason: 'user_end' },
      { type: 'query-final' },
    ]);
    assert.ok(!r.effects.flat().some((e) => e.type === 'send-conn-init'));
    const done = transition(r.machine, { type: 'end-confirmed', atMs: T0 + 1_500, record: { status: 'ended', billedSeconds: 0, creditsCost: 0 } }, rtcConfig);
    const state = done.machine.state;
    assert.equal(state.phase, 'failed');
    if (state.phase !== 'failed') return;
    assert.equal(state.error.code, 'rtc_failed');
    assert.equal(state.summary?.wentLive, false);
    assert.equal(state.summary?.creditsCost, 0);
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
  it('a join failure is ignored once live (media failures while live end the call through hangup)', () => {
    const r = runRtc(['start', 'created', 'socket-open', 'rtc-ready', 'ack-success']);
    assert.equal(r.machine.state.phase, 'live');
    const t = transition(r.machine, { type: 'rtc-failed', atMs: r.nextAtMs, error: { code: 'rtc_failed', message: 'x' } }, rtcConfig);
    assert.equal(t.machine, r.machine);
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
  it('a socket lost while holding conn_init retries with a socket that still holds it', () => {
    const r = runRtc(['start', 'created', 'socket-open', 'socket-lost', 'retry-due']);
    assert.deepEqual(r.effects[4], [{ type: 'open-socket', holdConnInit: true }]);
    const ready = transition(r.machine, { type: 'rtc-ready', atMs: r.nextAtMs }, rtcConfig);
    assert.deepEqual(ready.effects, [{ type: 'cancel-rtc-guard' }, { type: 'send-conn-init' }]);
  });
  it('ready while warming sends nothing at once: the next socket sends conn_init on open', () => {
    const r = runRtc(['start', 'created', 'socket-open', 'socket-lost', 'rtc-ready', 'retry-due']);
    assert.deepEqual(r.effects[4], [{ type: 'cancel-rtc-guard' }]);
    assert.deepEqual(r.effects[5], [{ type: 'open-socket' }]);
  });
});

describe('session machine: a created session is never abandoned', () => {
  it('a fatal network error before live sends type 5 (not only a close)', () => {
    const r = run(['start', 'created', { type: 'socket-lost', atMs: T0 + 500, error: { code: 'invalid_request', message: 'refused' } }]);
    assert.equal(r.machine.state.phase, 'failed');
    assert.deepEqual(r.lastEffects, [{ type: 'send-hangup', reason: 'user_end' }]);
  });

  it('the pre-live retry budget running out sends type 5', () => {
    let r = run(['start', 'created', 'socket-lost']);
    let atMs = r.nextAtMs;
    for (let i = 0; i < 50 && r.machine.state.phase !== 'failed'; i++) {
      const due = transition(r.machine, { type: 'retry-due', atMs: atMs + 8_000 }, config);
      const lost = transition(due.machine, { type: 'socket-lost', atMs: atMs + 8_100, error: { code: 'network', message: 'refused' } }, config);
      r = { ...r, machine: lost.machine, lastEffects: lost.effects };
      atMs += 8_200;
    }
    assert.equal(r.machine.state.phase, 'failed');
    assert.deepEqual(r.lastEffects, [{ type: 'send-hangup', reason: 'user_end' }]);
  });

  it('LIVE_CONN_INIT_FAILED still closes the room with type 5', () => {
    const r = run(['start', 'created', 'socket-open', 'ack-failed']);
    assert.deepEqual(r.lastEffects, [{ type: 'send-hangup', reason: 'user_end' }]);
  });

  it('a driver error while warming sends type 5', () => {
    const r = run(['start', 'created', 'socket-open', 'ack-not-ready', 'error']);
    assert.deepEqual(r.lastEffects, [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, { type: 'send-hangup', reason: 'user_end' }]);
  });
});
