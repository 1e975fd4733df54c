/**
 * Property tests of the pure session machine (electron/core/session-machine.ts) with fast-check.
 *
 * A small model of the world around the machine (the driver's sockets, timers, HTTP calls in flight) turns
 * the machine's effects into what can happen next. fast-check generates what the world then does, in any
 * order and with any timing: acks of every kind, drops with every error code, forced hangups with every
 * reason (and unknown ones), user hangups at any moment, timers firing, status and billing answers, driver
 * errors. After each generated sequence the world is left to run on its own (every socket fails, every
 * timer fires, every query answers), which must end the session.
 *
 * Invariants, checked at every step:
 *   1. at most one type 5 (send-hangup) per session;
 *   2. no conn_init (open-socket) after a hangup was requested or sent, or after a forced hangup;
 *   3. no reconnect (open-socket or schedule-retry) after a forced hangup with credit_insufficient or
 *      audit_violation (spec §6 rule 6), nor after LIVE_CONN_INIT_FAILED (rule 3);
 *   4. terminal phases absorb every event (no effects, no change);
 *   5. entering ending/ended/failed, no retry or duration timer is left pending;
 *   6. every session reaches ended or failed once the world runs on its own (no state waits forever).
 * A second property feeds raw events that the world could never produce (any event in any phase) and
 * checks the safety invariants 1-4 still hold.
 *
 * Seeded: see test/helpers/property.ts (PROPERTY_SEED, PROPERTY_RUNS_SCALE).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ERROR_CODES, type ErrorCode } from '../../../electron/core/errors.ts';
import { HANGUP_REASONS, LIVE_STATUSES } from '../../../electron/core/protocol.ts';
import { liveReconnectPolicy, notReadyPolicy } from '../../../electron/core/reconnect-policy.ts';
import {
  initialMachine,
  isTerminal,
  transition,
  type FinalRecord,
  type Machine,
  type MachineConfig,
  type MachineEffect,
  type MachineEvent,
} from '../../../electron/core/session-machine.ts';
import { propertyParams } from '../../helpers/property.ts';

const config: MachineConfig = { notReadyPolicy, liveReconnectPolicy, durationGraceMs: 2_000 };
const T0 = 1_700_000_000_000;
const NO_RECONNECT = new Set(['credit_insufficient', 'audit_violation']);

// ---------------------------------------------------------------------------------------------------
// Generators

const reasonArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HANGUP_REASONS) },
  { weight: 1, arbitrary: fc.constantFrom('unknown', '', 'SOMETHING_NEW', 'credit_insufficient ') },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const errorCodeArb = fc.constantFrom(...ERROR_CODES);
const errorArb = errorCodeArb.map((code) => ({ code, message: `generated ${code}` }));
const ackErrorCodeArb = fc.constantFrom('LIVE_CONN_INIT_FAILED', 'UNKNOWN', 'NOT_READY_LATER', '');
const recordArb: fc.Arbitrary<FinalRecord> = fc.record({
  status: fc.oneof(fc.constantFrom(...LIVE_STATUSES), fc.string({ maxLength: 8 })),
  billedSeconds: fc.option(fc.nat(1_200), { nil: null }),
  creditsCost: fc.option(fc.nat(1_800), { nil: null }),
  hangupReason: fc.option(reasonArb, { nil: undefined }),
});
const delayArb = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3_000 }), fc.integer({ min: 3_000, max: 700_000 }));

/** What the world does next. Steps that do not apply to the current world are skipped. */
type Step =
  | { kind: 'advance'; ms: number }
  | { kind: 'create-answer'; ok: boolean; error: ErrorCode; liveDurationS: number }
  | { kind: 'socket-open' }
  | { kind: 'ack'; result: 'success' | 'not-ready' | 'failed'; errorCode: string }
  | { kind: 'forced-hangup'; reason: string }
  | { kind: 'socket-lost'; error: ErrorCode }
  | { kind: 'status-answer'; record: FinalRecord }
  | { kind: 'final-answer'; record: FinalRecord | null }
  | { kind: 'user-hangup'; reason: string }
  | { kind: 'driver-error'; error: ErrorCode };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: delayArb.map((ms) => ({ kind: 'advance' as const, ms })) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('create-answer' as const), ok: fc.boolean(), error: errorCodeArb, liveDurationS: fc.integer({ min: 1, max: 600 }) }),
  },
  { weight: 4, arbitrary: fc.constant({ kind: 'socket-open' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('ack' as const), result: fc.constantFrom('success' as const, 'not-ready' as const, 'failed' as const), errorCode: ackErrorCodeArb }),
  },
  { weight: 2, arbitrary: reasonArb.map((reason) => ({ kind: 'forced-hangup' as const, reason })) },
  { weight: 3, arbitrary: errorCodeArb.map((error) => ({ kind: 'socket-lost' as const, error })) },
  { weight: 1, arbitrary: recordArb.map((record) => ({ kind: 'status-answer' as const, record })) },
  { weight: 2, arbitrary: fc.option(recordArb, { nil: null }).map((record) => ({ kind: 'final-answer' as const, record })) },
  { weight: 1, arbitrary: reasonArb.map((reason) => ({ kind: 'user-hangup' as const, reason })) },
  { weight: 1, arbitrary: errorCodeArb.map((error) => ({ kind: 'driver-error' as const, error })) },
);

// ---------------------------------------------------------------------------------------------------
// The world model and the invariants

class World {
  machine: Machine = initialMachine();
  now = T0;
  /** The machine's current control socket (open-socket makes one, close-socket/send-hangup drop it). */
  socket: { open: boolean; acked: boolean } | null = null;
  retryAtMs: number | null = null;
  durationAtMs: number | null = null;
  createInFlight = false;
  statusQueries = 0;
  finalQuery = false;
  // what happened (for the invariants)
  hangupsSent = 0;
  endRequested: string | null = null;
  noReconnectBecause: string | null = null;
  readonly trail: string[] = [];

  constructor(readonly checkWorldInvariants = true) {}

  dispatch(event: MachineEvent): void {
    const before = this.machine;
    const { machine, effects } = transition(before, event, config);
    this.trail.push(`${before.state.phase} --${event.type}--> ${machine.state.phase} [${effects.map((e) => e.type).join(',')}]`);
    if (isTerminal(before.state)) {
      // 4. terminal phases absorb everything
      assert.equal(machine, before, 'a terminal machine changed');
      assert.deepEqual(effects, [], 'a terminal machine produced effects');
    }
    if (machine !== before) {
      if (event.type === 'forced-hangup') {
        this.endRequested ??= `forced hangup (${event.reason})`;
        if (NO_RECONNECT.has(event.reason)) this.noReconnectBecause ??= event.reason;
      }
      if (event.type === 'hangup-requested') this.endRequested ??= `hangup requested (${event.reason})`;
      if (event.type === 'ack-failed') this.noReconnectBecause ??= `conn_init failed (${event.errorCode})`;
    }
    this.machine = machine;
    for (const effect of effects) this.#apply(effect);
    const phase = machine.state.phase;
    if (this.checkWorldInvariants && phase !== before.state.phase && (phase === 'ending' || isTerminal(machine.state))) {
      // 5. nothing left ticking once the call is over
      assert.equal(this.retryAtMs, null, `a retry timer is pending on entering ${phase}`);
      assert.equal(this.durationAtMs, null, `the duration guard is pending on entering ${phase}`);
    }
  }

  #apply(effect: MachineEffect): void {
    switch (effect.type) {
      case 'create-session':
        this.createInFlight = true;
        return;
      case 'abort-create':
      case 'emit-credentials':
        return;
      case 'open-socket':
        // 2. and 3.
        assert.equal(this.endRequested, null, `conn_init after ${this.endRequested}`);
        assert.equal(this.noReconnectBecause, null, `a reconnect after ${this.noReconnectBecause}`);
        this.socket = { open: false, acked: false };
        return;
      case 'close-socket':
        this.socket = null;
        return;
      case 'send-hangup':
        // 1.
        this.hangupsSent += 1;
        assert.ok(this.hangupsSent <= 1, 'a second type 5 for the same session');
        this.endRequested ??= `hangup sent (${effect.reason})`;
        this.socket = null;
        return;
      case 'schedule-retry':
        assert.equal(this.noReconnectBecause, null, `a retry scheduled after ${this.noReconnectBecause}`);
        assert.equal(this.endRequested, null, `a retry scheduled after ${this.endRequested}`);
        assert.ok(effect.delayMs >= 0 && Number.isFinite(effect.delayMs), `bad retry delay ${effect.delayMs}`);
        this.retryAtMs = this.now + effect.delayMs;
        return;
      case 'cancel-retry':
        this.retryAtMs = null;
        return;
      case 'schedule-duration-guard':
        this.durationAtMs = effect.atMs;
        return;
      case 'cancel-duration-guard':
        this.durationAtMs = null;
        return;
      case 'query-status':
        this.statusQueries += 1;
        return;
      case 'query-final':
        this.finalQuery = true;
        return;
    }
  }

  /** Fires timers due by `untilMs`, in time order (the retry first on a tie, as it was set first). */
  advanceTo(untilMs: number): void {
    for (;;) {
      const due = [
        this.retryAtMs !== null && this.retryAtMs <= untilMs ? { at: this.retryAtMs, which: 'retry' as const } : null,
        this.durationAtMs !== null && this.durationAtMs <= untilMs ? { at: this.durationAtMs, which: 'duration' as const } : null,
      ]
        .filter((t) => t !== null)
        .sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.now = Math.max(this.now, due.at);
      if (due.which === 'retry') {
        this.retryAtMs = null;
        this.dispatch({ type: 'retry-due', atMs: this.now });
      } else {
        this.durationAtMs = null;
        this.dispatch({ type: 'duration-reached', atMs: this.now });
      }
    }
    this.now = Math.max(this.now, untilMs);
  }

  /** One generated step, if it applies to the world as it is. */
  step(s: Step): void {
    const atMs = this.now;
    switch (s.kind) {
      case 'advance':
        return this.advanceTo(this.now + s.ms);
      case 'create-answer':
        if (!this.createInFlight) return;
        this.createInFlight = false;
        return this.dispatch(
          s.ok
            ? { type: 'created', atMs, liveId: 'L1', liveDurationS: s.liveDurationS, callMode: 'video' }
            : { type: 'create-failed', atMs, error: { code: s.error, message: 'create failed' } },
        );
      case 'socket-open':
        if (!this.socket || this.socket.open) return;
        this.socket.open = true;
        return this.dispatch({ type: 'socket-open', atMs });
      case 'ack':
        // The control socket reports one ack per connection, on an open socket.
        if (!this.socket?.open || this.socket.acked) return;
        this.socket.acked = true;
        if (s.result === 'success') return this.dispatch({ type: 'ack-success', atMs });
        if (s.result === 'not-ready') return this.dispatch({ type: 'ack-not-ready', atMs });
        return this.dispatch({ type: 'ack-failed', atMs, errorCode: s.errorCode || 'UNKNOWN' });
      case 'forced-hangup':
        if (!this.socket?.open) return;
        return this.dispatch({ type: 'forced-hangup', atMs, reason: s.reason });
      case 'socket-lost':
        if (!this.socket) return;
        this.socket = null;
        return this.dispatch({ type: 'socket-lost', atMs, error: { code: s.error, message: 'lost' } });
      case 'status-answer':
        if (this.statusQueries === 0) return;
        this.statusQueries -= 1;
        return this.dispatch({ type: 'status-known', atMs, record: s.record });
      case 'final-answer':
        if (!this.finalQuery) return;
        this.finalQuery = false;
        return this.dispatch({ type: 'end-confirmed', atMs, record: s.record });
      case 'user-hangup':
        return this.dispatch({ type: 'hangup-requested', atMs, reason: s.reason });
      case 'driver-error':
        return this.dispatch({ type: 'error', atMs, error: { code: s.error, message: 'driver error' } });
    }
  }

  /**
   * The world runs on its own, as unhelpfully as it can: every create fails, every socket drops, every
   * status query says the session is still on, every timer fires. A session that cannot end this way
   * would wait forever. Returns the number of steps it took.
   */
  drain(maxSteps = 500): number {
    for (let i = 0; i < maxSteps; i++) {
      if (isTerminal(this.machine.state)) return i;
      const atMs = this.now;
      if (this.createInFlight) {
        this.createInFlight = false;
        this.dispatch({ type: 'create-failed', atMs, error: { code: 'network', message: 'unreachable' } });
      } else if (this.finalQuery) {
        this.finalQuery = false;
        this.dispatch({ type: 'end-confirmed', atMs, record: null });
      } else if (this.socket && !this.socket.acked) {
        this.socket = null;
        this.dispatch({ type: 'socket-lost', atMs, error: { code: 'network', message: 'refused' } });
      } else if (this.statusQueries > 0) {
        this.statusQueries -= 1;
        this.dispatch({ type: 'status-known', atMs, record: { status: 'on_live', billedSeconds: null, creditsCost: null } });
      } else {
        const next = Math.min(this.retryAtMs ?? Infinity, this.durationAtMs ?? Infinity);
        assert.ok(Number.isFinite(next), `stuck in ${this.machine.state.phase}: nothing in flight and no timer pending`);
        this.advanceTo(next);
      }
    }
    assert.fail(`no end after ${maxSteps} steps (phase ${this.machine.state.phase})`);
  }
}

// ---------------------------------------------------------------------------------------------------

describe('session machine properties', () => {
  it('for any world, the invariants hold and every session ends (10,000 sequences)', (t) => {
    fc.assert(
      fc.property(fc.constantFrom('audio' as const, 'video' as const), fc.array(stepArb, { maxLength: 60 }), (callMode, steps) => {
        const world = new World();
        world.dispatch({ type: 'start', atMs: world.now, callMode });
        try {
          for (const s of steps) world.step(s);
          world.drain();
          const state = world.machine.state;
          assert.ok(state.phase === 'ended' || state.phase === 'failed');
          if (state.phase === 'failed') assert.ok(ERROR_CODES.includes(state.error.code) && state.error.message.length > 0);
        } catch (error) {
          // The transition trail makes a shrunk counterexample readable.
          (error as Error).message += `\ntrail:\n  ${world.trail.join('\n  ')}`;
          throw error;
        }
      }),
      propertyParams('session machine / world model', 10_000, (line) => t.diagnostic(line)),
    );
  });

  it('for any raw event sequence, even impossible ones, the safety invariants hold (3,000 sequences)', (t) => {
    const rawEventArb: fc.Arbitrary<(atMs: number) => MachineEvent> = fc.oneof(
      fc.constantFrom('audio' as const, 'video' as const).map((callMode) => (atMs: number): MachineEvent => ({ type: 'start', atMs, callMode })),
      fc.integer({ min: 1, max: 600 }).map((s) => (atMs: number): MachineEvent => ({ type: 'created', atMs, liveId: 'L1', liveDurationS: s, callMode: 'audio' })),
      errorArb.map((error) => (atMs: number): MachineEvent => ({ type: 'create-failed', atMs, error })),
      fc.constantFrom('socket-open', 'ack-success', 'ack-not-ready', 'retry-due', 'duration-reached').map(
        (type) => (atMs: number) => ({ type, atMs }) as MachineEvent,
      ),
      ackErrorCodeArb.map((errorCode) => (atMs: number): MachineEvent => ({ type: 'ack-failed', atMs, errorCode })),
      reasonArb.map((reason) => (atMs: number): MachineEvent => ({ type: 'forced-hangup', atMs, reason })),
      errorArb.map((error) => (atMs: number): MachineEvent => ({ type: 'socket-lost', atMs, error })),
      reasonArb.map((reason) => (atMs: number): MachineEvent => ({ type: 'hangup-requested', atMs, reason })),
      recordArb.map((record) => (atMs: number): MachineEvent => ({ type: 'status-known', atMs, record })),
      fc.option(recordArb, { nil: null }).map((record) => (atMs: number): MachineEvent => ({ type: 'end-confirmed', atMs, record })),
      errorArb.map((error) => (atMs: number): MachineEvent => ({ type: 'error', atMs, error })),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(delayArb, rawEventArb), { maxLength: 60 }), (events) => {
        // Timer bookkeeping means nothing when events arrive regardless of timers: check safety only.
        const world = new World(false);
        world.dispatch({ type: 'start', atMs: world.now, callMode: 'video' });
        try {
          for (const [delayMs, make] of events) {
            world.now += delayMs;
            world.dispatch(make(world.now));
          }
        } catch (error) {
          (error as Error).message += `\ntrail:\n  ${world.trail.join('\n  ')}`;
          throw error;
        }
      }),
      propertyParams('session machine / raw events', 3_000, (line) => t.diagnostic(line)),
    );
  });
});
