/**
 * Contrast measured against what is really painted (axe leaves text over gradients "for review").
 * The page's texts are listed with their colour (alpha and the opacity of their ancestors included);
 * then every text is made transparent and the viewport captured, so each text's box shows exactly the
 * background it sits on (gradients, translucent pills, the live picture). Each text colour is blended
 * over every pixel of its box and the contrast ratio (WCAG 2.x relative luminance) taken; the 5th
 * percentile of those ratios must reach 4.5:1 (7:1 in accessibility mode). Controls drawn by an outline
 * (the language pills, secondary buttons) must stand out from what is around them by 3:1 (WCAG 1.4.11):
 * the better of their outline and their fill against the pixels just outside.
 * Left out: text inside disabled controls (WCAG exempts them) and text hidden from sight (sr-only).
 */
import type { Browser, Page } from 'playwright';

/** Runs in the kiosk page: the texts and the outlined controls, before the text is hidden. */
const COLLECT = `(() => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null; const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const opacityOf = (el) => { let o = 1; for (let p = el; p; p = p.parentElement) o *= parseFloat(getComputedStyle(p).opacity); return o; };
  const hidden = (el) => { if (el.closest('[hidden], .sr-only, svg, option, select, button:disabled')) return true; const st = getComputedStyle(el); return st.visibility === 'hidden' || st.display === 'none'; };
  const label = (el) => (el.getAttribute('data-testid') || el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '')) + ' "' + (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 30) + '"';
  const texts = [];
  const walker = document.createTreeWalker(document.querySelector('main.kiosk'), NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (!el || hidden(el)) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) {
      if (r.width < 2 || r.height < 2) continue;
      const c = parse(getComputedStyle(el).color);
      if (!c) continue;
      c[3] *= opacityOf(el);
      texts.push({ label: label(el), color: c, box: [r.left, r.top, r.right, r.bottom] });
    }
  }
  const controls = [];
  for (const el of document.querySelectorAll('button, select, [role=radio], [role=button]')) {
    if (el.closest('[hidden], [aria-hidden=true], [inert]') || el.disabled) continue;
    const st = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    if (r.width === 0 || st.visibility === 'hidden' || st.display === 'none') continue;
    const ring = (st.boxShadow.match(/(rgba?\\([^)]+\\))[^,]*inset/) || [])[1];
    const fill = parse(st.backgroundColor);
    controls.push({ label: label(el), ring: ring ? parse(ring) : null, fill: fill && fill[3] > 0 ? fill : null, box: [r.left, r.top, r.right, r.bottom], radius: parseFloat(st.borderTopLeftRadius) || 0 });
  }
  return { texts, controls };
})()`;

const HIDE_TEXT = `* { color: transparent !important; -webkit-text-fill-color: transparent !important; text-shadow: none !important; }`;

/** Page-side lines (inside an async function) that decode a base64 PNG into `c` (a canvas of its size)
 *  and `data` (its RGBA pixels), in the browser itself: no image package needed. */
export const decodePng = (png: string): string => `
  const img = new Image();
  img.src = 'data:image/png;base64,${png}';
  await img.decode();
  const c = document.createElement('canvas');
  c.width = img.width; c.height = img.height;
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  const data = g.getImageData(0, 0, c.width, c.height).data;`;

/** Runs in a blank page: decodes the capture and measures. */
const MEASURE = (png: string, found: unknown, minText: number): string => `(async () => {
  const { texts, controls } = ${JSON.stringify(found)};
  ${decodePng(png)}
  const px = (x, y) => { x = Math.max(0, Math.min(c.width - 1, Math.round(x))); y = Math.max(0, Math.min(c.height - 1, Math.round(y))); const i = (y * c.width + x) * 4; return [data[i], data[i + 1], data[i + 2]]; };
  const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const lum = (p) => 0.2126 * lin(p[0]) + 0.7152 * lin(p[1]) + 0.0722 * lin(p[2]);
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const over = (fg, bg) => [0, 1, 2].map((i) => fg[i] * fg[3] + bg[i] * (1 - fg[3]));
  const pct = (values, p) => { const s = [...values].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };
  const out = [];
  for (const t of texts) {
    const [l, tp, r, b] = t.box;
    const ratios = [];
    const stepX = Math.max(1, (r - l) / 40), stepY = Math.max(1, (b - tp) / 8);
    for (let y = tp + 1; y < b - 1; y += stepY) for (let x = l + 1; x < r - 1; x += stepX) { const bg = px(x, y); ratios.push(ratio(over(t.color, bg), bg)); }
    if (ratios.length === 0) continue;
    const got = pct(ratios, 0.05);
    if (got < ${minText}) out.push('text ' + t.label + ': ' + got.toFixed(2) + ':1 (needs ${minText}:1)');
  }
  for (const k of controls) {
    // Drawn by an outline: the outline must show where the control is. (A filled button with words is
    // identified by its words; WCAG 1.4.11 does not ask for its boundary.)
    if (!k.ring) continue;
    const [l, tp, r, b] = k.box;
    const inset = Math.min(k.radius, (b - tp) / 2) * 0.3 + 3; // past a rounded corner's curve
    // Just outside each side, and just inside (the fill under the outline).
    const outside = [px(l - 3, (tp + b) / 2), px(r + 3, (tp + b) / 2), px((l + r) / 2, tp - 3), px((l + r) / 2, b + 3)];
    const inside = px(l + inset + 4, (tp + b) / 2);
    const each = outside.map((o) => {
      const fill = k.fill ? over(k.fill, o) : inside;
      return Math.max(ratio(fill, o), k.ring ? ratio(over(k.ring, fill), o) : 0);
    });
    // The second worst side: one sample may land on a neighbour.
    const best = [...each].sort((a, b) => a - b)[1];
    if (best < 3) out.push('control ' + k.label + ': outline/fill ' + best.toFixed(2) + ':1 against its surroundings (needs 3:1)');
  }
  return out;
})()`;

/**
 * The contrast problems of what `page` shows now. `lab` is a blank page of the same browser where the
 * capture is decoded. The page's text is hidden for the capture and shown again afterwards.
 */
export async function contrastProblems(page: Page, lab: Page, accessible: boolean): Promise<string[]> {
  const found = await page.evaluate(COLLECT);
  // A constructed style sheet: the page's CSP refuses inline <style> elements.
  await page.evaluate(`(() => { const s = new CSSStyleSheet(); s.replaceSync(${JSON.stringify(HIDE_TEXT)}); document.adoptedStyleSheets = [...document.adoptedStyleSheets, s]; window.__hideText = s; })()`);
  try {
    await page.evaluate('new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))');
    const png = (await page.screenshot({ type: 'png', animations: 'allow' })).toString('base64');
    return (await lab.evaluate(MEASURE(png, found, accessible ? 7 : 4.5))) as string[];
  } finally {
    await page.evaluate('document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== window.__hideText)');
  }
}

export async function openLab(browser: Browser): Promise<Page> {
  return browser.newPage();
}
