/**
 * Connection quality during a call: the figures every engine reports (`EngineEvent` `quality`), the
 * visitor's "weak connection" hint with hysteresis, and the throttled report to main. Pure and
 * clock-injected (`now`), so the exact sequences are unit-tested (test/unit/renderer/call-quality.test.ts).
 */
import type { CallQualityLevel } from '../../../electron/contract.ts';

/** One periodic sample of the call's receive side (the avatar's media reaching us). */
export interface QualitySample {
  /** Received audio + video, kbps. */
  bitrateKbps: number;
  /** Packets lost on the way in, percent (0–100). */
  packetLossPct: number;
  /** Frames per second of the avatar's video as received (0 in an audio-only call). */
  frameRate: number;
  /** Round trip to the RTC provider's edge, ms. */
  rttMs: number;
  level: CallQualityLevel;
}

/**
 * The Web SDK's `network-quality` scale (0 unknown, 1 excellent, 2 good, 3 slightly impaired, 4 not very
 * smooth, 5 barely usable, 6 disconnected) in our four words; the worse of uplink and downlink counts.
 */
export function levelFromAgora(uplink: number, downlink: number): CallQualityLevel {
  const worst = Math.max(uplink, downlink);
  if (worst <= 0) return 'unknown';
  if (worst <= 2) return 'good';
  if (worst === 3) return 'fair';
  if (worst <= 5) return 'poor';
  return 'down';
}

export const isPoor = (level: CallQualityLevel): boolean => level === 'poor' || level === 'down';

/** How long quality must stay poor before the hint shows, and good before it goes. */
export const HINT_SHOW_AFTER_MS = 4_000;
export const HINT_HIDE_AFTER_MS = 4_000;

/**
 * Whether to show the visitor the calm "weak connection" hint. Hysteresis on both edges, so one bad
 * sample never flashes it and one good sample never hides it: poor (or down) without a break for
 * `showAfterMs` shows it; anything better than poor without a break for `hideAfterMs` hides it.
 * `unknown` (no figure yet) neither starts nor breaks a run.
 */
export class QualityHint {
  readonly #now: () => number;
  readonly #showAfterMs: number;
  readonly #hideAfterMs: number;
  #visible = false;
  #poorSince: number | null = null;
  #betterSince: number | null = null;

  constructor(now: () => number, options: { showAfterMs?: number; hideAfterMs?: number } = {}) {
    this.#now = now;
    this.#showAfterMs = options.showAfterMs ?? HINT_SHOW_AFTER_MS;
    this.#hideAfterMs = options.hideAfterMs ?? HINT_HIDE_AFTER_MS;
  }

  get visible(): boolean {
    return this.#visible;
  }

  /** Feed one sample's level; returns whether the hint shows now. */
  sample(level: CallQualityLevel): boolean {
    if (level === 'unknown') return this.#visible;
    const t = this.#now();
    if (isPoor(level)) {
      this.#betterSince = null;
      this.#poorSince ??= t;
      if (!this.#visible && t - this.#poorSince >= this.#showAfterMs) this.#visible = true;
    } else {
      this.#poorSince = null;
      this.#betterSince ??= t;
      if (this.#visible && t - this.#betterSince >= this.#hideAfterMs) this.#visible = false;
    }
    return this.#visible;
  }

  reset(): void {
    this.#visible = false;
    this.#poorSince = null;
    this.#betterSince = null;
  }
}

/** How often the renderer tells main the call's figures (plus once at the end). */
export const QUALITY_REPORT_INTERVAL_MS = 2_000;

/**
 * Throttles the samples sent to main: the first at once, then at most one per interval (the newest wins),
 * and the last one again at the end of the call (`flush`) so main keeps the call's final figures.
 */
export class QualityReporter {
  readonly #now: () => number;
  readonly #send: (sample: QualitySample, final: boolean) => void;
  readonly #intervalMs: number;
  #lastSentAt: number | null = null;
  #latest: QualitySample | null = null;
  #unsent = false;

  constructor(now: () => number, send: (sample: QualitySample, final: boolean) => void, intervalMs = QUALITY_REPORT_INTERVAL_MS) {
    this.#now = now;
    this.#send = send;
    this.#intervalMs = intervalMs;
  }

  sample(sample: QualitySample): void {
    this.#latest = sample;
    const t = this.#now();
    if (this.#lastSentAt === null || t - this.#lastSentAt >= this.#intervalMs) {
      this.#lastSentAt = t;
      this.#unsent = false;
      this.#send(sample, false);
    } else {
      this.#unsent = true;
    }
  }

  /** The call ended: send the newest figures once more, marked final (nothing if none ever came). */
  flush(): void {
    const latest = this.#latest;
    this.#latest = null;
    this.#unsent = false;
    this.#lastSentAt = null;
    if (latest) this.#send(latest, true);
  }

  /** A sample is waiting for the next interval (for tests and diagnostics). */
  get pending(): boolean {
    return this.#unsent;
  }
}

/** Keep a figure inside what main accepts (an SDK may report NaN or a negative before it has data). */
export function clampSample(s: QualitySample): QualitySample {
  const fix = (n: number, max: number): number => (Number.isFinite(n) ? Math.min(max, Math.max(0, n)) : 0);
  return {
    bitrateKbps: Math.round(fix(s.bitrateKbps, 100_000)),
    packetLossPct: Math.round(fix(s.packetLossPct, 100) * 100) / 100,
    frameRate: Math.round(fix(s.frameRate, 240) * 10) / 10,
    rttMs: Math.round(fix(s.rttMs, 60_000)),
    level: s.level,
  };
}
