/**
 * Draws the demo avatar: the configured picture (or a calm silhouette when there is none) on a dark,
 * warm stage, with idle motion — breathing, a slow sway, an occasional blink — and a mouth/scale
 * movement that follows an input level in 0..1. Pure canvas 2D; the caller owns the timer.
 *
 * The picture is a single arbitrary portrait, so there are no face landmarks: the "jaw" and "eyes" are
 * bands at typical head-and-shoulders proportions, and every movement is kept small enough to read as
 * life rather than as distortion when the guess is off.
 */
export type AvatarImage = CanvasImageSource & { width: number; height: number };

/** Fractions of the picture's height, fitted to the bundled demo portrait (resources/demo-avatar.png:
 *  eyes at 0.42, nose tip 0.49, mouth 0.52–0.57, chin 0.59). Demo sessions normally show that picture;
 *  another head-and-shoulders portrait lands close enough for the small movements below. */
const EYE_LINE = 0.42;
const JAW_TOP = 0.5;
const JAW_BOTTOM = 0.6;

export class AvatarAnimator {
  readonly #ctx: CanvasRenderingContext2D;
  readonly #w: number;
  readonly #h: number;
  readonly #image: AvatarImage | null;
  readonly #name: string;
  #background: CanvasGradient;
  #vignette: CanvasGradient;
  /** The picture with feathered edges, and a blurred, darkened copy that fills the frame behind it. */
  #layers: { sharp: CanvasImageSource; backdrop: CanvasImageSource | null } | null = null;

  constructor(ctx: CanvasRenderingContext2D, width: number, height: number, image: AvatarImage | null, name: string) {
    this.#ctx = ctx;
    this.#w = width;
    this.#h = height;
    this.#image = image;
    this.#name = name;
    const bg = ctx.createRadialGradient(width / 2, height * 0.42, 10, width / 2, height * 0.5, width * 0.62);
    bg.addColorStop(0, '#2a2119');
    bg.addColorStop(0.55, '#110d0a');
    bg.addColorStop(1, '#000000');
    this.#background = bg;
    // Edges fall to pure black, so the 16:9 frame melts into the black screen around it (portrait kiosks
    // show it letterboxed).
    const vg = ctx.createRadialGradient(width / 2, height * 0.55, height * 0.42, width / 2, height * 0.55, width * 0.62);
    vg.addColorStop(0, 'rgba(0,0,0,0)');
    vg.addColorStop(0.7, 'rgba(0,0,0,0.55)');
    vg.addColorStop(1, 'rgba(0,0,0,1)');
    this.#vignette = vg;
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = 'high';
    if (image) this.#layers = prerender(image, width, height);
  }

  /** One frame at `tMs` since the start, with the voice `level` (0..1). */
  draw(tMs: number, level: number): void {
    const ctx = this.#ctx;
    const w = this.#w;
    const h = this.#h;
    const lv = Math.max(0, Math.min(1, level));
    ctx.fillStyle = this.#background;
    ctx.fillRect(0, 0, w, h);
    if (this.#layers?.backdrop) ctx.drawImage(this.#layers.backdrop, 0, 0, w, h);

    // A soft light behind the avatar that warms with the voice.
    const glow = ctx.createRadialGradient(w / 2, h * 0.42, 0, w / 2, h * 0.42, h * (0.55 + lv * 0.08));
    glow.addColorStop(0, `rgba(214, 170, 110, ${0.1 + lv * 0.12})`);
    glow.addColorStop(1, 'rgba(214, 170, 110, 0)');
    ctx.fillStyle = glow;
    ctx.fillRect(0, 0, w, h);

    const breath = Math.sin((2 * Math.PI * tMs) / 4200);
    const sway = Math.sin((2 * Math.PI * tMs) / 7300);
    const scale = 1 + 0.006 * breath + 0.018 * lv;
    const rotation = 0.005 * sway + 0.006 * lv * Math.sin(tMs / 95);
    const lift = -2.5 * breath - 3 * lv;
    const mouth = lv * 0.07 * (0.75 + 0.25 * Math.sin(tMs / 60));
    const blink = blinkAmount(tMs);

    ctx.save();
    ctx.translate(w / 2, h);
    ctx.rotate(rotation);
    ctx.scale(scale, scale);
    ctx.translate(-w / 2, -h + lift);
    if (this.#image) this.#drawPicture(this.#layers?.sharp ?? this.#image, this.#image, mouth, blink);
    else this.#drawSilhouette(mouth, blink, tMs);
    ctx.restore();

    ctx.fillStyle = this.#vignette;
    ctx.fillRect(0, 0, w, h);
    // Soft top and bottom edges, so a letterboxed frame (portrait screens) has no hard line.
    const fade = ctx.createLinearGradient(0, 0, 0, h);
    fade.addColorStop(0, 'rgba(0,0,0,1)');
    fade.addColorStop(0.14, 'rgba(0,0,0,0)');
    fade.addColorStop(0.9, 'rgba(0,0,0,0)');
    fade.addColorStop(1, 'rgba(0,0,0,0.85)');
    ctx.fillStyle = fade;
    ctx.fillRect(0, 0, w, h);
  }

  /** The picture fitted into the frame (height-led, bottom-anchored), its jaw band stretched by `mouth`. */
  #drawPicture(src: CanvasImageSource, img: AvatarImage, mouth: number, blink: number): void {
    const ctx = this.#ctx;
    const w = this.#w;
    const h = this.#h;
    const iw = img.width || 1;
    const ih = img.height || 1;
    const fit = Math.min((h * 0.98) / ih, (w * 0.98) / iw);
    const dw = iw * fit;
    const dh = ih * fit;
    const dx = (w - dw) / 2;
    const dy = h - dh;

    const jawTop = ih * JAW_TOP;
    const jawBottom = ih * JAW_BOTTOM;
    const bandH = jawBottom - jawTop;
    const extra = bandH * mouth; // source px the band grows by
    // The whole picture first: partial draws on top of it never leave seams.
    ctx.drawImage(src, 0, 0, iw, ih, dx, dy, dw, dh);
    if (extra > 0.05) {
      const shift = extra * fit;
      // The head (above the jaw) rises by `shift`, the jaw band stretches to meet the unchanged shoulders.
      ctx.drawImage(src, 0, 0, iw, jawTop + 1, dx, dy - shift, dw, (jawTop + 1) * fit);
      ctx.drawImage(src, 0, jawTop, iw, bandH, dx, dy - shift + jawTop * fit, dw, bandH * fit + shift);
    }

    if (blink > 0) {
      // A soft eyelid shadow over the eye line (no landmarks, so it is kept faint and narrow: it reads
      // as a blink in motion and is invisible in a still).
      const cy = dy - extra * fit + ih * EYE_LINE * fit;
      const rx = dw * 0.17;
      const ry = dh * 0.02;
      const grad = ctx.createRadialGradient(dx + dw / 2, cy, 0, dx + dw / 2, cy, rx);
      grad.addColorStop(0, `rgba(25,16,10,${0.16 * blink})`);
      grad.addColorStop(1, 'rgba(25,16,10,0)');
      ctx.save();
      ctx.fillStyle = grad;
      ctx.beginPath();
      ctx.ellipse(dx + dw / 2, cy, rx, ry, 0, 0, Math.PI * 2);
      ctx.fill();
      ctx.restore();
    }
  }

  /** No picture configured: a calm, abstract figure with the avatar's initial. */
  #drawSilhouette(mouth: number, blink: number, tMs: number): void {
    const ctx = this.#ctx;
    const w = this.#w;
    const h = this.#h;
    const cx = w / 2;
    const body = ctx.createLinearGradient(0, h * 0.55, 0, h);
    body.addColorStop(0, '#6b5640');
    body.addColorStop(1, '#2a2119');
    ctx.fillStyle = body;
    ctx.beginPath();
    ctx.ellipse(cx, h * 1.02, w * 0.24, h * 0.36, 0, Math.PI, 0);
    ctx.fill();

    const headY = h * 0.4;
    const headR = h * 0.16;
    const face = ctx.createRadialGradient(cx - headR * 0.3, headY - headR * 0.4, headR * 0.1, cx, headY, headR * 1.1);
    face.addColorStop(0, '#d9b88f');
    face.addColorStop(1, '#8a6a4a');
    ctx.fillStyle = face;
    ctx.beginPath();
    ctx.ellipse(cx, headY, headR * 0.86, headR, 0, 0, Math.PI * 2);
    ctx.fill();

    // Eyes and mouth, drawn: here the blink and the mouth are exact.
    ctx.fillStyle = '#2a2119';
    const eyeH = Math.max(0.6, headR * 0.07 * (1 - blink));
    for (const side of [-1, 1]) {
      ctx.beginPath();
      ctx.ellipse(cx + side * headR * 0.32, headY - headR * 0.08, headR * 0.08, eyeH, 0, 0, Math.PI * 2);
      ctx.fill();
    }
    const open = headR * (0.03 + mouth * 1.6);
    ctx.beginPath();
    ctx.ellipse(cx, headY + headR * 0.45, headR * 0.2, open, 0, 0, Math.PI * 2);
    ctx.fill();

    ctx.fillStyle = 'rgba(255, 240, 220, 0.10)';
    ctx.font = `600 ${Math.round(h * 0.05)}px system-ui, sans-serif`;
    ctx.textAlign = 'center';
    ctx.fillText(this.#name.slice(0, 20), cx, h * 0.94 + Math.sin(tMs / 900) * 0.5);
  }
}

/** 0..1 eyelid closure: a 160 ms blink roughly every 3–5.5 s (deterministic per time). */
export function blinkAmount(tMs: number): number {
  const period = 4300;
  const cycle = Math.floor(tMs / period);
  const jitter = ((cycle * 7919) % 1300) - 650; // pseudo-random offset per cycle
  const at = cycle * period + period / 2 + jitter;
  const d = Math.abs(tMs - at);
  return d < 80 ? 1 - d / 80 : 0;
}

/**
 * Done once per call, not per frame (the kiosk may render in software): the picture with its left and
 * right edges feathered into transparency, and a blurred, darkened copy covering the whole frame, so
 * the portrait's own background melts into the stage instead of showing as a rectangle.
 */
function prerender(image: AvatarImage, width: number, height: number): { sharp: CanvasImageSource; backdrop: CanvasImageSource | null } {
  const iw = image.width || 1;
  const ih = image.height || 1;
  const sharp = document.createElement('canvas');
  sharp.width = iw;
  sharp.height = ih;
  const s = sharp.getContext('2d');
  if (!s) return { sharp: image, backdrop: null };
  s.drawImage(image, 0, 0);
  s.globalCompositeOperation = 'destination-in';
  const feather = Math.max(1, iw * 0.14);
  const mask = s.createLinearGradient(0, 0, iw, 0);
  mask.addColorStop(0, 'rgba(0,0,0,0)');
  mask.addColorStop(feather / iw, 'rgba(0,0,0,1)');
  mask.addColorStop(1 - feather / iw, 'rgba(0,0,0,1)');
  mask.addColorStop(1, 'rgba(0,0,0,0)');
  s.fillStyle = mask;
  s.fillRect(0, 0, iw, ih);
  // Full-size fills only: Chromium applies destination-in to the whole canvas, not just the shape.
  const top = s.createLinearGradient(0, 0, 0, ih);
  top.addColorStop(0, 'rgba(0,0,0,0)');
  top.addColorStop(0.1, 'rgba(0,0,0,1)');
  top.addColorStop(1, 'rgba(0,0,0,1)');
  s.fillStyle = top;
  s.fillRect(0, 0, iw, ih);

  const backdrop = document.createElement('canvas');
  backdrop.width = Math.round(width / 8);
  backdrop.height = Math.round(height / 8);
  const b = backdrop.getContext('2d');
  if (!b) return { sharp, backdrop: null };
  // Cover the frame with the picture, small and blurred (cheap at 1/8 size), then darken it.
  const cover = Math.max(backdrop.width / iw, backdrop.height / ih);
  b.filter = 'blur(5px)';
  b.drawImage(image, (backdrop.width - iw * cover) / 2, (backdrop.height - ih * cover) / 2, iw * cover, ih * cover);
  b.filter = 'none';
  b.fillStyle = 'rgba(0,0,0,0.7)';
  b.fillRect(0, 0, backdrop.width, backdrop.height);
  return { sharp, backdrop };
}
