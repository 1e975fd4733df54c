/**
 * Generated fake-camera videos (YUV4MPEG2, grey: constant chroma) for Chromium's
 * `--use-file-for-fake-video-capture`: a still room with sensor noise and a slow lighting drift, and
 * person-like figures (head, shoulders and body in a darker coat) that walk, approach and stand. Used by
 * the approach E2E and by the presence bench to measure false triggers and CPU. Deterministic (seeded).
 *
 * Chromium loops the file, so a scene that must "start empty" begins with empty seconds.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { mulberry32 } from '../helpers/seeded-random.ts';

/** One figure at one moment: horizontal centre and height as fractions of the frame. */
export interface Figure {
  /** Centre of the figure, 0 (left edge) .. 1 (right edge). */
  x: number;
  /** Height of the whole figure (head to the frame's bottom or its feet), fraction of the frame height. */
  height: number;
  /** Where the feet are, fraction of the frame height from the top (> 1: cut off by the frame). */
  feetY: number;
}

/** A scene: the figures visible at time `tS` (seconds from the start of the file). */
export type Scene = (tS: number) => Figure[];

export interface VideoSpec {
  width: number;
  height: number;
  fps: number;
  durationS: number;
  scene: Scene;
  seed?: number;
}

/** A person standing close to the kiosk: tall (cut off by the frame), swaying a little. */
export function standing(x: number, tS: number): Figure {
  return { x: x + 0.01 * Math.sin(tS * 2.1), height: 1.25 + 0.01 * Math.sin(tS * 1.3), feetY: 1.55 };
}

/** Someone walking straight across the frame from `fromX` to `toX` between `startS` and `endS`. */
export function crossing(tS: number, startS: number, endS: number, fromX: number, toX: number, near: boolean): Figure[] {
  if (tS < startS || tS > endS) return [];
  const p = (tS - startS) / (endS - startS);
  const x = fromX + (toX - fromX) * p;
  return [near ? { x, height: 1.2, feetY: 1.5 } : { x, height: 0.38, feetY: 0.82 }];
}

/** The approach scene: empty for `emptyS`, then a person walks in from the left and stops in the centre. */
export function approachScene(emptyS: number, walkS = 1.2): Scene {
  return (t) => {
    if (t < emptyS) return [];
    const p = Math.min(1, (t - emptyS) / walkS);
    // Walks in from the left edge, growing as they come closer, then stands in the middle.
    const x = -0.2 + 0.7 * p;
    if (p < 1) return [{ x, height: 0.6 + 0.65 * p, feetY: 1.0 + 0.55 * p }];
    return [standing(0.5, t)];
  };
}

/**
 * People walking past and never stopping: close passers-by crossing the whole frame at walking pace
 * (about 1.3 s edge to edge), distant ones crossing slowly through the middle, and people lingering at
 * the left and right edges. Nobody should be taken for a visitor.
 */
export function passersByScene(): Scene {
  return (t) => [
    ...crossing(t, 1, 2.3, -0.25, 1.25, true),
    ...crossing(t, 4, 5.2, 1.25, -0.25, true),
    ...crossing(t, 6, 10, -0.1, 1.1, false),
    ...crossing(t, 11, 14, 1.1, -0.1, false),
    // Two people at the edges, one each side, lingering for several seconds.
    ...(t > 15 && t < 22 ? [{ x: 0.06 + 0.02 * Math.sin(t), height: 1.2, feetY: 1.5 }] : []),
    ...(t > 17 && t < 24 ? [{ x: 0.95 + 0.02 * Math.sin(t * 1.3), height: 1.2, feetY: 1.5 }] : []),
    ...crossing(t, 25, 26.2, -0.25, 1.25, true),
    ...crossing(t, 26.6, 27.9, 1.25, -0.25, true),
  ];
}

/** An empty room (noise and lighting drift only). */
export const emptyScene: Scene = () => [];

/** The frames' luma planes (`width × height` each), in order. */
export function* renderFrames(spec: VideoSpec): Generator<{ tS: number; luma: Buffer }> {
  const { width: w, height: h, fps } = spec;
  const frames = Math.round(spec.durationS * fps);
  const random = mulberry32(spec.seed ?? 7);
  const room = roomBackground(w, h);
  for (let i = 0; i < frames; i++) {
    const t = i / fps;
    const y = Buffer.alloc(w * h);
    // Lighting drifts by ±3 % over ~20 s (daylight, auto exposure).
    const gain = 1 + 0.03 * Math.sin((t / 20) * 2 * Math.PI);
    for (let p = 0; p < w * h; p++) y[p] = room[p]! * gain;
    for (const f of spec.scene(t)) drawFigure(y, w, h, f);
    for (let p = 0; p < w * h; p++) y[p] = clamp(y[p]! + (random() - 0.5) * 8); // sensor noise ±4
    yield { tS: t, luma: y };
  }
}

/** Writes the video; resolves when the file is complete. */
export async function writeY4m(path: string, spec: VideoSpec): Promise<void> {
  const { width: w, height: h, fps } = spec;
  const out = createWriteStream(path);
  out.write(`YUV4MPEG2 W${w} H${h} F${fps}:1 Ip A1:1 C420jpeg\n`);
  const chroma = Buffer.alloc((w >> 1) * (h >> 1) * 2, 128);
  for (const { luma } of renderFrames(spec)) {
    out.write('FRAME\n');
    out.write(luma);
    if (!out.write(chroma)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

function roomBackground(w: number, h: number): Uint8Array {
  const y = new Uint8Array(w * h);
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      // A lit wall (brighter at the top), a floor, and two darker shapes (a plant, a door frame).
      let v = r < h * 0.7 ? 170 - (r / h) * 40 : 110;
      if (c > w * 0.08 && c < w * 0.16 && r > h * 0.35) v = 70;
      if (c > w * 0.82 && c < w * 0.88 && r < h * 0.7) v = 130;
      y[r * w + c] = v;
    }
  }
  return y;
}

function drawFigure(y: Buffer, w: number, h: number, f: Figure): void {
  const tall = f.height * h;
  const top = f.feetY * h - tall;
  const cx = f.x * w;
  const headR = tall * 0.085;
  const headCy = top + headR * 1.2;
  const bodyTop = headCy + headR * 1.1;
  const bodyHalfW = tall * 0.16;
  for (let r = Math.max(0, Math.floor(top)); r < Math.min(h, Math.ceil(f.feetY * h)); r++) {
    for (let c = Math.max(0, Math.floor(cx - bodyHalfW - 2)); c < Math.min(w, Math.ceil(cx + bodyHalfW + 2)); c++) {
      const dx = c - cx;
      const dyHead = r - headCy;
      if ((dx * dx) / (headR * headR * 0.75) + (dyHead * dyHead) / (headR * headR) <= 1) {
        y[r * w + c] = 185 - Math.abs(dx) * 0.8; // face, lit from the front
      } else if (r >= bodyTop) {
        // Shoulders round off, then the coat falls straight.
        const halfW = bodyHalfW * Math.min(1, 0.55 + (r - bodyTop) / (tall * 0.12));
        if (Math.abs(dx) <= halfW) y[r * w + c] = 45 + (r % 7 === 0 ? 6 : 0);
      }
    }
  }
}

function clamp(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

