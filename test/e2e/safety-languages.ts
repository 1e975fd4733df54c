/**
 * The attract screen's disclosure and the Privacy sheet in the seven languages (E2E): the AI label with the
 * avatar's name, the venue's notice in the visitor's language or the default language's (marked with its
 * `lang`), axe (WCAG 2.2 A/AA) 0 and 48 px targets at both kiosk orientations, screenshots
 * (test/artifacts/screens/safety-attract-<lang>-*.png, safety-privacy-<lang>-*.png). The kiosk is on its built-in
 * emulator, so both say the demo's sentence (the voice and picture stay on the device); the real service's
 * sentence is shown in start-truth.test.ts.
 * Shared by safety-languages-1.test.ts (en, es, fr, de) and safety-languages-2.test.ts (zh-Hans, ja, ar).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LanguageCode } from '../../electron/contract.ts';
import { KIOSK_SIZES, accessSuite, checkScreen } from './access-helpers.ts';
import { screenshotBoth, testIdText } from './harness.ts';
import { PRIVACY, message } from './safety-fixtures.ts';

/** Register the file's tests for `languages` (two files share the seven, each inside the runner's per-file timeout). */
export function languageTests(languages: readonly LanguageCode[]): void {
  const suite = accessSuite();
  describe(`The disclosure and the Privacy sheet: ${languages.join(', ')} (E2E)`, () => {
    for (const lang of languages) {
      it(`${lang}: the AI label, the notice, axe 0, screenshots`, async () => {
        const k = await suite.open('portrait', { config: { privacy: PRIVACY } });
        try {
          const { page } = k;
          await page.click(`[data-testid=lang-${lang}]`);
          assert.equal(await testIdText(page, 'ai-label'), message(lang, 'disclosure.aiLabel', { name: 'Ava' }));
          // Demo mode (the built-in emulator): the demo engine keeps the voice and picture on the device.
          assert.equal(await testIdText(page, 'sends'), message(lang, 'attract.demoSendsVoicePicture'));
          await screenshotBoth(page, `safety-attract-${lang}`, 'portrait');
          await checkScreen(page, `attract with the disclosure (${lang})`, KIOSK_SIZES);
          await page.click('[data-testid=privacy-open]');
          await page.locator('[data-testid=privacy-sheet]').waitFor();
          const own = (PRIVACY.notice as Partial<Record<LanguageCode, string>>)[lang];
          assert.equal(await testIdText(page, 'privacy-notice'), own ?? PRIVACY.notice.en);
          assert.equal(await page.getAttribute('[data-testid=privacy-notice]', 'lang'), own ? null : 'en', 'a notice in another language says which');
          assert.equal(await testIdText(page, 'privacy-url'), PRIVACY.url);
          assert.equal(await testIdText(page, 'privacy-sends'), message(lang, 'attract.demoSendsVoicePicture'), 'the sheet says the same as the attract screen');
          assert.equal(await testIdText(page, 'privacy-counting'), message(lang, 'disclosure.counting'), 'the sheet says the kiosk counts visitors');
          await screenshotBoth(page, `safety-privacy-${lang}`, 'portrait');
          await checkScreen(page, `privacy sheet (${lang})`, KIOSK_SIZES);
        } finally {
          await k.close();
        }
      });
    }
  });
}
