/**
 * Languages and accessibility (E2E): the staff panel by keyboard (every tab under axe, the avatar audio
 * output for private listening).
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-staff.test.ts
 */
import { describe, it } from 'node:test';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { ALL_SIZES, KIOSK_SIZES, accessSuite, checkScreen, tabTo } from './access-helpers.ts';
import { eventually, openStaffKiosk, screenIs, screenshotBoth } from './harness.ts';

const suite = accessSuite();

describe('Languages and accessibility: the staff panel (E2E)', () => {
  it('the staff panel by keyboard: shortcut, PIN, tabs, the audio output for headphones, Escape; axe and targets pass', async () => {
    const k = await openStaffKiosk({ browser: suite.browser, baseUrl: suite.server.url, orientation: 'landscape', imageDataUrl: suite.portrait, file: { staffPinHash: await hashPin('137946') } });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.keyboard.press('Control+Alt+K');
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      await checkScreen(page, 'staff PIN pad', ALL_SIZES);
      for (const d of '137946') await page.keyboard.press(d);
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=staff-panel]').waitFor({ timeout: 5_000 });
      // Every tab by keyboard (Tab to it, Enter), each checked with axe and for target sizes.
      for (const tab of ['status', 'settings', 'voices', 'diagnostics', 'ledger', 'logs', 'system']) {
        await tabTo(page, `tab-${tab}`);
        await page.keyboard.press('Enter');
        await eventually(async () => (await page.getAttribute('[data-testid=staff-panel]', 'data-tab')) === tab, `the ${tab} tab opens`);
        await page.waitForTimeout(300);
        await checkScreen(page, `staff ${tab}`, KIOSK_SIZES);
      }
      // Private listening: the output list is there for staff (Chromium's fake devices may list none).
      await page.locator('[data-testid=audio-output]').waitFor({ timeout: 5_000 });
      await screenshotBoth(page, 'access-staff-system', 'landscape');
      await page.keyboard.press('Escape');
      await page.locator('[data-testid=staff]').waitFor({ state: 'detached', timeout: 5_000 });
      await screenIs(page, 'attract');
    } finally {
      await k.close();
    }
  });
});
