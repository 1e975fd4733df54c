/**
 * Property test of the SessionController (the driver, with its real ControlSockets) on a FakeClock, with
 * in-memory transports and a scripted service client. fast-check generates what the server and the user do,
 * in any order and timing: socket opens, acks of every kind, pings, forced hangups with every reason,
 * closes and errors, create answers and failures, user hangups, time passing. Then the world runs on its
 * own (every new socket fails, time passes, the billing query answers) until the session ends.
 *
 * Checked on the frames the client really sent, across all its sockets:
 *   - at most one type 5 per session;
 *   - no conn_init on any socket made after a hangup was requested or a forced hangup arrived;
 *   - no socket at all after a forced hangup with credit_insufficient or audit_violation;
 *   - start() resolves with ended or failed;
 *   - after dispose() no timer is left on the clock and every transport is closed.
 *
 * Seeded: see test/helpers/property.ts (PROPERTY_SEED, PROPERTY_RUNS_SCALE).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { HANGUP_REASONS, type CreateSessionResponse, type LiveRecord } from '../../../electron/core/protocol.ts';
import { SessionController, type SessionControllerOptions, type TerminalState } from '../../../electron/core/session-controller.ts';
import { FakeTransports, type FakeTransport } from '../../helpers/fake-transport.ts';
import { propertyParams } from '../../helpers/property.ts';

const NO_RECONNECT = new Set(['credit_insufficient', 'audit_violation']);

type Step =
  | { kind: 'advance'; ms: number }
  | { kind: 'create'; ok: boolean }
  | { kind: 'open' }
  | { kind: 'ack'; frame: unknown }
  | { kind: 'ping' }
  | { kind: 'forced'; reason: string }
  | { kind: 'close'; code: number }
  | { kind: 'fail'; code: 'network' | 'unauthorized' | 'server' }
  | { kind: 'server-status'; status: 'on_live' | 'ended' }
  | { kind: 'hangup' };

const ackFrames = [
  { type: 2, payload: { conn_init_ack: { success: true } } },
  { type: 2, payload: { conn_init_ack: { success: false, error_code: 'NOT_READY' } } },
  { type: 2, payload: { conn_init_ack: { success: false, error_code: 'LIVE_CONN_INIT_FAILED' } } },
  { type: 2, payload: { success: true } },
  { type: 2, payload: { success: false, error_code: 'NOT_READY' } },
];

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 3_000, max: 40_000 })).map((ms) => ({ kind: 'advance' as const, ms })) },
  { weight: 2, arbitrary: fc.boolean().map((ok) => ({ kind: 'create' as const, ok })) },
  { weight: 4, arbitrary: fc.constant({ kind: 'open' as const }) },
  { weight: 4, arbitrary: fc.constantFrom(...ackFrames).map((frame) => ({ kind: 'ack' as const, frame })) },
  { weight: 2, arbitrary: fc.constant({ kind: 'ping' as const }) },
  { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...HANGUP_REASONS), fc.constant('new_reason')).map((reason) => ({ kind: 'forced' as const, reason })) },
  { weight: 2, arbitrary: fc.constantFrom(1000, 1001, 1006, 1011, 4000).map((code) => ({ kind: 'close' as const, code })) },
  { weight: 1, arbitrary: fc.constantFrom('network' as const, 'unauthorized' as const, 'server' as const).map((code) => ({ kind: 'fail' as const, code })) },
  { weight: 1, arbitrary: fc.constantFrom('on_live' as const, 'ended' as const).map((status) => ({ kind: 'server-status' as const, status })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hangup' as const }) },
);

const CREATED: CreateSessionResponse = {
  live: { id: 'live-p', status: 'waiting', live_duration: 120, call_mode: 'audio' },
  rtc: { app_id: 'a', channel_id: 'c', user_id: 'u', token: 'tok-property-000', token_expire_at: '1700003600' },
};

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

async function runWorld(steps: Step[]): Promise<void> {
  const clock = new FakeClock();
  const transports = new FakeTransports();
  let pendingCreate: Deferred<CreateSessionResponse> | null = null;
  let serverStatus: 'waiting' | 'on_live' | 'ended' = 'waiting';
  const client: SessionControllerOptions['client'] = {
    createSession: (_req, opts) => {
      const d = deferred<CreateSessionResponse>();
      pendingCreate = d;
      opts?.signal?.addEventListener('abort', () => d.reject(new AvatarError('cancelled', 'cancelled')), { once: true });
      return d.promise;
    },
    querySession: async (): Promise<LiveRecord> => ({ id: 'live-p', status: serverStatus, billed_seconds: 4, credits_cost: 6, created_at: undefined, started_at: undefined, ended_at: undefined }),
    socketRequest: () => ({ url: 'ws://fake/socket', headers: {} }),
  };
  const controller = new SessionController({
    client,
    clock,
    transportFactory: transports.factory,
    buildRequest: async () => ({ request: { call_mode: 'audio', avatar: { persona: 'p', image_uri: 'https://x.test/a.png' } }, warnings: [] }),
  });

  // What the invariants need: when the call was ended, and how many sockets existed then.
  let endedAtSocket: number | null = null;
  let noReconnectAtSocket: number | null = null;
  const markEnded = () => (endedAtSocket ??= transports.all.length);
  let terminal: TerminalState | null = null;
  const done = controller.start({ callMode: 'audio', avatar: { persona: 'p', image: 'https://x.test/a.png' } }).then((t) => (terminal = t));
  await clock.advance(0);

  const current = (): FakeTransport | undefined => transports.all.at(-1);
  const openOnes = () => transports.all.filter((t) => t.isOpen);
  const apply = async (s: Step) => {
    const t = current();
    switch (s.kind) {
      case 'advance':
        await clock.advance(s.ms);
        return;
      case 'create': {
        const d = pendingCreate;
        if (!d) return;
        pendingCreate = null;
        if (s.ok) d.resolve(CREATED);
        else d.reject(new AvatarError('server', 'The avatar service had a problem (HTTP 500).'));
        break;
      }
      case 'open':
        if (t && !t.isOpen && !t.isClosed) t.open();
        break;
      case 'ack':
        if (t?.isOpen) {
          if (JSON.stringify(s.frame).includes('"success":true')) serverStatus = 'on_live';
          t.receive(s.frame);
        }
        break;
      case 'ping':
        if (t?.isOpen) t.receive({ type: 3, payload: { ping: { ts: clock.now() } } });
        break;
      case 'forced':
        if (t?.isOpen) {
          markEnded();
          if (NO_RECONNECT.has(s.reason)) noReconnectAtSocket ??= transports.all.length;
          serverStatus = 'ended';
          t.receive({ type: 6, payload: { hangup: { hangup_reason: s.reason } } });
        }
        break;
      case 'close':
        if (t && !t.isClosed) t.serverClose(s.code);
        break;
      case 'fail':
        if (t && !t.isClosed) t.fail(new AvatarError(s.code, `generated ${s.code}`));
        break;
      case 'server-status':
        if (serverStatus !== 'waiting') serverStatus = s.status;
        break;
      case 'hangup':
        markEnded();
        void controller.hangup('user_end');
        break;
    }
    await clock.advance(0);
  };

  try {
    for (const s of steps) await apply(s);
    // The world runs on its own: creates fail, new sockets fail, time passes, billing answers `ended`.
    for (let i = 0; terminal === null; i++) {
      assert.ok(i < 400, `the session did not end (phase ${controller.state.phase})`);
      if (pendingCreate) await apply({ kind: 'create', ok: false });
      const t = current();
      if (t && !t.isOpen && !t.isClosed) await apply({ kind: 'fail', code: 'network' });
      if (controller.state.phase === 'ending') serverStatus = 'ended';
      await clock.advance(5_000);
    }
    await done;
    const state = terminal as TerminalState | null;
    assert.ok(state && (state.phase === 'ended' || state.phase === 'failed'), `terminal: ${JSON.stringify(state)}`);

    // Open hangup-only sockets deliver their type 5 (the only thing they may send).
    for (const t of transports.all) if (!t.isOpen && !t.isClosed) t.open();
    await clock.advance(0);

    const frames = transports.all.map((t) => t.frames());
    const hangups = frames.flat().filter((f) => f.type === 5);
    assert.ok(hangups.length <= 1, `${hangups.length} type-5 frames`);
    if (endedAtSocket !== null) {
      frames.slice(endedAtSocket).forEach((fs, i) => {
        assert.ok(!fs.some((f) => f.type === 1), `conn_init on socket ${endedAtSocket! + i + 1}, made after the call was ended`);
      });
    }
    if (noReconnectAtSocket !== null) {
      const later = transports.all.slice(noReconnectAtSocket).filter((t) => t.frames().some((f) => f.type === 1));
      assert.equal(later.length, 0, 'a reconnect after credit_insufficient/audit_violation');
    }
    for (const fs of frames) {
      const seqs = fs.map((f) => f.seq_id);
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'seq_id starts at 1 and rises by one on every socket');
    }
  } finally {
    await controller.dispose();
  }
  assert.equal(clock.pendingCount, 0, `timers left after dispose: ${clock.pendingDelays().join(', ')}`);
  assert.equal(openOnes().length, 0, 'a transport is still open after dispose');
}

describe('SessionController properties (FakeClock, in-memory sockets)', () => {
  it('for any server and user behaviour: one type 5 at most, no conn_init after the end, every session ends, nothing left (4,000 sequences)', async (t) => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { maxLength: 40 }), (steps) => runWorld(steps)),
      propertyParams('SessionController / world', 4_000, (line) => t.diagnostic(line)),
    );
  });
});
