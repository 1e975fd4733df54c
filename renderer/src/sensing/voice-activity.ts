/**
 * Is the visitor talking? A WebAudio energy detector with hysteresis on the LOCAL microphone track.
 *
 * Why this is enough: the engines capture the microphone with echo cancellation on (demo:
 * `echoCancellation: true`; agora-web: `AEC: true`), so the avatar's own voice coming out of the
 * speakers is removed before we measure, and we never look at the remote (avatar) track. What is left
 * is the visitor's voice plus room noise (noise suppression is on as well), and a level threshold with
 * start/stop hold times separates speech from silence without a model (TECH-NOTES: a VAD model would
 * need onnxruntime-web's large WASM for no gain in "is anybody still talking").
 *
 * Levels are RMS of the time-domain signal in dBFS; `level` maps −60…0 dBFS onto 0…1 for a meter.
 *   - silent → speaking: the level stays at or above `startDbfs` for `startHoldMs` (a click or a cough
 *     shorter than that does not count);
 *   - speaking → silent: the level stays below `stopDbfs` (lower than `startDbfs`: the hysteresis band)
 *     for `stopHoldMs` (pauses between words do not end speech).
 * Sampling runs on an injected clock, so tests drive it with a fake one and a fake level source.
 */
import type { VoiceActivityDetector } from './types.ts';
import { browserClock, type RendererClock } from './clock.ts';

export interface VoiceActivityOptions {
  /** Speech may start at or above this level (dBFS). */
  startDbfs: number;
  /** Speech may stop below this level (dBFS); lower than `startDbfs`. */
  stopDbfs: number;
  /** The level must stay up this long before speech starts (ms). */
  startHoldMs: number;
  /** The level must stay down this long before speech stops (ms). */
  stopHoldMs: number;
  /** How often the level is read (ms). */
  sampleMs: number;
}

export const DEFAULT_VOICE_ACTIVITY: Readonly<VoiceActivityOptions> = Object.freeze({
  startDbfs: -45,
  stopDbfs: -52,
  startHoldMs: 150,
  stopHoldMs: 900,
  sampleMs: 50,
});

/** Where the levels come from: the RMS (linear, 0..1 full scale) of the latest window. */
export interface LevelSource {
  readRms(): number;
  /** Release the audio graph. Idempotent. */
  close(): void;
}

/** The silence floor of the meter and of `toDbfs` (digital silence has no logarithm). */
export const FLOOR_DBFS = -100;

export function toDbfs(rms: number): number {
  return rms > 0 ? Math.max(FLOOR_DBFS, 20 * Math.log10(rms)) : FLOOR_DBFS;
}

/** −60 dBFS → 0, 0 dBFS → 1 (a meter that moves for speech at a kiosk's distance). */
export function meterLevel(dbfs: number): number {
  return Math.min(1, Math.max(0, (dbfs + 60) / 60));
}

export class EnergyVoiceActivity implements VoiceActivityDetector {
  readonly #source: LevelSource;
  readonly #options: VoiceActivityOptions;
  readonly #clock: RendererClock;
  readonly #listeners = new Set<(value: boolean | null) => void>();
  #value: boolean | null = null;
  #level = 0;
  /** Since when the level has been on the other side of the threshold that would flip `value`. */
  #crossedSinceMs: number | null = null;
  #timer: unknown = null;
  #stopped = false;

  constructor(source: LevelSource, options: Partial<VoiceActivityOptions> = {}, clock: RendererClock = browserClock) {
    this.#source = source;
    this.#options = { ...DEFAULT_VOICE_ACTIVITY, ...options };
    if (this.#options.stopDbfs > this.#options.startDbfs) throw new RangeError('stopDbfs must not be above startDbfs');
    this.#clock = clock;
    this.#schedule();
  }

  get value(): boolean | null {
    return this.#value;
  }

  get level(): number {
    return this.#level;
  }

  onChange(listener: (value: boolean | null) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#source.close();
    this.#level = 0;
    this.#set(null);
    this.#listeners.clear();
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = null;
      if (this.#stopped) return;
      this.#sample();
      if (!this.#stopped) this.#schedule();
    }, this.#options.sampleMs);
  }

  #sample(): void {
    let rms: number;
    try {
      rms = this.#source.readRms();
    } catch {
      rms = 0; // a closed graph reads as silence, never as speech
    }
    const db = toDbfs(Number.isFinite(rms) ? Math.abs(rms) : 0);
    this.#level = meterLevel(db);
    const now = this.#clock.now();
    const speaking = this.#value === true;
    const crossing = speaking ? db < this.#options.stopDbfs : db >= this.#options.startDbfs;
    if (this.#value === null) this.#set(false);
    if (!crossing) {
      this.#crossedSinceMs = null;
      return;
    }
    this.#crossedSinceMs ??= now;
    const holdMs = speaking ? this.#options.stopHoldMs : this.#options.startHoldMs;
    if (now - this.#crossedSinceMs >= holdMs) {
      this.#crossedSinceMs = null;
      this.#set(!speaking);
    }
  }

  #set(value: boolean | null): void {
    if (this.#value === value) return;
    this.#value = value;
    for (const l of [...this.#listeners]) {
      try {
        l(value);
      } catch (err) {
        console.error('voice activity listener failed', err);
      }
    }
  }
}

/** The parts of WebAudio the level source uses (a fake stands in for it under Node). */
export interface AnalyserLike {
  fftSize: number;
  smoothingTimeConstant: number;
  getFloatTimeDomainData(array: Float32Array<ArrayBuffer>): void;
}
export interface AudioContextLike<A extends AnalyserLike = AnalyserLike> {
  createMediaStreamSource(stream: MediaStream): { connect(node: A): unknown; disconnect(): void };
  createAnalyser(): A;
  resume(): Promise<void>;
  close(): Promise<void>;
}

/**
 * RMS of an AnalyserNode's time-domain window over `stream` (the local microphone). The analyser is
 * never connected to the speakers. The stream's tracks stay the engine's: closing does not stop them.
 */
export function analyserLevelSource<A extends AnalyserLike>(stream: MediaStream, context: AudioContextLike<A>): LevelSource {
  const source = context.createMediaStreamSource(stream);
  const analyser = context.createAnalyser();
  analyser.fftSize = 2048;
  analyser.smoothingTimeConstant = 0;
  source.connect(analyser);
  void context.resume().catch(() => undefined);
  const samples = new Float32Array(new ArrayBuffer(analyser.fftSize * 4));
  let closed = false;
  return {
    readRms() {
      if (closed) return 0;
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const x of samples) sum += x * x;
      return Math.sqrt(sum / samples.length);
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        source.disconnect();
      } catch {
        /* already disconnected */
      }
      void context.close().catch(() => undefined);
    },
  };
}

/** A detector on the local microphone track (browser only). */
export function startVoiceActivity(track: MediaStreamTrack, options: Partial<VoiceActivityOptions> = {}, clock: RendererClock = browserClock): EnergyVoiceActivity {
  const source = analyserLevelSource<AnalyserNode>(new MediaStream([track]), new AudioContext());
  return new EnergyVoiceActivity(source, options, clock);
}
