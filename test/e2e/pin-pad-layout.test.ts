/**
 * The staff PIN pad at the sizes a kiosk's screen has (the layout matrix's, and the companion's smallest
 * window): its title, hint and every key fully on screen, nothing clipped by the pad, and the pad fits
 * without scrolling wherever the screen is at least 720 px tall. Screenshots of each size go to
 * test/artifacts/screens/pin-pad-<w>x<h>.png.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { COMPANION_SIZES, openStaffKiosk, screenIs, screenshotAt, useE2eBrowser } from './harness.ts';

const env = useE2eBrowser();

const SIZES = [
  { width: 1280, height: 720 },
  { width: 800, height: 600 },
  { width: 1024, height: 768 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
  { width: 720, height: 1280 },
  { width: 1080, height: 1920 },
  ...COMPANION_SIZES,
];

/** Runs in the page: each part of the pad that is not wholly inside the viewport, or cut by the pad's box. */
const CLIPPED = `(() => {
  const pad = document.querySelector('[data-testid=pin-pad]');
  const box = pad.getBoundingClientRect();
  const parts = [['title', '#pin-title'], ['hint', '.hint'], ['dots', '[data-testid=pin-dots]'], ...[...'1234567890'].map((d) => ['key ' + d, '[data-testid=pin-' + d + ']']), ['cancel', '[data-testid=pin-cancel]'], ['ok', '[data-testid=pin-ok]']];
  const out = [];
  for (const [name, sel] of parts) {
    const r = document.querySelector(sel).getBoundingClientRect();
    const where = Math.round(r.left) + ',' + Math.round(r.top) + ' ' + Math.round(r.width) + 'x' + Math.round(r.height);
    if (r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5) out.push(name + ' outside the viewport (' + where + ')');
    else if (r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) out.push(name + ' cut by the pad (' + where + ')');
  }
  return { problems: out, scrolls: pad.scrollHeight > pad.clientHeight + 1 };
})()`;

async function check(page: Page, state: string): Promise<string[]> {
  const found: string[] = [];
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150); // one layout after the resize
    const { problems, scrolls } = (await page.evaluate(CLIPPED)) as { problems: string[]; scrolls: boolean };
    // The pad may scroll only on a screen shorter than 720 px (the companion's small windows, 800×600):
    // then its top (the title and the hint) is where it starts, and the rest is a scroll away.
    const shown = scrolls && size.height < 720 ? problems.filter((p) => /^(title|hint) /.test(p)) : problems;
    for (const p of shown) found.push(`${state} ${size.width}x${size.height}: ${p}`);
    if (scrolls && size.height >= 720) found.push(`${state} ${size.width}x${size.height}: the pad scrolls`);
    await screenshotAt(page, `pin-pad-${state}-${size.width}x${size.height}`, size);
  }
  return found;
}

describe('PIN pad layout', () => {
  it('entering the PIN with start-up problems said on the pad: the title and every key wholly visible at every size; no scrolling from 720 px up', async () => {
    const k = await openStaffKiosk({
      browser: env.browser,
      baseUrl: env.server.url,
      orientation: 'landscape',
      imageDataUrl: env.portrait,
      file: { staffPinHash: await hashPin('246813') },
      startupAttention: [{ kind: 'config', code: 'invalid_config', message: 'config.json: callMode is invalid, using video.' }],
    });
    try {
      await screenIs(k.page, 'attract');
      await k.page.keyboard.press('Control+Shift+S');
      await k.page.locator('[data-testid=pin-pad]').waitFor({ timeout: 5_000 });
      await k.page.locator('[data-testid=pin-attention]').waitFor({ timeout: 5_000 });
      await k.page.waitForTimeout(500); // the pad's fade-in
      assert.deepEqual(await check(k.page, 'enter'), []);
    } finally {
      await k.close();
    }
  });
});
