/**
 * The media watchdog end to end (built renderer + real kiosk service + emulator, demo engine): the demo
 * avatar freezes a moment after the call goes live (the emulator's test-only `demoFreezeAfterMs`, carried
 * in its RTC token), the visitor sees "Reconnecting the picture…" and the engine is re-subscribed once,
 * then the call is hung up with type 5 through the ordinary hangup channel (cause `media_stalled`) and the
 * ended screen says why. The watchdog's 8 s / 20 s are shortened to 2 s / 6 s through the harness's
 * test-only page hook (`mediaWatchdog`), so the test takes seconds.
 * Run: npm run build && node --import tsx --test test/e2e/watchdog.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, openKiosk, screenIs, screenshotBoth, useE2eBrowser } from './harness.ts';

const e2e = useE2eBrowser();

const TIMING = { noticeMs: 2_000, hangupMs: 6_000 };

describe('Media watchdog (E2E)', () => {
  it('a frozen avatar: the notice and one re-subscribe, then a type 5 hang-up recorded as media_stalled and an ended screen that explains', async () => {
    const k = await openKiosk({
      browser: e2e.browser,
      baseUrl: e2e.server.url,
      orientation: 'landscape',
      imageDataUrl: e2e.portrait,
      knobs: { warmupMs: { audio: 0, video: 0 }, rtcJoinMs: 0, demoFreezeAfterMs: 1_000 },
      config: { returnToAttractSeconds: 60 },
      mediaWatchdog: TIMING,
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract', 15_000);
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 15_000);
      const liveId = await eventually(() => k.emulator.listSessions().find((s) => s.status === 'on_live')?.id, 'the session went live', 10_000);
      assert.equal(await page.locator('[data-testid=media-stalled]').count(), 0, 'no notice while the avatar moves');

      // Frozen at 1 s after it began playing; the notice 2 s after the last frame.
      const notice = page.locator('[data-testid=media-stalled]');
      await notice.waitFor({ state: 'visible', timeout: 10_000 });
      assert.match((await notice.innerText()).replace(/\s+/g, ' '), /Reconnecting the picture… Hold on — Ava will be back in a moment\./);
      assert.deepEqual(await page.evaluate('window.__mediaWatch'), { notices: 1, resubscribes: 1, clears: 0, hangups: 0 });
      assert.equal(k.emulator.getSession(liveId)!.status, 'on_live', 'the notice alone does not end the call');
      assert.ok(!k.bridge.calls.some((c) => c.channel === 'kiosk:session:hangup'), 'no hangup yet');
      await screenshotBoth(page, 'media-stalled-notice', 'landscape');

      // Still frozen at 6 s: hung up through the ordinary channel, with its cause.
      await eventually(() => k.emulator.getSession(liveId)?.status === 'ended', 'the session was ended on the service', 15_000);
      const session = k.emulator.getSession(liveId)!;
      assert.equal(session.hangupReason, 'user_end', 'type 5 reached the emulator');
      const hangups = k.bridge.calls.filter((c) => c.channel === 'kiosk:session:hangup');
      assert.deepEqual(hangups.map((c) => c.arg), [{ cause: 'media_stalled' }]);
      assert.deepEqual(await page.evaluate('window.__mediaWatch'), { notices: 1, resubscribes: 1, clears: 0, hangups: 1 });

      const because = page.locator('[data-testid=ended-media-stalled]');
      await because.waitFor({ state: 'visible', timeout: 10_000 });
      await screenIs(page, 'ended', 5_000);
      assert.equal((await because.innerText()).replace(/\s+/g, ' ').trim(), 'The picture stopped, so we ended the call. Nothing more was charged.');
      await screenshotBoth(page, 'media-stalled-ended', 'landscape');
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []); // the favicon
    } finally {
      await k.close();
    }
  });
});
