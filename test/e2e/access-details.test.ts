/**
 * The small things (E2E): the Video/Voice radio group is one tab stop moved by the arrow keys (mirrored
 * in Arabic); in accessibility mode focus and selection look different; a three-digit idle countdown
 * stays inside its ring; Chinese and Japanese lines break between words, not inside one; no error code
 * and no product name in front of a visitor.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-details.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright';
import { focusedTestId, tabTo } from './access-helpers.ts';
import { eventually, openKiosk, screenIs, useSilentE2eBrowser } from './harness.ts';

const suite = useSilentE2eBrowser();

const checked = (page: Page) => page.locator('[role=radio][aria-checked=true]').getAttribute('data-testid');

/**
 * Where the lines of every Chinese/Japanese text on screen break inside a word (Intl.Segmenter's words):
 * one line per offender. Each character's box says which line it is on.
 */
const MID_WORD_BREAKS = `(() => {
  const lang = document.documentElement.lang, out = [];
  const words = new Intl.Segmenter(lang, { granularity: 'word' });
  const walker = document.createTreeWalker(document.querySelector('.screen'), NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent;
    if (!text.trim() || n.parentElement.closest('.sr-only, [lang]:not(html)')) continue;
    const bounds = new Set([0, text.length]);
    for (const s of words.segment(text)) { bounds.add(s.index); bounds.add(s.index + s.segment.length); }
    const range = document.createRange();
    let lastTop = null;
    for (let i = 0; i < text.length; i++) {
      range.setStart(n, i); range.setEnd(n, i + 1);
      const r = range.getBoundingClientRect();
      if (r.width === 0) continue;
      if (lastTop !== null && r.top > lastTop + r.height / 2 && !bounds.has(i) && text[i - 1] !== ' ') out.push(JSON.stringify(text.slice(Math.max(0, i - 4), i) + '|' + text.slice(i, i + 4)));
      lastTop = r.top;
    }
  }
  return out;
})()`;

describe('The small things (E2E)', () => {
  it('Video/Voice: one tab stop, arrow keys move and choose (mirrored right to left)', async () => {
    const k = await openKiosk({ browser: suite.browser, baseUrl: suite.server.url, orientation: 'landscape', imageDataUrl: suite.portrait });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await tabTo(page, 'mode-video');
      await page.keyboard.press('ArrowRight');
      assert.equal(await checked(page), 'mode-audio');
      assert.equal(await focusedTestId(page), 'mode-audio');
      assert.equal(await page.getAttribute('[data-testid=mode-video]', 'tabindex'), '-1');
      await page.keyboard.press('Tab');
      assert.equal(await focusedTestId(page), 'start', 'one tab stop for the group');
      await page.keyboard.press('Shift+Tab');
      assert.equal(await focusedTestId(page), 'mode-audio', 'back onto the chosen option');
      await page.keyboard.press('ArrowLeft');
      assert.equal(await checked(page), 'mode-video');
      // Arabic: right to left, the arrow keys follow the reading direction.
      await page.click('[data-testid=lang-ar]');
      await page.focus('[data-testid=mode-video]');
      await page.keyboard.press('ArrowLeft');
      assert.equal(await checked(page), 'mode-audio');
      assert.equal(await screenIs(page, 'attract').then(() => k.emulator.listSessions().length), 0, 'no call started by an arrow key');
    } finally {
      await k.close();
    }
  });

  it('accessibility mode: the focus ring is not the selection\'s colour; no product name as the page title', async () => {
    const k = await openKiosk({ browser: suite.browser, baseUrl: suite.server.url, orientation: 'portrait', imageDataUrl: suite.portrait });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.click('[data-testid=accessibility]');
      await page.focus('[data-testid=start]');
      await tabTo(page, 'lang-de'); // English is the chosen one
      const look = (await page.evaluate(`(() => {
        const s = (id) => getComputedStyle(document.querySelector('[data-testid=' + id + ']'));
        const shadow = (st) => (st.boxShadow.match(/rgba?\\([^)]+\\)/) || ['none'])[0];
        return { focusRing: s('lang-de').outlineColor, focusedFill: s('lang-de').backgroundColor, plainFill: s('lang-fr').backgroundColor,
          chosenFill: s('lang-en').backgroundColor, chosenRing: shadow(s('lang-en')), chosenOutline: s('lang-en').outlineStyle };
      })()`)) as Record<string, string>;
      assert.notEqual(look.focusRing, look.chosenFill, `focus ${look.focusRing} vs the chosen fill`);
      assert.notEqual(look.focusRing, look.chosenRing, `focus ${look.focusRing} vs the chosen outline`);
      assert.equal(look.focusedFill, look.plainFill, 'the focused pill is not filled like the chosen one');
      assert.equal(look.chosenOutline, 'none', 'the chosen pill has no focus ring');
      assert.notEqual(await page.title(), 'Avatar Kiosk');
      assert.equal(await page.title(), 'Ava, the digital host');
    } finally {
      await k.close();
    }
  });

  it('Chinese and Japanese break lines between words', async () => {
    const k = await openKiosk({ browser: suite.browser, baseUrl: suite.server.url, orientation: 'portrait', imageDataUrl: suite.portrait });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      const found: string[] = [];
      for (const lang of ['ja', 'zh-Hans'] as const) {
        await page.setViewportSize({ width: 1080, height: 1920 });
        await page.click(`[data-testid=lang-${lang}]`);
        for (const size of [{ width: 360, height: 480 }, { width: 420, height: 640 }, { width: 600, height: 800 }, { width: 768, height: 1024 }, { width: 1080, height: 1920 }]) {
          await page.setViewportSize(size);
          await page.evaluate('new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))');
          for (const b of (await page.evaluate(MID_WORD_BREAKS)) as string[]) found.push(`${lang} ${size.width}x${size.height}: ${b}`);
        }
      }
      assert.deepEqual(found, [], 'no line breaks inside a word');
    } finally {
      await k.close();
    }
  });

  it('a three-digit idle countdown stays inside its ring; the error screen shows no code', async () => {
    const k = await openKiosk({
      browser: suite.browser,
      baseUrl: suite.server.url,
      orientation: 'landscape',
      imageDataUrl: suite.portrait,
      config: { idle: { promptSeconds: 10, hangupSeconds: 60 }, accessibility: { default: true } },
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 30_000);
      await page.locator('[data-testid=idle-prompt]').waitFor({ timeout: 40_000 });
      const fit = (await page.evaluate(`(() => {
        const ring = document.querySelector('[data-testid=idle-prompt] .ring').getBoundingClientRect();
        const num = document.querySelector('[data-testid=idle-prompt] .num');
        const range = document.createRange(); range.selectNodeContents(num);
        const t = range.getBoundingClientRect();
        const inner = ring.width * 0.82; // the ring's inner circle
        const cx = ring.left + ring.width / 2, cy = ring.top + ring.height / 2;
        // The text's corners inside the inner circle.
        const corners = [[t.left, t.top], [t.right, t.top], [t.left, t.bottom], [t.right, t.bottom]];
        return { text: num.textContent, inside: corners.every(([x, y]) => Math.hypot(x - cx, y - cy) <= inner / 2), w: Math.round(t.width), ring: Math.round(ring.width) };
      })()`)) as { text: string; inside: boolean; w: number; ring: number };
      assert.ok(Number(fit.text) >= 100, `three digits (${fit.text})`);
      assert.ok(fit.inside, `${fit.text} (${fit.w} px wide) inside the ${fit.ring} px ring's inner circle`);
      await page.keyboard.press('Escape');
      const liveId = k.emulator.listSessions().find((s) => s.status !== 'ended')!.id;
      k.emulator.forceHangup(liveId, 'credit_insufficient');
      await screenIs(page, 'error');
      await eventually(async () => ((await page.locator('[data-testid=screen-error]').textContent()) ?? '').length > 0, 'the error screen has its text');
      const text = (await page.locator('[data-testid=screen-error]').textContent()) ?? '';
      assert.doesNotMatch(text, /credit_insufficient|code:/, 'the code is for staff');
      assert.equal(await page.getAttribute('[data-testid=screen-error]', 'data-code'), 'credit_insufficient', 'kept for staff tools');
    } finally {
      await k.close();
    }
  });
});
