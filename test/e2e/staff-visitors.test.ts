/**
 * The staff panel's Visitors tab end to end: the BUILT renderer in Debian's Chromium, bridged to the REAL
 * kiosk service with the staff operations attached (openStaffKiosk), on the real emulator.
 *
 * - a new kiosk: the tab says honestly that there is too little to say, every count reads "fewer than 5",
 *   noticed and approached read "not counted" while presence detection is off; by keyboard; axe and 48 px
 *   targets in English, in German (the report's own language choice) and in accessibility mode; at every
 *   size of the layout matrix nothing of the tab spills sideways.
 *
 * Screenshots: staff-visitors-new-<en|de|accessible>-<funnel|week>-<w>x<h>.png in test/artifacts/screens/.
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/staff-visitors.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { KIOSK_SIZES, accessSuite, axeViolations, smallTargets, tabTo } from './access-helpers.ts';
import { MATRIX_SIZES } from './layout-matrix.ts';
import { SCREENS_DIR, eventually, openStaffKiosk, screenIs, testIdText, type StaffKioskPage } from './harness.ts';

const suite = accessSuite();
const PIN = '137946';

type Variant = 'en' | 'de' | 'accessible';

/** A kiosk with a PIN, on the attract screen (in accessibility mode if asked), the panel open on Visitors by keyboard. */
async function openVisitors(variant: Variant, file: Record<string, unknown> = {}): Promise<StaffKioskPage> {
  const k = await openStaffKiosk({ browser: suite.browser, baseUrl: suite.server.url, orientation: 'landscape', imageDataUrl: suite.portrait, file: { staffPinHash: await hashPin(PIN), ...file } });
  const { page } = k;
  await screenIs(page, 'attract');
  if (variant === 'accessible') await page.click('[data-testid=accessibility]');
  await page.keyboard.press('Control+Alt+K');
  await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
  for (const d of PIN) await page.keyboard.press(d);
  await page.keyboard.press('Enter');
  await page.locator('[data-testid=staff-panel]').waitFor({ timeout: 5_000 });
  await tabTo(page, 'tab-visitors');
  await page.keyboard.press('Enter');
  await eventually(async () => (await page.getAttribute('[data-testid=staff-panel]', 'data-tab')) === 'visitors', 'the Visitors tab opens');
  await page.locator('[data-testid=visitors-funnel]').waitFor({ timeout: 5_000 });
  if (variant === 'de') {
    await tabTo(page, 'visitors-language');
    await page.selectOption('[data-testid=visitors-language]', 'de');
    await eventually(async () => (await page.getAttribute('[data-testid=visitors]', 'lang')) === 'de', 'the report reads in German');
  }
  return k;
}

/** The funnel as the tab shows it: [step, count, conversion] per row. */
async function funnel(page: Page): Promise<string[][]> {
  const ids = ['noticed', 'approached', 'greeted', 'tapped', 'live', 'endedWell'];
  const out: string[][] = [];
  for (const id of ids) out.push([id, await testIdText(page, `funnel-${id}-count`), await testIdText(page, `funnel-${id}-conversion`)]);
  return out;
}

async function conclusions(page: Page): Promise<string[]> {
  return page.locator('[data-testid=visitors-conclusions] li').allTextContents();
}

/** What of the tab spills out sideways, or hides a control under 48 px (empty when it holds). */
async function tabLayoutProblems(page: Page): Promise<string[]> {
  const out: string[] = [];
  const body = (await page.evaluate(`(() => { const b = document.getElementById('staff-tabpanel'); return { scroll: b.scrollWidth, client: b.clientWidth }; })()`)) as { scroll: number; client: number };
  if (body.scroll > body.client + 1) out.push(`the tab is ${body.scroll} px wide in ${body.client} px`);
  out.push(...(await smallTargets(page)));
  return out;
}

/** Where screenshots are taken (the rest of the matrix is only measured: a file's time is bounded). */
const SHOT_SIZES = new Set(['1920x1080', '1080x1920', '800x600', '3440x1440', '360x480']);

/**
 * At each size, the tab's layout problems; at SHOT_SIZES also screenshots of the funnel (the top of the
 * tab) and of the week (scrolled to the heat map): staff-visitors-<name>-<funnel|week>-<w>x<h>.png.
 */
export async function layoutAtSizes(page: Page, name: string, sizes: ReadonlyArray<{ width: number; height: number }>): Promise<string[]> {
  await mkdir(SCREENS_DIR, { recursive: true });
  const problems: string[] = [];
  for (const size of sizes) {
    await page.setViewportSize(size);
    const at = `${size.width}x${size.height}`;
    for (const p of await tabLayoutProblems(page)) problems.push(`${at}: ${p}`);
    if (!SHOT_SIZES.has(at)) continue;
    await page.waitForTimeout(150);
    await page.evaluate(`document.getElementById('staff-tabpanel').scrollTop = 0`);
    await page.screenshot({ path: join(SCREENS_DIR, `staff-visitors-${name}-funnel-${at}.png`), animations: 'allow' });
    await page.locator('[data-testid=visitors-heatmap]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENS_DIR, `staff-visitors-${name}-week-${at}.png`), animations: 'allow' });
  }
  return problems;
}

/** Every size of the layout matrix a kiosk has (the companion's smallest window has no staff panel of its own size). */
const MATRIX = [...MATRIX_SIZES.landscape, ...MATRIX_SIZES.portrait];

describe('Staff panel: the Visitors tab (E2E: built renderer + real kiosk service + staff operations)', () => {
  for (const variant of ['en', 'de', 'accessible'] as const) {
    it(`a new kiosk (${variant}): too few to say, every count "fewer than 5", presence not counted; keyboard, axe, 48 px targets; the layout holds at every size`, async () => {
      const k = await openVisitors(variant);
      try {
        const { page } = k;
        if (variant === 'de') {
          assert.deepEqual(await funnel(page), [
            ['noticed', 'nicht gezählt', ''],
            ['approached', 'nicht gezählt', ''],
            ['greeted', 'weniger als 5', ''],
            ['tapped', 'weniger als 5', ''],
            ['live', 'weniger als 5', ''],
            ['endedWell', 'weniger als 5', ''],
          ]);
          assert.deepEqual(await conclusions(page), [
            'Heute zu wenige Besucher, um zu sagen, wo sie aufgeben: Ein Anteil wird genannt, sobald beide Zahlen 5 erreichen.',
            'Diese Woche zu wenige Tipper, um die meistbesuchten Stunden zu nennen.',
            'Die Anwesenheitserkennung ist aus: Wer vorbeigeht oder vor dem Kiosk stehen bleibt, wird nicht gezählt.',
          ]);
        } else {
          assert.deepEqual(await funnel(page), [
            ['noticed', 'not counted', ''],
            ['approached', 'not counted', ''],
            ['greeted', 'fewer than 5', ''],
            ['tapped', 'fewer than 5', ''],
            ['live', 'fewer than 5', ''],
            ['endedWell', 'fewer than 5', ''],
          ]);
          assert.deepEqual(await conclusions(page), [
            'Too few visitors today to say where people give up: a share is named once both of its counts reach 5.',
            'Too few taps this week to name the busiest hours.',
            'Presence detection is off: people passing by and stopping in front of the kiosk are not counted.',
          ]);
          assert.equal(await testIdText(page, 'visitors-presence-off'), 'Presence detection is off: people passing by and stopping in front of the kiosk are not counted.');
          assert.deepEqual(await page.locator('[data-testid=visitors-legend] li').allTextContents(), ['fewer than 5']);
        }
        // The heat map's text alternative: 7 days × 24 hours, a header row of hours.
        assert.equal(await page.locator('[data-testid=visitors-week-table] tbody tr').count(), 7);
        assert.equal(await page.locator('[data-testid=visitors-week-table] tbody tr:first-child td').count(), 24);
        for (const size of KIOSK_SIZES) {
          await page.setViewportSize(size);
          assert.deepEqual(await axeViolations(page), [], `axe: Visitors (${variant}) at ${size.width}x${size.height}`);
        }
        assert.deepEqual(await layoutAtSizes(page, `new-${variant}`, MATRIX), [], `the Visitors tab's layout (${variant})`);
        assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
      } finally {
        await k.close();
      }
    });
  }
});
