/**
 * Renders the bundled demo resources from resources/demo-avatar.svg with headless Chromium (playwright):
 * - resources/demo-avatar.png: the 720×960 portrait the demo avatar is created from;
 * - resources/icon.png: a 512×512 app icon for electron-builder (the same portrait, cropped to the face on a
 *   rounded tile).
 *
 * Run: npx tsx resources/make-demo-avatar.ts   (needs /usr/bin/chromium; nothing is downloaded)
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';

const here = dirname(fileURLToPath(import.meta.url));
const SVG_PATH = join(here, 'demo-avatar.svg');
const PORTRAIT_PATH = join(here, 'demo-avatar.png');
const ICON_PATH = join(here, 'icon.png');

const PORTRAIT = { width: 720, height: 960 };
const ICON_SIZE = 512;
/** The square of the portrait the icon shows (head and a hint of the shoulders), in SVG units. */
const ICON_VIEWBOX = '120 150 480 480';

function page(body: string, width: number, height: number): string {
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    html,body{margin:0;padding:0;background:transparent;width:${width}px;height:${height}px;overflow:hidden}
    svg{display:block}
  </style></head><body>${body}</body></html>`;
}

async function main(): Promise<void> {
  const svg = await readFile(SVG_PATH, 'utf8');
  const iconSvg = svg
    .replace(/width="720" height="960" viewBox="0 0 720 960"/, `width="${ICON_SIZE}" height="${ICON_SIZE}" viewBox="${ICON_VIEWBOX}"`);
  if (iconSvg === svg) throw new Error('demo-avatar.svg: expected the root <svg width="720" height="960" viewBox="0 0 720 960">');
  const iconBody = `<div style="width:${ICON_SIZE}px;height:${ICON_SIZE}px;border-radius:112px;overflow:hidden">${iconSvg}</div>`;

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const context = await browser.newContext({ deviceScaleFactor: 1 });
    const tab = await context.newPage();

    await tab.setViewportSize(PORTRAIT);
    await tab.setContent(page(svg, PORTRAIT.width, PORTRAIT.height));
    await tab.screenshot({ path: PORTRAIT_PATH, clip: { x: 0, y: 0, ...PORTRAIT } });

    await tab.setViewportSize({ width: ICON_SIZE, height: ICON_SIZE });
    await tab.setContent(page(iconBody, ICON_SIZE, ICON_SIZE));
    await tab.screenshot({ path: ICON_PATH, clip: { x: 0, y: 0, width: ICON_SIZE, height: ICON_SIZE }, omitBackground: true });
  } finally {
    await browser.close();
  }

  for (const path of [PORTRAIT_PATH, ICON_PATH]) {
    const { size } = await stat(path);
    console.log(`${path}: ${(size / 1024).toFixed(0)} KB`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
