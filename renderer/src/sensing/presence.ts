/**
 * The camera side of presence: opens the camera (or reads a stream it is given), copies a 160×120 grey
 * frame about 5 times a second onto a canvas, and runs the pure background model and hysteresis of
 * presence-core.ts. Implements the shared `PresenceDetector` signal (sensing/types.ts).
 *
 * Privacy: frames are read into a small canvas in this renderer and dropped; nothing is stored or sent.
 * Only the boolean `value` leaves this module.
 */
import type { PresenceDetector } from './types.ts';
import { BackgroundModel, PresenceHysteresis, rgbaToLuma, type HysteresisTiming, type PresenceTuning, DEFAULT_TUNING } from './presence-core.ts';

export const PRESENCE_WIDTH = 160;
export const PRESENCE_HEIGHT = 120;

export interface PresenceOptions {
  /** Opens the camera. Not called when `stream` is given. */
  getUserMedia?: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  /** Read this stream instead (e.g. the call's own camera track); it is not stopped by `stop()`. */
  stream?: MediaStream;
  /** Frames per second analysed (default 5). */
  fps?: number;
  timing?: Partial<HysteresisTiming>;
  tuning?: Partial<PresenceTuning>;
  /** Called when the camera cannot be opened or read (value becomes null). */
  onError?: (error: unknown) => void;
  /** Continue from this model of the room (e.g. the attract screen's, learned while nobody was there). */
  model?: BackgroundModel;
}

/** Per-frame cost, for the bench (ms of main-thread time per analysed frame). */
export interface PresenceStats {
  frames: number;
  totalMs: number;
  lastCentreForeground: number;
}

export class CameraPresenceDetector implements PresenceDetector {
  readonly #options: PresenceOptions;
  readonly #listeners = new Set<(value: boolean | null) => void>();
  readonly #hysteresis: PresenceHysteresis;
  readonly #model: BackgroundModel;
  readonly #luma = new Uint8ClampedArray(PRESENCE_WIDTH * PRESENCE_HEIGHT);
  #value: boolean | null = null;
  #stream: MediaStream | null = null;
  #ownsStream = false;
  #video: HTMLVideoElement | null = null;
  #ctx: OffscreenCanvasRenderingContext2D | null = null;
  #timer: ReturnType<typeof setInterval> | null = null;
  #stopped = false;
  readonly stats: PresenceStats = { frames: 0, totalMs: 0, lastCentreForeground: 0 };

  constructor(options: PresenceOptions) {
    this.#options = options;
    this.#hysteresis = new PresenceHysteresis(options.timing);
    this.#model = options.model ?? new BackgroundModel(PRESENCE_WIDTH, PRESENCE_HEIGHT, { ...DEFAULT_TUNING, ...options.tuning });
  }

  /** The model of the room this detector learns (hand it to the next detector on the same camera). */
  get model(): BackgroundModel {
    return this.#model;
  }

  get value(): boolean | null {
    return this.#value;
  }

  onChange(listener: (value: boolean | null) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Opens the camera and starts reading. Resolves once frames flow (or on failure, value stays null). */
  async start(): Promise<void> {
    if (this.#stopped || this.#timer) return;
    try {
      let stream = this.#options.stream ?? null;
      if (!stream) {
        if (!this.#options.getUserMedia) throw new Error('no camera source');
        stream = await this.#options.getUserMedia({
          video: { width: { ideal: 320 }, height: { ideal: 240 }, frameRate: { ideal: 10, max: 15 } },
          audio: false,
        });
        this.#ownsStream = true;
      }
      this.#stream = stream;
      if (this.#stopped) {
        this.#release();
        return;
      }
      const video = document.createElement('video');
      video.muted = true;
      video.playsInline = true;
      video.srcObject = stream;
      this.#video = video;
      await video.play();
      if (this.#stopped) {
        this.#release();
        return;
      }
      const canvas = new OffscreenCanvas(PRESENCE_WIDTH, PRESENCE_HEIGHT);
      this.#ctx = canvas.getContext('2d', { willReadFrequently: true });
      if (!this.#ctx) throw new Error('no 2D canvas');
      const periodMs = Math.round(1000 / (this.#options.fps ?? 5));
      this.#timer = setInterval(() => this.#read(), periodMs);
    } catch (error) {
      this.#release();
      this.#set(null);
      this.#options.onError?.(error);
    }
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#release();
    this.#set(null);
    this.#listeners.clear();
  }

  #read(): void {
    const video = this.#video;
    const ctx = this.#ctx;
    if (!video || !ctx || video.readyState < 2) return;
    const t0 = performance.now();
    ctx.drawImage(video, 0, 0, PRESENCE_WIDTH, PRESENCE_HEIGHT);
    const image = ctx.getImageData(0, 0, PRESENCE_WIDTH, PRESENCE_HEIGHT);
    const reading = this.#model.update(rgbaToLuma(image.data, this.#luma), t0);
    this.#set(this.#hysteresis.push(reading.candidate, t0));
    this.stats.frames++;
    this.stats.totalMs += performance.now() - t0;
    this.stats.lastCentreForeground = reading.centreForeground;
  }

  #set(value: boolean | null): void {
    if (value === this.#value) return;
    this.#value = value;
    for (const l of [...this.#listeners]) l(value);
  }

  #release(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#video) {
      this.#video.srcObject = null;
      this.#video = null;
    }
    if (this.#stream && this.#ownsStream) for (const t of this.#stream.getTracks()) t.stop();
    this.#stream = null;
    this.#ctx = null;
    this.#luma.fill(0);
  }
}
