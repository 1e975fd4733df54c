/**
 * The layout matrix and the rendered contrast (layout-matrix.ts, contrast.ts) for the screens that tell the
 * visitor the truth: the attract screen with the AI label, what goes where and the QR code; the Privacy sheet;
 * the age gate; in English, German (long words), Arabic (right to left) and accessibility mode. Contact sheets:
 * test/artifacts/safety-layout-<variant>-<orientation>.png.
 * Shared by safety-layout-<variant>.test.ts (one variant per file, inside the runner's per-file timeout).
 */
import assert from 'node:assert/strict';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { LayoutMatrix, type MatrixVariant } from './layout-matrix.ts';
import { ROOT, launchChromiumWithArgs, openKiosk, screenIs, startStaticServer } from './harness.ts';
import { ADULT, PRIVACY } from './safety-fixtures.ts';

const SCREENS = ['attract', 'privacy sheet', 'age gate'];

export async function safetyMatrix(variant: MatrixVariant): Promise<void> {
  const server = await startStaticServer();
  const browser = await launchChromiumWithArgs([]);
  const portrait = `data:image/png;base64,${readFileSync(join(ROOT, 'resources/demo-avatar.png')).toString('base64')}`;
  const matrix = new LayoutMatrix(variant);
  const k = await openKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, config: { ...ADULT, privacy: PRIVACY } });
  try {
    const { page } = k;
    await page.evaluate('window.__kioskTestGateIdleMs = 3600000');
    await screenIs(page, 'attract');
    if (variant !== 'en') await page.click(`[data-testid=${variant === 'accessible' ? 'accessibility' : `lang-${variant}`}]`);
    await matrix.screen(page, 'attract');
    await page.click('[data-testid=privacy-open]');
    await page.locator('[data-testid=privacy-sheet]').waitFor();
    await matrix.screen(page, 'privacy sheet');
    await page.click('[data-testid=privacy-close]');
    await page.click('[data-testid=start]');
    await screenIs(page, 'age-gate');
    await matrix.screen(page, 'age gate');
  } finally {
    await k.close();
    await matrix.close();
    const sheets = await matrix.writeSheets(browser, SCREENS.length).catch(() => [] as string[]);
    // The sheets are this file's, beside (not over) the main matrix's.
    for (const sheet of sheets) {
      const named = sheet.replace(/layout-([^/]+)\.png$/, 'safety-layout-$1.png');
      renameSync(sheet, named);
      console.log(`safety layout contact sheet: ${named}`);
    }
    for (const p of [...matrix.problems, ...matrix.contrast]) console.log(`safety layout: ${p}`);
    await browser.close();
    await server.close();
  }
  assert.deepEqual({ layout: matrix.problems, contrast: matrix.contrast }, { layout: [], contrast: [] }, `the new screens hold at every size and can be seen (${variant})`);
}

