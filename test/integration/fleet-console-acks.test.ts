/**
 * How the fleet console acknowledges kiosks' events on a real Mosquitto (the shipped set-up): only once
 * its memory has written them, with one write for the events that arrive together (one disk sync each
 * could not keep up with a fleet of 10,000: see docs/benchmarks.md), and a failed write leaves them for
 * the broker to hand over again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import { startConsoleLink, type ConsoleLink } from '../../electron/fleet/console/link.ts';
import { FleetState } from '../../electron/fleet/console/state.ts';
import { CONSOLE_LOGIN, mosquittoMissing, PREFIX, startBroker, type Broker } from '../helpers/mosquitto.ts';
import { until } from '../helpers/until.ts';

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP the fleet console acknowledgement tests: ${missing}`);
// One console login per test: on the shipped broker each login is its own client id and session.
const LOGINS = ['console-batch', 'console-again', 'console-backlog', 'console-busy'] as const;
type Login = (typeof LOGINS)[number];
const USERS: Record<string, string> = { [CONSOLE_LOGIN]: 'console-secret-acks', 'k-1': 'pw-1', ...Object.fromEntries(LOGINS.map((l) => [l, `pw-${l}`])) };
const WAIT_MS = 30_000;
const EPOCH = '0123abcd';

/** When the calls ended: call `n` ends `n` seconds after this, so the row's last call names the latest. */
const ENDED = Date.now() - 3_600_000;
const endOf = (n: number) => new Date(ENDED + n * 1000).toISOString();
/** A ledger call as the kiosk's link publishes it, event number `n`. */
const call = (n: number) =>
  JSON.stringify({
    id: `${EPOCH}-${n}`,
    kioskId: 'k-1',
    at: new Date().toISOString(),
    record: { kind: 'session', v: 1, start_at: new Date(ENDED - 60_000).toISOString(), end_at: endOf(n), live_id: `live-${n}`, end_reason: 'user_end', billed_seconds: 60, credits_cost: 1 },
  });
const calls = (state: FleetState) => state.spendRows().reduce((sum, r) => sum + r.sessions, 0);

describe('fleet console: events acknowledged once written, in batches (real Mosquitto)', { skip: missing ?? false }, () => {
  let broker: Broker;
  let kiosk: MqttClient;
  const links: ConsoleLink[] = [];
  const console_ = (login: Login, beforeAck: () => void, state = new FleetState({ now: Date.now })) => {
    const link = startConsoleLink({ url: broker.url, topicPrefix: PREFIX, clientId: login, username: login, password: USERS[login]!, state, now: Date.now, reconnectMs: 300, beforeAck });
    links.push(link);
    return { state, link };
  };
  /** Publish events `from`..`to` from kiosk k-1, all at once (QoS 1, as the kiosk does). */
  const publish = (from: number, to: number) => Promise.all(Array.from({ length: to - from + 1 }, (_, i) => kiosk.publishAsync(`${PREFIX}/k-1/events`, call(from + i), { qos: 1 })));
  before(async () => {
    broker = await startBroker(USERS, { operators: [...LOGINS] });
    kiosk = await connectAsync(broker.url, { username: 'k-1', password: USERS['k-1'], clientId: 'k-1', protocolVersion: 5, reconnectPeriod: 0 });
  });
  after(async () => {
    for (const l of links) await l.close();
    await kiosk?.endAsync();
    await broker?.dispose();
  });

  it('events that arrive together share one write to disk', async () => {
    let writes = 0;
    const { state, link } = console_('console-batch', () => writes++);
    await link.ready(WAIT_MS);
    await until(() => state.isLive, { realTimeoutMs: WAIT_MS, message: 'subscribed' });
    const before = writes;
    await publish(1, 400);
    await until(() => calls(state) === 400, { realTimeoutMs: WAIT_MS, message: '400 calls on the console' });
    await until(() => writes > before, { realTimeoutMs: WAIT_MS, message: 'written' });
    const used = writes - before;
    console.log(`# 400 events in ${used} writes`);
    assert.ok(used < 100, `400 events took ${used} writes to disk (one each would be 400)`);
  });

  it('events whose write failed are not acknowledged: the next console gets exactly those again', async () => {
    let failing = true;
    const first = console_('console-again', () => {
      if (failing) throw new Error('the disk is full');
    });
    await first.link.ready(WAIT_MS);
    await until(() => first.state.isLive, { realTimeoutMs: WAIT_MS, message: 'subscribed' });
    await publish(1, 5);
    await until(() => calls(first.state) === 5, { realTimeoutMs: WAIT_MS, message: 'five calls seen' });
    // Let the batch's failed write happen before the disk "recovers".
    await new Promise((r) => setImmediate(r));
    failing = false;
    await publish(6, 10);
    await until(() => calls(first.state) === 10, { realTimeoutMs: WAIT_MS, message: 'ten calls seen' });
    await first.link.close();

    const second = console_('console-again', () => undefined);
    await second.link.ready(WAIT_MS);
    // A marker after them: the broker hands over what was in flight first, so once it is here, so is the rest.
    await publish(11, 11);
    await until(() => second.state.rows().find((r) => r.kioskId === 'k-1')?.lastCallAt === endOf(11), { realTimeoutMs: WAIT_MS, message: 'the marker call' });
    assert.equal(calls(second.state), 6, 'events 1–5 again (never acknowledged) and the marker; not 6–10 (acknowledged once written)');
  });

  it('a console on a slow disk takes in a backlog of 1,500 events in a few writes, its connection up throughout', async () => {
    // A sync that takes 25 ms (a busy disk): one per event would be 37 s of the console doing nothing else
    // (no page, no commands), while the fleet's new calls queue up behind.
    let writes = 0;
    const slowSync = () => {
      writes++;
      const end = performance.now() + 25;
      while (performance.now() < end);
    };
    const first = console_('console-backlog', slowSync);
    await first.link.ready(WAIT_MS);
    await until(() => first.state.isLive, { realTimeoutMs: WAIT_MS, message: 'subscribed' });
    await first.link.close();
    await publish(1, 1500); // queued by the broker for the console's session while it is away

    writes = 0;
    const back = console_('console-backlog', slowSync);
    const drops: boolean[] = [];
    back.link.onConnectionChange((up) => drops.push(up));
    const t0 = Date.now();
    await until(() => calls(back.state) === 1500, { realTimeoutMs: 120_000, message: 'the backlog taken in' });
    console.log(`# 1,500 queued events taken in ${Date.now() - t0} ms, ${writes} writes`);
    assert.ok(writes < 150, `1,500 events took ${writes} writes to disk`);
    assert.deepEqual(drops.filter((up) => !up), [], 'the link never went down');
    assert.equal(back.link.connected, true);
  });

  it('a console slow to take in a backlog keeps its connection: its acknowledgements go out in parts meanwhile', async () => {
    // Each call takes the console 40 ms (a starved machine), and the broker hands over 600 at once: what
    // one turn of the event loop reads is then many seconds of work. The broker drops a client it hears
    // nothing from for 1.5 × KEEPALIVE_S, and the PUBACKs are what it hears (all held to the end of the
    // batch, the broker closed the connection in 2 of 4 runs).
    class SlowState extends FleetState {
      override onEvent(kioskId: string, payload: Buffer | string): void {
        const end = performance.now() + 40;
        while (performance.now() < end);
        super.onEvent(kioskId, payload);
      }
    }
    let writes = 0;
    const first = console_('console-busy', () => undefined);
    await first.link.ready(WAIT_MS);
    await until(() => first.state.isLive, { realTimeoutMs: WAIT_MS, message: 'subscribed' });
    await first.link.close();
    await publish(1, 600);

    const back = console_('console-busy', () => writes++, new SlowState({ now: Date.now }));
    const changes: boolean[] = [];
    back.link.onConnectionChange((up) => changes.push(up));
    const t0 = Date.now();
    await until(() => calls(back.state) >= 600 || changes.includes(false), { realTimeoutMs: 120_000, message: 'the backlog taken in' });
    console.log(`# 600 slow events taken in ${Date.now() - t0} ms, ${writes} writes; connection changes: ${JSON.stringify(changes)}`);
    assert.deepEqual(changes, [true], 'the link never went down');
    assert.equal(calls(back.state), 600);
  });
});
