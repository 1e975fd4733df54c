/**
 * A test avatar picture: an illustrated head-and-shoulders portrait (SVG), rasterised to PNG by the
 * browser under test, so the E2E tests (and their screenshots) have a realistic 4:5 portrait without a
 * binary fixture in the repository. Eyes sit near 31 % and the mouth near 43 % of the height, like a
 * typical portrait photo.
 */
import type { Browser } from 'playwright';

export const PORTRAIT_WIDTH = 640;
export const PORTRAIT_HEIGHT = 800;

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 500" width="${PORTRAIT_WIDTH}" height="${PORTRAIT_HEIGHT}">
  <defs>
    <radialGradient id="bg" cx="0.5" cy="0.35" r="0.8">
      <stop offset="0" stop-color="#4a3a2c"/><stop offset="0.6" stop-color="#221a13"/><stop offset="1" stop-color="#0c0907"/>
    </radialGradient>
    <linearGradient id="skin" x1="0" y1="0" x2="1" y2="1">
      <stop offset="0" stop-color="#e9c3a0"/><stop offset="1" stop-color="#c99874"/>
    </linearGradient>
    <linearGradient id="neck" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#b7876a"/><stop offset="1" stop-color="#d3a581"/>
    </linearGradient>
    <linearGradient id="hair" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#3b2419"/><stop offset="1" stop-color="#1f120c"/>
    </linearGradient>
    <linearGradient id="jacket" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#1d2a3a"/><stop offset="1" stop-color="#0d141d"/>
    </linearGradient>
    <radialGradient id="cheek" cx="0.5" cy="0.5" r="0.5">
      <stop offset="0" stop-color="#e0907a" stop-opacity="0.45"/><stop offset="1" stop-color="#e0907a" stop-opacity="0"/>
    </radialGradient>
  </defs>
  <rect width="400" height="500" fill="url(#bg)"/>
  <!-- hair behind -->
  <path d="M112 190 C100 90 160 58 205 60 C262 62 304 100 292 200 C290 250 300 290 310 320 L92 320 C104 290 114 250 112 190Z" fill="url(#hair)"/>
  <!-- shoulders and jacket -->
  <path d="M40 500 C44 400 100 352 170 340 L230 340 C300 352 356 400 360 500Z" fill="url(#jacket)"/>
  <path d="M170 340 L200 420 L230 340 Z" fill="#f3ede4"/>
  <path d="M200 420 L176 346 L160 352 L188 440Z M200 420 L224 346 L240 352 L212 440Z" fill="#2a3a4f"/>
  <circle cx="200" cy="452" r="5" fill="#d6aa6e"/>
  <!-- neck -->
  <path d="M176 250 L176 338 C186 350 214 350 224 338 L224 250Z" fill="url(#neck)"/>
  <!-- face -->
  <ellipse cx="200" cy="172" rx="68" ry="88" fill="url(#skin)"/>
  <ellipse cx="152" cy="208" rx="20" ry="13" fill="url(#cheek)"/>
  <ellipse cx="248" cy="208" rx="20" ry="13" fill="url(#cheek)"/>
  <!-- ears -->
  <ellipse cx="132" cy="178" rx="9" ry="17" fill="#cf9f7b"/>
  <ellipse cx="268" cy="178" rx="9" ry="17" fill="#cf9f7b"/>
  <circle cx="132" cy="198" r="3.5" fill="#d6aa6e"/>
  <circle cx="268" cy="198" r="3.5" fill="#d6aa6e"/>
  <!-- fringe -->
  <path d="M128 160 C126 104 170 78 214 82 C250 86 278 112 274 152 C256 120 214 108 190 110 C164 112 140 130 128 160Z" fill="url(#hair)"/>
  <!-- brows -->
  <path d="M156 136 C166 129 181 129 188 134" stroke="#3b2419" stroke-width="4" fill="none" stroke-linecap="round"/>
  <path d="M212 134 C219 129 234 129 244 136" stroke="#3b2419" stroke-width="4" fill="none" stroke-linecap="round"/>
  <!-- eyes -->
  <ellipse cx="172" cy="155" rx="12" ry="7.5" fill="#fbf7f2"/>
  <ellipse cx="228" cy="155" rx="12" ry="7.5" fill="#fbf7f2"/>
  <circle cx="173" cy="155" r="6" fill="#4b3424"/><circle cx="229" cy="155" r="6" fill="#4b3424"/>
  <circle cx="173" cy="155" r="2.8" fill="#120b07"/><circle cx="229" cy="155" r="2.8" fill="#120b07"/>
  <circle cx="175" cy="153" r="1.6" fill="#fff"/><circle cx="231" cy="153" r="1.6" fill="#fff"/>
  <path d="M159 151 C166 145 180 145 186 151" stroke="#2b1a12" stroke-width="2.4" fill="none"/>
  <path d="M214 151 C220 145 234 145 241 151" stroke="#2b1a12" stroke-width="2.4" fill="none"/>
  <!-- nose -->
  <path d="M200 162 C198 178 194 188 190 194 C196 199 204 199 210 194" stroke="#b07f5e" stroke-width="2.4" fill="none" stroke-linecap="round"/>
  <!-- mouth -->
  <path d="M180 222 C192 230 208 230 220 222 C212 236 188 236 180 222Z" fill="#b5565a"/>
  <path d="M180 222 C190 218 198 219 200 221 C202 219 210 218 220 222" stroke="#9c4449" stroke-width="1.6" fill="none"/>
</svg>`;

/** Rasterise the portrait with the browser under test; returns a `data:image/png;base64,…` URL. */
export async function makePortraitDataUrl(browser: Browser): Promise<string> {
  const page = await browser.newPage({ viewport: { width: PORTRAIT_WIDTH, height: PORTRAIT_HEIGHT } });
  try {
    await page.setContent(`<html><body style="margin:0;background:#000">${SVG}</body></html>`);
    const png = await page.locator('svg').screenshot({ type: 'png' });
    return `data:image/png;base64,${png.toString('base64')}`;
  } finally {
    await page.close();
  }
}
