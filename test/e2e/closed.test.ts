/**
 * Opening hours end to end: the BUILT renderer in Debian's Chromium, bridged to the real kiosk service
 * (staff operations attached) with the fleet host's opening-hours watch on a fake clock. Outside the
 * hours the page shows the closed screen with the next opening in the venue's time zone, a tap starts
 * nothing and main refuses `session:start`; staff still open the PIN pad (Ctrl+Shift+S); at opening time
 * the attract screen comes back by itself.
 *
 * Screenshots: closed-* and held-* in test/artifacts/screens/.   Build first: npm run build:renderer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright';
import { FakeClock } from '../helpers/fake-clock.ts';
import { startFleetHost } from '../../electron/fleet/fleet-host.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { launchChromium, openStaffKiosk, screenIs, screenshotBoth, startStaticServer, ROOT } from './harness.ts';

let server: Awaited<ReturnType<typeof startStaticServer>>;
let browser: Browser;
let portrait: string;
let staffPinHash: string;

before(async () => {
  server = await startStaticServer();
  staffPinHash = await hashPin('246813');
  browser = await launchChromium();
  portrait = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const schedule = { timeZone: 'Europe/Berlin', weekly: { mon: ['09:00-18:00'], tue: ['09:00-18:00'] } };

describe('Opening hours (E2E: closed screen, real kiosk service)', () => {
  it('shows "closed" with the next opening, refuses calls, lets staff in, and opens by itself', async () => {
    const k = await openStaffKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, file: { staffPinHash, schedule } });
    // Monday 2026-11-23, 20:00 in Berlin: closed until Tuesday 09:00 (08:00Z).
    const clock = new FakeClock(Date.parse('2026-11-23T19:00:00Z'));
    const fleet = startFleetHost({
      kiosk: k.kiosk,
      ledger: k.ops.ledger,
      dataDir: k.dataDir,
      version: '0.1.0-e2e',
      clock,
      configFile: k.persistence,
      env: {},
      policy: {},
      appRoot: ROOT,
      actions: { reload: () => {}, restart: () => {}, screenshot: async () => ({ png: Buffer.alloc(0), width: 0, height: 0 }) },
    });
    try {
      const { page } = k;
      await page.reload(); // the page reads the opening state with its config
      await screenIs(page, 'closed');
      // The heading and the next opening (the language picker sits below them).
      const text = ((await page.locator('[data-testid=screen-closed] .middle').textContent()) ?? '').replace(/\s+/g, ' ').trim();
      // In the page's language (en-US here), in the venue's zone whatever the kiosk's own.
      assert.equal(text, 'We are closed We open again Tuesday 9:00 AM.');
      await screenshotBoth(page, 'closed', 'landscape');

      // A tap or Enter starts nothing; main refuses the start itself too.
      await page.click('[data-testid=screen-closed]');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(300);
      assert.equal(k.emulator.listSessions().length, 0);
      const refused = await k.kiosk.calls.start();
      assert.deepEqual(refused, { ok: false, error: { code: 'invalid_request', message: 'The kiosk is closed (outside its opening hours).' } });

      // Staff can still open the panel.
      await page.keyboard.press('Control+Shift+S');
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      await page.keyboard.press('Escape');
      await page.locator('[data-testid=pin-pad]').waitFor({ state: 'detached', timeout: 5_000 });

      // Opening time: the attract screen is back without a reload.
      await clock.advance(13 * 60 * 60_000);
      await screenIs(page, 'attract');
      assert.equal(k.kiosk.availability.opening.open, true);
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []); // the favicon
    } finally {
      await fleet.close();
      await k.close();
    }
  });
});

// While an update is being installed main holds calls (from the decision to the quit): the same resting
// screen says "back in a moment"; when the hold lifts (a failed install) the attract screen comes back.
describe('Held for an update (E2E: "back in a moment", real kiosk service)', () => {
  it('shows a calm screen while held, starts nothing, and returns to attract when the hold lifts', async () => {
    const k = await openStaffKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, file: { staffPinHash } });
    const { page } = k;
    try {
      await screenIs(page, 'attract');
      k.kiosk.availability.setHold('updating');
      await screenIs(page, 'held');
      const sessions = k.emulator.listSessions().length;
      const text = ((await page.locator('[data-testid=screen-held] .middle').textContent()) ?? '').replace(/\s+/g, ' ').trim();
      assert.equal(text, 'Back in a moment This kiosk is updating and will be ready again shortly.');
      await screenshotBoth(page, 'held', 'landscape');

      await page.click('[data-testid=screen-held]');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(300);
      assert.equal(k.emulator.listSessions().length, sessions, 'no session was created');
      assert.deepEqual(await k.kiosk.calls.start(), { ok: false, error: { code: 'invalid_request', message: 'The kiosk is updating; back in a moment.' } });

      // A page loaded while held shows it too.
      await page.reload();
      await screenIs(page, 'held');

      k.kiosk.availability.setHold(null);
      await screenIs(page, 'attract');
    } finally {
      await k.close();
    }
  });
});
