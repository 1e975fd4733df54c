/**
 * Shared by the languages-and-accessibility E2E files (test/e2e/access-*.test.ts): axe-core with the
 * WCAG 2.2 A/AA tags, the 48 px target check, the low-reach band, keyboard helpers, and one browser and
 * static server per file. Split in files so each stays well inside the runner's per-file timeout.
 */
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright';
import { AxeBuilder } from '@axe-core/playwright';
import { COMPANION_SIZES, VIEWPORTS, openKiosk, screenIs, useE2eBrowser, type KioskPage, type Orientation } from './harness.ts';

export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const MIN_TARGET_PX = 48;

export interface AccessSuite {
  readonly server: { url: string };
  readonly browser: Browser;
  /** The bundled demo portrait as a data URL. */
  readonly portrait: string;
  open(orientation: Orientation, extra?: Partial<Parameters<typeof openKiosk>[0]>): Promise<KioskPage>;
}

/** Register the file's before/after (the harness's usual setup) and a way to open the attract screen. */
export function accessSuite(): AccessSuite {
  const env = useE2eBrowser();
  return Object.assign(env, {
    async open(orientation: Orientation, extra: Partial<Parameters<typeof openKiosk>[0]> = {}): Promise<KioskPage> {
      const k = await openKiosk({ browser: env.browser, baseUrl: env.server.url, orientation, imageDataUrl: env.portrait, ...extra });
      await screenIs(k.page, 'attract');
      return k;
    },
  });
}

/** axe with the WCAG 2.2 A/AA rules over the whole page: the violations, one line per node. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.waitForTimeout(500); // the screens fade in over 450 ms: axe would measure half-faded contrast
  const result = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')} — ${n.failureSummary?.split('\n').slice(1, 2).join(' ').trim()}`));
}

/** Every visible control smaller than 48 × 48 px (WCAG 2.5.8 asks 24; a public touch screen wants 48). */
export async function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const out = [];
    for (const el of document.querySelectorAll('button, select, input, a[href], [role=button], [role=radio], [role=tab]')) {
      const st = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || st.display === 'none') continue;
      if (el.closest('[hidden], [aria-hidden=true]')) continue;
      // A checkbox's target is its whole label.
      const box = el.type === 'checkbox' && el.closest('label') ? el.closest('label').getBoundingClientRect() : r;
      if (box.width < ${MIN_TARGET_PX} - 0.5 || box.height < ${MIN_TARGET_PX} - 0.5) {
        out.push((el.getAttribute('data-testid') || el.tagName.toLowerCase() + ' "' + (el.textContent || '').trim().slice(0, 24) + '"') + ' ' + Math.round(box.width) + 'x' + Math.round(box.height));
      }
    }
    return out;
  })()`);
}

/** The checks every screen gets, at every size given. */
export async function checkScreen(page: Page, label: string, sizes: { width: number; height: number }[]): Promise<void> {
  const original = page.viewportSize()!;
  try {
    for (const size of sizes) {
      await page.setViewportSize(size);
      const where = `${label} at ${size.width}x${size.height}`;
      assert.deepEqual(await axeViolations(page), [], `axe: ${where}`);
      assert.deepEqual(await smallTargets(page), [], `touch targets: ${where}`);
    }
  } finally {
    await page.setViewportSize(original);
  }
}

export const KIOSK_SIZES = [VIEWPORTS.portrait, VIEWPORTS.landscape];
export const ALL_SIZES = [...KIOSK_SIZES, ...COMPANION_SIZES];

/** Visible visitor controls whose top edge is above the low-reach band (the lower `percent` of the screen). */
export async function controlsAboveBand(page: Page, percent: number): Promise<string[]> {
  return page.evaluate(`(() => {
    const H = window.innerHeight, limit = H * (1 - ${percent} / 100), out = [];
    for (const el of document.querySelectorAll('.screen button, .screen select, .still-there button')) {
      const st = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || st.display === 'none') continue;
      if (r.top < limit - 0.5) out.push((el.getAttribute('data-testid') || el.textContent.trim().slice(0, 20)) + ' top ' + Math.round(r.top) + ' < ' + Math.round(limit));
    }
    return out;
  })()`);
}

export async function focusedTestId(page: Page): Promise<string | null> {
  return page.evaluate('document.activeElement?.getAttribute("data-testid") ?? null');
}

/** Tab (forwards) until the element with this test id has the focus; fails after `max` presses. */
export async function tabTo(page: Page, testId: string, max = 30): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if ((await focusedTestId(page)) === testId) {
      // The focus is visible: an outline at least 3 px wide that is not "none".
      const ring = await page.evaluate(`(() => { const s = getComputedStyle(document.activeElement); return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) }; })()`);
      const ok = (ring as { style: string; width: number }).style !== 'none' && (ring as { style: string; width: number }).width >= 3;
      assert.ok(ok, `${testId} shows a focus ring (${JSON.stringify(ring)})`);
      return;
    }
  }
  assert.fail(`${testId} was not reached with Tab in ${max} presses (focus on ${await focusedTestId(page)})`);
}

/** The persona the (only) session was created with, as the emulator received it. */
export function personaOf(k: KioskPage): string {
  const sessions = k.emulator.listSessions();
  assert.equal(sessions.length, 1);
  return (sessions[0]!.request as { avatar: { persona: string } }).avatar.persona;
}

export async function pageLang(page: Page): Promise<{ lang: string; dir: string }> {
  return page.evaluate('({ lang: document.documentElement.lang, dir: document.documentElement.dir })') as Promise<{ lang: string; dir: string }>;
}

export async function announced(page: Page): Promise<string> {
  return ((await page.locator('[data-testid=announcer]').textContent()) ?? '').trim();
}

