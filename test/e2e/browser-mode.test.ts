/**
 * The browser mode end to end, through the REAL transport (no test bridge): the host of
 * electron/browser/kiosk-host.ts (kiosk service on the embedded emulator, staff operations, the server)
 * serves the BUILT renderer on 127.0.0.1; Debian's Chromium (fake mic/camera) opens a one-time launch
 * address (traded for the session cookie), the page connects its WebSocket and drives the kiosk: tap, the live demo call, hang up, the
 * staff panel's PIN pad, a reload of the same tab.
 * Build first: npm run build.   Run: node --import tsx --test test/e2e/browser-mode.test.ts
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright';
import { KIOSK_SOCKET_PATH } from '../../electron/core/kiosk-api.ts';
import { createLogger } from '../../electron/core/log.ts';
import { BROWSER_KEY_HINT, startBrowserKiosk, type BrowserKiosk } from '../../electron/browser/kiosk-host.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { RENDERER_DIR, ROOT, launchChromium, screenIs, screenshotAt, unlockStaffPanel } from './harness.ts';

let browser: Browser;
let kiosk: BrowserKiosk;
const logLines: string[] = [];

before(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-e2e-browser-'));
  writeFileSync(
    join(dataDir, 'config.json'),
    JSON.stringify({
      callMode: 'video',
      returnToAttractSeconds: 4,
      prewarm: { mode: 'off' },
      presence: { cameraEnabled: false },
      staffPinHash: await hashPin('246813'),
    }),
  );
  kiosk = await startBrowserKiosk({
    dataDir,
    env: {},
    appRoot: ROOT,
    rendererDir: RENDERER_DIR,
    logger: createLogger({ level: 'debug', sink: (line) => void logLines.push(line) }),
    version: '0.1.0-e2e',
    emulatorKnobs: { warmupMs: { audio: 0, video: 1_500 }, endingMs: 300 },
  });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await kiosk?.close();
});

describe('Browser mode (E2E: built renderer over the real WebSocket transport + real kiosk host + emulator)', () => {
  it('gets in with a one-time address, runs a demo call, hangs up, opens the PIN pad, and reconnects after a reload', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page: Page = await context.newPage();
    const problems: string[] = [];
    const sockets: string[] = [];
    let framesSent = 0;
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('websocket', (ws) => {
      sockets.push(ws.url());
      ws.on('framesent', () => void framesSent++);
    });
    try {
      await page.goto(kiosk.host.launchUrl());
      await screenIs(page, 'attract');
      await page.locator('[data-testid=demo-badge]').waitFor({ timeout: 5_000 });
      assert.equal(page.url(), `${kiosk.host.origin}/`, 'the one-time code is gone from the address bar');
      assert.deepEqual(sockets, [`ws://127.0.0.1:${kiosk.host.port}${KIOSK_SOCKET_PATH}`]);
      assert.equal(kiosk.host.connected, true);
      assert.equal(await page.evaluate(`typeof window.__kioskInvoke`), 'undefined', 'no test bridge in this page');

      await page.click('[data-testid=start]');
      await screenIs(page, 'connecting');
      await screenIs(page, 'live', 20_000);
      assert.equal(kiosk.kiosk.calls.state.phase, 'live');
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended', 10_000);
      await screenIs(page, 'attract', 15_000);

      await page.keyboard.press('Control+Shift+S');
      await page.locator('[data-testid=pin-pad]').waitFor({ timeout: 5_000 });
      // A PIN has 6 to 8 digits: the empty pad shows 6 places, not 4.
      assert.equal(await page.locator('[data-testid=pin-dots] .dot').count(), 6);
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:staff:pin-state', undefined).then((r) => r.ok && (r.value as { unlocked: boolean }).unlocked), false);

      await page.reload();
      await screenIs(page, 'attract');
      assert.equal(sockets.length, 2, 'the reloaded tab opened its own socket');
      assert.equal(kiosk.host.connected, true);
      assert.ok(framesSent >= 6, `${framesSent} frames sent`);
      assert.deepEqual(problems, []);
      assert.deepEqual(logLines.filter((l) => /refused/.test(l)), [], 'the reload was not refused');
    } finally {
      await context.close();
    }
  });

  it('staff panel: the key field\'s place says what to set instead, and no Restart is offered (the host cannot start itself again)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page: Page = await context.newPage();
    try {
      await page.goto(kiosk.host.launchUrl());
      await unlockStaffPanel(page, '246813');
      await page.click('[data-testid=tab-settings]');
      const hint = page.locator('[data-testid=api-key-not-storable]');
      await hint.waitFor({ timeout: 5_000 });
      assert.equal((await hint.textContent())?.trim(), BROWSER_KEY_HINT);
      assert.equal(await page.locator('[data-testid=set-api-key]').count(), 0, 'no field for a key that cannot be stored');
      await hint.scrollIntoViewIfNeeded();
      await screenshotAt(page, 'browser-staff-settings-key-1280x720', { width: 1280, height: 720 });

      await page.click('[data-testid=tab-system]');
      const noRestart = page.locator('[data-testid=system-no-restart]');
      await noRestart.waitFor({ timeout: 5_000 });
      assert.equal(await page.locator('[data-testid=system-restart]').count(), 0);
      assert.equal(await page.locator('[data-testid=system-exit]').count(), 1, 'Exit stays: it stops the host, as it says');
      await screenshotAt(page, 'browser-staff-system-1280x720', { width: 1280, height: 720 });
      // The channel refuses too (an older page, or a script): nothing stops, and the answer says why.
      assert.deepEqual(await kiosk.channels.dispatch('kiosk:staff:restart', undefined), {
        ok: false,
        error: { code: 'invalid_request', message: 'This kiosk cannot restart itself: exit, then start it again.' },
      });
      assert.equal(kiosk.host.connected, true, 'the kiosk still runs');
    } finally {
      await context.close();
    }
  });

  it('builds the socket transport into the renderer without the contract\'s schemas (no zod in the bundle)', () => {
    const entries = readdirSync(join(RENDERER_DIR, 'assets')).filter((f) => /^index-.*\.js$/.test(f));
    assert.equal(entries.length, 1);
    const bundle = readFileSync(join(RENDERER_DIR, 'assets', entries[0]!), 'utf8');
    assert.ok(bundle.includes(KIOSK_SOCKET_PATH), 'the transport is in the bundle');
    assert.equal(/ZodError|strictObject/.test(bundle), false);
  });
});
