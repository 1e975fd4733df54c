/**
 * Presence from the camera, the pure part: a background model of the room on small grey frames, the share
 * of the frame's CENTRE that differs from it (a visitor stands in front of the screen, in the middle and
 * close, so they cover a large part of it), and hysteresis over time. No DOM, no camera: frames come in
 * as luma arrays with their time, so node tests drive it with synthetic frames and a fake clock.
 *
 * Why a background model rather than frame-to-frame motion: someone reading the screen stands almost
 * still, and must stay "present". Why the centre and a sustained second: people walking past at the
 * sides never enter it, and those crossing it do so in well under a second (measured in the bench and
 * README). Frames are only read, never kept: the model is a running average in memory.
 */

export interface PresenceTuning {
  /** Luma difference from the background (after lighting compensation) that makes a pixel foreground. */
  foregroundThreshold: number;
  /** Share of the centre region that must be foreground for "someone is there" (0..1). */
  centreShare: number;
  /** The centre region, as fractions of the frame: [left, right] and [top, bottom]. */
  centreX: [number, number];
  centreY: [number, number];
  /** Background learning rate per frame for pixels that look like background (lighting follows). */
  backgroundRate: number;
  /** Learning rate for foreground pixels: a standing visitor is absorbed only after minutes. */
  foregroundRate: number;
  /** A foreground with no frame-to-frame change for this long is furniture, not a person: absorb it. */
  staticAbsorbMs: number;
  /** Frame-to-frame luma change that counts as movement, and the share of the centre that must move. */
  motionThreshold: number;
  motionShare: number;
}

export const DEFAULT_TUNING: PresenceTuning = {
  foregroundThreshold: 28,
  centreShare: 0.18,
  centreX: [0.3, 0.7],
  centreY: [0.15, 0.95],
  backgroundRate: 0.05,
  foregroundRate: 0.001,
  staticAbsorbMs: 60_000,
  motionThreshold: 20,
  motionShare: 0.004,
};

/** What one frame shows. */
export interface FrameReading {
  /** Share of the centre that differs from the background, 0..1. */
  centreForeground: number;
  /** Share of the centre that moved since the previous frame, 0..1. */
  centreMotion: number;
  /** This frame alone says someone is there. */
  candidate: boolean;
}

/** The room's background and the previous frame, on frames of one size (e.g. 160×120). */
export class BackgroundModel {
  readonly #w: number;
  readonly #h: number;
  readonly #t: PresenceTuning;
  #background: Float32Array | null = null;
  #previous: Uint8ClampedArray;
  #stillSinceMs: number | null = null;
  readonly #x0: number;
  readonly #x1: number;
  readonly #y0: number;
  readonly #y1: number;

  constructor(width: number, height: number, tuning: PresenceTuning = DEFAULT_TUNING) {
    this.#w = width;
    this.#h = height;
    this.#t = tuning;
    this.#previous = new Uint8ClampedArray(width * height);
    this.#x0 = Math.floor(width * tuning.centreX[0]);
    this.#x1 = Math.ceil(width * tuning.centreX[1]);
    this.#y0 = Math.floor(height * tuning.centreY[0]);
    this.#y1 = Math.ceil(height * tuning.centreY[1]);
  }

  /** Reads one frame (luma, row-major, `width × height`) taken at `nowMs`. */
  update(luma: Uint8ClampedArray | Uint8Array, nowMs: number): FrameReading {
    const w = this.#w;
    const n = w * this.#h;
    if (luma.length !== n) throw new RangeError(`expected ${n} luma values, got ${luma.length}`);
    const t = this.#t;
    if (!this.#background) {
      this.#background = Float32Array.from(luma);
      this.#previous.set(luma);
      return { centreForeground: 0, centreMotion: 0, candidate: false };
    }
    const bg = this.#background;
    const prev = this.#previous;
    // Lighting compensation: the mean difference over the frame's outer band (left and right quarters),
    // where a visitor in the middle does not weigh.
    let offsetSum = 0;
    let offsetCount = 0;
    const band = Math.floor(w * 0.2);
    for (let r = 0; r < this.#h; r += 2) {
      const row = r * w;
      for (let c = 0; c < band; c += 2) {
        offsetSum += luma[row + c]! - bg[row + c]! + luma[row + w - 1 - c]! - bg[row + w - 1 - c]!;
        offsetCount += 2;
      }
    }
    const offset = offsetCount ? offsetSum / offsetCount : 0;

    let fg = 0;
    let moved = 0;
    const centreArea = (this.#x1 - this.#x0) * (this.#y1 - this.#y0);
    for (let r = 0; r < this.#h; r++) {
      const row = r * w;
      const inRows = r >= this.#y0 && r < this.#y1;
      for (let c = 0; c < w; c++) {
        const i = row + c;
        const v = luma[i]!;
        const isFg = Math.abs(v - bg[i]! - offset) > t.foregroundThreshold;
        if (inRows && c >= this.#x0 && c < this.#x1) {
          if (isFg) fg++;
          if (Math.abs(v - prev[i]!) > t.motionThreshold) moved++;
        }
        bg[i] = bg[i]! + (isFg ? t.foregroundRate : t.backgroundRate) * (v - bg[i]!);
      }
    }
    prev.set(luma);
    const centreForeground = fg / centreArea;
    const centreMotion = moved / centreArea;
    let candidate = centreForeground >= t.centreShare;
    if (candidate && centreMotion < t.motionShare) {
      // A foreground that never moves is an object left in view (a moved chair), not a person.
      this.#stillSinceMs ??= nowMs;
      if (nowMs - this.#stillSinceMs >= t.staticAbsorbMs) {
        bg.set(luma);
        this.#stillSinceMs = null;
        candidate = false;
      }
    } else {
      this.#stillSinceMs = null;
    }
    return { centreForeground, centreMotion, candidate };
  }
}

export interface HysteresisTiming {
  /** "Someone approached" after the centre is occupied this long, ms. */
  approachMs: number;
  /** "Nobody" after the centre is empty this long, ms. */
  nobodyMs: number;
  /** A gap of up to this long (one or two missed frames) does not break "sustained", ms. */
  gapToleranceMs: number;
}

export const DEFAULT_TIMING: HysteresisTiming = { approachMs: 1_000, nobodyMs: 20_000, gapToleranceMs: 450 };

/**
 * Turns per-frame candidates into a stable present/absent value. `value` is null until the first frame,
 * then false; true once candidates were sustained `approachMs`; false again after `nobodyMs` without one.
 */
export class PresenceHysteresis {
  readonly #timing: HysteresisTiming;
  #value: boolean | null = null;
  #runStartMs: number | null = null;
  #lastCandidateMs: number | null = null;

  constructor(timing: Partial<HysteresisTiming> = {}) {
    this.#timing = { ...DEFAULT_TIMING, ...timing };
  }

  get value(): boolean | null {
    return this.#value;
  }

  /** Feeds one frame's candidate at `nowMs`; returns the (possibly new) value. */
  push(candidate: boolean, nowMs: number): boolean {
    const { approachMs, nobodyMs, gapToleranceMs } = this.#timing;
    if (candidate) {
      const gap = this.#lastCandidateMs === null ? Infinity : nowMs - this.#lastCandidateMs;
      if (this.#runStartMs === null || gap > gapToleranceMs) this.#runStartMs = nowMs;
      this.#lastCandidateMs = nowMs;
      if (!this.#value && nowMs - this.#runStartMs >= approachMs) this.#value = true;
    } else if (this.#value && this.#lastCandidateMs !== null && nowMs - this.#lastCandidateMs >= nobodyMs) {
      this.#value = false;
    }
    this.#value ??= false;
    return this.#value;
  }
}

/** RGBA (canvas ImageData) to luma, into `out` (Rec. 601 weights in integers). */
export function rgbaToLuma(rgba: Uint8ClampedArray, out: Uint8ClampedArray): Uint8ClampedArray {
  for (let i = 0, p = 0; p < out.length; i += 4, p++) {
    out[p] = (rgba[i]! * 77 + rgba[i + 1]! * 150 + rgba[i + 2]! * 29) >> 8;
  }
  return out;
}
