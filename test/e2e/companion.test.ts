/**
 * The desktop companion's renderer, end to end: the BUILT renderer in Debian's Chromium,
 * bridged to the REAL kiosk service (demo mode: the emulator over HTTP + WebSocket), in companion-sized
 * windows.
 *
 * - every screen (attract with one avatar and with a cast, connecting, live, ended, error) at 360×480
 *   and 420×640: nothing outside the window (texts, buttons, pictures), and a screenshot of each;
 * - main's `command` events (tray menu, global shortcut) start, cancel and end calls. They are delivered
 *   through the bridge's event path (`window.__kioskEmit`), exactly as the preload delivers main's events;
 * - push-to-talk: the microphone track is disabled unless Space or the button is held, through the one
 *   mute path (main's shared mute state echoes every change).
 *
 * Screenshots: test/artifacts/screens/companion-*.png.
 * Build first: npm run build:renderer. Run: node --import tsx --test test/e2e/companion.test.ts
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright';
import type { KioskEvent } from '../../electron/contract.ts';
import { clippedElements, COMPANION_SIZES, eventually, launchChromium, openKiosk, screenIs, screenshotAt, startStaticServer, variantImage, type KioskPage } from './harness.ts';

let server: Awaited<ReturnType<typeof startStaticServer>>;
let browser: Browser;
let ava: string;
let leo: string;

before(async () => {
  server = await startStaticServer();
  browser = await launchChromium();
  ava = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
  leo = await variantImage(browser, ava, { filter: 'sepia(0.55) saturate(1.4) hue-rotate(-12deg) brightness(0.95)', mirror: true });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const COMPANION = { window: { mode: 'companion' }, returnToAttractSeconds: 60 };

async function open(config: Record<string, unknown>, knobs: Parameters<typeof openKiosk>[0]['knobs'] = {}): Promise<KioskPage> {
  const k = await openKiosk({ browser, baseUrl: server.url, orientation: 'portrait', imageDataUrl: ava, config: { ...COMPANION, ...config }, knobs });
  await k.page.setViewportSize(COMPANION_SIZES[1]);
  await screenIs(k.page, 'attract');
  return k;
}

/** Screenshot the current screen at every companion size and assert nothing is clipped. */
async function fitsEverySize(page: Page, screen: string): Promise<void> {
  for (const size of COMPANION_SIZES) {
    await screenshotAt(page, `companion-${screen}-${size.width}x${size.height}`, size);
    assert.deepEqual(await clippedElements(page), [], `${screen} at ${size.width}×${size.height}: nothing is clipped`);
  }
}

/** Main's command event, delivered the way the preload delivers every main → renderer event. */
async function command(k: KioskPage, event: Extract<KioskEvent, { type: 'command' }>): Promise<void> {
  await k.page.evaluate(`window.__kioskEmit(${JSON.stringify(event)})`);
}

const startArgs = (k: KioskPage) => k.bridge.calls.filter((c) => c.channel === 'kiosk:session:start').map((c) => c.arg);

function realProblems(k: KioskPage): string[] {
  return k.problems.filter((p) => !/Failed to load resource.*404/.test(p));
}

/** The enabled flag of every microphone track the page holds that is still live. */
async function micEnabled(page: Page): Promise<boolean[]> {
  return page.evaluate(`window.__localTracks.filter((t) => t.kind === 'audio' && t.readyState === 'live').map((t) => t.enabled)`);
}

describe('The desktop companion (E2E)', () => {
  it('fits every screen into 360×480, 420×640 and 640×480 without clipping', async () => {
    // Video warm-up 4 s: the connecting screen stays long enough to be measured at both sizes.
    const k = await open({}, { warmupMs: { audio: 0, video: 4_000 } });
    try {
      const { page } = k;
      await page.waitForTimeout(500);
      await fitsEverySize(page, 'attract');

      await page.click('[data-testid=start]');
      await screenIs(page, 'connecting');
      await fitsEverySize(page, 'connecting');

      await screenIs(page, 'live', 15_000);
      await eventually(async () => (await page.evaluate(`document.querySelector('[data-testid=avatar-video]').videoWidth`)) === 960, 'frames');
      await page.waitForTimeout(600);
      await fitsEverySize(page, 'live');

      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      await eventually(async () => /second|min/.test((await page.locator('[data-testid=ended-duration]').textContent()) ?? ''), 'figures');
      await fitsEverySize(page, 'ended');

      await page.click('[data-testid=done]');
      await screenIs(page, 'attract');
      k.emulator.knobs.initFailure = true; // LIVE_CONN_INIT_FAILED: the error screen
      k.emulator.knobs.warmupMs.video = 0;
      await page.click('[data-testid=start]');
      await screenIs(page, 'error', 15_000);
      await fitsEverySize(page, 'error');
      assert.deepEqual(realProblems(k), []);
    } finally {
      await k.close();
    }
  });

  it('fits the cast and a voice-only call into 360×480, 420×640 and 640×480', async () => {
    const k = await open({
      avatars: [
        { id: 'ava', name: 'Ava', imagePath: ava },
        { id: 'leo', name: 'Leo', imagePath: leo, callMode: 'audio', greeting: 'Hi, I’m Leo. Ask me about the museum, the café or the way out.' },
      ],
    });
    try {
      const { page } = k;
      await page.locator('[data-testid=cast]').waitFor({ timeout: 5_000 });
      await page.waitForTimeout(500);
      await fitsEverySize(page, 'cast-attract');
      await page.click('[data-testid=cast-next]');
      await page.waitForTimeout(450);
      await fitsEverySize(page, 'cast-attract-leo');
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 15_000);
      await page.waitForTimeout(600);
      await fitsEverySize(page, 'live-audio');
      assert.deepEqual(startArgs(k), [{ callMode: 'audio', avatarId: 'leo', language: 'en' }]);
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      assert.deepEqual(realProblems(k), []);
    } finally {
      await k.close();
    }
  });

  it('starts, cancels and ends calls on the tray/shortcut commands', async () => {
    const k = await open(
      {
        avatars: [
          { id: 'ava', name: 'Ava', imagePath: ava },
          { id: 'leo', name: 'Leo', imagePath: leo, callMode: 'audio' },
        ],
      },
      { warmupMs: { audio: 3_000, video: 3_000 } },
    );
    try {
      const { page } = k;
      // "Talk to Leo" from the tray, then "Hang up" while it is still connecting: cancelled, nothing live.
      await command(k, { type: 'command', command: 'toggle-call', avatarId: 'leo' });
      await screenIs(page, 'connecting');
      assert.deepEqual(startArgs(k), [{ callMode: 'audio', avatarId: 'leo', language: 'en' }]);
      await command(k, { type: 'command', command: 'hangup' });
      await screenIs(page, 'attract');
      await eventually(() => k.emulator.listSessions().every((s) => s.status === 'ended' || s.status === 'ending'), 'the cancelled session is closed');
      assert.equal(k.emulator.liveCount(), 0);
      // Main accepts the next start once the cancelled session has finished (it refuses a second one meanwhile).
      await eventually(() => k.kiosk.calls.state.phase === 'ended', 'main finished the cancelled session');

      // The shortcut (no avatar): the selected one (Leo stays selected); pressed again while live: hang up.
      k.emulator.knobs.warmupMs.audio = 0;
      await command(k, { type: 'command', command: 'toggle-call' });
      await screenIs(page, 'live', 15_000);
      assert.deepEqual(startArgs(k)[1], { callMode: 'audio', avatarId: 'leo', language: 'en' });
      await command(k, { type: 'command', command: 'toggle-call' });
      await screenIs(page, 'ended');
      await eventually(() => k.emulator.liveCount() === 0, 'hung up');
      assert.equal(k.emulator.listSessions().at(-1)!.hangupReason, 'user_end');

      // From the ended screen the shortcut starts a new call at once; "Talk to Ava" names the avatar.
      await command(k, { type: 'command', command: 'toggle-call', avatarId: 'ava' });
      await screenIs(page, 'connecting');
      assert.deepEqual(startArgs(k)[2], { callMode: 'video', avatarId: 'ava', language: 'en' });
      k.emulator.knobs.warmupMs.video = 0;
      await screenIs(page, 'live', 15_000);
      // Settings has no panel in this build: nothing happens, nothing breaks.
      await command(k, { type: 'command', command: 'open-settings' });
      await page.waitForTimeout(200);
      assert.equal(await page.getAttribute('main.kiosk', 'data-screen'), 'live');
      await command(k, { type: 'command', command: 'hangup' });
      await screenIs(page, 'ended');
      // "Hang up" with nothing running does nothing.
      await command(k, { type: 'command', command: 'hangup' });
      await page.waitForTimeout(200);
      assert.equal(await page.getAttribute('main.kiosk', 'data-screen'), 'ended');
      assert.equal(startArgs(k).length, 3);
      assert.deepEqual(realProblems(k), []);
    } finally {
      await k.close();
    }
  });

  it('push-to-talk: the microphone is open only while Space or the button is held', async () => {
    const k = await open({ callMode: 'audio', companion: { pushToTalk: true } });
    try {
      const { page } = k;
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 15_000);
      await page.locator('[data-testid=push-to-talk]').waitFor();
      assert.equal(await page.locator('[data-testid=mute]').count(), 0, 'no mute button: the push-to-talk button replaces it');
      await eventually(async () => (await micEnabled(page)).join() === 'false', 'the microphone starts muted');
      const mutedEvents = () => k.bridge.events.filter((e) => e.type === 'muted').map((e) => (e as { muted: boolean }).muted);
      await eventually(() => mutedEvents().at(-1) === true, 'main holds the muted state');
      await page.waitForTimeout(300);
      await screenshotAt(page, 'companion-ptt-idle-420x640', { width: 420, height: 640 });

      await page.keyboard.down('Space');
      await eventually(async () => (await micEnabled(page)).join() === 'true', 'Space held: the microphone is open');
      await eventually(() => mutedEvents().at(-1) === false, 'main unmuted');
      assert.equal(await page.getAttribute('[data-testid=push-to-talk]', 'aria-pressed'), 'true');
      await screenshotAt(page, 'companion-ptt-talking-420x640', { width: 420, height: 640 });
      await page.keyboard.up('Space');
      await eventually(async () => (await micEnabled(page)).join() === 'false', 'Space released: muted again');
      await eventually(() => mutedEvents().at(-1) === true, 'main muted again');

      const box = (await page.locator('[data-testid=push-to-talk]').boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await eventually(async () => (await micEnabled(page)).join() === 'true', 'the button held: open');
      await page.mouse.up();
      await eventually(async () => (await micEnabled(page)).join() === 'false', 'the button released: muted');
      assert.equal(await page.getAttribute('main.kiosk', 'data-screen'), 'live', 'Space never hung up or restarted anything');
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      assert.deepEqual(realProblems(k), []);
    } finally {
      await k.close();
    }
  });
});
