/**
 * Languages and accessibility (E2E): the idle prompt in Arabic and accessibility mode on a silent
 * microphone: the timings doubled, axe and targets, its controls in reach.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-idle.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KIOSK_SIZES, accessSuite, checkScreen, controlsAboveBand } from './access-helpers.ts';
import { launchChromiumWithArgs, openKiosk, screenIs, screenshotBoth, writeWav } from './harness.ts';

const suite = accessSuite();

describe('Languages and accessibility: the idle prompt (E2E)', () => {
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
