/**
 * The fleet console end to end: Debian's Chromium opens the BUILT console page served by the console
 * (electron/fleet/console), which reads a real Mosquitto (127.0.0.1, password file, per-kiosk ACL).
 * On the broker: real kiosks in browser mode (kiosk-host.ts in this process, and one as its own
 * `npm run start:browser` process that the test kills) and simulated kiosks (the real kiosk link over
 * a pretend kiosk). What is checked is what the operator sees on the console's page and what happens on
 * the kiosks (their service's phase, the kiosk's own page, its avatar volume, its visitor funnel); the page's commands are the
 * kiosks' own table's.
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/fleet-console.test.ts
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright';
import { systemClock } from '../../electron/core/clock.ts';
import { silentLogger } from '../../electron/core/log.ts';
import { startBrowserKiosk, type BrowserKiosk } from '../../electron/browser/kiosk-host.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { startFleetConsole, type FleetConsole } from '../../electron/fleet/console/index.ts';
import { COMMAND_NAMES, commandRow } from '../../electron/fleet/command-table.ts';
import { demoScreenshot, startSimulatedKiosk, type SimulatedKiosk } from '../../electron/fleet/console/simulated.ts';
import { VISITOR_STEPS, kioskFigure, stepCounts } from '../../electron/fleet/console/visitors.ts';
import type { VisitorsView } from '../../electron/fleet/console/view.ts';
import { DEFAULT_FUNNEL_THRESHOLD } from '../../electron/core/funnel.ts';
import { CONSOLE_LOGIN, mosquittoMissing, PREFIX, startBroker, type Broker } from '../helpers/mosquitto.ts';
import { until } from '../helpers/until.ts';
import { axeViolations } from './access-helpers.ts';
import { RENDERER_DIR, ROOT, eventually, launchChromium, pageProblems } from './harness.ts';

const PAGE_DIR = join(ROOT, 'out', 'fleet-console');
const SHOTS = join(ROOT, 'test', 'artifacts', 'fleet-console');
const WAIT_MS = 20_000;
const skip = mosquittoMissing() ?? (existsSync(join(PAGE_DIR, 'index.html')) && existsSync(join(RENDERER_DIR, 'index.html')) ? null : 'the console page or the renderer is not built (npm run build)');
if (skip) console.log(`# SKIP the fleet console E2E: ${skip}`);

const USERS: Record<string, string> = { [CONSOLE_LOGIN]: 'op-e2e-secret', 'real-a': 'pw-real-a', 'real-b': 'pw-real-b', 'real-c': 'pw-real-c', 'sim-1': 'pw-sim-1', 'sim-2': 'pw-sim-2', 'sim-3': 'pw-sim-3' };

describe('fleet console (E2E: Chromium, the built page, a real Mosquitto, real and simulated kiosks)', { skip: skip ?? false }, () => {
  let broker: Broker;
  let fleet: FleetConsole;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const real: Record<string, BrowserKiosk> = {};
  const sims: Record<string, SimulatedKiosk> = {};
  let child: ChildProcess | null = null;
  const dirs: string[] = [];
  let problems: string[] = [];
  const temp = () => {
    const d = mkdtempSync(join(tmpdir(), 'ak-fleet-e2e-'));
    dirs.push(d);
    return d;
  };
  const mqtt = (kioskId: string, group: string) => ({ url: broker.url, kioskId, group, username: kioskId, password: USERS[kioskId], topicPrefix: PREFIX });
  const realKiosk = async (kioskId: string, group: string) => {
    const dataDir = temp();
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ staffPinHash: await hashPin('246813'), callMode: 'audio', returnToAttractSeconds: 3, prewarm: { mode: 'off' }, presence: { cameraEnabled: false }, mqtt: mqtt(kioskId, group) }));
    real[kioskId] = await startBrowserKiosk({ dataDir, env: {}, appRoot: ROOT, rendererDir: RENDERER_DIR, logger: silentLogger, version: '0.1.0-e2e', emulatorKnobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 100 } });
  };
  /** A call as the kiosk page makes one: start, join the RTC channel of the credentials, live. */
  const call = async (k: BrowserKiosk) => {
    let live = false;
    const off = k.kiosk.events.onEvent((e) => {
      if (e.type === 'credentials') void k.kiosk.calls.rtcReady({ liveId: e.liveId });
      if (e.type === 'state' && e.state.phase === 'live') live = true;
    });
    const started = await k.kiosk.calls.start();
    assert.equal(started.ok, true, JSON.stringify(started));
    await until(() => live, { realTimeoutMs: WAIT_MS, message: 'the call went live' });
    off();
  };
  const row = (kioskId: string) => page.locator(`tr[data-kiosk="${kioskId}"]`);
  const shot = async (name: string) => {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${name}.png`) });
  };

  before(async () => {
    broker = await startBroker(USERS, { groups: { 'real-a': 'lobby', 'real-b': 'shop', 'real-c': 'cafe', 'sim-1': 'lobby', 'sim-2': 'shop', 'sim-3': 'shop' } });
    await realKiosk('real-a', 'lobby');
    await realKiosk('real-b', 'shop');
    const png = demoScreenshot(ROOT);
    for (const [id, group] of [['sim-1', 'lobby'], ['sim-2', 'shop'], ['sim-3', 'shop']] as const) {
      sims[id] = startSimulatedKiosk({ ...mqtt(id, group), dataDir: temp(), clock: systemClock, screenshotPng: png, reconnectMs: 300 });
    }
    // One kiosk as its own browser-mode process (what `npm run start:browser` runs), to be killed.
    const dataDir = temp();
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ prewarm: { mode: 'off' }, presence: { cameraEnabled: false }, mqtt: mqtt('real-c', 'cafe') }));
    child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'electron', 'browser', 'index.ts')], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, AVATAR_KIOSK_DATA: dataDir, KIOSK_BROWSER: 'none' },
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    fleet = await startFleetConsole({ brokerUrl: broker.url, topicPrefix: PREFIX, clientId: 'console-e2e', username: CONSOLE_LOGIN, password: USERS[CONSOLE_LOGIN]!, pageDir: PAGE_DIR, reconnectMs: 500 });
    await fleet.link.ready(WAIT_MS);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1600, height: 900 } });
    page = await context.newPage();
    problems = pageProblems(page);
    // The first-start link: the token after `#` signs the page in (it never reaches the server).
    await page.goto(`${fleet.server.origin}/#token=${fleet.token!}`);
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const k of Object.values(real)) await k.close();
    for (const s of Object.values(sims)) await s.close();
    await fleet?.close();
    await broker?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('shows every kiosk online; a killed kiosk shows offline with the time the console saw it go', async () => {
    assert.equal(new URL(page.url()).search, '', 'the token left the address bar (exchanged for a cookie)');
    await until(() => fleet.state.rows().filter((r) => r.online).length === 6, { realTimeoutMs: 60_000, message: 'six kiosks online' });
    for (const id of ['real-a', 'real-b', 'real-c', 'sim-1', 'sim-2', 'sim-3']) {
      await row(id).locator('td.status', { hasText: 'Online' }).waitFor({ timeout: WAIT_MS });
    }
    assert.match((await row('real-a').textContent()) ?? '', /lobby/);
    assert.match((await page.locator('header .counts').textContent()) ?? '', /6\s*kiosks · 6\s*online · 0\s*offline/);

    const killedAt = Date.now();
    child!.kill('SIGKILL');
    await row('real-c').locator('td.status', { hasText: 'Offline' }).waitFor({ timeout: WAIT_MS });
    const since = fleet.state.row('real-c')!.sinceAt!;
    assert.ok(Date.parse(since) >= killedAt - 1000 && Date.parse(since) <= Date.now(), `offline since ${since}, killed at ${new Date(killedAt).toISOString()}`);
    const shown = new Date(since).toLocaleTimeString('en-US', { hour12: false });
    const text = ((await row('real-c').locator('td.status').textContent()) ?? '').replace(/\s+/g, ' ');
    assert.match(text, new RegExp(`Offline since ${shown} \\(\\d+ s\\)`), text);
    await shot('offline');
  });

  it('a group end-call ends the calls of that group only', async () => {
    await call(real['real-a']!);
    await call(real['real-b']!);
    sims['sim-1']!.startCall();
    sims['sim-2']!.startCall();
    await until(() => ['real-a', 'real-b', 'sim-1', 'sim-2'].every((id) => fleet.state.row(id)?.phase === 'live'), { realTimeoutMs: WAIT_MS, message: 'four kiosks in a call on the console' });

    await page.getByLabel('Group', { exact: true }).check();
    await page.locator('#target-group').selectOption('lobby');
    await page.getByRole('button', { name: 'End call' }).click();
    const sent = page.locator('ol.sent > li', { hasText: 'end-call to group lobby' }).first();
    await sent.getByText('2 of 2 answered').waitFor({ timeout: WAIT_MS });
    assert.match((await sent.textContent()) ?? '', /real-a: ok — \{"ended":true\}/);
    assert.match((await sent.textContent()) ?? '', /sim-1: ok — \{"ended":true\}/);
    await until(() => real['real-a']!.kiosk.calls.state.phase !== 'live', { realTimeoutMs: WAIT_MS, message: "real-a's call ended" });
    assert.equal(sims['sim-1']!.inCall, false);
    // The other group is untouched.
    assert.equal(real['real-b']!.kiosk.calls.state.phase, 'live');
    assert.equal(sims['sim-2']!.inCall, true);
    assert.deepEqual(sims['sim-2']!.did, []);
    await shot('group-end-call');
    await real['real-b']!.kiosk.calls.hangup();
    sims['sim-2']!.endCall();
  });

  it('a screenshot comes back as a picture', async () => {
    await page.getByLabel('Selected kiosks', { exact: false }).check();
    await row('sim-2').getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Screenshot' }).click();
    const img = page.getByRole('img', { name: 'Screenshot of sim-2' }).first();
    await img.waitFor({ timeout: WAIT_MS });
    const size = await img.evaluate((el: HTMLImageElement) => (el.complete ? { w: el.naturalWidth, h: el.naturalHeight } : null));
    assert.deepEqual(size, { w: 720, h: 960 }, 'the PNG the kiosk sent, decoded by the browser');
    await shot('screenshot');
    await row('sim-2').getByRole('checkbox').uncheck();
  });

  it("apply: the kiosk's refusals before anything is sent; an accepted one shows on the kiosk's own screen", async () => {
    const kioskPage = await context.newPage();
    await kioskPage.goto(real['real-a']!.host.launchUrl());
    await kioskPage.locator('[data-testid=screen-closed]').waitFor({ state: 'detached', timeout: WAIT_MS });
    await row('real-a').getByRole('checkbox').check();

    await page.getByLabel(/Settings to apply/).fill('{"apiKey": "sk-steal"}');
    await page.getByRole('button', { name: 'Apply settings' }).click();
    await page.locator('p.message', { hasText: 'Not sent: "apply" cannot change "apiKey"' }).waitFor({ timeout: WAIT_MS });

    // Closed every day: the kiosk's attract screen turns into the closed screen.
    await page.getByLabel(/Settings to apply/).fill('{"schedule": {"timeZone": "UTC", "weekly": {}}}');
    await page.getByRole('button', { name: 'Apply settings' }).click();
    const sent = page.locator('ol.sent > li', { hasText: 'apply to 1 selected kiosk' }).first();
    await sent.getByText('1 of 1 answered').waitFor({ timeout: WAIT_MS });
    assert.match((await sent.textContent()) ?? '', /real-a: ok — \{"applied":\["schedule"\]\}/);
    await kioskPage.locator('[data-testid=screen-closed]').waitFor({ timeout: WAIT_MS }).catch(async (error: unknown) => {
      await kioskPage.screenshot({ path: join(SHOTS, 'kiosk-not-closed.png') });
      throw error;
    });
    await row('real-a').locator('td', { hasText: 'Closed' }).waitFor({ timeout: WAIT_MS });
    mkdirSync(SHOTS, { recursive: true });
    await kioskPage.screenshot({ path: join(SHOTS, 'kiosk-closed-after-apply.png') });
    await shot('apply');
    await kioskPage.close();
    await row('real-a').getByRole('checkbox').uncheck();
  });

  it("offers exactly the kiosks' table of commands: a button each, and a labelled field for each that takes an argument", async () => {
    const offered = await page.locator('section.actions [data-cmd]').evaluateAll((els) => els.map((e) => [e.getAttribute('data-cmd'), e.textContent?.trim()]));
    assert.deepEqual(
      offered.sort(),
      COMMAND_NAMES.map((name) => [name, commandRow(name).label]).sort(),
    );
    for (const name of COMMAND_NAMES) {
      const arg = commandRow(name).arg;
      if (arg) assert.equal(await page.getByLabel(arg.label, { exact: true }).count(), 1, `${name}: ${arg.label}`);
    }
  });

  it('set-volume from the page: a value out of range is refused before sending; an accepted one reaches the kiosk and its row', async () => {
    await page.getByLabel('Selected kiosks', { exact: false }).check();
    await row('real-b').getByRole('checkbox').check();
    const field = page.getByLabel('Avatar volume (0–100 %)', { exact: true });
    await field.fill('140');
    await page.getByRole('button', { name: 'Set volume' }).click();
    await page.locator('p.message', { hasText: 'Not sent: Invalid command at "percent": the volume is a whole percent from 0 to 100.' }).waitFor({ timeout: WAIT_MS });
    assert.equal(real['real-b']!.kiosk.avatarVolume.percent, 100);

    await field.fill('35');
    await page.getByRole('button', { name: 'Set volume' }).click();
    const sent = page.locator('ol.sent > li', { hasText: 'set-volume to 1 selected kiosk' }).first();
    await sent.getByText('1 of 1 answered').waitFor({ timeout: WAIT_MS });
    assert.match((await sent.textContent()) ?? '', /real-b: ok — \{"avatarVolume":35\}/);
    assert.equal(real['real-b']!.kiosk.avatarVolume.percent, 35);
    await row('real-b').locator('td', { hasText: '35 %' }).waitFor({ timeout: WAIT_MS });
    await shot('set-volume');
    await row('real-b').getByRole('checkbox').uncheck();
  });

  it("a real kiosk's visitor funnel reaches the console through the broker as the kiosk counted it", async () => {
    const k = real['real-b']!;
    for (let i = 0; i < 5; i++) {
      await call(k);
      await k.kiosk.calls.hangup();
    }
    // What the kiosk itself counted today (its own store, the same as its staff panel shows).
    const own = k.kiosk.visitors!.today();
    assert.ok(own.counts.tapped >= 5 && own.counts.live >= 5 && own.counts.endedWell >= 5, JSON.stringify(own.counts));
    const counted = stepCounts(own.counts);
    // The console's view of that kiosk, from the status it received over Mosquitto: the same day, and each
    // step the kiosk's own count as the console shows a kiosk's count (under 5: "fewer than 5").
    const line = async () => {
      // Asked as the page asks: its session's cookie and its key (session.ts keeps the key in sessionStorage).
      const view = (await page.evaluate(async () => (await fetch('/api/visitors', { headers: { 'X-Fleet-Key': sessionStorage.getItem('fleet-console-key') ?? '' } })).json())) as VisitorsView;
      return { day: view.day, line: view.kiosks.find((l) => l.kioskId === 'real-b') ?? null };
    };
    const shown = (l: VisitorsView['kiosks'][number] | null) => VISITOR_STEPS.map((step) => `${step} ${l?.figures[step].text ?? '-'}`);
    const want = VISITOR_STEPS.map((step) => `${step} ${kioskFigure(counted[step], DEFAULT_FUNNEL_THRESHOLD).text}`);
    // The last call's end reaches the console with the status published after it (at most one a second).
    await eventually(async () => JSON.stringify(shown((await line()).line)) === JSON.stringify(want), "the console has real-b's funnel after its calls", WAIT_MS).catch(async (error: unknown) => {
      assert.deepEqual(shown((await line()).line), want, String(error));
    });
    const seen = await line();
    assert.equal(seen.day, own.day);
    assert.deepEqual(shown(seen.line), want);
    // …and the page's visitors table shows that line (the page reloads the view every 10 s).
    const cells = () => page.locator('tr[data-line="kiosk:real-b"] > *').allTextContents();
    await eventually(async () => (await cells()).some((c) => c.trim().startsWith(String(own.counts.live))), 'the page shows real-b\'s calls', WAIT_MS).catch(async (error: unknown) => {
      assert.fail(`${String(error)}: ${JSON.stringify(await cells())}`);
    });
    assert.equal((await cells())[0]!.trim(), 'real-b');
  });

  it('axe finds nothing on the console, and the page ran without errors or CSP refusals', async () => {
    const violations = await axeViolations(page);
    assert.deepEqual(violations, []);
    assert.deepEqual(problems, []);
  });
});
