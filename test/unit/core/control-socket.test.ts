import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { ControlSocket, type ControlSocketOptions, type ControlSocketOutcome } from '../../../electron/core/control-socket.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { Logger } from '../../../electron/core/log.ts';
import { MAX_WS_MESSAGE_BYTES } from '../../../electron/core/protocol.ts';
import { createWsTransportFactory, handshakeError, type TransportHandlers } from '../../../electron/core/transport.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';
import { until } from '../../helpers/until.ts';

const LIVE_ID = 'live-123';

function recordingLogger(): Logger & { lines: Array<{ level: string; message: string }> } {
  const lines: Array<{ level: string; message: string }> = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function setup(overrides: Partial<ControlSocketOptions> = {}) {
  const clock = new FakeClock(0);
  const transports = new FakeTransports();
  const outcomes: ControlSocketOutcome[] = [];
  const logger = recordingLogger();
  const socket = new ControlSocket({
    liveId: LIVE_ID,
    url: 'ws://emulator.invalid/live/ws/live/connect?live_id=live-123',
    headers: { Authorization: 'Token abc' },
    transportFactory: transports.factory,
    clock,
    logger,
    onOutcome: (outcome) => outcomes.push(outcome),
    ...overrides,
  });
  const transport = transports.last;
  /** Type and seq_id of every frame the client sent, e.g. "1#1". */
  const sent = () => transport.frames().map((f) => `${f.type}#${f.seq_id}`);
  const kinds = () => outcomes.map((o) => o.kind);
  return { clock, transports, transport, socket, outcomes, logger, sent, kinds };
}

const ping = { type: 3, payload: { ping: { ts: 1 } } };
const ackOk = { type: 2, payload: { conn_init_ack: { success: true } } };

describe('ControlSocket', () => {
  describe('when the socket opens', () => {
    it('connects with the given URL and headers and sends conn_init with seq_id 1 at once', () => {
      const { transport, sent, kinds } = setup();
      assert.equal(transport.url, 'ws://emulator.invalid/live/ws/live/connect?live_id=live-123');
      assert.deepEqual(transport.headers, { Authorization: 'Token abc' });
      assert.deepEqual(sent(), []);
      transport.open();
      assert.deepEqual(transport.frames(), [{ type: 1, live_id: LIVE_ID, seq_id: 1, payload: { conn_init: { version: 1 } } }]);
      assert.deepEqual(sent(), ['1#1']);
      assert.deepEqual(kinds(), ['open']);
    });

    it('sends nothing on open when made for a hangup only (sendConnInit: false)', () => {
      const { transport, socket, sent } = setup({ sendConnInit: false });
      transport.open();
      assert.deepEqual(sent(), []);
      socket.hangup('user_end');
      assert.deepEqual(transport.frames(), [{ type: 5, live_id: LIVE_ID, seq_id: 1, payload: { hangup: { hangup_reason: 'user_end' } } }]);
    });
  });

  describe('when the server answers conn_init', () => {
    const cases: Array<[string, unknown, ControlSocketOutcome]> = [
      ['a nested success ack', ackOk, { kind: 'ack-success' }],
      ['a flat success ack', { type: 2, payload: { success: true } }, { kind: 'ack-success' }],
      ['NOT_READY', { type: 2, payload: { conn_init_ack: { success: false, error_code: 'NOT_READY' } } }, { kind: 'ack-not-ready' }],
      ['a flat NOT_READY', { type: 2, payload: { success: false, error_code: 'NOT_READY' } }, { kind: 'ack-not-ready' }],
      [
        'LIVE_CONN_INIT_FAILED',
        { type: 2, payload: { conn_init_ack: { success: false, error_code: 'LIVE_CONN_INIT_FAILED' } } },
        { kind: 'ack-failed', errorCode: 'LIVE_CONN_INIT_FAILED' },
      ],
    ];
    for (const [name, frame, expected] of cases) {
      it(`reports ${name} as ${expected.kind}`, () => {
        const { transport, outcomes } = setup();
        transport.open();
        transport.receive(frame);
        assert.deepEqual(outcomes, [{ kind: 'open' }, expected]);
      });
    }

    it('ignores a second ack on the same connection', () => {
      const { transport, kinds, logger } = setup();
      transport.open();
      transport.receive(ackOk);
      transport.receive(ackOk);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
      assert.ok(logger.lines.some((l) => l.level === 'warn' && /repeated conn_init_ack/.test(l.message)));
    });

    it('reports a timeout error when no ack comes within ackTimeoutMs, and terminates', async () => {
      const { clock, transport, outcomes } = setup({ ackTimeoutMs: 3_000 });
      transport.open();
      await clock.advance(2_999);
      assert.equal(outcomes.length, 1);
      await clock.advance(1);
      assert.equal(outcomes[1]?.kind, 'error');
      assert.equal(outcomes[1]?.kind === 'error' && outcomes[1].error.code, 'timeout');
      assert.equal(transport.terminated, true);
      assert.equal(clock.pendingCount, 0);
    });
  });

  describe('seq_id', () => {
    it('increases by one per message (conn_init 1, pongs 2 and 3) and restarts at 1 on a new connection', () => {
      const first = setup();
      first.transport.open();
      first.transport.receive(ping);
      first.transport.receive(ping);
      assert.deepEqual(first.sent(), ['1#1', '4#2', '4#3']);
      first.socket.close();

      const second = setup();
      second.transport.open();
      second.transport.receive(ping);
      assert.deepEqual(second.sent(), ['1#1', '4#2']);
      second.socket.close();
    });

    it('numbers the hangup after what was sent before', () => {
      const { transport, socket, sent } = setup();
      transport.open();
      transport.receive(ackOk);
      transport.receive(ping);
      socket.hangup('user_end');
      assert.deepEqual(sent(), ['1#1', '4#2', '5#3']);
      assert.deepEqual(transport.frames()[2]?.payload, { hangup: { hangup_reason: 'user_end' } });
    });
  });

  describe('heartbeat', () => {
    it('answers each server ping with a pong carrying the clock time', async () => {
      const { clock, transport } = setup();
      transport.open();
      await clock.advance(1_234);
      transport.receive(ping);
      assert.deepEqual(transport.frames()[1], { type: 4, live_id: LIVE_ID, seq_id: 2, payload: { pong: { ts: 1_234 } } });
    });

    it('keeps its own 5 s keep-alive cadence besides answering pings, and never declares the link dead while pings come', async () => {
      const { clock, transport, kinds, socket } = setup();
      transport.open();
      transport.receive(ackOk);
      await clock.advance(2_500); // the server's ping phase is not ours
      for (let i = 0; i < 3; i++) {
        transport.receive(ping);
        await clock.advance(5_000);
      }
      // "time:type#seq" of everything after conn_init; a pong carries the time it was sent.
      const log = transport.frames().slice(1).map((f) => `${(f.payload.pong as { ts: number }).ts}:${f.type}#${f.seq_id}`);
      assert.deepEqual(log, ['2500:4#2', '5000:4#3', '7500:4#4', '10000:4#5', '12500:4#6', '15000:4#7']);
      await clock.advance(5_000 * 20 - 2_500);
      assert.deepEqual(kinds(), ['open', 'ack-success', 'dead'], 'dead only once the pings stopped for 15 s');
      socket.close();
      assert.equal(clock.pendingCount, 0);
    });

    it('sends a keep-alive pong every 5 s on its own, at 5 s and 10 s, and is dead at 15 s without a server frame', async () => {
      const { clock, transport, sent, kinds, outcomes } = setup();
      transport.open();
      transport.receive(ackOk);
      const sentAt: number[] = [];
      for (let t = 0; t < 15_000; t += 1_000) {
        const before = sent().length;
        await clock.advance(1_000);
        if (sent().length > before) sentAt.push(clock.now());
      }
      assert.deepEqual(sent(), ['1#1', '4#2', '4#3']);
      assert.deepEqual(sentAt, [5_000, 10_000]);
      assert.deepEqual(kinds(), ['open', 'ack-success', 'dead']);
      assert.deepEqual(outcomes[2], { kind: 'dead', cause: 'silence' });
      assert.equal(transport.terminated, true, 'terminated, not politely closed');
      assert.deepEqual(transport.closeCalls, []);
      assert.equal(clock.pendingCount, 0);
    });

    it('counts any server frame, even garbage, as a sign of life', async () => {
      const { clock, transport, kinds } = setup();
      transport.open();
      transport.receive(ackOk);
      await clock.advance(14_000);
      transport.receive('not json');
      await clock.advance(14_000);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
      await clock.advance(1_000);
      assert.deepEqual(kinds(), ['open', 'ack-success', 'dead']);
    });

    it('treats a clock jump (sleep/resume) as a dead connection', async () => {
      const { clock, transport, outcomes } = setup();
      transport.open();
      transport.receive(ackOk);
      await clock.advance(1_000);
      clock.jump(60_000); // the machine slept for a minute; timers fire late on resume
      await clock.advance(0);
      assert.deepEqual(outcomes.at(-1), { kind: 'dead', cause: 'clock-jump' });
      assert.equal(outcomes.filter((o) => o.kind === 'dead').length, 1);
      assert.equal(transport.terminated, true);
      assert.equal(clock.pendingCount, 0);
    });

    it('does not take a small timer delay for a clock jump', async () => {
      const { clock, transport, kinds } = setup();
      transport.open();
      transport.receive(ackOk);
      clock.jump(4_000);
      await clock.advance(1_000);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
      assert.equal(transport.sent.length, 2, 'the keep-alive went out, late but normal');
    });
  });

  describe('when the server sends garbage', () => {
    it('logs and ignores malformed JSON, binary, unknown types and frames over 64 KB, and carries on', () => {
      const { transport, kinds, logger, sent } = setup();
      transport.open();
      transport.receive('{"type":3,"payload":{"ping":');
      transport.receive('[1,2,3]');
      transport.receiveBinary(new Uint8Array([0xde, 0xad, 0xbe, 0xef]));
      transport.receive({ type: 99, payload: { note: 'unknown' } });
      transport.receive({ type: 3, payload: { ping: { ts: 1 }, padding: 'x'.repeat(MAX_WS_MESSAGE_BYTES) } });
      assert.deepEqual(kinds(), ['open']);
      assert.deepEqual(sent(), ['1#1'], 'the oversized ping was not answered');
      const warnings = logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
      assert.equal(warnings.length, 4);
      assert.ok(warnings.some((m) => /binary/.test(m)));
      assert.ok(warnings.some((m) => /64 KB/.test(m)));
      transport.receive(ackOk);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
    });
  });

  describe('when the server hangs up (type 6)', () => {
    it('reports the reason', () => {
      const { transport, outcomes } = setup();
      transport.open();
      transport.receive(ackOk);
      transport.receive({ type: 6, payload: { hangup: { hangup_reason: 'credit_insufficient' } } });
      assert.deepEqual(outcomes.at(-1), { kind: 'forced-hangup', reason: 'credit_insufficient' });
    });
  });

  describe('when the connection closes or fails', () => {
    it('reports a server close with its code and reason, once', () => {
      const { transport, outcomes, clock } = setup();
      transport.open();
      transport.serverClose(1001, 'going away');
      transport.receive(ackOk);
      assert.deepEqual(outcomes, [{ kind: 'open' }, { kind: 'closed', code: 1001, reason: 'going away', wasClean: true }]);
      assert.equal(clock.pendingCount, 0);
    });

    it('reports an abnormal close (1006) as not clean', () => {
      const { transport, outcomes } = setup();
      transport.open();
      transport.serverClose(1006);
      assert.deepEqual(outcomes.at(-1), { kind: 'closed', code: 1006, reason: '', wasClean: false });
    });

    it('reports a refused handshake as an error with its code, and nothing after it', async () => {
      const { transport, outcomes, socket, clock } = setup();
      transport.fail(handshakeError(401));
      assert.equal(outcomes.length, 1);
      assert.equal(outcomes[0]?.kind, 'error');
      assert.equal(outcomes[0]?.kind === 'error' && outcomes[0].error.code, 'unauthorized');
      assert.equal(socket.isFinished, true);
      await socket.closed;
      assert.equal(clock.pendingCount, 0);
    });
  });

  describe('when its owner closes it', () => {
    it('closes politely and reports nothing more (events of a replaced socket are dropped)', () => {
      const { transport, socket, outcomes, clock } = setup();
      transport.open();
      socket.close();
      assert.deepEqual(transport.closeCalls, [{ code: 1000, reason: '' }]);
      transport.receive(ackOk);
      transport.receive({ type: 6, payload: { hangup: { hangup_reason: 'timeout' } } });
      assert.deepEqual(outcomes, [{ kind: 'open' }]);
      assert.equal(clock.pendingCount, 0);
    });

    it('terminates when the peer does not answer the close within closeTimeoutMs', async () => {
      const { transport, socket, clock } = setup({ closeTimeoutMs: 2_000 });
      transport.autoCompleteClose = false;
      transport.open();
      socket.close();
      let closed = false;
      void socket.closed.then(() => (closed = true));
      await clock.advance(1_999);
      assert.equal(closed, false);
      assert.equal(transport.terminated, false);
      await clock.advance(1);
      assert.equal(transport.terminated, true);
      assert.equal(closed, true);
      assert.equal(clock.pendingCount, 0);
    });

    it('sends the hangup before closing, and only if open', () => {
      const { transport, socket, sent } = setup();
      socket.hangup('user_end'); // still connecting: nothing can be sent
      assert.deepEqual(sent(), []);
      assert.equal(transport.closeCalls.length, 1);
    });

    it('is idempotent', () => {
      const { transport, socket } = setup();
      transport.open();
      socket.close();
      socket.close();
      socket.terminate();
      assert.equal(transport.closeCalls.length, 1);
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// The real transport, against a ws server on 127.0.0.1 port 0.

describe('wsTransportFactory', () => {
  let server: Server | null = null;
  let wss: WebSocketServer | null = null;
  afterEach(async () => {
    for (const client of wss?.clients ?? []) client.terminate();
    wss?.close();
    if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = null;
    wss = null;
  });

  async function listen(onUpgrade: (req: import('node:http').IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => void): Promise<string> {
    server = createServer();
    server.on('upgrade', onUpgrade);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
  }

  function recorder() {
    const events: string[] = [];
    const errors: AvatarError[] = [];
    let resolveClosed!: () => void;
    const closed = new Promise<void>((r) => (resolveClosed = r));
    const handlers: TransportHandlers = {
      onOpen: () => events.push('open'),
      onMessage: (data, isBinary) => events.push(isBinary ? `binary:${data.length}` : `text:${String(data).slice(0, 20)}`),
      onClose: (code) => {
        events.push(`close:${code}`);
        resolveClosed();
      },
      onError: (error) => {
        events.push(`error:${error.code}`);
        errors.push(error);
      },
    };
    return { events, errors, handlers, closed };
  }

  it('sends the handshake headers, delivers text and binary frames, and closes', async () => {
    wss = new WebSocketServer({ noServer: true });
    let authorization: string | undefined;
    let serverSocket: ServerSocket | null = null;
    const url = await listen((req, socket, head) => {
      authorization = req.headers.authorization;
      wss!.handleUpgrade(req, socket, head, (ws) => {
        serverSocket = ws;
        ws.send('{"type":3}');
        ws.send(Buffer.from([1, 2, 3]), { binary: true });
      });
    });
    const rec = recorder();
    const transport = createWsTransportFactory()(url, { Authorization: 'Token secret-key' }, rec.handlers);
    await until(() => rec.events.length >= 3);
    assert.equal(authorization, 'Token secret-key');
    assert.deepEqual(rec.events, ['open', 'text:{"type":3}', 'binary:3']);
    assert.equal(transport.isOpen, true);
    transport.send('hello');
    transport.close(1000, 'bye');
    await rec.closed;
    assert.deepEqual(rec.events.slice(3), ['close:1000']);
    assert.ok(serverSocket);
  });

  for (const [status, code] of [
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not_found'],
  ] as const) {
    it(`surfaces a ${status} handshake refusal as ${code}, then one close`, async () => {
      const url = await listen((_req, socket) => {
        socket.end(`HTTP/1.1 ${status} No\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      });
      const rec = recorder();
      createWsTransportFactory()(url, {}, rec.handlers);
      await rec.closed;
      await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(rec.events, [`error:${code}`, 'close:1006']);
      assert.equal(rec.errors[0]?.status, status);
    });
  }

  it('closes (1009) instead of buffering a frame over its hard cap', async () => {
    wss = new WebSocketServer({ noServer: true });
    const url = await listen((req, socket, head) => {
      wss!.handleUpgrade(req, socket, head, (ws) => ws.send('x'.repeat(2_000)));
    });
    const rec = recorder();
    createWsTransportFactory({ maxPayloadBytes: 1_000 })(url, {}, rec.handlers);
    await rec.closed;
    assert.deepEqual(rec.events.slice(0, 2), ['open', 'error:network']);
    assert.match(rec.events[2] ?? '', /^close:/);
    assert.match(rec.errors[0]?.message ?? '', /size limit/);
  });

  it('reports a refused connection as a network error', async () => {
    const url = await listen(() => {});
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = null;
    const rec = recorder();
    createWsTransportFactory()(url, {}, rec.handlers);
    await rec.closed;
    assert.deepEqual(rec.events, ['error:network', 'close:1006']);
  });
});

// A spare's socket holds its conn_init until the tap.
describe('ControlSocket with holdConnInit (a spare session)', () => {
  it('sends nothing on open, keeps the socket alive without an ack deadline, and sends conn_init on connInit()', async () => {
    const { clock, transport, socket, sent, kinds } = setup({ holdConnInit: true, ackTimeoutMs: 1_000 });
    transport.open();
    assert.deepEqual(sent(), []);
    assert.equal(socket.connInitSent, false);
    for (let i = 0; i < 4; i++) {
      await clock.advance(5_000);
      transport.receive(ping);
    }
    // 20 s: far past the 1 s ack timeout, which does not run yet; keep-alives and ping answers only.
    assert.deepEqual(sent(), ['4#1', '4#2', '4#3', '4#4', '4#5', '4#6', '4#7', '4#8']);
    assert.deepEqual(kinds(), ['open']);
    assert.equal(socket.connInit(1_000), true);
    assert.equal(socket.connInit(1_000), false, 'once');
    assert.deepEqual(sent().at(-1), '1#9');
    assert.deepEqual(transport.frames().at(-1)!.payload, { conn_init: { version: 1 } });
    assert.equal(socket.connInitSent, true);
    transport.receive(ackOk);
    assert.deepEqual(kinds(), ['open', 'ack-success']);
    socket.close();
  });

  it('starts the ack deadline at connInit()', async () => {
    const { clock, transport, socket, kinds } = setup({ holdConnInit: true });
    transport.open();
    await clock.advance(4_000);
    socket.connInit(1_000);
    await clock.advance(999);
    assert.deepEqual(kinds(), ['open']);
    await clock.advance(1);
    assert.deepEqual(kinds(), ['open', 'error']);
    assert.equal(socket.isFinished, true);
  });

  it('ignores an ack that arrives before conn_init, and refuses connInit() before open', () => {
    const { transport, socket, kinds } = setup({ holdConnInit: true });
    assert.equal(socket.connInit(), false, 'not open yet');
    transport.open();
    transport.receive(ackOk);
    assert.deepEqual(kinds(), ['open']);
    socket.close();
  });

  it('reports to a new owner after setOutcomeListener()', () => {
    const { transport, socket, kinds } = setup({ holdConnInit: true });
    transport.open();
    const adopted: string[] = [];
    socket.setOutcomeListener((outcome, s) => {
      assert.equal(s, socket);
      adopted.push(outcome.kind);
    });
    socket.connInit();
    transport.receive(ackOk);
    transport.serverClose(1000, 'bye');
    assert.deepEqual(kinds(), ['open']);
    assert.deepEqual(adopted, ['ack-success', 'closed']);
  });
});
