/**
 * The fleet console assembled (startFleetConsole) on a scripted MQTT 5 broker: the options reach the
 * link and the server they are meant for, a token is made (and kept out of the logs) when none is
 * given, a server that cannot start takes the link down with it, and close() stops both.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createServer, get } from 'node:http';
import { redact } from '../../../../electron/core/log.ts';
import { accepts } from '../../../../electron/fleet/console/demo-broker.ts';
import { newToken, startFleetConsole, type FleetConsole, type FleetConsoleOptions } from '../../../../electron/fleet/console/index.ts';
import { FakeMqttBroker } from '../../../helpers/fake-mqtt-broker.ts';
import { httpRequest } from '../../../helpers/http-request.ts';
import { recordingLogger } from '../../../helpers/recording-logger.ts';
import { loopbackCertificate } from '../../../helpers/self-signed-certificate.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';
import { realDelay, until } from '../../../helpers/until.ts';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const newDir = tempDirsRemovedAfterEach('ak-console-assembly-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function assembled(options: Partial<FleetConsoleOptions> = {}): Promise<{ broker: FakeMqttBroker; fleet: FleetConsole }> {
  const broker = await FakeMqttBroker.start();
  cleanups.push(() => broker.close());
  const fleet = await startFleetConsole({ brokerUrl: broker.url, topicPrefix: 'ak', clientId: 'console-asm', pageDir: newDir(), reconnectMs: 50, ...options });
  cleanups.push(() => fleet.close());
  await fleet.link.ready(2_000);
  return { broker, fleet };
}

describe('startFleetConsole', () => {
  it('passes the login, the clock, the command expiry and the logger on; the page shows the broker and the link state', async () => {
    const logger = recordingLogger();
    const { broker, fleet } = await assembled({ username: 'operator', password: 'op-pw-assembly', token: 'asm-token-1', now: () => T0, commandTtlS: 30, logger, allowedHosts: ['console.example.com'] });
    const connect = broker.packets('connect')[0]!;
    assert.deepEqual({ username: connect.username, password: connect.password?.toString(), clientId: connect.clientId }, { username: 'operator', password: 'op-pw-assembly', clientId: 'console-asm' });
    assert.equal(fleet.token, 'asm-token-1');
    assert.deepEqual(logger.lines.map((l) => l.message).slice(0, 3).sort(), ['Fleet console: connected', 'Fleet console: connecting to the broker', 'Fleet console: serving']);
    const sent = await fleet.link.send({ fleet: true }, { cmd: 'ping' });
    assert.deepEqual(sent.ok && sent.expiresAt, '2026-11-24T10:00:30.000Z');
    const headers = { host: 'console.example.com', authorization: 'Bearer asm-token-1' };
    const listed = await httpRequest(fleet.server.origin, '/api/kiosks', { headers });
    assert.deepEqual(JSON.parse(listed.body), { consoleStartedAt: '2026-11-24T10:00:00.000Z', connected: true, total: 0, offset: 0, kiosks: [] });
    assert.match((await httpRequest(fleet.server.origin, '/metrics', { headers })).body, /^avatar_fleet_broker_connected 1$/m);
    const stream = await new Promise<string>((resolve, reject) => {
      const url = new URL('/api/stream', fleet.server.origin);
      get({ host: url.hostname, port: url.port, path: url.pathname, headers }, (res) => res.once('data', (d: Buffer) => (resolve(d.toString()), res.destroy()))).on('error', reject);
    });
    assert.match(stream, new RegExp(`"broker":"${broker.url}","connected":true`));
    assert.equal(redact('token asm-token-1 password op-pw-assembly'), 'token *** password ***');
  });

  it('passes the broker CA on: it connects to a broker on mqtts:// whose certificate that CA signed', async () => {
    const tls = loopbackCertificate();
    const broker = await FakeMqttBroker.start({ tls });
    cleanups.push(() => broker.close());
    const fleet = await startFleetConsole({ brokerUrl: broker.url, topicPrefix: 'ak', clientId: 'console-tls', ca: tls.cert, pageDir: newDir(), reconnectMs: 50 });
    cleanups.push(() => fleet.close());
    await fleet.link.ready(2_000);
    assert.equal(broker.packets('connect')[0]!.clientId, 'console-tls');
  });

  it('binds where and on the port it is told', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '::1', resolve));
    const port = (blocker.address() as { port: number }).port;
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    const { fleet } = await assembled({ host: '::1', port });
    assert.equal(fleet.server.origin, `http://[::1]:${port}`);
  });

  it('treats an empty user name and host as none: no login, 127.0.0.1', async () => {
    const logger = recordingLogger();
    const { broker, fleet } = await assembled({ username: '', password: '', host: '', logger });
    const connect = broker.packets('connect')[0]!;
    assert.deepEqual({ username: connect.username, password: connect.password }, { username: undefined, password: undefined });
    assert.deepEqual(logger.lines[0], { level: 'info', message: 'Fleet console: connecting to the broker', data: { url: broker.url, clientId: 'console-asm', username: null } });
    assert.match(fleet.server.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('makes a new random token when none is given, and keeps it out of the logs', async () => {
    const { fleet } = await assembled();
    const token = fleet.token!;
    assert.match(token, /^[A-Za-z0-9_-]{32}$/);
    assert.notEqual(newToken(), newToken());
    assert.equal(redact(`the token ${token}`), 'the token ***');
    assert.ok(Math.abs(Date.parse(JSON.parse((await httpRequest(fleet.server.origin, '/api/kiosks', { headers: { host: new URL(fleet.server.origin).host, authorization: `Bearer ${token}` } })).body).consoleStartedAt as string) - Date.now()) < 60_000, 'the real clock by default');
  });

  it('takes the link down again when the server cannot start, and says why', async () => {
    const { fleet: first } = await assembled();
    const broker = await FakeMqttBroker.start();
    cleanups.push(() => broker.close());
    const port = Number(new URL(first.server.origin).port);
    await assert.rejects(startFleetConsole({ brokerUrl: broker.url, topicPrefix: 'ak', clientId: 'console-2', pageDir: newDir(), port, reconnectMs: 50 }), { code: 'EADDRINUSE' });
    // A link closed before its first connection still finishes connecting (mqtt.js), but it never
    // comes back once that connection goes: a link left running would reconnect within 50 ms.
    await until(() => broker.packets('connect').length === 1, { message: 'the first connection' });
    broker.drop();
    await realDelay(250);
    assert.equal(broker.packets('connect').length, 1);
  });

  it('reconnects after the period it is given', async () => {
    const { broker } = await assembled({ reconnectMs: 20 });
    broker.drop();
    // The link's default period is 3 s: back well before that.
    await until(() => broker.packets('connect').length === 2, { realTimeoutMs: 2_000, message: 'back within two seconds' });
  });

  it('close() stops the server and the link', async () => {
    const { broker, fleet } = await assembled();
    await fleet.close();
    await until(() => !broker.connected, { message: 'the link disconnected' });
    assert.equal(await accepts(Number(new URL(fleet.server.origin).port)), false);
    assert.equal(fleet.link.connected, false);
  });
});
