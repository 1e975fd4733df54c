/**
 * The `ws` transport (transport.ts) against real servers on 127.0.0.1 port 0: the exact handshake errors,
 * what the handshake offers, frames between the spec's 64 KB and the hard cap, a bad URL, closing while
 * connecting, terminate, and the bookkeeping of `isOpen` and `send`. Every server is closed after its test.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import type { AvatarError } from '../../../electron/core/errors.ts';
import { createWsTransportFactory, handshakeError, type TransportHandlers } from '../../../electron/core/transport.ts';
import { until } from '../../helpers/until.ts';

describe('handshakeError (spec §5, §7)', () => {
  const base = (status: number) => `The control socket handshake was refused (HTTP ${status}).`;
  for (const [status, code, message] of [
    [401, 'unauthorized', `${base(401)} Check the API key.`],
    [403, 'forbidden', `${base(403)} Use the key that created the session.`],
    [404, 'not_found', `${base(404)} The session does not exist or has expired.`],
    [400, 'network', base(400)],
    [499, 'network', base(499)],
    [500, 'server', base(500)],
    [503, 'server', base(503)],
    [0, 'network', base(0)],
  ] as const) {
    it(`maps HTTP ${status} to ${code} with its message and status`, () => {
      const error = handshakeError(status);
      assert.deepEqual([error.code, error.message, error.status], [code, message, status]);
    });
  }
});

describe('createWsTransportFactory', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  async function wsServer(onConnection: (ws: ServerSocket, req: import('node:http').IncomingMessage) => void = () => {}) {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: true });
    cleanups.push(async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    });
    wss.on('connection', onConnection);
    await once(wss, 'listening');
    return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`;
  }

  function recorder() {
    const events: string[] = [];
    const errors: AvatarError[] = [];
    const messages: Array<string | Uint8Array> = [];
    let resolveClosed!: () => void;
    const closed = new Promise<void>((r) => (resolveClosed = r));
    const handlers: TransportHandlers = {
      onOpen: () => events.push('open'),
      onMessage: (data, isBinary) => {
        messages.push(data);
        events.push(isBinary ? `binary:${data.length}` : `text:${data.length}`);
      },
      onClose: (code, reason) => {
        events.push(`close:${code}:${reason}`);
        resolveClosed();
      },
      onError: (error) => {
        events.push(`error:${error.code}`);
        errors.push(error);
      },
    };
    return { events, errors, messages, handlers, closed };
  }

  it('reports a bad URL asynchronously as a network error then a 1006 close, with an inert transport', async () => {
    const rec = recorder();
    const transport = createWsTransportFactory()('not a url', {}, rec.handlers);
    assert.deepEqual(rec.events, [], 'nothing fires before the caller has the transport');
    assert.equal(transport.isOpen, false);
    transport.send('x');
    transport.close();
    transport.terminate();
    await rec.closed;
    assert.deepEqual(rec.events, ['error:network', 'close:1006:invalid url']);
    assert.equal(rec.errors[0]?.message, 'Could not open the control socket: Invalid URL: not a url');
    assert.ok(rec.errors[0]?.cause instanceof Error);
  });

  it('reports a refused connection with the socket error message and cause', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const rec = recorder();
    createWsTransportFactory()(`ws://127.0.0.1:${port}/ws`, {}, rec.handlers);
    await rec.closed;
    assert.deepEqual(rec.events, ['error:network', 'close:1006:']);
    assert.equal(rec.errors[0]?.message, `Control socket error: connect ECONNREFUSED 127.0.0.1:${port}`);
    assert.equal((rec.errors[0]?.cause as { code?: string } | undefined)?.code, 'ECONNREFUSED');
  });

  it('gives up a handshake the server never answers after handshakeTimeoutMs', async () => {
    const sockets: Duplex[] = [];
    const server: Server = createServer();
    server.on('upgrade', (_req, socket) => void sockets.push(socket)); // never answered
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const rec = recorder();
    const startedAt = Date.now();
    createWsTransportFactory({ handshakeTimeoutMs: 100 })(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`, {}, rec.handlers);
    await until(() => rec.events.length >= 2, { realTimeoutMs: 3_000, message: 'the handshake did not time out' });
    assert.ok(Date.now() - startedAt < 2_000);
    assert.deepEqual(rec.events, ['error:network', 'close:1006:']);
    assert.equal(rec.errors[0]?.message, 'Control socket error: Opening handshake has timed out');
  });

  it('offers no compression, goes through the given agent, and is open only between open and close', async () => {
    let offered: string | undefined = 'not seen';
    let serverSide: ServerSocket | undefined;
    const url = await wsServer((ws, req) => {
      offered = req.headers['sec-websocket-extensions'];
      serverSide = ws;
    });
    let connections = 0;
    class CountingAgent extends Agent {
      override createConnection(...args: Parameters<Agent['createConnection']>): ReturnType<Agent['createConnection']> {
        connections += 1;
        return super.createConnection(...args);
      }
    }
    const agent = new CountingAgent();
    cleanups.push(async () => agent.destroy());
    const rec = recorder();
    const transport = createWsTransportFactory({ agent })(url, {}, rec.handlers);
    assert.equal(transport.isOpen, false);
    assert.doesNotThrow(() => transport.send('too early'), 'sending while connecting is a no-op');
    await until(() => rec.events.includes('open') && serverSide !== undefined);
    assert.equal(offered, undefined);
    assert.equal(connections, 1);
    assert.equal(transport.isOpen, true);
    const serverClosed = once(serverSide!, 'close');
    transport.close();
    assert.equal(transport.isOpen, false);
    const [code, reason] = (await serverClosed) as [number, Buffer];
    assert.deepEqual([code, reason.toString()], [1000, '']);
    await rec.closed;
    assert.deepEqual(rec.events, ['open', 'close:1000:']);
  });

  it('delivers a text frame over 64 KB but under the 1 MiB hard cap by default', async () => {
    const big = 'x'.repeat(200_000);
    const url = await wsServer((ws) => ws.send(big));
    const rec = recorder();
    const transport = createWsTransportFactory()(url, {}, rec.handlers);
    await until(() => rec.messages.length === 1);
    assert.deepEqual(rec.events, ['open', 'text:200000']);
    assert.equal(rec.messages[0], big);
    transport.terminate();
    await rec.closed;
  });

  it('closes (1009) on a text frame over the 1 MiB default hard cap, reporting one size-limit error', async () => {
    const url = await wsServer((ws) => ws.send('x'.repeat(1_048_577)));
    const rec = recorder();
    createWsTransportFactory()(url, {}, rec.handlers);
    await rec.closed;
    assert.deepEqual(rec.events, ['open', 'error:network', 'close:1006:']);
    assert.equal(rec.errors[0]?.message, 'The server sent a frame over the size limit.');
  });

  it('reports a refused handshake once (the abort that follows is not a second error)', async () => {
    const server: Server = createServer((_req, res) => res.end());
    server.on('upgrade', (_req, socket: Duplex) => socket.end('HTTP/1.1 401 No\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const rec = recorder();
    createWsTransportFactory()(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`, {}, rec.handlers);
    await rec.closed;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(rec.events, ['error:unauthorized', 'close:1006:']);
  });

  it('closing while still connecting aborts the handshake: no open, one close', async () => {
    const url = await wsServer();
    const rec = recorder();
    const transport = createWsTransportFactory()(url, {}, rec.handlers);
    transport.close(1000, 'never mind');
    await rec.closed;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(rec.events.includes('open'), false);
    assert.equal(rec.events.at(-1), 'close:1006:');
  });

  it('terminate() drops an open connection at once (1006, no close handshake)', async () => {
    let serverSide: ServerSocket | undefined;
    const url = await wsServer((ws) => (serverSide = ws));
    const rec = recorder();
    const transport = createWsTransportFactory()(url, {}, rec.handlers);
    await until(() => rec.events.includes('open') && serverSide !== undefined);
    const serverClosed = once(serverSide!, 'close');
    transport.terminate();
    await rec.closed;
    assert.deepEqual(rec.events, ['open', 'close:1006:']);
    const [code] = (await serverClosed) as [number];
    assert.equal(code, 1006);
  });
});

// The same factory behind a bare HTTP server whose upgrade handler each test writes (moved here from the
// control socket's tests: it is the transport that is under test).
describe('createWsTransportFactory behind a plain upgrade handler', () => {
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
});
