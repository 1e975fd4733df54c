/**
 * Languages end to end (E2E): a language the visitor picks is announced in itself; the operator's
 * greeting comes in the visitor's language (a per-language map in config.json), else in the default
 * language marked with its `lang`; the avatar's grammatical gender from config.json reaches the words on
 * screen; and the closed screen has the language picker too.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-language.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../electron/core/clock.ts';
import { startFleetHost } from '../../electron/fleet/fleet-host.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { accessSuite, announced, pageLang } from './access-helpers.ts';
import { ROOT, eventually, openStaffKiosk, screenIs, testIdText } from './harness.ts';

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
    const k = await openStaffKiosk({
      browser: suite.browser,
      baseUrl: suite.server.url,
      orientation: 'portrait',
      imageDataUrl: suite.portrait,
      file: { staffPinHash: await hashPin('246813'), schedule: { timeZone: 'Europe/Berlin', weekly: { mon: ['09:00-18:00'], tue: ['09:00-18:00'] } } },
    });
    const fleet = startFleetHost({
      service: k.service,
      ledger: k.ops.ledger,
      dataDir: k.dataDir,
      version: '0.1.0-e2e',
      clock: new FakeClock(Date.parse('2026-11-23T19:00:00Z')), // Monday 20:00 in Berlin: closed
      configFile: k.persistence,
      env: {},
      policy: {},
      appRoot: ROOT,
      actions: { reload: () => {}, restart: () => {}, screenshot: async () => ({ png: Buffer.alloc(0), width: 0, height: 0 }) },
    });
    try {
      const { page } = k;
      await page.reload();
      await screenIs(page, 'closed');
      await page.click('[data-testid=lang-de]', { timeout: 5_000 });
      assert.deepEqual(await pageLang(page), { lang: 'de', dir: 'ltr' });
      assert.equal(await testIdText(page, 'closed-next'), 'Wir öffnen wieder: Dienstag, 09:00.');
      await eventually(async () => (await announced(page)) === 'Sprache: Deutsch', 'announced');
      assert.equal(k.emulator.listSessions().length, 0, 'choosing a language starts nothing');
    } finally {
      await fleet.close();
      await k.close();
    }
  });
});
