/**
 * A scripted MQTT 5 broker in the test process (127.0.0.1, a free port; mqtt://, or mqtts:// when given a
 * certificate), for unit tests of the fleet link and of the fleet console's link: it keeps every packet a
 * client sends, answers CONNECT, SUBSCRIBE, PUBLISH (QoS 1) and PINGREQ as the test scripts it (CONNACK
 * properties, SUBACK reason codes, a PUBACK refused or held back), delivers messages the test writes, and
 * can drop the connection. It routes nothing: it is the other end of one client's link (a kiosk's or the
 * console's), so a test sees the exact packets (topic, payload, QoS, retain) without a real broker.
 *
 * Packets are parsed and written with mqtt-packet, the codec mqtt.js itself uses.
 */
import net, { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { generate, parser, type IConnackPacket, type IPublishPacket, type Packet } from 'mqtt-packet';

// mqtt.js opens its TCP connection with Nagle's algorithm on, so each small packet that follows another
// (a command's answer after its PUBACK) waits for this end's delayed ACK: 40 ms a command on loopback.
// The test process turns it off for the connections it opens, as this broker does for its own side.
const createConnection = net.createConnection;
net.createConnection = function (this: unknown, ...args: Parameters<typeof net.createConnection>) {
  return createConnection.apply(this, args).setNoDelay(true);
} as typeof net.createConnection;

export interface ReceivedPacket {
  /** Which connection sent it: 1 for the first, 2 after a reconnect… */
  conn: number;
  packet: Packet;
}

/** A PUBLISH the client sent, its payload read as JSON (the link only sends JSON). */
export interface SeenPublish {
  conn: number;
  topic: string;
  body: unknown;
  qos: number;
  retain: boolean;
}

export interface FakeMqttBrokerOptions {
  /** Serve mqtts:// with this key and certificate (self-signed-certificate.ts makes one). */
  tls?: { key: Buffer; cert: Buffer };
}

export class FakeMqttBroker {
  readonly received: ReceivedPacket[] = [];
  /** What the next CONNACKs say (reason code 0 unless set); 'hold' keeps them back until `releaseConnack`. */
  connack: Pick<IConnackPacket, 'sessionPresent' | 'reasonCode' | 'properties'> | 'hold' = { sessionPresent: false };
  #heldConnack: Socket | null = null;
  /** The SUBACK reason codes for a SUBSCRIBE; default: each subscription granted at the QoS it asked. */
  suback: ((subscribed: Array<{ topic: string; qos: number }>) => number[]) | null = null;
  /** Answer nothing at all while set (a broker process that hangs, its connections still open). */
  silent = false;
  /** Answer PINGREQs (unset: the PINGRESPs of a broker still sending other things never come). */
  pingresp = true;
  /** The PUBACK reason code for a QoS 1 PUBLISH; 'hold' keeps it back until `releasePuback`. */
  puback: (packet: IPublishPacket) => number | 'hold' = () => 0;
  #held: number[] = [];
  /** Each PUBLISH read once as it arrives (a screenshot answer is megabytes of JSON). */
  #published: SeenPublish[] = [];
  #server: Server;
  #socket: Socket | null = null;
  #sockets = new Set<Socket>();
  #conns = 0;
  #nextMessageId = 1;
  #scheme: 'mqtt' | 'mqtts';
  port = 0;

  private constructor(options: FakeMqttBrokerOptions) {
    const accept = (socket: Socket) => this.#accept(socket);
    this.#server = options.tls ? createTlsServer(options.tls, accept) : createServer(accept);
    // A client that refuses the certificate drops the handshake: what a test expects, not its failure.
    this.#server.on('tlsClientError', () => undefined);
    this.#scheme = options.tls ? 'mqtts' : 'mqtt';
  }

  static async start(options: FakeMqttBrokerOptions = {}): Promise<FakeMqttBroker> {
    const broker = new FakeMqttBroker(options);
    await new Promise<void>((resolve) => broker.#server.listen(0, '127.0.0.1', resolve));
    broker.port = (broker.#server.address() as AddressInfo).port;
    return broker;
  }

  get url(): string {
    return `${this.#scheme}://127.0.0.1:${this.port}`;
  }

  /** Connections accepted so far. */
  get connections(): number {
    return this.#conns;
  }

  /** Whether a client is connected now. */
  get connected(): boolean {
    return this.#socket !== null && !this.#socket.destroyed;
  }

  /** The packets of one kind, in order. */
  packets<C extends Packet['cmd']>(cmd: C): Array<Extract<Packet, { cmd: C }> & { conn: number }> {
    return this.received.filter((r) => r.packet.cmd === cmd).map((r) => ({ ...(r.packet as Extract<Packet, { cmd: C }>), conn: r.conn }));
  }

  /** The PUBLISHes the client sent on `topic` (all topics without one). */
  published(topic?: string): SeenPublish[] {
    return this.#published.filter((p) => topic === undefined || p.topic === topic);
  }

  /** Send a PUBLISH to the connected client (QoS 1 unless told; a message id is picked). */
  deliver(topic: string, payload: string | Buffer, options: { qos?: 0 | 1; retain?: boolean; properties?: IPublishPacket['properties'] } = {}): void {
    const qos = options.qos ?? 1;
    this.#write({
      cmd: 'publish',
      topic,
      payload: typeof payload === 'string' ? Buffer.from(payload) : payload,
      qos,
      retain: options.retain ?? false,
      dup: false,
      ...(qos > 0 ? { messageId: this.#nextMessageId++ } : {}),
      ...(options.properties ? { properties: options.properties } : {}),
    });
  }

  /** Answer the PUBACKs held back so far, with `reasonCode`. */
  releasePubacks(reasonCode = 0): void {
    for (const messageId of this.#held.splice(0)) this.#write({ cmd: 'puback', messageId, reasonCode });
  }

  /** Accept the connection whose CONNACK was held back. */
  releaseConnack(): void {
    this.#heldConnack?.write(generate({ cmd: 'connack', sessionPresent: false, reasonCode: 0 }, { protocolVersion: 5 }));
    this.#heldConnack = null;
  }

  /** Send the client an MQTT 5 DISCONNECT with this reason (0x8E: another connection took its session
   *  over), then close its connection, as a broker that says why does. */
  disconnectWith(reasonCode: number): void {
    const socket = this.#socket;
    if (!socket) return;
    socket.end(generate({ cmd: 'disconnect', reasonCode }, { protocolVersion: 5 }));
    this.#socket = null;
  }

  /** Cut the client's connection (as a broker restart or a network fault would). */
  drop(): void {
    this.#socket?.destroy();
    this.#socket = null;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(socket: Socket): void {
    const conn = ++this.#conns;
    socket.setNoDelay(true);
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => undefined);
    this.#socket = socket;
    const packets = parser({ protocolVersion: 5 });
    packets.on('packet', (packet: Packet) => {
      this.received.push({ conn, packet });
      if (packet.cmd === 'publish') this.#published.push({ conn, topic: packet.topic, body: JSON.parse(String(packet.payload)) as unknown, qos: packet.qos, retain: packet.retain });
      this.#answer(socket, packet);
    });
    packets.on('error', () => socket.destroy()); // not MQTT
    socket.on('data', (chunk: Buffer) => packets.parse(chunk));
  }

  #answer(socket: Socket, packet: Packet): void {
    if (this.silent) return;
    const write = (p: Packet) => void socket.write(generate(p, { protocolVersion: 5 }));
    switch (packet.cmd) {
      case 'connect':
        if (this.connack === 'hold') this.#heldConnack = socket;
        else write({ cmd: 'connack', returnCode: undefined, reasonCode: 0, ...this.connack } as IConnackPacket);
        break;
      case 'subscribe': {
        const subs = packet.subscriptions.map((s) => ({ topic: s.topic, qos: s.qos }));
        write({ cmd: 'suback', messageId: packet.messageId!, granted: this.suback ? this.suback(subs) : subs.map((s) => s.qos) });
        break;
      }
      case 'publish': {
        if (packet.qos !== 1) break;
        const code = this.puback(packet);
        if (code === 'hold') this.#held.push(packet.messageId!);
        else write({ cmd: 'puback', messageId: packet.messageId!, reasonCode: code });
        break;
      }
      case 'pingreq':
        if (this.pingresp) write({ cmd: 'pingresp' });
        break;
      case 'disconnect':
        socket.end();
        break;
      default:
        break;
    }
  }

  #write(packet: Packet): void {
    if (!this.#socket) throw new Error('FakeMqttBroker: no client is connected');
    this.#socket.write(generate(packet, { protocolVersion: 5 }));
  }
}
