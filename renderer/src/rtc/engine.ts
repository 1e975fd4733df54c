/**
 * The one RTC engine interface the UI talks to, and the pieces every engine shares: the live view it
 * renders into, the events it reports, and the media-error classification. Three engines implement it
 * (demo, agora-web, agora-native); `choose-engine.ts` picks one per call.
 *
 * Engines are plain classes with their SDK and DOM bits injected, so the adapters run in plain Node
 * against typed fakes (test/unit/renderer/rtc-*.test.ts). Nothing here touches `window`.
 */
import type { CallMilestone, CallMode, MediaErrorKind, RtcCredentials } from '../../../electron/contract.ts';
import type { QualitySample } from './quality.ts';

/** Where an engine puts the call's pictures. The DOM implementation lives in `call/dom-live-view.ts`. */
export interface LiveView {
  /** Container an SDK renders the avatar into itself (agora-web `track.play`, native `setupRemoteVideo`). */
  readonly avatarHost: HTMLElement;
  /** Container for the visitor's own camera (picture-in-picture, mirrored). */
  readonly selfHost: HTMLElement;
  /** Show a MediaStream as the avatar in the live `<video>` (demo engine). */
  showAvatarStream(stream: MediaStream): void;
  /** Show the visitor's camera stream in the self-view `<video>`. */
  showSelfStream(stream: MediaStream): void;
  /** Detach every stream and remove anything an SDK put into the hosts. */
  clear(): void;
}

/**
 * - `joining`: getting devices / joining the channel.
 * - `waiting`: in the channel, the avatar's picture has not arrived yet.
 * - `playing`: the avatar's media is rendering.
 * - `reconnecting`: the RTC link itself is recovering (the SDK does this on its own).
 * - `left`: the engine has released everything.
 */
export type EngineState = 'idle' | 'joining' | 'waiting' | 'playing' | 'reconnecting' | 'left';

export type EngineEvent =
  | { type: 'state'; state: EngineState }
  /** Our side of the channel is ready for conn_init before `join` resolves (devices granted, joined,
   *  microphone published); optional: `join` resolving means the same. */
  | { type: 'ready' }
  /** Browser autoplay policy blocked the avatar's audio: ask for a tap, then call `resumePlayback()`. */
  | { type: 'autoplay-blocked' }
  /** Something that does not stop the call (e.g. the RTC token expires soon). `message` is English, for
   *  the log; `notice` names the visitor's translated message (`live.notice.*`), when a visitor should
   *  see one at all. */
  | { type: 'warning'; message: string; notice?: VisitorNotice }
  /** Periodic connection figures while in the call (about every 2 s; engines that cannot tell send none). */
  | { type: 'quality'; sample: QualitySample }
  /** The engine failed after joining (channel dropped for good, token expired, device lost). */
  | { type: 'error'; error: RtcError }
  /** Before the tap: the channel pre-joined for a spare lost its connection (dropped or recovering); a
   *  tap must not land on it (the page replaces it). */
  | { type: 'prejoin-lost'; reason: string }
  /** A field milestone of the call from the SDK's own events (see contract.ts `CALL_MILESTONES`); those
   *  seen before the tap (a pre-joined spare) are reported at the tap. `durationMs`: the join's own time. */
  | { type: 'milestone'; milestone: CallMilestone; durationMs?: number };

/** A warning a visitor sees, in their language (catalogue `live.notice.<name>`). */
export type VisitorNotice = 'ticketExpiring' | 'pictureMissing' | 'microphoneLost' | 'microphoneBack' | 'cameraLost' | 'cameraBack';

export interface RtcEngine {
  readonly kind: EngineKind;
  /**
   * Get devices, join the channel, publish, and render the avatar when it arrives. Rejects with an RtcError.
   * Resolving means our side is ready for conn_init: joined, the remote subscription handler in place, the
   * microphone published. After `prejoin` on the same channel it only opens the devices and publishes.
   */
  join(creds: RtcCredentials, mode: CallMode, view: LiveView): Promise<void>;
  /**
   * Pre-join (a spare session, ahead of the tap): join the channel receive-only, with the remote handler in
   * place. No microphone or camera is opened and nothing is published until `join`. Optional.
   */
  prejoin?(creds: RtcCredentials, mode: CallMode, view: LiveView): Promise<void>;
  setMuted(muted: boolean): Promise<void>;
  /** Retry playback after a user gesture (autoplay). */
  resumePlayback(): void;
  /** Subscribe to engine events; returns the unsubscribe function. */
  onEvent(listener: (event: EngineEvent) => void): () => void;
  /** Stop and close local tracks, leave the channel, detach the view. Idempotent; safe during `join`. */
  leave(): Promise<void>;
  // The media watchdog (call/MediaWatch.svelte.ts): is the avatar's media still arriving?
  /**
   * Counters that only grow while the avatar's media arrives: `video` new frames (or packets) of the
   * avatar's picture, `audio` packets of its voice. The watchdog compares successive readings; null
   * while the engine cannot tell (no remote track yet).
   */
  remoteMediaProgress(): RemoteMediaProgress | null;
  /** Subscribe to the avatar's remote tracks again (the watchdog's one retry when media stalls). */
  resubscribeRemote(): Promise<void>;
  // The visitor's own tracks, for the idle hang-up (voice activity, presence).
  /** The visitor's camera track in a video call (presence during the call); optional. */
  localVideoTrack?(): MediaStreamTrack | null;
  /** The visitor's local microphone track (captured with echo cancellation), for voice activity; null
   *  before join, after leave, or where the engine captures natively (agora-native). */
  localAudioTrack?(): MediaStreamTrack | null;
  // Seeing speech and private listening.
  /** How loud the avatar speaks now, 0..1 (the "speaking" sign for visitors who cannot hear it); absent
   *  where the engine cannot measure it. */
  avatarAudioLevel?(): number;
  /** Play the avatar's voice on this output device (`MediaDeviceInfo.deviceId`; '' = the system default). */
  setAudioOutput?(deviceId: string): Promise<void>;
  /** Play the avatar's voice at this volume, 0–100 % (100: as received); staff's and the fleet's avatar
   *  volume (contract.ts `avatarVolumeSchema`). Before or during the call. */
  setAvatarVolume?(percent: number): void;
}

export type EngineKind = 'demo' | 'agora-web' | 'agora-native';

/**
 * See `RtcEngine.remoteMediaProgress`. `video`/`audio` are counters (packets or frames); the optional
 * fields are what an engine can tell of the media itself, and the watchdog prefers them
 * (call/media-watchdog.ts `judgeMedia`): packets can arrive while the decoder is frozen, and a silent
 * avatar sends no voice.
 */
export interface RemoteMediaProgress {
  video: number;
  audio: number;
  /** The avatar's video as decoded and shown: frames per second now, and its total freeze time so far. */
  videoFrames?: { decodeFps: number; renderFps: number; freezeMs: number } | null;
  /** Total freeze time of the avatar's audio so far (gaps while it speaks; silence is not a freeze). */
  audioFreezeMs?: number | null;
  /** The call's connection: its state is connected, and everything received on it so far (bytes). */
  connection?: { connected: boolean; bytesReceived: number } | null;
}

/** An engine failure, with the contract's media-error kind so main can be told (reportMediaError). */
export class RtcError extends Error {
  override readonly name = 'RtcError';
  constructor(
    readonly kind: MediaErrorKind | 'cancelled',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Thrown out of `join` when `leave()` was called meanwhile; callers ignore it. */
export const cancelledError = (): RtcError => new RtcError('cancelled', 'The call was left while joining.');

export type MediaDevice = 'microphone' | 'camera';

/**
 * Map a getUserMedia / SDK device error to a kind and a sentence. Chromium names: NotAllowedError
 * (denied), NotFoundError / OverconstrainedError (no device), NotReadableError (in use or broken).
 * agora-rtc-sdk-ng wraps them in AgoraRTCError codes PERMISSION_DENIED / DEVICE_NOT_FOUND / NOT_READABLE.
 */
export function classifyDeviceError(err: unknown, device: MediaDevice): RtcError {
  if (err instanceof RtcError) return err;
  const name = typeof err === 'object' && err !== null && 'name' in err ? String((err as { name: unknown }).name) : '';
  const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
  const raw = err instanceof Error ? err.message : String(err);
  const text = `${name} ${code} ${raw}`;
  const label = device === 'microphone' ? 'microphone' : 'camera';
  if (/NotAllowed|PermissionDenied|PERMISSION_DENIED|SecurityError/i.test(text)) {
    return new RtcError(device === 'microphone' ? 'microphone_denied' : 'camera_denied', `Access to the ${label} was denied.`, { cause: err });
  }
  if (/NotFound|DEVICE_NOT_FOUND|CONSTRAINT_NOT_SATISFIED|Overconstrained|DevicesNotFound/i.test(text)) {
    return new RtcError('device_missing', `No ${label} was found.`, { cause: err });
  }
  if (/NotReadable|NOT_READABLE|TrackStart/i.test(text)) {
    return new RtcError('device_missing', `The ${label} is in use or not working.`, { cause: err });
  }
  return new RtcError('other', `The ${label} could not be started.`, { cause: err });
}

/** A tiny listener set, shared by the engines. */
export class Emitter<E> {
  readonly #listeners = new Set<(event: E) => void>();
  on(listener: (event: E) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  emit(event: E): void {
    for (const l of [...this.#listeners]) {
      try {
        l(event);
      } catch (err) {
        console.error('engine listener failed', err);
      }
    }
  }
  clear(): void {
    this.#listeners.clear();
  }
}

/** Run one cleanup step; a failing step must not stop the ones after it. */
export function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    /* cleanup must go on */
  }
}
