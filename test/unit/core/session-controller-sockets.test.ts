/**
 * SessionController taking over a spare (a session created ahead of the tap, with its control socket open
 * and holding conn_init): which socket carries conn_init or the hangup, when, and what happens to a spare
 * socket that cannot be used. In-memory transports and a scripted client on a FakeClock.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ControlSocket } from '../../../electron/core/control-socket.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { MSG_CONN_INIT, MSG_HANGUP } from '../../../electron/core/protocol.ts';
import { ACK_OK, AUDIO, LIVE_ID, createdResponse, world, type World } from '../../helpers/session-world.ts';

const SPARE_GENERATION = 7;

/** A spare's socket made the way the spare keeper makes it: holding conn_init; opened unless told not to. */
function spareSocket(w: World, options: { open?: boolean } = {}) {
  const socket = new ControlSocket({
    liveId: LIVE_ID,
    url: 'ws://fake/spare',
    headers: {},
    transportFactory: w.transports.factory,
    clock: w.clock,
    generation: SPARE_GENERATION,
    holdConnInit: true,
    onOutcome: () => {},
  });
  const transport = w.transports.last;
  if (options.open !== false) transport.open();
  return { socket, transport };
}

describe('SessionController adopting a spare', () => {
  it('sends conn_init on the spare socket (no create, no new socket), goes live and ends normally', async () => {
    const w = world();
    const { socket, transport } = spareSocket(w);
    const result = w.controller.start(AUDIO, { adopt: { created: createdResponse(), socket } });
    await w.settle();
    assert.equal(w.creates.length, 0);
    assert.deepEqual(w.trail(), ['state:creating', 'state:connecting', 'credentials']);
    assert.equal(w.transports.all.length, 1);
    assert.deepEqual(w.types(transport), [MSG_CONN_INIT]);
    assert.deepEqual(w.logged('session: conn_init on the pre-opened control socket').map((l) => [l.level, l.data]), [['debug', { generation: SPARE_GENERATION }]]);
    transport.receive(ACK_OK);
    assert.equal(w.controller.state.phase, 'live');
    await w.clock.advance(2_000);
    const terminal = await w.controller.hangup();
    assert.equal(await result, terminal);
    assert.ok(terminal?.phase === 'ended');
    assert.deepEqual(terminal.summary.timingsMs, { create: 0, socketOpen: 0, live: 0, ended: 2_000 });
    assert.deepEqual(w.types(transport), [MSG_CONN_INIT, MSG_HANGUP]);
    await w.dispose();
  });

  it('RTC first: the spare socket holds conn_init until rtcReady, then sends it', async () => {
    const w = world({ controller: { awaitRtcReady: true } });
    const { socket, transport } = spareSocket(w);
    void w.controller.start(AUDIO, { adopt: { created: createdResponse(), socket } });
    await w.settle();
    assert.equal(w.controller.state.phase, 'connecting');
    assert.deepEqual(w.types(transport), []);
    assert.equal(w.controller.rtcReady(LIVE_ID), true);
    assert.deepEqual(w.types(transport), [MSG_CONN_INIT]);
    assert.deepEqual(w.logged('session: RTC ready; conn_init sent').map((l) => [l.level, l.data]), [['debug', { generation: SPARE_GENERATION }]]);
    transport.receive(ACK_OK);
    assert.equal(w.controller.state.phase, 'live');
    assert.equal(w.transports.all.length, 1);
    await w.dispose();
  });

  it('a hangup before the spare socket is used: type 5 (user_end) on it, never conn_init, the session cancelled', async () => {
    const w = world();
    const { socket, transport } = spareSocket(w);
    const result = w.controller.start(AUDIO, { adopt: { created: createdResponse(), socket } });
    void w.controller.hangup();
    const terminal = await result;
    assert.deepEqual(terminal, {
      phase: 'failed',
      liveId: null,
      error: { code: 'cancelled', message: 'The session was cancelled while it was being created.' },
      summary: null,
    });
    assert.deepEqual(
      transport.frames().map((f) => [f.type, f.payload]),
      [[MSG_HANGUP, { hangup: { hangup_reason: 'user_end' } }]],
    );
    assert.equal(w.transports.all.length, 1);
    assert.equal(w.creates.length, 0);
    await w.dispose();
  });

  it('a spare without a socket: a fresh socket carries conn_init', async () => {
    const w = world();
    void w.controller.start(AUDIO, { adopt: { created: createdResponse(), socket: null } });
    await w.settle();
    assert.equal(w.creates.length, 0);
    assert.equal(w.transports.all.length, 1);
    w.transports.last.open();
    assert.deepEqual(w.types(w.transports.last), [MSG_CONN_INIT]);
    await w.dispose();
  });

  it('a spare socket still opening is closed as "not adoptable" and a fresh socket is opened', async () => {
    const w = world();
    const { socket, transport } = spareSocket(w, { open: false });
    void w.controller.start(AUDIO, { adopt: { created: createdResponse(), socket } });
    await w.settle();
    assert.deepEqual(transport.closeCalls, [{ code: 1000, reason: 'not adoptable' }]);
    assert.equal(w.transports.all.length, 2);
    const fresh = w.transports.last;
    fresh.open();
    fresh.receive(ACK_OK);
    assert.equal(w.controller.state.phase, 'live');
    assert.deepEqual(w.types(fresh), [MSG_CONN_INIT]);
    assert.deepEqual(w.types(transport), []);
    await w.dispose();
  });

  it('a spare socket that already sent conn_init is not reused: closed as "not adoptable", fresh socket', async () => {
    const w = world();
    const { socket, transport } = spareSocket(w);
    assert.equal(socket.connInit(), true);
    void w.controller.start(AUDIO, { adopt: { created: createdResponse(), socket } });
    await w.settle();
    assert.deepEqual(transport.closeCalls, [{ code: 1000, reason: 'not adoptable' }]);
    assert.deepEqual(w.types(transport), [MSG_CONN_INIT]);
    assert.equal(w.transports.all.length, 2);
    w.transports.last.open();
    assert.deepEqual(w.types(w.transports.last), [MSG_CONN_INIT]);
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
