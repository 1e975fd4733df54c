/**
 * Languages and accessibility (E2E): the staff panel by keyboard (every tab under axe, the avatar audio
 * output for private listening), and the idle prompt in accessibility mode (timings doubled, controls in
 * reach) on a silent microphone.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-staff.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { ALL_SIZES, KIOSK_SIZES, accessSuite, checkScreen, controlsAboveBand, tabTo } from './access-helpers.ts';
import { eventually, launchChromiumWithArgs, openKiosk, openStaffKiosk, screenIs, screenshotBoth, writeWav } from './harness.ts';

const suite = accessSuite();

describe('Languages and accessibility: staff panel and idle prompt (E2E)', () => {
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

  it('the idle prompt passes axe and keeps its controls in reach; accessibility mode doubles the idle timings', async () => {
    // A silent microphone (the default fake one beeps, which the voice detector hears as someone talking).
    const wavDir = mkdtempSync(join(tmpdir(), 'kiosk-e2e-access-'));
    const silent = await launchChromiumWithArgs([`--use-file-for-fake-audio-capture=${writeWav(join(wavDir, 'silence.wav'), 2, () => 0)}`]);
    const k = await openKiosk({ browser: silent, baseUrl: suite.server.url, orientation: 'landscape', imageDataUrl: suite.portrait, config: { idle: { promptSeconds: 10, hangupSeconds: 30 } } });
    try {
      await screenIs(k.page, 'attract');
      const { page } = k;
      await page.click('[data-testid=lang-ar]');
      await page.click('[data-testid=accessibility]');
      const startMs = Date.now();
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 30_000);
      // Nobody talks, nobody is seen (the presence camera is off): the watch prompts.
      await page.locator('[data-testid=idle-prompt]').waitFor({ timeout: 40_000 });
      const promptAfterS = (Date.now() - startMs) / 1000;
      assert.ok(promptAfterS >= 19, `the prompt came after ${promptAfterS.toFixed(1)} s: twice the configured 10 s`);
      // The countdown starts from twice the configured 30 s.
      const first = Number(await page.evaluate(`document.querySelector('[data-testid=idle-prompt] .num').textContent.replace(/[٠-٩]/g, (d) => '٠١٢٣٤٥٦٧٨٩'.indexOf(d))`));
      assert.ok(first > 30 && first <= 60, `the countdown starts at ${first} s, from 60`);
      await screenshotBoth(page, 'access-idle-ar-accessible', 'landscape');
      await checkScreen(page, 'idle prompt (ar, accessible)', KIOSK_SIZES);
      assert.deepEqual(await controlsAboveBand(page, 50), [], 'the idle prompt buttons are in reach');
      await page.click('[data-testid=idle-keep]');
      await page.locator('[data-testid=idle-prompt]').waitFor({ state: 'detached', timeout: 5_000 });
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
    } finally {
      await k.close();
      await silent.close();
    }
  });
});
