/**
 * The agora-rtc-sdk-ng engine, the default for real credentials. It follows the spec's web flow
 * (§2.5) exactly:
 *   1. register `user-published` (and the other listeners) BEFORE joining;
 *   2. `client.join(app_id, channel_id, token, user_id)` with the string uid from `rtc`;
 *   3. publish the microphone (required: otherwise the avatar cannot hear);
 *   4. publish the camera (video mode only);
 *   5. subscribe to and render the avatar when its publication arrives: video from
 *      `live-video-push-…` (video mode), audio from `live-bot-…` (`avatarUidFor`).
 * The local tracks are created before the join so that a denied or missing device fails the call before
 * it enters the channel.
 *
 * The SDK is injected (`AgoraWebSdk`, the subset used here), so the adapter runs in plain Node against
 * a typed fake; `loadAgoraWebSdk()` does the lazy dynamic import for the real thing.
 */
import { avatarUidFor } from '../../../electron/core/rtc-ids.ts';
import type { CallMilestone, CallMode, RtcCredentials } from '../../../electron/contract.ts';
import { clampSample, levelFromAgora, type QualitySample } from './quality.ts';
import { DeviceRecovery } from './device-recovery.ts';
import { cancelledError, classifyDeviceError, Emitter, RtcError, safely, type EngineEvent, type EngineState, type LiveView, type RemoteMediaProgress, type RtcEngine, type VisitorNotice } from './engine.ts';

// ---------------------------------------------------------------------------------------------------
// The SDK surface used (names as in agora-rtc-sdk-ng 4.24's rtc-sdk_en.d.ts)

export type AgoraUid = string | number;
export type AgoraMediaType = 'audio' | 'video' | 'datachannel';
export type AgoraConnectionState = 'DISCONNECTED' | 'CONNECTING' | 'RECONNECTING' | 'CONNECTED' | 'DISCONNECTING';

export interface AgoraPlayConfig {
  fit?: 'cover' | 'contain' | 'fill';
  mirror?: boolean;
}
export interface AgoraLocalTrack {
  setMuted(muted: boolean): Promise<void>;
  /** `track-ended`: the device behind the track went away (unplugged, or taken by the system). */
  on?(event: 'track-ended', listener: () => void): void;
  /** Switch the track to another device (microphone/camera tracks). */
  setDevice?(deviceId: string): Promise<void>;
  play(element: HTMLElement, config?: AgoraPlayConfig): void;
  stop(): void;
  close(): void;
  /** The underlying browser track (for voice activity on the local, echo-cancelled microphone). */
  getMediaStreamTrack?(): MediaStreamTrack;
}
export interface AgoraRemoteTrack {
  play(element?: HTMLElement, config?: AgoraPlayConfig): void;
  /** `first-frame-decoded`: the track's first frame (video) or first audio was decoded (a field figure). */
  on?(event: 'first-frame-decoded', listener: () => void): void;
  stop(): void;
  /** Remote audio tracks: the current volume, 0..1. */
  getVolumeLevel?(): number;
  /** Remote audio tracks: the output device (the SDK calls setSinkId on its own audio element). */
  setPlaybackDevice?(deviceId: string): Promise<void>;
  /** Remote audio tracks: the playback volume, 0 (mute) to 100 (as received, the most). */
  setVolume?(volume: number): void;
}
export interface AgoraRemoteUser {
  uid: AgoraUid;
}
export interface AgoraWebClient {
  on(event: 'user-published', listener: (user: AgoraRemoteUser, mediaType: AgoraMediaType) => void): void;
  on(event: 'user-unpublished', listener: (user: AgoraRemoteUser, mediaType: AgoraMediaType) => void): void;
  on(event: 'user-left', listener: (user: AgoraRemoteUser, reason: string) => void): void;
  on(event: 'connection-state-change', listener: (cur: AgoraConnectionState, prev: AgoraConnectionState, reason?: string) => void): void;
  on(event: 'token-privilege-will-expire', listener: () => void): void;
  on(event: 'token-privilege-did-expire', listener: () => void): void;
  /** Every 2 s once joined: last-mile quality, 0 (unknown) … 6 (down), each way. */
  on(event: 'network-quality', listener: (stats: AgoraNetworkQuality) => void): void;
  removeAllListeners(): void;
  /** The connection's state now (the media watchdog: a call whose connection is down has no media). */
  readonly connectionState?: AgoraConnectionState;
  /** The call's totals (RecvBitrate in bps, RTT in ms); read with each network-quality event. */
  getRTCStats?(): Pick<AgoraRtcStats, 'RecvBitrate' | 'RTT'> & Partial<Pick<AgoraRtcStats, 'RecvBytes'>>;
  /** Per remote uid: loss and frame rate (the quality figures), and what has arrived so far (the media
   *  watchdog reads `receivePackets`). */
  getRemoteVideoStats?(): Record<string, AgoraRemoteVideoStats>;
  getRemoteAudioStats?(): Record<string, AgoraRemoteAudioStats>;
  /** Cloud proxy (firewalled networks); must be called before `join`. */
  startProxyServer?(mode?: number): void;
  join(appId: string, channel: string, token: string | null, uid?: AgoraUid | null): Promise<AgoraUid>;
  publish(tracks: AgoraLocalTrack | AgoraLocalTrack[]): Promise<void>;
  subscribe(user: AgoraRemoteUser, mediaType: 'video' | 'audio'): Promise<AgoraRemoteTrack>;
  /** The media watchdog's retry: drop a subscription before subscribing again. */
  unsubscribe?(user: AgoraRemoteUser, mediaType?: 'video' | 'audio'): Promise<void>;
  leave(): Promise<void>;
}
export interface AgoraNetworkQuality {
  uplinkNetworkQuality: number;
  downlinkNetworkQuality: number;
}
export interface AgoraRtcStats {
  RecvBitrate: number;
  RTT: number;
  /** Everything received on the call so far. */
  RecvBytes: number;
}
export interface AgoraRemoteVideoStats {
  /** Percent. */
  packetLossRate: number;
  receiveFrameRate?: number;
  /** Frames decoded / rendered per second now: what the media watchdog judges a video by. */
  decodeFrameRate?: number;
  renderFrameRate?: number;
  receivePackets?: number;
  /** Seconds the received video has been frozen in total. */
  totalFreezeTime?: number;
}
export interface AgoraRemoteAudioStats {
  packetLossRate: number;
  receivePackets?: number;
  /** Seconds the received audio has been frozen in total (gaps in speech, not silence). */
  totalFreezeTime?: number;
}
export interface AgoraWebSdk {
  createClient(config: { mode: 'rtc' | 'live'; codec: 'vp8' | 'vp9' | 'h264' | 'av1' }): AgoraWebClient;
  createMicrophoneAudioTrack(config?: { AEC?: boolean; ANS?: boolean; AGC?: boolean }): Promise<AgoraLocalTrack>;
  createCameraVideoTrack(config?: { encoderConfig?: string; facingMode?: 'user' | 'environment' }): Promise<AgoraLocalTrack>;
  onAutoplayFailed?: (() => void) | undefined;
  /** Devices plugged in or out (shared hooks, like `onAutoplayFailed`). */
  onMicrophoneChanged?: ((info: AgoraDeviceInfo) => void) | undefined;
  onCameraChanged?: ((info: AgoraDeviceInfo) => void) | undefined;
  getMicrophones?(): Promise<Array<{ deviceId: string; label?: string }>>;
  getCameras?(): Promise<Array<{ deviceId: string; label?: string }>>;
}
export interface AgoraDeviceInfo {
  state: 'ACTIVE' | 'INACTIVE';
  device: { deviceId: string; label?: string };
}

/** Lazy import of the real SDK (a separate chunk: the demo path never loads it). */
export async function loadAgoraWebSdk(): Promise<AgoraWebSdk> {
  try {
    const mod = await import('agora-rtc-sdk-ng');
    const sdk = mod.default;
    // Quiet the SDK's console logging (level 3 = warnings and errors only) and its log upload.
    sdk.setLogLevel(3);
    sdk.disableLogUpload();
    // The real SDK's `on` overloads and track classes are wider than the subset declared above.
    return sdk as unknown as AgoraWebSdk;
  } catch (err) {
    throw new RtcError('engine_unavailable', 'The audio/video engine could not be loaded.', { cause: err });
  }
}

// ---------------------------------------------------------------------------------------------------

/**
 * How long `client.join` may take. The SDK itself keeps retrying unreachable gateways for well over a
 * minute, while the session may already be live and billing: give up, and let main end the session.
 */
export const WEB_JOIN_TIMEOUT_MS = 15_000;

/**
 * What the SDK said, for the log and main's record: its error name and code (AgoraRTCException
 * `CAN_NOT_GET_GATEWAY_SERVER`, …), so a failure the SDK reported is told apart from our own bound.
 */
export function sdkErrorLabel(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err).slice(0, 120);
  const { name, code, message } = err as { name?: unknown; code?: unknown; message?: unknown };
  const parts = [typeof name === 'string' ? name : 'Error', typeof code === 'string' || typeof code === 'number' ? String(code) : null];
  const head = parts.filter(Boolean).join(' ');
  return typeof message === 'string' && message ? `${head}: ${message.slice(0, 160)}` : head;
}

/** After the join's bound, how long to wait for the SDK's own join to end once the client left. */
export const SDK_JOIN_ABORT_WAIT_MS = 2_000;

/** The value `outcome` settles with, or undefined when it takes longer than `ms`. */
function settledWithin(outcome: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([outcome, late]).finally(() => clearTimeout(timer));
}

/** `rtc.cloudProxy`: off, or the provider's cloud proxy over UDP, or over TCP (TLS 443). */
export type CloudProxyMode = 'off' | 'udp' | 'tcp';
/** The Web SDK's `startProxyServer` modes: 3 = UDP cloud proxy, 5 = TCP (TLS 443) cloud proxy. */
export const CLOUD_PROXY_MODES: Record<Exclude<CloudProxyMode, 'off'>, number> = { udp: 3, tcp: 5 };

export class AgoraWebEngine implements RtcEngine {
  readonly kind = 'agora-web' as const;
  readonly #sdk: AgoraWebSdk;
  readonly #joinTimeoutMs: number;
  readonly #events = new Emitter<EngineEvent>();
  #state: EngineState = 'idle';
  #closed = false;
  #client: AgoraWebClient | null = null;
  #mic: AgoraLocalTrack | null = null;
  #camera: AgoraLocalTrack | null = null;
  #remote: AgoraRemoteTrack[] = [];
  /** The avatar's subscriptions, by `<uid>:<kind>`: what the media watchdog reads and re-subscribes. */
  #subscribed = new Map<string, { user: AgoraRemoteUser; mediaType: 'video' | 'audio'; track: AgoraRemoteTrack }>();
  #ids: ReturnType<typeof avatarUidFor> | null = null;
  #view: LiveView | null = null;
  #muted = false;
  readonly #cloudProxy: CloudProxyMode;
  /** `join` ran: the shared live view is this engine's to clear (a pre-joined spare never touches it). */
  #inCall = false;
  #autoplayHook: (() => void) | null = null;
  /** The channel joined receive-only ahead of the tap, that join, and whether its connection was lost
   *  since (dropped or recovering: a tap must not land on it). */
  #prejoined: { channel: string; joined: Promise<void>; lost: boolean } | null = null;
  /** Private listening: the output the avatar's voice plays on ('' = the default). */
  #outputId = '';
  /** The avatar volume, 0–100 (`setAvatarVolume`), for the voice's track when it arrives. */
  #volume = 100;
  readonly #deviceTiming: { graceMs?: number; retryMs?: number };
  /** Devices that come and go during the call (device-recovery.ts), and our SDK device hooks. */
  #recovery: { microphone: DeviceRecovery; camera: DeviceRecovery } | null = null;
  #deviceHooks: { mic: (info: AgoraDeviceInfo) => void; camera: (info: AgoraDeviceInfo) => void } | null = null;
  /** Field milestones seen before the tap (a pre-joined spare): reported at the tap. */
  #pendingMilestones: Array<Extract<EngineEvent, { type: 'milestone' }>> = [];
  /** How long the last channel join took (ms). */
  #joinMs: number | null = null;
  /** The avatar's tracks a pre-joined spare subscribed to before the tap: played only at the tap. */
  readonly #unplayed = new Set<AgoraRemoteTrack>();

  constructor(sdk: AgoraWebSdk, options: { joinTimeoutMs?: number; cloudProxy?: CloudProxyMode; deviceGraceMs?: number; deviceRetryMs?: number } = {}) {
    this.#sdk = sdk;
    this.#deviceTiming = { ...(options.deviceGraceMs !== undefined ? { graceMs: options.deviceGraceMs } : {}), ...(options.deviceRetryMs !== undefined ? { retryMs: options.deviceRetryMs } : {}) };
    this.#joinTimeoutMs = options.joinTimeoutMs ?? WEB_JOIN_TIMEOUT_MS;
    this.#cloudProxy = options.cloudProxy ?? 'off';
  }

  onEvent(listener: (event: EngineEvent) => void): () => void {
    return this.#events.on(listener);
  }

  /**
   * Pre-join (a spare session, ahead of the tap): the client, its listeners and the channel join,
   * receive-only. No microphone or camera track exists and nothing is published until `join`.
   */
  async prejoin(creds: RtcCredentials, mode: CallMode, view: LiveView): Promise<void> {
    if (this.#closed) throw cancelledError();
    this.#view = view;
    const client = this.#setupClient(creds, mode);
    const joined = this.#joinChannel(client, creds);
    this.#prejoined = { channel: creds.channel_id, joined, lost: false };
    await joined;
  }

  async join(creds: RtcCredentials, mode: CallMode, view: LiveView): Promise<void> {
    if (this.#closed) throw cancelledError();
    this.#view = view;
    this.#inCall = true;
    this.#setState('joining');
    // What the SDK reported before the tap (a pre-joined spare) counts from the tap.
    for (const m of this.#pendingMilestones.splice(0)) this.#events.emit(m);
    let prejoined = this.#prejoined?.channel === creds.channel_id ? this.#prejoined : null;
    if (prejoined?.lost) prejoined = await this.#dropLostPrejoin();
    // 1. Listeners first (spec §2.5: subscribe to remote video before joining); a pre-joined client has them.
    let client = prejoined && this.#client ? this.#client : this.#setupClient(creds, mode);

    // Local devices before the channel, so a denied microphone never enters it (pre-joined: the channel
    // was joined receive-only; the devices open only now, at the tap). The microphone first (a visitor
    // whose microphone is refused never sees the camera light up), then the camera in the background: a
    // camera can take up to a second to open, and the call needs only the microphone to start.
    try {
      this.#mic = await this.#sdk.createMicrophoneAudioTrack({ AEC: true, ANS: true, AGC: true });
    } catch (err) {
      await this.#cleanup();
      throw classifyDeviceError(err, 'microphone');
    }
    if (this.#closed) throw await this.#abort();
    let cameraFailed: unknown = null;
    const camera: Promise<AgoraLocalTrack | null> =
      mode === 'video'
        ? this.#sdk.createCameraVideoTrack({ encoderConfig: '480p_1', facingMode: 'user' }).then(
            (track) => {
              if (this.#closed) {
                safely(() => track.close());
                return null;
              }
              this.#camera = track;
              return track;
            },
            (err: unknown) => {
              cameraFailed = err;
              return null;
            },
          )
        : Promise.resolve(null);
    if (this.#muted) await this.#mic.setMuted(true);

    // 2. Join with the string uid from `rtc` (or wait for the pre-join; one whose connection was lost
    // meanwhile is replaced by a fresh client and join).
    await (prejoined ? prejoined.joined : this.#joinChannel(client, creds));
    if (this.#closed) throw await this.#abort();
    if (prejoined?.lost) {
      await this.#dropLostPrejoin();
      client = this.#setupClient(creds, mode);
      await this.#joinChannel(client, creds);
      if (this.#closed) throw await this.#abort();
    }
    this.#prejoined = null;
    if (this.#joinMs !== null) this.#milestone('joined', this.#joinMs);
    if (cameraFailed !== null) throw await this.#cameraFailure(cameraFailed);

    // 3. Microphone (required): our side is then ready for conn_init (RTC first, then billing).
    await this.#publish(client, this.#mic);
    this.#watchDevices();
    this.#events.emit({ type: 'ready' });

    // The avatar's media subscribed before the tap plays only now; the state follows what exists.
    this.#playSubscribed(view);

    // 4. Camera (video mode only), when it has opened.
    const cameraTrack = await camera;
    if (this.#closed) throw await this.#abort();
    if (cameraFailed !== null) throw await this.#cameraFailure(cameraFailed);
    if (cameraTrack) {
      cameraTrack.on?.('track-ended', () => this.#recovery?.camera.lost());
      await this.#publish(client, cameraTrack);
      cameraTrack.play(view.selfHost, { fit: 'cover', mirror: true });
    }
    if (this.#state === 'joining') this.#setState('waiting');
  }

  async #publish(client: AgoraWebClient, track: AgoraLocalTrack): Promise<void> {
    const what = track === this.#mic ? 'microphone' : 'camera';
    try {
      await client.publish(track);
    } catch (err) {
      await this.#cleanup();
      if (this.#closed) throw cancelledError();
      throw new RtcError('rtc_join_failed', `The call could not send the ${what} to its channel.`, { cause: err });
    }
    if (this.#closed) throw await this.#abort();
  }

  async #cameraFailure(err: unknown): Promise<RtcError> {
    await this.#cleanup();
    return classifyDeviceError(err, 'camera');
  }

  /** The client and every listener, registered before any join (spec §2.5). */
  #setupClient(creds: RtcCredentials, mode: CallMode): AgoraWebClient {
    const ids = avatarUidFor(creds.user_id, mode);
    this.#ids = ids;
    const client = this.#sdk.createClient({ mode: 'rtc', codec: 'vp8' });
    this.#client = client;
    client.on('user-published', (user, mediaType) => void this.#onPublished(user, mediaType, ids));
    client.on('user-unpublished', (user, mediaType) => {
      this.#subscribed.delete(`${user.uid}:${mediaType}`);
      if (mediaType === 'video' && this.#isAvatarVideo(user.uid, ids)) this.#setState('waiting');
    });
    client.on('user-left', (user) => {
      if (this.#isAvatarVideo(user.uid, ids) || ids.audio.includes(String(user.uid))) this.#setState('waiting');
    });
    client.on('connection-state-change', (cur, _prev, reason) => this.#onConnectionState(cur, reason));
    client.on('token-privilege-will-expire', () =>
      this.#events.emit({ type: 'warning', message: 'The call’s media ticket expires in about 30 seconds; a new conversation will be needed after that.', notice: 'ticketExpiring' }),
    );
    client.on('token-privilege-did-expire', () =>
      this.#events.emit({ type: 'error', error: new RtcError('rtc_disconnected', 'The call’s media ticket expired.') }),
    );
    client.on('network-quality', (q) => this.#onNetworkQuality(client, q, ids));
    // The hook is the SDK's, shared by every engine: remember ours, so leaving clears only ours.
    this.#autoplayHook = () => this.#events.emit({ type: 'autoplay-blocked' });
    this.#sdk.onAutoplayFailed = this.#autoplayHook;
    return client;
  }

  /**
   * The call's figures with each network-quality event: the received bitrate and round trip from the
   * call's stats, loss and frame rate from the avatar's own tracks (video: its video track; audio: the
   * worst of its audio tracks). Only once the call is ours (a pre-joined spare reports nothing).
   */
  #onNetworkQuality(client: AgoraWebClient, q: AgoraNetworkQuality, ids: ReturnType<typeof avatarUidFor>): void {
    if (!this.#inCall || this.#closed || this.#client !== client) return;
    try {
      const rtc = client.getRTCStats?.();
      const video = client.getRemoteVideoStats?.() ?? {};
      const audio = client.getRemoteAudioStats?.() ?? {};
      const avatarVideo = ids.video !== null ? video[ids.video] : Object.values(video)[0];
      const audioLoss = Object.entries(audio)
        .filter(([uid]) => ids.audio.length === 0 || ids.audio.includes(uid))
        .map(([, a]) => a.packetLossRate);
      const sample: QualitySample = {
        bitrateKbps: (rtc?.RecvBitrate ?? 0) / 1000,
        packetLossPct: avatarVideo ? avatarVideo.packetLossRate : Math.max(0, ...audioLoss),
        frameRate: avatarVideo ? (avatarVideo.receiveFrameRate ?? avatarVideo.renderFrameRate ?? 0) : 0,
        rttMs: rtc?.RTT ?? 0,
        level: levelFromAgora(q.uplinkNetworkQuality, q.downlinkNetworkQuality),
      };
      this.#events.emit({ type: 'quality', sample: clampSample(sample) });
    } catch (err) {
      console.warn('RTC stats could not be read', err); // figures are a nicety: the call goes on
    }
  }

  /**
   * `client.join`, bounded: the SDK keeps retrying unreachable gateways far longer than a visitor waits
   * (4.24 retries its access point without a count limit). At the bound the client leaves, which ends the
   * SDK's join with its own error; that error goes into the message, so the record says what the SDK's
   * join was doing (a join that never answers at all says so instead).
   */
  async #joinChannel(client: AgoraWebClient, creds: RtcCredentials): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let sdkOutcome: Promise<unknown> | null = null;
    const timedOut = new RtcError('rtc_join_failed', 'Joining the audio/video channel took too long.');
    try {
      if (this.#cloudProxy !== 'off') {
        // Before join (the SDK requires it): the firewalled venue reaches the RTC provider through its cloud proxy.
        if (!client.startProxyServer) throw new RtcError('rtc_join_failed', 'This audio/video engine cannot use the cloud proxy.');
        client.startProxyServer(CLOUD_PROXY_MODES[this.#cloudProxy]);
      }
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timedOut), this.#joinTimeoutMs);
      });
      const joinStartMs = performance.now();
      const joining = client.join(creds.app_id, creds.channel_id, creds.token, creds.user_id);
      void joining.then(() => (this.#joinMs = performance.now() - joinStartMs), () => undefined);
      sdkOutcome = joining.then(
        () => null,
        (err: unknown) => err,
      );
      await Promise.race([joining, timeout]);
    } catch (err) {
      await this.#cleanup(); // client.leave() also aborts a join still in progress
      if (this.#closed) throw cancelledError();
      if (err === timedOut) {
        const sdkError = sdkOutcome ? await settledWithin(sdkOutcome, SDK_JOIN_ABORT_WAIT_MS) : undefined;
        const what = sdkError ? `the SDK's join ended with ${sdkErrorLabel(sdkError)}` : 'the SDK\'s join never answered';
        throw new RtcError('rtc_join_failed', `Joining the audio/video channel took too long (${what}).`, { cause: sdkError ?? err });
      }
      if (err instanceof RtcError) throw err;
      throw new RtcError('rtc_join_failed', `The call could not join its audio/video channel (${sdkErrorLabel(err)}).`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  async setMuted(muted: boolean): Promise<void> {
    this.#muted = muted;
    await this.#mic?.setMuted(muted);
  }

  // The visitor's own tracks, for the idle hang-up (voice activity, presence).
  localAudioTrack(): MediaStreamTrack | null {
    return this.#mic?.getMediaStreamTrack?.() ?? null;
  }

  localVideoTrack(): MediaStreamTrack | null {
    return this.#camera?.getMediaStreamTrack?.() ?? null;
  }

  remoteMediaProgress(): RemoteMediaProgress | null {
    const client = this.#client;
    if (!client || this.#subscribed.size === 0) return null;
    const sum = (stats: Record<string, { receivePackets?: number }> | undefined, kind: 'video' | 'audio'): number => {
      let total = 0;
      for (const { user, mediaType } of this.#subscribed.values()) {
        if (mediaType === kind) total += stats?.[String(user.uid)]?.receivePackets ?? 0;
      }
      return total;
    };
    try {
      const videoStats = client.getRemoteVideoStats?.();
      const audioStats = client.getRemoteAudioStats?.();
      const progress: RemoteMediaProgress = { video: sum(videoStats, 'video'), audio: sum(audioStats, 'audio') };
      // What the media watchdog prefers to packets: the avatar's frames as decoded and shown, its audio's
      // freeze time, and the connection (state and bytes received).
      const avatarVideo = [...this.#subscribed.values()].find((s) => s.mediaType === 'video');
      const v = avatarVideo ? videoStats?.[String(avatarVideo.user.uid)] : undefined;
      if (v && (v.decodeFrameRate !== undefined || v.renderFrameRate !== undefined)) {
        progress.videoFrames = { decodeFps: v.decodeFrameRate ?? 0, renderFps: v.renderFrameRate ?? 0, freezeMs: (v.totalFreezeTime ?? 0) * 1000 };
      }
      let audioFreezeS: number | null = null;
      for (const { user, mediaType } of this.#subscribed.values()) {
        const a = mediaType === 'audio' ? audioStats?.[String(user.uid)] : undefined;
        if (a?.totalFreezeTime !== undefined) audioFreezeS = (audioFreezeS ?? 0) + a.totalFreezeTime;
      }
      if (audioFreezeS !== null) progress.audioFreezeMs = audioFreezeS * 1000;
      const bytes = client.getRTCStats?.().RecvBytes;
      if (client.connectionState !== undefined && bytes !== undefined) {
        progress.connection = { connected: client.connectionState === 'CONNECTED', bytesReceived: bytes };
      }
      return progress;
    } catch {
      return null; // stats are a diagnostic: never a reason to end a call
    }
  }

  /** Drop the avatar's subscriptions and subscribe again (the tracks are still published). */
  async resubscribeRemote(): Promise<void> {
    const client = this.#client;
    const ids = this.#ids;
    if (this.#closed || !client || !ids) return;
    const subs = [...this.#subscribed.values()];
    this.#subscribed.clear();
    for (const { user, mediaType, track } of subs) {
      safely(() => track.stop());
      this.#remote = this.#remote.filter((t) => t !== track);
      await client.unsubscribe?.(user, mediaType).catch(() => undefined);
      if (this.#closed) return;
      await this.#onPublished(user, mediaType, ids);
    }
  }

  avatarAudioLevel(): number {
    let level = 0;
    for (const t of this.#remote) level = Math.max(level, t.getVolumeLevel?.() ?? 0);
    return level;
  }

  /** The Web SDK's remote `setVolume` takes 0–100, 100 being the voice as received: the avatar volume as is. */
  setAvatarVolume(percent: number): void {
    this.#volume = Math.min(100, Math.max(0, percent));
    for (const { mediaType, track } of this.#subscribed.values()) if (mediaType === 'audio') track.setVolume?.(this.#volume);
  }

  async setAudioOutput(deviceId: string): Promise<void> {
    this.#outputId = deviceId;
    for (const t of this.#remote) await t.setPlaybackDevice?.(deviceId);
  }

  resumePlayback(): void {
    // After the visitor's tap the SDK may play again; replaying is harmless.
    for (const t of this.#remote) {
      try {
        t.play();
      } catch {
        /* a video track without its element: ignored */
      }
    }
  }

  async leave(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#cleanup();
    this.#setState('left');
    this.#events.clear();
  }

  /** 5. Subscribe to and render only the avatar's publications. */
  async #onPublished(user: AgoraRemoteUser, mediaType: AgoraMediaType, ids: ReturnType<typeof avatarUidFor>): Promise<void> {
    const client = this.#client;
    const view = this.#view;
    if (this.#closed || !client || !view) return;
    try {
      if (mediaType === 'video' && this.#isAvatarVideo(user.uid, ids)) {
        this.#milestone('avatar_published');
        const track = await client.subscribe(user, 'video');
        if (this.#closed) return track.stop();
        track.on?.('first-frame-decoded', () => this.#milestone('first_frame'));
        this.#remote.push(track);
        this.#subscribed.set(`${user.uid}:video`, { user, mediaType: 'video', track });
        if (!this.#inCall) return void this.#unplayed.add(track); // a pre-joined spare: subscribed (the first frame is on its way), shown at the tap
        track.play(view.avatarHost, { fit: 'contain', mirror: false });
        this.#setState('playing');
      } else if (mediaType === 'audio' && (ids.audio.length === 0 || ids.audio.includes(String(user.uid)))) {
        if (ids.video === null) this.#milestone('avatar_published');
        const track = await client.subscribe(user, 'audio');
        if (this.#closed) return track.stop();
        if (ids.video === null) track.on?.('first-frame-decoded', () => this.#milestone('first_audio'));
        track.setVolume?.(this.#volume);
        this.#remote.push(track);
        this.#subscribed.set(`${user.uid}:audio`, { user, mediaType: 'audio', track });
        if (!this.#inCall) return void this.#unplayed.add(track); // a pre-joined spare never speaks on the attract screen
        if (this.#outputId) await track.setPlaybackDevice?.(this.#outputId).catch(() => undefined);
        track.play();
        // Audio mode has no avatar picture: hearing the avatar is "playing".
        if (ids.video === null) this.#setState('playing');
      }
    } catch (err) {
      this.#events.emit({ type: 'warning', message: `The avatar's ${mediaType} could not be received (${err instanceof Error ? err.message : String(err)}).`, notice: 'pictureMissing' });
    }
  }

  /**
   * Devices that come and go (the call is ours from here): a microphone or camera unplugged (its track
   * ended, or the SDK says the device went inactive) → switch to the replugged one or another; the visitor
   * is told; no microphone within the grace time ends the call (`device_missing`: main sends type 5 and
   * the error screen explains); no camera only leaves the notice.
   */
  #watchDevices(): void {
    const warn = (notice: VisitorNotice, message: string): void => this.#events.emit({ type: 'warning', message, notice });
    const switchTo = async (track: AgoraLocalTrack | null, list: (() => Promise<Array<{ deviceId: string }>>) | undefined): Promise<boolean> => {
      if (!track?.setDevice || !list) return false;
      const devices = await list();
      const device = devices.find((d) => d.deviceId === 'default') ?? devices[0];
      if (!device) return false;
      await track.setDevice(device.deviceId);
      return true;
    };
    const recovery = {
      microphone: new DeviceRecovery({
        device: 'microphone',
        ...this.#deviceTiming,
        reacquire: () => switchTo(this.#mic, this.#sdk.getMicrophones?.bind(this.#sdk)),
        notice: warn,
        giveUp: () => this.#events.emit({ type: 'error', error: new RtcError('device_missing', 'The microphone was disconnected and no other one was found; the call was ended.') }),
      }),
      camera: new DeviceRecovery({
        device: 'camera',
        ...this.#deviceTiming,
        reacquire: () => switchTo(this.#camera, this.#sdk.getCameras?.bind(this.#sdk)),
        notice: warn,
        giveUp: () => {},
      }),
    };
    this.#recovery = recovery;
    this.#mic?.on?.('track-ended', () => recovery.microphone.lost());
    const ours = (track: AgoraLocalTrack | null, deviceId: string): boolean => {
      const settings = track?.getMediaStreamTrack?.().getSettings?.();
      return !settings?.deviceId || settings.deviceId === deviceId;
    };
    const onChanged = (which: 'microphone' | 'camera') => (info: AgoraDeviceInfo) => {
      const r = recovery[which];
      if (info.state === 'INACTIVE' && ours(which === 'microphone' ? this.#mic : this.#camera, info.device.deviceId)) r.lost();
      else r.devicesChanged();
    };
    this.#deviceHooks = { mic: onChanged('microphone'), camera: onChanged('camera') };
    this.#sdk.onMicrophoneChanged = this.#deviceHooks.mic;
    this.#sdk.onCameraChanged = this.#deviceHooks.camera;
  }

  /**
   * At the tap: play what a pre-joined spare subscribed to before it (nothing played then), and take the
   * engine's state from it: the avatar's picture (video call) or voice (voice-only call) → `playing`.
   */
  #playSubscribed(view: LiveView): void {
    const ids = this.#ids;
    for (const { mediaType, track } of this.#subscribed.values()) {
      if (!this.#unplayed.has(track)) continue;
      try {
        if (mediaType === 'video') track.play(view.avatarHost, { fit: 'contain', mirror: false });
        else {
          if (this.#outputId) void track.setPlaybackDevice?.(this.#outputId).catch(() => undefined);
          track.play();
        }
      } catch (err) {
        console.warn('a remote track could not be played', err);
      }
    }
    this.#unplayed.clear();
    const kinds = new Set([...this.#subscribed.values()].map((s) => s.mediaType));
    if (ids && (ids.video === null ? kinds.has('audio') : kinds.has('video'))) this.#setState('playing');
  }

  /** A field milestone: now once in the call, at the tap when it happened before (each is reported once). */
  #milestone(milestone: CallMilestone, durationMs?: number): void {
    const event = { type: 'milestone' as const, milestone, ...(durationMs !== undefined ? { durationMs } : {}) };
    if (this.#inCall) this.#events.emit(event);
    else if (!this.#pendingMilestones.some((m) => m.milestone === milestone)) this.#pendingMilestones.push(event);
  }

  /** The pre-joined client's connection was lost before the tap: leave it; the tap joins afresh. */
  async #dropLostPrejoin(): Promise<null> {
    const client = this.#client;
    this.#prejoined = null;
    this.#client = null;
    for (const t of this.#remote) safely(() => t.stop());
    this.#remote = [];
    this.#subscribed.clear();
    this.#unplayed.clear();
    if (client) {
      safely(() => client.removeAllListeners());
      await client.leave().catch(() => undefined);
    }
    return null;
  }

  /** In video mode the avatar's picture comes from `live-video-push-…`; unknown patterns take anyone's. */
  #isAvatarVideo(uid: AgoraUid, ids: ReturnType<typeof avatarUidFor>): boolean {
    return ids.video === null ? ids.audio.length === 0 : String(uid) === ids.video;
  }

  #onConnectionState(cur: AgoraConnectionState, reason: string | undefined): void {
    if (this.#closed) return;
    if (!this.#inCall) {
      // A pre-joined spare: nobody is in this call yet, so nothing to show; but a tap must not land on a
      // dead or recovering connection. Say so, so the page can replace it.
      const pre = this.#prejoined;
      if (pre && !pre.lost && (cur === 'RECONNECTING' || (cur === 'DISCONNECTED' && reason !== 'LEAVE'))) {
        pre.lost = true;
        this.#events.emit({ type: 'prejoin-lost', reason: `${cur}${reason ? ` (${reason})` : ''}` });
      }
      return;
    }
    if (cur === 'RECONNECTING') this.#setState('reconnecting');
    else if (cur === 'CONNECTED' && this.#state === 'reconnecting') this.#setState(this.#remote.length ? 'playing' : 'waiting');
    else if (cur === 'DISCONNECTED' && reason !== 'LEAVE') {
      this.#events.emit({ type: 'error', error: new RtcError('rtc_disconnected', `The audio/video channel disconnected (${reason ?? 'unknown reason'}).`) });
    }
  }

  async #abort(): Promise<RtcError> {
    await this.#cleanup();
    return cancelledError();
  }

  /** Stop and close local tracks, stop remote ones, leave, detach: whatever ended the call. */
  async #cleanup(): Promise<void> {
    for (const t of this.#remote) safely(() => t.stop());
    this.#remote = [];
    this.#subscribed.clear();
    this.#unplayed.clear();
    for (const t of [this.#mic, this.#camera]) {
      if (!t) continue;
      safely(() => t.stop());
      safely(() => t.close());
    }
    this.#mic = null;
    this.#camera = null;
    this.#prejoined = null;
    const client = this.#client;
    this.#client = null;
    if (client) {
      safely(() => client.removeAllListeners());
      await client.leave().catch(() => undefined);
    }
    this.#recovery?.microphone.stop();
    this.#recovery?.camera.stop();
    this.#recovery = null;
    if (this.#deviceHooks) {
      if (this.#sdk.onMicrophoneChanged === this.#deviceHooks.mic) this.#sdk.onMicrophoneChanged = undefined;
      if (this.#sdk.onCameraChanged === this.#deviceHooks.camera) this.#sdk.onCameraChanged = undefined;
      this.#deviceHooks = null;
    }
    if (this.#autoplayHook && this.#sdk.onAutoplayFailed === this.#autoplayHook) this.#sdk.onAutoplayFailed = undefined;
    this.#autoplayHook = null;
    if (this.#inCall) this.#view?.clear();
    this.#view = null;
  }

  #setState(state: EngineState): void {
    if (this.#state === state || this.#state === 'left') return;
    this.#state = state;
    this.#events.emit({ type: 'state', state });
  }
}
