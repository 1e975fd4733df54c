/**
 * The fleet console's broker link against a scripted MQTT 5 broker (test/helpers/fake-mqtt-broker.ts):
 * the persistent session it asks for, what it subscribes to on every connect, how it files what
 * arrives, and each command it sends or refuses (exact topics, payloads, expiry, answers and log lines).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { redact } from '../../../../electron/core/log.ts';
import { DEFAULT_COMMAND_TTL_S, KEEPALIVE_S, PUBLISH_CONFIRM_MAX_MS, PUBLISH_CONFIRM_MS, SESSION_EXPIRY_S, startConsoleLink, type ConsoleLink, type ConsoleLinkOptions } from '../../../../electron/fleet/console/link.ts';
import { FleetState } from '../../../../electron/fleet/console/state.ts';
import type { CommandTarget } from '../../../../electron/fleet/console/view.ts';
import { pinRefusal } from '../../../../electron/fleet/feed-binding.ts';
import { freePort } from '../../../../electron/fleet/console/demo-broker.ts';
import { FakeClock } from '../../../helpers/fake-clock.ts';
import { FakeMqttBroker } from '../../../helpers/fake-mqtt-broker.ts';
import { recordingLogger } from '../../../helpers/recording-logger.ts';
import { loopbackCertificate } from '../../../helpers/self-signed-certificate.ts';
import { advanceInSteps, realDelay, until } from '../../../helpers/until.ts';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const ID = new RegExp(`^c-${T0.toString(36)}-[0-9a-f]{8}$`);
const status = (kioskId: string, group: string) => JSON.stringify({ online: true, kioskId, group, version: '1.2.3', mode: 'direct', phase: 'idle', cast: ['ava'], open: true, today: { sessions: 0, credits: 0 }, queued: 0 });

/** The link's subscriptions to the kiosks' topics (its own `$SYS` one, link-health.ts, is a packet of its own). */
const kioskSubscribes = (broker: FakeMqttBroker) => broker.packets('subscribe').filter((p) => !p.subscriptions[0]!.topic.startsWith('$SYS/'));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface LinkRig {
  broker: FakeMqttBroker;
  link: ConsoleLink;
  state: FleetState;
  logger: ReturnType<typeof recordingLogger>;
  /** Connection changes the link reported. */
  changes: boolean[];
}

async function linked(options: Partial<ConsoleLinkOptions> = {}, wait = true): Promise<LinkRig> {
  const broker = await FakeMqttBroker.start();
  cleanups.push(() => broker.close());
  const state = new FleetState({ now: () => T0 });
  const logger = recordingLogger();
  const link = startConsoleLink({ url: broker.url, topicPrefix: 'ak', clientId: 'console-1', state, now: () => T0, logger, reconnectMs: 50, ...options });
  cleanups.push(() => link.close());
  const changes: boolean[] = [];
  link.onConnectionChange((c) => changes.push(c));
  if (wait) {
    await link.ready(2_000);
    await until(() => kioskSubscribes(broker).length === 1, { message: 'subscribed' });
    // What arrives before the SUBACK is handled was queued for the console while it was away (state.ts).
    await until(() => state.isLive, { message: 'the SUBACK handled' });
  }
  return { broker, link, state, logger, changes };
}

describe('console link: the session', () => {
  it('asks for a persistent MQTT 5 session under its fixed client id, with its login when it has one', async () => {
    const { broker, logger } = await linked({ clientId: 'console-a', username: 'operator', password: 'op-secret-for-link-test' });
    const c = broker.packets('connect')[0]!;
    assert.deepEqual(
      { clientId: c.clientId, username: c.username, password: c.password?.toString(), protocolVersion: c.protocolVersion, clean: c.clean, keepalive: c.keepalive, properties: c.properties },
      { clientId: 'console-a', username: 'operator', password: 'op-secret-for-link-test', protocolVersion: 5, clean: false, keepalive: KEEPALIVE_S, properties: { sessionExpiryInterval: SESSION_EXPIRY_S, maximumPacketSize: 16 * 1024 * 1024 } },
    );
    assert.equal(SESSION_EXPIRY_S, 86_400);
    assert.deepEqual(logger.lines.slice(0, 2), [
      { level: 'info', message: 'Fleet console: connecting to the broker', data: { url: broker.url, clientId: 'console-a', username: 'operator' } },
      { level: 'info', message: 'Fleet console: connected', data: undefined },
    ]);
    assert.equal(redact('password op-secret-for-link-test'), 'password ***', 'the password is a secret for every log');
  });

  it('connects without a login when it has none', async () => {
    const { broker, logger } = await linked();
    assert.deepEqual({ username: broker.packets('connect')[0]!.username, password: broker.packets('connect')[0]!.password }, { username: undefined, password: undefined });
    assert.deepEqual(logger.lines[0]!.data, { url: broker.url, clientId: 'console-1', username: null });
  });

  it('subscribes to every kiosk\'s status, events and answers at QoS 1, again after each reconnect, and tells its listeners', async () => {
    const { broker, link, changes } = await linked({ topicPrefix: 'site-1' });
    const topics = (from: number) => kioskSubscribes(broker).slice(from).flatMap((p) => p.subscriptions.map((s) => [s.topic, s.qos]));
    assert.deepEqual(topics(0), [['site-1/+/status', 1], ['site-1/+/events', 1], ['site-1/+/cmd/result', 1]]);
    assert.equal(link.connected, true);
    const gone: boolean[] = [];
    const stop = link.onConnectionChange((c) => gone.push(c));
    broker.drop();
    await until(() => topics(1).length === 3, { message: 'subscribed again after the reconnect' });
    assert.deepEqual(topics(1), topics(0).slice(0, 3));
    assert.deepEqual(changes, [true, false, true]);
    assert.deepEqual(gone, [false, true]);
    assert.equal(stop(), true);
    broker.drop();
    await until(() => changes.length === 5);
    assert.deepEqual(gone, [false, true], 'a listener that stopped hears nothing more');
  });

  /** A link on a broker that answers its SUBACK with `codes`; the error lines it logged once answered. */
  const subscribedWith = async (codes: (topics: string[]) => number[]) => {
    const broker = await FakeMqttBroker.start();
    broker.suback = (subscribed) => codes(subscribed.map((s) => s.topic));
    cleanups.push(() => broker.close());
    const logger = recordingLogger();
    const state = new FleetState({ now: () => T0 });
    const link = startConsoleLink({ url: broker.url, topicPrefix: 'ak', clientId: 'console-1', state, now: () => T0, logger, reconnectMs: 50 });
    cleanups.push(() => link.close());
    await link.ready(2_000);
    await until(() => kioskSubscribes(broker).length === 1, { message: 'subscribed' });
    // Sent after the SUBACK on the same connection: once it is filed (or the SUBACK's error logged,
    // when mqtt.js drops the connection over it), the SUBACK was handled.
    broker.deliver('ak/k-1/status', status('k-1', 'lobby'));
    await until(() => state.row('k-1') !== null || logger.lines.some((l) => l.level === 'error'), { message: 'the SUBACK handled' });
    return logger.lines.filter((l) => l.level !== 'info');
  };
  const REFUSED = 'Fleet console: the broker refused a subscription (check the operator ACL)';

  it('logs a subscription the broker refuses (any reason code from 0x80), naming the refused topics', async () => {
    const errors = await subscribedWith((topics) => topics.map((t) => (t.endsWith('/events') ? 0x87 : t.endsWith('/result') ? 0x80 : 1)));
    assert.deepEqual(errors, [{ level: 'error', message: REFUSED, data: { topics: ['ak/+/events', 'ak/+/cmd/result'] } }]);
  });

  it('logs a SUBACK that does not answer every topic, though it refuses none', async () => {
    const errors = await subscribedWith(() => [1, 1]);
    assert.deepEqual(errors, [{ level: 'error', message: REFUSED, data: { topics: [] } }]);
  });

  it('logs nothing when every subscription is granted', async () => {
    assert.deepEqual(await subscribedWith((topics) => topics.map(() => 1)), []);
  });

  it('warns about a broker error (a refused login)', async () => {
    const broker = await FakeMqttBroker.start();
    broker.connack = { sessionPresent: false, reasonCode: 135 };
    cleanups.push(() => broker.close());
    const logger = recordingLogger();
    const link = startConsoleLink({ url: broker.url, topicPrefix: 'ak', clientId: 'console-1', state: new FleetState({ now: () => T0 }), now: () => T0, logger, reconnectMs: 50 });
    cleanups.push(() => link.close());
    await until(() => logger.lines.some((l) => l.level === 'warn'), { message: 'the warning' });
    assert.deepEqual(logger.lines.find((l) => l.level === 'warn'), { level: 'warn', message: 'Fleet console: broker error', data: { error: 'Connection refused: Not authorized' } });
    assert.equal(link.connected, false);
  });

  it('ready() waits for the first connection, or gives up after its time with the broker named', async () => {
    const port = await freePort();
    const url = `mqtt://127.0.0.1:${port}`;
    const link = startConsoleLink({ url, topicPrefix: 'ak', clientId: 'console-1', state: new FleetState({ now: () => T0 }), now: () => T0, reconnectMs: 50 });
    cleanups.push(() => link.close());
    await assert.rejects(link.ready(60), { message: `The broker ${url} did not accept the console within 0.06 s.` });
    const { link: up } = await linked({}, false);
    await up.ready(2_000);
    assert.equal(up.connected, true);
    await up.ready(1); // connected: at once
  });

  it('reconnects after the period it is given', async () => {
    const { broker, changes } = await linked({ reconnectMs: 20 });
    broker.drop();
    // The default period is 3 s: back well before that.
    await until(() => changes.length === 3, { realTimeoutMs: 2_000, message: 'back within two seconds' });
  });

  it('closes its session cleanly', async () => {
    const { broker, link } = await linked();
    await link.close();
    await until(() => !broker.connected, { message: 'disconnected' });
    assert.equal(link.connected, false);
  });
});

describe('console link: its own session taken', () => {
  it('says so when a broker disconnects it because another connection took its client id (0x8E), and counts it', async () => {
    const { broker, link, logger } = await linked();
    assert.deepEqual([link.health().takeovers, link.health().notice], [0, null]);
    broker.disconnectWith(0x8e);
    await until(() => link.health().takeovers === 1, { message: 'the takeover counted' });
    const message = "another connection took over this console's broker session (its client id). With the shipped broker set-up only the console's own login can: is a second console running with it?";
    assert.deepEqual(link.health().notice, { at: new Date(T0).toISOString(), message });
    assert.deepEqual(logger.lines.filter((l) => l.level === 'error'), [{ level: 'error', message: `Fleet console: ${message}`, data: { takeovers: 1 } }]);
  });

  it('does not call another reason for a disconnect a takeover', async () => {
    const { broker, link, logger } = await linked();
    broker.connack = { sessionPresent: true }; // the broker kept the session: nothing was lost either
    broker.disconnectWith(0x8b); // server shutting down
    await until(() => broker.connections === 2 && link.connected, { message: 'back after the disconnect (the broker still listens)' });
    assert.equal(link.health().takeovers, 0);
    assert.deepEqual(logger.lines.filter((l) => l.level === 'error'), []);
  });
});

describe('console link: what arrives', () => {
  it("files each kiosk's status (retained or not), events and its answers to what it sent; ignores the command topics and others", async () => {
    const { broker, link, state } = await linked({ topicPrefix: 'fleet(1)*' });
    const ping = (await link.send({ kiosks: ['k-2'] }, { cmd: 'ping' })) as { id: string };
    assert.deepEqual(kioskSubscribes(broker)[0]!.subscriptions.map((s) => s.topic), ['fleet(1)*/+/status', 'fleet(1)*/+/events', 'fleet(1)*/+/cmd/result']);
    broker.deliver('fleet(1)*/k-1/status', status('k-1', 'lobby'), { retain: true });
    broker.deliver('fleet(1)*/k-2/status', status('k-2', 'lobby'));
    broker.deliver('fleet(1)*/k-1/events', JSON.stringify({ id: 'e-1', record: { kind: 'session', end_at: '2026-11-24T09:59:00Z', end_reason: 'user_end', credits_cost: 2, avatar: 'ava' } }));
    broker.deliver('fleet(1)*/k-2/cmd/result', JSON.stringify({ id: ping.id, cmd: 'ping', ok: true, result: { pong: true } }));
    broker.deliver('fleet(1)*/_fleet/status', status('_fleet', 'lobby'));
    broker.deliver('fleet(1)*/k-3/cmd', status('k-3', 'lobby'));
    broker.deliver('fleet(1)*/k-4/status/x', status('k-4', 'lobby'));
    broker.deliver('xfleet(1)*/k-5/status', status('k-5', 'lobby'));
    broker.deliver('fleet(1)*/k-2/status', status('k-2', 'shop'));
    await until(() => state.row('k-2')?.group === 'shop', { message: 'the last message filed' });
    assert.deepEqual(state.rows().map((r) => [r.kioskId, r.sinceAt]), [['k-1', null], ['k-2', '2026-11-24T10:00:00.000Z']]);
    assert.deepEqual(state.spendRows(), [{ kioskId: 'k-1', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 2, demo: false }]);
    assert.equal(state.row('k-2')!.lastAnswer!.id, ping.id);
    assert.equal(state.row('k-1')!.lastAnswer, null);
    assert.deepEqual(state.malformed, { status: 0, events: 0, results: 0 });
  });

  it('refuses a topic level that is no kiosk id (a control character, too long): no row, counted', async () => {
    const { broker, state } = await linked();
    broker.deliver('ak/k\u001b[2J/status', status('k', 'lobby'));
    broker.deliver(`ak/${'k'.repeat(65)}/events`, JSON.stringify({ id: 'e-1', record: { kind: 'session', end_at: '2026-11-24T09:59:00Z', end_reason: 'user_end' } }));
    broker.deliver('ak/k 1/cmd/result', JSON.stringify({ id: 'c-1', cmd: 'ping', ok: true }));
    broker.deliver('ak/k-1/status', status('k-1', 'lobby'));
    await until(() => state.row('k-1') !== null, { message: 'the last message filed' });
    assert.deepEqual(state.rows().map((r) => r.kioskId), ['k-1']);
    assert.deepEqual(state.malformed, { status: 1, events: 1, results: 1 });
  });
});

describe('console link: commands', () => {
  const published = (broker: FakeMqttBroker) =>
    broker.packets('publish').map((p) => ({ topic: p.topic, qos: p.qos, retain: p.retain, expiry: p.properties?.messageExpiryInterval, body: JSON.parse(p.payload.toString()) as Record<string, unknown> }));

  it('sends to each kiosk named, with an id, an expiry and the message expiry, never retained; says who should answer', async () => {
    const { broker, link, logger } = await linked();
    const told: unknown[] = [];
    const sent = await link.send({ kiosks: ['k-1', 'k.2_B-3'] }, { cmd: 'ping' }, { onSending: (s) => told.push({ ...s, publishedBefore: published(broker).length }) });
    assert.ok(sent.ok);
    // Told once, before anything went out: an answer can come back before the broker's acknowledgement.
    assert.deepEqual(told, [{ id: sent.id, expected: ['k-1', 'k.2_B-3'], expiresAtMs: T0 + DEFAULT_COMMAND_TTL_S * 1000, publishedBefore: 0 }]);
    assert.match(sent.id, ID);
    const expiresAt = new Date(T0 + DEFAULT_COMMAND_TTL_S * 1000).toISOString();
    assert.deepEqual(sent, { ok: true, id: sent.id, expected: ['k-1', 'k.2_B-3'], expiresAt });
    assert.equal(expiresAt, '2026-11-24T10:02:00.000Z');
    assert.deepEqual(published(broker), [
      { topic: 'ak/k-1/cmd', qos: 1, retain: false, expiry: 120, body: { id: sent.id, cmd: 'ping', expiresAt } },
      { topic: 'ak/k.2_B-3/cmd', qos: 1, retain: false, expiry: 120, body: { id: sent.id, cmd: 'ping', expiresAt } },
    ]);
    assert.deepEqual(logger.lines.at(-1), { level: 'info', message: 'Fleet console: command sent', data: { id: sent.id, cmd: 'ping', topics: 2, expected: 2 } });
  });

  it('sends a group command to the group topic and a fleet one to the fleet topic, expecting the members it knows; its own expiry', async () => {
    const { broker, link, state, logger } = await linked({ commandTtlS: 30 });
    state.onStatus('k-1', status('k-1', 'lobby'), false);
    state.onStatus('k-2', status('k-2', 'shop'), false);
    state.onStatus('k-3', status('k-3', 'lobby'), false);
    const group = await link.send({ group: 'lobby' }, { cmd: 'ping' });
    assert.deepEqual(group, { ok: true, id: (group as { id: string }).id, expected: ['k-1', 'k-3'], expiresAt: '2026-11-24T10:00:30.000Z' });
    const fleet = await link.send({ fleet: true }, { cmd: 'screenshot' });
    assert.deepEqual(fleet.ok && fleet.expected, ['k-1', 'k-2', 'k-3']);
    assert.deepEqual(published(broker).map((p) => [p.topic, p.expiry, p.body.cmd]), [['ak/_group/lobby/cmd', 30, 'ping'], ['ak/_fleet/cmd', 30, 'screenshot']]);
    assert.deepEqual(logger.lines.at(-1)!.data, { id: (fleet as { id: string }).id, cmd: 'screenshot', topics: 1, expected: 3 });
  });

  it("refuses, unsent, what the kiosk's parser refuses, a name that is not a kiosk id or group, and an empty list", async () => {
    const { broker, link } = await linked();
    const refusal = (message: string) => ({ ok: false, error: { code: 'invalid_request', message } });
    assert.deepEqual(await link.send({ kiosks: ['k-1'] }, { cmd: 'format-disk' }), refusal('Unknown command "format-disk"; known: ping, reload, restart, end-call, screenshot, apply, update-check, update-install, update-pin, set-volume.'));
    for (const bad of ['+', '_fleet', 'k/1', 'x'.repeat(65), '']) assert.deepEqual(await link.send({ kiosks: ['k-1', bad] }, { cmd: 'ping' }), refusal(`"${bad}" is not a kiosk id.`), bad);
    assert.deepEqual(await link.send({ kiosks: [] }, { cmd: 'ping' }), refusal('"" is not a kiosk id.'));
    for (const bad of ['a/b', 'g'.repeat(65), '', '#']) assert.deepEqual(await link.send({ group: bad }, { cmd: 'ping' }), refusal(`"${bad}" is not a group name.`), bad);
    assert.equal((await link.send({ kiosks: ['x'.repeat(64)] }, { cmd: 'ping' })).ok, true);
    assert.equal((await link.send({ group: 'g'.repeat(64) }, { cmd: 'ping' })).ok, true);
    assert.deepEqual(published(broker).map((p) => p.topic), [`ak/${'x'.repeat(64)}/cmd`, `ak/_group/${'g'.repeat(64)}/cmd`]);
  });

  it("refuses, unsent, an update-pin below the floor a target kiosk reports, naming it; sends one at the floor, an unpin, and to kiosks that report none", async () => {
    const { broker, link, state } = await linked();
    const withFloor = (kioskId: string, group: string, floor: string | null | undefined) =>
      JSON.stringify({ ...(JSON.parse(status(kioskId, group)) as object), update: { phase: 'idle', ready: null, pinned: null, off: null, ...(floor === undefined ? {} : { floor }) } });
    state.onStatus('k-1', withFloor('k-1', 'lobby', '1.1.0'), false);
    state.onStatus('k-2', withFloor('k-2', 'lobby', '1.3.0'), false);
    state.onStatus('k-3', withFloor('k-3', 'shop', null), false);
    state.onStatus('k-4', withFloor('k-4', 'shop', undefined), false);
    assert.deepEqual([state.updateFloor('k-1'), state.updateFloor('k-3'), state.updateFloor('k-4'), state.updateFloor('nobody')], ['1.1.0', null, null, null]);
    const refused = (kioskId: string, version: string, floor: string) => ({ ok: false, error: { code: 'forbidden', message: `update-pin ${version} is refused for ${kioskId}: ${pinRefusal(version, floor)}.` } });
    assert.deepEqual(await link.send({ kiosks: ['k-1'] }, { cmd: 'update-pin', version: '0.0.1' }), refused('k-1', '0.0.1', '1.1.0'));
    assert.deepEqual(await link.send({ group: 'lobby' }, { cmd: 'update-pin', version: '1.2.0' }), refused('k-2', '1.2.0', '1.3.0'));
    assert.deepEqual(await link.send({ fleet: true }, { cmd: 'update-pin', version: '1.2.0' }), refused('k-2', '1.2.0', '1.3.0'));
    assert.deepEqual(published(broker), [], 'nothing sent');
    const allowed: Array<[CommandTarget, string | null]> = [[{ kiosks: ['k-1'] }, '1.1.0'], [{ group: 'lobby' }, null], [{ group: 'shop' }, '0.0.1'], [{ kiosks: ['k-9'] }, '0.0.1']];
    for (const [target, version] of allowed) {
      assert.equal((await link.send(target, { cmd: 'update-pin', version })).ok, true, `${JSON.stringify(target)} ${version}`);
    }
    // A floor a kiosk stops reporting is forgotten.
    state.onStatus('k-1', withFloor('k-1', 'lobby', undefined), false);
    assert.equal((await link.send({ kiosks: ['k-1'] }, { cmd: 'update-pin', version: '0.0.1' })).ok, true);
    assert.equal(published(broker).length, 5);
  });

  it('says so when it is not connected, or when the broker does not take the command', async () => {
    const { broker, link } = await linked();
    broker.puback = (p) => (p.topic === 'ak/k-2/cmd' ? 0x87 : 0);
    assert.deepEqual(await link.send({ kiosks: ['k-1', 'k-2'] }, { cmd: 'ping' }), { ok: false, error: { code: 'network', message: 'The broker did not take the command: Publish error: Not authorized' } });
    await link.close();
    let told = 0;
    assert.deepEqual(await link.send({ fleet: true }, { cmd: 'ping' }, { onSending: () => told++ }), { ok: false, error: { code: 'network', message: 'The console is not connected to the broker; try again when it is.' } });
    assert.equal(told, 0, 'nothing to count answers for: it was never sent');
  });
});

describe('console link: keep-alive', () => {
  it('keeps a connection whose broker sends other things while its PINGRESPs wait; drops one silent for 1.5 × the keep-alive', async () => {
    const clock = new FakeClock(T0);
    const { broker, state, changes } = await linked({ clock, now: () => clock.now() });
    const connects = () => broker.packets('connect').length;
    // Statuses keep coming (a backlog ahead of the PINGRESPs, which never come): 3 × the keep-alive.
    broker.pingresp = false;
    for (let s = 1; s <= 3 * KEEPALIVE_S; s++) {
      broker.deliver(`ak/k-${s}/status`, status(`k-${s}`, 'lobby'), { qos: 1 });
      await until(() => state.rows().some((r) => r.kioskId === `k-${s}`), { message: `status ${s}` });
      await clock.advance(1000);
      await realDelay(5);
    }
    assert.equal(connects(), 1, 'the same connection throughout');
    assert.deepEqual(changes, [true]);
    // Then nothing at all: mqtt.js gives up after 1.5 × the keep-alive and the link reconnects.
    broker.silent = true;
    for (let t = 0; t < 1.5 * KEEPALIVE_S * 1000 && connects() === 1; t += 500) {
      await clock.advance(500);
      await realDelay(5);
    }
    broker.silent = false;
    broker.pingresp = true;
    await until(() => connects() === 2, { message: 'reconnected' });
    assert.deepEqual(changes.slice(0, 2), [true, false]);
  });
});

describe('console link: a command the broker has not confirmed yet', () => {
  /** A link on a fake clock whose broker holds every PUBACK; the send under way and whether it settled. */
  const holding = async () => {
    const clock = new FakeClock(T0);
    const rig = await linked({ clock, now: () => clock.now() });
    rig.broker.puback = () => 'hold';
    // Before the link's polite close, which waits for the PUBACK (cleanups run last first).
    cleanups.push(async () => {
      rig.broker.silent = false;
      rig.broker.releasePubacks();
    });
    let settled: Awaited<ReturnType<ConsoleLink['send']>> | null = null;
    const sending = rig.link.send({ kiosks: ['k-1'] }, { cmd: 'ping' }).then((r) => (settled = r));
    await until(() => rig.broker.published('ak/k-1/cmd').length === 1, { message: 'published' });
    return { ...rig, clock, sending, settled: () => settled };
  };
  /** Fake time on by `ms`, then a moment of real time for the sockets. */
  const tick = (clock: FakeClock, ms: number) => advanceInSteps(clock, ms, { stepMs: ms, settleMs: 20 });

  it('is reported as not confirmed once the broker has sent nothing at all for 5 s', async () => {
    const { broker, clock, sending, settled } = await holding();
    broker.silent = true;
    await tick(clock, PUBLISH_CONFIRM_MS - 1);
    assert.equal(settled(), null, 'still waiting at 4.999 s');
    await tick(clock, 1);
    const result = await sending;
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.error.message : '', /^The broker did not confirm the command within 5 s, and sent nothing else meanwhile\. It may not have reached it;/);
  });

  it('waits while the broker keeps sending (a backlog ahead of the PUBACK), and is confirmed when the PUBACK comes', async () => {
    const { broker, clock, state, sending, settled } = await holding();
    for (let s = 1; s <= 8; s++) {
      broker.deliver(`ak/k-${s}/status`, status(`k-${s}`, 'lobby'), { qos: 1 });
      await until(() => state.rows().some((r) => r.kioskId === `k-${s}`), { message: `status ${s}` });
      await tick(clock, 1000);
    }
    assert.equal(settled(), null, 'not reported at 8 s: the broker was never silent for 5 s');
    broker.releasePubacks();
    const result = await sending;
    assert.equal(result.ok, true);
  });

  it('is reported after 30 s in all, though the broker keeps answering', async () => {
    const { clock, sending, settled } = await holding();
    // The probe's pings are answered every 2 s: never 5 s of silence.
    await advanceInSteps(clock, PUBLISH_CONFIRM_MAX_MS - 1000, { stepMs: 1000, settleMs: 20 });
    assert.equal(settled(), null, 'still waiting at 29 s');
    await tick(clock, 1000);
    const result = await sending;
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.error.message : '', /^The broker did not confirm the command within 30 s\. It may not have reached it;/);
  });
});

describe('console link: TLS', () => {
  const tlsBroker = async () => {
    const tls = loopbackCertificate();
    const broker = await FakeMqttBroker.start({ tls });
    cleanups.push(() => broker.close());
    return { broker, ca: tls.cert };
  };

  it('trusts a broker certificate signed by the CA it is given', async () => {
    const { broker, ca } = await tlsBroker();
    const link = startConsoleLink({ url: broker.url, topicPrefix: 'ak', clientId: 'console-tls', ca, state: new FleetState({ now: () => T0 }), now: () => T0, reconnectMs: 50 });
    cleanups.push(() => link.close());
    await link.ready(2_000);
    assert.equal(broker.packets('connect')[0]!.clientId, 'console-tls');
  });

  it('refuses a broker whose certificate it cannot verify, and says why', async () => {
    const { broker } = await tlsBroker();
    const logger = recordingLogger();
    const link = startConsoleLink({ url: broker.url, topicPrefix: 'ak', clientId: 'console-tls', state: new FleetState({ now: () => T0 }), now: () => T0, logger, reconnectMs: 50 });
    cleanups.push(() => link.close());
    await until(() => logger.lines.some((l) => l.level === 'warn'), { message: 'the refusal' });
    assert.deepEqual(logger.lines.find((l) => l.level === 'warn'), { level: 'warn', message: 'Fleet console: broker error', data: { error: 'self-signed certificate' } });
    assert.deepEqual(broker.packets('connect'), []);
  });
});
