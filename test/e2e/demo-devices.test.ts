/**
 * `--demo-devices`: a whole demo call on a machine with no microphone and no camera. Debian's Chromium
 * is launched WITHOUT any fake-device flag (no --use-fake-device-for-media-stream, no fake UI), so it has
 * no device to give; the BUILT renderer is served by the real browser-mode host (kiosk-host.ts) on the
 * embedded emulator. With the option, the page reaches the live call with a synthetic camera in its
 * self-view; without it, the same browser ends on the device error (the control: there really is no
 * device). With a real key the option is refused by the kiosk (PublicConfig.demoDevices stays false).
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/demo-devices.test.ts
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright';
import { silentLogger } from '../../electron/core/log.ts';
import { startBrowserKiosk, type BrowserKiosk } from '../../electron/browser/kiosk-host.ts';
import { defaultConfig } from '../../electron/kiosk/config.ts';
import { createKiosk } from '../../electron/kiosk/compose.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { RENDERER_DIR, ROOT, screenIs } from './harness.ts';
import { until } from '../helpers/until.ts';

/** No fake devices, no fake permission UI: only what the machine has (here: nothing). */
const NO_DEVICE_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--autoplay-policy=no-user-gesture-required'];
const ARTIFACTS = join(ROOT, 'test', 'artifacts', 'newcomer');

/** Counts the page's calls to the real getUserMedia (the synthetic devices never make one). */
const COUNT_REAL_GUM = `(() => {
  window.__realGum = 0;
  const md = navigator.mediaDevices;
  if (!md) return;
  const original = md.getUserMedia.bind(md);
  md.getUserMedia = (c) => { window.__realGum++; return original(c); };
})();`;

async function kioskWith(demoDevices: boolean): Promise<BrowserKiosk> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-e2e-demo-devices-'));
  writeFileSync(
    join(dataDir, 'config.json'),
    JSON.stringify({ callMode: 'video', prewarm: { mode: 'off' }, presence: { cameraEnabled: false }, staffPinHash: await hashPin('246813') }),
  );
  return startBrowserKiosk({
    dataDir,
    env: {},
    appRoot: ROOT,
    rendererDir: RENDERER_DIR,
    logger: silentLogger,
    version: '0.1.0-e2e',
    demoDevices,
    emulatorKnobs: { warmupMs: { audio: 0, video: 500 }, endingMs: 200 },
  });
}

let browser: Browser;
const kiosks: BrowserKiosk[] = [];
before(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: NO_DEVICE_ARGS, timeout: 30_000 });
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  for (const k of kiosks) await k.close();
});

describe('demo devices (a Chromium with no microphone and no camera)', () => {
  it('without the option, the demo call fails on the missing devices (the control)', async () => {
    const kiosk = await kioskWith(false);
    kiosks.push(kiosk);
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    try {
      const page = await context.newPage();
      await page.goto(kiosk.host.launchUrl());
      await screenIs(page, 'attract');
      await page.click('[data-testid=start]');
      await screenIs(page, 'error', 20_000);
      await until(() => kiosk.kiosk.calls.state.phase === 'failed', { realTimeoutMs: 10_000, message: 'the session ended as failed' });
      const state = kiosk.kiosk.calls.state;
      assert.equal(state.phase === 'failed' && state.error.code, 'media_unavailable');
    } finally {
      await context.close();
    }
  });

  it('with --demo-devices, the whole call runs: live, with a moving synthetic camera in the self-view, then hang-up', async () => {
    const kiosk = await kioskWith(true);
    kiosks.push(kiosk);
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    try {
      const page = await context.newPage();
      await page.addInitScript(COUNT_REAL_GUM);
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(kiosk.host.launchUrl());
      await screenIs(page, 'attract');
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 20_000);
      assert.equal(kiosk.kiosk.calls.state.phase, 'live');
      // The self-view plays the synthetic camera, and its picture changes (a live source, not a still).
      const frame = async () =>
        page.evaluate(() => {
          const v = document.querySelector<HTMLVideoElement>('[data-testid=self-video]')!;
          const c = document.createElement('canvas');
          c.width = 64;
          c.height = 48;
          const g = c.getContext('2d')!;
          g.drawImage(v, 0, 0, 64, 48);
          const tracks = (v.srcObject as MediaStream | null)?.getVideoTracks() ?? [];
          return { width: v.videoWidth, live: tracks.map((t) => t.readyState), pixels: Array.from(g.getImageData(0, 0, 64, 48).data).join(',') };
        });
      await page.waitForFunction(() => (document.querySelector<HTMLVideoElement>('[data-testid=self-video]')?.videoWidth ?? 0) > 0, undefined, { timeout: 10_000 });
      const a = await frame();
      await page.waitForTimeout(400);
      const b = await frame();
      assert.equal(a.width, 640);
      assert.deepEqual(a.live, ['live']);
      assert.notEqual(a.pixels, b.pixels, 'the synthetic camera moves');
      assert.equal(await page.evaluate(() => (window as unknown as { __realGum: number }).__realGum), 0, 'no real device was asked for');
      await page.screenshot({ path: join(ARTIFACTS, 'demo-devices-live.png') });
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended', 10_000);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});

describe('demo devices are never given with a real key', () => {
  it('the kiosk turns the option off when a key is configured, and keeps it in demo mode', async () => {
    const config = defaultConfig({}, { appRoot: ROOT });
    const withKey = await createKiosk({ config, apiKey: 'sk-real-key-0123456789abcdef', apiKeySource: 'env', demoDevices: true, logger: silentLogger });
    const demo = await createKiosk({ config, apiKey: null, apiKeySource: 'none', demoDevices: true, logger: silentLogger });
    try {
      const real = await withKey.appearance.getConfig();
      const mock = await demo.appearance.getConfig();
      assert.ok(real.ok && mock.ok);
      assert.equal(real.value.mode, 'direct');
      assert.equal(real.value.demoDevices, false);
      assert.equal(mock.value.mode, 'demo');
      assert.equal(mock.value.demoDevices, true);
    } finally {
      await withKey.shutdown();
      await demo.shutdown();
    }
  });
});
