/**
 * SessionController: what a lost control socket is reported as. Before the ack, a drop the warm-up policy
 * does not retry fails the session with the loss itself as its error, so these tests read the exact error
 * a UI and the operator get for each way a socket can be lost. In-memory transports and a FakeClock (session-world.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FakeClock } from '../../helpers/fake-clock.ts';
import type { FakeTransport } from '../../helpers/fake-transport.ts';
import { AUDIO, tick, world } from '../../helpers/session-world.ts';

function build() {
  return world({
    liveDurationS: 600,
    controller: {
      // No warm-up retry: the first loss ends the session with that loss as its error.
      notReadyPolicy: { nextDelayMs: () => null },
      deadAfterMs: 3_000,
      keepAliveIntervalMs: 1_000,
      connectTimeoutMs: 10_000,
    },
  });
}

/** Starts, lets `lose` drop the first socket, and returns the error the session failed with. */
async function failedWith(lose: (socket: FakeTransport, clock: FakeClock) => Promise<void> | void) {
  const h = build();
  const result = h.controller.start(AUDIO);
  await tick();
  const socket = h.transports.last;
  await lose(socket, h.clock);
  const state = h.controller.state;
  assert.equal(state.phase, 'failed');
  // The room still gets its type 5 over a fresh socket; let that one finish before the end.
  h.transports.last.open();
  assert.equal(await result, state);
  await h.controller.dispose();
  assert.equal(h.clock.pendingCount, 0);
  return state.phase === 'failed' ? state.error : null;
}

describe('SessionController: the error of a lost control socket', () => {
  it('silence for deadAfterMs: timeout, "no message from the service"', async () => {
    const error = await failedWith(async (socket, clock) => {
      socket.open();
      await clock.advance(2_999);
      assert.equal(socket.isClosed, false);
      await clock.advance(1);
    });
    assert.deepEqual(error, { code: 'timeout', message: 'No message from the service for too long; the connection is presumed dead.' });
  });

  it('a close with 1008 right after our keep-alive: network, naming the refused keep-alive and the next one', async () => {
    const error = await failedWith(async (socket, clock) => {
      socket.open();
      await clock.advance(1_000); // our keep-alive (a type-4 pong message), and no server ping seen yet
      socket.serverClose(1008, 'unknown message type 4');
    });
    assert.deepEqual(error, {
      code: 'network',
      message: 'The control socket closed (code 1008: unknown message type 4) right after our keep-alive, a pong message (type 4); the next connection sends WebSocket pong frames only.',
    });
  });

  it('a clock jump (sleep/resume): timeout, "the computer slept"', async () => {
    const error = await failedWith(async (socket, clock) => {
      socket.open();
      clock.jump(60_000);
      await clock.advance(0);
    });
    assert.deepEqual(error, { code: 'timeout', message: 'The computer slept; the connection is presumed dead.' });
  });

  it('a close with a reason: network, with the close code and reason', async () => {
    const error = await failedWith((socket) => {
      socket.open();
      socket.serverClose(4000, 'going away');
    });
    assert.deepEqual(error, { code: 'network', message: 'The control socket closed (code 4000: going away).' });
  });

  it('a close without a reason: network, with the close code only', async () => {
    const error = await failedWith((socket) => socket.serverClose(1006));
    assert.deepEqual(error, { code: 'network', message: 'The control socket closed (code 1006).' });
  });
});
