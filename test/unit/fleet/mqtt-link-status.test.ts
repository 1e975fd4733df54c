/**
 * The fleet link's connection, status and events against a scripted broker in this process: the exact
 * CONNECT, SUBSCRIBE and PUBLISH packets, the log lines, the status throttle on a fake clock, the event
 * queue's pump, the reconnect and the clean stop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redact } from '../../../electron/core/log.ts';
import { openEventQueue } from '../../../electron/fleet/event-queue.ts';
import { KIOSK, linkRigsClosedAfterEach, PREFIX, START_ISO, T, type LinkRig } from '../../helpers/mqtt-link-rig.ts';
import { realDelay, until } from '../../helpers/until.ts';

const startLinkRig = linkRigsClosedAfterEach();
const ONLINE = { online: true, kioskId: KIOSK, group: null, version: '1.2.3', mode: 'demo', phase: 'idle', cast: ['ava'], open: true, nextChangeAt: null, today: { sessions: 0, credits: 0 }, lastErrorCode: null, queued: 0, droppedEvents: 0, policyError: null };
const isoAfter = (ms: number) => new Date(Date.parse(START_ISO) + ms).toISOString();
/** Long enough for a packet the link would have sent to cross the loopback (only for "nothing came"). */
const settle = () => realDelay(40);
const statuses = (rig: LinkRig) => rig.broker.published(T.status).map((p) => p.body as Record<string, unknown>);
const messages = (rig: LinkRig) => rig.logger.lines.map((l) => l.message);

describe('mqtt link: connection and status', () => {
  it('connects with its options, says online in a retained status and subscribes to its command topics', async () => {
    const rig = await startLinkRig({ settings: { username: 'k1', password: 'pw-secret-1', group: 'lobby' }, broker: (b) => (b.connack = { sessionPresent: true }) });
    const [connect] = rig.broker.packets('connect');
    assert.equal(connect!.clientId, KIOSK);
    assert.equal(connect!.username, 'k1');
    assert.equal(String(connect!.password), 'pw-secret-1');
    assert.equal(connect!.clean, false);
    assert.equal(connect!.keepalive, 30);
    assert.deepEqual(connect!.properties, { sessionExpiryInterval: 86_400, maximumPacketSize: 262_144 });
    assert.deepEqual({ ...connect!.will, payload: String(connect!.will!.payload) }, { topic: T.status, payload: `{"online":false,"kioskId":"${KIOSK}","reason":"connection lost"}`, qos: 1, retain: true });
    await until(() => rig.broker.published(T.status).length === 1);
    assert.deepEqual(rig.broker.published(T.status), [{ conn: 1, topic: T.status, qos: 1, retain: true, body: { ...ONLINE, group: 'lobby', at: START_ISO } }]);
    const [subscribe] = rig.broker.packets('subscribe');
    assert.deepEqual(subscribe!.subscriptions, [
      { topic: T.cmd, qos: 1, nl: false, rap: true, rh: 0 },
      { topic: T.fleetCmd, qos: 1, nl: false, rap: true, rh: 0 },
      { topic: `${PREFIX}/_group/lobby/cmd`, qos: 1, nl: false, rap: true, rh: 0 },
    ]);
    assert.equal(rig.link.connected, true);
    assert.equal(rig.link.kioskId, KIOSK);
    assert.equal(rig.link.topics.groupCmd, `${PREFIX}/_group/lobby/cmd`);
    assert.deepEqual(rig.logger.lines, [
      { level: 'info', message: 'Fleet link: connecting to the broker', data: { url: rig.broker.url, clientId: KIOSK, username: 'k1', kioskId: KIOSK, queued: 0 } },
      { level: 'info', message: 'Fleet link: connected', data: { kioskId: KIOSK, queued: 0, sessionPresent: true } },
    ]);
    assert.equal(redact('the password is pw-secret-1'), 'the password is ***', 'the broker password is masked in every log line');
  });

  it('without a group or a user: the two command topics, group null, no user in the log', async () => {
    const rig = await startLinkRig({ fields: { policyError: 'pin refused', sandbox: false } });
    assert.deepEqual(rig.broker.packets('subscribe')[0]!.subscriptions.map((s) => s.topic), [T.cmd, T.fleetCmd]);
    assert.equal(rig.link.topics.groupCmd, null);
    const [connect] = rig.broker.packets('connect');
    assert.equal(connect!.username, undefined);
    assert.equal(rig.logger.lines[0]!.data!.username, null);
    await until(() => rig.broker.published(T.status).length === 1);
    assert.deepEqual(statuses(rig), [{ ...ONLINE, sandbox: false, policyError: 'pin refused', at: START_ISO }]);
  });

  it('republishes a changed status at most once a second, on the fake clock, and never an unchanged one', async () => {
    const rig = await startLinkRig();
    await until(() => statuses(rig).length === 1);
    rig.fields.phase = 'live';
    rig.link.statusChanged();
    rig.link.statusChanged(); // the one timer already waits
    assert.deepEqual(rig.clock.pendingDelays(), [1000]);
    await rig.clock.advance(999);
    await settle();
    assert.equal(statuses(rig).length, 1, 'not before the second is over');
    await rig.clock.advance(1);
    await until(() => statuses(rig).length === 2);
    assert.deepEqual(statuses(rig)[1], { ...ONLINE, phase: 'live', at: isoAfter(1000) });
    assert.equal(rig.clock.pendingCount, 0);

    // A second later, at once (no timer); an unchanged status (only the time moved) is not sent.
    await rig.clock.advance(1000);
    rig.fields.phase = 'ended';
    rig.link.statusChanged();
    assert.equal(rig.clock.pendingCount, 0);
    await until(() => statuses(rig).length === 3);
    assert.deepEqual(statuses(rig)[2], { ...ONLINE, phase: 'ended', at: isoAfter(2000) });
    await rig.clock.advance(5000);
    rig.link.statusChanged();
    assert.equal(rig.clock.pendingCount, 0);
    await settle();
    assert.equal(statuses(rig).length, 3);

    // Half a second after one: the rest of the second.
    await rig.clock.advance(5000);
    rig.fields.open = false;
    rig.link.statusChanged();
    await until(() => statuses(rig).length === 4);
    await rig.clock.advance(500);
    rig.fields.open = true;
    rig.link.statusChanged();
    assert.deepEqual(rig.clock.pendingDelays(), [500]);
    assert.deepEqual(rig.clock.foreignClears, []);
  });

  it('a status change before the first connect waits for no timer, and the connect says the current status', async () => {
    const rig = await startLinkRig({ waitReady: false });
    assert.equal(rig.link.connected, false);
    rig.link.statusChanged();
    assert.equal(rig.clock.pendingCount, 0);
    await until(() => statuses(rig).length === 1);
    await rig.clock.advance(1000);
    rig.fields.phase = 'live';
    rig.link.statusChanged();
    await until(() => statuses(rig).length === 2);
    assert.equal(statuses(rig)[1]!.phase, 'live');
  });

  it('after a dropped connection it reconnects, says the same status again (the last will may stand) and resubscribes', async () => {
    const rig = await startLinkRig();
    await until(() => statuses(rig).length === 1);
    rig.broker.drop();
    await until(() => !rig.link.connected);
    assert.deepEqual(rig.logger.lines.at(-1), { level: 'debug', message: 'Fleet link: connection closed; reconnecting', data: undefined });
    // While it is away, a change is not sent (it would wait in the client's own queue, stale).
    await rig.clock.advance(1000);
    rig.fields.phase = 'live';
    rig.link.statusChanged();
    await until(() => rig.broker.published(T.status).some((p) => p.conn === 2) && rig.broker.packets('subscribe').some((p) => p.conn === 2), { message: 'the status and the subscriptions again' });
    await settle();
    assert.deepEqual(rig.broker.published(T.status).map((p) => [p.conn, (p.body as { phase: string }).phase]), [
      [1, 'idle'],
      [2, 'live'],
    ]);
    assert.equal(rig.link.connected, true);
    assert.deepEqual(messages(rig).filter((m) => m === 'Fleet link: connected').length, 2);
  });

  it('logs a status the broker refused at debug level', async () => {
    const rig = await startLinkRig({ broker: (b) => (b.puback = (p) => (p.topic === T.status ? 135 : 0)) });
    await until(() => rig.logger.lines.some((l) => l.message === 'Fleet link: status not published'));
    assert.deepEqual(rig.logger.lines.find((l) => l.message === 'Fleet link: status not published'), { level: 'debug', message: 'Fleet link: status not published', data: { error: 'Publish error: Not authorized' } });
  });

  it("says in an error line when the broker refuses the command subscription (its ACL), naming the topics", async () => {
    const refused = await startLinkRig({ broker: (b) => (b.suback = (subs) => subs.map(() => 0x87)) });
    await until(() => refused.logger.lines.some((l) => l.level === 'error'));
    assert.deepEqual(refused.logger.lines.filter((l) => l.level === 'error'), [{ level: 'error', message: 'Fleet link: the broker refused a command subscription (check its ACL)', data: { topics: [T.cmd, T.fleetCmd] } }]);
    const granted = await startLinkRig();
    await until(() => statuses(granted).length === 1);
    await settle();
    assert.deepEqual(granted.logger.lines.filter((l) => l.level === 'error'), []);
  });

  it('names only the command topic the broker refuses when it grants the others', async () => {
    const rig = await startLinkRig({ broker: (b) => (b.suback = (subs) => subs.map((s) => (s.topic === T.fleetCmd ? 0x87 : s.qos))) });
    await until(() => rig.logger.lines.some((l) => l.level === 'error'));
    assert.deepEqual(rig.logger.lines.filter((l) => l.level === 'error'), [{ level: 'error', message: 'Fleet link: the broker refused a command subscription (check its ACL)', data: { topics: [T.fleetCmd] } }]);
  });

  it('counts 0x80 (unspecified error, and MQTT 3.1.1 failure) as a refusal', async () => {
    const rig = await startLinkRig({ broker: (b) => (b.suback = (subs) => subs.map((s) => (s.topic === T.cmd ? 0x80 : s.qos))) });
    await until(() => rig.logger.lines.some((l) => l.level === 'error'));
    assert.deepEqual(rig.logger.lines.filter((l) => l.level === 'error'), [{ level: 'error', message: 'Fleet link: the broker refused a command subscription (check its ACL)', data: { topics: [T.cmd] } }]);
  });

  it('logs a refused connection as a broker error (the reason, never the password)', async () => {
    const rig = await startLinkRig({ waitReady: false, settings: { username: 'k1', password: 'pw-secret-2' }, broker: (b) => (b.connack = { sessionPresent: false, reasonCode: 135 }) });
    await until(() => rig.logger.lines.some((l) => l.level === 'warn'));
    assert.deepEqual(rig.logger.lines.find((l) => l.level === 'warn'), { level: 'warn', message: 'Fleet link: broker error', data: { error: 'Connection refused: Not authorized' } });
    assert.equal(rig.link.connected, false);
  });
});

describe('mqtt link: events', () => {
  it('sends each record as an event, QoS 1, one at a time: the next only after the broker took the last', async () => {
    const rig = await startLinkRig({ broker: (b) => (b.puback = (p) => (p.topic === T.events ? 'hold' : 0)) });
    await until(() => statuses(rig).length === 1);
    rig.link.publishRecord({ kind: 'session', n: 1 });
    rig.link.publishRecord({ kind: 'session', n: 2 });
    await until(() => rig.broker.published(T.events).length === 1);
    await settle();
    const [first] = rig.broker.published(T.events);
    const body = first!.body as { id: string };
    assert.match(body.id, /^[0-9a-f]{8,32}-1$/);
    assert.deepEqual(first, { conn: 1, topic: T.events, qos: 1, retain: false, body: { id: body.id, kioskId: KIOSK, at: START_ISO, record: { kind: 'session', n: 1 } } });
    assert.equal(rig.broker.published(T.events).length, 1, 'the second waits for the first PUBACK');

    // The queue length shows in the status.
    await rig.clock.advance(1000);
    rig.link.statusChanged();
    await until(() => statuses(rig).length === 2);
    assert.equal(statuses(rig)[1]!.queued, 2);

    rig.broker.releasePubacks();
    await until(() => rig.broker.published(T.events).length === 2);
    assert.deepEqual((rig.broker.published(T.events)[1]!.body as { record: unknown; id: string }).record, { kind: 'session', n: 2 });
    assert.equal((rig.broker.published(T.events)[1]!.body as { id: string }).id, body.id.replace(/-1$/, '-2'));
    rig.broker.releasePubacks();
    // Once the queue is empty, the status says so (the pump asks for it, a second after the last).
    await until(() => openEventQueue({ dir: rig.dir, limit: 100 }).size === 0);
    assert.deepEqual(rig.clock.pendingDelays(), [1000]);
    await rig.clock.advance(1000);
    await until(() => statuses(rig).length === 3);
    assert.equal(statuses(rig)[2]!.queued, 0);
    assert.equal(openEventQueue({ dir: rig.dir, limit: 100 }).size, 0, 'acknowledged on disk');

    // The pump runs again for a later record.
    rig.link.publishRecord({ kind: 'session', n: 3 });
    await until(() => rig.broker.published(T.events).length === 3);
  });

  it('keeps an event the broker refused, says so, and sends it again after a reconnect', async () => {
    let refuse = true;
    const rig = await startLinkRig({ broker: (b) => (b.puback = (p) => (p.topic === T.events && refuse ? 131 : 0)) });
    await until(() => statuses(rig).length === 1);
    await rig.clock.advance(1000);
    rig.link.publishRecord({ n: 1 });
    await until(() => rig.logger.lines.some((l) => l.level === 'warn'));
    assert.deepEqual(rig.logger.lines.filter((l) => l.level === 'warn'), [{ level: 'warn', message: 'Fleet link: an event was not accepted; it stays queued', data: { error: 'Publish error: Implementation specific error', queued: 1 } }]);
    // The pump's end asks for the status: it now counts the event kept.
    await until(() => statuses(rig).length === 2);
    assert.equal(statuses(rig)[1]!.queued, 1);
    refuse = false;
    rig.broker.drop();
    await until(() => rig.broker.published(T.events).filter((p) => p.conn === 2).length === 1, { message: 'the event sent again' });
    assert.deepEqual((rig.broker.published(T.events)[1]!.body as { record: unknown }).record, { n: 1 });
    await until(() => openEventQueue({ dir: rig.dir, limit: 100 }).size === 0);
  });

  it('sends the events queued on disk as soon as it connects', async () => {
    const first = await startLinkRig({ waitReady: false, broker: (b) => (b.connack = { sessionPresent: false, reasonCode: 136 }) });
    first.link.publishRecord({ n: 'offline' });
    await first.link.close();
    const rig = await startLinkRig({ dir: first.dir });
    await until(() => rig.broker.published(T.events).length === 1);
    assert.deepEqual((rig.broker.published(T.events)[0]!.body as { record: unknown }).record, { n: 'offline' });
    assert.equal(rig.logger.lines[0]!.data!.queued, 1);
  });

  it('says when a record cannot be queued, and queues nothing once closed', async () => {
    const rig = await startLinkRig();
    rig.link.publishRecord({ n: 10n });
    assert.deepEqual(rig.logger.lines.at(-1), { level: 'error', message: 'Fleet link: an event could not be queued', data: { error: 'TypeError: Do not know how to serialize a BigInt' } });
    await rig.link.close();
    rig.link.publishRecord({ n: 1 });
    assert.equal(openEventQueue({ dir: rig.dir, limit: 100 }).size, 0);
    assert.equal(rig.broker.published(T.events).length, 0);
  });
});

describe('mqtt link: close', () => {
  it('says offline in the retained status, disconnects, stops its timer and logs no reconnect', async () => {
    const rig = await startLinkRig();
    await until(() => statuses(rig).length === 1);
    rig.fields.phase = 'live';
    rig.link.statusChanged();
    assert.equal(rig.clock.pendingCount, 1);
    await rig.clock.advance(250);
    await rig.link.close();
    assert.equal(rig.clock.pendingCount, 0);
    assert.deepEqual(rig.clock.foreignClears, []);
    assert.deepEqual(rig.broker.published(T.status).slice(1), [{ conn: 1, topic: T.status, qos: 1, retain: true, body: { online: false, kioskId: KIOSK, reason: 'stopped', at: isoAfter(250) } }]);
    await until(() => rig.broker.packets('disconnect').length === 1);
    assert.equal(rig.link.connected, false);
    await rig.link.close();
    rig.link.statusChanged();
    await rig.clock.advance(5000);
    await settle();
    assert.equal(rig.broker.published(T.status).length, 2, 'nothing after the close');
    assert.equal(rig.clock.pendingCount, 0);
    assert.equal(messages(rig).includes('Fleet link: connection closed; reconnecting'), false);
  });

  it('says nothing more once closed, even when the broker accepts the connection during the close', async () => {
    const rig = await startLinkRig({ waitReady: false, broker: (b) => (b.connack = 'hold') });
    await until(() => rig.broker.packets('connect').length === 1);
    const closing = rig.link.close();
    rig.broker.releaseConnack();
    await closing;
    await settle();
    assert.deepEqual(rig.logger.lines.slice(1), [], 'no "connected", no subscription said to be refused');
    assert.deepEqual(rig.broker.packets('subscribe'), []);
  });

  it('closes without a status when it is not connected, and when the broker refuses the last one', async () => {
    const away = await startLinkRig({ waitReady: false, broker: (b) => (b.connack = { sessionPresent: false, reasonCode: 136 }) });
    await until(() => away.broker.packets('connect').length === 1);
    await away.link.close();
    assert.equal(away.broker.published().length, 0);
    assert.deepEqual(away.clock.foreignClears, [], 'no timer to clear');
    const refused = await startLinkRig({ broker: (b) => (b.puback = (p) => ((p.payload as Buffer).includes('"stopped"') ? 135 : 0)) });
    await until(() => statuses(refused).length === 1);
    await refused.link.close();
    assert.equal(statuses(refused).at(-1)!.reason, 'stopped');
    assert.equal(refused.link.connected, false);
  });
});
