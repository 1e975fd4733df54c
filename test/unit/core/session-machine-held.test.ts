/**
 * The `held` phase of the session machine: a spare, created ahead of the tap, its socket open and
 * holding conn_init. Each way in and out is checked to the exact state and effects: `hold` → created →
 * held (socket opened holding conn_init, expiry scheduled from the create's answer); `release` (the tap)
 * → connecting with conn_init at once, or RTC first; and every way a held session ends unused — expiry,
 * a hangup, the service's type 6, a lost socket, a 404, a driver error — with type 5 and never conn_init
 * (no type 5 where the service ended or expired the room itself), and no billing read-back.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { liveReconnectPolicy, notReadyPolicy } from '../../../electron/core/reconnect-policy.ts';
import { initialMachine, RTC_READY_TIMEOUT_MS, transition, type Machine, type MachineConfig, type MachineEffect, type MachineEvent } from '../../../electron/core/session-machine.ts';

const config: MachineConfig = { notReadyPolicy, liveReconnectPolicy, durationGraceMs: 2_000 };
const rtcFirst: MachineConfig = { ...config, awaitRtcReady: true, rtcReadyTimeoutMs: 30_000 };
const T0 = 1_000_000;
const HOLD_MS = 90_000;

const hold = (dt = 0): MachineEvent => ({ type: 'hold', atMs: T0 + dt, callMode: 'video', holdForMs: HOLD_MS });
const created = (dt: number): MachineEvent => ({ type: 'created', atMs: T0 + dt, liveId: 'L1', liveDurationS: 600, callMode: 'video' });
const open = (dt: number): MachineEvent => ({ type: 'socket-open', atMs: T0 + dt });
const release = (dt: number): MachineEvent => ({ type: 'release', atMs: T0 + dt });

/** Each step's [phase, effects], from idle. */
function trace(events: MachineEvent[], withConfig: MachineConfig = config): { machine: Machine; steps: Array<[string, MachineEffect[]]> } {
  let machine = initialMachine();
  const steps: Array<[string, MachineEffect[]]> = [];
  for (const event of events) {
    const result = transition(machine, event, withConfig);
    machine = result.machine;
    steps.push([machine.state.phase, result.effects]);
  }
  return { machine, steps };
}

/** Held with its socket open: created at +100, open at +200. */
const HELD = [hold(), created(100), open(200)];

describe('session machine: the held phase (a spare)', () => {
  it('hold → creating → held: the socket opens holding conn_init, the expiry counts from the create answer, no credentials yet', () => {
    const { machine, steps } = trace(HELD);
    assert.deepEqual(steps, [
      ['creating', [{ type: 'create-session' }]],
      ['held', [{ type: 'open-socket', holdConnInit: true }, { type: 'schedule-hold-expiry', atMs: T0 + 100 + HOLD_MS }]],
      ['held', []],
    ]);
    assert.deepEqual(machine.state, { phase: 'held', liveId: 'L1', socketOpen: true, expiresAtMs: T0 + 100 + HOLD_MS });
    assert.equal(machine.context.connInitHeld, true);
    assert.equal(machine.context.holdForMs, HOLD_MS);
  });

  it('release (the tap) → connecting: credentials, then conn_init on the held socket; timings count from the tap', () => {
    const { machine, steps } = trace([...HELD, release(5_000), { type: 'ack-success', atMs: T0 + 5_050 }]);
    assert.deepEqual(steps.slice(3), [
      ['connecting', [{ type: 'cancel-hold-expiry' }, { type: 'emit-credentials' }, { type: 'send-conn-init' }]],
      ['live', [{ type: 'schedule-duration-guard', atMs: T0 + 5_050 + 600_000 + 2_000 }]],
    ]);
    assert.deepEqual(machine.state, { phase: 'live', liveId: 'L1', sinceMs: T0 + 5_050, endsAtMs: T0 + 5_050 + 600_000 });
    const ctx = machine.context;
    assert.deepEqual([ctx.startedAtMs, ctx.createdAtMs, ctx.firstSocketOpenAtMs, ctx.liveAtMs], [T0 + 5_000, T0 + 5_000, T0 + 5_000, T0 + 5_050]);
    assert.deepEqual([ctx.holdForMs, ctx.connInitHeld, ctx.socketsOpened], [null, false, 1]);
  });

  it('release, RTC first: conn_init waits for rtc-ready (guarded), then goes out on the same socket', () => {
    const { machine, steps } = trace([...HELD, release(5_000), { type: 'rtc-ready', atMs: T0 + 5_400 }], rtcFirst);
    assert.deepEqual(steps.slice(3), [
      ['connecting', [{ type: 'cancel-hold-expiry' }, { type: 'emit-credentials' }, { type: 'schedule-rtc-guard', atMs: T0 + 5_000 + 30_000 }]],
      ['connecting', [{ type: 'cancel-rtc-guard' }, { type: 'send-conn-init' }]],
    ]);
    assert.equal(machine.context.connInitHeld, false);
  });

  it('release, RTC first, with no bound configured: the renderer gets the default RTC_READY_TIMEOUT_MS to join', () => {
    const { steps } = trace([...HELD, release(5_000)], { ...config, awaitRtcReady: true });
    assert.deepEqual(steps.at(-1), ['connecting', [{ type: 'cancel-hold-expiry' }, { type: 'emit-credentials' }, { type: 'schedule-rtc-guard', atMs: T0 + 5_000 + RTC_READY_TIMEOUT_MS }]]);
  });

  it('released before its socket opened: conn_init is still due on it, and its open counts as the first', () => {
    const { machine, steps } = trace([hold(), created(100), release(150), open(300)]);
    assert.deepEqual(steps.slice(2), [
      ['connecting', [{ type: 'cancel-hold-expiry' }, { type: 'emit-credentials' }, { type: 'send-conn-init' }]],
      ['connecting', []],
    ]);
    assert.equal(machine.context.firstSocketOpenAtMs, T0 + 300);
  });

  describe('ends unused, never billed', () => {
    const endings: Array<[string, MachineEvent, string, MachineEffect[]]> = [
      ['expired', { type: 'hold-expired', atMs: T0 + 90_100 }, 'ended', [{ type: 'send-hangup', reason: 'user_end' }]],
      ['given up (a hangup)', { type: 'hangup-requested', atMs: T0 + 1_000, reason: 'user_end' }, 'ended', [{ type: 'cancel-hold-expiry' }, { type: 'send-hangup', reason: 'user_end' }]],
      ['ended by the service (type 6): no type 5 back', { type: 'forced-hangup', atMs: T0 + 1_000, reason: 'server_error' }, 'ended', [{ type: 'cancel-hold-expiry' }, { type: 'close-socket' }]],
      ['its socket lost: type 5 over a fresh socket', { type: 'socket-lost', atMs: T0 + 1_000, error: { code: 'network', message: 'closed 1006' } }, 'failed', [{ type: 'cancel-hold-expiry' }, { type: 'send-hangup', reason: 'user_end' }]],
      ['expired by the service (404): nothing to close', { type: 'socket-lost', atMs: T0 + 1_000, error: { code: 'not_found', message: '404' } }, 'failed', [{ type: 'cancel-hold-expiry' }, { type: 'close-socket' }]],
      ['a driver error', { type: 'error', atMs: T0 + 1_000, error: { code: 'internal', message: 'boom' } }, 'failed', [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, { type: 'cancel-hold-expiry' }, { type: 'send-hangup', reason: 'user_end' }]],
    ];
    for (const [title, event, phase, effects] of endings) {
      it(`${title} → ${phase}, with no conn_init and no billing read-back`, () => {
        const { machine, steps } = trace([...HELD, event]);
        assert.deepEqual(steps.at(-1), [phase, effects]);
        const all = steps.flatMap(([, fx]) => fx.map((e) => e.type));
        assert.ok(!all.includes('send-conn-init') && !all.includes('query-final'));
        assert.equal(machine.context.wentLive, false);
      });
    }

    it('the summary of an unused spare says who ended it and why (the spare keeper names its end by it)', () => {
      const expired = trace([...HELD, { type: 'hold-expired', atMs: T0 + 90_100 }]).machine.state;
      const forced = trace([...HELD, { type: 'forced-hangup', atMs: T0 + 1_000, reason: 'server_error' }]).machine.state;
      assert.ok(expired.phase === 'ended' && forced.phase === 'ended');
      assert.deepEqual([expired.summary.endedBy, expired.summary.hangupReason, expired.summary.timingsMs], ['limit', 'user_end', { create: 100, socketOpen: 200, live: null, ended: 90_100 }]);
      assert.deepEqual([forced.summary.endedBy, forced.summary.hangupReason], ['server', 'server_error']);
      // Given up by the kiosk (settings changed, nobody in front, shutdown): ended by the client, for its reason.
      const dropped = trace([...HELD, { type: 'hangup-requested', atMs: T0 + 2_000, reason: 'user_end' }]).machine.state;
      assert.ok(dropped.phase === 'ended');
      assert.deepEqual([dropped.summary.endedBy, dropped.summary.hangupReason], ['client', 'user_end']);
    });
  });

  it('held ignores what only a call answers (acks, retries, the RTC side, the duration guard) and a second socket-open', () => {
    const { machine } = trace(HELD);
    for (const event of [
      { type: 'ack-success', atMs: T0 + 300 },
      { type: 'ack-not-ready', atMs: T0 + 300 },
      { type: 'ack-failed', atMs: T0 + 300, errorCode: 'LIVE_CONN_INIT_FAILED' },
      { type: 'retry-due', atMs: T0 + 300 },
      { type: 'rtc-ready', atMs: T0 + 300 },
      { type: 'duration-reached', atMs: T0 + 300 },
      open(300),
      hold(300),
      created(300),
    ] as MachineEvent[]) {
      assert.equal(transition(machine, event, rtcFirst).machine, machine, event.type);
    }
  });

  it('a hold cancelled while its create is in flight closes the room the answer names: type 5, no socket of its own, no conn_init', () => {
    const { machine, steps } = trace([hold(), { type: 'hangup-requested', atMs: T0 + 50, reason: 'user_end' }, created(100)]);
    assert.deepEqual(steps, [
      ['creating', [{ type: 'create-session' }]],
      ['creating', [{ type: 'abort-create' }]],
      ['failed', [{ type: 'send-hangup', reason: 'user_end' }]],
    ]);
    assert.ok(machine.state.phase === 'failed' && machine.state.error.code === 'cancelled');
  });

  it('release means nothing outside held (a started session, a finished spare)', () => {
    const started = trace([{ type: 'start', atMs: T0, callMode: 'video' }, created(100)]).machine;
    assert.equal(transition(started, release(200), config).machine, started);
    const expired = trace([...HELD, { type: 'hold-expired', atMs: T0 + 90_100 }]).machine;
    assert.equal(transition(expired, release(90_200), config).machine, expired);
  });
});
