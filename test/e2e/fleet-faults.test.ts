/**
 * The fleet link's faults, through the path an operator's kiosk takes: the administrator's policy file on
 * disk (AVATAR_KIOSK_POLICY, root-owned like /etc/avatar-kiosk) and config.json → the browser-mode kiosk
 * (electron/browser/kiosk-host.ts, the demo emulator) → a real Mosquitto with the per-kiosk ACL → what
 * Debian's Chromium shows of the BUILT renderer, and what the retained status, the command answers and
 * the events topic say.
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/fleet-faults.test.ts
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import type { Browser, Page } from 'playwright';
import { BROWSER_MODE_LACKS, startBrowserKiosk, type BrowserKiosk } from '../../electron/browser/kiosk-host.ts';
import { createLogger } from '../../electron/core/log.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { mosquittoMissing, PREFIX, recordMessages, startBroker, type SeenMessage, type Broker } from '../helpers/mosquitto.ts';
import { realDelay, until } from '../helpers/until.ts';
import { axeViolations } from './access-helpers.ts';
import { launchChromium, RENDERER_DIR, ROOT, SCREENS_DIR, screenIs } from './harness.ts';

const missing = mosquittoMissing() ?? (existsSync(join(RENDERER_DIR, 'index.html')) ? null : 'the renderer is not built (npm run build)');
if (missing) console.log(`# SKIP the fleet fault tests: ${missing}`);

const KIOSKS = ['kiosk-1', 'kiosk-2', 'kiosk-3', 'kiosk-4', 'kiosk-5', 'kiosk-6', 'kiosk-7', 'kiosk-8', 'kiosk-9', 'kiosk-10', 'kiosk-11'] as const;
type KioskId = (typeof KIOSKS)[number];
const USERS: Record<string, string> = { operator: 'op-secret-9', 'operator-2': 'op-secret-10', ...Object.fromEntries(KIOSKS.map((k) => [k, `${k}-secret`])) };
/** Closed all week: no weekday has opening ranges. */
const CLOSED = { timeZone: 'UTC', weekly: {} };
const inMinutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();

type Seen = SeenMessage;

/** The operator: sees every topic under the prefix, sends commands. */
class Operator {
  readonly seen: Seen[] = [];
  constructor(readonly client: MqttClient) {
    recordMessages(client, this.seen);
  }
  on(topic: string): Seen[] {
    return this.seen.filter((s) => s.topic === topic);
  }
  status(kiosk: string): Record<string, unknown> | undefined {
    return this.on(`${PREFIX}/${kiosk}/status`).at(-1)?.body;
  }
  results(kiosk: string, id: string): Array<Record<string, unknown>> {
    return this.on(`${PREFIX}/${kiosk}/cmd/result`).filter((s) => s.body.id === id).map((s) => s.body);
  }
  /** Published with an MQTT 5 message expiry (5 min unless given; null: none), as the console does. */
  async publish(kiosk: string, body: unknown, options: { retain?: boolean; expirySeconds?: number | null } = {}): Promise<void> {
    const expiry = options.expirySeconds === undefined ? 300 : options.expirySeconds;
    await this.client.publishAsync(`${PREFIX}/${kiosk}/cmd`, typeof body === 'string' ? body : JSON.stringify(body), {
      qos: 1,
      retain: options.retain ?? false,
      ...(expiry !== null ? { properties: { messageExpiryInterval: expiry } } : {}),
    });
  }
  /** Send and wait for the answer carrying `id` (the `n`th one). */
  async command(kiosk: string, body: Record<string, unknown> | string, id: string, options: { retain?: boolean; expirySeconds?: number | null; n?: number } = {}): Promise<Record<string, unknown>> {
    const n = options.n ?? this.results(kiosk, id).length + 1;
    await this.publish(kiosk, body, options);
    await until(() => this.results(kiosk, id).length >= n, { realTimeoutMs: 15_000, message: `the answer to ${id}` });
    return this.results(kiosk, id)[n - 1]!;
  }
}

describe('fleet link faults (browser-mode kiosk, real Mosquitto, Chromium)', { skip: missing ?? false }, () => {
  let broker: Broker;
  let op: Operator;
  let browser: Browser;
  let pin: string;
  const dirs: string[] = [];
  const kiosks: BrowserKiosk[] = [];
  const logLines: string[] = [];

  const tempDir = (mode = 0o755) => {
    const d = mkdtempSync(join(tmpdir(), 'ak-fleet-faults-'));
    chmodSync(d, mode);
    dirs.push(d);
    return d;
  };
  const mqttFor = (id: KioskId) => ({ url: broker.url, kioskId: id, username: id, password: USERS[id]!, topicPrefix: PREFIX });
  /** A policy file the way an administrator installs it: root's, in a folder only root may write. */
  const policyFile = (content: unknown, mode = 0o644) => {
    const path = join(tempDir(), 'policy.json');
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    chmodSync(path, mode);
    return path;
  };
  const startKiosk = async (options: { config: Record<string, unknown>; policy?: string; dataDir?: string; onQuit?: (why: string) => void }) => {
    const dataDir = options.dataDir ?? tempDir(0o700);
    if (!options.dataDir) writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ prewarm: { mode: 'off' }, presence: { cameraEnabled: false }, returnToAttractSeconds: 3, ...options.config }));
    const kiosk = await startBrowserKiosk({
      dataDir,
      env: options.policy ? { AVATAR_KIOSK_POLICY: options.policy } : { AVATAR_KIOSK_POLICY: join(dataDir, 'no-policy.json') },
      appRoot: ROOT,
      rendererDir: RENDERER_DIR,
      logger: createLogger({ level: 'debug', sink: (line) => void logLines.push(line) }),
      version: '0.1.0-fleet',
      emulatorKnobs: { warmupMs: { audio: 0, video: 800 }, endingMs: 200 },
      ...(options.onQuit ? { onQuit: options.onQuit } : {}),
    });
    kiosks.push(kiosk);
    return { kiosk, dataDir };
  };
  const online = (id: KioskId) => until(() => op.status(id)?.online === true, { realTimeoutMs: 20_000, message: `${id} online` });
  const openPage = async (kiosk: BrowserKiosk, options: { browser?: Browser } = {}): Promise<Page> => {
    const context = await (options.browser ?? browser).newContext({ viewport: { width: 1280, height: 720 } });
    const page = await context.newPage();
    await page.goto(kiosk.host.launchUrl());
    return page;
  };
  const shoot = async (page: Page, name: string) => {
    await mkdir(SCREENS_DIR, { recursive: true });
    await page.waitForTimeout(500);
    await page.screenshot({ path: join(SCREENS_DIR, `${name}.png`) });
  };

  before(async () => {
    pin = await hashPin('246813');
    // The broker's own bound on what any client may publish (docs/fleet-commands.md).
    broker = await startBroker(USERS, { maxPacketSize: 4 * 1024 * 1024, operators: ['operator-2'] });
    op = new Operator(await connectAsync(broker.url, { username: 'operator', password: USERS.operator, protocolVersion: 5, reconnectPeriod: 500, clientId: 'operator-faults' }));
    await op.client.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    for (const k of kiosks) await k.close().catch(() => undefined);
    await op?.client.endAsync(true).catch(() => undefined);
    await broker?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a policy others can write that names staffPinHash: no setup screen but out of order, no call, and why for staff and the fleet', async () => {
    const policy = policyFile({ staffPinHash: pin }, 0o664);
    const { kiosk } = await startKiosk({ config: { mqtt: mqttFor('kiosk-1') }, policy });
    const page = await openPage(kiosk);
    await screenIs(page, 'out-of-order');
    assert.equal(await page.locator('[data-testid=setup-screen]').count(), 0, 'setup never opens');
    await page.locator('summary').click();
    assert.match(await page.locator('[data-testid=out-of-order-reason]').innerText(), /can be written by other users \(mode 664\)/);
    await shoot(page, 'fleet-out-of-order');
    assert.deepEqual(await axeViolations(page), [], 'axe on the out-of-order screen');
    // No visitor can start a call, and nobody can choose a PIN from the page.
    assert.equal((await kiosk.channels.dispatch('kiosk:session:start', undefined)).ok, false);
    const setPin = await kiosk.channels.dispatch('kiosk:staff:set-pin', { pin: '135790' });
    assert.equal(setPin.ok, false);
    await online('kiosk-1');
    assert.match(String(op.status('kiosk-1')!.policyError), /can be written by other users/);
    await page.context().close();
  });

  it('an over-long staffPinHash in a proper policy: out of order (not setup), and the refused block is named to the fleet', async () => {
    const policy = policyFile({ staffPinHash: `scrypt$16384$8$1$${'A'.repeat(600)}`, mqtt: mqttFor('kiosk-2') });
    const { kiosk } = await startKiosk({ config: {}, policy });
    const page = await openPage(kiosk);
    await screenIs(page, 'out-of-order');
    assert.equal((await kiosk.channels.dispatch('kiosk:session:start', undefined)).ok, false);
    await online('kiosk-2');
    assert.match(String(op.status('kiosk-2')!.policyError), /Policy block "staffPinHash" was refused whole/);
    await page.context().close();
  });

  it('the policy\'s mqtt and schedule blocks apply whole: the kiosk logs in as itself, shows closed, and apply cannot change the hours', async () => {
    const policy = policyFile({ staffPinHash: pin, mqtt: { ...mqttFor('kiosk-3'), queueLimit: 50 }, schedule: CLOSED });
    const { kiosk } = await startKiosk({ config: {}, policy });
    const page = await openPage(kiosk);
    await screenIs(page, 'closed');
    // Only user kiosk-3 (the policy's login) may publish on this topic (the broker's ACL).
    await online('kiosk-3');
    assert.equal(op.status('kiosk-3')!.open, false);
    assert.equal(op.status('kiosk-3')!.policyError, null);
    const refused = await op.command('kiosk-3', { id: 'p1', cmd: 'apply', settings: { schedule: null } }, 'p1');
    assert.deepEqual(refused.error, { code: 'invalid_request', message: '"schedule" is set by the administrator\'s policy file on this kiosk; change it there.' });
    await realDelay(500);
    await screenIs(page, 'closed');
    await page.context().close();

    // A schedule block that fails is locked with no value: config.json's hours do not stand in.
    const bad = policyFile({ staffPinHash: pin, mqtt: mqttFor('kiosk-4'), schedule: { timeZone: 'Mars/Olympus', weekly: { mon: ['09:00-17:00'] } } });
    const second = await startKiosk({ config: { schedule: CLOSED }, policy: bad });
    await online('kiosk-4');
    assert.match(String(op.status('kiosk-4')!.policyError), /^Policy block "schedule" was refused whole \(at "schedule.timeZone": "Mars\/Olympus" is not a known time zone/);
    const locked = await op.command('kiosk-4', { id: 'p2', cmd: 'apply', settings: { schedule: CLOSED } }, 'p2');
    assert.equal((locked.error as { code: string }).code, 'invalid_request');
    const page2 = await openPage(second.kiosk);
    await screenIs(page2, 'attract');
    await page2.context().close();
  });

  it('a retained restart is refused at every connect; commands need an expiry', async () => {
    const quits: string[] = [];
    const onQuit = (why: string) => void quits.push(why);
    const first = await startKiosk({ config: { staffPinHash: pin, mqtt: mqttFor('kiosk-5') }, onQuit });
    const dataDir = first.dataDir;
    await online('kiosk-5');
    const retained = await op.command('kiosk-5', { id: 'loop', cmd: 'restart' }, 'loop', { retain: true });
    assert.equal((retained.error as { code: string }).code, 'retained');
    // The broker hands a retained message over again whenever the kiosk subscribes: at its next start.
    await first.kiosk.close();
    const second = await startKiosk({ config: {}, dataDir, onQuit });
    await until(() => op.results('kiosk-5', 'loop').length >= 2, { realTimeoutMs: 30_000, message: 'the retained command again at the next start' });
    assert.deepEqual(op.results('kiosk-5', 'loop').map((r) => (r.error as { code: string }).code), ['retained', 'retained']);
    assert.equal(quits.length, 0, 'the retained restart never ran');
    const answersBefore = op.on(`${PREFIX}/kiosk-5/cmd/result`).length;
    await op.client.publishAsync(`${PREFIX}/kiosk-5/cmd`, '', { qos: 1, retain: true }); // clear it: not answered

    const noExpiry = await op.command('kiosk-5', { id: 'e0', cmd: 'ping' }, 'e0', { expirySeconds: null });
    assert.equal(op.on(`${PREFIX}/kiosk-5/cmd/result`).length, answersBefore + 1, 'the empty message that cleared it got no answer');
    assert.match(String((noExpiry.error as { message: string }).message), /carries no expiry/);
    const expired = await op.command('kiosk-5', { id: 'e1', cmd: 'restart', expiresAt: new Date(Date.now() - 1000).toISOString() }, 'e1', { expirySeconds: null });
    assert.equal((expired.error as { code: string }).code, 'expired');
    assert.equal(quits.length, 0);

    const valid = await op.command('kiosk-5', { id: 'e2', cmd: 'ping', expiresAt: inMinutes(30) }, 'e2', { expirySeconds: null });
    assert.equal(valid.ok, true, 'an expiresAt alone is enough');
    await second.kiosk.close();
  });

  it('a command runs once per id, even after the kiosk restarted', async () => {
    const first = await startKiosk({ config: { staffPinHash: pin, mqtt: mqttFor('kiosk-11') } });
    await online('kiosk-11');
    const once = await op.command('kiosk-11', { id: 'once', cmd: 'apply', settings: { avatar: { name: 'First' } } }, 'once');
    assert.deepEqual(once.result, { applied: ['avatar.name'] });
    const next = await op.command('kiosk-11', { id: 'next', cmd: 'apply', settings: { avatar: { name: 'Second' } } }, 'next');
    assert.equal(next.ok, true);
    await first.kiosk.close();
    await until(() => op.status('kiosk-11')?.online === false, { realTimeoutMs: 10_000, message: 'offline' });
    // Back on the same data folder: the same id (a QoS 1 redelivery, a script's retry) is answered as before, not run.
    const again = await startKiosk({ config: {}, dataDir: first.dataDir });
    await online('kiosk-11');
    const repeat = await op.command('kiosk-11', { id: 'once', cmd: 'apply', settings: { avatar: { name: 'First' } } }, 'once');
    assert.deepEqual(repeat.result, { applied: ['avatar.name'] });
    await realDelay(300);
    assert.equal(again.kiosk.kiosk.config.avatar.name, 'Second', 'not run a second time');
  });

  it('commands sent while the kiosk is offline arrive after it reconnects, within their expiry; an expired one never runs', async () => {
    const { kiosk, dataDir } = await startKiosk({ config: { staffPinHash: pin, mqtt: mqttFor('kiosk-6') } });
    await online('kiosk-6');
    await kiosk.close();
    await until(() => op.status('kiosk-6')?.online === false, { realTimeoutMs: 10_000, message: 'offline' });
    await op.publish('kiosk-6', { id: 'q1', cmd: 'apply', settings: { avatar: { name: 'Queued' } } }, { expirySeconds: 120 });
    await op.publish('kiosk-6', { id: 'q2', cmd: 'apply', settings: { avatar: { name: 'Stale' } } }, { expirySeconds: 1 });
    await realDelay(2_500); // q2's expiry passes while the kiosk is away
    const back = await startKiosk({ config: {}, dataDir });
    await until(() => op.results('kiosk-6', 'q1').length === 1, { realTimeoutMs: 20_000, message: 'the queued command' });
    assert.deepEqual(op.results('kiosk-6', 'q1')[0]!.result, { applied: ['avatar.name'] });
    const page = await openPage(back.kiosk);
    await screenIs(page, 'attract');
    assert.equal(await page.locator('#attract-title').innerText(), 'Queued');
    await realDelay(500);
    assert.deepEqual(op.results('kiosk-6', 'q2'), [], 'the expired command was dropped by the broker');
    await page.context().close();
  });

  it('apply takes effect on the running screen: schedule null reopens it, a new name shows without a reload', async () => {
    const { kiosk } = await startKiosk({ config: { staffPinHash: pin, schedule: CLOSED, mqtt: mqttFor('kiosk-7') } });
    const page = await openPage(kiosk);
    await screenIs(page, 'closed');
    // A mark on this page's window: a reload would lose it.
    await page.evaluate(`window.__sameDocument = true`);
    await online('kiosk-7');
    const open = await op.command('kiosk-7', { id: 'a1', cmd: 'apply', settings: { schedule: null } }, 'a1');
    assert.equal(open.ok, true);
    await screenIs(page, 'attract');
    await until(() => op.status('kiosk-7')?.open === true, { realTimeoutMs: 10_000, message: 'the status says open' });
    const renamed = await op.command('kiosk-7', { id: 'a2', cmd: 'apply', settings: { avatar: { name: 'Zoe' } } }, 'a2');
    assert.equal(renamed.ok, true);
    await page.locator('#attract-title', { hasText: 'Zoe' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.evaluate(`window.__sameDocument === true`), true, 'the page was not reloaded');
    await page.context().close();
  });

  it('browser mode refuses reload, screenshot and restart before touching the call, in its words; set-volume reaches its page during the call; the operator\'s end-call is recorded as the operator\'s; ids are echoed', async () => {
    const quits: string[] = [];
    const { kiosk } = await startKiosk({ config: { staffPinHash: pin, mqtt: mqttFor('kiosk-8') }, onQuit: (why) => void quits.push(why) });
    await online('kiosk-8');
    const page = await openPage(kiosk);
    await screenIs(page, 'attract');
    await page.click('[data-testid=start]');
    await screenIs(page, 'live', 20_000);
    const reload = await op.command('kiosk-8', { id: 'b1', cmd: 'reload', force: true }, 'b1');
    assert.equal(kiosk.kiosk.calls.state.phase, 'live', 'a forced reload the kiosk cannot do must not hang up first');
    assert.deepEqual(reload.error, { code: 'unsupported', message: BROWSER_MODE_LACKS.reload });
    const shot = await op.command('kiosk-8', { id: 'b2', cmd: 'screenshot' }, 'b2');
    assert.deepEqual(shot.error, { code: 'unsupported', message: BROWSER_MODE_LACKS.screenshot });
    const restart = await op.command('kiosk-8', { id: 'b4', cmd: 'restart', force: true }, 'b4');
    assert.deepEqual(restart.error, { code: 'unsupported', message: BROWSER_MODE_LACKS.restart });
    assert.equal(quits.length, 0, 'the kiosk did not stop');
    // set-volume interrupts nothing: the page (over the browser mode's socket) plays the avatar's voice at it.
    const volume = await op.command('kiosk-8', { id: 'b5', cmd: 'set-volume', percent: 30 }, 'b5');
    assert.deepEqual(volume.result, { avatarVolume: 30 });
    let heard: unknown = null;
    for (let i = 0; i < 100 && heard !== 0.3; i++, await realDelay(100)) heard = await page.evaluate(`document.querySelector('[data-avatar-voice]')?.volume ?? null`);
    assert.equal(heard, 0.3, "the avatar's voice element at 30 %");
    await until(() => op.status('kiosk-8')?.avatarVolume === 30, { realTimeoutMs: 10_000, message: 'the status at 30 %' });
    await realDelay(500);
    assert.equal(kiosk.kiosk.calls.state.phase, 'live', 'the visitor\'s call goes on');
    await screenIs(page, 'live');

    const end = await op.command('kiosk-8', { id: 'b3', cmd: 'end-call' }, 'b3');
    assert.deepEqual(end.result, { ended: true });
    await until(() => op.on(`${PREFIX}/kiosk-8/events`).some((e) => (e.body.record as { kind?: string }).kind === 'session'), { realTimeoutMs: 15_000, message: 'the call record' });
    const record = op.on(`${PREFIX}/kiosk-8/events`).find((e) => (e.body.record as { kind?: string }).kind === 'session')!.body.record as Record<string, unknown>;
    assert.equal(record.end_reason, 'operator');

    // A malformed command's id is echoed whenever it can be read.
    const numeric = await op.command('kiosk-8', '{"id": 42, "cmd": "ping"}', '42');
    assert.equal(numeric.ok, false);
    const torn = await op.command('kiosk-8', '{"id":"torn-1","cmd":"pi', 'torn-1');
    assert.deepEqual(torn.error, { code: 'invalid_request', message: 'The command is not JSON.' });
    await page.context().close();
  });

  it('a call that fails for want of a microphone is recorded with its error code, not as the visitor\'s hang-up', async () => {
    const noMic = await launchChromium({ grantMedia: false });
    try {
      const { kiosk } = await startKiosk({ config: { staffPinHash: pin, mqtt: mqttFor('kiosk-9') } });
      await online('kiosk-9');
      const page = await openPage(kiosk, { browser: noMic });
      await screenIs(page, 'attract');
      await page.click('[data-testid=start]');
      await screenIs(page, 'error', 20_000);
      await until(() => op.on(`${PREFIX}/kiosk-9/events`).some((e) => (e.body.record as { kind?: string }).kind === 'session'), { realTimeoutMs: 15_000, message: 'the call record' });
      const record = op.on(`${PREFIX}/kiosk-9/events`).find((e) => (e.body.record as { kind?: string }).kind === 'session')!.body.record as Record<string, unknown>;
      assert.equal(record.error_code, 'media_unavailable');
      assert.equal(record.end_reason, 'media_unavailable', 'not the visitor\'s user_end');
      await until(() => op.status('kiosk-9')?.lastErrorCode === record.error_code, { realTimeoutMs: 10_000, message: 'the error in the status' });
    } finally {
      await noMic.close();
    }
  });

  it('bounds the command channel: an oversize command never reaches the kiosk, and a burst is rate limited', async () => {
    const { kiosk } = await startKiosk({ config: { staffPinHash: pin, mqtt: mqttFor('kiosk-10') } });
    await online('kiosk-10');
    // 2 MB: the broker takes it from the operator (its own limit is 4 MB) but not to a kiosk that said 256 KB.
    const big = JSON.stringify({ id: 'big', cmd: 'apply', settings: { avatar: { persona: 'x'.repeat(2 * 1024 * 1024) } } });
    await op.publish('kiosk-10', big);
    const after = await op.command('kiosk-10', { id: 'small', cmd: 'ping' }, 'small');
    assert.equal(after.ok, true, 'the kiosk is still connected and answering');
    assert.deepEqual(op.results('kiosk-10', 'big'), []);
    // Past the broker's own limit, the publisher is cut off and nothing is delivered.
    // Its own login: with one client id per login, a second connection as `operator` would take op's session over.
    const huge = await connectAsync(broker.url, { username: 'operator-2', password: USERS['operator-2'], protocolVersion: 5, reconnectPeriod: 0 });
    const refusedBig = await Promise.race([
      huge.publishAsync(`${PREFIX}/kiosk-10/cmd`, Buffer.alloc(5 * 1024 * 1024, 0x20), { qos: 1 }).then(() => 'accepted', () => 'refused'),
      realDelay(5_000).then(() => 'no answer'),
    ]);
    assert.notEqual(refusedBig, 'accepted');
    await huge.endAsync(true).catch(() => undefined);

    await realDelay(11_000); // a full bucket
    for (let i = 0; i < 40; i++) await op.publish('kiosk-10', { id: `burst-${i}`, cmd: 'ping' });
    await until(() => Array.from({ length: 40 }, (_, i) => op.results('kiosk-10', `burst-${i}`).length).every((n) => n === 1), { realTimeoutMs: 20_000, message: 'every burst command answered' });
    const answers = Array.from({ length: 40 }, (_, i) => op.results('kiosk-10', `burst-${i}`)[0]!);
    const ran = answers.filter((a) => a.ok === true).length;
    const limited = answers.filter((a) => (a.error as { code?: string } | undefined)?.code === 'rate_limited').length;
    assert.ok(ran >= 10 && ran <= 12, `${ran} pings ran`);
    assert.equal(ran + limited, 40);
    assert.equal(kiosk.kiosk.calls.state.phase, 'idle');
  });
});
