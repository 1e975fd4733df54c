/**
 * Fast start end to end: Chromium's fake camera plays a generated room (test/e2e/fake-camera.ts):
 * empty, then a person walks in and stops in the middle. The attract screen notices them, greets them,
 * main creates the spare session on the approach report, and the tap goes live with no NOT_READY on
 * screen. People walking past never trigger it. The camera is only used when the configuration allows it,
 * and it is released when the attract screen goes away.
 *
 * Screenshots: attract-camera-notice-*.png and attract-greeting-*.png in test/artifacts/screens/.
 * Build first: npm run build:renderer. Run: node --import tsx --test test/e2e/approach.test.ts
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright';
import { avatarFrame, eventually, launchChromium, localTracks, openKiosk, screenIs, screenshotBoth, startStaticServer, type KioskPage } from './harness.ts';
import { approachScene, crossing, writeY4m, type Scene } from './fake-camera.ts';

let server: Awaited<ReturnType<typeof startStaticServer>>;
let dir: string;
let portrait: string;
const browsers: Browser[] = [];

before(async () => {
  server = await startStaticServer();
  dir = mkdtempSync(join(tmpdir(), 'kiosk-approach-'));
  portrait = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
});
after(async () => {
  for (const b of browsers) await b.close().catch(() => undefined);
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function browserWithCamera(name: string, scene: Scene, durationS: number): Promise<Browser> {
  const file = join(dir, `${name}.y4m`);
  await writeY4m(file, { width: 320, height: 240, fps: 10, durationS, scene });
  const browser = await launchChromium({ videoFile: file });
  browsers.push(browser);
  return browser;
}

function reports(k: KioskPage): Array<{ showing: boolean; present: boolean | null }> {
  return k.bridge.calls.filter((c) => c.channel === 'kiosk:attract:report').map((c) => c.arg as { showing: boolean; present: boolean | null });
}

/** The visitor-funnel steps the page sent main, in order. */
function steps(k: KioskPage): unknown[] {
  return k.bridge.calls.filter((c) => c.channel === 'kiosk:attract:visitor-step').map((c) => c.arg);
}

/** Records in the page whether the connecting screen or a NOT_READY retry was ever shown. */
const WATCH_CONNECTING = `(() => {
  window.__seen = { connecting: false, notReady: false };
  new MutationObserver(() => {
    if (document.querySelector('main.kiosk[data-screen="connecting"]')) window.__seen.connecting = true;
    const warm = document.querySelector('[data-testid=step-warm]');
    if (warm && /getting ready|attempt/i.test(warm.textContent || '')) window.__seen.notReady = true;
  }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
})()`;

describe('Fast start: approach → greeting → tap → live (E2E, fake camera)', () => {
  it('greets a visitor who stops in front of the kiosk, pre-warms a session, and the tap goes live with no NOT_READY on screen', async () => {
    // Empty for 5 s from the moment the camera opens, then a person walks in and stays.
    const browser = await browserWithCamera('approach', approachScene(5), 40);
    const k = await openKiosk({
      browser,
      baseUrl: server.url,
      orientation: 'landscape',
      imageDataUrl: portrait,
      // The emulator's default video warm-up (2.5 s): without a spare, the tap would meet NOT_READY.
      knobs: { warmupMs: { audio: 0, video: 2_500 } },
      config: { prewarm: { mode: 'on-approach' }, presence: { cameraEnabled: true } },
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      const notice = page.locator('[data-testid=camera-notice]');
      await notice.waitFor({ timeout: 10_000 });
      assert.match((await notice.textContent()) ?? '', /No picture is recorded or sent/);
      assert.equal(await page.locator('[data-testid=approach-greeting]').count(), 0, 'nobody is greeted in an empty room');
      await screenshotBoth(page, 'attract-camera-notice', 'landscape');

      const greeting = page.locator('[data-testid=approach-greeting]');
      await greeting.waitFor({ timeout: 30_000 });
      assert.equal(await greeting.textContent(), 'Hi! Tap to talk');
      // Shown with nobody noticed (the camera is on: never `null`, which would mean "no camera"), then
      // the approach: in that order, each once.
      assert.deepEqual(reports(k), [
        { showing: true, present: false },
        { showing: true, present: true },
      ]);
      await eventually(() => k.bridge.events.some((e) => e.type === 'spare' && e.status === 'created'), 'main created a spare session on the approach', 15_000);
      await screenshotBoth(page, 'attract-greeting', 'landscape');

      // Let the spare warm up while the visitor reaches for the screen (the emulator's 2.5 s).
      await page.waitForTimeout(3_000);
      // The visitor funnel: the page said each step once, by name only; main counted one person noticed,
      // greeted and (after 3 s in front) approached.
      await eventually(() => k.kiosk.visitors.today().counts.approached === 1, 'the visitor counted as approached', 5_000);
      assert.deepEqual(steps(k), [{ step: 'noticed' }, { step: 'greeted' }, { step: 'approached' }]);
      const seenCounts = k.kiosk.visitors.today().counts;
      assert.deepEqual([seenCounts.noticed, seenCounts.greeted, seenCounts.approached, seenCounts.tapped], [1, 1, 1, 0]);
      await page.evaluate(WATCH_CONNECTING);
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 20_000);
      const seen = (await page.evaluate('window.__seen')) as { connecting: boolean; notReady: boolean };
      assert.equal(seen.notReady, false, 'no NOT_READY retry was shown');

      // The spare was the session: one session at the emulator, live, with the avatar's frames.
      await eventually(() => k.bridge.events.some((e) => e.type === 'spare' && e.status === 'used'), 'the spare was used');
      const sessions = k.emulator.listSessions();
      assert.equal(sessions.length, 1, 'no second session was created');
      await eventually(() => k.emulator.liveCount() === 1, 'the emulator has it live');
      await eventually(async () => (await avatarFrame(page)).width === 960, 'the avatar video plays');

      // Leaving attract released the presence camera (the first camera the page opened); the call has its own.
      assert.deepEqual(reports(k).at(-1), { showing: false, present: null });
      const firstTrackState = await page.evaluate('window.__localTracks[0].readyState');
      assert.equal(firstTrackState, 'ended', 'the presence camera was stopped');
      const tracks = await localTracks(page);
      assert.equal(tracks.live, tracks.total - 1, `only the call's microphone and camera are live (${JSON.stringify(tracks)})`);

      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      assert.deepEqual(
        k.problems.filter((p) => !/Failed to load resource.*404/.test(p)),
        [],
      );
    } finally {
      await k.close();
    }
  });

  it('does not greet or pre-warm for people walking past, near or far, or lingering at the edges', async () => {
    const passers: Scene = (t) => [
      ...crossing(t, 2, 3.3, -0.25, 1.25, true),
      ...crossing(t, 4, 5.3, 1.25, -0.25, true),
      ...crossing(t, 5.5, 9.5, -0.1, 1.1, false),
      ...(t > 9.5 && t < 15 ? [{ x: 0.06 + 0.02 * Math.sin(t), height: 1.2, feetY: 1.5 }] : []),
    ];
    const browser = await browserWithCamera('passers-by', passers, 16);
    const k = await openKiosk({
      browser,
      baseUrl: server.url,
      orientation: 'portrait',
      imageDataUrl: portrait,
      config: { prewarm: { mode: 'on-approach' }, presence: { cameraEnabled: true } },
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.locator('[data-testid=camera-notice]').waitFor({ timeout: 10_000 });
      // Reported with nobody noticed (never `null` while the camera is on) …
      await eventually(() => reports(k).length > 0, 'the attract screen reported itself');
      assert.deepEqual(reports(k)[0], { showing: true, present: false });
      // … then watch the whole 16 s scene.
      await page.waitForTimeout(16_000);
      assert.equal(await page.locator('[data-testid=approach-greeting]').count(), 0);
      assert.deepEqual(
        reports(k).filter((r) => r.present === true),
        [],
      );
      assert.equal(k.bridge.events.filter((e) => e.type === 'spare').length, 0, 'no spare session was created');
      assert.equal(k.emulator.listSessions().length, 0);
      // Nobody was noticed, so nobody is counted.
      assert.deepEqual(steps(k), []);
      assert.equal(k.kiosk.visitors.today().counts.noticed, 0);
    } finally {
      await k.close();
    }
  });

  it('lists the connecting steps in the order they happen: the call is joined while the avatar still warms up', async () => {
    const browser = browsers[0] ?? (await launchChromium());
    if (!browsers.includes(browser)) browsers.push(browser);
    const k = await openKiosk({
      browser,
      baseUrl: server.url,
      orientation: 'landscape',
      imageDataUrl: portrait,
      knobs: { warmupMs: { audio: 0, video: 2_500 } },
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.click('[data-testid=start]');
      await screenIs(page, 'connecting');
      // Joined, still warming up (NOT_READY): the finished join sits above the warm-up in progress.
      await page.locator('[data-testid=step-join][data-status=done]').waitFor({ timeout: 10_000 });
      const steps = await page.locator('.steps > li').evaluateAll((lis) => lis.map((li) => `${li.getAttribute('data-testid')}:${li.getAttribute('data-status')}`));
      assert.deepEqual(steps, ['step-create:done', 'step-join:done', 'step-warm:active']);
      await screenIs(page, 'live', 20_000);
    } finally {
      await k.close();
    }
  });

  it('never opens the camera on the attract screen when the configuration does not allow it', async () => {
    const browser = browsers[0] ?? (await launchChromium());
    const k = await openKiosk({
      browser,
      baseUrl: server.url,
      orientation: 'landscape',
      imageDataUrl: portrait,
      config: { prewarm: { mode: 'off' }, presence: { cameraEnabled: false } },
    });
    try {
      await screenIs(k.page, 'attract');
      await eventually(() => reports(k).length > 0, 'the attract screen reported itself');
      await k.page.waitForTimeout(1_000);
      assert.deepEqual(reports(k), [{ showing: true, present: null }]);
      assert.equal(await k.page.locator('[data-testid=camera-notice]').count(), 0);
      assert.equal((await localTracks(k.page)).gumCalls, 0, 'getUserMedia was never called');
    } finally {
      await k.close();
    }
  });
});
