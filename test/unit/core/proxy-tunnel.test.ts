/**
 * How a chosen route carries main's own connections (core/proxy.ts): which agent a route gets (none for
 * direct, SOCKS, or CONNECT for http(s)) and whether it keeps connections alive, and a raw tunnel through a
 * CONNECT proxy on 127.0.0.1 that holds early writes until the tunnel is up, ends and fails as the far side
 * or the proxy does, and speaks TLS inside when asked. Which route is chosen is proxy-route.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter, once } from 'node:events';
import type { Duplex } from 'node:stream';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { DIRECT, proxyAgent, tunnelStream } from '../../../electron/core/proxy.ts';

describe('proxyAgent', () => {
  it('gives no agent for direct, a SOCKS agent for socks and a CONNECT agent for http(s)', () => {
    assert.equal(proxyAgent(DIRECT), null);
    assert.ok(proxyAgent({ kind: 'socks', url: 'socks5://127.0.0.1:1080' }) instanceof SocksProxyAgent);
    assert.ok(proxyAgent({ kind: 'http', url: 'http://127.0.0.1:3128' }) instanceof HttpsProxyAgent);
    assert.ok(proxyAgent({ kind: 'https', url: 'https://127.0.0.1:3129' }) instanceof HttpsProxyAgent);
  });
  it('keeps connections alive only when asked', () => {
    const route = { kind: 'http', url: 'http://127.0.0.1:3128' } as const;
    assert.equal((proxyAgent(route) as http.Agent & { keepAlive: boolean }).keepAlive, false);
    assert.equal((proxyAgent(route, { keepAlive: true }) as http.Agent & { keepAlive: boolean }).keepAlive, true);
    assert.equal((proxyAgent({ kind: 'socks', url: 'socks5://127.0.0.1:1080' }, { keepAlive: true }) as http.Agent & { keepAlive: boolean }).keepAlive, true);
  });
});

describe('tunnelStream through a CONNECT proxy on 127.0.0.1', () => {
  let echo: net.Server;
  let proxy: http.Server;
  let echoPort = 0;
  let proxyPort = 0;
  const connectLines: string[] = [];
  const sockets = new Set<net.Socket>();
  /** Emits 'client' with the proxy's side of each tunnel as its CONNECT arrives. */
  const tunnels = new EventEmitter();

  before(async () => {
    echo = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('data', (chunk) => {
        if (chunk.toString() === 'bye') socket.end('bye!');
        else if (chunk.toString() === 'drop') socket.destroy();
        else socket.write(`echo:${chunk.toString()}`);
      });
      socket.on('error', () => {});
    });
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoPort = (echo.address() as net.AddressInfo).port;
    proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
      connectLines.push(`${req.method} ${req.url}`);
      tunnels.emit('client', client);
      sockets.add(client);
      client.on('error', () => {});
      const [host, port] = (req.url ?? '').split(':');
      if (port === '1') {
        client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      client.on('data', (chunk: Buffer) => {
        if (chunk.toString() === 'reset-me') client.resetAndDestroy();
      });
      const upstream = net.connect(Number(port), host!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    proxyPort = (proxy.address() as net.AddressInfo).port;
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    proxy.closeAllConnections();
    await Promise.all([new Promise((r) => proxy.close(r)), new Promise((r) => echo.close(r))]);
  });

  const route = () => ({ kind: 'http' as const, url: `http://127.0.0.1:${proxyPort}` });

  /** Reads from `stream` until `expected` has arrived (bounded by the test's timeout). */
  async function readUntil(stream: Duplex, expected: string): Promise<string> {
    let text = '';
    for await (const chunk of stream) {
      text += chunk.toString();
      if (text.length >= expected.length) break;
    }
    return text;
  }

  it('holds a write made before the tunnel is up, then carries bytes both ways', { timeout: 5000 }, async () => {
    const stream = tunnelStream(route(), { host: '127.0.0.1', port: echoPort });
    const connected = once(stream, 'connect');
    stream.write('hello');
    await connected;
    assert.equal(await readUntil(stream, 'echo:hello'), 'echo:hello');
    assert.ok(connectLines.includes(`CONNECT 127.0.0.1:${echoPort}`));
    stream.destroy();
  });

  it('ends when the far side ends', { timeout: 5000 }, async () => {
    const stream = tunnelStream(route(), { host: '127.0.0.1', port: echoPort });
    stream.end('bye');
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    assert.equal(text, 'bye!');
    stream.destroy();
  });

  it('ends the far side when ended before the tunnel is up', { timeout: 5000 }, async () => {
    const stream = tunnelStream(route(), { host: '127.0.0.1', port: echoPort });
    stream.end();
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    assert.equal(text, '');
    stream.destroy();
  });

  it('closes a tunnel that comes up after the stream was destroyed', { timeout: 5000 }, async () => {
    const arrived = once(tunnels, 'client') as Promise<[net.Socket]>;
    const stream = tunnelStream(route(), { host: '127.0.0.1', port: echoPort });
    stream.destroy();
    const [client] = await arrived;
    const closed = client.destroyed ? Promise.resolve('closed') : once(client, 'close').then(() => 'closed');
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise((resolve) => (timer = setTimeout(resolve, 2000, 'still open')));
    const outcome = await Promise.race([closed, waited]);
    clearTimeout(timer);
    assert.equal(outcome, 'closed');
  });

  it('is destroyed (emits close) when the far side drops the connection', { timeout: 5000 }, async () => {
    const stream = tunnelStream(route(), { host: '127.0.0.1', port: echoPort });
    stream.resume();
    stream.write('drop');
    await once(stream, 'close');
    assert.equal(stream.destroyed, true);
  });

  it('fails with the tunnel\'s error when the proxy resets it', { timeout: 5000 }, async () => {
    const stream = tunnelStream(route(), { host: '127.0.0.1', port: echoPort });
    stream.resume();
    stream.write('reset-me');
    const [error] = (await once(stream, 'error')) as [NodeJS.ErrnoException];
    assert.equal(error.code, 'ECONNRESET');
  });

  it('closes, carrying the proxy\'s answer, when the proxy refuses the tunnel', { timeout: 5000 }, async () => {
    const stream = tunnelStream(route(), { host: '127.0.0.1', port: 1 });
    let text = '';
    const errors: unknown[] = [];
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    stream.on('error', (error) => errors.push(error));
    await once(stream, 'close');
    assert.deepEqual({ firstLine: text.split('\r\n')[0], errors }, { firstLine: 'HTTP/1.1 403 Forbidden', errors: [] });
  });

  it('ends the far side when ended after the tunnel is up', { timeout: 5000 }, async () => {
    const stream = tunnelStream(route(), { host: '127.0.0.1', port: echoPort });
    await once(stream, 'connect');
    stream.end();
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    assert.equal(text, '');
    stream.destroy();
  });

  it('speaks TLS inside the tunnel with the TLS options it is given', { timeout: 5000, skip: spawnSync('openssl', ['version']).status === 0 ? false : 'openssl is not installed' }, async () => {
    // A self-signed certificate made for this run: only the CA option given to tunnelStream makes it trusted.
    const dir = mkdtempSync(join(tmpdir(), 'proxy-tunnel-tls-'));
    try {
      const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=broker.test', '-addext', 'subjectAltName=DNS:broker.test'], { cwd: dir, encoding: 'utf8' });
      assert.equal(made.status, 0, made.stderr);
      const cert = readFileSync(join(dir, 'cert.pem'));
      const server = tls.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (socket) => socket.end('secure hello'));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const port = (server.address() as net.AddressInfo).port;
        const stream = tunnelStream(route(), { host: '127.0.0.1', port, tls: { ca: cert, servername: 'broker.test' } });
        let text = '';
        for await (const chunk of stream) text += chunk.toString();
        assert.equal(text, 'secure hello');
        stream.destroy();
      } finally {
        server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails with the proxy\'s error when the proxy cannot be reached', { timeout: 5000 }, async () => {
    const closed = net.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const stream = tunnelStream({ kind: 'http', url: `http://127.0.0.1:${port}` }, { host: '127.0.0.1', port: echoPort });
    stream.write('x');
    const [error] = (await once(stream, 'error')) as [NodeJS.ErrnoException];
    assert.equal(error.code, 'ECONNREFUSED');
  });
});
