/**
 * Ending a session we no longer drive (remote-hangup.ts): exactly one type-5 `user_end` goes out and never
 * a conn_init (conn_init could start billing, spec §3), the attempt is bounded by `socketTimeoutMs` on the
 * injected clock, and the final query polls on the clock until `ended` within its own bound.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { LiveRecord } from '../../../electron/core/protocol.ts';
import { hangupWithoutConnInit, queryUntilEnded } from '../../../electron/core/remote-hangup.ts';
import type { ServiceClient } from '../../../electron/core/rest-client.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';

const LIVE_ID = 'live-77';


const socketClient = (url = 'ws://127.0.0.1:1/live/ws?live_id=live-77') => ({
  socketRequest: (liveId: string) => ({ url: `${url.split('?')[0]}?live_id=${liveId}`, headers: { Authorization: 'Token k' } }),
});

/** Starts the hangup on fake transports; the test plays the server. */
function start(options: { socketTimeoutMs?: number } = {}) {
  const clock = new FakeClock(0);
  const transports = new FakeTransports();
  const logger = recordingLogger();
  let settled: boolean | undefined;
  const result = hangupWithoutConnInit(socketClient(), LIVE_ID, { clock, logger, transportFactory: transports.factory, ...options }).then((sent) => (settled = sent));
  return { clock, transport: transports.last, logger, result, settled: () => settled };
}

const endedBefore = (outcome: string) => ({ level: 'warn', message: 'remote hangup: the socket ended before the hangup was sent', data: { outcome } });

describe('hangupWithoutConnInit', () => {
  it('sends type 5 user_end as the only frame, closes politely with 1000 and resolves true', async () => {
    const { transport, result, logger } = start();
    assert.equal(transport.url, 'ws://127.0.0.1:1/live/ws?live_id=live-77');
    assert.deepEqual(transport.headers, { Authorization: 'Token k' });
    transport.open();
    assert.equal(await result, true);
    assert.deepEqual(transport.frames(), [{ type: 5, live_id: LIVE_ID, seq_id: 1, payload: { hangup: { hangup_reason: 'user_end' } } }]);
    assert.deepEqual(transport.closeCalls, [{ code: 1000, reason: 'hangup' }]);
    assert.equal(transport.terminated, false, 'a sent hangup is followed by a polite close, not a terminate');
    assert.deepEqual(logger.lines, []);
  });

  it('resolves false and sends nothing when the socket fails before it opens', async () => {
    const { transport, result, logger } = start();
    transport.fail(new AvatarError('forbidden', 'refused'));
    assert.equal(await result, false);
    assert.deepEqual(transport.sent, []);
    assert.deepEqual(logger.lines, [endedBefore('error')]);
  });

  it('resolves false when the server closes before the socket opens', async () => {
    const { transport, result, logger } = start();
    transport.serverClose(1011, 'busy');
    assert.equal(await result, false);
    assert.deepEqual(logger.lines, [endedBefore('closed')]);
  });

  it('gives up after socketTimeoutMs on the injected clock, not before', async () => {
    const { clock, result, settled, transport, logger } = start({ socketTimeoutMs: 1_000 });
    await clock.advance(999);
    assert.equal(settled(), undefined);
    await clock.advance(1);
    assert.equal(await result, false);
    assert.equal(transport.terminated, true);
    assert.deepEqual(logger.lines, [endedBefore('error')]);
  });

  it('gives up after 5 s by default', async () => {
    const { clock, result, settled } = start();
    await clock.advance(4_999);
    assert.equal(settled(), undefined);
    await clock.advance(1);
    assert.equal(await result, false);
  });

  it('reports a clock jump before open as dead', async () => {
    const { clock, result, logger } = start({ socketTimeoutMs: 1_000 });
    clock.jump(60_000);
    await clock.advance(0);
    assert.equal(await result, false);
    assert.deepEqual(logger.lines, [{ level: 'warn', message: 'control socket: connection presumed dead', data: { cause: 'clock-jump', generation: 1 } }, endedBefore('dead')]);
  });

  it('passes its logger to the socket (a close the peer never answers is logged and terminated)', async () => {
    const { clock, transport, result, logger } = start();
    transport.autoCompleteClose = false;
    transport.open();
    await clock.advance(2_000);
    assert.equal(await result, true);
    assert.equal(transport.terminated, true);
    assert.deepEqual(logger.lines, [{ level: 'debug', message: 'control socket: close timed out, terminating', data: { generation: 1 } }]);
  });

  it('delivers the hangup over a real WebSocket on loopback with the default transport and clock', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    try {
      await once(wss, 'listening');
      const port = (wss.address() as AddressInfo).port;
      const received: string[] = [];
      let auth: string | undefined;
      wss.on('connection', (ws, req) => {
        auth = req.headers.authorization;
        ws.on('message', (data) => received.push(String(data)));
      });
      const sent = await hangupWithoutConnInit(socketClient(`ws://127.0.0.1:${port}/live/ws`), LIVE_ID, { socketTimeoutMs: 2_000 });
      assert.equal(sent, true);
      assert.equal(auth, 'Token k');
      assert.deepEqual(received.map((t) => JSON.parse(t) as unknown), [{ type: 5, live_id: LIVE_ID, seq_id: 1, payload: { hangup: { hangup_reason: 'user_end' } } }]);
    } finally {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
  });
});

/** A query record as the REST client returns it (timestamps normalised, absent here). */
const rec = (status: string): LiveRecord => ({ id: LIVE_ID, status, created_at: undefined, started_at: undefined, ended_at: undefined });

/** A query endpoint answering from a script; records the clock time of each call. */
function queryClient(clock: FakeClock, answers: Array<string | AvatarError>) {
  const times: number[] = [];
  const client = {
    async querySession(_liveId: string): Promise<LiveRecord> {
      times.push(clock.now());
      const answer = answers[Math.min(times.length - 1, answers.length - 1)]!;
      if (answer instanceof AvatarError) throw answer;
      return rec(answer);
    },
  };
  return { client: client as unknown as ServiceClient, times };
}

async function drive<T>(clock: FakeClock, promise: Promise<T>, maxFakeMs = 30_000): Promise<T> {
  let done = false;
  const tracked = promise.finally(() => (done = true));
  tracked.catch(() => {});
  for (let t = 0; !done && t < maxFakeMs; t += 100) await clock.advance(100);
  assert.equal(done, true, `did not settle within ${maxFakeMs} fake ms`);
  return tracked;
}

describe('queryUntilEnded', () => {
  it('polls until the session is ended and returns that record', async () => {
    const clock = new FakeClock(0);
    const { client, times } = queryClient(clock, ['ending', 'ending', 'ended']);
    const record = await drive(clock, queryUntilEnded(client, LIVE_ID, { clock }));
    assert.deepEqual(record, rec('ended'));
    assert.deepEqual(times, [0, 500, 1_000]);
  });

  it('polls every pollMs and returns the last record at the deadline, not one poll later', async () => {
    const clock = new FakeClock(0);
    const { client, times } = queryClient(clock, ['on_live']);
    const record = await drive(clock, queryUntilEnded(client, LIVE_ID, { clock, pollMs: 200, timeoutMs: 600 }));
    assert.deepEqual(record, rec('on_live'));
    assert.deepEqual(times, [0, 200, 400, 600]);
  });

  it('gives up after 10 s by default', async () => {
    const clock = new FakeClock(0);
    const { client, times } = queryClient(clock, ['ending']);
    await drive(clock, queryUntilEnded(client, LIVE_ID, { clock }));
    assert.equal(times.length, 21);
    assert.equal(times.at(-1), 10_000);
  });

  it('keeps polling through network errors, logging each, and returns null when nothing could be read', async () => {
    const clock = new FakeClock(0);
    const logger = recordingLogger();
    const { client, times } = queryClient(clock, [new AvatarError('network', 'down')]);
    const record = await drive(clock, queryUntilEnded(client, LIVE_ID, { clock, logger, pollMs: 500, timeoutMs: 500 }));
    assert.equal(record, null);
    assert.deepEqual(times, [0, 500]);
    assert.deepEqual(logger.lines, [
      { level: 'warn', message: 'remote hangup: query failed', data: { code: 'network' } },
      { level: 'warn', message: 'remote hangup: query failed', data: { code: 'network' } },
    ]);
  });

  it('returns the last record read when a later query fails', async () => {
    const clock = new FakeClock(0);
    const { client } = queryClient(clock, ['ending', new AvatarError('server', 'oops')]);
    assert.deepEqual(await drive(clock, queryUntilEnded(client, LIVE_ID, { clock, timeoutMs: 1_000 })), rec('ending'));
  });

  for (const code of ['not_found', 'forbidden', 'unauthorized'] as const) {
    it(`throws ${code} at once (nothing to wait for)`, async () => {
      const clock = new FakeClock(0);
      const { client, times } = queryClient(clock, [new AvatarError(code, code)]);
      await assert.rejects(drive(clock, queryUntilEnded(client, LIVE_ID, { clock })), (e: unknown) => e instanceof AvatarError && e.code === code);
      assert.deepEqual(times, [0]);
    });
  }
});
