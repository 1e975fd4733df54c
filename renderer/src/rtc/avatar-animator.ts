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
  readonly #name: string;
  /**
   * Everything that does not move, composed once per call (the kiosk may render in software, where every
   * full-frame gradient or resampled picture costs milliseconds of the page's main thread, 25 times a
   * second): the stage behind the avatar, the warm light at full strength, the picture already fitted to
   * the frame, and the vignette with the soft top and bottom edges. A frame is then four blits at (close
   * to) 1:1 scale.
   */
  readonly #layers: Layers;

  constructor(ctx: CanvasRenderingContext2D, width: number, height: number, image: AvatarImage | null, name: string) {
    this.#ctx = ctx;
    this.#w = width;
    this.#h = height;
    this.#name = name;
    this.#layers = avatarLayers(image, width, height);
    // The picture is already at its display size: the per-frame breathing and sway move it by a few
    // pixels, where bilinear filtering is indistinguishable from the high-quality kind and far cheaper.
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = 'low';
  }

  /** One frame at `tMs` since the start, with the voice `level` (0..1). */
  draw(tMs: number, level: number): void {
    const ctx = this.#ctx;
    const w = this.#w;
    const h = this.#h;
    const layers = this.#layers;
    const lv = Math.max(0, Math.min(1, level));
    ctx.drawImage(layers.stage, 0, 0);

    // A soft light behind the avatar that warms and widens with the voice.
    const glowR = h * (0.55 + lv * 0.08);
    ctx.globalAlpha = 0.1 + lv * 0.12;
    ctx.drawImage(layers.glow, w / 2 - glowR, h * 0.42 - glowR, glowR * 2, glowR * 2);
    ctx.globalAlpha = 1;

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
    if (layers.picture) this.#drawPicture(layers.picture, mouth, blink);
    else this.#drawSilhouette(mouth, blink, tMs);
    ctx.restore();

    ctx.drawImage(layers.overlay, 0, 0);
  }

  /** The fitted picture (bottom-anchored), its jaw band stretched by `mouth`. */
  #drawPicture(p: FittedPicture, mouth: number, blink: number): void {
    const ctx = this.#ctx;
    const { canvas, dx, dy } = p;
    const dw = canvas.width;
    const dh = canvas.height;
    const jawTop = Math.round(dh * JAW_TOP);
    const bandH = Math.round(dh * JAW_BOTTOM) - jawTop;
    const shift = bandH * mouth; // display px the band grows by
    // The whole picture first: partial draws on top of it never leave seams.
    ctx.drawImage(canvas, dx, dy);
    if (shift > 0.05) {
      // The head (above the jaw) rises by `shift`, the jaw band stretches to meet the unchanged shoulders.
      ctx.drawImage(canvas, 0, 0, dw, jawTop + 1, dx, dy - shift, dw, jawTop + 1);
      ctx.drawImage(canvas, 0, jawTop, dw, bandH, dx, dy - shift + jawTop, dw, bandH + shift);
    }

    if (blink > 0) {
      // A soft eyelid shadow over the eye line (no landmarks, so it is kept faint and narrow: it reads
      // as a blink in motion and is invisible in a still).
      const cy = dy - shift + dh * EYE_LINE;
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

interface FittedPicture {
  /** The picture at its display size, its left, right and top edges feathered into transparency. */
  canvas: HTMLCanvasElement;
  dx: number;
  dy: number;
}

interface Layers {
  /** The background: the warm radial stage, and a blurred, darkened copy of the picture covering it. */
  stage: HTMLCanvasElement;
  /** The warm light at full strength (drawn with the voice's alpha and radius). */
  glow: HTMLCanvasElement;
  picture: FittedPicture | null;
  /** The vignette and the soft top and bottom edges, over everything. */
  overlay: HTMLCanvasElement;
}

/** A fresh canvas always has a 2D context; the throw only satisfies the type (the caller reports it). */
function canvas2d(width: number, height: number): { canvas: HTMLCanvasElement; ctx: CanvasRenderingContext2D } {
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(width));
  canvas.height = Math.max(1, Math.round(height));
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('The demo picture could not be drawn.');
  return { canvas, ctx };
}

/** The layers made for the last picture and frame size: the same avatar is drawn call after call. */
let made: { image: AvatarImage | null; width: number; height: number; layers: Layers } | null = null;

/** The layers for this picture and frame size, made once (see `AvatarAnimator.#layers`). */
function avatarLayers(image: AvatarImage | null, width: number, height: number): Layers {
  if (!made || made.image !== image || made.width !== width || made.height !== height) made = { image, width, height, layers: prerender(image, width, height) };
  return made.layers;
}

/**
 * Make the layers for this picture now and have them painted (canvas drawing is deferred until its pixels
 * are read), so the first frame of a call does not pay tens of milliseconds for them on the tap's path.
 */
export function prepareAvatarLayers(image: AvatarImage | null, width: number, height: number): void {
  const layers = avatarLayers(image, width, height);
  for (const c of [layers.stage, layers.glow, layers.overlay, layers.picture?.canvas]) c?.getContext('2d')?.getImageData(0, 0, 1, 1);
}

function prerender(image: AvatarImage | null, width: number, height: number): Layers {
  const stage = canvas2d(width, height);
  const glow = canvas2d(256, 256);
  const overlay = canvas2d(width, height);

  const bg = stage.ctx.createRadialGradient(width / 2, height * 0.42, 10, width / 2, height * 0.5, width * 0.62);
  bg.addColorStop(0, '#2a2119');
  bg.addColorStop(0.55, '#110d0a');
  bg.addColorStop(1, '#000000');
  stage.ctx.fillStyle = bg;
  stage.ctx.fillRect(0, 0, width, height);
  if (image) {
    // Cover the frame with the picture, small and blurred (cheap at 1/8 size), then darken it.
    const small = canvas2d(width / 8, height / 8);
    const iw = image.width || 1;
    const ih = image.height || 1;
    const cover = Math.max(small.canvas.width / iw, small.canvas.height / ih);
    small.ctx.filter = 'blur(5px)';
    small.ctx.drawImage(image, (small.canvas.width - iw * cover) / 2, (small.canvas.height - ih * cover) / 2, iw * cover, ih * cover);
    small.ctx.filter = 'none';
    small.ctx.fillStyle = 'rgba(0,0,0,0.7)';
    small.ctx.fillRect(0, 0, small.canvas.width, small.canvas.height);
    stage.ctx.imageSmoothingQuality = 'high';
    stage.ctx.drawImage(small.canvas, 0, 0, width, height);
  }

  // Premultiplied, a gradient from (c, a) to (c, 0) is the same as one from (c, 1) to (c, 0) drawn at
  // alpha a: so the light is made once and each frame only sets its alpha and size.
  const g = glow.ctx.createRadialGradient(128, 128, 0, 128, 128, 128);
  g.addColorStop(0, 'rgba(214, 170, 110, 1)');
  g.addColorStop(1, 'rgba(214, 170, 110, 0)');
  glow.ctx.fillStyle = g;
  glow.ctx.fillRect(0, 0, 256, 256);

  // Edges fall to pure black, so the 16:9 frame melts into the black screen around it (portrait kiosks
  // show it letterboxed), with no hard line at the top or bottom.
  const vg = overlay.ctx.createRadialGradient(width / 2, height * 0.55, height * 0.42, width / 2, height * 0.55, width * 0.62);
  vg.addColorStop(0, 'rgba(0,0,0,0)');
  vg.addColorStop(0.7, 'rgba(0,0,0,0.55)');
  vg.addColorStop(1, 'rgba(0,0,0,1)');
  overlay.ctx.fillStyle = vg;
  overlay.ctx.fillRect(0, 0, width, height);
  const fade = overlay.ctx.createLinearGradient(0, 0, 0, height);
  fade.addColorStop(0, 'rgba(0,0,0,1)');
  fade.addColorStop(0.14, 'rgba(0,0,0,0)');
  fade.addColorStop(0.9, 'rgba(0,0,0,0)');
  fade.addColorStop(1, 'rgba(0,0,0,0.85)');
  overlay.ctx.fillStyle = fade;
  overlay.ctx.fillRect(0, 0, width, height);

  return { stage: stage.canvas, glow: glow.canvas, picture: image ? fitPicture(image, width, height) : null, overlay: overlay.canvas };
}

/** The picture fitted into the frame (height-led, bottom-anchored) with high-quality resampling, once. */
function fitPicture(image: AvatarImage, width: number, height: number): FittedPicture {
  const iw = image.width || 1;
  const ih = image.height || 1;
  const fit = Math.min((height * 0.98) / ih, (width * 0.98) / iw);
  const { canvas, ctx } = canvas2d(iw * fit, ih * fit);
  const dw = canvas.width;
  const dh = canvas.height;
  ctx.imageSmoothingEnabled = true;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(image, 0, 0, dw, dh);
  ctx.globalCompositeOperation = 'destination-in';
  const feather = Math.max(1, dw * 0.14);
  const mask = ctx.createLinearGradient(0, 0, dw, 0);
  mask.addColorStop(0, 'rgba(0,0,0,0)');
  mask.addColorStop(feather / dw, 'rgba(0,0,0,1)');
  mask.addColorStop(1 - feather / dw, 'rgba(0,0,0,1)');
  mask.addColorStop(1, 'rgba(0,0,0,0)');
  ctx.fillStyle = mask;
  ctx.fillRect(0, 0, dw, dh);
  // Full-size fills only: Chromium applies destination-in to the whole canvas, not just the shape.
  const top = ctx.createLinearGradient(0, 0, 0, dh);
  top.addColorStop(0, 'rgba(0,0,0,0)');
  top.addColorStop(0.1, 'rgba(0,0,0,1)');
  top.addColorStop(1, 'rgba(0,0,0,1)');
  ctx.fillStyle = top;
  ctx.fillRect(0, 0, dw, dh);
  return { canvas, dx: (width - dw) / 2, dy: height - dh };
}
