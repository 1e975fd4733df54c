/**
 * Safe and honest in front of the public (E2E, the built renderer in Debian Chromium, bridged to a real kiosk
 * on the emulator): the AI label with the avatar's name on the attract and live screens and in what a screen
 * reader hears; what goes where; one tap from attract to live with moderation strict; the Privacy sheet by
 * keyboard, its QR code (and the attract screen's) decoded by a QR reader (jsQR) from a screenshot to the
 * configured URL; an adult kiosk's gate left alone, and its staff check. The seven languages are in
 * safety-languages.test.ts and safety-gate.test.ts; the layout matrix and rendered contrast in
 * safety-layout.test.ts. Screenshots: test/artifacts/screens/safety-*.png.
 * Build first: npm run build.  Run: node --import tsx --test --test-timeout=180000 test/e2e/safety.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { KIOSK_SIZES, accessSuite, checkScreen, focusedTestId } from './access-helpers.ts';
import { eventually, openStaffKiosk, screenIs, screenshot, screenshotBoth, testIdText } from './harness.ts';
import { ADULT, PRIVACY, decodeQr, message, receivedModeration, tapsToLive } from './safety-fixtures.ts';

const suite = accessSuite();

describe('Safe and honest in front of the public (E2E)', () => {
  it('public: one tap to live, moderation strict; the AI label and what goes where on attract and live, in what a screen reader hears', async () => {
    const k = await suite.open('portrait', { config: { privacy: PRIVACY } });
    try {
      const { page } = k;
      assert.equal(await testIdText(page, 'ai-label'), 'Ava is an AI, not a person');
      // Demo mode (the built-in emulator): the demo engine keeps the voice and picture on the device.
      assert.equal(await testIdText(page, 'sends'), 'This is a demo: your voice and camera picture stay on this device.');
      assert.equal((await page.locator('body').textContent())?.includes('recorded here'), false, 'the false sentence is gone');
      assert.equal((await page.locator('body').textContent())?.includes('avatar service'), false, 'nothing says the demo sends anything to a service');
      const heard = await page.locator('[data-testid=screen-attract]').ariaSnapshot();
      assert.match(heard, /heading "Ava" \[level=1\]\n\s*- paragraph: Ava is an AI, not a person/);
      // (The snapshot is YAML: a text with a colon in it is quoted.)
      assert.match(heard, /paragraph: "This is a demo: your voice and camera picture stay on this device\."/);
      assert.match(heard, /img "Scan for the venue’s privacy notice"/);
      assert.match(heard, /button "Privacy"/);
      await page.click('[data-testid=mode-audio]');
      assert.equal(await testIdText(page, 'sends'), 'This is a demo: your voice stays on this device.');
      await page.click('[data-testid=mode-video]');

      assert.equal(await tapsToLive(page, ['start']), 1, 'public: one tap from attract to live');
      assert.deepEqual(receivedModeration(k), ['strict']);
      await page.locator('[data-testid=live-waiting]').waitFor({ state: 'detached', timeout: 15_000 });
      assert.equal(await page.getAttribute('[data-testid=screen-live]', 'aria-label'), 'Conversation with Ava, an AI');
      assert.equal(await testIdText(page, 'ai-label'), 'Ava is an AI, not a person');
      await screenshotBoth(page, 'safety-live-en', 'portrait');
      await checkScreen(page, 'live with the AI label', KIOSK_SIZES);
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
    } finally {
      await k.close();
    }
  });

  it('the Privacy sheet by keyboard: the focus on Close and back, Tab stays inside, what a screen reader hears; both QR codes decode to the URL', async () => {
    const k = await suite.open('portrait', { config: { privacy: PRIVACY } });
    try {
      const { page } = k;
      assert.equal(await decodeQr(page, '[data-testid=screen-attract] [data-testid=privacy-qr]'), PRIVACY.url, 'the attract screen\'s code');
      await page.locator('[data-testid=privacy-open]').focus();
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=privacy-sheet]').waitFor();
      await eventually(async () => (await focusedTestId(page)) === 'privacy-close', 'the focus on Close');
      assert.equal(await decodeQr(page, '[data-testid=privacy-sheet] [data-testid=privacy-qr]'), PRIVACY.url, 'the sheet\'s code');
      const heard = await page.locator('[data-testid=privacy-sheet]').ariaSnapshot();
      assert.match(heard, /dialog "Your privacy"/);
      assert.match(heard, /Ava is an AI, not a person/);
      assert.match(heard, /keeps counts of its visitors by the hour, numbers only/);
      assert.match(heard, /img "Scan for the venue’s privacy notice"/);
      await page.keyboard.press('Tab');
      assert.equal(await focusedTestId(page), 'privacy-close', 'Tab stays inside the dialog');
      await page.keyboard.press('Escape');
      await page.locator('[data-testid=privacy-sheet]').waitFor({ state: 'detached' });
      await eventually(async () => (await focusedTestId(page)) === 'privacy-open', 'the focus back on Privacy');
      assert.equal(k.emulator.listSessions().length, 0, 'reading the notice creates nothing');
    } finally {
      await k.close();
    }
  });

  it('adult, a gate left alone returns to the start by itself', async () => {
    const k = await suite.open('landscape', { config: ADULT });
    try {
      const { page } = k;
      await page.evaluate('window.__kioskTestGateIdleMs = 1500');
      await page.click('[data-testid=start]');
      await screenIs(page, 'age-gate');
      await screenIs(page, 'attract', 35_000);
      assert.deepEqual(k.kiosk.ageGateCounts(), { asked: 1, confirmed: 0, declined: 0 });
      assert.equal(k.emulator.listSessions().length, 0);
    } finally {
      await k.close();
    }
  });

  it('adult, ageCheck staff: a wrong PIN is refused, staff\'s PIN unlocks the call (axe 0, screenshot)', async () => {
    const k = await openStaffKiosk({
      browser: suite.browser,
      baseUrl: suite.server.url,
      orientation: 'portrait',
      imageDataUrl: suite.portrait,
      file: { staffPinHash: await hashPin('137946'), ...ADULT, adult: { ...ADULT.adult, ageCheck: 'staff' } },
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.click('[data-testid=start]');
      await screenIs(page, 'age-gate');
      assert.equal(await page.locator('[data-testid=gate-yes]').count(), 0, 'no "yes" for the visitor');
      assert.equal(await testIdText(page, 'gate-consent'), 'This is a demo: when staff unlock the call, your voice and, in a video call, your camera picture stay on this device.');
      await checkScreen(page, 'age gate, staff check', KIOSK_SIZES);
      await screenshot(page, 'safety-age-gate-staff-en', 'portrait');
      for (const d of '111111') await page.click(`[data-testid=gate-key-${d}]`);
      await page.click('[data-testid=gate-unlock]');
      await page.locator('[data-testid=gate-wrong-pin]').waitFor();
      assert.equal(k.emulator.listSessions().length, 0);
      for (const d of '137946') await page.click(`[data-testid=gate-key-${d}]`);
      await page.click('[data-testid=gate-unlock]');
      await screenIs(page, 'live', 30_000);
      assert.deepEqual(receivedModeration(k), ['disabled']);
      assert.deepEqual(k.kiosk.ageGateCounts(), { asked: 1, confirmed: 1, declined: 0 });
      const unlocked = (await k.channels.dispatch('kiosk:staff:status', undefined)) as { ok: boolean };
      assert.equal(unlocked.ok, false, 'the staff panel locked again at once');
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
    } finally {
      await k.close();
    }
  });
});
