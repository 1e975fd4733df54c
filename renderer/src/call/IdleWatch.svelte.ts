/**
 * Idle / abandonment hang-up: credits are money, so a call nobody is using ends itself.
 *
 * While a call is live the watch follows two signals: the visitor's voice activity (the local, echo-
 * cancelled microphone; see sensing/voice-activity.ts) and, in video mode when the lead plugs one in,
 * presence in front of the camera. With neither for `promptSeconds`, it shows "Are you still there?"
 * with a countdown; `hangupSeconds` later it calls `onExpire` (the app hangs up with cause `idle`).
 * Speech, presence or a touch (`touch()`) cancels the prompt and restarts the wait.
 *
 * Phases: off → watching ⇄ prompting → expired (→ off on stop). Timers run on an injected clock;
 * `stop()` leaves none pending and releases the signals' subscriptions (the caller owns the detectors).
 */
import type { CallMode } from '../../../electron/contract.ts';
import type { Signal } from '../sensing/types.ts';
import { browserClock, type RendererClock } from '../sensing/clock.ts';

export type IdlePhase = 'off' | 'watching' | 'prompting' | 'expired';

export interface IdleSettings {
  /** Seconds without speech or presence before the prompt. */
  promptSeconds: number;
  /** Seconds the prompt counts down before the call is hung up. */
  hangupSeconds: number;
}

export const DEFAULT_IDLE: Readonly<IdleSettings> = Object.freeze({ promptSeconds: 45, hangupSeconds: 15 });

export interface IdleWatchDeps {
  /** The prompt ran out: hang the call up (cause `idle`). Called once per `start()`. */
  onExpire: () => void;
  clock?: RendererClock;
}

export interface IdleStart {
  settings: IdleSettings;
  mode: CallMode;
  /** The visitor's voice activity, or null until the microphone is measured (`attachVoice`). */
  voice?: Signal | null;
  /** Presence in front of the camera (a `PresenceDetector`; counts in video mode only); optional. */
  presence?: Signal | null;
}

const COUNTDOWN_TICK_MS = 1_000;

export class IdleWatch {
  readonly #deps: IdleWatchDeps;
  readonly #clock: RendererClock;
  #phase = $state<IdlePhase>('off');
  #promptEndsAtMs = $state<number | null>(null);
  #now = $state(0);
  #settings: IdleSettings = DEFAULT_IDLE;
  #mode: CallMode = 'video';
  #voice: Signal | null = null;
  #presence: Signal | null = null;
  #offVoice: (() => void) | null = null;
  #offPresence: (() => void) | null = null;
  #timer: unknown = null;
  #ticker: unknown = null;
  /** The last call this watch hung up (until the next `start()` / `reset()`). */
  #expired = $state(false);
  /** `isActive` as of the last signal change (reactive, for the screen and tests). */
  #activeNow = $state(false);

  constructor(deps: IdleWatchDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? browserClock;
    this.#now = this.#clock.now();
  }

  get phase(): IdlePhase {
    return this.#phase;
  }
  get isRunning(): boolean {
    return this.#phase === 'watching' || this.#phase === 'prompting';
  }
  get isPrompting(): boolean {
    return this.#phase === 'prompting';
  }
  /** Whole seconds left on the prompt's countdown (null when not prompting). */
  get promptLeftS(): number | null {
    if (this.#phase !== 'prompting' || this.#promptEndsAtMs === null) return null;
    return Math.max(0, Math.ceil((this.#promptEndsAtMs - this.#now) / 1000));
  }
  get hangupSeconds(): number {
    return this.#settings.hangupSeconds;
  }
  /** The watch ended the last call (the ended screen says why). */
  get endedCall(): boolean {
    return this.#expired;
  }

  /** Reactive view of `isActive` (updated on every signal change). */
  get someoneActive(): boolean {
    return this.#activeNow;
  }

  /** Someone is there: speech, or (video mode) a person in front of the camera. */
  get isActive(): boolean {
    return this.#voice?.value === true || (this.#mode === 'video' && this.#presence?.value === true);
  }

  /** Begin watching a live call. Restarts cleanly if already running. */
  start(options: IdleStart): void {
    this.stop();
    this.#expired = false;
    this.#settings = sanitize(options.settings);
    this.#mode = options.mode;
    this.#phase = 'watching';
    this.attachVoice(options.voice ?? null);
    this.attachPresence(options.presence ?? null);
    this.#restart();
  }

  /** Plug in (or replace) the voice signal once the microphone is measured. */
  attachVoice(voice: Signal | null): void {
    this.#offVoice?.();
    this.#voice = voice;
    this.#offVoice = voice ? voice.onChange(() => this.#onSignal()) : null;
    if (this.isRunning) this.#onSignal();
  }

  /** Plug in (or replace) the presence signal (counts in video mode only). */
  attachPresence(presence: Signal | null): void {
    this.#offPresence?.();
    this.#presence = presence;
    this.#offPresence = presence ? presence.onChange(() => this.#onSignal()) : null;
    if (this.isRunning) this.#onSignal();
  }

  /** A touch (or "Keep talking"): cancel the prompt and wait the whole `promptSeconds` again. */
  touch(): void {
    if (!this.isRunning) return;
    this.#restart();
  }

  /** The call ended: stop every timer, drop the subscriptions. Keeps `endedCall`. Idempotent. */
  stop(): void {
    this.#clearTimers();
    this.#offVoice?.();
    this.#offPresence?.();
    this.#offVoice = this.#offPresence = null;
    this.#voice = this.#presence = null;
    this.#promptEndsAtMs = null;
    this.#phase = 'off';
    this.#activeNow = false;
  }

  /** A new call is starting: forget that the last one ended by idleness. */
  reset(): void {
    this.stop();
    this.#expired = false;
  }

  // -------------------------------------------------------------------------------------------------

  #onSignal(): void {
    if (!this.isRunning) return;
    this.#activeNow = this.isActive;
    if (this.#activeNow) {
      // Someone is there: no countdown at all while it lasts (the wait starts when it ends).
      this.#clearTimers();
      this.#promptEndsAtMs = null;
      this.#phase = 'watching';
    } else if (this.#timer === null) {
      this.#restart();
    }
  }

  /** Back to watching, with a fresh `promptSeconds` wait unless someone is active right now. */
  #restart(): void {
    this.#clearTimers();
    this.#promptEndsAtMs = null;
    this.#phase = 'watching';
    this.#now = this.#clock.now();
    if (this.isActive) return;
    this.#timer = this.#clock.setTimeout(() => this.#prompt(), this.#settings.promptSeconds * 1000);
  }

  #prompt(): void {
    this.#timer = null;
    if (this.#phase !== 'watching') return;
    this.#phase = 'prompting';
    this.#now = this.#clock.now();
    this.#promptEndsAtMs = this.#now + this.#settings.hangupSeconds * 1000;
    this.#timer = this.#clock.setTimeout(() => this.#expire(), this.#settings.hangupSeconds * 1000);
    this.#tick();
  }

  /** Refresh the countdown once a second while prompting. */
  #tick(): void {
    this.#ticker = this.#clock.setTimeout(() => {
      this.#ticker = null;
      if (this.#phase !== 'prompting') return;
      this.#now = this.#clock.now();
      this.#tick();
    }, COUNTDOWN_TICK_MS);
  }

  #expire(): void {
    this.#timer = null;
    if (this.#phase !== 'prompting') return;
    this.#clearTimers();
    this.#phase = 'expired';
    this.#now = this.#clock.now();
    this.#expired = true;
    try {
      this.#deps.onExpire();
    } catch (err) {
      console.error('idle hang-up failed', err);
    }
  }

  #clearTimers(): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    if (this.#ticker !== null) this.#clock.clearTimeout(this.#ticker);
    this.#timer = this.#ticker = null;
  }
}

/** Never a zero or negative wait (a bad config must not hang up a call the moment it starts). */
function sanitize(s: IdleSettings): IdleSettings {
  const positive = (v: number, fallback: number): number => (Number.isFinite(v) && v >= 1 ? v : fallback);
  return { promptSeconds: positive(s.promptSeconds, DEFAULT_IDLE.promptSeconds), hangupSeconds: positive(s.hangupSeconds, DEFAULT_IDLE.hangupSeconds) };
}
