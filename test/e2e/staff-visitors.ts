/**
 * Shared by the Visitors tab's E2E files (test/e2e/staff-visitors*.test.ts): a staff kiosk opened on the
 * Visitors tab by keyboard (in English, in German through the report's language, or in accessibility
 * mode), the tab read as text, and its layout measured over the layout matrix with screenshots.
 */
import { after, before } from 'node:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright';
import { writeY4m, type Scene } from './fake-camera.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { smallTargets, tabTo } from './access-helpers.ts';
import { MATRIX_SIZES } from './layout-matrix.ts';
import { SCREENS_DIR, eventually, launchChromium, openStaffKiosk, startStaticServer, screenIs, testIdText, type StaffKioskPage } from './harness.ts';

export const PIN = '137946';

/**
 * A file's setup, registered as its before/after hooks: the static server, one Chromium whose fake camera
 * plays `scene` (generated into a temp folder), and the demo portrait. Read the fields inside tests.
 */
export function useCameraBrowser(scene: Scene, durationS: number): { readonly server: { url: string; close(): Promise<void> }; readonly browser: Browser; readonly portrait: string } {
  const env = {} as { server: { url: string; close(): Promise<void> }; browser: Browser; portrait: string };
  let dir = '';
  before(async () => {
    env.server = await startStaticServer();
    dir = mkdtempSync(join(tmpdir(), 'kiosk-visitors-'));
    const video = join(dir, 'camera.y4m');
    await writeY4m(video, { width: 320, height: 240, fps: 10, durationS, scene });
    env.browser = await launchChromium({ videoFile: video });
    env.portrait = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return env;
}

export type Variant = 'en' | 'de' | 'accessible';

/** Open the panel from the attract screen (Ctrl+Alt+K, the PIN typed) and go to Visitors by keyboard, in the variant. */
export async function showVisitors(page: Page, variant: Variant): Promise<void> {
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
}

/** A staff kiosk with a PIN (`file`: more of its config.json), its panel open on Visitors in the variant. */
export async function openVisitors(env: { browser: Browser; server: { url: string }; portrait: string }, variant: Variant, file: Record<string, unknown> = {}): Promise<StaffKioskPage> {
  const k = await openStaffKiosk({ browser: env.browser, baseUrl: env.server.url, orientation: 'landscape', imageDataUrl: env.portrait, file: { staffPinHash: await hashPin(PIN), ...file } });
  await showVisitors(k.page, variant);
  return k;
}

/** The funnel as the tab shows it: [step, count, conversion] per row. */
export async function funnel(page: Page): Promise<string[][]> {
  const ids = ['noticed', 'approached', 'greeted', 'tapped', 'live', 'endedWell'];
  const out: string[][] = [];
  for (const id of ids) out.push([id, await testIdText(page, `funnel-${id}-count`), await testIdText(page, `funnel-${id}-conversion`)]);
  return out;
}

export async function conclusions(page: Page): Promise<string[]> {
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
export const MATRIX = [...MATRIX_SIZES.landscape, ...MATRIX_SIZES.portrait];

