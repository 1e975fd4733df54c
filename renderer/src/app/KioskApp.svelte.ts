/**
 * The kiosk's UI state: which screen shows, derived from main's SessionState (the source of truth) plus
 * the few things only the renderer knows (the visitor cancelled, dismissed an end screen, or hit a media
 * failure before main answered). Components read getters and call the action methods; they hold no logic.
 *
 * Screens: boot → attract → connecting → live → ended | error → attract (by itself after
 * `returnToAttractSeconds`, or "Done").
 */
import { AgeGate } from '../safety/AgeGate.svelte.ts';
import type { CallMode, ErrorInfo, KioskApi, KioskEvent, HoldReason, OpeningInfo, PublicConfig, SessionState, SessionSummary } from '../../../electron/contract.ts';
import type { RtcError, VisitorNotice } from '../rtc/engine.ts';
import { errorViewFor, errorViewForMedia, causeForHangupReason, type ErrorView } from './error-copy.ts';
import { LiveCall } from '../call/LiveCall.svelte.ts';
import { IdleWatch, DEFAULT_IDLE } from '../call/IdleWatch.svelte.ts';
import { MediaWatch } from '../call/MediaWatch.svelte.ts';
import { openCallVoice, type CallVoice } from '../sensing/call-voice.ts';
import type { Signal } from '../sensing/types.ts';
import { Cast } from '../attract/Cast.svelte.ts';
import { Companion } from '../companion/Companion.svelte.ts';
import { orderSteps, type ConnectingStep } from '../call/connecting-steps.ts';
import { Visitor } from './Visitor.svelte.ts';
import { AudioOutput } from '../call/AudioOutput.svelte.ts';
import { t, th } from '../i18n/locale.svelte.ts';
import { callPresenceDetector } from '../attract/AttractPresence.svelte.ts'; // the idle hang-up sees presence from the attract screen's room model

export type Screen = 'boot' | 'attract' | 'connecting' | 'live' | 'ended' | 'error';

const TICK_MS = 250;
const WARNING_SHOW_MS = 10_000;
/** Fast start: the attract screen stays this long after a tap, so a session that goes live at
 *  once (a warmed spare) never flashes the connecting screen. */
export const CONNECTING_SCREEN_DELAY_MS = 400;

export class KioskApp {
  readonly call: LiveCall;
  readonly #kiosk: KioskApi | null;
  #config = $state<PublicConfig | null>(null);
  #session = $state<SessionState>({ phase: 'idle' });
  /** The session state is our own guess (start pressed, no event yet). */
  #optimistic = false;
  #mode = $state<CallMode>('video');
  #muted = $state(false);
  #dismissed = $state(false);
  #cancelling = $state(false);
  #starting = $state(false);
  #localError = $state<ErrorView | null>(null);
  #bootError = $state<ErrorView | null>(null);
  #now = $state(Date.now());
  #terminalSinceMs = $state<number | null>(null);
  #warning = $state<{ notice: VisitorNotice; untilMs: number } | null>(null);
  /** Opening hours: null (or open) lets calls start; closed shows the closed screen instead of attract. */
  #opening = $state<OpeningInfo | null>(null);
  /** Calls held for a moment (an update is being installed): the calm "back in a moment" screen shows. */
  #hold = $state<HoldReason | null>(null);
  /** Whether the service answers: while it does not, a calm out-of-order screen instead of the attract screen. */
  #service = $state<PublicConfig['service'] | null>(null);
  #timer: ReturnType<typeof setInterval> | null = null;
  #unsubscribe: (() => void) | null = null;
  readonly #getUserMedia: (c: MediaStreamConstraints) => Promise<MediaStream>; // the idle hang-up's own microphone where the engine captures natively
  // --- cast and companion ---
  /** The avatars to pick from; `config` below is main's with the selected one as `avatar`. */
  readonly cast = new Cast(() => this.#config, (mode) => (this.#mode = mode));
  /** Tray/shortcut commands and push-to-talk. */
  readonly companion = new Companion(this);
  /** The visitor's language and accessibility mode (back to the defaults after each visitor). */
  readonly visitor = new Visitor();
  /** Private listening: the output staff routed the avatar's voice to. */
  readonly audioOutput: AudioOutput;
  // --- fast start: after a tap, attract holds for CONNECTING_SCREEN_DELAY_MS ---
  #holdConnecting = $state(false);
  #holdTimer: ReturnType<typeof setTimeout> | null = null;

  /** The age gate before each call on an adult kiosk (safety/AgeGate.svelte.ts). */
  readonly ageGate: AgeGate = new AgeGate({ kiosk: () => this.#kiosk, onPassed: () => void this.startCall() });

  constructor(kiosk: KioskApi | null, getUserMedia: (c: MediaStreamConstraints) => Promise<MediaStream>) {
    this.#kiosk = kiosk;
    this.#getUserMedia = getUserMedia;
    this.call = new LiveCall({
      getUserMedia,
      onFailure: (error) => this.#onMediaFailure(error),
      onWarning: (message, notice) => this.#showWarning(message, notice),
      // RTC first, then billing: main sends conn_init once our side of the channel is ready.
      onReady: (liveId) => void this.#kiosk?.session.rtcReady({ liveId }),
      onQuality: (liveId, sample, final) => void this.#kiosk?.session.reportQuality({ liveId, ...sample, ...(final ? { final: true } : {}) }),
      onMilestone: (liveId, milestone, durationMs) =>
        void this.#kiosk?.session
          .reportMilestone({ liveId, milestone, ...(durationMs !== undefined ? { durationMs: Math.min(600_000, Math.max(0, Math.round(durationMs))) } : {}) })
          .catch((err: unknown) => console.warn('milestone not reported', err)),
    });
    this.audioOutput = new AudioOutput({
      devices: typeof navigator !== 'undefined' && navigator.mediaDevices ? navigator.mediaDevices : null,
      storage: typeof localStorage !== 'undefined' ? localStorage : null,
      apply: (id) => this.call.setAudioOutput(id),
    });
  }

  // -------------------------------------------------------------------------------------------------
  // Lifecycle

  /** Subscribe to main, load the config, start the clock. Returns the disposer. */
  start(): () => void {
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    const stopOutputs = this.audioOutput.start();
    if (!this.#kiosk) {
      this.#bootError = {
        cause: 'generic',
        copy: 'noBridge',
        title: 'This screen only works in the kiosk app',
        body: 'It was opened outside the kiosk app, so it cannot start a conversation.',
        code: 'no_bridge',
      };
    } else {
      this.#unsubscribe = this.#kiosk.session.onEvent((event) => this.#onEvent(event));
      void this.#boot();
    }
    return () => {
      stopOutputs();
      if (this.#timer) clearInterval(this.#timer);
      this.#stopIdle();
      this.media.stop();
      if (this.#holdTimer) clearTimeout(this.#holdTimer);
      this.#unsubscribe?.();
      void this.call.dispose();
    };
  }

  async #boot(): Promise<void> {
    const kiosk = this.#kiosk!;
    const config = await kiosk.config.get();
    if (!config.ok) {
      this.#bootError = errorViewFor(config.error);
      return;
    }
    this.#bootError = null;
    this.#config = config.value;
    this.#opening = config.value.opening ?? null;
    this.#hold = config.value.hold ?? null;
    this.call.setAvatarVolume(config.value.avatarVolume ?? 100);
    // An event heard while the answer was on its way is newer than the answer.
    this.#service ??= config.value.service ?? null;
    this.#mode = config.value.callMode;
    this.visitor.reset(config.value);
    this.cast.reset(); // the first avatar, with its call mode
    const state = await kiosk.session.getState();
    if (state.ok && !this.#optimistic) {
      this.#session = state.value;
      // A reload in the middle of a call has no credentials to rejoin with: end it, don't leave it billing.
      if (isActive(state.value.phase)) {
        this.#cancelling = true;
        void kiosk.session.hangup();
      } else if (state.value.phase === 'ended' || state.value.phase === 'failed') {
        this.#dismissed = true;
      }
    }
  }

  // -------------------------------------------------------------------------------------------------
  // What the screens read

  get config(): PublicConfig | null {
    return this.cast.effectiveConfig; // main's config, with the selected avatar
  }
  get session(): SessionState {
    return this.#session;
  }
  get mode(): CallMode {
    return this.#mode;
  }
  get muted(): boolean {
    return this.#muted;
  }
  get isStarting(): boolean {
    return this.#starting || this.#holdConnecting;
  }
  get avatarName(): string {
    return this.config?.avatar.name ?? '';
  }
  get isDemo(): boolean {
    return this.#config?.mode === 'demo';
  }
  /** The notice a visitor sees over the live call (translated by the view), while it lasts. */
  get warning(): VisitorNotice | null {
    return this.#warning && this.#warning.untilMs > this.#now ? this.#warning.notice : null;
  }

  get screen(): Screen {
    if (this.#bootError) return 'error';
    if (!this.#config) return 'boot';
    // A dismissed end screen stays dismissed until the next start (which resets the flag).
    if (this.#dismissed) return 'attract';
    if (this.#localError) return 'error';
    const s = this.#session;
    switch (s.phase) {
      case 'idle':
      case 'held': // a spare is the next visitor's, never shown (the orchestrator shows its tap as creating)
        return 'attract';
      case 'creating':
      case 'connecting':
      case 'warming':
        return this.#cancelling || this.#holdConnecting ? 'attract' : 'connecting';
      case 'live':
      case 'reconnecting':
        return this.#cancelling ? 'attract' : 'live';
      case 'ending':
        if (this.#cancelling) return 'attract';
        return causeForHangupReason(s.reason) ? 'error' : 'ended';
      case 'ended':
        if (this.#cancelling) return 'attract';
        // Nothing to show for a call that never went live and that the visitor did not cancel? It still
        // ended for a reason the visitor should see (e.g. the server closed it while warming up).
        return s.summary.hangupReason && causeForHangupReason(s.summary.hangupReason) ? 'error' : 'ended';
      case 'failed':
        if (this.#cancelling && s.error.code === 'cancelled') return 'attract';
        return 'error';
    }
  }

  /** The error screen's content. */
  get error(): ErrorView | null {
    if (this.#bootError) return this.#bootError;
    if (this.#localError) return this.#localError;
    const s = this.#session;
    if (s.phase === 'failed') return errorViewFor(s.error, s.summary?.hangupReason);
    if (s.phase === 'ended' && s.summary.hangupReason) {
      return errorViewFor({ code: 'internal', message: '' } satisfies ErrorInfo, s.summary.hangupReason);
    }
    if (s.phase === 'ending') return errorViewFor({ code: 'internal', message: '' }, s.reason);
    return null;
  }

  /** The finished call's figures (ended screen; also shown small on an error screen when known). */
  get summary(): SessionSummary | null {
    const s = this.#session;
    if (s.phase === 'ended') return s.summary;
    if (s.phase === 'failed') return s.summary;
    return null;
  }

  /** The ended screen waits for the figures while main is still `ending`. */
  get isWrappingUp(): boolean {
    return this.#session.phase === 'ending';
  }

  /** Seconds left before an end screen returns to attract by itself (null when not counting). */
  get returnInS(): number | null {
    if (this.#terminalSinceMs === null) return null;
    const left = this.returnTotalS - (this.#now - this.#terminalSinceMs) / 1000;
    return Math.max(0, Math.ceil(left));
  }

  /** How long an end screen stays (the config's value; 10 s while the config itself is unavailable). */
  get returnTotalS(): number {
    return (this.#config?.returnToAttractSeconds ?? 10) * this.visitor.timeFactor;
  }

  get connectingSteps(): ConnectingStep[] {
    const s = this.#session;
    const created = s.phase !== 'creating' && s.phase !== 'idle';
    const live = s.phase === 'live' || s.phase === 'reconnecting';
    const name = this.avatarName || th('common.digitalHost');
    const warm: ConnectingStep = {
      id: 'warm',
      label: th('connecting.waking', { name }),
      status: live ? 'done' : created ? 'active' : 'pending',
      detail: null,
    };
    // A calm "getting ready": the warm-up's retries, waits and attempts are staff's business (the log, the
    // ledger), never a visitor's count to watch.
    if (s.phase === 'warming') warm.label = th('connecting.gettingReady', { name });
    const engine = this.call.engineState;
    const joinDone = engine === 'waiting' || engine === 'playing' || engine === 'reconnecting';
    return orderSteps([
      { id: 'create', label: t('connecting.create'), status: created ? 'done' : 'active', detail: null },
      warm,
      {
        id: 'join',
        label: t('connecting.join'),
        status: joinDone ? 'done' : engine === 'joining' ? 'active' : 'pending',
        detail: engine === 'joining' ? (this.#mode === 'video' ? t('connecting.micCamera') : t('connecting.mic')) : null,
      },
    ]);
  }

  get isReconnecting(): boolean {
    return this.#session.phase === 'reconnecting' || this.call.engineState === 'reconnecting';
  }

  /** Seconds left in the call (live_duration), null before live. */
  get remainingS(): number | null {
    const s = this.#session;
    if (s.phase !== 'live' && s.phase !== 'reconnecting') return null;
    return Math.max(0, Math.ceil((s.endsAtMs - this.#now) / 1000));
  }

  get isCountdownWarning(): boolean {
    const left = this.remainingS;
    return left !== null && !!this.#config && left <= this.#config.countdownWarningSeconds;
  }

  // -------------------------------------------------------------------------------------------------
  // Actions

  setMode(mode: CallMode): void {
    if (this.#config?.allowModeChoice) this.#mode = mode;
  }

  /** Outside the opening hours (main refuses calls then too). */
  get isClosed(): boolean {
    return this.#opening?.open === false;
  }

  /** New calls wait (main refuses them too) until the app has restarted. */
  get isHeld(): boolean {
    return this.#hold !== null;
  }

  /** The service cannot be reached (or is misconfigured): a tap would only fail, so none is offered. */
  get isServiceDown(): boolean {
    return this.#service?.ok === false;
  }

  /** The opening hours as main last said them (null: none set). */
  get opening(): OpeningInfo | null {
    return this.#opening;
  }

  async startCall(): Promise<void> {
    const kiosk = this.#kiosk;
    if (!kiosk || this.#starting || this.#holdConnecting || this.screen !== 'attract' || this.isClosed || this.isServiceDown) return;
    // An adult kiosk: the age gate first (its "yes" comes back here with a pass); main refuses without one.
    if (this.#config?.safety?.audience === 'adult' && !this.ageGate.takePass()) return void this.ageGate.open();
    this.#starting = true;
    // Fast start: attract stays a moment (a warmed spare goes live at once), and the devices open now.
    this.#holdConnecting = true;
    this.#holdTimer = setTimeout(() => (this.#holdConnecting = false), CONNECTING_SCREEN_DELAY_MS);
    if (this.#config) this.call.prepare(this.#mode, this.#config);
    this.#dismissed = false;
    this.#cancelling = false;
    this.#localError = null;
    this.#terminalSinceMs = null;
    this.#warning = null;
    this.idle.reset();
    this.media.reset();
    this.#session = { phase: 'creating' };
    this.#optimistic = true;
    try {
      const res = await kiosk.session.start({ callMode: this.#mode, ...this.cast.startArgs, language: this.visitor.language });
      if (!res.ok) {
        void this.call.end(); // fast start: release the devices opened at the tap
        if (this.#optimistic) this.#session = { phase: 'idle' };
        this.#localError = errorViewFor(res.error);
      }
    } finally {
      this.#optimistic = false;
      this.#starting = false;
    }
  }

  /** Cancel while connecting: back to attract at once; main hangs up (nothing left billing). */
  async cancel(): Promise<void> {
    this.#cancelling = true;
    await Promise.all([this.call.end(), this.#kiosk?.session.hangup()]);
  }

  /** Hang up a live call (spec §6 rule 7: main sends type 5 and closes; we leave the channel). */
  async hangUp(): Promise<void> {
    await Promise.all([this.#kiosk?.session.hangup(), this.call.end()]);
  }

  async toggleMute(): Promise<void> {
    const muted = !this.#muted;
    this.#muted = muted; // optimistic; main echoes a `muted` event
    await this.call.setMuted(muted);
    await this.#kiosk?.session.setMuted({ muted });
  }

  /** "Done" on an end screen, or its countdown ran out. */
  dismiss(): void {
    if (this.#bootError) {
      // Nothing to go back to: try again (without a bridge, reload — someone may have fixed the setup).
      this.#terminalSinceMs = null;
      if (this.#kiosk) void this.#boot();
      else location.reload();
      return;
    }
    this.#dismissed = true;
    this.#localError = null;
    this.#terminalSinceMs = null;
    this.visitor.reset(this.#config); // the next visitor starts in the venue's language and mode
    void this.call.end();
    if (isActive(this.#session.phase)) void this.#kiosk?.session.hangup();
  }

  /** Keyboard: Enter/Space start, Escape cancels / hangs up / dismisses. */
  handleKey(key: string): boolean {
    const screen = this.screen;
    // "Are you still there?" is modal: Escape means "keep talking", and no key reaches the call behind it.
    if (screen === 'live' && this.idle.isPrompting) {
      if (key === 'Escape') this.idle.touch();
      return key === 'Escape' || key === 'Enter' || key === ' ';
    }
    // The age gate is a screen of its own: its buttons take Enter/Space; Escape means "no".
    if (screen === 'attract' && this.ageGate.isOpen) {
      if (key === 'Escape') void this.ageGate.answer(false);
      return key === 'Escape';
    }
    if ((key === 'Enter' || key === ' ') && screen === 'attract') {
      void this.startCall();
      return true;
    }
    if (key === 'Escape') {
      if (screen === 'connecting') void this.cancel();
      else if (screen === 'live') void this.hangUp();
      else if (screen === 'ended' || screen === 'error') this.dismiss();
      else return false;
      return true;
    }
    return false;
  }

  // --- idle / abandonment hang-up ---
  // The watch runs while the call is live and its media plays; KioskApp only starts and stops it (from
  // its tick) and hangs up with cause `idle` when it runs out. The logic is IdleWatch's.
  readonly idle: IdleWatch = new IdleWatch({ onExpire: () => void this.hangUpIdle() });
  #idleLiveId: string | null = null;
  #idleVoice: CallVoice | null = null;
  /** Presence from the call's own camera (video calls, when the attract screen learned the room). */
  #idlePresence: { stop(): void } | null = null;
  #presence: Signal | null = null;

  /** Plug in the camera's presence detector (fast-start's PresenceDetector); it counts in video calls. */
  usePresence(presence: Signal | null): void {
    this.#presence = presence;
    if (this.idle.isRunning) this.idle.attachPresence(presence);
  }

  /** Seeing speech: the visitor's voice as our detector hears it now (null: not measured). */
  get visitorVoice(): { speaking: boolean; level: number } | null {
    const d = this.#idleVoice?.detector;
    return d ? { speaking: d.value === true, level: d.level } : null;
  }

  get endedByIdle(): boolean {
    return this.idle.endedCall;
  }

  /** Nobody talked through the prompt: hang up (type 5 `user_end` on the wire; main records `idle`). */
  async hangUpIdle(): Promise<void> {
    await Promise.all([this.#kiosk?.session.hangup({ cause: 'idle' }), this.call.end()]);
  }

  /** From the tick: watch a live call once its media plays; stop when the call is no longer live. */
  #syncIdle(): void {
    const s = this.#session;
    const liveId = (s.phase === 'live' || s.phase === 'reconnecting') && this.screen === 'live' ? s.liveId : null;
    if (liveId && liveId !== this.#idleLiveId && this.call.isPlaying) {
      this.#stopIdle();
      this.#idleLiveId = liveId;
      const idle = this.#config?.idle ?? DEFAULT_IDLE;
      const factor = this.visitor.timeFactor; // accessibility mode: twice as long to answer
      this.idle.start({ settings: { promptSeconds: idle.promptSeconds * factor, hangupSeconds: idle.hangupSeconds * factor }, mode: this.#mode, voice: null, presence: this.#presence });
      if (!this.#presence && this.#mode === 'video') {
        const presence = callPresenceDetector(this.call.localVideoTrack);
        this.#idlePresence = presence;
        if (presence) this.idle.attachPresence(presence);
      }
      void openCallVoice(this.call.localAudioTrack, this.#getUserMedia).then((voice) => {
        if (this.#idleLiveId !== liveId) {
          voice?.close(); // the call ended while the microphone was being measured
          return;
        }
        this.#idleVoice = voice;
        if (voice) this.idle.attachVoice(voice.detector);
      });
    } else if (!liveId && this.#idleLiveId) {
      this.#stopIdle();
    }
  }

  #stopIdle(): void {
    this.#idleLiveId = null;
    this.idle.stop();
    this.#idleVoice?.close();
    this.#idleVoice = null;
    this.#idlePresence?.stop();
    this.#idlePresence = null;
  }

  // --- media watchdog ---
  // While the call is live the avatar's media must keep arriving; MediaWatch decides (notice and one
  // re-subscribe at 8 s, hang-up at 20 s), KioskApp only starts/stops it from its tick and hangs up.
  readonly media: MediaWatch = new MediaWatch({
    progress: () => this.call.remoteMediaProgress(),
    resubscribe: () => this.call.resubscribeRemote(),
    onHangup: () => void this.hangUpMediaStalled(),
  });
  #mediaLiveId: string | null = null;

  get endedByMediaStall(): boolean {
    return this.media.endedCall;
  }

  /** The avatar's media stopped: hang up (type 5 `user_end` on the wire; main records `media_stalled`). */
  async hangUpMediaStalled(): Promise<void> {
    await Promise.all([this.#kiosk?.session.hangup({ cause: 'media_stalled' }), this.call.end()]);
  }

  #syncMediaWatch(): void {
    const s = this.#session;
    const liveId = s.phase === 'live' || s.phase === 'reconnecting' ? s.liveId : null;
    if (liveId && liveId !== this.#mediaLiveId) {
      this.#mediaLiveId = liveId;
      this.media.start(this.#mode);
    } else if (!liveId && this.#mediaLiveId) {
      this.#mediaLiveId = null;
      this.media.stop();
    }
  }

  // --- the staff panel ---

  /** The staff panel may open: no call is starting, live or ending (attract, ended and error screens). */
  get canOpenStaff(): boolean {
    const screen = this.screen;
    return (screen === 'attract' || screen === 'ended' || screen === 'error') && !this.#starting && !isActive(this.#session.phase);
  }

  /** The staff panel saved settings: show the new name, picture and mode on the attract screen. */
  async reloadConfig(): Promise<void> {
    if (!this.#kiosk) return;
    if (this.#bootError) return this.#boot();
    const config = await this.#kiosk.config.get();
    if (!config.ok) return;
    this.#config = config.value;
    if (!isActive(this.#session.phase)) {
      this.#mode = config.value.callMode;
      this.visitor.reset(config.value);
    }
  }
  // --- end staff panel ---

  // -------------------------------------------------------------------------------------------------

  #onEvent(event: KioskEvent): void {
    switch (event.type) {
      case 'state': {
        this.#optimistic = false;
        this.#session = event.state;
        const phase = event.state.phase;
        if (phase === 'ended' || phase === 'failed' || phase === 'idle' || phase === 'ending') void this.call.end();
        break;
      }
      case 'credentials': {
        if (this.#cancelling || !this.#config) return;
        void this.call.begin(event.liveId, event.rtc, event.callMode, this.config ?? this.#config);
        break;
      }
      case 'warning':
        // Main's warnings are for staff (already in main's log), never a visitor's screen.
        this.#showWarning(event.message);
        break;
      case 'muted':
        this.#muted = event.muted;
        void this.call.setMuted(event.muted);
        break;
      case 'opening':
        this.#opening = event.opening;
        break;
      case 'hold':
        this.#hold = event.hold;
        break;
      case 'service':
        this.#service = { status: event.service.status, ok: event.service.ok };
        break;
      case 'config-changed':
        void this.reloadConfig();
        break;
      case 'avatar-volume':
        this.call.setAvatarVolume(event.percent);
        break;
      case 'spare':
        // Pre-join: a spare's channel is joined receive-only ahead of the tap; a closed spare leaves it.
        if (event.status === 'created' && event.liveId && event.rtc && this.#config?.prewarm.prejoin !== false && !isActive(this.#session.phase)) {
          this.call.preJoin(event.liveId, event.rtc, event.callMode, this.#config!);
        } else if (event.status === 'expired' || event.status === 'failed') {
          void this.call.dropPreJoined(event.liveId);
        }
        break;
    }
    this.companion.observe(event); // tray/shortcut commands, push-to-talk
  }

  #onMediaFailure(error: RtcError): void {
    if (error.kind === 'cancelled') return;
    void this.call.end();
    if (this.#cancelling || (this.screen === 'attract' && !this.#holdConnecting)) return; // the hold: a call in flight
    this.#localError = errorViewForMedia(error.kind, error.message);
    this.#dismissed = false;
    void this.#kiosk?.session.reportMediaError({ kind: error.kind, message: error.message.slice(0, 500) });
  }

  /** Every warning goes to the log in English; a visitor sees only those with a translated notice. */
  #showWarning(message: string, notice?: VisitorNotice): void {
    console.warn(message);
    if (notice) this.#warning = { notice, untilMs: Date.now() + WARNING_SHOW_MS };
  }

  #tick(): void {
    this.#now = Date.now();
    this.#syncIdle();
    this.#syncMediaWatch();
    const screen = this.screen;
    const terminal = (screen === 'ended' && !this.isWrappingUp) || screen === 'error';
    if (!terminal) {
      if (this.#terminalSinceMs !== null) this.#terminalSinceMs = null;
      return;
    }
    if (this.#terminalSinceMs === null) this.#terminalSinceMs = this.#now;
    else if (this.returnInS === 0) this.dismiss();
  }
}

function isActive(phase: SessionState['phase']): boolean {
  return phase !== 'idle' && phase !== 'ended' && phase !== 'failed';
}
