/**
 * An adult kiosk's age gate (E2E): in the seven languages (axe 0, 48 px targets at both orientations,
 * screenshots test/artifacts/screens/safety-age-gate-<lang>-*.png), "No" goes back and nothing is created;
 * then by keyboard (Enter opens it, Escape is "No", Tab to "Yes" and Enter): two taps from attract to live,
 * moderation disabled, and only the counts kept.
 * Build first: npm run build.  Run: node --import tsx --test --test-timeout=180000 test/e2e/safety-gate.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LANGUAGE_CODES } from '../../electron/contract.ts';
import { KIOSK_SIZES, accessSuite, checkScreen, tabTo } from './access-helpers.ts';
import { screenIs, screenshotBoth, testIdText } from './harness.ts';
import { ADULT, PRIVACY, message, receivedModeration, tapsToLive } from './safety-fixtures.ts';

const suite = accessSuite();

describe('The age gate of an adult kiosk (E2E)', () => {
  it('in seven languages: axe 0, screenshots; "No" goes back and nothing is created', async () => {
    const k = await suite.open('portrait', { config: { ...ADULT, privacy: PRIVACY } });
    try {
      const { page } = k;
      for (const lang of LANGUAGE_CODES) {
        await page.click(`[data-testid=lang-${lang}]`);
        await page.click('[data-testid=start]');
        await screenIs(page, 'age-gate');
        assert.equal(await testIdText(page, 'gate-yes'), message(lang, 'ageGate.yes', { age: '18' }), lang);
        assert.equal(await testIdText(page, 'ai-label'), message(lang, 'disclosure.aiLabel', { name: 'Ava' }));
        assert.equal(await testIdText(page, 'gate-consent'), message(lang, 'ageGate.demoConsent', { age: '18' }), `${lang}: the demo keeps the voice and picture on the device`);
        await screenshotBoth(page, `safety-age-gate-${lang}`, 'portrait');
        await checkScreen(page, `age gate (${lang})`, KIOSK_SIZES);
        await page.click('[data-testid=gate-no]');
        await screenIs(page, 'attract');
      }
      assert.equal(k.emulator.listSessions().length, 0, 'nothing created before the gate was passed');
      assert.deepEqual(k.kiosk.ageGateCounts(), { asked: 7, confirmed: 0, declined: 7 });
    } finally {
      await k.close();
    }
  });

  it('two taps to live, then by keyboard; what a screen reader hears; moderation disabled; only counts kept', async () => {
    const k = await suite.open('landscape', { config: { ...ADULT, privacy: PRIVACY } });
    try {
      const { page } = k;
      assert.equal(await tapsToLive(page, ['start', 'gate-yes']), 2, 'adult: two taps from attract to live');
      assert.deepEqual(receivedModeration(k), ['disabled']);
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      await page.click('[data-testid=done]');
      await screenIs(page, 'attract');
      // Keyboard: Enter on "Tap to talk" opens the gate, Escape means "No"; then Tab to "Yes" and Enter.
      await page.locator('[data-testid=start]').focus();
      await page.keyboard.press('Enter');
      await screenIs(page, 'age-gate');
      await page.keyboard.press('Escape');
      await screenIs(page, 'attract');
      await page.locator('[data-testid=start]').focus();
      await page.keyboard.press('Enter');
      await screenIs(page, 'age-gate');
      const heard = await page.locator('[data-testid=screen-age-gate]').ariaSnapshot();
      assert.match(heard, /heading "For adults only" \[level=1\]/);
      assert.match(heard, /Ava is an AI, not a person/);
      assert.match(heard, /Are you 18 or older\?/);
      assert.match(heard, /button "Yes, I am 18 or older"/);
      await tabTo(page, 'gate-yes');
      await page.keyboard.press('Enter');
      await screenIs(page, 'live', 30_000);
      assert.deepEqual(receivedModeration(k), ['disabled', 'disabled']);
      assert.deepEqual(k.kiosk.ageGateCounts(), { asked: 3, confirmed: 2, declined: 1 });
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
    } finally {
      await k.close();
    }
  });
});
