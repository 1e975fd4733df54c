/**
 * The venue's proxy: main's real entry (electron/main/index.ts, electron stubbed) on a network where the
 * avatar service and the fleet broker are reachable ONLY through an HTTP proxy. Chromium's answer for
 * every URL is `PROXY 127.0.0.1:<port>` (the stub's `session.resolveProxy`). The proxy is a real one (the
 * `proxy` package) that resolves the venue's names (avatar.test, broker.test) to local TLS servers in front
 * of the emulator and a real mosquitto: a connection that skipped the proxy could not even resolve the name.
 * Every byte the kiosk sends the proxy is kept, to show the key and the broker password never reach it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { connectAsync, type MqttClient } from 'mqtt';
import { createProxy } from 'proxy';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { mosquittoMissing, startBroker, type Broker } from '../helpers/mosquitto.ts';
import { runHarness, type HarnessRun } from '../helpers/run-main-harness.ts';

const skip = mosquittoMissing() ?? (spawnSync('openssl', ['version']).status === 0 ? null : 'openssl is not installed (Debian: apt-get install openssl)');

/** A CA and a server certificate for the venue's names, made with openssl for this run. */
function makeCertificates(dir: string): { ca: string; key: Buffer; cert: Buffer } {
  const run = (args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Venue test CA']);
  run(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=avatar.test']);
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=DNS:avatar.test,DNS:broker.test\n');
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.cnf']);
  return { ca: join(dir, 'ca.pem'), key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.pem')) };
}

/** TLS in front of a local plain port (what the venue's real hosts would terminate). */
function tlsFront(certs: { key: Buffer; cert: Buffer }, port: number): Promise<tls.Server> {
  const server = tls.createServer({ key: certs.key, cert: certs.cert }, (socket) => {
    const upstream = net.connect(port, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

describe('main behind the venue proxy', { skip: skip ?? false }, () => {
  let dir: string;
  let emulator: EmulatorHandle;
  let broker: Broker;
  let serviceFront: tls.Server;
  let brokerFront: tls.Server;
  let proxy: http.Server;
  let watcher: MqttClient;
  const connectTargets: string[] = [];
  const plainRequests: string[] = [];
  const bytesToProxy: Buffer[] = [];
  const statuses: { online: boolean; reason?: string; sandbox?: boolean }[] = [];
  let run: HarnessRun;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ak-proxy-'));
    const certs = makeCertificates(dir);
    emulator = await startEmulator({ host: '127.0.0.1', port: 0, knobs: { endingMs: 20 } });
    broker = await startBroker({ operator: 'op-secret', 'kiosk-p': 'kiosk-p-broker-secret' });
    await broker.start();
    serviceFront = await tlsFront(certs, new URL(emulator.baseUrl).port ? Number(new URL(emulator.baseUrl).port) : 80);
    brokerFront = await tlsFront(certs, broker.port);
    // The venue's proxy knows the venue's names; anything else it cannot reach.
    const names: Record<string, string> = { 'avatar.test:443': `127.0.0.1:${portOf(serviceFront)}`, 'broker.test:8883': `127.0.0.1:${portOf(brokerFront)}` };
    proxy = createProxy(http.createServer());
    proxy.on('connection', (socket: net.Socket) => socket.on('data', (chunk: Buffer) => bytesToProxy.push(chunk)));
    proxy.prependListener('connect', (req: http.IncomingMessage) => {
      connectTargets.push(req.url ?? '');
      req.url = names[req.url ?? ''] ?? '127.0.0.1:1';
    });
    proxy.prependListener('request', (req: http.IncomingMessage) => plainRequests.push(`${req.method} ${req.url}`));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));

    watcher = await connectAsync(broker.url, { username: 'operator', password: 'op-secret', reconnectPeriod: 0 });
    watcher.on('message', (_topic, payload) => statuses.push(JSON.parse(payload.toString())));
    await watcher.subscribeAsync('ak/kiosk-p/status', { qos: 1 });

    run = await runHarness('proxy', {
      HARNESS_CONFIG: JSON.stringify({
        callMode: 'audio',
        service: { baseUrl: 'https://avatar.test' },
        window: { mode: 'windowed', width: 800, height: 600 },
        mqtt: { url: 'mqtts://broker.test:8883', kioskId: 'kiosk-p', username: 'kiosk-p', password: 'kiosk-p-broker-secret', caFile: certs.ca, topicPrefix: 'ak' },
      }),
      HARNESS_API_KEY: emulator.apiKey,
      STUB_PAC: `PROXY 127.0.0.1:${portOf(proxy)}; DIRECT`,
      // The service's certificate is the venue CA's (the broker's CA is its own setting, mqtt.caFile).
      NODE_EXTRA_CA_CERTS: certs.ca,
    });
  });

  after(async () => {
    await watcher?.endAsync();
    await new Promise((resolve) => proxy?.close(resolve));
    proxy?.closeAllConnections?.();
    serviceFront?.close();
    brokerFront?.close();
    await broker?.dispose();
    await emulator?.close();
  });

  it('asks Chromium for the proxy of the service and of the broker', () => {
    assert.ok(run.facts.proxyQueries.includes('https://avatar.test/'), JSON.stringify(run.facts.proxyQueries));
    assert.ok(run.facts.proxyQueries.includes('https://broker.test:8883/'), JSON.stringify(run.facts.proxyQueries));
  });

  it('makes the call through the proxy: create, control socket, hangup (type 5) and query', () => {
    assert.equal(run.facts.start.ok, true, JSON.stringify(run.facts.start));
    assert.ok(run.facts.phases.includes('live'), JSON.stringify(run.facts.phases));
    assert.equal(run.facts.phases.at(-1), 'ended');
    const liveId = run.facts.start.value.liveId as string;
    const session = emulator.getSession(liveId) as { status: string; hangupReceived?: boolean } | undefined;
    assert.ok(session, 'the emulator knows the session');
    assert.notEqual(session.status, 'live', 'the session was ended on the service');
    // Create + query (REST) and the socket share one keep-alive tunnel or open more; each is a CONNECT.
    assert.ok(connectTargets.filter((t) => t === 'avatar.test:443').length >= 1, JSON.stringify(connectTargets));
  });

  it('links to the fleet broker through the proxy (mqtts inside the tunnel), and says "stopped" when it quits', () => {
    assert.ok(connectTargets.includes('broker.test:8883'), JSON.stringify(connectTargets));
    assert.ok(statuses.some((s) => s.online === true), JSON.stringify(statuses));
    assert.equal(statuses.find((s) => s.online === true)?.sandbox, true, 'the sandbox is on');
    // "stopped" from the kiosk itself (the broker's last will would say "connection lost").
    assert.deepEqual(statuses.filter((s) => s.online === false).map((s) => s.reason), ['stopped']);
  });

  it('sends the proxy nothing but CONNECT lines and TLS: not the API key, not the broker password', () => {
    assert.deepEqual(plainRequests, []);
    assert.deepEqual(new Set(connectTargets), new Set(['avatar.test:443', 'broker.test:8883']));
    const seen = Buffer.concat(bytesToProxy);
    assert.ok(seen.length > 1000, 'the tunnels carried the traffic');
    assert.equal(seen.includes(emulator.apiKey), false, 'the API key reached the proxy');
    assert.equal(seen.includes('kiosk-p-broker-secret'), false, 'the broker password reached the proxy');
    assert.equal(seen.includes('Authorization'), false);
  });
});

describe('the MQTT link over WebSockets behind the venue proxy', { skip: mosquittoMissing() ?? false }, () => {
  it('connects through the proxy with the agent (ws:// inside a CONNECT tunnel) and publishes', async () => {
    const broker = await startBroker({ operator: 'op-secret', 'kiosk-w': 'kiosk-w-secret' });
    await broker.start();
    // A WebSocket front for the broker (this mosquitto build has no websockets listener): each socket's
    // binary frames piped to the broker's TCP port.
    const { WebSocketServer, createWebSocketStream } = await import('ws');
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: () => 'mqtt' });
    wss.on('connection', (socket) => {
      const stream = createWebSocketStream(socket);
      const upstream = net.connect(broker.port, '127.0.0.1');
      stream.pipe(upstream).pipe(stream);
      stream.on('error', () => upstream.destroy());
      upstream.on('error', () => stream.destroy());
    });
    await new Promise((resolve) => wss.once('listening', resolve));
    const targets: string[] = [];
    const proxy = createProxy(http.createServer());
    proxy.prependListener('connect', (req: http.IncomingMessage) => {
      targets.push(req.url ?? '');
      req.url = req.url === 'broker.test:9001' ? `127.0.0.1:${(wss.address() as net.AddressInfo).port}` : '127.0.0.1:1';
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { connectVia } = await import('../../electron/fleet/mqtt-link.ts');
    const client = connectVia('ws://broker.test:9001/mqtt', { username: 'kiosk-w', password: 'kiosk-w-secret', protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 10_000 }, { kind: 'http', url: `http://127.0.0.1:${portOf(proxy)}` });
    try {
      await new Promise<void>((resolve, reject) => {
        client.once('connect', () => resolve());
        client.once('error', reject);
      });
      await client.publishAsync('ak/kiosk-w/status', '{"online":true}', { qos: 1 });
      assert.deepEqual(targets, ['broker.test:9001']);
    } finally {
      await client.endAsync();
      await new Promise((resolve) => proxy.close(resolve));
      proxy.closeAllConnections?.();
      await new Promise((resolve) => wss.close(resolve));
      await broker.dispose();
    }
  });
});
