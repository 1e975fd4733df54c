/**
 * The visitor funnel on the fleet console, end to end: simulated kiosks (the real kiosk link over a pretend
 * kiosk that counts its visitors' day) publish their statuses on a real Mosquitto (127.0.0.1, password file,
 * per-kiosk ACL); the console reads them; Debian's Chromium opens the BUILT console page. What is checked is
 * what the operator reads: the exact figures per kiosk, per group and for the fleet in the page and in the
 * CSV it downloads (thresholded, formula-safe), the largest drop, the kiosk of another day named apart, and
 * the service status in a kiosk's row. Screenshots go to test/artifacts/fleet-console/.
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/fleet-visitors.test.ts
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright';
import { systemClock, type Clock } from '../../electron/core/clock.ts';
import { startFleetConsole, type FleetConsole } from '../../electron/fleet/console/index.ts';
import { demoScreenshot, startSimulatedKiosk, type PretendVisitor, type SimulatedKiosk } from '../../electron/fleet/console/simulated.ts';
import { CONSOLE_LOGIN, mosquittoMissing, PREFIX, startBroker, type Broker } from '../helpers/mosquitto.ts';
import { until } from '../helpers/until.ts';
import { axeViolations } from './access-helpers.ts';
import { ROOT, launchChromium, pageProblems } from './harness.ts';

const PAGE_DIR = join(ROOT, 'out', 'fleet-console');
const SHOTS = join(ROOT, 'test', 'artifacts', 'fleet-console');
const WAIT_MS = 20_000;
const skip = mosquittoMissing() ?? (existsSync(join(PAGE_DIR, 'index.html')) ? null : 'the console page is not built (npm run build)');
if (skip) console.log(`# SKIP the fleet visitors E2E: ${skip}`);

const GROUPS: Record<string, string> = { 'lobby-1': 'lobby', 'lobby-2': 'lobby', 'shop-1': 'shop', 'late-1': 'shop' };
const USERS: Record<string, string> = { [CONSOLE_LOGIN]: 'op-visitors', ...Object.fromEntries(Object.keys(GROUPS).map((id) => [id, `pw-${id}`])) };
/** A kiosk whose clock is a day behind: its funnel is of yesterday. */
const dayBehind: Clock = { ...systemClock, now: () => Date.now() - 24 * 60 * 60 * 1000 };
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('fleet console: the visitor funnel (E2E: Chromium, the built page, a real Mosquitto, simulated kiosks)', { skip: skip ?? false }, () => {
  let broker: Broker;
  let fleet: FleetConsole;
  let browser: Browser;
  let page: Page;
  let dir: string;
  const sims: Record<string, SimulatedKiosk> = {};
  let problems: string[] = [];
  const shot = async (name: string, fullPage = false) => {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
  };
  const visitors = (k: SimulatedKiosk, kind: PretendVisitor, n: number) => {
    for (let i = 0; i < n; i++) k.visitor(kind);
  };
  const calls = (k: SimulatedKiosk, n: number, endReason = 'user_end') => {
    for (let i = 0; i < n; i++) {
      k.startCall();
      k.endCall(endReason, 0);
    }
  };
  /** The cells of one line of the visitors table (its name, each step, the largest drop). */
  const lineCells = async (line: string) => (await page.locator(`tr[data-line="${line}"] > *`).allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());

  before(async () => {
    broker = await startBroker(USERS, { groups: GROUPS });
    dir = mkdtempSync(join(tmpdir(), 'ak-fleet-visitors-'));
    fleet = await startFleetConsole({ brokerUrl: broker.url, topicPrefix: PREFIX, clientId: 'console-visitors', username: CONSOLE_LOGIN, password: USERS[CONSOLE_LOGIN]!, pageDir: PAGE_DIR, reconnectMs: 500 });
    await fleet.link.ready(WAIT_MS);
    const png = demoScreenshot(ROOT);
    for (const [id, group] of Object.entries(GROUPS)) {
      sims[id] = startSimulatedKiosk({ url: broker.url, kioskId: id, group, username: id, password: USERS[id], topicPrefix: PREFIX, dataDir: join(dir, id), clock: id === 'late-1' ? dayBehind : systemClock, screenshotPng: png, reconnectMs: 300 });
    }
    await until(() => fleet.state.rows().filter((r) => r.online).length === 4, { realTimeoutMs: 60_000, message: 'four kiosks online' });

    // The day's visitors, through each kiosk's own counting (startCall/endCall are whole conversations).
    const { 'lobby-1': l1, 'lobby-2': l2, 'shop-1': s1, 'late-1': late } = sims as Record<string, SimulatedKiosk>;
    visitors(l1!, 'walks-past', 6);
    visitors(l1!, 'stops-and-leaves', 2);
    visitors(l1!, 'taps-and-gives-up', 3);
    calls(l1!, 5);
    calls(l1!, 1, 'media_stalled');
    calls(l2!, 5);
    visitors(l2!, 'is-refused', 1);
    visitors(l2!, 'taps-and-fails', 1);
    visitors(s1!, 'walks-past', 20);
    visitors(s1!, 'stops-and-leaves', 5);
    calls(s1!, 2);
    calls(late!, 9);
    s1!.setService({ status: 'unreachable', message: 'The service at api.example.com does not answer.', action: 'Check the network cable and the venue proxy.' });
    const expected: Record<string, number> = { 'lobby-1': 17, 'lobby-2': 7, 'shop-1': 27, 'late-1': 9 };
    await until(() => fleet.state.funnels().every((f) => f.visitors?.counts.noticed === expected[f.kioskId]) && fleet.state.row('shop-1')?.service?.status === 'unreachable', {
      realTimeoutMs: WAIT_MS,
      message: "every kiosk's funnel on the console",
    });

    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    page = await context.newPage();
    problems = pageProblems(page);
    // Signed in as an operator would be: the first-start link (the token after `#` never reaches the server).
    await page.goto(`${fleet.server.origin}/#token=${fleet.token!}`);
  });

  after(async () => {
    await browser?.close();
    for (const s of Object.values(sims)) await s.close();
    await fleet?.close();
    await broker?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the exact funnel per kiosk, per group and for the fleet, thresholded, with conversions and the largest drop', async () => {
    const today = dayOf(Date.now());
    await page.locator('[data-testid=visitors-table]').waitFor({ timeout: WAIT_MS });
    assert.equal(
      ((await page.locator('[data-testid=visitors-day]').textContent()) ?? '').replace(/\s+/g, ' ').trim(),
      `The day ${today} (each kiosk's own calendar day): 3 kiosks added up. Counts under 5 show as "fewer than 5", and a total adds only the counts it shows. Download CSV`,
    );
    assert.equal(((await page.locator('[data-testid=visitors-drop]').textContent()) ?? '').trim(), 'Largest drop across the fleet: 51 % of the passers-by noticed did not stop.');
    const F = 'fewer than 5';
    // A total's cell: its count or "at least" it, and on a second line the kiosks it left out (the CSV says it in one).
    assert.deepEqual(await lineCells('fleet:Fleet'), [
      'Fleet', '51', '25 (49 %)', '25 (100 %)', 'at least 16 1 kiosk under 5 not added', `${F} at each of 3 kiosks`, `${F} at each of 3 kiosks`, `${F} at each of 3 kiosks`,
      'at least 11 1 kiosk under 5 not added', 'at least 10 1 kiosk under 5 not added', `${F} at each of 3 kiosks`, '51 % of the passers-by noticed did not stop.',
    ]);
    assert.deepEqual(await lineCells('group:Group lobby'), [
      'Group lobby', '24', '18 (75 %)', '18 (100 %)', '16 (89 %)', `${F} at each of 2 kiosks`, `${F} at each of 2 kiosks`, `${F} at each of 2 kiosks`, '11 (69 %)', '10 (91 %)', `${F} at each of 2 kiosks`,
      '25 % of the passers-by noticed did not stop.',
    ]);
    assert.deepEqual(await lineCells('group:Group shop'), ['Group shop', '27', '7 (26 %)', '7 (100 %)', `${F} 1 kiosk`, `${F} 1 kiosk`, `${F} 1 kiosk`, `${F} 1 kiosk`, `${F} 1 kiosk`, `${F} 1 kiosk`, `${F} 1 kiosk`, '74 % of the passers-by noticed did not stop.']);
    assert.deepEqual(await lineCells('kiosk:lobby-1'), ['lobby-1', '17', '11 (65 %)', '11 (100 %)', '9 (82 %)', F, F, F, '6 (67 %)', '5 (83 %)', F, '35 % of the passers-by noticed did not stop.']);
    assert.deepEqual(await lineCells('kiosk:lobby-2'), ['lobby-2', '7', '7 (100 %)', '7 (100 %)', '7 (100 %)', F, F, F, '5 (71 %)', '5 (100 %)', F, '—']);
    assert.deepEqual(await lineCells('kiosk:shop-1'), ['shop-1', '27', '7 (26 %)', '7 (100 %)', F, F, F, F, F, F, F, '74 % of the passers-by noticed did not stop.']);
    assert.equal(await page.locator('tr[data-line="kiosk:late-1"]').count(), 0, 'the kiosk of another day is not added');
    assert.equal(((await page.locator('[data-testid=visitors-other-days]').textContent()) ?? '').trim(), `Not added (their latest funnel is of another day): late-1 (${dayOf(Date.now() - 86_400_000)}).`);
    await page.locator('section.visitors').scrollIntoViewIfNeeded();
    await shot('visitors', true);
    await page.locator('section.visitors').screenshot({ path: join(SHOTS, 'visitors-section.png') });
  });

  it('the CSV the page downloads has the same figures, thresholded and formula-safe', async () => {
    // The page fetches it with its session's key (a plain link would carry none) and hands it over as a file.
    const [file] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid=visitors-day]').getByRole('button', { name: 'Download CSV' }).click()]);
    assert.equal(file.suggestedFilename(), 'fleet-visitors.csv');
    const csv = readFileSync((await file.path())!, 'utf8');
    const today = dayOf(Date.now());
    const F = 'fewer than 5';
    assert.equal(
      csv,
      [
        'day,scope,group,kiosk,noticed,stopped,greeted,tapped,refused before the call,gave up while connecting,failed before live,went live,ended well,ended badly,largest drop',
        `${today},kiosk,lobby,lobby-1,17,11,11,9,${F},${F},${F},6,5,${F},35 % of the passers-by noticed did not stop.`,
        `${today},kiosk,lobby,lobby-2,7,7,7,7,${F},${F},${F},5,5,${F},`,
        `${today},kiosk,shop,shop-1,27,7,7,${F},${F},${F},${F},${F},${F},${F},74 % of the passers-by noticed did not stop.`,
        `${today},group,lobby,,24,18,18,16,${F} at each of 2 kiosks,${F} at each of 2 kiosks,${F} at each of 2 kiosks,11,10,${F} at each of 2 kiosks,25 % of the passers-by noticed did not stop.`,
        `${today},group,shop,,27,7,7,${F} (1 kiosk),${F} (1 kiosk),${F} (1 kiosk),${F} (1 kiosk),${F} (1 kiosk),${F} (1 kiosk),${F} (1 kiosk),74 % of the passers-by noticed did not stop.`,
        `${today},fleet,,,51,25,25,at least 16 (1 kiosk with fewer than 5 not added),${F} at each of 3 kiosks,${F} at each of 3 kiosks,${F} at each of 3 kiosks,at least 11 (1 kiosk with fewer than 5 not added),at least 10 (1 kiosk with fewer than 5 not added),${F} at each of 3 kiosks,51 % of the passers-by noticed did not stop.`,
        '',
      ].join('\r\n'),
    );
  });

  it("shows each kiosk's service in its row: a short status, the message on hover and a click away", async () => {
    const cell = page.locator('tr[data-kiosk="shop-1"] td[data-testid=service]');
    // The row shows the word; a screen reader hears the message with it.
    await cell.getByRole('button').waitFor({ timeout: WAIT_MS });
    assert.equal(((await cell.getByRole('button').textContent()) ?? '').replace(/\s+/g, ' ').trim(), 'unreachable: The service at api.example.com does not answer.');
    assert.equal(await cell.getByRole('button').evaluate((b) => b.firstChild?.textContent?.trim()), 'unreachable');
    assert.equal(await cell.getByRole('button').getAttribute('title'), 'The service at api.example.com does not answer. Check the network cable and the venue proxy.');
    assert.equal(((await page.locator('tr[data-kiosk="lobby-1"] td[data-testid=service]').textContent()) ?? '').replace(/\s+/g, ' ').trim(), 'demo: Demo mode: the built-in emulator, no key needed.');
    await cell.getByRole('button').click();
    const detail = page.locator('section.service-detail');
    assert.equal(((await detail.textContent()) ?? '').replace(/\s+/g, ' ').trim(), 'Service of shop-1 The service at api.example.com does not answer. What to do: Check the network cable and the venue proxy. Close');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('service');
    await detail.getByRole('button', { name: 'Close' }).click();
  });

  it('axe finds nothing on the console with the visitors section, and the page ran without errors or CSP refusals', async () => {
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
  });
});
