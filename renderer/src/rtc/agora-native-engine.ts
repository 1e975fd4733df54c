/**
 * The agora-electron-sdk engine (native addon, Windows/macOS, opt-in with `rtcEngine: 'agora-native'`).
 * The addon is loaded lazily with `globalThis.require?.('agora-electron-sdk')` inside try/catch: only a
 * window created with nodeIntegration and without context isolation (see the main-process window
 * options) has `require`; everywhere else the engine reports "not installed" instead of crashing.
 *
 * The native SDK addresses remote users by integer uid, so the avatar is found by account: every
 * `onUserInfoUpdated(uid, {userAccount})` (or a `getUserInfoByUid` lookup on `onUserJoined`) is
 * matched against `live-video-push-…` (spec §2.5) and that uid is rendered with `setupRemoteVideo`.
 * Remote audio is auto-subscribed by the SDK.
 *
 * The SDK surface is declared locally (the package cannot be installed here) and injected, so the
 * adapter runs in plain Node against a typed fake (test/unit/renderer/rtc-native.test.ts).
 */
import { avatarUidFor } from '../../../electron/core/rtc-ids.ts';
import type { CallMode, RtcCredentials } from '../../../electron/contract.ts';
import { cancelledError, Emitter, RtcError, safely, type EngineEvent, type EngineState, type LiveView, type RemoteMediaProgress, type RtcEngine } from './engine.ts';

// ---------------------------------------------------------------------------------------------------
// The SDK surface used (agora-electron-sdk 4.x names; enum values from its AgoraBase/IAgoraRtcEngine)

/** ChannelProfileType.ChannelProfileLiveBroadcasting */
export const CHANNEL_PROFILE_LIVE_BROADCASTING = 1;
/** ClientRoleType.ClientRoleBroadcaster */
export const CLIENT_ROLE_BROADCASTER = 1;
/** RenderModeType.RenderModeHidden (cover) / RenderModeFit (contain) */
export const RENDER_MODE_HIDDEN = 1;
export const RENDER_MODE_FIT = 2;
/** VideoMirrorModeType.VideoMirrorModeEnabled */
export const VIDEO_MIRROR_MODE_ENABLED = 1;
/** ConnectionStateType: Disconnected 1, Connecting 2, Connected 3, Reconnecting 4, Failed 5 */
export const CONNECTION_STATE = { disconnected: 1, connecting: 2, connected: 3, reconnecting: 4, failed: 5 } as const;
/** LocalAudioStreamState.LocalAudioStreamStateFailed / LocalVideoStreamState.LocalVideoStreamStateFailed */
export const LOCAL_STREAM_STATE_FAILED = 3;

export interface NativeUserInfo {
  uid: number;
  userAccount: string;
}
export interface NativeConnection {
  channelId?: string;
  localUid?: number;
}
export interface NativeChannelMediaOptions {
  clientRoleType: number;
  publishMicrophoneTrack: boolean;
  publishCameraTrack: boolean;
  autoSubscribeAudio: boolean;
  autoSubscribeVideo: boolean;
}
export interface NativeVideoCanvas {
  uid: number;
  view: HTMLElement;
  renderMode: number;
  mirrorMode?: number;
}
export interface NativeEventHandler {
  onJoinChannelSuccess?(connection: NativeConnection, elapsed: number): void;
  onUserJoined?(connection: NativeConnection, remoteUid: number, elapsed: number): void;
  onUserOffline?(connection: NativeConnection, remoteUid: number, reason: number): void;
  onUserInfoUpdated?(uid: number, info: NativeUserInfo): void;
  onConnectionStateChanged?(connection: NativeConnection, state: number, reason: number): void;
  onTokenPrivilegeWillExpire?(connection: NativeConnection, token: string): void;
  onLocalAudioStateChanged?(connection: NativeConnection, state: number, reason: number): void;
  onLocalVideoStateChanged?(source: number, state: number, reason: number): void;
  onError?(err: number, msg: string): void;
  /** Every 2 s per remote user while its media arrives (the media watchdog's progress). */
  onRemoteVideoStats?(connection: NativeConnection, stats: { uid: number; decoderOutputFrameRate?: number; receivedBitrate?: number }): void;
  onRemoteAudioStats?(connection: NativeConnection, stats: { uid: number; receivedBitrate?: number }): void;
}
export interface NativeRtcEngine {
  initialize(context: { appId: string; channelProfile: number }): number;
  registerEventHandler(handler: NativeEventHandler): boolean;
  unregisterEventHandler(handler: NativeEventHandler): boolean;
  enableAudio(): number;
  enableVideo(): number;
  startPreview(): number;
  setupLocalVideo(canvas: NativeVideoCanvas): number;
  setupRemoteVideo(canvas: NativeVideoCanvas): number;
  /** Stop / resume receiving a remote user's stream (the media watchdog's re-subscription). */
  muteRemoteVideoStream?(uid: number, mute: boolean): number;
  muteRemoteAudioStream?(uid: number, mute: boolean): number;
  joinChannelWithUserAccount(token: string, channelId: string, userAccount: string, options: NativeChannelMediaOptions): number;
  getUserInfoByUid(uid: number): NativeUserInfo | undefined | null;
  muteLocalAudioStream(mute: boolean): number;
  /** The playback volume of every remote user, 0–400 (100: as received); before or after the join. */
  adjustPlaybackSignalVolume?(volume: number): number;
  leaveChannel(): number;
  release(sync?: boolean): void;
}
export interface NativeSdkModule {
  createAgoraRtcEngine(): NativeRtcEngine;
}

export const NATIVE_MISSING_MESSAGE = 'The native Agora engine is not installed on this machine.';

/** Load the addon from a nodeIntegration window; an RtcError('engine_unavailable') when it is not there. */
export function loadAgoraNativeSdk(req: ((id: string) => unknown) | undefined = (globalThis as { require?: (id: string) => unknown }).require): NativeSdkModule {
  let mod: unknown;
  try {
    mod = req?.('agora-electron-sdk');
  } catch (err) {
    throw new RtcError('engine_unavailable', NATIVE_MISSING_MESSAGE, { cause: err });
  }
  if (!mod || typeof (mod as Partial<NativeSdkModule>).createAgoraRtcEngine !== 'function') {
    throw new RtcError('engine_unavailable', NATIVE_MISSING_MESSAGE);
  }
  return mod as NativeSdkModule;
}

/** How long to wait for onJoinChannelSuccess before calling the join failed. */
export const NATIVE_JOIN_TIMEOUT_MS = 15_000;

// ---------------------------------------------------------------------------------------------------

export class AgoraNativeEngine implements RtcEngine {
  readonly kind = 'agora-native' as const;
  readonly #loadSdk: () => NativeSdkModule;
  readonly #events = new Emitter<EngineEvent>();
  readonly #joinTimeoutMs: number;
  #state: EngineState = 'idle';
  #closed = false;
  #engine: NativeRtcEngine | null = null;
  #handler: NativeEventHandler | null = null;
  #view: LiveView | null = null;
  #avatarUid: number | null = null;
  #joinSettled: ((err?: RtcError) => void) | null = null;
  #mode: CallMode = 'video';
  /** The avatar volume, 0–100 (`setAvatarVolume`). */
  #volume = 100;
  /** Stats reports of the avatar that showed media arriving (the SDK reports every 2 s). */
  #progress: RemoteMediaProgress = { video: 0, audio: 0 };

  constructor(loadSdk: () => NativeSdkModule = () => loadAgoraNativeSdk(), options: { joinTimeoutMs?: number } = {}) {
    this.#loadSdk = loadSdk;
    this.#joinTimeoutMs = options.joinTimeoutMs ?? NATIVE_JOIN_TIMEOUT_MS;
  }

  onEvent(listener: (event: EngineEvent) => void): () => void {
    return this.#events.on(listener);
  }

  /** The remote uid currently rendered as the avatar (for tests and diagnostics). */
  get avatarUid(): number | null {
    return this.#avatarUid;
  }

  async join(creds: RtcCredentials, mode: CallMode, view: LiveView): Promise<void> {
    if (this.#closed) throw cancelledError();
    this.#view = view;
    this.#mode = mode;
    this.#setState('joining');
    const sdk = this.#loadSdk(); // throws engine_unavailable
    const ids = avatarUidFor(creds.user_id, mode);
    const engine = sdk.createAgoraRtcEngine();
    this.#engine = engine;
    const rc = engine.initialize({ appId: creds.app_id, channelProfile: CHANNEL_PROFILE_LIVE_BROADCASTING });
    if (rc < 0) {
      this.#release();
      throw new RtcError('rtc_join_failed', `The native engine could not start (error ${rc}).`);
    }

    const accountFor = (uid: number): string | null => {
      try {
        return engine.getUserInfoByUid(uid)?.userAccount || null;
      } catch {
        return null;
      }
    };
    const consider = (uid: number, account: string | null): void => {
      if (this.#closed || !account) return;
      const isAvatar = ids.video !== null ? account === ids.video : mode === 'audio' && ids.audio.includes(account);
      if (!isAvatar || this.#avatarUid === uid) return;
      this.#avatarUid = uid;
      if (mode === 'video') engine.setupRemoteVideo({ uid, view: view.avatarHost, renderMode: RENDER_MODE_FIT });
      this.#setState('playing');
    };

    const joined = new Promise<void>((resolve, reject) => {
      this.#joinSettled = (err) => {
        this.#joinSettled = null;
        if (err) reject(err);
        else resolve();
      };
    });
    const handler: NativeEventHandler = {
      onJoinChannelSuccess: () => this.#joinSettled?.(),
      // uid → account: the account may not be known yet at onUserJoined; onUserInfoUpdated follows.
      onUserJoined: (_c, uid) => consider(uid, accountFor(uid)),
      onUserInfoUpdated: (uid, info) => consider(uid, info?.userAccount ?? null),
      onUserOffline: (_c, uid) => {
        if (uid === this.#avatarUid) {
          this.#avatarUid = null;
          this.#setState('waiting');
        }
      },
      onConnectionStateChanged: (_c, state, reason) => {
        if (state === CONNECTION_STATE.reconnecting) this.#setState('reconnecting');
        else if (state === CONNECTION_STATE.connected && this.#state === 'reconnecting') this.#setState(this.#avatarUid === null ? 'waiting' : 'playing');
        else if (state === CONNECTION_STATE.failed) {
          const error = new RtcError('rtc_disconnected', `The audio/video channel failed (reason ${reason}).`);
          if (this.#joinSettled) this.#joinSettled(new RtcError('rtc_join_failed', error.message));
          else this.#events.emit({ type: 'error', error });
        }
      },
      onRemoteVideoStats: (_c, stats) => {
        if (stats.uid === this.#avatarUid && ((stats.decoderOutputFrameRate ?? 0) > 0 || (stats.receivedBitrate ?? 0) > 0)) this.#progress.video++;
      },
      onRemoteAudioStats: (_c, stats) => {
        if (stats.uid === this.#avatarUid && (stats.receivedBitrate ?? 0) > 0) this.#progress.audio++;
      },
      onTokenPrivilegeWillExpire: () =>
        this.#events.emit({ type: 'warning', message: 'The call’s media ticket expires in about 30 seconds; a new conversation will be needed after that.', notice: 'ticketExpiring' }),
      onLocalAudioStateChanged: (_c, state, reason) => {
        if (state !== LOCAL_STREAM_STATE_FAILED) return;
        const error = new RtcError(reason === 2 ? 'microphone_denied' : 'device_missing', reason === 2 ? 'Access to the microphone was denied.' : 'The microphone could not be started.');
        if (this.#joinSettled) this.#joinSettled(error);
        else this.#events.emit({ type: 'error', error });
      },
      onLocalVideoStateChanged: (_source, state, reason) => {
        if (state !== LOCAL_STREAM_STATE_FAILED || mode !== 'video') return;
        const error = new RtcError(reason === 2 ? 'camera_denied' : 'device_missing', reason === 2 ? 'Access to the camera was denied.' : 'The camera could not be started.');
        if (this.#joinSettled) this.#joinSettled(error);
        else this.#events.emit({ type: 'error', error });
      },
    };
    this.#handler = handler;
    engine.registerEventHandler(handler);
    engine.enableAudio();
    engine.adjustPlaybackSignalVolume?.(this.#volume);
    if (mode === 'video') {
      engine.enableVideo();
      engine.setupLocalVideo({ uid: 0, view: view.selfHost, renderMode: RENDER_MODE_HIDDEN, mirrorMode: VIDEO_MIRROR_MODE_ENABLED });
      engine.startPreview();
    }

    const jrc = engine.joinChannelWithUserAccount(creds.token, creds.channel_id, creds.user_id, {
      clientRoleType: CLIENT_ROLE_BROADCASTER,
      publishMicrophoneTrack: true,
      publishCameraTrack: mode === 'video',
      autoSubscribeAudio: true,
      autoSubscribeVideo: mode === 'video',
    });
    if (jrc < 0) {
      this.#release();
      throw new RtcError('rtc_join_failed', `The call could not join its audio/video channel (error ${jrc}).`);
    }
    const timer = setTimeout(() => this.#joinSettled?.(new RtcError('rtc_join_failed', 'Joining the audio/video channel took too long.')), this.#joinTimeoutMs);
    try {
      await joined;
    } catch (err) {
      this.#release();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    if (this.#closed) throw cancelledError();
    if (this.#state === 'joining') this.#setState('waiting');
  }

  async setMuted(muted: boolean): Promise<void> {
    this.#engine?.muteLocalAudioStream(muted);
  }

  /** The avatar is the only remote voice in the channel, so the whole playback is its volume. Capped at 100:
   *  the SDK can amplify to 400, which the venue's staff did not ask for (and Agora advises against). */
  setAvatarVolume(percent: number): void {
    this.#volume = Math.min(100, Math.max(0, Math.round(percent)));
    this.#engine?.adjustPlaybackSignalVolume?.(this.#volume);
  }

  remoteMediaProgress(): RemoteMediaProgress | null {
    return this.#avatarUid === null ? null : { ...this.#progress };
  }

  /** Stop receiving the avatar's streams and receive them again; the picture is set up anew. */
  async resubscribeRemote(): Promise<void> {
    const engine = this.#engine;
    const uid = this.#avatarUid;
    const view = this.#view;
    if (this.#closed || !engine || uid === null || !view) return;
    safely(() => engine.muteRemoteAudioStream?.(uid, true));
    safely(() => engine.muteRemoteAudioStream?.(uid, false));
    if (this.#mode === 'video') {
      safely(() => engine.muteRemoteVideoStream?.(uid, true));
      safely(() => engine.muteRemoteVideoStream?.(uid, false));
      safely(() => engine.setupRemoteVideo({ uid, view: view.avatarHost, renderMode: RENDER_MODE_FIT }));
    }
  }

  resumePlayback(): void {
    /* native playback is not subject to autoplay policy */
  }

  async leave(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#joinSettled?.(cancelledError());
    this.#release();
    this.#setState('left');
    this.#events.clear();
  }

  /** Leave the channel, unregister, release the engine, detach the view. */
  #release(): void {
    const engine = this.#engine;
    this.#engine = null;
    if (engine) {
      safely(() => engine.leaveChannel());
      if (this.#handler) {
        const h = this.#handler;
        safely(() => engine.unregisterEventHandler(h));
      }
      safely(() => engine.release());
    }
    this.#handler = null;
    this.#avatarUid = null;
    this.#view?.clear();
    this.#view = null;
  }

  #setState(state: EngineState): void {
    if (this.#state === state || this.#state === 'left') return;
    this.#state = state;
    this.#events.emit({ type: 'state', state });
  }
}
