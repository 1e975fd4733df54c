/**
 * SessionController: a listener that throws must not take the session (or the other listeners) down with
 * it; the operator reads that it threw, and why. In-memory transports and a FakeClock.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../electron/core/clock.ts';
import { SessionController, type SessionControllerOptions } from '../../electron/core/session-controller.ts';
import type { SessionEvent, StartOptions } from '../../electron/core/session-types.ts';
import { FakeTransports } from '../helpers/fake-transport.ts';
import { recordingLogger } from '../helpers/recording-logger.ts';

const LIVE_ID = 'live-emit-1';
const AUDIO: StartOptions = { callMode: 'audio', avatar: { persona: 'p', image: 'https://x.test/a.png' } };
const ackOk = { type: 2, payload: { conn_init_ack: { success: true } } };
const settle = () => new Promise((r) => setImmediate(r));

describe('SessionController: event listeners', () => {
  it('a throwing listener is logged as an error with its message; the others and the session carry on', async () => {
    const clock = new FakeClock();
    const transports = new FakeTransports();
    const log = recordingLogger();
    const client: SessionControllerOptions['client'] = {
      createSession: async (req) => ({
        live: { id: LIVE_ID, status: 'waiting', live_duration: 600, call_mode: req.call_mode },
        rtc: { app_id: 'app', channel_id: 'ch', user_id: 'u', token: 'rtc-token-emit', token_expire_at: '1' },
      }),
      querySession: async (id) => ({ id, status: 'ended', billed_seconds: 1, credits_cost: 1, created_at: '1', started_at: undefined, ended_at: undefined }),
      socketRequest: (id) => ({ url: `ws://fake/ws?live_id=${id}`, headers: {} }),
    };
    const controller = new SessionController({
      client,
      clock,
      logger: log,
      transportFactory: transports.factory,
      buildRequest: async () => ({ request: { call_mode: 'audio', avatar: { persona: 'p', image_uri: 'https://x.test/a.png' } }, warnings: [] }),
    });
    const failure = new Error('the UI broke');
    controller.onEvent((e) => {
      if (e.type === 'credentials') throw failure;
    });
    const seen: SessionEvent['type'][] = [];
    controller.onEvent((e) => seen.push(e.type));
    const result = controller.start(AUDIO);
    await settle();
    transports.last.open();
    transports.last.receive(ackOk);
    assert.equal(controller.state.phase, 'live');
    void controller.hangup();
    assert.equal((await result).phase, 'ended');
    assert.deepEqual(seen, ['state', 'state', 'credentials', 'state', 'state', 'state']);
    assert.deepEqual(
      log.lines.filter((l) => l.level === 'error'),
      [{ level: 'error', message: 'session: an event listener threw', data: { error: String(failure) } }],
    );
    await controller.dispose();
  });

  it('emits a state only when it changed, even when a figure in it is not a number', async () => {
    // live_duration NaN (an injected client is not schema-checked) makes endsAtMs NaN, which is not equal
    // to itself: the unchanged reconnecting state at the retry must still not be emitted twice.
    const clock = new FakeClock();
    const transports = new FakeTransports();
    const client: SessionControllerOptions['client'] = {
      createSession: async (req) => ({
        live: { id: LIVE_ID, status: 'waiting', live_duration: Number.NaN, call_mode: req.call_mode },
        rtc: { app_id: 'app', channel_id: 'ch', user_id: 'u', token: 'rtc-token-emit', token_expire_at: '1' },
      }),
      querySession: async (id) => ({ id, status: 'on_live', billed_seconds: 1, credits_cost: 1, created_at: '1', started_at: undefined, ended_at: undefined }),
      socketRequest: (id) => ({ url: `ws://fake/ws?live_id=${id}`, headers: {} }),
    };
    const controller = new SessionController({
      client,
      clock,
      transportFactory: transports.factory,
      liveReconnectPolicy: { nextDelayMs: () => 500 },
      buildRequest: async () => ({ request: { call_mode: 'audio', avatar: { persona: 'p', image_uri: 'https://x.test/a.png' } }, warnings: [] }),
    });
    const phases: string[] = [];
    controller.onEvent((e) => void (e.type === 'state' && phases.push(e.state.phase)));
    void controller.start(AUDIO);
    await settle();
    transports.last.open();
    transports.last.receive(ackOk);
    transports.last.serverClose(1006);
    await clock.advance(500);
    assert.equal(transports.all.length, 2);
    transports.last.open();
    transports.last.receive(ackOk);
    assert.deepEqual(phases, ['creating', 'connecting', 'live', 'reconnecting', 'live']);
    await controller.dispose();
  });
});
