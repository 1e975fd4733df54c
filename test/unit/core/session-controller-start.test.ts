/**
 * SessionController: its options, `start` (signal, errors), `onEvent`, `rtcReady`/`rtcFailed` answers, the
 * order in which events fed back by listeners are handled, and the lines it logs on each step. In-memory
 * transports and a scripted client on a FakeClock (test/helpers/session-world.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AvatarError } from '../../../electron/core/errors.ts';
import { MSG_CONN_INIT, MSG_HANGUP } from '../../../electron/core/protocol.ts';
import type { SessionEvent } from '../../../electron/core/session-types.ts';
import { rejection } from '../../helpers/rejection.ts';
import { ACK_FAILED, ACK_NOT_READY, ACK_OK, AUDIO, LIVE_ID, deferred, world } from '../../helpers/session-world.ts';

describe('SessionController options', () => {
  it('rtcReadyTimeoutMs bounds the wait for the RTC side: type 5 at that time, then failed rtc_failed', async () => {
    const w = world({ controller: { awaitRtcReady: true, rtcReadyTimeoutMs: 5_000 } });
    const result = w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    await w.clock.advance(4_999);
    assert.equal(w.controller.state.phase, 'connecting');
    await w.clock.advance(1);
    const terminal = await result;
    assert.ok(terminal.phase === 'failed');
    assert.deepEqual(terminal.error, {
      code: 'rtc_failed',
      message: 'The call’s audio/video channel did not connect in time; the network may be blocking video calls.',
    });
    assert.deepEqual(w.types(w.transports.last), [MSG_HANGUP], 'never conn_init, only type 5');
    await w.dispose();
  });

  it('without an answer to conn_init, the attempt is given up after the default 10 s connect timeout', async () => {
    const w = world();
    w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    await w.clock.advance(9_999);
    assert.equal(w.controller.state.phase, 'connecting');
    await w.clock.advance(1);
    assert.equal(w.controller.state.phase, 'warming');
    await w.dispose();
  });

  it('connectTimeoutMs replaces that default', async () => {
    const w = world({ controller: { connectTimeoutMs: 4_000 } });
    w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    await w.clock.advance(3_999);
    assert.equal(w.controller.state.phase, 'connecting');
    await w.clock.advance(1);
    assert.equal(w.controller.state.phase, 'warming');
    await w.dispose();
  });

  for (const [label, option, boundMs] of [
    ['the default 3 s', undefined, 3_000],
    ['hangupSocketTimeoutMs', 1_000, 1_000],
  ] as const) {
    it(`a hangup over a fresh socket that never opens is given up after ${label}`, async () => {
      const w = world({ controller: option === undefined ? {} : { hangupSocketTimeoutMs: option } });
      w.serverStatus = 'waiting';
      const result = w.controller.start(AUDIO);
      await w.settle();
      w.transports.last.open();
      w.transports.last.receive(ACK_NOT_READY); // warming: no socket left, the hangup needs a fresh one
      void w.controller.hangup();
      const hangupSocket = w.transports.last;
      assert.equal(w.transports.all.length, 2);
      await w.clock.advance(boundMs - 1);
      assert.equal(hangupSocket.terminated, false);
      await w.clock.advance(1);
      assert.equal(hangupSocket.terminated, true);
      w.serverStatus = 'ended';
      await w.clock.advance(10_000);
      await result;
      await w.dispose();
    });
  }
});

describe('SessionController.onEvent', () => {
  it('the unsubscribe function stops the events to that listener only', async () => {
    const w = world();
    const seen: string[] = [];
    const off = w.controller.onEvent((e) => seen.push(e.type === 'state' ? e.state.phase : e.type));
    w.controller.start(AUDIO);
    assert.deepEqual(seen, ['creating']);
    off();
    await w.settle();
    assert.deepEqual(seen, ['creating']);
    assert.deepEqual(w.trail(), ['state:creating', 'state:connecting', 'credentials']);
    await w.dispose();
  });
});

describe('SessionController.start', () => {
  it('refuses a second session while one runs, and any session after dispose, with what to do', async () => {
    const w = world();
    void w.controller.start(AUDIO);
    const busy = await rejection(w.controller.start(AUDIO));
    assert.equal(busy.code, 'invalid_request');
    assert.equal(busy.message, 'A session is already running; hang up first.');
    await w.dispose();
    const gone = await rejection(w.controller.start(AUDIO));
    assert.equal(gone.code, 'invalid_request');
    assert.equal(gone.message, 'This session controller was disposed.');
  });

  it('an already aborted signal ends the start before any create request', async () => {
    const w = world();
    const terminal = await w.controller.start(AUDIO, { signal: AbortSignal.abort() });
    assert.ok(terminal.phase === 'failed');
    assert.equal(terminal.error.code, 'cancelled');
    await w.clock.advance(5_000);
    assert.equal(w.creates.length, 0);
    await w.dispose();
  });

  it('aborting while the request is being built: no create request is ever sent (nothing to close)', async () => {
    const built = deferred<void>();
    const w = world({
      controller: {
        buildRequest: async () => {
          await built.promise;
          return { request: { call_mode: 'audio', avatar: { persona: 'p', image_uri: 'https://x.test/a.png' } }, warnings: [] };
        },
      },
    });
    const abort = new AbortController();
    const result = w.controller.start(AUDIO, { signal: abort.signal });
    abort.abort();
    built.resolve();
    const terminal = await result;
    assert.ok(terminal.phase === 'failed');
    assert.equal(terminal.error.code, 'cancelled');
    assert.equal(w.creates.length, 0);
    assert.equal(w.transports.all.length, 0);
    await w.dispose();
  });

  it('the signal hangs up once: a repeated abort event is not a second hangup', async () => {
    const w = world({ manualCreate: true });
    const abort = new AbortController();
    const result = w.controller.start(AUDIO, { signal: abort.signal });
    await w.settle();
    abort.abort();
    abort.signal.dispatchEvent(new Event('abort'));
    assert.deepEqual(w.logged('session: event ignored'), []);
    w.failCreate(new AvatarError('cancelled', 'The operation was cancelled.'));
    assert.equal((await result).phase, 'failed');
    await w.dispose();
  });

  it('the signal of a finished session no longer reaches the next session', async () => {
    const w = world();
    const first = new AbortController();
    const one = w.controller.start(AUDIO, { signal: first.signal });
    await w.settle();
    w.transports.last.open();
    w.transports.last.receive(ACK_FAILED);
    assert.equal((await one).phase, 'failed');

    void w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    w.transports.last.receive(ACK_OK);
    first.abort();
    await w.settle();
    assert.equal(w.controller.state.phase, 'live');
    assert.deepEqual(w.types(w.transports.last), [MSG_CONN_INIT]);
    await w.dispose();
  });
});

describe('SessionController.rtcReady / rtcFailed', () => {
  it('rtcReady answers false when nothing waits for it (no awaitRtcReady), and the log says it was ignored', async () => {
    const w = world();
    void w.controller.start(AUDIO);
    await w.settle();
    assert.equal(w.controller.rtcReady(LIVE_ID), false);
    assert.deepEqual(w.logged('session: event ignored').map((l) => l.data), [{ event: 'rtc-ready', phase: 'connecting' }]);
    await w.dispose();
  });

  it('rtcFailed for another session is refused and leaves the current one alone', async () => {
    const w = world({ controller: { awaitRtcReady: true } });
    void w.controller.start(AUDIO);
    await w.settle();
    assert.equal(w.controller.rtcFailed('live-other', { code: 'rtc_failed', message: 'x' }), false);
    assert.equal(w.controller.state.phase, 'connecting');
    assert.equal(w.controller.rtcFailed(LIVE_ID, { code: 'rtc_failed', message: 'join refused' }), true);
    assert.equal(w.controller.state.phase, 'ending');
    await w.dispose();
  });

  it('rtcFailed once live changes nothing and answers false', async () => {
    const w = world({ controller: { awaitRtcReady: true } });
    void w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    assert.equal(w.controller.rtcReady(LIVE_ID), true);
    w.transports.last.receive(ACK_OK);
    assert.equal(w.controller.state.phase, 'live');
    assert.equal(w.controller.rtcFailed(LIVE_ID, { code: 'rtc_failed', message: 'late' }), false);
    assert.equal(w.controller.state.phase, 'live');
    await w.dispose();
  });
});

describe('SessionController event order', () => {
  it('a hangup from a listener runs after the step that emitted: no conn_init on any socket', async () => {
    const w = world();
    w.serverStatus = 'waiting';
    w.controller.onEvent((e: SessionEvent) => {
      if (e.type === 'state' && e.state.phase === 'connecting') void w.controller.hangup();
    });
    const result = w.controller.start(AUDIO);
    await w.settle();
    assert.deepEqual(w.trail(), ['state:creating', 'state:connecting', 'credentials', 'state:ending']);
    for (const t of w.transports.all) if (!t.isClosed) t.open();
    const sent = w.transports.all.flatMap((t) => w.types(t));
    assert.deepEqual(sent, [MSG_HANGUP]);
    w.serverStatus = 'ended';
    await w.clock.advance(1_000);
    assert.equal((await result).phase, 'ended');
    await w.dispose();
  });
});

describe('SessionController log lines', () => {
  it('each phase change, and the end of the session, is logged with what caused it', async () => {
    const w = world();
    const result = w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    w.transports.last.receive(ACK_FAILED);
    await result;
    const info = w.log.lines.filter((l) => l.level === 'info').map((l) => [l.message, l.data]);
    assert.deepEqual(info, [
      ['session: idle → creating', { event: 'start' }],
      ['session: creating → connecting', { event: 'created' }],
      ['session: connecting → failed', { event: 'ack-failed' }],
      ['session: over', { phase: 'failed', liveId: LIVE_ID, error: 'init_failed' }],
    ]);
    await w.dispose();
  });

  it('an ended session is logged over with no error code', async () => {
    const w = world();
    const result = w.controller.start(AUDIO);
    await w.settle();
    w.transports.last.open();
    w.transports.last.receive(ACK_OK);
    const done = w.controller.hangup();
    await w.clock.advance(0);
    assert.equal((await done)?.phase, 'ended');
    await result;
    assert.deepEqual(w.logged('session: over').map((l) => l.data), [{ phase: 'ended', liveId: LIVE_ID, error: undefined }]);
    await w.dispose();
  });

  it('an effect that throws is logged and fails the session with its error', async () => {
    const w = world();
    const boom = new AvatarError('unauthorized', 'No API key is configured.');
    w.socketRequestError = boom;
    const terminal = await w.controller.start(AUDIO);
    assert.ok(terminal.phase === 'failed');
    assert.deepEqual(terminal.error, { code: 'unauthorized', message: 'No API key is configured.' });
    assert.deepEqual(
      w.log.lines.filter((l) => l.level === 'error').map((l) => [l.message, l.data]),
      [['session: effect failed', { effect: 'open-socket', error: String(boom) }]],
    );
    await w.dispose();
  });
});
