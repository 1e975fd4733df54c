/**
 * Connection quality (E2E: built renderer + real kiosk service with staff operations + emulator, demo
 * engine told by the emulator's token to model a poor connection): the visitor's calm weak-connection hint
 * appears after a few seconds of poor figures, the renderer reports the figures to main (throttled, and
 * once more at the end of the call), and the staff Status tab shows the last call's figures.
 * Screens: live-weak-connection, staff-status-last-call (both orientations).
 * Build first: npm run build:renderer.   Run: node --import tsx --test test/e2e/quality.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { eventually, openStaffKiosk, screenIs, screenshotBoth, testIdText as text, unlockStaffPanel, useE2eBrowser } from './harness.ts';

const e2e = useE2eBrowser();

describe('Connection quality (E2E)', () => {
  it('a poor connection: the calm hint after a few seconds, figures reported to main, the Status tab shows the last call', async () => {
    const k = await openStaffKiosk({
      browser: e2e.browser,
      baseUrl: e2e.server.url,
      orientation: 'portrait',
      imageDataUrl: e2e.portrait,
      knobs: { warmupMs: { audio: 0, video: 0 }, rtcJoinMs: 100, rtcQuality: 'poor' },
      file: { staffPinHash: await hashPin('246813') },
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract', 15_000);
      // When the live screen and the hint appear, on the page's own clock: the test's own view of "live" can
      // come a second late on a loaded machine, which would shorten the wait it measures.
      await page.evaluate(`(() => {
        const seen = (window.__seenAt = {});
        new MutationObserver(() => {
          for (const id of ['screen-live', 'quality-hint']) if (!(id in seen) && document.querySelector('[data-testid=' + id + ']')) seen[id] = performance.now();
        }).observe(document.body, { childList: true, subtree: true });
      })()`);
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 15_000);
      assert.equal(await page.locator('[data-testid=quality-hint]').count(), 0, 'no hint at the first poor sample');
      await page.locator('[data-testid=quality-hint]').waitFor({ timeout: 15_000 });
      const seenAt = (await page.evaluate('window.__seenAt')) as Record<string, number>;
      const shownAfterMs = Math.round(seenAt['quality-hint']! - seenAt['screen-live']!);
      assert.ok(shownAfterMs >= 3_000, `the hint waits for a few seconds of poor figures (${shownAfterMs} ms)`);
      assert.equal(await text(page, 'quality-hint'), 'The connection is weak; the picture may pause.');
      assert.equal(await page.locator('[data-testid=quality-hint]').getAttribute('role'), 'status', 'announced politely, not as an alert');
      await screenshotBoth(page, 'live-weak-connection', 'portrait');

      const liveId = k.kiosk.calls.state.phase === 'live' ? k.kiosk.calls.state.liveId : null;
      assert.ok(liveId);
      const reports = () => k.bridge.calls.filter((c) => c.channel === 'kiosk:session:report-quality').map((c) => c.arg as Record<string, unknown>);
      assert.ok(reports().length >= 2, `figures reported while live (${reports().length})`);
      for (const r of reports()) {
        assert.equal(r.liveId, liveId);
        assert.equal(r.level, 'poor');
        assert.ok((r.packetLossPct as number) >= 10 && (r.rttMs as number) >= 500, JSON.stringify(r));
      }

      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended', 15_000);
      const final = await eventually(() => reports().find((r) => r.final === true), 'the final figures were reported at the end of the call');
      const kept = k.kiosk.telemetry.lastCallQuality;
      assert.ok(kept);
      assert.deepEqual(
        { bitrateKbps: kept.bitrateKbps, packetLossPct: kept.packetLossPct, frameRate: kept.frameRate, rttMs: kept.rttMs, level: kept.level, final: kept.final },
        { bitrateKbps: final.bitrateKbps, packetLossPct: final.packetLossPct, frameRate: final.frameRate, rttMs: final.rttMs, level: 'poor', final: true },
        'main keeps the last call’s final figures',
      );

      await unlockStaffPanel(page, '246813');
      await page.locator('[data-testid=status-last-call]').waitFor({ timeout: 5_000 });
      assert.equal(await text(page, 'status-last-call-level'), 'Poor');
      assert.equal(await text(page, 'status-last-call-bitrate'), `${kept.bitrateKbps} kbps`);
      assert.equal(await text(page, 'status-last-call-loss'), `${kept.packetLossPct} %`);
      assert.equal(await text(page, 'status-last-call-fps'), `${kept.frameRate} fps`);
      assert.equal(await text(page, 'status-last-call-rtt'), `${kept.rttMs} ms`);
      // The last call's start, from the tap: the field figures main kept for it.
      const figures = k.kiosk.telemetry.lastCallFigures;
      assert.ok(figures && figures.tapToConnInitAckMs !== null && figures.tapToFirstFrameMs !== null, JSON.stringify(figures));
      await page.locator('[data-testid=status-last-call-figures]').waitFor({ timeout: 5_000 });
      assert.equal(await text(page, 'status-figure-ack'), `${Math.round(figures.tapToConnInitAckMs)} ms`);
      assert.equal(await text(page, 'status-figure-first-media'), `${Math.round(figures.tapToFirstFrameMs)} ms`);
      assert.equal(await text(page, 'status-figure-end'), 'user_end');
      await screenshotBoth(page, 'staff-status-last-call', 'portrait');
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });
});
