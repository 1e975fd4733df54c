/**
 * A scripted MQTT 5 broker in-process on 127.0.0.1 (mqtt-packet, the parser mqtt.js itself uses): it
 * records each CONNECT, SUBSCRIBE and PUBLISH a client sends, answers with the reason codes a test
 * chooses, delivers what a test publishes and can drop its clients. Faster than Mosquitto, and it shows
 * the exact packets, for tests about one client's side of the protocol.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { generate, parser, type IConnectPacket, type IPublishPacket, type ISubscribePacket, type Packet } from 'mqtt-packet';

export interface FakeBrokerScript {
  /** The CONNACK reason code (default 0, accepted; 135: not authorized). */
  connackCode?: number;
  /** The SUBACK reason code of each subscription (default: QoS 1 granted). */
  subscribeCodes?: (topics: string[]) => number[];
  /** The PUBACK reason code of a QoS 1 publish (default 0, success). */
  pubackCode?: (topic: string) => number;
}

export interface FakeBroker {
  readonly url: string;
  readonly port: number;
  readonly connects: IConnectPacket[];
  readonly subscribes: ISubscribePacket[];
  readonly published: IPublishPacket[];
  /** Clients connected now (their CONNECT answered). */
  readonly clients: number;
  script: FakeBrokerScript;
  /** Send a message to every connected client (QoS 0). */
  deliver(topic: string, payload: string, options?: { retain?: boolean }): void;
  /** Cut every client's connection. */
  dropClients(): void;
  close(): Promise<void>;
}

const V5 = { protocolVersion: 5 };

/** A self-signed certificate for 127.0.0.1 (openssl), for a broker on mqtts://. */
export function loopbackCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'ak-fake-broker-tls-'));
  try {
    const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `tls`: serve mqtts:// with this key and certificate. */
export async function startFakeBroker(script: FakeBrokerScript = {}, options: { tls?: { key: Buffer; cert: Buffer } } = {}): Promise<FakeBroker> {
  const sockets = new Set<Socket>();
  const connected = new Set<Socket>();
  const connects: IConnectPacket[] = [];
  const subscribes: ISubscribePacket[] = [];
  const published: IPublishPacket[] = [];
  const serve = (socket: Socket) => {
    sockets.add(socket);
    const packets = parser(V5);
    const answer = (packet: Packet) => void (socket.writable && socket.write(generate(packet, V5)));
    packets.on('packet', (packet: Packet) => {
      if (packet.cmd === 'connect') {
        connects.push(packet);
        const reasonCode = broker.script.connackCode ?? 0;
        if (reasonCode === 0) connected.add(socket);
        answer({ cmd: 'connack', sessionPresent: false, reasonCode });
      } else if (packet.cmd === 'subscribe') {
        subscribes.push(packet);
        const topics = packet.subscriptions.map((s) => s.topic);
        answer({ cmd: 'suback', messageId: packet.messageId!, granted: broker.script.subscribeCodes?.(topics) ?? topics.map(() => 1) });
      } else if (packet.cmd === 'publish') {
        published.push(packet);
        if (packet.qos === 1) answer({ cmd: 'puback', messageId: packet.messageId!, reasonCode: broker.script.pubackCode?.(packet.topic) ?? 0 });
      } else if (packet.cmd === 'pingreq') {
        answer({ cmd: 'pingresp' });
      } else if (packet.cmd === 'disconnect') {
        socket.end();
      }
    });
    socket.on('data', (d: Buffer) => packets.parse(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      connected.delete(socket);
    });
  };
  const server = options.tls ? createTlsServer(options.tls, serve) : createServer(serve);
  // A client that refuses the certificate drops the handshake: not the test's failure.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const broker: FakeBroker = {
    url: `${options.tls ? 'mqtts' : 'mqtt'}://127.0.0.1:${port}`,
    port,
    connects,
    subscribes,
    published,
    get clients() {
      return connected.size;
    },
    script,
    deliver(topic, payload, options = {}) {
      const packet = generate({ cmd: 'publish', topic, payload, qos: 0, retain: options.retain ?? false, dup: false }, V5);
      for (const s of connected) s.write(packet);
    },
    dropClients() {
      for (const s of sockets) s.destroy();
    },
    async close() {
      broker.dropClients();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return broker;
}
