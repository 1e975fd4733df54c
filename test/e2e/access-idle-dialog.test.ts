/**
 * "Are you still there?" by keyboard (E2E): the prompt is a modal dialog that takes the focus, keeps
 * Tab on its own buttons, presses them with Enter/Space, treats Escape as "keep talking", and gives the
 * focus back when it closes. A key meant for the prompt never reaches the call behind it (End, Mute).
 * A silent fake microphone, so nobody is heard and the prompt comes after the configured 10 s.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-idle-dialog.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright';
import { focusedTestId, tabTo } from './access-helpers.ts';
import { eventually, openKiosk, screenIs, useSilentE2eBrowser } from './harness.ts';

const suite = useSilentE2eBrowser();

const prompt = (page: Page) => page.locator('[data-testid=idle-prompt]');

describe('"Are you still there?" is a modal dialog for the keyboard (E2E)', () => {
  it('takes the focus, traps Tab, Escape/Enter/Space keep talking, and the focus returns; the call is neither ended nor muted', async () => {
    const k = await openKiosk({ browser: suite.browser, baseUrl: suite.server.url, orientation: 'landscape', imageDataUrl: suite.portrait, config: { idle: { promptSeconds: 10, hangupSeconds: 120 } } });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.keyboard.press('Enter');
      await screenIs(page, 'live', 30_000);
      await page.locator('[data-testid=live-waiting]').waitFor({ state: 'detached', timeout: 15_000 });

      // The visitor's focus is on End when the prompt comes.
      await tabTo(page, 'hangup');
      await prompt(page).waitFor({ timeout: 30_000 });
      await eventually(async () => (await focusedTestId(page)) === 'idle-keep', 'the prompt took the focus', 3_000);
      // Tab and Shift+Tab go round the dialog's two buttons and never leave it.
      const stops: (string | null)[] = [];
      for (const key of ['Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab']) {
        await page.keyboard.press(key);
        stops.push(await focusedTestId(page));
      }
      assert.deepEqual(stops, ['idle-end', 'idle-keep', 'idle-end', 'idle-keep', 'idle-end']);
      await page.keyboard.press('Shift+Tab'); // back on "Keep talking"
      // The call behind the prompt is out of the keyboard's reach (inert).
      assert.equal(await page.getAttribute('[data-testid=screen-live]', 'inert'), '');

      // Escape means "keep talking": the prompt closes, the call goes on, the focus is back on End.
      await page.keyboard.press('Escape');
      await prompt(page).waitFor({ state: 'detached', timeout: 5_000 });
      await screenIs(page, 'live');
      assert.equal(await focusedTestId(page), 'hangup', 'the focus went back to End');

      // Enter, pressed while the focus was on End before the prompt, presses "Keep talking".
      await prompt(page).waitFor({ timeout: 30_000 });
      await eventually(async () => (await focusedTestId(page)) === 'idle-keep', 'the prompt took the focus', 3_000);
      await page.keyboard.press('Enter');
      await prompt(page).waitFor({ state: 'detached', timeout: 5_000 });
      await screenIs(page, 'live');
      assert.equal(await focusedTestId(page), 'hangup');

      // Space, with the focus on Mute before the prompt: keeps talking, does not mute.
      await tabTo(page, 'mute');
      await prompt(page).waitFor({ timeout: 30_000 });
      await eventually(async () => (await focusedTestId(page)) === 'idle-keep', 'the prompt took the focus', 3_000);
      await page.keyboard.press('Space');
      await prompt(page).waitFor({ state: 'detached', timeout: 5_000 });
      assert.equal(await page.getAttribute('[data-testid=mute]', 'aria-pressed'), 'false', 'not muted');
      assert.equal(await focusedTestId(page), 'mute');

      // And the dialog's own End button, reached by Tab, ends the call.
      await prompt(page).waitFor({ timeout: 30_000 });
      await eventually(async () => (await focusedTestId(page)) === 'idle-keep', 'the prompt took the focus', 3_000);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await screenIs(page, 'ended');
      await eventually(() => k.emulator.listSessions().every((s) => s.status === 'ended'), 'the session ended on the service');
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });
});
