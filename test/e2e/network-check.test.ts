/**
 * "Check the video network" on the staff Diagnostics tab (E2E: built renderer + real kiosk service with
 * staff operations + emulator; the demo engine models the channel join the emulator's token says): the
 * screen joins the test session's channel receive-only and reports its join time; no device is opened,
 * conn_init never reaches the emulator, and the test session ends with type 5 at 0 credits.
 * Screens: staff-network-check (both orientations).
 * Build first: npm run build:renderer.   Run: node --import tsx --test test/e2e/network-check.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { eventually, localTracks, openStaffKiosk, screenIs, screenshotBoth, testIdText as text, useE2eBrowser } from './harness.ts';

const e2e = useE2eBrowser();

describe('Check the video network (E2E)', () => {
  it('reports a join time, opens no device, sends no conn_init and ends the test session with type 5 (0 credits)', async () => {
    const k = await openStaffKiosk({
      browser: e2e.browser,
      baseUrl: e2e.server.url,
      orientation: 'landscape',
      imageDataUrl: e2e.portrait,
      knobs: { rtcJoinMs: 350 },
      file: { staffPinHash: await hashPin('246813') },
    });
    try {
      const { page } = k;
      const balance = k.emulator.balance();
      await screenIs(page, 'attract', 15_000);
      await page.mouse.move(30, 30);
      await page.mouse.down();
      await page.waitForTimeout(3_300);
      await page.mouse.up();
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      for (const d of '246813') await page.click(`[data-testid=pin-${d}]`);
      await page.click('[data-testid=pin-ok]');
      await page.click('[data-testid=tab-diagnostics]');
      await page.locator('[data-testid=doctor-checks]').waitFor({ timeout: 15_000 });
      const tracksBefore = await localTracks(page); // the tab's own microphone/camera check

      await page.click('[data-testid=network-check-run]');
      await page.locator('[data-testid=network-check-result]').waitFor({ timeout: 15_000 });
      assert.equal(await page.locator('[data-testid=network-check-result]').getAttribute('data-ok'), 'true');
      const joinText = await text(page, 'network-check-join');
      const joinMs = Number(/^(\d+) ms$/.exec(joinText)?.[1]);
      assert.ok(joinMs >= 340 && joinMs < 5_000, `the modelled 350 ms join was measured (${joinText})`);
      assert.equal(await text(page, 'network-check-state'), 'Connected');
      assert.equal(await text(page, 'network-check-proxy'), 'Off');
      assert.equal(await text(page, 'network-check-cost'), '0 credits');
      assert.equal(await text(page, 'network-check-message'), `Joined the video network in ${joinMs} ms.`);
      assert.equal((await localTracks(page)).gumCalls, tracksBefore.gumCalls, 'the check opened no microphone or camera');

      const finish = k.bridge.calls.find((c) => c.channel === 'kiosk:staff:network-check-finish');
      const checkId = (finish?.arg as { checkId?: string } | undefined)?.checkId;
      assert.ok(checkId);
      const s = await eventually(() => {
        const session = k.emulator.getSession(checkId);
        return session?.status === 'ended' ? session : null;
      }, 'the test session ended');
      assert.equal(s.connInits, 0, 'no conn_init');
      assert.deepEqual(s.clientMessages.map((m) => m.type).filter((t) => t !== 4), [5], 'ended with type 5');
      assert.equal(s.startedAtMs, null);
      assert.equal(s.creditsCost, 0);
      assert.equal(k.emulator.balance(), balance, 'the account was not charged');
      await screenshotBoth(page, 'staff-network-check', 'landscape');
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });
});
