/**
 * The avatar's volume end to end: the BUILT renderer in Debian's Chromium, bridged to the real kiosk
 * service with staff operations on the emulator. Staff set it on the Status tab (behind the PIN); it is kept
 * in the data folder; the call's demo engine plays the avatar's voice element at it, and a change during
 * the call (as the fleet's set-volume makes it) reaches the element at once.
 *
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/avatar-volume.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AVATAR_VOLUME_FILE } from '../../electron/kiosk/avatar-volume.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { eventually, openStaffKiosk, screenIs, testIdText, useE2eBrowser } from './harness.ts';

const env = useE2eBrowser();

/** The demo engine's voice element: its volume (0..1), or null while there is none. */
const voiceVolume = (page: import('playwright').Page) =>
  page.evaluate(`(() => { const a = document.querySelector('[data-avatar-voice]'); return a ? a.volume : null; })()`) as Promise<number | null>;

describe('the avatar volume (E2E: built renderer + real kiosk service + emulator)', () => {
  it('staff set it on the Status tab; it is kept; the call plays the avatar at it, and follows a change during the call', async () => {
    const k = await openStaffKiosk({ browser: env.browser, baseUrl: env.server.url, orientation: 'landscape', imageDataUrl: env.portrait, file: { staffPinHash: await hashPin('246813') } });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.keyboard.press('Control+Shift+S');
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      for (const d of '246813') await page.click(`[data-testid=pin-${d}]`);
      await page.click('[data-testid=pin-ok]');
      await page.locator('[data-testid=staff-panel][data-tab=status]').waitFor({ timeout: 5_000 });
      await page.locator('[data-testid=status-avatar-volume]').waitFor({ timeout: 5_000 });
      assert.equal(await testIdText(page, 'status-avatar-volume'), '100 %');
      assert.equal(await page.getByRole('slider', { name: 'Avatar volume' }).inputValue(), '100');

      await page.locator('[data-testid=avatar-volume-slider]').fill('40');
      await eventually(async () => (await testIdText(page, 'staff-notice')) === 'The avatar now speaks at 40 %.', 'the notice');
      assert.equal(await testIdText(page, 'status-avatar-volume'), '40 %');
      assert.equal(k.kiosk.avatarVolume.percent, 40);
      assert.deepEqual(JSON.parse(readFileSync(join(k.dataDir, AVATAR_VOLUME_FILE), 'utf8')), { v: 1, percent: 40 });
      // Main's answer, not the slider's own state: the tab opened again reads it back.
      await page.click('[data-testid=tab-system]');
      await page.click('[data-testid=tab-status]');
      await eventually(async () => (await testIdText(page, 'status-avatar-volume')) === '40 %', 'the Status tab read again');

      await page.click('[data-testid=staff-close]');
      await screenIs(page, 'attract');
      assert.equal(await voiceVolume(page), null, 'no voice before a call');
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 20_000);
      assert.equal(await eventually(() => voiceVolume(page), 'the avatar\'s voice element'), 0.4);

      // During the call, as the fleet's set-volume does it (the kiosk's volume): the element follows.
      await k.kiosk.avatarVolume.set(70);
      await eventually(async () => (await voiceVolume(page)) === 0.7, 'the voice at 70 %');
      await k.kiosk.avatarVolume.set(0);
      await eventually(async () => (await voiceVolume(page)) === 0, 'the voice silent');

      await page.click('[data-testid=hangup]');
      await eventually(async () => (await voiceVolume(page)) === null, 'the voice element gone with the call');
      // The static server has no favicon: its 404 is the only line allowed (as in the other E2E files).
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });
});
