/**
 * SessionController holding a spare (`hold`) and handing it to a tap (`release`): which socket carries
 * conn_init or the hangup, when, and how a held session that is never used ends — always with type 5
 * before any conn_init (none where the service ended the room itself), never a billing read-back. In-memory
 * transports and a scripted client on a FakeClock; every event and frame is asserted in order. Also the
 * RTC-first conn_init a call holds until the renderer is ready, when no socket could be made for it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AvatarError } from '../../../electron/core/errors.ts';
import { MSG_CONN_INIT, MSG_HANGUP } from '../../../electron/core/protocol.ts';
import type { CreateAnswer } from '../../../electron/core/session-controller.ts';
import { ACK_OK, AUDIO, LIVE_ID, T0, world } from '../../helpers/session-world.ts';

const HOLD_MS = 90_000;
/** A held socket lives for minutes: keep it from being presumed dead between the test's steps. */
const QUIET = { deadAfterMs: 10_000_000, keepAliveIntervalMs: 1_000_000 };

/** Hold a spare; the create answers, its socket is made (and opened unless told not to). */
async function held(options: Parameters<typeof world>[0] = {}, open = true) {
  const w = world({ ...options, controller: { ...QUIET, ...options.controller } });
  const heard: CreateAnswer[] = [];
  const result = w.controller.hold(AUDIO, { holdForMs: HOLD_MS, onCreateAnswer: (answer) => void heard.push(answer) });
  await w.settle();
  const socket = w.transports.last;
  if (open) socket.open();
  return { w, result, socket, heard };
}

describe('SessionController holding a spare', () => {
  it('creates the session and opens its socket holding conn_init: no credentials, no conn_init, the create heard first', async () => {
    const { w, socket, heard } = await held();
    assert.equal(w.creates.length, 1);
    assert.deepEqual(heard.map((a) => ('created' in a ? a.created.live.id : a.error.code)), [LIVE_ID]);
    assert.deepEqual(w.states(), [
      { phase: 'creating' },
      { phase: 'held', liveId: LIVE_ID, socketOpen: false, expiresAtMs: T0 + HOLD_MS },
      { phase: 'held', liveId: LIVE_ID, socketOpen: true, expiresAtMs: T0 + HOLD_MS },
    ]);
    socket.receive({ type: 3, payload: { ping: { ts: 1 } } });
    assert.ok(!w.types(socket).includes(MSG_CONN_INIT), 'never conn_init while held');
    assert.equal(w.transports.all.length, 1);
    await w.dispose();
  });

  it('release (the tap): credentials, then conn_init on the held socket; live one answer later, timings from the tap', async () => {
    const { w, result, socket } = await held();
    await w.clock.advance(30_000);
    const released = w.controller.release();
    assert.equal(released, result, 'the same run: its end is the call’s end');
    assert.deepEqual(w.trail().slice(3), ['state:connecting', 'credentials']);
    assert.deepEqual(w.types(socket), [MSG_CONN_INIT]);
    assert.deepEqual(w.logged('session: released; conn_init on the held control socket').map((l) => l.level), ['debug']);
    socket.receive(ACK_OK);
    assert.equal(w.phase(), 'live');
    await w.clock.advance(2_000);
    const terminal = await w.controller.hangup();
    assert.ok(terminal?.phase === 'ended');
    assert.deepEqual(terminal.summary.timingsMs, { create: 0, socketOpen: 0, live: 0, ended: 2_000 });
    assert.deepEqual(w.types(socket), [MSG_CONN_INIT, MSG_HANGUP]);
    assert.equal(w.transports.all.length, 1, 'no socket but the held one');
    await w.dispose();
  });

  it('release with RTC first: conn_init waits for rtcReady, then goes out on the held socket', async () => {
    const { w, socket } = await held();
    w.controller.release({ awaitRtcReady: true });
    assert.deepEqual(w.types(socket), []);
    assert.equal(w.controller.rtcReady(LIVE_ID), true);
    assert.deepEqual(w.types(socket), [MSG_CONN_INIT]);
    socket.receive(ACK_OK);
    assert.equal(w.phase(), 'live');
    await w.dispose();
  });

  it('expires unused holdForMs after the create answered: type 5 on its socket, no conn_init, no query, no timer left', async () => {
    const { w, result, socket } = await held();
    await w.clock.advance(HOLD_MS - 1);
    assert.deepEqual(w.types(socket), []);
    await w.clock.advance(1);
    assert.deepEqual(socket.frames().map((f) => [f.type, f.payload]), [[MSG_HANGUP, { hangup: { hangup_reason: 'user_end' } }]]);
    const terminal = await result;
    assert.ok(terminal.phase === 'ended');
    assert.deepEqual([terminal.summary.endedBy, terminal.summary.hangupReason, terminal.summary.wentLive], ['limit', 'user_end', false]);
    assert.deepEqual(w.queries, []);
    assert.equal(w.controller.release(), null, 'nothing to release once it ended');
    await w.dispose();
    assert.equal(w.clock.pendingCount, 0);
  });

  it('given up (a hangup): type 5 on its socket, ended by the client, no query', async () => {
    const { w, socket } = await held();
    const terminal = await w.controller.hangup();
    assert.ok(terminal?.phase === 'ended');
    assert.deepEqual([terminal.summary.endedBy, terminal.summary.hangupReason], ['client', 'user_end']);
    assert.deepEqual(w.types(socket), [MSG_HANGUP]);
    assert.deepEqual(w.queries, []);
    await w.dispose();
  });

  it('its socket closed: failed, type 5 over a hangup-only socket (never conn_init), the loss named', async () => {
    const { w, result, socket } = await held();
    socket.serverClose(1006, 'gone');
    assert.equal(w.controller.lastSocketLoss, 'closed');
    const fresh = w.transports.last;
    assert.notEqual(fresh, socket);
    fresh.open();
    await w.settle();
    assert.deepEqual(w.types(fresh), [MSG_HANGUP]);
    const terminal = await result;
    assert.ok(terminal.phase === 'failed');
    assert.equal(terminal.error.code, 'network');
    assert.deepEqual(w.types(socket), []);
    await w.dispose();
  });

  it('ended by the service (type 6): its socket closed, no type 5 back, ended by the server with its reason', async () => {
    const { w, result, socket } = await held();
    socket.receive({ type: 6, payload: { hangup: { hangup_reason: 'server_error' } } });
    const terminal = await result;
    assert.ok(terminal.phase === 'ended');
    assert.deepEqual([terminal.summary.endedBy, terminal.summary.hangupReason], ['server', 'server_error']);
    assert.deepEqual(w.types(socket), []);
    assert.equal(socket.isClosed, true);
    assert.equal(w.transports.all.length, 1);
    await w.dispose();
  });

  it('a hangup while its create is in flight, with no bound of its own: waits however long, then closes the room the answer names', async () => {
    const w = world({ manualCreate: true, controller: { ...QUIET, createAnswerWaitMs: null } });
    const result = w.controller.hold(AUDIO, { holdForMs: HOLD_MS });
    await w.settle();
    void w.controller.hangup();
    await w.clock.advance(60_000);
    assert.equal(w.creates[0]!.signal?.aborted, false, 'not given up');
    w.answerCreate();
    await w.settle();
    const hangupOnly = w.transports.last;
    hangupOnly.open();
    await w.settle();
    assert.deepEqual(w.types(hangupOnly), [MSG_HANGUP]);
    assert.equal(w.transports.all.length, 1, 'no held socket of its own');
    assert.equal((await result).phase, 'failed');
    await w.dispose();
  });

  it('abandonCreate: its owner gives up a create in flight: aborted at once, nothing opened', async () => {
    const w = world({ manualCreate: true, controller: { ...QUIET, createAnswerWaitMs: null } });
    const heard: CreateAnswer[] = [];
    const result = w.controller.hold(AUDIO, { holdForMs: HOLD_MS, onCreateAnswer: (answer) => void heard.push(answer) });
    await w.settle();
    void w.controller.hangup();
    w.controller.abandonCreate();
    assert.equal(w.creates[0]!.signal?.aborted, true);
    const terminal = await result;
    assert.ok(terminal.phase === 'failed' && terminal.error.code === 'cancelled');
    assert.deepEqual(heard, [{ error: { code: 'cancelled', message: 'The operation was cancelled.' } }], 'the request’s own error');
    assert.equal(w.transports.all.length, 0);
    await w.dispose();
  });

  it('a failed create is told to its listener, which reports it: the session itself logs it at debug only', async () => {
    const w = world({ manualCreate: true, controller: QUIET });
    const heard: CreateAnswer[] = [];
    const result = w.controller.hold(AUDIO, { holdForMs: HOLD_MS, onCreateAnswer: (answer) => void heard.push(answer) });
    await w.settle();
    w.failCreate(new AvatarError('server', 'HTTP 503'));
    const terminal = await result;
    assert.ok(terminal.phase === 'failed' && terminal.error.code === 'server');
    assert.deepEqual(heard, [{ error: { code: 'server', message: 'HTTP 503' } }]);
    assert.deepEqual(w.logged('session: create failed').map((l) => l.level), ['debug']);
    await w.dispose();
  });

  it('a create listener that throws is logged and the spare is held anyway', async () => {
    const w = world({ controller: QUIET });
    void w.controller.hold(AUDIO, {
      holdForMs: HOLD_MS,
      onCreateAnswer: () => {
        throw new AvatarError('internal', 'listener bug');
      },
    });
    await w.settle();
    assert.equal(w.phase(), 'held');
    assert.deepEqual(w.logged('session: the create listener threw').map((l) => l.level), ['error']);
    await w.dispose();
  });

  it('release with the call\'s own RTC bound: the renderer has that long to join, then type 5 and never conn_init', async () => {
    const { w, result, socket } = await held();
    w.controller.release({ awaitRtcReady: true, rtcReadyTimeoutMs: 5_000 });
    await w.clock.advance(4_999);
    assert.equal(w.phase(), 'connecting');
    await w.clock.advance(1);
    assert.notEqual(w.phase(), 'connecting', 'given up at the call\'s bound, not the default 30 s');
    const terminal = await result;
    assert.ok(terminal.phase === 'failed' && terminal.error.code === 'rtc_failed');
    assert.deepEqual(w.types(socket), [MSG_HANGUP], 'never conn_init, only type 5');
    await w.dispose();
  });

  it('release without RTC settings keeps the ones the session was made with (RTC first here)', async () => {
    const { w, socket } = await held({ controller: { awaitRtcReady: true } });
    w.controller.release();
    assert.deepEqual(w.types(socket), [], 'conn_init waits for the RTC side');
    assert.equal(w.controller.rtcReady(LIVE_ID), true);
    assert.deepEqual(w.types(socket), [MSG_CONN_INIT]);
    await w.dispose();
  });

  it('release without RTC settings keeps the session\'s own RTC bound too', async () => {
    const { w, result } = await held({ controller: { awaitRtcReady: true, rtcReadyTimeoutMs: 5_000 } });
    w.controller.release();
    await w.clock.advance(5_000);
    assert.notEqual(w.phase(), 'connecting', 'given up at its own 5 s, not the default 30 s');
    assert.ok((await result).phase === 'failed');
    await w.dispose();
  });

  it('abandonCreate with a bound running: the wait for the answer is dropped with it (no late warning, no timer left)', async () => {
    const w = world({ manualCreate: true, controller: { ...QUIET, createAnswerWaitMs: 4_000 } });
    const result = w.controller.hold(AUDIO, { holdForMs: HOLD_MS });
    await w.settle();
    void w.controller.hangup();
    assert.equal(w.clock.pendingCount > 0, true, 'waiting for the answer, bounded');
    w.controller.abandonCreate();
    assert.equal(w.creates[0]!.signal?.aborted, true);
    await w.clock.advance(10_000);
    assert.deepEqual(w.logged('session: the create did not answer in time after a cancel; a room it made cannot be closed from here'), []);
    assert.equal((await result).phase, 'failed');
    await w.dispose();
    assert.equal(w.clock.pendingCount, 0);
  });

  it('abandonCreate with nothing to abandon (no session, or its create answered) does nothing', async () => {
    const idle = world({ controller: QUIET });
    assert.doesNotThrow(() => idle.controller.abandonCreate());
    await idle.dispose();
    const { w, socket } = await held();
    w.controller.abandonCreate();
    assert.equal(w.phase(), 'held');
    assert.equal(w.creates[0]!.signal?.aborted ?? false, false);
    w.controller.release();
    assert.deepEqual(w.types(socket), [MSG_CONN_INIT]);
    await w.dispose();
  });

  it('release means nothing for a session started normally', async () => {
    const w = world();
    void w.controller.start(AUDIO);
    await w.settle();
    assert.equal(w.controller.release(), null);
    assert.equal(w.phase(), 'connecting');
    await w.dispose();
  });
});

describe('SessionController sending a held conn_init', () => {
  it('RTC ready before any socket could be made: a fresh attempt is tried, and its failure logged as such', async () => {
    const w = world({ controller: { awaitRtcReady: true } });
    const boom = new AvatarError('unauthorized', 'No API key is configured.');
    w.socketRequestError = boom;
    // The RTC side answers as soon as the session exists, before the controller has made its socket.
    w.controller.onEvent((e) => {
      if (e.type === 'state' && e.state.phase === 'connecting') w.controller.rtcReady(LIVE_ID);
    });
    const terminal = await w.controller.start(AUDIO);
    assert.ok(terminal.phase === 'failed');
    assert.deepEqual(terminal.error, { code: 'unauthorized', message: 'No API key is configured.' });
    assert.deepEqual(
      w.log.lines.filter((l) => l.level === 'error').map((l) => [l.message, l.data]),
      [
        ['session: effect failed', { effect: 'open-socket', error: String(boom) }],
        ['session: effect failed', { effect: 'send-conn-init', error: String(boom) }],
      ],
    );
    assert.equal(w.transports.all.length, 0);
    await w.dispose();
  });
});
