/**
 * MQTT identities on a real Mosquitto started from the shipped broker set-up (ops/mosquitto): a kiosk's
 * login cannot borrow another kiosk's client id or the console's (each login is its own client id), nor
 * read another group's commands; the console notices when its own session is taken over or wiped, and
 * reads the broker's drop counter from `$SYS`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import { startConsoleLink, type ConsoleLink } from '../../electron/fleet/console/link.ts';
import { FleetState } from '../../electron/fleet/console/state.ts';
import { CONSOLE_LOGIN, mosquittoMissing, PREFIX, startBroker, type Broker } from '../helpers/mosquitto.ts';
import { recordingLogger } from '../helpers/recording-logger.ts';
import { realDelay, until } from '../helpers/until.ts';

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP the MQTT identity tests: ${missing}`);
const USERS: Record<string, string> = { [CONSOLE_LOGIN]: 'console-secret-ids', 'lobby-1': 'pw-lobby-1', 'lobby-2': 'pw-lobby-2', 'shop-1': 'pw-shop-1', operator: 'op-secret-ids' };
const WAIT_MS = 15_000;
const online = (kioskId: string) => JSON.stringify({ online: true, kioskId, group: 'lobby', phase: 'idle', today: { sessions: 0, credits: 0 }, queued: 0 });
const offline = (kioskId: string) => JSON.stringify({ online: false, kioskId, reason: 'connection lost' });

describe('MQTT identities on the shipped broker set-up', { skip: missing ?? false }, () => {
  let broker: Broker;
  const clients: MqttClient[] = [];
  /** A connection under `login` asking for `clientId` (its login's by default), never reconnecting by itself. */
  const login = async (user: string, options: { clientId?: string; clean?: boolean; will?: boolean } = {}) => {
    const client = await connectAsync(broker.url, {
      username: user,
      password: USERS[user]!,
      clientId: options.clientId ?? user,
      protocolVersion: 5,
      clean: options.clean ?? true,
      reconnectPeriod: 0,
      ...(options.will ? { will: { topic: `${PREFIX}/${user}/status`, payload: Buffer.from(offline(user)), qos: 1, retain: true } } : {}),
    });
    clients.push(client);
    return client;
  };
  /** The console's broker link and what it knows, under its login. */
  const startConsole = () => {
    const state = new FleetState({ now: Date.now });
    const logger = recordingLogger();
    const link: ConsoleLink = startConsoleLink({ url: broker.url, topicPrefix: PREFIX, clientId: 'avatar-fleet-console', username: CONSOLE_LOGIN, password: USERS[CONSOLE_LOGIN]!, state, now: Date.now, logger, reconnectMs: 300 });
    return { state, link, logger };
  };

  before(async () => {
    // $SYS every second instead of every 10 (the drop counter's test need not wait).
    broker = await startBroker(USERS, { groups: { 'lobby-1': 'lobby', 'lobby-2': 'lobby', 'shop-1': 'shop' }, conf: { sys_interval: '1' } });
  });
  after(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => undefined);
    await broker?.dispose();
  });

  it("a kiosk login asking for another kiosk's client id does not disconnect it, and no last will says it went", async () => {
    const { state, link } = startConsole();
    try {
      await link.ready(WAIT_MS);
      const victim = await login('lobby-2', { will: true });
      let victimClosed = false;
      victim.on('close', () => (victimClosed = true));
      await victim.publishAsync(`${PREFIX}/lobby-2/status`, online('lobby-2'), { qos: 1, retain: true });
      await until(() => state.row('lobby-2')?.online === true, { realTimeoutMs: WAIT_MS, message: 'lobby-2 online' });
      const intruder = await login('lobby-1', { clientId: 'lobby-2' });
      // The intruder's connection is its own: it may still publish under its own topics only.
      await intruder.publishAsync(`${PREFIX}/lobby-1/status`, online('lobby-1'), { qos: 1 });
      await until(() => state.row('lobby-1') !== null, { realTimeoutMs: WAIT_MS, message: "the intruder's own status" });
      await realDelay(500);
      assert.equal(victimClosed, false, 'the kiosk whose client id was asked for stays connected');
      assert.equal(victim.connected, true);
      assert.equal(state.row('lobby-2')!.online, true, 'its last will was not published');
    } finally {
      await link.close();
    }
  });

  it("a kiosk login asking for the console's client id with a clean start neither disconnects the console nor wipes its session", async () => {
    const { link } = startConsole();
    try {
      await link.ready(WAIT_MS);
      await login('lobby-1', { clientId: CONSOLE_LOGIN, clean: true });
      await login('lobby-2', { clientId: 'avatar-fleet-console', clean: true });
      await realDelay(1_000);
      const h = link.health();
      assert.deepEqual({ connected: h.connected, takeovers: h.takeovers, sessionsLost: h.sessionsLost, notice: h.notice }, { connected: true, takeovers: 0, sessionsLost: 0, notice: null });
    } finally {
      await link.close();
    }
  });

  it("notices the session a second connection under the console's own login wiped (a clean start), and says so", async () => {
    const { link, logger } = startConsole();
    try {
      await link.ready(WAIT_MS);
      // Mosquitto 2.0.11 closes the console's connection without a DISCONNECT saying "taken over" (a broker
      // that sends one is counted as a takeover, link-health.ts); what shows is the session it finds gone.
      const second = await login(CONSOLE_LOGIN, { clean: true });
      await until(() => !link.connected, { realTimeoutMs: WAIT_MS, message: 'the console cut off' });
      await second.endAsync(true);
      await until(() => link.health().sessionsLost === 1 && link.connected, { realTimeoutMs: WAIT_MS, message: 'the lost session noticed' });
      assert.match(link.health().notice!.message, /^the broker no longer had this console's session/);
      assert.deepEqual(
        logger.lines.filter((l) => l.level === 'error').map((l) => l.message.slice(0, 62)),
        ["Fleet console: the broker no longer had this console's session"],
      );
    } finally {
      await link.close();
    }
  });

  it("a kiosk reads its own group's commands and not another group's, whatever group its status claims", async () => {
    const kiosk = await login('lobby-1');
    const got: string[] = [];
    kiosk.on('message', (topic) => got.push(topic));
    await kiosk.subscribeAsync([`${PREFIX}/_group/shop/cmd`, `${PREFIX}/_group/lobby/cmd`], { qos: 1 });
    const operator = await login('operator');
    await operator.publishAsync(`${PREFIX}/_group/shop/cmd`, '{"cmd":"ping"}', { qos: 1 });
    await operator.publishAsync(`${PREFIX}/_group/lobby/cmd`, '{"cmd":"ping"}', { qos: 1 });
    await until(() => got.includes(`${PREFIX}/_group/lobby/cmd`), { realTimeoutMs: WAIT_MS, message: "its own group's command" });
    await realDelay(300);
    assert.deepEqual(got, [`${PREFIX}/_group/lobby/cmd`]);
  });

  it("reads the broker's count of dropped messages from $SYS and the time of its last word", async () => {
    const { link } = startConsole();
    try {
      await until(() => link.health().droppedMessages !== null, { realTimeoutMs: WAIT_MS, message: 'the drop counter read' });
      const h = link.health();
      assert.equal(h.droppedMessages, 0);
      assert.ok(h.lastMessageAtMs !== null && Date.now() - h.lastMessageAtMs < WAIT_MS);
      assert.equal(h.broker, broker.url);
    } finally {
      await link.close();
    }
  });
});
