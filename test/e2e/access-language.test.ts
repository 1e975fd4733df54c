/**
 * Languages end to end (E2E): a language the visitor picks is announced in itself; the operator's
 * greeting comes in the visitor's language (a per-language map in config.json), else in the default
 * language marked with its `lang`; the avatar's grammatical gender from config.json reaches the words on
 * screen; and the closed screen has the language picker too.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-language.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { accessSuite, announced, pageLang } from './access-helpers.ts';
import { eventually, openClosedKiosk, screenIs, testIdText } from './harness.ts';

const suite = accessSuite();

describe('Languages: announced, greeting per language, grammar, closed screen (E2E)', () => {
  it('announces the chosen language, shows the greeting in it (or marked as the default language), and agrees with a female avatar', async () => {
    const k = await suite.open('landscape', {
      config: {
        avatars: [
          {
            name: 'Ava',
            imagePath: suite.portrait,
            gender: 'female',
            greeting: { en: 'Welcome to the Grand Hotel!', de: 'Willkommen im Grand Hotel!' },
          },
        ],
      },
    });
    try {
      const { page } = k;
      assert.equal(await testIdText(page, 'greeting'), 'Welcome to the Grand Hotel!');
      await page.click('[data-testid=lang-de]');
      await eventually(async () => (await announced(page)) === 'Sprache: Deutsch', 'the language change is announced, in German');
      assert.equal(await testIdText(page, 'greeting'), 'Willkommen im Grand Hotel!');
      assert.equal(await page.getAttribute('[data-testid=greeting]', 'lang'), null, 'in the page language');
      assert.equal((await page.locator('.eyebrow').textContent())?.trim(), 'Ihre digitale Gastgeberin');

      // No French greeting: the default language's, marked so a screen reader reads it as English.
      await page.click('[data-testid=lang-fr]');
      await eventually(async () => (await announced(page)) === 'Langue : Français', 'announced in French');
      assert.equal(await testIdText(page, 'greeting'), 'Welcome to the Grand Hotel!');
      assert.equal(await page.getAttribute('[data-testid=greeting]', 'lang'), 'en');
      assert.equal((await page.locator('.eyebrow').textContent())?.trim(), 'Votre hôtesse numérique');

      await page.click('[data-testid=lang-es]');
      assert.equal((await page.locator('.eyebrow').textContent())?.trim(), 'Su anfitriona digital');
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 30_000);
      await eventually(async () => (await announced(page)) === 'Ava está lista. Empiece a hablar.', 'ready, in the feminine');
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
    } finally {
      await k.close();
    }
  });

  it('the closed screen has the language picker: the opening time in the visitor\'s language', async () => {
    const k = await openClosedKiosk({ browser: suite.browser, baseUrl: suite.server.url, orientation: 'portrait', imageDataUrl: suite.portrait });
    try {
      const { page } = k;
      await page.click('[data-testid=lang-de]', { timeout: 5_000 });
      assert.deepEqual(await pageLang(page), { lang: 'de', dir: 'ltr' });
      assert.equal(await testIdText(page, 'closed-lead'), 'Wir öffnen wieder: Dienstag, 09:00.');
      await eventually(async () => (await announced(page)) === 'Sprache: Deutsch', 'announced');
      assert.equal(k.emulator.listSessions().length, 0, 'choosing a language starts nothing');
    } finally {
      await k.close();
    }
  });
});
