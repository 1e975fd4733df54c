/**
 * SessionController: its timers (the RTC-ready guard, the NOT_READY/reconnect retry, the live_duration
 * guard, the wait for a cancelled create's answer) each stop only when their own reason goes away, and none
 * is left on the clock when a session is over. In-memory transports and a strict FakeClock (session-world.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, StrictClock } from '../../helpers/fake-clock.ts';
import type { CreateSessionResponse } from '../../../electron/core/protocol.ts';
import type { SessionControllerOptions } from '../../../electron/core/session-controller.ts';
import { handshakeError } from '../../../electron/core/transport.ts';
import { ACK_OK, AUDIO, T0, createdResponse, tick, world } from '../../helpers/session-world.ts';

const LIVE_ID = 'live-timers-1';


function build(controller: Partial<SessionControllerOptions> = {}, options: { liveDurationS?: number; createSession?: SessionControllerOptions['client']['createSession'] } = {}) {
  const clock = new StrictClock(T0);
  const h = world({
    clock,
    controller,
    liveId: LIVE_ID,
    liveDurationS: options.liveDurationS ?? 600,
    // The service says the call is on until our side is ending.
    query: async ({ id, controller: c }) => ({ id, status: c.state.phase === 'ending' ? 'ended' : 'on_live', billed_seconds: 1, credits_cost: 1, created_at: '1', started_at: undefined, ended_at: undefined }),
    ...(options.createSession ? { client: { createSession: options.createSession } } : {}),
  });
  return Object.assign(h, { clock });
}

describe('SessionController: the RTC-ready guard', () => {
  it('still fires at rtcReadyTimeoutMs when the first socket dropped and a retry was scheduled meanwhile', async () => {
    const h = build({ awaitRtcReady: true, rtcReadyTimeoutMs: 5_000 });
    const result = h.controller.start(AUDIO);
    await tick();
    h.transports.last.serverClose(1006); // the held socket drops before it opens: warming, retry in 2 s
    assert.equal(h.phase(), 'warming');
    await h.clock.advance(4_999);
    assert.equal(h.phase(), 'connecting');
    await h.clock.advance(1);
    assert.deepEqual(h.phases().slice(-2), ['ending', 'failed']);
    await h.clock.advance(3_000); // the hangup-only socket gives up
    const terminal = await result;
    assert.ok(terminal.phase === 'failed');
    assert.equal(terminal.error.code, 'rtc_failed');
    assert.equal(terminal.summary?.timingsMs.ended, 5_000);
    assert.equal(h.clock.pendingCount, 0);
    assert.deepEqual(h.clock.foreignClears, []);
  });

  it('is stopped by rtcReady: an ack arriving after rtcReadyTimeoutMs still makes the call live', async () => {
    const h = build({ awaitRtcReady: true, rtcReadyTimeoutMs: 1_000 });
    void h.controller.start(AUDIO);
    await tick();
    const socket = h.transports.last;
    socket.open();
    assert.equal(h.controller.rtcReady(LIVE_ID), true);
    assert.deepEqual(socket.frames().map((f) => f.type), [1], 'the held conn_init went out');
    await h.clock.advance(1_500);
    assert.equal(h.phase(), 'connecting');
    socket.receive(ACK_OK);
    assert.equal(h.phase(), 'live');
    assert.deepEqual(h.phases(), ['creating', 'connecting', 'live']);
    await h.controller.dispose();
    assert.equal(h.clock.pendingCount, 0);
    assert.deepEqual(h.clock.foreignClears, []);
  });

  it('leaves no timer behind when the session fails before the RTC side reported (a refused handshake)', async () => {
    const h = build({ awaitRtcReady: true, rtcReadyTimeoutMs: 30_000 });
    const result = h.controller.start(AUDIO);
    await tick();
    h.transports.last.fail(handshakeError(401));
    const terminal = await result;
    assert.ok(terminal.phase === 'failed');
    assert.equal(terminal.error.code, 'unauthorized');
    assert.deepEqual(h.clock.pendingDelays(), [], 'the 30 s RTC guard was cleared with the session');
    await h.controller.dispose();
    assert.deepEqual(h.clock.foreignClears, []);
  });
});

describe('SessionController: the retry timer', () => {
  it('is not stopped by the RTC side becoming ready while warming: the retry still opens a socket, with conn_init', async () => {
    const h = build({ awaitRtcReady: true, rtcReadyTimeoutMs: 30_000 });
    void h.controller.start(AUDIO);
    await tick();
    h.transports.last.serverClose(1006);
    assert.equal(h.phase(), 'warming');
    assert.equal(h.controller.rtcReady(LIVE_ID), true);
    await h.clock.advance(1_999);
    assert.equal(h.transports.all.length, 1);
    await h.clock.advance(1);
    assert.equal(h.transports.all.length, 2);
    assert.equal(h.phase(), 'connecting');
    h.transports.last.open();
    assert.deepEqual(h.transports.last.frames().map((f) => f.type), [1]);
    h.transports.last.receive(ACK_OK);
    assert.equal(h.phase(), 'live');
    await h.controller.dispose();
    assert.equal(h.clock.pendingCount, 0);
    assert.deepEqual(h.clock.foreignClears, []);
  });
});

describe('SessionController: the live_duration guard', () => {
  it('survives a reconnect: 2 s after live_duration the client hangs up itself with timeout (ended by the limit)', async () => {
    const h = build({ liveReconnectPolicy: { nextDelayMs: ({ attempt }) => (attempt <= 3 ? 500 : null) }, durationGraceMs: 2_000 }, { liveDurationS: 10 });
    const { result } = await h.startAcked();
    h.transports.last.serverClose(1006);
    assert.equal(h.phase(), 'reconnecting');
    await h.clock.advance(500);
    assert.equal(h.transports.all.length, 2);
    const second = h.transports.last;
    second.open();
    second.receive(ACK_OK);
    assert.equal(h.phase(), 'live');
    await h.clock.advance(11_499);
    assert.equal(h.phase(), 'live');
    await h.clock.advance(1);
    assert.deepEqual(second.frames().at(-1), { type: 5, live_id: LIVE_ID, seq_id: second.frames().length, payload: { hangup: { hangup_reason: 'timeout' } } });
    const terminal = await result;
    assert.ok(terminal.phase === 'ended');
    assert.equal(terminal.summary.endedBy, 'limit');
    assert.equal(terminal.summary.hangupReason, 'timeout');
    await h.controller.dispose();
    assert.equal(h.clock.pendingCount, 0);
    assert.deepEqual(h.clock.foreignClears, []);
  });
});

describe('SessionController: the clock sees only its own handles', () => {
  it('a whole call (live, hangup, billing, dispose) never clears a handle the clock did not issue', async () => {
    const h = build();
    const { result } = await h.startAcked();
    await h.clock.advance(3_000);
    void h.controller.hangup();
    assert.equal((await result).phase, 'ended');
    await h.controller.dispose();
    assert.equal(h.clock.pendingCount, 0);
    assert.deepEqual(h.clock.foreignClears, []);
  });

  it('nor does a hangup while the create is in flight', async () => {
    let answer!: (value: CreateSessionResponse) => void;
    const h = build({ createAnswerWaitMs: 4_000 }, { createSession: () => new Promise((r) => (answer = r)) });
    const result = h.controller.start(AUDIO);
    await tick();
    void h.controller.hangup();
    await h.clock.advance(1_000);
    answer(createdResponse(600, LIVE_ID));
    await tick();
    h.transports.last.open();
    const terminal = await result;
    assert.equal(terminal.phase, 'failed');
    assert.deepEqual(h.transports.last.frames().map((f) => f.type), [5]);
    await h.controller.dispose();
    assert.equal(h.clock.pendingCount, 0);
    assert.deepEqual(h.clock.foreignClears, []);
  });
});
