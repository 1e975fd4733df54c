/**
 * The fleet link against a real Mosquitto (127.0.0.1, random port, password file, per-kiosk ACL): each
 * kiosk is a child Node process running the link (fixtures/mqtt-kiosk-child.ts); the test is the operator.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import { CLOSE_WAIT_MS } from '../../electron/fleet/mqtt-link.ts';
import { mosquittoMissing, PREFIX, recordMessages, startBroker, type SeenMessage, type Broker } from '../helpers/mosquitto.ts';
import { realDelay, until } from '../helpers/until.ts';

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP the MQTT broker tests: ${missing}`);

/** Operator logins, one per connection a test holds at once: with one client id per login (the shipped
 *  broker set-up), a second connection under the same login would take the first one's session over. */
const OPERATORS = ['operator', 'operator-2', 'operator-3', 'operator-4'] as const;
const USERS = { operator: 'op-secret-1', 'operator-2': 'op-secret-2', 'operator-3': 'op-secret-3', 'operator-4': 'op-secret-4', 'kiosk-a': 'a-secret-1', 'kiosk-b': 'b-secret-1' };
/** The login each persistent operator session (by the client id a test names) comes back under. */
const loginOf = new Map<string, keyof typeof USERS>();
let nextOperator = 0;
const CHILD = join(import.meta.dirname, 'fixtures', 'mqtt-kiosk-child.ts');

type Seen = SeenMessage;

class Operator {
  readonly seen: Seen[] = [];
  constructor(readonly client: MqttClient) {
    recordMessages(client, this.seen);
  }
  static async connect(broker: Broker, options: { user?: keyof typeof USERS; clientId?: string; clean?: boolean; subscribe?: string } = {}): Promise<Operator> {
    const fresh = () => OPERATORS[nextOperator++ % OPERATORS.length]!;
    const user = options.user ?? (options.clientId ? (loginOf.get(options.clientId) ?? fresh()) : fresh());
    if (options.clientId) loginOf.set(options.clientId, user);
    const client = await connectAsync(broker.url, {
      username: user,
      password: USERS[user],
      clientId: options.clientId ?? `${user}-${Math.random().toString(16).slice(2, 8)}`,
      clean: options.clean ?? true,
      protocolVersion: 5,
      reconnectPeriod: 0,
      ...(options.clean === false ? { properties: { sessionExpiryInterval: 600 } } : {}),
    });
    const op = new Operator(client);
    if (options.subscribe !== null) await client.subscribeAsync(options.subscribe ?? `${PREFIX}/#`, { qos: 1 });
    return op;
  }
  on(topic: string): Seen[] {
    return this.seen.filter((s) => s.topic === topic);
  }
  async command(kiosk: string, body: unknown): Promise<Record<string, unknown>> {
    const id = (body as { id?: string }).id;
    const before = this.on(`${PREFIX}/${kiosk}/cmd/result`).length;
    // Every command carries an expiry (here the MQTT 5 message expiry, as the console sends it too).
    await this.client.publishAsync(`${PREFIX}/${kiosk}/cmd`, typeof body === 'string' ? body : JSON.stringify(body), { qos: 1, properties: { messageExpiryInterval: 60 } });
    await until(() => this.on(`${PREFIX}/${kiosk}/cmd/result`).length > before, { realTimeoutMs: 15_000, message: `an answer to ${id}` });
    return this.on(`${PREFIX}/${kiosk}/cmd/result`)[before]!.body;
  }
  close(): Promise<void> {
    return this.client.endAsync();
  }
}

class Kiosk {
  readonly lines: Array<Record<string, unknown>> = [];
  private constructor(readonly proc: ChildProcess) {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        this.lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // a stray log line
      }
    });
  }
  static async start(broker: Broker, kioskId: keyof typeof USERS, dataDir: string, extra: Record<string, unknown> = {}): Promise<Kiosk> {
    const settings = { url: broker.url, username: kioskId, password: USERS[kioskId], topicPrefix: PREFIX, ...extra };
    const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(settings), kioskId, dataDir], { stdio: ['pipe', 'pipe', 'inherit'] });
    const kiosk = new Kiosk(proc);
    await until(() => kiosk.lines.some((l) => l.ready === true), { realTimeoutMs: 20_000, message: 'the kiosk child started' });
    return kiosk;
  }
  send(msg: unknown): void {
    this.proc.stdin!.write(`${JSON.stringify(msg)}\n`);
  }
  /** Starts or ends the pretend call, and waits until the child has: a command sent next travels by the
   *  broker, and the child may read it before a line on its stdin that was written first. */
  async setInCall(value: boolean): Promise<void> {
    const seen = this.lines.filter((l) => 'inCallNow' in l).length;
    this.send({ inCall: value });
    await until(() => this.lines.filter((l) => 'inCallNow' in l).length > seen, { realTimeoutMs: 10_000, message: 'the kiosk child took the call state' });
  }
  did(): unknown[] {
    return this.lines.filter((l) => 'did' in l).map((l) => l.did);
  }
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      this.proc.once('exit', () => resolve());
      this.proc.kill(signal);
    });
  }
}

describe('fleet link with a real Mosquitto', { skip: missing ?? false }, () => {
  let broker: Broker;
  const dirs: string[] = [];
  const kiosks: Kiosk[] = [];
  const operators: Operator[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'ak-fleet-'));
    dirs.push(d);
    return d;
  };
  const kiosk = async (id: keyof typeof USERS, dir = tempDir(), extra: Record<string, unknown> = {}) => {
    const k = await Kiosk.start(broker, id, dir, extra);
    kiosks.push(k);
    return k;
  };
  const operator = async (options: Parameters<typeof Operator.connect>[1] = {}) => {
    const op = await Operator.connect(broker, options);
    operators.push(op);
    return op;
  };

  before(async () => {
    broker = await startBroker(USERS, { operators: OPERATORS.slice(1), groups: { 'kiosk-a': 'lobby' } });
  });
  after(async () => {
    for (const k of kiosks) await k.kill();
    for (const op of operators) await op.client.endAsync(true).catch(() => undefined);
    await broker?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('publishes a retained status, and the last will says offline after the kiosk is killed with SIGKILL', async () => {
    const op = await operator();
    const k = await kiosk('kiosk-a');
    const topic = `${PREFIX}/kiosk-a/status`;
    await until(() => op.on(topic).some((s) => s.body.online === true), { realTimeoutMs: 15_000, message: 'online status' });
    const online = op.on(topic).find((s) => s.body.online === true)!.body;
    assert.deepEqual(
      { ...online, at: typeof online.at },
      {
        online: true,
        kioskId: 'kiosk-a',
        group: null,
        version: '9.9.9',
        mode: 'demo',
        phase: 'idle',
        cast: ['ava'],
        open: true,
        nextChangeAt: null,
        today: { sessions: 2, credits: 7.5 },
        lastErrorCode: null,
        queued: 0,
        droppedEvents: 0,
        policyError: null,
        at: 'string',
      },
    );
    // A late subscriber gets it as the retained message.
    const late = await operator({ subscribe: topic });
    await until(() => late.on(topic).length > 0, { realTimeoutMs: 10_000 });
    assert.equal(late.on(topic)[0]!.retain, true);
    assert.equal(late.on(topic)[0]!.body.online, true);

    // A change is republished; an unchanged status is not.
    k.send({ phase: 'live' });
    await until(() => op.on(topic).some((s) => s.body.phase === 'live'), { realTimeoutMs: 10_000 });
    const count = op.on(topic).length;
    k.send({ phase: 'live' });
    await realDelay(1_300);
    assert.equal(op.on(topic).length, count, 'an unchanged status is not published again');

    await k.kill('SIGKILL');
    await until(() => op.on(topic).at(-1)?.body.online === false, { realTimeoutMs: 15_000, message: 'the last will' });
    assert.deepEqual(op.on(topic).at(-1)!.body, { online: false, kioskId: 'kiosk-a', reason: 'connection lost' });
    const later = await operator({ subscribe: topic });
    await until(() => later.on(topic).length > 0, { realTimeoutMs: 10_000 });
    assert.deepEqual(later.on(topic)[0]!.body, { online: false, kioskId: 'kiosk-a', reason: 'connection lost' });
    assert.equal(later.on(topic)[0]!.retain, true);
  });

  it('queues events on disk while the broker is away and delivers each once, in order, after it returns', async () => {
    // A persistent operator session: the broker keeps its QoS 1 messages across its own restart.
    const opId = 'operator-events';
    let op = await operator({ clientId: opId, clean: false, subscribe: `${PREFIX}/kiosk-b/events` });
    const dir = tempDir();
    let k = await kiosk('kiosk-b', dir);
    const topic = `${PREFIX}/kiosk-b/events`;
    k.send({ record: { kind: 'session', n: 1 } });
    await until(() => op.on(topic).length === 1, { realTimeoutMs: 15_000, message: 'the first event' });
    await op.client.endAsync();

    await broker.stop();
    const queuedBefore = k.lines.filter((l) => l.queuedRecord).length;
    for (const n of [2, 3, 4]) k.send({ record: { kind: 'session', n } });
    await until(() => k.lines.filter((l) => l.queuedRecord).length === queuedBefore + 3, { realTimeoutMs: 15_000, message: 'the records on disk' });
    // The kiosk itself goes down too: the queue is on disk.
    await k.kill('SIGKILL');
    await broker.start();
    op = await operator({ clientId: opId, clean: false, subscribe: `${PREFIX}/kiosk-b/events` });
    k = await kiosk('kiosk-b', dir);
    k.send({ record: { kind: 'session', n: 5 } });
    await until(() => op.on(topic).length >= 4, { realTimeoutMs: 10_000, message: 'the queued events' });
    await realDelay(1_000); // any repeat would arrive by now
    const first = await Promise.resolve(op.on(topic));
    const ns = first.map((s) => (s.body.record as { n: number }).n);
    assert.deepEqual(ns, [2, 3, 4, 5]);
    const ids = first.map((s) => s.body.id as string);
    assert.equal(new Set(ids).size, ids.length, 'each event id once');
    const seqs = ids.map((id) => Number(id.split('-')[1]));
    assert.deepEqual(seqs, [2, 3, 4, 5], 'ids carry the kiosk\'s sequence (the first event was 1)');
    assert.ok(first.every((s) => s.body.kioskId === 'kiosk-b' && typeof s.body.at === 'string'));
  });

  it('counts the events dropped from a full queue in the status, across a restart of the kiosk', async () => {
    const op = await operator();
    const dir = tempDir();
    const k = await kiosk('kiosk-b', dir, { queueLimit: 10 });
    const topic = `${PREFIX}/kiosk-b/status`;
    await until(() => op.on(topic).some((s) => s.body.online === true), { realTimeoutMs: 15_000, message: 'online' });
    await broker.stop();
    for (let n = 1; n <= 13; n++) k.send({ record: { kind: 'session', n } });
    await until(() => k.lines.filter((l) => l.queuedRecord).length === 13, { realTimeoutMs: 15_000, message: 'the records on disk' });
    await k.kill('SIGKILL');
    await broker.start();
    const back = await operator({ subscribe: topic });
    await kiosk('kiosk-b', dir, { queueLimit: 10 });
    await until(() => back.on(topic).some((s) => s.body.online === true && s.body.droppedEvents === 3), { realTimeoutMs: 20_000, message: 'three events dropped, said in the status' });
  });

  it('answers every command, runs each once per id, refuses interrupting ones during a call unless forced, and does nothing for a malformed one', async () => {
    const op = await operator();
    const k = await kiosk('kiosk-a');
    await until(() => op.on(`${PREFIX}/kiosk-a/status`).some((s) => s.body.online === true), { realTimeoutMs: 15_000 });

    const ping = await op.command('kiosk-a', { id: 'c1', cmd: 'ping' });
    assert.deepEqual({ ...ping, at: typeof ping.at }, { id: 'c1', cmd: 'ping', ok: true, result: { pong: true, version: '9.9.9' }, at: 'string' });

    const reload = await op.command('kiosk-a', { id: 'c2', cmd: 'reload' });
    assert.deepEqual(reload.result, { reloaded: true });
    // The same id again: the same answer, and the kiosk did not reload twice.
    const again = await op.command('kiosk-a', { id: 'c2', cmd: 'reload' });
    assert.deepEqual(again, reload);

    const shot = await op.command('kiosk-a', { id: 'c3', cmd: 'screenshot' });
    const result = shot.result as { mime: string; width: number; height: number; png: string };
    assert.deepEqual([result.mime, result.width, result.height], ['image/png', 1, 1]);
    assert.deepEqual([...Buffer.from(result.png, 'base64').subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');
    // Asked again with the same id: not taken again, and the picture is not kept for repeats.
    const shotAgain = await op.command('kiosk-a', { id: 'c3', cmd: 'screenshot' });
    assert.deepEqual(shotAgain.result, { mime: 'image/png', width: 1, height: 1, png: null, note: 'The picture was sent with the first answer; send a new id for a new screenshot.' });

    const apply = await op.command('kiosk-a', { id: 'c4', cmd: 'apply', settings: { avatar: { name: 'Max' }, idle: { promptSeconds: 60 }, schedule: null } });
    assert.deepEqual(apply.result, { applied: ['avatar', 'idle', 'schedule'] });
    const badCast = await op.command('kiosk-a', { id: 'c4b', cmd: 'apply', settings: { cast: ['nobody'] } });
    assert.deepEqual(badCast.error, { code: 'invalid_config', message: 'There is no cast member "nobody" in this kiosk\'s avatars.' });

    // A live call: reload, restart and apply need force; end-call does not.
    await k.setInCall(true);
    const refused = await op.command('kiosk-a', { id: 'c5', cmd: 'restart' });
    assert.equal(refused.ok, false);
    assert.deepEqual(refused.error, { code: 'busy', message: 'A visitor is in a call; "restart" would interrupt it. Send it again with "force": true to end the call first.' });
    const forced = await op.command('kiosk-a', { id: 'c6', cmd: 'reload', force: true });
    assert.equal(forced.ok, true);
    await k.setInCall(true);
    const ended = await op.command('kiosk-a', { id: 'c7', cmd: 'end-call' });
    assert.deepEqual(ended.result, { ended: true });
    const noCall = await op.command('kiosk-a', { id: 'c8', cmd: 'end-call' });
    assert.deepEqual(noCall.result, { ended: false });
    const restart = await op.command('kiosk-a', { id: 'c9', cmd: 'restart' });
    assert.deepEqual(restart.result, { restarting: true });
    await until(() => k.did().at(-1) === 'restart', { realTimeoutMs: 10_000 });

    // Malformed or forbidden: an error answer, nothing done.
    const doneBefore = k.did().length;
    const notJson = await op.command('kiosk-a', '{"id":"m1", cmd: ping');
    assert.deepEqual(notJson.error, { code: 'invalid_request', message: 'The command is not JSON.' });
    assert.equal(notJson.id, 'm1', 'the id is echoed whenever it can be read');
    const unknown = await op.command('kiosk-a', { id: 'm2', cmd: 'format-disk' });
    assert.deepEqual([unknown.id, unknown.ok, (unknown.error as { message: string }).message], ['m2', false, 'Unknown command "format-disk"; known: ping, reload, restart, end-call, screenshot, apply, update-check, update-install, update-pin, set-volume.']);
    const forbidden = await op.command('kiosk-a', { id: 'm3', cmd: 'apply', settings: { service: { baseUrl: 'https://evil.example' } } });
    assert.equal((forbidden.error as { message: string }).message, '"apply" cannot change "service"; it may change only avatar.name, avatar.persona, cast, schedule, idle.promptSeconds, idle.hangupSeconds.');
    const key = await op.command('kiosk-a', { id: 'm4', cmd: 'apply', settings: { avatar: { name: 'X', imagePath: '/etc/passwd' } } });
    assert.match((key.error as { message: string }).message, /cannot change "avatar\.imagePath"/);
    const pin = await op.command('kiosk-a', { id: 'm5', cmd: 'apply', settings: { staffPinHash: 'x' } });
    assert.match((pin.error as { message: string }).message, /cannot change "staffPinHash"/);
    const badValue = await op.command('kiosk-a', { id: 'm6', cmd: 'apply', settings: { idle: { promptSeconds: 1 } } });
    assert.match((badValue.error as { message: string }).message, /^Invalid command at "settings\.idle\.promptSeconds"/);
    await realDelay(200);
    assert.equal(k.did().length, doneBefore, 'nothing was done for the refused commands');
    assert.deepEqual(k.did(), ['reload', 'screenshot', 'apply', 'apply', 'end-call', 'reload', 'end-call', 'restart']);
  });

  it('takes commands from the fleet-wide and its group\'s topics, and answers each on its own result topic', async () => {
    // The earlier tests' kiosks hold the same client ids: two clients under one id throw each other out.
    for (const k of kiosks) await k.kill();
    const op = await operator();
    await kiosk('kiosk-a', tempDir(), { group: 'lobby' });
    await kiosk('kiosk-b');
    await until(() => ['kiosk-a', 'kiosk-b'].every((k) => op.on(`${PREFIX}/${k}/status`).some((s) => s.body.online === true)), { realTimeoutMs: 15_000 });
    assert.equal(op.on(`${PREFIX}/kiosk-a/status`).at(-1)!.body.group, 'lobby');
    const results = (k: string, id: string) => op.on(`${PREFIX}/${k}/cmd/result`).filter((s) => s.body.id === id);
    await op.client.publishAsync(`${PREFIX}/_group/lobby/cmd`, JSON.stringify({ id: 'g1', cmd: 'ping' }), { qos: 1, properties: { messageExpiryInterval: 60 } });
    await op.client.publishAsync(`${PREFIX}/_fleet/cmd`, JSON.stringify({ id: 'f1', cmd: 'ping' }), { qos: 1, properties: { messageExpiryInterval: 60 } });
    await until(() => results('kiosk-a', 'g1').length === 1 && results('kiosk-a', 'f1').length === 1 && results('kiosk-b', 'f1').length === 1, { realTimeoutMs: 15_000, message: 'the answers' });
    await realDelay(500);
    assert.equal(results('kiosk-b', 'g1').length, 0, 'kiosk-b is not in the group');
    assert.equal(results('kiosk-a', 'g1')[0]!.body.ok, true);
  });

  it("refuses, by the broker's ACL, a command published on another kiosk's topic", async () => {
    for (const earlier of kiosks) await earlier.kill();
    const k = await kiosk('kiosk-a');
    const watcher = await operator();
    await until(() => watcher.on(`${PREFIX}/kiosk-a/status`).some((s) => s.body.online === true), { realTimeoutMs: 15_000 });
    const intruder = await operator({ user: 'kiosk-b', subscribe: null as unknown as string });
    const before = k.did().length;
    // MQTT 5: the broker answers the publish with "not authorized" (135) and drops it.
    await assert.rejects(intruder.client.publishAsync(`${PREFIX}/kiosk-a/cmd`, JSON.stringify({ id: 'x1', cmd: 'restart' }), { qos: 1 }), (error: Error & { code?: number }) => {
      assert.equal(error.code, 135);
      return true;
    });
    // Nor may it read kiosk-a's commands: mosquitto accepts the subscription but delivers nothing on it.
    await intruder.client.subscribeAsync(`${PREFIX}/kiosk-a/cmd`, { qos: 1 });
    const ping = await watcher.command('kiosk-a', { id: 'x2', cmd: 'ping' });
    assert.equal(ping.ok, true);
    await realDelay(300);
    assert.deepEqual(intruder.seen, [], "kiosk-b saw none of kiosk-a's traffic");
    await realDelay(500);
    assert.equal(k.did().length, before);
    assert.equal(watcher.on(`${PREFIX}/kiosk-a/cmd/result`).filter((s) => s.body.id === 'x1').length, 0);
  });

  it('closes within its bound when the broker hangs (stopped, its connection open): a kiosk that quits is not held by its fleet link', async () => {
    // Alone on its login: an earlier test's kiosk-a would take the session over and leave this one unconnected.
    for (const earlier of kiosks) await earlier.kill();
    const op = await operator();
    const k = await kiosk('kiosk-a');
    await until(() => op.on(`${PREFIX}/kiosk-a/status`).some((s) => s.body.online === true), { realTimeoutMs: 15_000 });
    const exited = new Promise<number>((resolve) => k.proc.once('exit', () => resolve(Date.now())));
    process.kill(broker.pid!, 'SIGSTOP');
    try {
      const t0 = Date.now();
      k.send({ close: true });
      const bound = CLOSE_WAIT_MS * 2 + 5_000;
      const at = await Promise.race([exited, realDelay(bound).then(() => null)]);
      assert.ok(at !== null, `the kiosk had not closed ${bound} ms after it was asked to`);
      assert.ok(k.lines.some((l) => l.closingConnected === true), 'the link was connected when asked to close (so it tried the hung broker)');
      assert.ok(at - t0 >= CLOSE_WAIT_MS - 200, `it waited for the broker first (${at - t0} ms)`);
    } finally {
      process.kill(broker.pid!, 'SIGCONT');
    }
  });
});
