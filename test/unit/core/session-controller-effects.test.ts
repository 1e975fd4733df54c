/**
 * SessionController effects: the timers it schedules and cancels (RTC guard, retry, live_duration guard),
 * the status query while reconnecting, the create step (its failure, a cancel while it is in flight) and
 * the options it passes to each control socket. In-memory transports and a scripted client on a FakeClock.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AvatarError } from '../../../electron/core/errors.ts';
import { MSG_CONN_INIT, MSG_PONG } from '../../../electron/core/protocol.ts';
import { ACK_NOT_READY, ACK_OK, AUDIO, LIVE_ID, T0, world } from '../../helpers/session-world.ts';

const fixedDelay = (delayMs: number) => ({ nextDelayMs: () => delayMs });

describe('SessionController timers', () => {
  it('rtcReady cancels the RTC guard: a long warm-up past its time is not ended as rtc_failed', async () => {
    const w = world({ controller: { awaitRtcReady: true, rtcReadyTimeoutMs: 5_000, notReadyPolicy: fixedDelay(40_000) } });
    void w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    assert.equal(w.controller.rtcReady(LIVE_ID), true);
    w.transports.last.receive(ACK_NOT_READY);
    assert.equal(w.controller.state.phase, 'warming');
    await w.clock.advance(6_000);
    assert.equal(w.controller.state.phase, 'warming');
    assert.deepEqual(w.logged('session: event ignored'), []);
    await w.dispose();
  });

  it('a hangup while warming cancels the pending retry: nothing fires while the final figures are read', async () => {
    const w = world();
    w.serverStatus = 'ending';
    const result = w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    w.transports.last.receive(ACK_NOT_READY); // retry due in 2 s
    assert.equal(w.controller.state.phase, 'warming');
    void w.controller.hangup();
    await w.clock.advance(3_000);
    assert.equal(w.controller.state.phase, 'ending');
    assert.deepEqual(w.logged('session: event ignored'), []);
    w.serverStatus = 'ended';
    await w.clock.advance(500);
    assert.equal((await result).phase, 'ended');
    await w.dispose();
  });

  it('a hangup when live cancels the live_duration guard: no extra query, nothing fires while ending', async () => {
    const w = world({ liveDurationS: 5, controller: { durationGraceMs: 1_000 } });
    w.serverStatus = 'ending';
    const result = w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    w.transports.last.receive(ACK_OK);
    await w.clock.advance(1_000);
    void w.controller.hangup();
    await w.clock.advance(0);
    assert.deepEqual(w.queries, [1_000], 'only the final query, once');
    await w.clock.advance(6_000); // past live_duration + grace
    assert.equal(w.controller.state.phase, 'ending');
    assert.deepEqual(w.logged('session: event ignored'), []);
    w.serverStatus = 'ended';
    await w.clock.advance(500);
    assert.equal((await result).phase, 'ended');
    await w.dispose();
  });
});

describe('SessionController status query while reconnecting', () => {
  it('asks once after a drop; once live again it stops asking', async () => {
    const w = world();
    w.serverStatus = 'on_live';
    void w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    w.transports.last.receive(ACK_OK);
    w.transports.last.serverClose(1006);
    assert.equal(w.controller.state.phase, 'reconnecting');
    await w.clock.advance(0);
    w.transports.last.open();
    w.transports.last.receive(ACK_OK);
    assert.equal(w.controller.state.phase, 'live');
    await w.clock.advance(3_000);
    assert.deepEqual(w.queries, [0]);
    await w.dispose();
  });
});

describe('SessionController create step', () => {
  it('a failed create is logged with its code and message', async () => {
    const w = world({ manualCreate: true });
    const result = w.controller.start(AUDIO);
    await w.settle();
    w.failCreate(new AvatarError('server', 'The avatar service had a problem (HTTP 500).'));
    const terminal = await result;
    assert.ok(terminal.phase === 'failed');
    assert.deepEqual(
      w.logged('session: create failed').map((l) => [l.level, l.data]),
      [['warn', { code: 'server', message: 'The avatar service had a problem (HTTP 500).' }]],
    );
    await w.dispose();
  });

  it('a cancel with the create in flight waits createAnswerWaitMs for its answer, says so, then aborts it', async () => {
    const w = world({ manualCreate: true, controller: { createAnswerWaitMs: 4_000 } });
    const result = w.controller.start(AUDIO);
    await w.settle();
    assert.equal(w.creates.length, 1);
    void w.controller.hangup();
    assert.deepEqual(
      w.log.lines.filter((l) => l.message.startsWith('session: cancelled while')).map((l) => [l.level, l.message, l.data]),
      [['info', 'session: cancelled while the create is in flight; waiting for its answer to close the room', { waitMs: 4_000 }]],
    );
    await w.clock.advance(3_999);
    assert.equal(w.creates[0]!.signal!.aborted, false);
    await w.clock.advance(1);
    assert.equal(w.creates[0]!.signal!.aborted, true);
    assert.deepEqual(
      w.log.lines.filter((l) => l.level === 'warn').map((l) => l.message),
      ['session: the create did not answer in time after a cancel; a room it made cannot be closed from here'],
    );
    assert.deepEqual(w.logged('session: create cut off').map((l) => [l.level, l.data]), [['debug', { code: 'cancelled' }]], 'our own abort: no second warning');
    const terminal = await result;
    assert.ok(terminal.phase === 'failed');
    assert.equal(terminal.error.code, 'cancelled');
    await w.dispose();
  });
});

describe('SessionController control socket options', () => {
  it('keepAliveIntervalMs sets the keep-alive cadence (default 5 s)', async () => {
    for (const [option, firstAtMs] of [
      [undefined, 5_000],
      [1_000, 1_000],
    ] as const) {
      const w = world({ controller: option === undefined ? {} : { keepAliveIntervalMs: option } });
      void w.controller.start(AUDIO);
      await w.settle();
      const t = w.transports.last;
      t.open();
      t.receive(ACK_OK);
      await w.clock.advance(firstAtMs - 1);
      assert.deepEqual(w.types(t), [MSG_CONN_INIT]);
      await w.clock.advance(1);
      assert.deepEqual(w.types(t), [MSG_CONN_INIT, MSG_PONG]);
      await w.dispose();
    }
  });

  it('deadAfterMs sets how long a silent server is trusted (default 15 s)', async () => {
    for (const [option, deadAtMs] of [
      [undefined, 15_000],
      [3_000, 3_000],
    ] as const) {
      const w = world({ controller: option === undefined ? {} : { deadAfterMs: option } });
      w.serverStatus = 'on_live';
      void w.controller.start(AUDIO);
      await w.settle();
      const t = w.transports.last;
      t.open();
      t.receive(ACK_OK);
      await w.clock.advance(deadAtMs - 1);
      assert.equal(t.terminated, false);
      await w.clock.advance(1);
      assert.equal(t.terminated, true);
      assert.equal(w.controller.state.phase, 'reconnecting');
      await w.dispose();
    }
  });

  it('each socket is logged with its generation, and a replaced one is closed as "client closing"', async () => {
    const w = world();
    void w.controller.start(AUDIO);
    await w.settle();
    const first = w.transports.last;
    first.open();
    first.receive(ACK_NOT_READY);
    assert.deepEqual(first.closeCalls, [{ code: 1000, reason: 'client closing' }]);
    await w.clock.advance(2_000);
    assert.equal(w.transports.all.length, 2);
    assert.deepEqual(
      w.logged('session: opening control socket').map((l) => [l.level, l.data]),
      [
        ['debug', { generation: 1 }],
        ['debug', { generation: 2 }],
      ],
    );
    assert.equal(w.clock.now() - T0, 2_000);
    await w.dispose();
  });
});
