/**
 * Visitors walked through the real kiosk, then read on the staff panel's Visitors tab: the BUILT renderer
 * in Debian's Chromium with a generated fake camera (fake-camera.ts), bridged to the REAL kiosk service
 * with the staff operations attached, on the real emulator (demo calls). Nothing of the report is written
 * by the test: the counts are what the kiosk counted.
 *
 * The camera's scene (it restarts each time the attract screen opens the camera): empty, someone walks
 * past close by at 5 s, someone walks in at 10 s, stays 6 s in front of the kiosk and walks out. Then, on
 * the attract screen each time: a tap cancelled while connecting, five calls that end well (the visitor
 * hangs up), and one that fails (the service refuses the connection). Each tap comes within a few
 * seconds of the attract screen, before the scene's visitor walks in again.
 *
 * Afterwards the Status tab and `cli ledger` (its own process, on the kiosk's data folder) count the five
 * demo calls that went live, not the seven sessions created.
 *
 * Screenshots: staff-visitors-walk-<en|de|accessible>-<funnel|week>-<w>x<h>.png in test/artifacts/screens/.
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/staff-visitors-walk.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright';
import { KIOSK_SIZES, axeViolations } from './access-helpers.ts';
import { crossing, standing, type Scene } from './fake-camera.ts';
import { eventually, openStaffKiosk, ROOT, screenIs, type StaffKioskPage } from './harness.ts';
import { PIN, conclusions, funnel, layoutAtSizes, showVisitors, useCameraBrowser } from './staff-visitors.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The CLI as staff run it (`npm run cli -- …`), in its own process. */
function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'electron/cli/index.ts'), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}


/** Someone walks past at 5 s; someone walks in at 10 s, stands in front until 17 s, walks out by 18.2 s. */
const stopAndLeave: Scene = (t) => {
  const past = crossing(t, 5, 6.3, -0.25, 1.25, true);
  if (t >= 10 && t < 11.2) {
    const p = (t - 10) / 1.2;
    return [...past, { x: -0.2 + 0.7 * p, height: 0.6 + 0.65 * p, feetY: 1.0 + 0.55 * p }];
  }
  if (t >= 11.2 && t < 17) return [standing(0.5, t)];
  if (t >= 17 && t < 18.2) {
    const p = (t - 17) / 1.2;
    return [{ x: 0.5 + 0.75 * p, height: 1.25 - 0.65 * p, feetY: 1.55 - 0.55 * p }];
  }
  return past;
};

const env = useCameraBrowser(stopAndLeave, 120);

/** A call from the attract screen that the visitor ends: live, hang up, the end screen dismissed. */
async function callEndingWell(page: Page): Promise<void> {
  await page.click('[data-testid=start]');
  await screenIs(page, 'live', 20_000);
  await page.click('[data-testid=hangup]');
  await screenIs(page, 'ended');
  await page.click('[data-testid=done]');
  await screenIs(page, 'attract');
}

describe('Visitors walked through the kiosk, read on the Visitors tab (E2E: fake camera, demo calls)', () => {
  it('walk past, stop and leave, cancel while connecting, five good calls and a failed one: the tab shows what the kiosk counted', async () => {
    const k: StaffKioskPage = await openStaffKiosk({
      browser: env.browser,
      baseUrl: env.server.url,
      orientation: 'landscape',
      imageDataUrl: env.portrait,
      file: { staffPinHash: await hashPin(PIN), presence: { cameraEnabled: true } },
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      const counts = () => k.kiosk.visitors.report().today.counts;

      // The walk past counts nothing (the detector takes nobody crossing for a visitor); the one who
      // stops is noticed and greeted at once, and has approached after 3 s in front.
      await eventually(() => counts().approached === 1, 'the visitor who stopped has approached', 25_000);
      // …and walks out (the scene is empty from 18.2 s on).
      await page.waitForTimeout(5_000);
      assert.deepEqual([counts().noticed, counts().approached, counts().greeted, counts().tapped], [1, 1, 1, 0]);

      // A tap, cancelled while connecting (the avatar's video takes 6 s to warm up this time).
      k.emulator.knobs.warmupMs.video = 6_000;
      await page.click('[data-testid=start]');
      await screenIs(page, 'connecting');
      await page.click('[data-testid=cancel]');
      await screenIs(page, 'attract');
      k.emulator.knobs.warmupMs.video = 1_500;

      for (let i = 0; i < 5; i++) await callEndingWell(page);

      // One that fails: the service refuses the connection (LIVE_CONN_INIT_FAILED).
      k.emulator.knobs.initFailure = true;
      await page.click('[data-testid=start]');
      await screenIs(page, 'error', 15_000);
      k.emulator.knobs.initFailure = false;
      await page.click('[data-testid=done]');
      await screenIs(page, 'attract');

      // What the kiosk counted (read before the scene's visitor could walk in again, 10 s after the camera reopened).
      const c = counts();
      assert.deepEqual(
        { noticed: c.noticed, approached: c.approached, greeted: c.greeted, tapped: c.tapped, refused: c.refused, gaveUp: c.gaveUp, failed: c.failed, live: c.live, endedWell: c.endedWell, endedBadly: c.endedBadly, callLength: c.callLength },
        { noticed: 1, approached: 1, greeted: 1, tapped: 7, refused: { ageGate: 0, closed: 0, outOfOrder: 0 }, gaveUp: 1, failed: 1, live: 5, endedWell: 5, endedBadly: 0, callLength: { under1m: 5, from1to3m: 0, from3to10m: 0, over10m: 0 } },
      );
      // They reconcile with the service's side: a session for every tap that was not refused, and a
      // billed one for every conversation that went live.
      const sessions = k.emulator.listSessions();
      assert.equal(sessions.length, c.tapped - (c.refused.ageGate + c.refused.closed + c.refused.outOfOrder));
      assert.equal(sessions.filter((s) => s.billedSeconds > 0).length, c.live);

      await showVisitors(page, 'en');
      assert.deepEqual(await funnel(page), [
        ['noticed', 'fewer than 5', ''],
        ['approached', 'fewer than 5', ''],
        ['greeted', 'fewer than 5', ''],
        ['tapped', '7', ''],
        ['live', '5', '71% of the step before'],
        ['endedWell', '5', '100% of the step before'],
      ]);
      assert.deepEqual(await conclusions(page), [
        'Too few visitors today to say where people give up: a share is named once both of its counts reach 5.',
        'Too few passers-by this week to name the busiest hours.',
      ]);
      const cells = (testId: string) => page.locator(`[data-testid=${testId}] > *`).allTextContents();
      assert.deepEqual(await cells('lost-gaveUp'), ['Gave up while connecting', 'fewer than 5', '']);
      assert.deepEqual(await cells('lost-failed'), ['Failed before the conversation', 'fewer than 5', '']);
      assert.deepEqual(await cells('lost-endedBadly'), ['Ended badly', '0', '0% of conversations']);
      assert.deepEqual(await cells('lost-ageGate'), ['Age check declined', '0', '0% of taps']);
      assert.deepEqual(await cells('length-under1m'), ['Under 1 minute', '5']);
      for (const size of KIOSK_SIZES) {
        await page.setViewportSize(size);
        assert.deepEqual(await axeViolations(page), [], `axe: Visitors after the walk at ${size.width}x${size.height}`);
      }
      assert.deepEqual(await layoutAtSizes(page, 'walk-en', KIOSK_SIZES), []);

      // The same report read in German (the report's language; nothing is asked of the kiosk again).
      await page.selectOption('[data-testid=visitors-language]', 'de');
      await eventually(async () => (await page.getAttribute('[data-testid=visitors]', 'lang')) === 'de', 'the report reads in German');
      // (The page writes "71 %" with a no-break space; the text is read with white space collapsed.)
      assert.deepEqual(await funnel(page), [
        ['noticed', 'weniger als 5', ''],
        ['approached', 'weniger als 5', ''],
        ['greeted', 'weniger als 5', ''],
        ['tapped', '7', ''],
        ['live', '5', '71 % des vorigen Schritts'],
        ['endedWell', '5', '100 % des vorigen Schritts'],
      ]);
      assert.deepEqual(await axeViolations(page), [], 'axe: Visitors in German');
      assert.deepEqual(await layoutAtSizes(page, 'walk-de', KIOSK_SIZES), []);
      // The Status tab's day: demo calls apart from real ones, each part of the line spaced as it reads.
      // Seven sessions were created, but only the five that went live were calls: the one cancelled while
      // connecting and the one the service refused are not.
      await page.click('[data-testid=tab-status]');
      const today = (await page.locator('[data-testid=status-today]').innerText()).replace(/\s+/g, ' ').trim();
      assert.equal(today, '0 sessions · 0 credits · 5 demo calls (not billed)');
      // `cli ledger` on the kiosk's data folder (AVATAR_KIOSK_DATA, as staff would run it) says the same.
      const ledger = await runCli(['ledger'], { AVATAR_KIOSK_DATA: k.dataDir });
      assert.equal(ledger.code, 0, ledger.stderr);
      assert.deepEqual(ledger.stdout.split('\n').find((l) => l.trimStart().startsWith('today'))?.trim().split(/\s+/), ['today', '0', '0', '0', '5']);
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });
});
