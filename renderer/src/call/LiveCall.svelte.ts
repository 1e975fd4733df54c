/**
 * The RTC side of one call: picks the engine for the credentials main sends, joins it into the
 * persistent live view, and tears it down — whatever ended the call (hang-up, cancel, server hangup,
 * failure). Exposes the engine's state to the UI as runes. Main's session stays the source of truth for
 * the call itself; this class only owns media.
 */
import type { CallMilestone, CallMode, PublicConfig, RtcCredentials } from '../../../electron/contract.ts';
import { chooseEngine, createEngine } from '../rtc/choose-engine.ts';
import { RtcError, type EngineKind, type EngineState, type LiveView, type RemoteMediaProgress, type RtcEngine, type VisitorNotice } from '../rtc/engine.ts';
import { MediaPrefetch } from '../rtc/media-prefetch.ts';
import { DEMO_CAMERA_CONSTRAINTS, DEMO_MIC_CONSTRAINTS } from '../rtc/demo-engine.ts';
import { QualityHint, QualityReporter, type QualitySample } from '../rtc/quality.ts';

export interface LiveCallDeps {
  getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  /** A media/RTC failure that ends the call (device denied, join failed, channel lost). */
  onFailure: (error: RtcError) => void;
  onWarning: (message: string, notice?: VisitorNotice) => void;
  /** Our side of the call's channel is ready (joined, handler in place, microphone published): main may
   *  send conn_init now (RTC first, then billing). */
  onReady?: (liveId: string) => void;
  /** The call's connection figures, throttled (about every 2 s, and once more, `final`, when it ends). */
  onQuality?: (liveId: string, sample: QualitySample, final: boolean) => void;
  /** Clock for the quality hint and the reporting throttle (tests inject one). */
  now?: () => number;
  /** A field milestone of the call (the SDK's events), for main's field figures. */
  onMilestone?: (liveId: string, milestone: CallMilestone, durationMs?: number) => void;
  /** Makes the engine of a call (default `createEngine`; tests inject scripted engines). */
  makeEngine?: (kind: EngineKind, deps: Parameters<typeof createEngine>[1]) => RtcEngine;
}

/** A spare's channel that keeps losing its connection is joined again at most this often before the tap. */
export const MAX_PREJOIN_REPLACEMENTS = 3;

/** A spare session's channel, joined receive-only ahead of the tap. */
interface PreJoined {
  liveId: string;
  engine: RtcEngine;
  kind: EngineKind;
  joined: Promise<boolean>;
}

export class LiveCall {
  readonly #deps: LiveCallDeps;
  #engine: RtcEngine | null = null;
  #liveId: string | null = null;
  #view: LiveView | null = null;
  #muted = false;
  #outputId = '';
  /** The avatar's volume, 0–100 % (PublicConfig.avatarVolume and its events). */
  #avatarVolume = 100;
  #engineState = $state<EngineState>('idle');
  #engineKind = $state<EngineKind | null>(null);
  #autoplayBlocked = $state(false);
  #preJoined: PreJoined | null = null;
  /** How often a spare's pre-joined channel was replaced after losing its connection, by live id. */
  readonly #preJoinReplacements = new Map<string, number>();
  #poorQuality = $state(false);
  readonly #hint: QualityHint;
  #reporter: QualityReporter | null = null;

  readonly #makeEngine: NonNullable<LiveCallDeps['makeEngine']>;

  constructor(deps: LiveCallDeps) {
    this.#deps = deps;
    this.#makeEngine = deps.makeEngine ?? createEngine;
    this.#hint = new QualityHint(deps.now ?? Date.now);
    this.#media = new MediaPrefetch(deps.getUserMedia);
  }

  /** Fast start: the devices opened at the tap, handed to the engine that asks for them. */
  readonly #media: MediaPrefetch;

  /**
   * The visitor tapped: open the devices the call will ask for now, while main starts the session.
   * Only for the demo engine (its constraints are ours); the SDK engines open their own tracks.
   */
  prepare(mode: CallMode, config: PublicConfig): void {
    if (config.mode !== 'demo') return;
    this.#media.prefetch(mode === 'video' ? [DEMO_MIC_CONSTRAINTS, DEMO_CAMERA_CONSTRAINTS] : [DEMO_MIC_CONSTRAINTS]);
  }

  /** The connection has been poor for a few seconds (hysteresis: quality.ts): the live screen's calm hint. */
  get poorQuality(): boolean {
    return this.#poorQuality;
  }

  get engineState(): EngineState {
    return this.#engineState;
  }
  get engineKind(): EngineKind | null {
    return this.#engineKind;
  }
  get autoplayBlocked(): boolean {
    return this.#autoplayBlocked;
  }
  /** The avatar's media is rendering. */
  get isPlaying(): boolean {
    return this.#engineState === 'playing';
  }

  attachView(view: LiveView | null): void {
    this.#view = view;
  }

  /**
   * A spare session was created: join its channel receive-only now (no microphone, no camera, nothing
   * published), so the tap does not carry a whole channel join. Engines without a pre-join skip it.
   */
  preJoin(liveId: string, rtc: RtcCredentials, mode: CallMode, config: PublicConfig): void {
    if (this.#engine || this.#preJoined?.liveId === liveId) return; // a call runs, or already joined
    const view = this.#view;
    if (!view) return;
    void this.dropPreJoined(null);
    const kind = chooseEngine(rtc, config);
    const engine = this.#makeEngine(kind, { config, getUserMedia: this.#media.getUserMedia });
    if (!engine.prejoin) return;
    // Watch the spare's connection until the tap: a dead or recovering one is dropped and joined again
    // with a fresh client (bounded), so the tap never lands on it. The tap itself ignores this listener.
    const replacements = this.#preJoinReplacements.get(liveId) ?? 0;
    engine.onEvent((event) => {
      if (event.type !== 'prejoin-lost' || this.#preJoined?.engine !== engine) return;
      console.warn('RTC pre-join lost its connection; replacing it', event.reason);
      void this.dropPreJoined(liveId).then(() => {
        if (replacements >= MAX_PREJOIN_REPLACEMENTS || this.#engine) return; // the tap joins afresh
        this.#preJoinReplacements.set(liveId, replacements + 1);
        this.preJoin(liveId, rtc, mode, config);
      });
    });
    const joined = engine.prejoin(rtc, mode, view).then(
      () => true,
      (err: unknown) => {
        // Not the visitor's problem yet: the tap joins again (and reports a failure then).
        if (!(err instanceof RtcError && err.kind === 'cancelled')) console.warn('RTC pre-join failed', err instanceof Error ? err.message : String(err));
        return false;
      },
    );
    this.#preJoined = { liveId, engine, kind, joined };
    // Diagnostics (as the presence figures): which spare channel is joined ahead of the tap, and whether it worked.
    void joined.then((ok) => ((globalThis as { __rtcPreJoin?: unknown }).__rtcPreJoin = { liveId, joined: ok }));
  }

  /** The spare's channel is no longer wanted (the spare expired or failed): leave it. `null`: any. */
  async dropPreJoined(liveId: string | null): Promise<void> {
    const pre = this.#preJoined;
    if (!pre || (liveId !== null && pre.liveId !== liveId)) return;
    this.#preJoined = null;
    await pre.engine.leave().catch((err: unknown) => console.warn('RTC leave failed', err));
  }

  /** For tests and diagnostics: the live id whose channel is joined ahead of the tap, or null. */
  get preJoinedLiveId(): string | null {
    return this.#preJoined?.liveId ?? null;
  }

  /** Join the call for these credentials (once per liveId). */
  async begin(liveId: string, rtc: RtcCredentials, mode: CallMode, config: PublicConfig): Promise<void> {
    if (this.#liveId === liveId) return;
    await this.#leave(); // not end(): the devices opened at the tap are for this call
    const view = this.#view;
    if (!view) {
      this.#deps.onFailure(new RtcError('other', 'The live view is not ready.'));
      return;
    }
    // The tap took the spare whose channel is joined already: that engine opens the devices and publishes.
    const pre = this.#preJoined?.liveId === liveId ? this.#preJoined : null;
    if (pre) this.#preJoined = null;
    else void this.dropPreJoined(null); // another session's channel: leave it
    const kind = pre ? pre.kind : chooseEngine(rtc, config);
    const engine = pre ? pre.engine : this.#makeEngine(kind, { config, getUserMedia: this.#media.getUserMedia });
    this.#engine = engine;
    this.#liveId = liveId;
    this.#engineKind = kind;
    this.#engineState = 'joining';
    const onQuality = this.#deps.onQuality;
    this.#reporter = onQuality ? new QualityReporter(this.#deps.now ?? Date.now, (sample, final) => onQuality(liveId, sample, final)) : null;
    let readySent = false;
    const reportReady = (): void => {
      if (readySent || this.#engine !== engine) return;
      readySent = true;
      this.#deps.onReady?.(liveId);
    };
    engine.onEvent((event) => {
      if (this.#engine !== engine) return; // a finished call's late events
      switch (event.type) {
        case 'state':
          this.#engineState = event.state;
          break;
        case 'autoplay-blocked':
          this.#autoplayBlocked = true;
          break;
        case 'warning':
          this.#deps.onWarning(event.message, event.notice);
          break;
        case 'error':
          this.#deps.onFailure(event.error);
          break;
        case 'ready':
          reportReady();
          break;
        case 'milestone':
          this.#deps.onMilestone?.(liveId, event.milestone, event.durationMs);
          break;
        case 'quality':
          this.#poorQuality = this.#hint.sample(event.sample.level);
          this.#reporter?.sample(event.sample);
          break;
      }
    });
    if (this.#muted) await engine.setMuted(true);
    if (this.#outputId) await engine.setAudioOutput?.(this.#outputId).catch((err: unknown) => console.warn('audio output not set', err));
    engine.setAvatarVolume?.(this.#avatarVolume);
    try {
      await engine.join(rtc, mode, view);
      reportReady();
    } catch (err) {
      if (this.#engine !== engine) return; // ended meanwhile: the error is the cancellation
      const error = err instanceof RtcError ? err : new RtcError('rtc_join_failed', 'The call could not connect its audio and video.', { cause: err });
      if (error.kind === 'cancelled') return;
      console.warn('RTC join failed', error.kind, error.message);
      this.#deps.onFailure(error);
    }
  }

  /** Leave and release everything (a channel joined ahead of the tap stays: its spare decides). Idempotent. */
  async end(): Promise<void> {
    this.#media.release(); // fast start: devices opened at the tap that no engine took
    await this.#leave();
  }

  /** The page goes away: leave the call and any channel joined ahead of the tap. */
  async dispose(): Promise<void> {
    await Promise.all([this.end(), this.dropPreJoined(null)]);
  }

  async #leave(): Promise<void> {
    const engine = this.#engine;
    this.#engine = null;
    this.#liveId = null;
    this.#engineKind = null;
    this.#engineState = 'idle';
    this.#autoplayBlocked = false;
    this.#reporter?.flush(); // the call's final figures, for the staff Status tab and /metrics
    this.#reporter = null;
    this.#hint.reset();
    this.#poorQuality = false;
    if (engine) {
      try {
        await engine.leave();
      } catch (err) {
        console.warn('RTC leave failed', err);
      }
    }
    this.#view?.clear();
  }

  /** How loud the avatar speaks now, 0..1 (null: this engine cannot say). */
  avatarAudioLevel(): number | null {
    const engine = this.#engine;
    return engine?.avatarAudioLevel ? engine.avatarAudioLevel() : null;
  }

  /** Private listening: play the avatar's voice on this output ('' = the default), now and in later calls. */
  async setAudioOutput(deviceId: string): Promise<void> {
    this.#outputId = deviceId;
    await this.#engine?.setAudioOutput?.(deviceId).catch((err: unknown) => console.warn('audio output not set', err));
  }

  /** The avatar's volume (0–100 %), now and in later calls. */
  setAvatarVolume(percent: number): void {
    this.#avatarVolume = percent;
    this.#engine?.setAvatarVolume?.(percent);
  }

  async setMuted(muted: boolean): Promise<void> {
    this.#muted = muted;
    await this.#engine?.setMuted(muted).catch((err: unknown) => console.warn('mute failed', err));
  }

  // The media watchdog (MediaWatch.svelte.ts).
  /** The engine's counters of the avatar's media (null before its tracks exist or without a call). */
  remoteMediaProgress(): RemoteMediaProgress | null {
    return this.#engine?.remoteMediaProgress() ?? null;
  }

  async resubscribeRemote(): Promise<void> {
    await this.#engine?.resubscribeRemote();
  }

  // The visitor's own tracks, for the idle hang-up (voice activity, presence).
  /** The visitor's local microphone track (never the avatar's), when the engine exposes it. */
  get localAudioTrack(): MediaStreamTrack | null {
    return this.#engine?.localAudioTrack?.() ?? null;
  }

  get localVideoTrack(): MediaStreamTrack | null {
    return this.#engine?.localVideoTrack?.() ?? null;
  }

  /** The visitor tapped "tap to hear": retry playback inside the gesture. */
  resumePlayback(): void {
    this.#autoplayBlocked = false;
    this.#engine?.resumePlayback();
  }
}
