/**
 * The staff panel of an adult kiosk says each of its safety settings once: the Settings tab's moderation
 * choice offers the adult default (disabled) once and strict once, and the public kiosk's rule (strict on
 * every call) is said in one hint, not in two. Screenshot: test/artifacts/screens/staff-adult-settings.png.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { SCREENS_DIR, openStaffKiosk, unlockStaffPanel, useE2eBrowser } from './harness.ts';

const env = useE2eBrowser();

describe('Staff panel on an adult kiosk', () => {
  it('Settings: the moderation choice and the hints say each thing once', async () => {
    const k = await openStaffKiosk({
      browser: env.browser,
      baseUrl: env.server.url,
      orientation: 'landscape',
      imageDataUrl: env.portrait,
      file: { staffPinHash: await hashPin('246813'), audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'], minimumAge: 18, ageCheck: 'self' } },
    });
    try {
      const { page } = k;
      await unlockStaffPanel(page, '246813');
      await page.click('[data-testid=tab-settings]');
      const moderation = page.locator('[data-testid=set-moderation]');
      await moderation.waitFor({ timeout: 5_000 });
      assert.deepEqual(await moderation.locator('option').allTextContents(), ['Disabled (the adult default)', 'Strict']);
      assert.equal(await moderation.inputValue(), '', 'nothing set: the adult default');
      const hints = await page.locator('.st-field[data-field=audience] .st-hint, .st-field[data-field=moderation] .st-hint').allTextContents();
      assert.deepEqual(hints, [
        'Public: moderation strict on every call. Adult: an age gate before each call, only in an allowed region (docs/safety.md).',
        'Only an adult kiosk sends this.',
      ]);
      await page.setViewportSize({ width: 1280, height: 900 });
      await moderation.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENS_DIR, 'staff-adult-settings.png') });

      // Choosing strict writes strict; going back to the default leaves the key out of the file again.
      await moderation.selectOption('strict');
      await page.click('[data-testid=settings-save]');
      await page.waitForFunction(() => document.body.innerText.includes('Saved.'), undefined, { timeout: 5_000 });
      assert.equal(k.persistence.read().moderation, 'strict');
      await moderation.selectOption('');
      await page.click('[data-testid=settings-save]');
      await page.waitForFunction(() => (document.querySelector('[data-testid=set-moderation]') as HTMLSelectElement).value === '', undefined, { timeout: 5_000 });
      await page.waitForTimeout(300);
      assert.equal(k.persistence.read().moderation, undefined);
    } finally {
      await k.close();
    }
  });
});
