/**
 * What a screen reader hears (E2E): every live region of the page is watched from the first paint
 * (aria-live polite/assertive, role status/alert/log), and each change of its text is one announcement.
 * Through a call that warms up with NOT_READY retries, goes live with a short grant, is left alone until
 * the idle prompt ends it, waits on the end screen's return countdown, and then a call that fails for
 * want of credits: every message is spoken once (no countdown read out every second), no live region
 * sits inside an element that is busy, and the error is announced once.
 * A silent fake microphone, so nobody is heard.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-announce.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright';
import { eventually, openKiosk, screenIs, useSilentE2eBrowser } from './harness.ts';

const suite = useSilentE2eBrowser();

/**
 * Installed before the page's scripts: polls every live region 20 times a second and records each new
 * non-empty text (a region that appears with text counts too: an inserted alert is spoken).
 */
const RECORDER = `(() => {
  const seen = new WeakMap();
  window.__announcements = [];
  const LIVE = '[aria-live=polite], [aria-live=assertive], [role=status], [role=alert], [role=log]';
  setInterval(() => {
    for (const el of document.querySelectorAll(LIVE)) {
      if (el.getAttribute('aria-live') === 'off') continue;
      const text = (el.textContent || '').replace(/\\s+/g, ' ').trim();
      const before = seen.get(el);
      seen.set(el, text);
      if (!text || text === before) continue;
      const busy = el.closest('[aria-busy=true]');
      window.__announcements.push({ text, busy: !!busy, region: el.getAttribute('data-testid') || el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ')[0] : '') });
    }
  }, 50);
})()`;

interface Heard {
  text: string;
  busy: boolean;
  region: string;
}
const heard = (page: Page) => page.evaluate('window.__announcements') as Promise<Heard[]>;

describe('Screen readers hear changes of meaning, once (E2E)', () => {
  it('no countdown is read every second, nothing live inside a busy element, the error once', async () => {
    const k = await openKiosk({
      browser: suite.browser,
      baseUrl: suite.server.url,
      orientation: 'landscape',
      imageDataUrl: suite.portrait,
      // NOT_READY for 7 s: the connecting screen counts down to its retries (2 s, then 4 s).
      knobs: { warmupMs: { audio: 0, video: 7_000 }, liveDurationS: 26 },
      config: { countdownWarningSeconds: 14, returnToAttractSeconds: 8, idle: { promptSeconds: 10, hangupSeconds: 13 } },
    });
    try {
      const { page } = k;
      await page.addInitScript({ content: RECORDER });
      await page.reload();
      await screenIs(page, 'attract');
      await page.click('[data-testid=start]');
      await screenIs(page, 'connecting');
      await screenIs(page, 'live', 30_000);
      // Nobody there: the prompt comes after 10 s, counts 13 s down and ends the call (the grant is 26 s,
      // so the call's own countdown passes its warning and its last 10 s meanwhile).
      await screenIs(page, 'ended', 40_000);
      await screenIs(page, 'attract', 20_000); // the return countdown ran out
      const call = await heard(page);

      await page.click('[data-testid=mode-audio]');
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 30_000);
      k.emulator.forceHangup(k.emulator.listSessions().find((s) => s.status !== 'ended')!.id, 'credit_insufficient');
      await screenIs(page, 'error');
      const title = ((await page.locator('[data-testid=error-title]').textContent()) ?? '').trim();
      await page.waitForTimeout(1_500);
      const all = await heard(page);
      console.log(all.map((h) => `${h.region}: ${h.text}`).join('\n'));

      assert.deepEqual(all.filter((h) => h.busy), [], 'no live region inside an element that is aria-busy');
      // The same message with other numbers is the same message: it is said once.
      for (const [which, part] of [['the first call', call], ['the second call', all.slice(call.length)]] as const) {
        const counts = new Map<string, number>();
        for (const h of part) {
          const shape = h.text.replace(/[0-9٠-٩]+/g, '#');
          counts.set(shape, (counts.get(shape) ?? 0) + 1);
        }
        assert.deepEqual([...counts].filter(([, n]) => n > 1), [], `every message once in ${which} (a countdown is not read out every second)`);
      }
      assert.equal(all.filter((h) => h.text.includes(title)).length, 1, `the error "${title}" is announced once`);
      // And what matters is said: connecting, ready, its time runs low, the prompt's last 10 s, why it ended.
      const said = call.map((h) => h.text);
      for (const expected of ['Connecting to Ava…', 'Ava is ready. Start talking.', 'The conversation ended because nobody was talking.']) {
        assert.ok(said.includes(expected), `"${expected}" was announced (heard: ${said.join(' | ')})`);
      }
      assert.ok(said.some((s) => /^The conversation will end in 10 seconds/.test(s)), 'the idle prompt\'s last 10 s are announced');
      assert.ok(said.some((s) => /^Ending in 0:1[0-4]$/.test(s)), 'the call\'s warning is announced');
      await eventually(async () => (await page.getAttribute('main.kiosk', 'data-screen')) === 'error', 'still on the error screen');
    } finally {
      await k.close();
    }
  });
});
