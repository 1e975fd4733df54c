/**
 * "Check the video network" on the staff Diagnostics tab (E2E: built renderer + real kiosk service with
 * staff operations + emulator; the demo engine models the channel join the emulator's token says): the
 * screen joins the test session's channel receive-only and reports its join time; no device is opened,
 * conn_init never reaches the emulator, and the test session ends with type 5 at 0 credits.
 * "Record the wire report" on the same tab: the service check recorded (no conn_init, 0 credits), its
 * findings shown in four lines, wire-report.json in the data folder and the same report as a download,
 * neither holding the persona, the RTC token or the test session's id.
 * Screens: staff-network-check, staff-wire-report (both orientations).
 * Build first: npm run build:renderer.   Run: node --import tsx --test test/e2e/network-check.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { eventually, localTracks, openStaffKiosk, screenshotBoth, testIdText as text, unlockStaffPanel, useE2eBrowser } from './harness.ts';

const e2e = useE2eBrowser();
const PIN = '246813';

/** From the attract screen: the corner held 3 s, the PIN, the Diagnostics tab with main's checks done. */
async function openDiagnostics(page: Page): Promise<void> {
  await unlockStaffPanel(page, PIN);
  await page.click('[data-testid=tab-diagnostics]');
  await page.locator('[data-testid=doctor-checks]').waitFor({ timeout: 15_000 });
}

describe('Check the video network (E2E)', () => {
  it('reports a join time, opens no device, sends no conn_init and ends the test session with type 5 (0 credits)', async () => {
    const k = await openStaffKiosk({
      browser: e2e.browser,
      baseUrl: e2e.server.url,
      orientation: 'landscape',
      imageDataUrl: e2e.portrait,
      knobs: { rtcJoinMs: 350 },
      file: { staffPinHash: await hashPin(PIN) },
    });
    try {
      const { page } = k;
      const balance = k.emulator.balance();
      await openDiagnostics(page);
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

  it('records the wire report: findings on screen, the file saved and downloadable, nothing billed, no secret', async () => {
    const k = await openStaffKiosk({
      browser: e2e.browser,
      baseUrl: e2e.server.url,
      orientation: 'landscape',
      imageDataUrl: e2e.portrait,
      knobs: { pingFormat: 'ws-frames' },
      file: { staffPinHash: await hashPin(PIN) },
    });
    try {
      const { page } = k;
      const balance = k.emulator.balance();
      await openDiagnostics(page);

      await page.click('[data-testid=wire-report-run]');
      await page.locator('[data-testid=wire-report-running]').waitFor({ timeout: 5_000 });
      await page.locator('[data-testid=wire-report-facts]').waitFor({ timeout: 30_000 }); // an 11 s watch of the socket
      assert.equal(await text(page, 'wire-report-message'), 'Recorded: a test session was created, watched without going live, and closed; nothing was billed.');
      // Real time here: the 5 s period give or take the timers' jitter.
      const period = Number(/^WebSocket ping frames only, every (\d+) ms$/.exec(await text(page, 'wire-report-ping'))?.[1]);
      assert.ok(period >= 4_900 && period <= 5_300, `the 5 s ping period was measured (${period} ms)`);
      assert.equal(await text(page, 'wire-report-ack'), 'Not seen (this check never starts billing)');
      assert.equal(
        await text(page, 'wire-report-http'),
        'GET /lives/{live_id} 404 (json); GET /voices 401 (json); POST /lives 200 (json); GET /lives/{live_id} 200 (json)',
      );
      assert.equal(await text(page, 'wire-report-closes'), '1000 by the client');

      const downloading = page.waitForEvent('download');
      await page.click('[data-testid=wire-report-download]');
      const download = await downloading;
      assert.equal(download.suggestedFilename(), 'avatar-service-wire-report.json');
      const downloaded = readFileSync((await download.path())!, 'utf8');
      const saved = readFileSync(join(k.dataDir, 'wire-report.json'), 'utf8');
      assert.deepEqual(JSON.parse(downloaded), JSON.parse(saved), 'the download is the saved report');

      const wireCall = k.bridge.calls.find((c) => c.channel === 'kiosk:staff:wire-report');
      assert.ok(wireCall, 'the panel asked main');
      const test = k.emulator.listSessions().at(-1)!;
      assert.deepEqual([test.status, test.connInits, test.startedAtMs, test.creditsCost], ['ended', 0, null, 0]);
      assert.equal(k.emulator.balance(), balance, 'the account was not charged');
      for (const secret of [test.id, k.kiosk.config.avatar.persona, k.emulator.apiKey]) {
        assert.equal(saved.includes(secret), false, `the report holds ${secret.slice(0, 12)}…`);
      }
      await screenshotBoth(page, 'staff-wire-report', 'landscape');
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*(404|401)/.test(p)), []);
    } finally {
      await k.close();
    }
  });
});
