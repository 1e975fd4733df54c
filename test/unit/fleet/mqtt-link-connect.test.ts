/**
 * How the fleet link reaches its broker: the client options it builds (certificates from files, the
 * persistent session, the last will), the kiosk id it takes from the host name, and `connectVia` through
 * a venue's CONNECT proxy for each URL scheme (mqtt and mqtts in a tunnel, TLS to the broker inside it;
 * ws and wss with the proxy's agent), against a proxy and a scripted broker in this process.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { after, afterEach, before, describe, it } from 'node:test';
import type { IClientOptions, MqttClient } from 'mqtt';
import { AvatarError } from '../../../electron/core/errors.ts';
import { clientOptions, connectVia, defaultKioskId, startMqttLink } from '../../../electron/fleet/mqtt-link.ts';
import { mqttSchema } from '../../../electron/kiosk/fleet-config.ts';
import { redirectingProxy, type RedirectingProxy } from '../../helpers/connect-proxy.ts';
import { FakeMqttBroker } from '../../helpers/fake-mqtt-broker.ts';
import { recordingControl, statusFields } from '../../helpers/mqtt-link-rig.ts';
import { selfSignedCertificate } from '../../helpers/self-signed-certificate.ts';
import { StrictClock } from '../../helpers/fake-clock.ts';
import { until } from '../../helpers/until.ts';

const settings = (more: Record<string, unknown> = {}) => mqttSchema.parse({ url: 'mqtts://b.example', ...more });
const connected = (client: MqttClient) => new Promise<void>((resolve) => client.once('connect', () => resolve()));
const failing = (code?: string) => () => {
  throw Object.assign(new Error('unreadable'), code ? { code } : {});
};

describe('mqtt link: client options and kiosk id', () => {
  it('a certificate, key or CA file that cannot be read is an invalid_config naming the file and the setting', () => {
    const s = settings({ certFile: '/c.pem', keyFile: '/k.pem', caFile: '/a.pem' });
    for (const [what, path] of [['cert', '/c.pem'], ['key', '/k.pem'], ['ca', '/a.pem']] as const) {
      const readFile = (p: string) => (p === path ? failing('EACCES')() : Buffer.from(p));
      assert.throws(
        () => clientOptions(s, 'k', 't', readFile, 5000),
        (error: unknown) => {
          assert.ok(error instanceof AvatarError);
          assert.deepEqual([error.code, error.message, error.details], ['invalid_config', `The MQTT ${what} file ${path} could not be read (EACCES).`, { field: `mqtt.${what}File` }]);
          return true;
        },
      );
    }
    assert.throws(() => clientOptions(settings({ caFile: '/ca.pem' }), 'k', 't', failing(), 5000), { message: 'The MQTT ca file /ca.pem could not be read (error).' });
  });

  it('reads the CA, and takes the TLS, session and reconnect settings a kiosk needs', () => {
    const opts = clientOptions(settings({ caFile: '/ca.pem', clientId: 'lobby-1-client' }), 'lobby-1', 't', (p) => Buffer.from(`file ${p}`), 750);
    assert.equal(String(opts.ca), 'file /ca.pem');
    assert.deepEqual([opts.cert, opts.key, opts.username, opts.password], [undefined, undefined, undefined, undefined]);
    assert.deepEqual(
      { clientId: opts.clientId, protocolVersion: opts.protocolVersion, keepalive: opts.keepalive, connectTimeout: opts.connectTimeout, reconnectPeriod: opts.reconnectPeriod, rejectUnauthorized: opts.rejectUnauthorized, queueQoSZero: opts.queueQoSZero },
      { clientId: 'lobby-1-client', protocolVersion: 5, keepalive: 30, connectTimeout: 15_000, reconnectPeriod: 750, rejectUnauthorized: true, queueQoSZero: false },
    );
  });

  it('the link reads its certificate files itself when not told how, and refuses to start without them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ak-link-cert-'));
    try {
      assert.throws(
        () => startMqttLink({ settings: mqttSchema.parse({ url: 'mqtt://127.0.0.1:1', certFile: join(dir, 'none.pem'), keyFile: join(dir, 'none.pem') }), kioskId: 'k', dataDir: dir, status: () => statusFields(), control: recordingControl(), clock: new StrictClock() }),
        { name: 'AvatarError', message: `The MQTT cert file ${join(dir, 'none.pem')} could not be read (ENOENT).` },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes a topic level of the host name: at most 64 characters, no leading or trailing separators, "kiosk" when nothing is left', () => {
    assert.equal(defaultKioskId('a'.repeat(70)), 'a'.repeat(64));
    assert.equal(defaultKioskId('Lobby--'), 'Lobby');
    assert.equal(defaultKioskId('-_-Lobby'), 'Lobby');
    assert.equal(defaultKioskId('___'), 'kiosk');
    assert.equal(defaultKioskId('###'), 'kiosk');
  });
});

describe('mqtt link: connectVia a CONNECT proxy', () => {
  let broker: FakeMqttBroker;
  let proxy: RedirectingProxy;
  const clients: MqttClient[] = [];
  const OPTS: IClientOptions = { clientId: 'lobby-1', protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 5000 };
  const via = (url: string, opts: IClientOptions = OPTS) => {
    const client = connectVia(url, opts, { kind: 'http', url: proxy.url });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };

  before(async () => {
    broker = await FakeMqttBroker.start();
    proxy = await redirectingProxy();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.endAsync(true);
    proxy.targets.length = 0;
    proxy.firstBytes.length = 0;
  });
  after(async () => {
    await proxy.close();
    await broker.close();
  });

  it('connects directly without a proxy', async () => {
    const client = connectVia(broker.url, OPTS, { kind: 'direct' });
    clients.push(client);
    await connected(client);
    assert.equal(broker.packets('connect').at(-1)!.clientId, 'lobby-1');
  });

  it('mqtt: an MQTT 5 session inside the tunnel to the host and port of the URL (1883 when none)', async () => {
    proxy.targetPort = broker.port;
    const before = broker.connections;
    const client = via('mqtt://broker.test:1884');
    await connected(client);
    const connect = broker.packets('connect').at(-1)!;
    assert.deepEqual([connect.clientId, connect.protocolVersion, broker.connections], ['lobby-1', 5, before + 1]);
    assert.deepEqual(proxy.targets, ['broker.test:1884']);
    await client.publishAsync('ak/lobby-1/status', '{"online":true}', { qos: 1 });
    assert.deepEqual(broker.published('ak/lobby-1/status').at(-1)!.body, { online: true });
    await connected(via('mqtt://broker.test'));
    await connected(via('mqtt://[::1]:1885'));
    assert.deepEqual(proxy.targets, ['broker.test:1884', 'broker.test:1883', '[::1]:1885']);
  });

  it('ws and wss: the WebSocket goes through the proxy with its agent', async () => {
    proxy.targetPort = null;
    via('ws://broker.test:9001/mqtt');
    await until(() => proxy.firstBytes.length === 1);
    assert.match(String(proxy.firstBytes[0]), /^GET \/mqtt HTTP\/1\.1\r\n/);
    via('wss://broker.test/mqtt');
    await until(() => proxy.firstBytes.length === 2);
    assert.equal(proxy.firstBytes[1]![0], 0x16, 'a TLS handshake inside the tunnel');
    assert.deepEqual(proxy.targets, ['broker.test:9001', 'broker.test:443']);
  });

  it('refuses a scheme it cannot carry through a proxy', () => {
    assert.throws(
      () => connectVia('tcp://broker.test:1883', OPTS, { kind: 'http', url: proxy.url }),
      (error: unknown) => {
        assert.ok(error instanceof AvatarError);
        assert.deepEqual([error.code, error.message, error.details], ['invalid_config', 'The MQTT URL scheme tcp: cannot go through a proxy.', { field: 'mqtt.url' }]);
        return true;
      },
    );
  });

  describe('mqtts: TLS to the broker inside the tunnel', { skip: spawnSync('openssl', ['version']).status === 0 ? false : 'openssl is not installed' }, () => {
    let key: Buffer;
    let cert: Buffer;
    let front: tls.Server;
    /** What the TLS front saw of each client: the name it asked for, the certificate it showed. */
    const seen: Array<{ servername: unknown; peer: unknown }> = [];

    before(async () => {
      // Trusted only when given as the CA; the kiosk shows it as its own too.
      ({ key, cert } = selfSignedCertificate('broker.test'));
      front = tls.createServer({ key, cert, requestCert: true, rejectUnauthorized: false }, (socket) => {
        seen.push({ servername: socket.servername, peer: socket.getPeerCertificate().subject?.CN });
        const upstream = net.connect(broker.port, '127.0.0.1');
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      });
      front.listen(0, '127.0.0.1');
      await once(front, 'listening');
    });
    after(async () => {
      await new Promise((resolve) => front.close(resolve));
    });

    it('checks the broker against the CA it is given, asks for the URL host by name, shows the client certificate; 8883 when no port', async () => {
      proxy.targetPort = (front.address() as AddressInfo).port;
      const client = via('mqtts://broker.test', { ...OPTS, ca: cert, cert, key });
      await connected(client);
      assert.deepEqual(proxy.targets, ['broker.test:8883']);
      assert.deepEqual(seen.at(-1), { servername: 'broker.test', peer: 'broker.test' });
      assert.equal(broker.packets('connect').at(-1)!.clientId, 'lobby-1');
    });

    it("refuses a broker certificate it cannot check, unless told not to check", async () => {
      proxy.targetPort = (front.address() as AddressInfo).port;
      const refused = via('mqtts://broker.test:8884');
      const error = await new Promise<Error>((resolve) => refused.once('error', resolve));
      assert.equal((error as Error & { code?: string }).code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      const unchecked = via('mqtts://broker.test:8884', { ...OPTS, rejectUnauthorized: false });
      await connected(unchecked);
      assert.deepEqual(seen.at(-1), { servername: 'broker.test', peer: undefined });
    });
  });
});
