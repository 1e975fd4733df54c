/**
 * Languages and accessibility by keyboard and by configuration (E2E): attract → German → call → mute →
 * end → attract with keys only and the live region's messages; a configured default language and
 * accessibility mode (Arabic mirrored, the persona's instruction, controls in the low-reach band); the
 * compact language list at the companion sizes; the first-start setup screen under axe.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-keyboard.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_SIZES, accessSuite, announced, checkScreen, controlsAboveBand, focusedTestId, pageLang, personaOf, smallTargets, tabTo } from './access-helpers.ts';
import { COMPANION_SIZES, VIEWPORTS, clippedElements, eventually, openStaffKiosk, screenIs, screenshotAt, screenshotBoth } from './harness.ts';

const suite = accessSuite();

describe('Languages and accessibility: keyboard, configuration, companion (E2E)', () => {
  it('keyboard only: attract → German → call → mute → end → attract, spoken through the live region; the avatar is told the language', async () => {
    const k = await suite.open('landscape', { config: { languageInstructions: { de: 'Antworte immer auf Deutsch.' } } });
    try {
      const { page } = k;
      await tabTo(page, 'lang-de');
      await page.keyboard.press('Enter');
      assert.deepEqual(await pageLang(page), { lang: 'de', dir: 'ltr' });
      assert.equal(await page.getAttribute('[data-testid=lang-de]', 'aria-pressed'), 'true');
      assert.equal((await page.locator('[data-testid=start]').textContent())?.trim(), 'Zum Sprechen tippen');

      // Back up to the start button (it comes before the bar in the reading order).
      for (let i = 0; i < 30 && (await focusedTestId(page)) !== 'start'; i++) await page.keyboard.press('Shift+Tab');
      assert.equal(await focusedTestId(page), 'start');
      await page.keyboard.press('Enter');
      await screenIs(page, 'connecting');
      await eventually(async () => (await announced(page)) === 'Verbindung zu Ava…', 'connecting is announced');
      await screenIs(page, 'live', 30_000);
      await eventually(async () => (await announced(page)) === 'Ava ist bereit. Sprechen Sie einfach los.', 'ready is announced');

      assert.equal(personaOf(k), 'A warm, concise hotel concierge.\n\nAntworte immer auf Deutsch.');

      await tabTo(page, 'mute');
      await page.keyboard.press('Space');
      await eventually(async () => (await page.getAttribute('[data-testid=mute]', 'aria-pressed')) === 'true', 'muted by Space');
      assert.equal((await page.locator('[data-testid=mute]').textContent())?.trim(), 'Stumm an');
      await eventually(async () => (await announced(page)) === 'Stumm an', 'muted is announced');
      await page.keyboard.press('Space');
      await eventually(async () => (await announced(page)) === 'Ich höre zu.', 'listening is announced');

      await tabTo(page, 'hangup');
      await page.keyboard.press('Enter');
      await screenIs(page, 'ended');
      await eventually(async () => (await announced(page)) === 'Das Gespräch ist beendet.', 'the end is announced');
      assert.match((await page.locator('[data-testid=return-countdown]').textContent()) ?? '', /Zurück zum Start in \d s/);
      await page.keyboard.press('Escape');
      await screenIs(page, 'attract');
      assert.deepEqual(await pageLang(page), { lang: 'en', dir: 'ltr' }, 'the next visitor starts in English');
      assert.equal((await page.locator('[data-testid=start]').textContent())?.trim(), 'Tap to talk');
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });

  it('a configured default language and accessibility mode: the call is made in it, Arabic mirrors, controls stay in the band', async () => {
    const k = await suite.open('portrait', {
      config: { languages: ['ar', 'en', 'de'], defaultLanguage: 'ar', accessibility: { default: true, reachBandPercent: 45 } },
    });
    try {
      const { page } = k;
      assert.deepEqual(await pageLang(page), { lang: 'ar', dir: 'rtl' });
      assert.equal(await page.getAttribute('main.kiosk', 'data-accessible'), 'true');
      assert.deepEqual(
        await page.locator('[data-testid=languages] button').evaluateAll((els) => els.map((e) => `${e.getAttribute('lang')}:${e.textContent?.trim()}`)),
        ['ar:العربية', 'en:English', 'de:Deutsch'],
      );
      // Mirrored: in a right-to-left page the first language sits to the right of the last.
      const first = await page.locator('[data-testid=lang-ar]').boundingBox();
      const last = await page.locator('[data-testid=lang-de]').boundingBox();
      assert.ok(first!.x > last!.x, 'Arabic (first) is on the right');
      await screenshotBoth(page, 'access-attract-ar-accessible', 'portrait');
      for (const orientation of ['portrait', 'landscape'] as const) {
        await page.setViewportSize(VIEWPORTS[orientation]);
        await page.waitForTimeout(150);
        assert.deepEqual(await controlsAboveBand(page, 45), [], `attract controls in the lower 45 % (${orientation})`);
      }
      await page.setViewportSize(VIEWPORTS.portrait);
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 30_000);
      assert.deepEqual(await controlsAboveBand(page, 45), [], 'live controls in the band');
      assert.match(personaOf(k), /\n\nAlways answer in Arabic\.$/);
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      assert.deepEqual(await controlsAboveBand(page, 45), [], 'ended controls in the band');
    } finally {
      await k.close();
    }
  });

  it('companion sizes: the attract screen fits and keeps 48 px targets in every language (a compact language list)', async () => {
    const k = await suite.open('portrait');
    try {
      const { page } = k;
      for (const lang of ['de', 'ar', 'ja'] as const) {
        await page.setViewportSize(COMPANION_SIZES[0]);
        await page.selectOption('[data-testid=lang-select]', lang);
        assert.equal((await pageLang(page)).lang, lang);
        for (const size of COMPANION_SIZES) {
          await screenshotAt(page, `access-companion-${lang}-${size.width}x${size.height}`, size);
          assert.deepEqual(await smallTargets(page), [], `targets ${lang} ${size.width}x${size.height}`);
          assert.deepEqual(await clippedElements(page), [], `nothing clipped ${lang} ${size.width}x${size.height}`);
        }
        await page.selectOption('[data-testid=lang-select]', 'en');
      }
    } finally {
      await k.close();
    }
  });

  it('the first-start setup screen passes axe and has 48 px targets', async () => {
    const k = await openStaffKiosk({ browser: suite.browser, baseUrl: suite.server.url, orientation: 'portrait', imageDataUrl: suite.portrait });
    try {
      await screenIs(k.page, 'setup');
      await checkScreen(k.page, 'setup', ALL_SIZES);
    } finally {
      await k.close();
    }
  });
});
