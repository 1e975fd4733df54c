/**
 * The attract screen's side of fast start: while the attract screen shows (and no session is in
 * flight), runs the camera presence detector when the configuration allows the camera, greets whoever
 * approaches, and reports `attract.report({showing, present})` to main, which creates the spare session.
 * Leaving attract stops the camera (the call's own capture takes over) and reports `showing: false`.
 *
 * It also decides when the attract screen's endless animations may rest (`isCalm`): with the camera,
 * once nobody has been there for a few seconds; without it, between short invitations.
 */
import type { KioskApi, PublicConfig } from '../../../electron/contract.ts';
import type { PresenceDetector } from '../sensing/types.ts';
import { CameraPresenceDetector, type PresenceStats } from '../sensing/presence.ts';
import type { BackgroundModel } from '../sensing/presence-core.ts';
import { warmEngine } from '../rtc/choose-engine.ts';

/** "Nobody" for the greeting after this long without anyone in the middle (main applies its own 20 s to the spare). */
export const GREETING_NOBODY_MS = 4_000;
/** With the camera: animations rest once nobody has been there this long. */
export const CALM_AFTER_NOBODY_MS = 8_000;
/** Without the camera: animations invite for this long after the screen shows or is touched… */
export const INVITE_MS = 10_000;
/** …then rest, and invite again briefly every this long. */
export const INVITE_EVERY_MS = 60_000;
export const INVITE_AGAIN_MS = 6_000;
/** Someone who stays in front this long has approached (the visitor funnel's second step). */
export const APPROACHED_MS = 3_000;

export interface StartableDetector extends PresenceDetector {
  start(): Promise<void>;
  readonly stats?: PresenceStats;
}

export interface AttractPresenceDeps {
  kiosk: KioskApi | null;
  /** Is the attract screen showing with no session in flight? Read inside an effect (reactive). */
  showing: () => boolean;
  config: () => PublicConfig | null;
  createDetector: (onError: (error: unknown) => void) => StartableDetector;
}

export class AttractPresence {
  readonly #deps: AttractPresenceDeps;
  #present = $state<boolean | null>(null);
  #cameraOn = $state(false);
  #calm = $state(false);
  #showing = false;
  #detector: StartableDetector | null = null;
  #offDetector: (() => void) | null = null;
  #calmTimer: ReturnType<typeof setTimeout> | null = null;
  #approachTimer: ReturnType<typeof setTimeout> | null = null;
  #lastReport = '';

  constructor(deps: AttractPresenceDeps) {
    this.#deps = deps;
  }

  /** Someone is in front of the kiosk: greet them. */
  get isGreeting(): boolean {
    return this.#present === true;
  }
  /** The camera is in use to notice visitors (the attract screen says so). */
  get isCameraOn(): boolean {
    return this.#cameraOn;
  }
  /** The attract screen's animations may rest. */
  get isCalm(): boolean {
    return this.#calm;
  }

  /** Follows the attract screen; returns the disposer (stops the camera). */
  start(): () => void {
    const stopRoot = $effect.root(() => {
      $effect(() => {
        const showing = this.#deps.showing();
        const config = this.#deps.config();
        const cameraEnabled = config?.presence?.cameraEnabled ?? false;
        queueMicrotask(() => {
          // The next call's engine loads while the visitor walks up (not on the tap).
          if (showing && !this.#showing && config) warmEngine(config);
          this.#apply(showing, cameraEnabled);
        });
      });
    });
    return () => {
      stopRoot();
      this.#apply(false, false);
    };
  }

  /** A touch or key on the attract screen: invite again (animations run). */
  poke(): void {
    if (!this.#showing) return;
    this.#setCalm(false);
    this.#scheduleCalm();
  }

  #apply(showing: boolean, cameraEnabled: boolean): void {
    if (showing === this.#showing && (!showing || cameraEnabled === !!this.#detector)) return;
    this.#showing = showing;
    this.#stopDetector();
    if (!showing) {
      this.#clearCalmTimer();
      this.#setCalm(false);
      this.#report(false, null);
      return;
    }
    this.#setCalm(false);
    // With the camera on, "nobody noticed yet" until its first frames say otherwise: `null` would tell main
    // there is no camera at all (and in on-approach mode it then pre-warms at once).
    if (cameraEnabled) this.#startDetector();
    this.#report(true, cameraEnabled && this.#cameraOn ? false : null);
    this.#scheduleCalm();
  }

  #startDetector(): void {
    const detector = this.#deps.createDetector(() => {
      if (this.#detector !== detector) return;
      // No camera, or it was refused: carry on without presence (main treats null as "unknown").
      this.#cameraOn = false;
      this.#onPresence(null);
    });
    this.#detector = detector;
    this.#offDetector = detector.onChange((value) => this.#onPresence(value));
    this.#cameraOn = true;
    if (detector.stats) (globalThis as { __presenceStats?: PresenceStats }).__presenceStats = detector.stats;
    void detector.start();
  }

  #stopDetector(): void {
    this.#clearApproachTimer();
    this.#offDetector?.();
    this.#offDetector = null;
    this.#detector?.stop();
    this.#detector = null;
    this.#cameraOn = false;
    this.#present = null;
  }

  #onPresence(value: boolean | null): void {
    if (!this.#showing) return;
    const arrived = value === true && this.#present !== true;
    this.#present = value;
    this.#countSteps(arrived);
    this.#report(true, value);
    if (value) this.#setCalm(false);
    this.#scheduleCalm();
  }

  #report(showing: boolean, present: boolean | null): void {
    const key = `${showing}:${present}`;
    if (key === this.#lastReport) return;
    this.#lastReport = key;
    void this.#deps.kiosk?.attract?.report({ showing, present });
  }

  // --- the visitor funnel: the step's name only, nothing about the person (main counts and limits them)

  #countSteps(arrived: boolean): void {
    if (!arrived) {
      if (this.#present !== true) this.#clearApproachTimer();
      return;
    }
    // The greeting shows the moment someone is noticed (isGreeting), so both are said together.
    this.#step('noticed');
    this.#step('greeted');
    this.#clearApproachTimer();
    this.#approachTimer = setTimeout(() => {
      this.#approachTimer = null;
      if (this.#showing && this.#present === true) this.#step('approached');
    }, APPROACHED_MS);
  }

  #step(step: 'noticed' | 'approached' | 'greeted'): void {
    void this.#deps.kiosk?.attract?.visitorStep?.({ step });
  }

  #clearApproachTimer(): void {
    if (this.#approachTimer) clearTimeout(this.#approachTimer);
    this.#approachTimer = null;
  }

  // --- animations at rest ---------------------------------------------------------------------------

  #scheduleCalm(): void {
    this.#clearCalmTimer();
    if (!this.#showing) return;
    if (this.#cameraOn) {
      // Someone there: keep inviting. Nobody (or not known yet): rest after a while.
      if (this.#present === true) return;
      this.#calmTimer = setTimeout(() => this.#setCalm(true), CALM_AFTER_NOBODY_MS);
      return;
    }
    // No camera: invite, rest, invite briefly again, forever.
    const cycle = (inviteMs: number) => {
      this.#setCalm(false);
      this.#calmTimer = setTimeout(() => {
        this.#setCalm(true);
        this.#calmTimer = setTimeout(() => cycle(INVITE_AGAIN_MS), INVITE_EVERY_MS - INVITE_AGAIN_MS);
      }, inviteMs);
    };
    cycle(INVITE_MS);
  }

  #clearCalmTimer(): void {
    if (this.#calmTimer) clearTimeout(this.#calmTimer);
    this.#calmTimer = null;
  }

  #setCalm(calm: boolean): void {
    if (this.#calm !== calm) this.#calm = calm;
  }
}

/**
 * The room as the attract screen's camera learned it (nobody there). One model for the kiosk's life: each
 * attract screen continues it, and a video call's presence check (idle hang-up) starts from it, so the
 * visitor in front of the call's camera is foreground from the first frame, not part of the room.
 */
export const room: { model: BackgroundModel | null } = { model: null };

/** The real detector: the camera, read at 5 fps. */
export function cameraDetectorFactory(getUserMedia: (c: MediaStreamConstraints) => Promise<MediaStream>) {
  return (onError: (error: unknown) => void): StartableDetector => {
    const detector = new CameraPresenceDetector({ getUserMedia, timing: { nobodyMs: GREETING_NOBODY_MS }, onError, ...(room.model ? { model: room.model } : {}) });
    room.model = detector.model;
    return detector;
  };
}

/** Presence during a video call, read from the call's own camera track, starting from the attract
 *  screen's room model. Null when there is no such model (camera off on attract) or no camera track:
 *  the idle hang-up then goes by voice alone. */
export function callPresenceDetector(track: MediaStreamTrack | null): CameraPresenceDetector | null {
  if (!room.model || !track || track.readyState !== 'live') return null;
  const detector = new CameraPresenceDetector({ stream: new MediaStream([track]), model: room.model });
  void detector.start();
  return detector;
}
