/**
 * The keep-alive (core/keep-alive.ts) and how the control socket uses it, on a FakeClock with in-memory
 * transports: which frames prove the server alive (WebSocket control frames included), the probe for a
 * server that never pings, each keep-alive style on the wire, and when a close counts as a refusal of our
 * keep-alive (and what the next connection then sends).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { ControlSocket, type ControlSocketOptions, type ControlSocketOutcome } from '../../../electron/core/control-socket.ts';
import { KeepAlive, describeRefusal, isKeepAliveStyle, isRefusalCloseCode, nextStyle, pingShapeFrom, type KeepAliveStyle } from '../../../electron/core/keep-alive.ts';
import { createWsTransportFactory } from '../../../electron/core/transport.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';
import { until } from '../../helpers/until.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';

const LIVE_ID = 'live-ka';
const PING = { type: 3, payload: { ping: { ts: 7 } } };
const ACK = { type: 2, payload: { conn_init_ack: { success: true } } };

function setup(overrides: Partial<ControlSocketOptions> = {}) {
  const clock = new FakeClock(0);
  const transports = new FakeTransports();
  const outcomes: ControlSocketOutcome[] = [];
  new ControlSocket({
    liveId: LIVE_ID,
    url: 'ws://service.invalid/ws',
    headers: {},
    transportFactory: transports.factory,
    clock,
    onOutcome: (outcome) => outcomes.push(outcome),
    ...overrides,
  });
  const transport = transports.last;
  transport.open();
  transport.receive(ACK); // live: from here only the keep-alive rules run
  const sent = () => transport.frames().map((f) => `${f.type}#${f.seq_id}`);
  return { clock, transport, outcomes, sent, kinds: () => outcomes.map((o) => o.kind) };
}

describe('KeepAlive', () => {
  it('steps pong-message → ping-echo → ws-pong once a server ping is known, then has nothing left', () => {
    assert.deepEqual(
      (['pong-message', 'ping-echo', 'ws-pong'] as KeepAliveStyle[]).map((s) => [nextStyle(s, true), nextStyle(s, false)]),
      [
        ['ping-echo', 'ws-pong'],
        ['ws-pong', 'ws-pong'],
        [null, null],
      ],
    );
  });

  it('moves on when the style in use is refused, tells its listener once, and logs the move', () => {
    const changes: KeepAliveStyle[] = [];
    const log = recordingLogger();
    const keepAlive = new KeepAlive({ onChange: (s) => changes.push(s), logger: log });
    keepAlive.notePing({ type: 3, payload: {} });
    assert.equal(keepAlive.refused('pong-message', 1008), 'ping-echo');
    assert.equal(keepAlive.refused('pong-message', 1008), 'ping-echo', 'a late refusal of a style no longer used changes nothing');
    assert.equal(keepAlive.refused('ping-echo', 4400), 'ws-pong');
    assert.equal(keepAlive.refused('ws-pong', 1003), null);
    assert.equal(keepAlive.style, 'ws-pong');
    assert.deepEqual(changes, ['ping-echo', 'ws-pong']);
    assert.deepEqual(
      log.lines.map((l) => l.data),
      [
        { from: 'pong-message', to: 'ping-echo', code: 1008 },
        { from: 'ping-echo', to: 'ws-pong', code: 4400 },
        { style: 'ws-pong', code: 1003 },
      ],
      'each line carries what was refused, with which close code, and what comes next',
    );
    assert.deepEqual(
      log.lines.map((l) => [l.level, l.message]),
      [
        ['warn', "control socket: the service closed the socket (1008) right after our keep-alive; the next connection sends a reply shaped like the server's own ping"],
        ['warn', 'control socket: the service closed the socket (4400) right after our keep-alive; the next connection sends WebSocket pong frames only'],
        ['warn', 'control socket: the service refused every keep-alive the spec allows'],
      ],
    );
  });

  it('skips the echo when no JSON ping was ever seen (nothing to copy)', () => {
    const log = recordingLogger();
    const keepAlive = new KeepAlive({ logger: log });
    assert.equal(keepAlive.refused('pong-message', 1008), 'ws-pong');
    assert.deepEqual(log.lines.map((l) => l.level), ['warn'], 'no listener is no error');
  });

  it('still moves on when its change listener throws, and says so as an error', () => {
    const log = recordingLogger();
    const keepAlive = new KeepAlive({ logger: log, onChange: () => { throw new Error('disk full'); } });
    assert.equal(keepAlive.refused('pong-message', 1002), 'ws-pong');
    assert.equal(keepAlive.style, 'ws-pong');
    assert.deepEqual(log.lines.at(-1), { level: 'error', message: 'keep-alive: a change listener threw', data: { error: 'Error: disk full' } });
  });

  it('says in words what was refused and what the next connection sends, or that nothing is left', () => {
    assert.equal(describeRefusal('pong-message', 'ping-echo'), "right after our keep-alive, a pong message (type 4); the next connection sends a reply shaped like the server's own ping");
    assert.equal(describeRefusal('ping-echo', 'ws-pong'), "right after our keep-alive, a reply shaped like the server's own ping; the next connection sends WebSocket pong frames only");
    assert.equal(
      describeRefusal('ws-pong', null),
      'right after our keep-alive, WebSocket pong frames only; the service accepted none of the keep-alives the spec allows (our pong message, an echo of its ping, WebSocket pongs)',
    );
  });

  it('knows its three styles by name and nothing else (a stored style is read back through this)', () => {
    assert.deepEqual(['pong-message', 'ping-echo', 'ws-pong'].map(isKeepAliveStyle), [true, true, true]);
    assert.deepEqual(['', 'pong', 'WS-PONG', 4, null, undefined, ['ws-pong']].map(isKeepAliveStyle), [false, false, false, false, false, false, false]);
  });

  it('counts 1002, 1003, 1007, 1008 and 4000–4999 as refusals, not 1000, 1001, 1006 or 1011', () => {
    const codes = [1000, 1001, 1002, 1003, 1006, 1007, 1008, 1011, 3999, 4000, 4400, 4999, 5000];
    assert.deepEqual(codes.filter(isRefusalCloseCode), [1002, 1003, 1007, 1008, 4000, 4400, 4999]);
  });

  it('reads the ping shape of a JSON frame (type and payload), and nothing from text that is not an object', () => {
    assert.deepEqual(pingShapeFrom('{"type":"ping","payload":{"ts":1},"extra":true}'), { type: 'ping', payload: { ts: 1 } });
    assert.deepEqual(pingShapeFrom('{"payload":{"heartbeat":{}}}'), { type: null, payload: { heartbeat: {} } });
    assert.deepEqual(pingShapeFrom('{"type":9,"payload":[1]}'), { type: 9, payload: {} });
    assert.equal(pingShapeFrom('[1,2]'), null);
    assert.equal(pingShapeFrom('{"type":'), null);
  });
});

describe('ControlSocket: what proves the server alive', () => {
  it('WebSocket ping control frames every 5 s keep a socket that never gets a message alive past 15 s', async () => {
    const { clock, transport, kinds } = setup();
    for (let i = 0; i < 8; i++) {
      await clock.advance(5_000);
      transport.receivePing();
    }
    assert.deepEqual(kinds(), ['open', 'ack-success'], 'not dead after 40 s of control frames');
    assert.equal(transport.pingsSent, 0, 'no probe: the server was heard every 5 s');
    await clock.advance(15_000);
    assert.deepEqual(kinds(), ['open', 'ack-success', 'dead']);
  });

  it('a silent server is probed with a WebSocket ping after two keep-alive periods; its pong keeps the socket', async () => {
    const { clock, transport, kinds } = setup();
    await clock.advance(5_000);
    assert.equal(transport.pingsSent, 0);
    await clock.advance(5_000);
    assert.equal(transport.pingsSent, 1, 'probed at 10 s of silence');
    transport.receivePong();
    await clock.advance(10_000);
    assert.equal(transport.pingsSent, 2, 'probed again 10 s after the pong');
    transport.receivePong();
    await clock.advance(10_000);
    assert.deepEqual(kinds(), ['open', 'ack-success'], 'alive at 30 s: each probe was answered');
    await clock.advance(15_000);
    assert.deepEqual(kinds(), ['open', 'ack-success', 'dead'], 'an unanswered probe: dead 15 s after the last frame');
  });
});

describe('the ws transport and control frames (a real server on 127.0.0.1)', () => {
  it("reports the server's pings and pongs, and sends its own ping and pong frames", async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    const atServer: string[] = [];
    wss.on('connection', (ws) => {
      ws.on('ping', () => atServer.push('ping'));
      ws.on('pong', () => atServer.push('pong'));
      ws.ping(); // answered by the client's ws with a pong by itself
    });
    const atClient: string[] = [];
    const transport = createWsTransportFactory()(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`, {}, {
      onOpen: () => atClient.push('open'),
      onMessage: () => atClient.push('message'),
      onClose: () => atClient.push('close'),
      onError: () => atClient.push('error'),
      onPing: () => atClient.push('ping'),
      onPong: () => atClient.push('pong'),
    });
    try {
      await until(() => atClient.includes('ping') && atServer.includes('pong'), { message: 'the server ping and its automatic answer' });
      transport.ping!();
      await until(() => atClient.includes('pong') && atServer.includes('ping'), { message: 'our probe and its answer' });
      transport.pong!();
      await until(() => atServer.filter((e) => e === 'pong').length === 2, { message: 'our unsolicited pong' });
      assert.deepEqual(atClient, ['open', 'ping', 'pong']);
      assert.deepEqual(atServer, ['pong', 'ping', 'pong']);
    } finally {
      transport.terminate();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
  });
});

describe('ControlSocket: each keep-alive style on the wire', () => {
  it('pong-message: type 4 every 5 s and in answer to each ping', async () => {
    const { clock, transport, sent } = setup();
    await clock.advance(5_000);
    transport.receive(PING);
    assert.deepEqual(sent(), ['1#1', '4#2', '4#3']);
    assert.deepEqual(transport.frames()[2], { type: 4, live_id: LIVE_ID, seq_id: 3, payload: { pong: { ts: 5_000 } } });
  });

  it('ping-echo: nothing before the first ping, then the ping copied into the client envelope', async () => {
    const keepAlive = new KeepAlive({ style: 'ping-echo' });
    const { clock, transport, sent } = setup({ keepAlive });
    await clock.advance(5_000);
    assert.deepEqual(sent(), ['1#1'], 'no ping seen yet: nothing to copy');
    transport.receive({ type: 'heartbeat', payload: { beat: { n: 4 } }, trace: 'x' });
    await clock.advance(5_000);
    assert.deepEqual(transport.frames().slice(1), [
      { type: 'heartbeat', live_id: LIVE_ID, seq_id: 2, payload: { beat: { n: 4 } } },
      { type: 'heartbeat', live_id: LIVE_ID, seq_id: 3, payload: { beat: { n: 4 } } },
    ]);
    assert.deepEqual(keepAlive.pingShape, { type: 'heartbeat', payload: { beat: { n: 4 } } });
  });

  it('ping-echo: a ping known from an earlier connection is echoed from the first keep-alive on', async () => {
    const keepAlive = new KeepAlive({ style: 'ping-echo' });
    keepAlive.notePing({ type: 3, payload: { ping: { ts: 1 } } });
    const { clock, sent } = setup({ keepAlive });
    await clock.advance(5_000);
    assert.deepEqual(sent(), ['1#1', '3#2']);
  });

  it('ws-pong: a pong control frame every 5 s and for each JSON ping, no keep-alive message', async () => {
    const { clock, transport, sent } = setup({ keepAlive: new KeepAlive({ style: 'ws-pong' }) });
    await clock.advance(10_000);
    transport.receive(PING);
    assert.deepEqual(sent(), ['1#1']);
    assert.equal(transport.pongsSent, 3);
  });
});

describe('ControlSocket: a close right after our keep-alive', () => {
  it('1008 at once after the keep-alive: reported as a refusal, and the shared keep-alive moves to the echo', async () => {
    const keepAlive = new KeepAlive();
    const { clock, transport, outcomes } = setup({ keepAlive });
    transport.receive(PING);
    await clock.advance(5_000);
    await clock.advance(100);
    transport.serverClose(1008, 'unknown message type 4');
    assert.deepEqual(outcomes.at(-1), {
      kind: 'closed',
      code: 1008,
      reason: 'unknown message type 4',
      wasClean: true,
      keepAliveRefused: { style: 'pong-message', next: 'ping-echo' },
    });
    assert.equal(keepAlive.style, 'ping-echo');
  });

  const notRefusals: Array<[string, (t: ReturnType<typeof setup>) => Promise<void>]> = [
    ['a normal close (1000)', async ({ clock, transport }) => (await clock.advance(5_000), transport.serverClose(1000, 'bye'))],
    ['a drop (1006)', async ({ clock, transport }) => (await clock.advance(5_000), transport.serverClose(1006, ''))],
    ['1008 more than 2 s after the keep-alive', async ({ clock, transport }) => (await clock.advance(7_001), transport.serverClose(1008, ''))],
    ['1008 before any keep-alive', async ({ clock, transport }) => (await clock.advance(4_999), transport.serverClose(1008, ''))],
  ];
  for (const [what, act] of notRefusals) {
    it(`${what} is a plain close: the keep-alive stays`, async () => {
      const keepAlive = new KeepAlive();
      const t = setup({ keepAlive });
      await act(t);
      const last = t.outcomes.at(-1)!;
      assert.equal(last.kind, 'closed');
      assert.equal('keepAliveRefused' in last, false);
      assert.equal(keepAlive.style, 'pong-message');
    });
  }

  it('1008 right after conn_init (not a keep-alive) is a plain close', () => {
    const keepAlive = new KeepAlive();
    const { transport, outcomes } = setup({ keepAlive });
    transport.serverClose(1008, 'bad conn_init');
    assert.equal('keepAliveRefused' in outcomes.at(-1)!, false);
    assert.equal(keepAlive.style, 'pong-message');
  });
});
