/**
 * SessionController: the type 5 that closes a room when no open control socket is at hand (a hangup while
 * warming goes out over a fresh socket that never sends conn_init, spec §6 rule 7), and what the operator
 * reads in the log when that socket cannot deliver it. In-memory transports and a FakeClock (session-world.ts):
 * every server move is made by the test.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AvatarError } from '../../../electron/core/errors.ts';
import { ACK_NOT_READY, AUDIO, tick, world } from '../../helpers/session-world.ts';

const LIVE_ID = 'live-hangup-frames-1';

function build(options: { liveId?: string } = {}) {
  const h = world({ liveId: options.liveId ?? LIVE_ID, liveDurationS: 600, controller: { hangupSocketTimeoutMs: 3_000 } });
  /** The controller's own warnings and errors (the control socket logs its own lines too). */
  const sessionProblems = () => h.log.lines.filter((l) => (l.level === 'warn' || l.level === 'error') && l.message.startsWith('session:'));
  return Object.assign(h, { sessionProblems });
}

/** Start, open the first socket and answer NOT_READY: warming, with no socket of the session open. */
async function warming(h: ReturnType<typeof build>) {
  const { result } = await h.startAcked(ACK_NOT_READY);
  assert.equal(h.controller.state.phase, 'warming');
  assert.equal(h.transports.all.length, 1);
  return { result };
}

/** Warming, then a hangup: the controller is opening its hangup-only socket. */
async function hangingUp() {
  const h = build();
  const { result } = await warming(h);
  const done = h.controller.hangup();
  await tick();
  return { h, result, done };
}

describe('SessionController: the hangup-only socket', () => {
  it('once it opens, it carries type 5 alone (seq_id 1, no conn_init) and no problem is logged', async () => {
    const { h, result, done } = await hangingUp();
    assert.equal(h.transports.all.length, 2);
    h.transports.last.open();
    assert.deepEqual(h.transports.last.frames(), [{ type: 5, live_id: LIVE_ID, seq_id: 1, payload: { hangup: { hangup_reason: 'user_end' } } }]);
    assert.equal((await done)?.phase, 'ended');
    assert.equal(await result, h.controller.state);
    assert.deepEqual(h.sessionProblems(), []);
  });

  it('a socket error before it opens: the operator reads that the hangup could not be delivered (outcome error)', async () => {
    const { h, result, done } = await hangingUp();
    h.transports.last.fail(new AvatarError('network', 'connection refused'));
    assert.equal((await done)?.phase, 'ended');
    await result;
    assert.deepEqual(h.sessionProblems(), [{ level: 'warn', message: 'session: the hangup could not be delivered', data: { outcome: 'error' } }]);
  });

  it('no open within hangupSocketTimeoutMs: the same warning (outcome error, a timeout)', async () => {
    const { h, result, done } = await hangingUp();
    await h.clock.advance(2_999);
    assert.deepEqual(h.sessionProblems(), []);
    await h.clock.advance(1);
    assert.equal((await done)?.phase, 'ended');
    await result;
    assert.deepEqual(h.sessionProblems(), [{ level: 'warn', message: 'session: the hangup could not be delivered', data: { outcome: 'error' } }]);
  });

  it('the computer slept before it opened: the warning names outcome dead', async () => {
    const { h, result, done } = await hangingUp();
    h.clock.jump(60_000);
    await h.clock.advance(0);
    assert.equal((await done)?.phase, 'ended');
    await result;
    assert.deepEqual(h.sessionProblems(), [{ level: 'warn', message: 'session: the hangup could not be delivered', data: { outcome: 'dead' } }]);
  });

  it('the server closes it before it opens: no delivery warning (a close is not an error)', async () => {
    const { h, result, done } = await hangingUp();
    h.transports.last.serverClose(1006);
    assert.equal((await done)?.phase, 'ended');
    await result;
    assert.deepEqual(h.sessionProblems(), []);
  });

  it('when the socket address cannot be built, the hangup is given up with a warning and the session still ends', async () => {
    const h = build();
    const { result } = await warming(h);
    const refusal = new AvatarError('unauthorized', 'No API key is configured.');
    h.socketRequestError = refusal;
    const terminal = await h.controller.hangup();
    assert.equal(terminal?.phase, 'ended');
    assert.equal(await result, terminal);
    assert.equal(h.transports.all.length, 1, 'no socket could be made');
    assert.deepEqual(h.sessionProblems(), [{ level: 'warn', message: 'session: could not send the hangup', data: { liveId: LIVE_ID, error: String(refusal) } }]);
  });
});

describe('SessionController: a create answer with an empty session id', () => {
  it('fails with internal "No session id yet." and opens no socket to an unnamed session', async () => {
    const h = build({ liveId: '' });
    const result = h.controller.start(AUDIO);
    await tick();
    assert.deepEqual(h.socketRequests, []);
    assert.equal(h.transports.all.length, 0);
    assert.deepEqual(h.controller.state, { phase: 'failed', liveId: '', error: { code: 'internal', message: 'No session id yet.' }, summary: null });
    assert.equal(await result, h.controller.state);
    await h.controller.dispose();
  });
});
