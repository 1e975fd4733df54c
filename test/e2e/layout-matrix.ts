/**
 * The layout matrix, shared by test/e2e/layout-matrix-*.test.ts (one file per variant: English, German,
 * Arabic, accessibility mode, so each stays inside the runner's per-file timeout).
 *
 * Every visitor screen (attract, connecting, live, the idle prompt, ended, error, closed) at every size a
 * kiosk or the companion can have: 4:3, 5:4, 16:10, 16:9 and 21:9 in landscape and portrait from 800×600
 * to 2160×3840, the portrait-but-not-tall 945×1060 and 900×1000, and the companion's smallest window
 * (COMPANION_MIN_SIZE). At each: no two controls overlap, no control lies on a text that is not its own,
 * every control, text and picture is inside the viewport and not clipped by an ancestor or its own box,
 * and every target is ≥ 48 × 48 px. At 1920×1080 and 1080×1920 the contrast of every text and outlined
 * control is measured on the rendered pixels too (contrast.ts).
 *
 * One browser and one page per kiosk; the viewport is resized in place. The contact sheet is made from
 * small captures (Chromium scales them while capturing) and composed in Chromium itself, so no image
 * package is needed: test/artifacts/layout-<variant>-<landscape|portrait>.png, failing cells framed red.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright';
import { COMPANION_MIN_SIZE } from '../../electron/kiosk/companion.ts';
import { contrastProblems } from './contrast.ts';
import { ROOT, eventually, launchChromiumWithArgs, openClosedKiosk, openKiosk, screenIs, startStaticServer, writeWav, type KioskPage } from './harness.ts';

export type MatrixVariant = 'en' | 'de' | 'ar' | 'accessible';

interface Size {
  width: number;
  height: number;
}

const LANDSCAPE: Size[] = [
  { width: 800, height: 600 }, // 4:3
  { width: 1024, height: 768 },
  { width: 1600, height: 1200 },
  { width: 1280, height: 1024 }, // 5:4
  { width: 1280, height: 800 }, // 16:10
  { width: 1920, height: 1200 },
  { width: 1280, height: 720 }, // 16:9
  { width: 1920, height: 1080 },
  { width: 3840, height: 2160 },
  { width: 2560, height: 1080 }, // 21:9
  { width: 3440, height: 1440 },
];

/** Every size of the matrix: the landscape ones, their portrait forms, and the odd ones out. */
export const MATRIX_SIZES: { landscape: Size[]; portrait: Size[] } = {
  landscape: LANDSCAPE,
  portrait: [
    ...LANDSCAPE.map(({ width, height }) => ({ width: height, height: width })),
    { width: 945, height: 1060 }, // portrait, but not tall: the attract layout used to fall apart here
    { width: 900, height: 1000 },
    { ...COMPANION_MIN_SIZE },
  ],
};

/** Runs in the page: one line per problem with the current layout (empty when it holds). */
const LAYOUT_PROBLEMS = `(() => {
  const W = window.innerWidth, H = window.innerHeight, out = [];
  const MIN = 48;
  const shown = (el) => {
    if (el.closest('[hidden], [inert], .sr-only, .halo')) return false;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || st.display === 'none' || parseFloat(st.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const label = (el) => (el.getAttribute('data-testid') || el.tagName.toLowerCase()) + ' "' + (el.textContent || el.getAttribute('alt') || '').trim().replace(/\\s+/g, ' ').slice(0, 24) + '"';
  const box = (r) => [r.left, r.top, r.right, r.bottom].map(Math.round).join(',');
  const inViewport = (r) => r.left >= -0.5 && r.top >= -0.5 && r.right <= W + 0.5 && r.bottom <= H + 0.5;
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  // An ancestor that cuts off what overflows it.
  const clipper = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const st = getComputedStyle(p);
      if (st.overflowX !== 'visible' || st.overflowY !== 'visible') return p;
    }
    return null;
  };
  const within = (r, c) => r.left >= c.left - 0.5 && r.top >= c.top - 0.5 && r.right <= c.right + 0.5 && r.bottom <= c.bottom + 0.5;

  const controls = [...document.querySelectorAll('button, select, input, a[href], [role=button], [role=radio], [role=tab]')].filter(shown);
  for (const c of controls) {
    const r = c.getBoundingClientRect();
    if (r.width < MIN - 0.5 || r.height < MIN - 0.5) out.push('target under 48 px: ' + label(c) + ' ' + Math.round(r.width) + 'x' + Math.round(r.height));
    if (!inViewport(r)) out.push('control outside the viewport: ' + label(c) + ' at ' + box(r));
    const cl = clipper(c);
    if (cl && !within(r, cl.getBoundingClientRect())) out.push('control clipped by its container: ' + label(c));
  }
  for (let i = 0; i < controls.length; i++) {
    for (let j = i + 1; j < controls.length; j++) {
      const a = controls[i], b = controls[j];
      if (a.contains(b) || b.contains(a)) continue;
      if (overlap(a.getBoundingClientRect(), b.getBoundingClientRect()) > 1) out.push('controls overlap: ' + label(a) + ' and ' + label(b));
    }
  }

  // Texts: every element with text of its own, measured by the text's own boxes (not the element's).
  const texts = [];
  const walker = document.createTreeWalker(document.querySelector('main.kiosk') || document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (!el || el.closest('svg, option, select, .staff-layer') || !shown(el)) continue;
    // The carousel's neighbours peek in from the sides by design; the selected card may not.
    if (el.closest('.card:not(.selected)')) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    texts.push({ el, r });
  }
  for (const { el, r } of texts) {
    if (!inViewport(r)) out.push('text outside the viewport: ' + label(el) + ' at ' + box(r) + ' in ' + W + 'x' + H);
    // A control grows with its words (a pill, a button): they stay inside it.
    const own = el.closest('button, select, a[href], [role=button], [role=radio], [role=tab]');
    if (own && !within(r, own.getBoundingClientRect())) out.push('text spills out of its control: ' + label(el) + ' at ' + box(r) + ' from ' + label(own).slice(0, 30) + ' at ' + box(own.getBoundingClientRect()));
    const cl = clipper(el);
    if (cl && !within(r, cl.getBoundingClientRect())) out.push('text clipped: ' + label(el) + ' at ' + box(r) + ' by ' + label(cl).slice(0, 30));
    for (const c of controls) {
      if (c.contains(el) || el.contains(c)) continue;
      if (overlap(r, c.getBoundingClientRect()) > 4) out.push('control over a text: ' + label(c) + ' on ' + label(el));
    }
  }
  // Pictures (the portrait): whole, and not under a control.
  for (const img of document.querySelectorAll('.screen img')) {
    if (!shown(img) || img.closest('.poster, .voice-only, .card:not(.selected)')) continue;
    const r = img.getBoundingClientRect();
    if (!inViewport(r)) out.push('picture cut by the viewport: ' + label(img) + ' at ' + box(r));
    for (const c of controls) if (!c.contains(img) && overlap(r, c.getBoundingClientRect()) > 4) out.push('control over the picture: ' + label(c));
  }
  const screen = document.querySelector('.screen');
  if (screen && (screen.scrollHeight > screen.clientHeight + 1 || screen.scrollWidth > screen.clientWidth + 1)) out.push('the screen overflows: ' + screen.scrollWidth + 'x' + screen.scrollHeight + ' in ' + W + 'x' + H);
  return [...new Set(out)];
})()`;

interface Shot {
  label: string;
  jpeg: string; // base64
  failed: boolean;
}

/** Where contrast is measured too (it depends on the colours, not on the size; both orientations' gradients). */
const CONTRAST_SIZES = new Set(['1920x1080', '1080x1920']);

export class LayoutMatrix {
  readonly problems: string[] = [];
  /** Contrast below 4.5:1 (7:1 in accessibility mode) for text, 3:1 for a control's outline (contrast.ts). */
  readonly contrast: string[] = [];
  #lab: Page | null = null;
  readonly shots: Record<'landscape' | 'portrait', Shot[]> = { landscape: [], portrait: [] };
  constructor(readonly variant: MatrixVariant) {}

  /** Check the current screen at every size of the matrix (`between` runs before each size). */
  async screen(page: Page, name: string, between?: () => Promise<void>): Promise<void> {
    const original = page.viewportSize()!;
    const expected = await page.getAttribute('main.kiosk', 'data-screen');
    await page.waitForTimeout(500); // the screens fade in over 450 ms
    const cdp = await page.context().newCDPSession(page);
    try {
      for (const orientation of ['landscape', 'portrait'] as const) {
        for (const size of MATRIX_SIZES[orientation]) {
          await between?.();
          await page.setViewportSize(size);
          // A layout and two frames (the carousel's and the buttons' short transitions are not checked).
          await page.evaluate('new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))');
          const where = `${name} (${this.variant}) at ${size.width}x${size.height}`;
          const now = await page.getAttribute('main.kiosk', 'data-screen');
          assert.equal(now, expected, `${where}: the screen changed while it was being checked`);
          const found = (await page.evaluate(LAYOUT_PROBLEMS)) as string[];
          for (const p of found) this.problems.push(`${where}: ${p}`);
          if (CONTRAST_SIZES.has(`${size.width}x${size.height}`)) {
            this.#lab ??= await page.context().browser()!.newPage();
            for (const p of await contrastProblems(page, this.#lab, this.variant === 'accessible')) this.contrast.push(`${where}: ${p}`);
          }
          const scale = 240 / Math.max(size.width, size.height);
          const shot = (await cdp.send('Page.captureScreenshot', {
            format: 'jpeg',
            quality: 70,
            clip: { x: 0, y: 0, width: size.width, height: size.height, scale },
          })) as { data: string };
          this.shots[orientation].push({ label: `${name} ${size.width}×${size.height}`, jpeg: shot.data, failed: found.length > 0 });
        }
      }
    } finally {
      await cdp.detach().catch(() => undefined);
      await page.setViewportSize(original);
    }
  }

  async close(): Promise<void> {
    await this.#lab?.close();
  }

  /** The contact sheets, composed in Chromium: one per orientation, a column per screen. */
  async writeSheets(browser: Browser, screens: number): Promise<string[]> {
    const dir = join(ROOT, 'test', 'artifacts');
    await mkdir(dir, { recursive: true });
    const written: string[] = [];
    const page = await browser.newPage();
    try {
      for (const orientation of ['landscape', 'portrait'] as const) {
        const shots = this.shots[orientation];
        if (shots.length === 0) continue;
        const rows = Math.ceil(shots.length / screens);
        // Shots were taken screen by screen; the sheet shows a size per row, a screen per column.
        const ordered = Array.from({ length: rows * screens }, (_, i) => shots[(i % screens) * rows + Math.floor(i / screens)] ?? null);
        const png = (await page.evaluate(`(async () => {
          const shots = ${JSON.stringify(ordered)};
          const cols = ${screens}, cell = 250, labelH = 18;
          const c = document.createElement('canvas');
          c.width = cols * cell;
          c.height = Math.ceil(shots.length / cols) * (cell + labelH) + 30;
          const g = c.getContext('2d');
          g.fillStyle = '#444'; g.fillRect(0, 0, c.width, c.height);
          g.fillStyle = '#fff'; g.font = '16px sans-serif';
          g.fillText(${JSON.stringify(`layout matrix: ${this.variant}, ${orientation} (red: a problem)`)}, 8, 20);
          for (let i = 0; i < shots.length; i++) {
            const s = shots[i];
            if (!s) continue;
            const img = new Image();
            img.src = 'data:image/jpeg;base64,' + s.jpeg;
            await img.decode();
            const x = (i % cols) * cell, y = 30 + Math.floor(i / cols) * (cell + labelH);
            const k = Math.min((cell - 10) / img.width, (cell - 10) / img.height);
            const w = img.width * k, h = img.height * k;
            const ix = x + (cell - w) / 2, iy = y + (cell - h) / 2;
            g.drawImage(img, ix, iy, w, h);
            g.lineWidth = s.failed ? 4 : 1;
            g.strokeStyle = s.failed ? '#ff2a2a' : '#888';
            g.strokeRect(ix, iy, w, h);
            g.fillStyle = s.failed ? '#ff8a8a' : '#ddd'; g.font = '12px sans-serif';
            g.fillText(s.label, x + 5, y + cell + 12);
          }
          return c.toDataURL('image/png').split(',')[1];
        })()`)) as string;
        const file = join(dir, `layout-${this.variant}-${orientation}.png`);
        await writeFile(file, Buffer.from(png, 'base64'));
        written.push(file);
      }
    } finally {
      await page.close();
    }
    return written;
  }
}

/** Put the kiosk in the variant's language or mode (from the attract or closed screen). */
async function choose(page: Page, variant: MatrixVariant): Promise<void> {
  if (variant === 'en') return;
  const testId = variant === 'accessible' ? 'accessibility' : `lang-${variant}`;
  await page.click(`[data-testid=${testId}]`, { timeout: 5_000 });
}

const SCREENS = ['attract', 'live', 'idle prompt', 'ended', 'error', 'connecting', 'closed'];

/**
 * The whole matrix for one variant: one kiosk through attract → live → the idle prompt → ended → error
 * (out of credits), one that stays connecting, and a closed one; writes the sheets, then asserts.
 */
export async function runLayoutMatrix(variant: MatrixVariant): Promise<void> {
  const server = await startStaticServer();
  // A silent microphone: nobody is heard, so the idle prompt comes when the test stops pressing keys.
  const wav = writeWav(join(mkdtempSync(join(tmpdir(), 'kiosk-e2e-matrix-')), 'silence.wav'), 2, () => 0);
  const browser = await launchChromiumWithArgs([`--use-file-for-fake-audio-capture=${wav}`]);
  const portrait = `data:image/png;base64,${readFileSync(join(ROOT, 'resources/demo-avatar.png')).toString('base64')}`;
  const matrix = new LayoutMatrix(variant);
  let k: KioskPage | null = null;
  try {
    k = await openKiosk({
      browser,
      baseUrl: server.url,
      orientation: 'landscape',
      imageDataUrl: portrait,
      knobs: { warmupMs: { audio: 0, video: 500 } },
      config: { returnToAttractSeconds: 600, idle: { promptSeconds: 10, hangupSeconds: 120 } },
    });
    const { page } = k;
    await screenIs(page, 'attract');
    await choose(page, variant);
    await matrix.screen(page, 'attract');

    await page.click('[data-testid=mode-video]');
    await page.click('[data-testid=start]');
    await screenIs(page, 'live', 30_000);
    await page.locator('[data-testid=live-waiting]').waitFor({ state: 'detached', timeout: 15_000 });
    // A key before each size counts as someone there: the idle prompt stays away while the live screen is checked.
    await matrix.screen(page, 'live', () => page.keyboard.press('Shift'));
    await page.locator('[data-testid=idle-prompt]').waitFor({ timeout: 60_000 });
    await matrix.screen(page, 'idle prompt');
    await page.keyboard.press('Escape');
    await page.locator('[data-testid=idle-prompt]').waitFor({ state: 'detached', timeout: 5_000 });
    await page.click('[data-testid=hangup]');
    await screenIs(page, 'ended');
    await eventually(async () => (await page.getAttribute('[data-testid=screen-ended] dl', 'aria-busy')) !== 'true', 'the figures are in');
    await matrix.screen(page, 'ended');
    await page.click('[data-testid=done]');
    await screenIs(page, 'attract');

    await choose(page, variant);
    await page.click('[data-testid=mode-video]');
    await page.click('[data-testid=start]');
    await screenIs(page, 'live', 30_000).catch(async (e: unknown) => {
      throw new Error(`the second call did not go live (screen ${await page.getAttribute('main.kiosk', 'data-screen')}): ${String(e)}`);
    });
    const liveId = k.emulator.listSessions().find((s) => s.status !== 'ended')!.id;
    k.emulator.forceHangup(liveId, 'credit_insufficient');
    await screenIs(page, 'error');
    await matrix.screen(page, 'error');
    await k.close();
    k = null;

    // The connecting screen, on a kiosk whose avatar takes minutes to wake up (it is closed, not cancelled).
    k = await openKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, knobs: { warmupMs: { audio: 0, video: 600_000 } } });
    await screenIs(k.page, 'attract');
    await choose(k.page, variant);
    await k.page.click('[data-testid=start]');
    await screenIs(k.page, 'connecting');
    await matrix.screen(k.page, 'connecting');
    await k.close();
    k = null;

    await closedScreen(browser, server.url, portrait, matrix);
  } finally {
    await k?.close();
    await matrix.close();
    const sheets = await matrix.writeSheets(browser, SCREENS.length).catch((e: unknown) => [`(no sheet: ${String(e)})`]);
    console.log(`layout matrix contact sheets: ${sheets.join(', ')}`);
    // Also when the walk through the screens stopped early: what was found until then.
    for (const p of [...matrix.problems, ...matrix.contrast]) console.log(`layout matrix: ${p}`);
    await browser.close();
    await server.close();
  }
  assert.deepEqual({ layout: matrix.problems, contrast: matrix.contrast }, { layout: [], contrast: [] }, `the layout holds at every size, and every text and control can be seen (${variant})`);
}

/** The closed screen: a kiosk outside its opening hours (the fleet host's watch on a fake clock). */
async function closedScreen(browser: Browser, baseUrl: string, portrait: string, matrix: LayoutMatrix): Promise<void> {
  const k = await openClosedKiosk({ browser, baseUrl, orientation: 'landscape', imageDataUrl: portrait });
  try {
    try {
      await choose(k.page, matrix.variant);
    } catch {
      matrix.problems.push(`closed (${matrix.variant}): no way to choose it on the closed screen`);
    }
    await matrix.screen(k.page, 'closed');
  } finally {
    await k.close();
  }
}
