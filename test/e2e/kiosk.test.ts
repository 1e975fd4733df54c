/**
 * The kiosk's screens end to end: the BUILT renderer (out/renderer) in Debian's Chromium with fake
 * media devices, talking through the test bridge to the REAL kiosk service, which drives the real
 * SessionController against the real emulator over HTTP + WebSocket (demo mode). Emulator knobs are
 * small (video warm-up 1.5 s → one NOT_READY, return to attract after 4 s) and every wait is bounded;
 * the whole file runs in about a minute (the agora-web case waits for its 15 s join timeout).
 *
 * Screenshots of every screen in both orientations go to test/artifacts/screens/<screen>-<orientation>.png.
 *
 * Build first: npx vite build --config renderer/vite.config.ts
 * Run:         node --import tsx --test test/e2e/kiosk.test.ts
 */
import { WEB_JOIN_TIMEOUT_MS } from '../../renderer/src/rtc/agora-web-engine.ts';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright';
import {
  avatarFrame,
  eventually,
  launchChromium,
  localTracks,
  openKiosk,
  screenIs,
  screenshotBoth,
  startStaticServer,
  type KioskPage,
  type Orientation,
} from './harness.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

let server: Awaited<ReturnType<typeof startStaticServer>>;
let browser: Browser;
let portrait: string;

before(async () => {
  server = await startStaticServer();
  browser = await launchChromium();
  // The bundled demo portrait: the screenshots show what a visitor of the demo really sees.
  portrait = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(orientation: Orientation, extra: Partial<Parameters<typeof openKiosk>[0]> = {}, b: Browser = browser): Promise<KioskPage> {
  const k = await openKiosk({ browser: b, baseUrl: server.url, orientation, imageDataUrl: portrait, ...extra });
  await screenIs(k.page, 'attract');
  return k;
}

/** The id of the (only) session the emulator knows. */
function onlySessionId(k: KioskPage): string {
  const sessions = k.emulator.listSessions();
  assert.equal(sessions.length, 1, 'exactly one session was created');
  return sessions[0]!.id;
}

async function assertVideoAdvancing(page: Page): Promise<void> {
  const first = await eventually(async () => {
    const f = await avatarFrame(page);
    return f.width > 0 ? f : null;
  }, 'the live <video> has frames');
  assert.equal(first.width, 960, 'the avatar stream is 960×540');
  assert.equal(first.height, 540);
  assert.ok(first.brightness > 12, `the avatar frame is not black (mean brightness ${first.brightness.toFixed(1)})`);
  await eventually(async () => (await avatarFrame(page)).currentTime > first.currentTime + 0.3, 'the live <video> keeps playing');
}

/** Page errors are bugs; a missing favicon is not. */
function realProblems(k: KioskPage): string[] {
  return k.problems.filter((p) => !/Failed to load resource.*404/.test(p));
}

async function waitLive(k: KioskPage): Promise<string> {
  await screenIs(k.page, 'live', 15_000);
  const liveId = onlySessionId(k);
  await eventually(() => k.emulator.liveCount() === 1, 'the emulator has the session live');
  return liveId;
}

describe('Kiosk renderer (E2E: built renderer + real kiosk service + emulator)', () => {
  it('runs a whole demo video call: attract → warm-up → live with moving frames → hang up → billing → attract by itself', async () => {
    const k = await open('landscape');
    try {
      const { page } = k;
      await page.locator('[data-testid=demo-badge]').waitFor({ timeout: 5_000 });
      assert.equal(await page.locator('#attract-title').textContent(), 'Ava');
      await page.waitForTimeout(500); // let the entrance animation settle for the picture
      await screenshotBoth(page, 'attract', 'landscape');

      // Every text the connecting screen shows is recorded (it changes faster than a poll can read it).
      await page.evaluate(`(() => {
        window.__connectingTexts = [];
        new MutationObserver(() => {
          const el = document.querySelector('[data-testid=screen-connecting]');
          const text = el ? el.innerText.replace(/\\s+/g, ' ').trim() : '';
          if (text && window.__connectingTexts.at(-1) !== text) window.__connectingTexts.push(text);
        }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      })()`);
      await page.click('[data-testid=start]');
      await screenIs(page, 'connecting');
      await screenshotBoth(page, 'connecting', 'landscape');
      // NOT_READY (1.5 s video warm-up → one NOT_READY) is a calm "getting ready": no attempt, no countdown.
      await eventually(async () => ((await page.evaluate('window.__connectingTexts')) as string[]).some((t) => t.includes('Ava is getting ready…')), 'the warm-up is shown', 20_000);
      const texts = (await page.evaluate('window.__connectingTexts')) as string[];
      for (const text of texts) assert.doesNotMatch(text.toLowerCase(), /attempt|checking again|second/, text);

      const liveId = await waitLive(k);
      await assertVideoAdvancing(page);
      assert.match((await page.locator('[data-testid=countdown]').textContent()) ?? '', /\d+:\d\d left/);
      await page.waitForTimeout(400); // self-view fade-in
      await screenshotBoth(page, 'live', 'landscape');

      // Mute goes through main (the shared mute state) and comes back as an event.
      await page.click('[data-testid=mute]');
      await eventually(async () => (await page.getAttribute('[data-testid=mute]', 'aria-pressed')) === 'true', 'muted');
      assert.ok(k.bridge.calls.some((c) => c.channel === 'kiosk:session:set-muted' && JSON.stringify(c.arg) === '{"muted":true}'));
      assert.ok(k.bridge.events.some((e) => e.type === 'muted' && e.muted));
      await page.click('[data-testid=mute]');

      const before = await localTracks(page);
      assert.ok(before.total >= 2 && before.live === before.total, `microphone and camera are live during the call (${JSON.stringify(before)})`);

      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      const duration = page.locator('[data-testid=ended-duration]');
      await eventually(async () => /second|min/.test((await duration.textContent()) ?? ''), 'the ended screen shows the duration');
      const session = k.emulator.getSession(liveId)!;
      assert.equal(session.hangupReason, 'user_end');
      assert.equal(k.emulator.liveCount(), 0, 'nothing is left billing');
      assert.equal((await duration.textContent())?.trim(), `${session.billedSeconds} seconds`);
      assert.ok((session.creditsCost ?? 0) > 0, 'the call was billed');
      assert.equal(await page.locator('[data-testid=ended-credits]').count(), 0, 'credits are for staff (the ledger), not the visitor');
      assert.doesNotMatch((await page.locator('[data-testid=screen-ended]').innerText()).toLowerCase(), /credit|billed/);
      const after = await localTracks(page);
      assert.equal(after.live, 0, 'every local track was stopped');
      assert.equal(await page.evaluate(`document.querySelector('[data-testid=avatar-video]').srcObject`), null, 'the live view is detached');
      await screenshotBoth(page, 'ended', 'landscape');

      // Back to attract by itself after returnToAttractSeconds (4 s), with a visible countdown.
      assert.match((await page.locator('[data-testid=return-countdown]').textContent()) ?? '', /Back to the start in \d s/);
      await screenIs(page, 'attract', 8_000);
      assert.deepEqual(realProblems(k), []);
      assert.ok(!k.requests.some((u) => /AgoraRTC/.test(u)), 'the demo path never loads the Agora SDK');
    } catch (e) {
      throw k.explain(e);
    } finally {
      await k.close();
    }
  });

  it('portrait, voice only, by keyboard: Enter starts, Escape hangs up, Escape dismisses; the countdown warns near the end', async () => {
    // A 25 s call with a 30 s warning: the countdown warns from the start.
    const k = await open('portrait', { knobs: { liveDurationS: 25 } });
    try {
      const { page } = k;
      await page.click('[data-testid=mode-audio]');
      assert.equal(await page.getAttribute('[data-testid=mode-audio]', 'aria-checked'), 'true');
      await page.locator('body').focus();
      await page.evaluate(`document.activeElement?.blur?.()`);
      await page.keyboard.press('Enter');
      await waitLive(k);
      assert.equal(k.emulator.listSessions()[0]!.callMode, 'audio');
      // The countdown first (the screenshots below take seconds on a loaded machine).
      const countdown = page.locator('[data-testid=countdown]');
      assert.match((await countdown.textContent()) ?? '', /Ending in 0:2\d/);
      assert.equal(await countdown.evaluate((el) => el.classList.contains('warn')), true);
      await page.waitForTimeout(300);
      await screenshotBoth(page, 'live-audio', 'portrait');
      const tracks = await localTracks(page);
      assert.equal(tracks.total, 1, 'voice only asks for the microphone alone');

      await page.keyboard.press('Escape');
      await screenIs(page, 'ended');
      await eventually(() => k.emulator.liveCount() === 0, 'hung up');
      await eventually(async () => /second|min/.test((await page.locator('[data-testid=ended-duration]').textContent()) ?? ''), 'figures shown');
      await page.keyboard.press('Escape');
      await screenIs(page, 'attract', 2_000);
      assert.deepEqual(realProblems(k), []);
    } finally {
      await k.close();
    }
  });

  it('shows the out-of-credits message after a forced credit_insufficient hangup, and never reconnects', async () => {
    const k = await open('landscape');
    try {
      const { page } = k;
      await page.click('[data-testid=start]');
      const liveId = await waitLive(k);
      const sockets = k.emulator.getSession(liveId)!.socketsOpened;
      const inits = k.emulator.getSession(liveId)!.connInits;

      k.emulator.forceHangup(liveId, 'credit_insufficient');
      await screenIs(page, 'error');
      await eventually(async () => (await page.getAttribute('[data-testid=screen-error]', 'data-cause')) === 'credits', 'the credits cause');
      assert.equal(await page.locator('[data-testid=error-title]').textContent(), 'We’re out of conversation time');
      assert.doesNotMatch((await page.locator('[data-testid=screen-error]').textContent()) ?? '', /Error:|at .*\.js|stack/i);
      await eventually(async () => (await localTracks(page)).live === 0, 'local tracks stopped');
      await page.waitForTimeout(1_500); // long enough for any reconnect attempt to show up
      assert.equal(k.emulator.getSession(liveId)!.socketsOpened, sockets, 'no new socket after credit_insufficient (spec §6 rule 6)');
      assert.equal(k.emulator.getSession(liveId)!.connInits, inits, 'no new conn_init');
      assert.equal(k.emulator.liveCount(), 0);
      await screenshotBoth(page, 'error-credits', 'landscape');
      await screenIs(page, 'attract', 8_000);
    } finally {
      await k.close();
    }
  });

  it('keeps the call through a dropped control socket: Reconnecting… overlay, same call, live again', async () => {
    const k = await open('portrait');
    try {
      const { page } = k;
      await page.click('[data-testid=start]');
      const liveId = await waitLive(k);
      await assertVideoAdvancing(page);
      await page.evaluate(`window.__stream = document.querySelector('[data-testid=avatar-video]').srcObject`);
      const tracksBefore = await localTracks(page);

      // Slow the emulator's answers so the reconnect (first retry at 0 ms) stays visible for a moment.
      k.emulator.knobs.latencyMs = 1_200;
      k.emulator.dropConnection(liveId);
      await page.locator('[data-testid=reconnecting]').waitFor({ state: 'visible', timeout: 5_000 });
      assert.equal(await page.locator('[data-testid=reconnecting] .title').textContent(), 'Reconnecting…');
      await screenshotBoth(page, 'reconnecting', 'portrait');
      k.emulator.knobs.latencyMs = 0;

      await page.locator('[data-testid=reconnecting]').waitFor({ state: 'detached', timeout: 10_000 });
      await screenIs(page, 'live');
      assert.equal(k.emulator.liveCount(), 1, 'the same session is still live');
      assert.equal(k.emulator.listSessions().length, 1, 'no new session was created');
      assert.ok(k.emulator.getSession(liveId)!.socketsOpened >= 2, 'the control socket reconnected');
      // The engine was not torn down: same stream, same devices, still playing.
      assert.equal(await page.evaluate(`document.querySelector('[data-testid=avatar-video]').srcObject === window.__stream`), true);
      const tracksAfter = await localTracks(page);
      assert.equal(tracksAfter.gumCalls, tracksBefore.gumCalls, 'no new getUserMedia');
      assert.equal(tracksAfter.live, tracksBefore.live, 'the local tracks kept running');
      await assertVideoAdvancing(page);

      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      await eventually(() => k.emulator.liveCount() === 0, 'hung up');
      assert.deepEqual(realProblems(k), []);
    } finally {
      await k.close();
    }
  });

  it('cancel during the warm-up returns to attract and leaves no live session', async () => {
    // 3.5 s: conn_init goes out after the modelled 400 ms join, so the retry 2 s later still meets NOT_READY.
    const k = await open('landscape', { knobs: { warmupMs: { audio: 0, video: 3_500 } } });
    try {
      const { page } = k;
      await page.click('[data-testid=start]');
      const warm = page.locator('[data-testid=step-warm]');
      await eventually(async () => /getting ready/.test((await warm.textContent()) ?? ''), 'warming');
      const liveId = onlySessionId(k);
      await page.click('[data-testid=cancel]');
      await screenIs(page, 'attract', 2_000);
      await eventually(() => k.emulator.getSession(liveId)?.status === 'ended', 'the session was ended');
      await page.waitForTimeout(3_000); // past the warm-up: it must never go live
      assert.equal(k.emulator.liveCount(), 0);
      assert.equal(k.emulator.getSession(liveId)!.startedAtMs, null, 'never billed');
      assert.equal((await localTracks(page)).live, 0, 'devices released');
      await screenIs(page, 'attract', 100);
    } finally {
      await k.close();
    }
  });

  /** The Web SDK's join requests (agora-rtc-sdk-ng 4.24): its gateway / access point and string-uid endpoints. */
  const SDK_JOIN_REQUEST = /\/api\/v[23]\/transpond\/webrtc|[?&]action=stringuid/;

  it('the real Agora Web SDK on a network that refuses the RTC provider: the join fails in bounded time, no conn_init, 0 credits, the kiosk says the network blocks video calls', async () => {
    // The emulator issues a non-emulator RTC app id, so the renderer loads the real agora-rtc-sdk-ng (lazily,
    // under the CSP). Every request that is not to this machine is refused by Playwright's routing, as a
    // venue firewall would: the SDK's join fails (or runs into the engine's 15 s bound).
    const k = await open('landscape', { knobs: { rtcAppId: '0123456789abcdef0123456789abcdef' } });
    const refused: string[] = [];
    const remote = (url: URL) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost';
    await k.context.route(remote, (route) => {
      refused.push(route.request().url());
      return route.abort('connectionrefused');
    });
    await k.context.routeWebSocket(remote, (ws) => {
      refused.push(ws.url());
      return ws.close();
    });
    try {
      const { page } = k;
      const tapAt = Date.now();
      await page.click('[data-testid=start]');
      await eventually(() => k.requests.some((u) => /AgoraRTC_N-production.*\.js$/.test(u)), 'the SDK chunk is loaded on demand', 10_000);
      await screenIs(page, 'error', WEB_JOIN_TIMEOUT_MS + 10_000);
      const shownAfterMs = Date.now() - tapAt;
      assert.ok(shownAfterMs < WEB_JOIN_TIMEOUT_MS + 10_000, `the error showed ${shownAfterMs} ms after the tap`);
      assert.equal(await page.getAttribute('[data-testid=screen-error]', 'data-cause'), 'engine');
      assert.equal(await page.locator('[data-testid=error-title]').textContent(), 'This network blocks video calls');
      assert.match((await page.locator('[data-testid=screen-error]').textContent()) ?? '', /Nothing was charged/);
      // The SDK's own join requests, not its telemetry (statscollector, logservice, config): the access
      // point / gateway (`/api/v2|v3/transpond/webrtc`) or the string-uid allocation (`action=stringuid`).
      const joinRequests = refused.filter((u) => SDK_JOIN_REQUEST.test(u));
      console.log(`refused: ${refused.length} requests, of which the SDK's join: ${joinRequests.length} (${[...new Set(joinRequests.map((u) => new URL(u).hostname))].join(', ')})`);
      assert.ok(joinRequests.length > 0, `the SDK's join requests were attempted and refused (refused: ${refused.join(' ')})`);
      assert.ok(refused.every((u) => !/^(https?|wss?):\/\/(127\.0\.0\.1|localhost)[:/]/.test(u)));
      const failure = k.bridge.calls.find((c) => c.channel === 'kiosk:session:report-media-error');
      const reported = failure?.arg as { kind: string; message: string } | undefined;
      assert.equal(reported?.kind, 'rtc_join_failed');
      console.log(`reported: ${reported?.message}`);
      // The failure is the SDK's own join ending with its own error (its name/code in the message): the
      // SDK retries its gateway without limit, so at the engine's bound the client leaves and the SDK's join
      // rejects. A join that is not the SDK's (stubbed, never settling) says "never answered" instead.
      assert.match(reported?.message ?? '', /AgoraRTC\w*(Error|Exception)/, 'the error came from the SDK');
      assert.ok(!k.bridge.calls.some((c) => c.channel === 'kiosk:session:rtc-ready'), 'the renderer never reported ready');
      const liveId = onlySessionId(k);
      await eventually(() => k.emulator.getSession(liveId)?.status === 'ended', 'main ended the session with type 5');
      const session = k.emulator.getSession(liveId)!;
      assert.equal(session.connInits, 0, 'no conn_init reached the service');
      assert.equal(session.hangupReason, 'user_end');
      assert.ok(session.clientMessages.some((m) => m.type === 5), 'type 5 went out');
      assert.equal(session.startedAtMs, null, 'never live');
      assert.equal(session.creditsCost, 0);
      assert.equal(k.emulator.balance(), 1_000, '0 credits billed');
      await eventually(async () => (await localTracks(page)).live === 0, 'the SDK’s microphone and camera were released');
      const csp = k.problems.filter((p) => /Content Security Policy|Refused to/i.test(p));
      assert.deepEqual(csp, [], 'no CSP violations while the SDK ran');
      await screenshotBoth(page, 'error-network-blocked', 'landscape');
    } finally {
      await k.close();
    }
  });

  it('a denied microphone shows its error screen and leaves nothing billing', async () => {
    const denying = await launchChromium({ grantMedia: false });
    const k = await open('portrait', {}, denying);
    try {
      const { page } = k;
      await page.click('[data-testid=start]');
      await screenIs(page, 'error', 15_000);
      assert.equal(await page.getAttribute('[data-testid=screen-error]', 'data-cause'), 'media');
      assert.equal(await page.locator('[data-testid=error-title]').textContent(), 'We can’t hear you');
      assert.ok(
        k.bridge.calls.some((c) => c.channel === 'kiosk:session:report-media-error' && (c.arg as { kind: string }).kind === 'microphone_denied'),
        'main was told (reportMediaError microphone_denied)',
      );
      await eventually(() => k.emulator.listSessions().every((s) => s.status === 'ended'), 'main ended the session');
      await page.waitForTimeout(2_000); // past the warm-up
      assert.equal(k.emulator.liveCount(), 0, 'nothing billing');
      await screenshotBoth(page, 'error-media', 'portrait');
      await screenIs(page, 'attract', 8_000);
    } finally {
      await k.close();
      await denying.close();
    }
  });
});
