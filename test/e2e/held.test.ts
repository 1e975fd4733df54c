/**
 * "Back in a moment" end to end: the BUILT renderer in Debian's Chromium, bridged to the real kiosk
 * service. While an update is being installed (main holds calls from the decision to the quit) the page
 * shows a calm screen instead of the attract screen, a tap starts nothing and main refuses the start;
 * when the hold is lifted (a failed install) the attract screen comes back by itself.
 *
 * Screenshots: held-* in test/artifacts/screens/.   Build first: npm run build:renderer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { launchChromium, openStaffKiosk, screenIs, screenshotBoth, startStaticServer } from './harness.ts';

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

describe('Held for an update (E2E: "back in a moment", real kiosk service)', () => {
  it('shows a calm screen while held, starts nothing, and returns to attract when the hold lifts', async () => {
    const k = await openStaffKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, file: { staffPinHash } });
    const { page } = k;
    try {
      await screenIs(page, 'attract');
      k.service.setHold('updating');
      await screenIs(page, 'held');
      const sessions = k.emulator.listSessions().length;
      const text = ((await page.locator('[data-testid=screen-held]').textContent()) ?? '').replace(/\s+/g, ' ').trim();
      assert.equal(text, 'Back in a moment This kiosk is updating and will be ready again shortly.');
      await screenshotBoth(page, 'held', 'landscape');

      await page.click('[data-testid=screen-held]');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(300);
      assert.equal(k.emulator.listSessions().length, sessions, 'no session was created');
      assert.deepEqual(await k.service.start(), { ok: false, error: { code: 'invalid_request', message: 'The kiosk is updating; back in a moment.' } });

      // A page loaded while held shows it too.
      await page.reload();
      await screenIs(page, 'held');

      k.service.setHold(null);
      await screenIs(page, 'attract');
    } finally {
      await k.close();
    }
  });
});
