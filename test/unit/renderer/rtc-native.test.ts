/**
 * AgoraNativeEngine (agora-electron-sdk adapter) against a typed fake of the native SDK surface:
 * initialisation, the user-account join, the account → uid mapping that finds the avatar, rendering into
 * the live view, the clean-up, and the "not installed" path. Plain Node: no addon, no DOM.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AgoraNativeEngine,
  CHANNEL_PROFILE_LIVE_BROADCASTING,
  CLIENT_ROLE_BROADCASTER,
  CONNECTION_STATE,
  loadAgoraNativeSdk,
  LOCAL_STREAM_STATE_FAILED,
  NATIVE_MISSING_MESSAGE,
  RENDER_MODE_FIT,
  type NativeChannelMediaOptions,
  type NativeEventHandler,
  type NativeRtcEngine,
  type NativeSdkModule,
  type NativeUserInfo,
  type NativeVideoCanvas,
} from '../../../renderer/src/rtc/agora-native-engine.ts';
import { RtcError, type EngineEvent } from '../../../renderer/src/rtc/engine.ts';
import { AUDIO_CREDS, AVATAR_BOT_UID as AVATAR_BOT_ACCOUNT, AVATAR_VIDEO_UID as AVATAR_VIDEO_ACCOUNT, VIDEO_CREDS, fakeView } from '../../helpers/rtc-fixtures.ts';


/** A typed fake of the native engine. `joinBehaviour` decides what happens after joinChannelWithUserAccount. */
class FakeNativeEngine implements NativeRtcEngine {
  readonly log: string[] = [];
  handler: NativeEventHandler | null = null;
  readonly users = new Map<number, string>();
  joinOptions: NativeChannelMediaOptions | null = null;
  remoteCanvases: NativeVideoCanvas[] = [];
  localCanvases: NativeVideoCanvas[] = [];
  released = false;
  joinBehaviour: 'success' | 'mic-denied' | 'silent' = 'success';
  initializeResult = 0;

  initialize(context: { appId: string; channelProfile: number }): number {
    this.log.push(`initialize(${context.appId},${context.channelProfile})`);
    return this.initializeResult;
  }
  registerEventHandler(handler: NativeEventHandler): boolean {
    this.log.push('registerEventHandler');
    this.handler = handler;
    return true;
  }
  unregisterEventHandler(handler: NativeEventHandler): boolean {
    this.log.push('unregisterEventHandler');
    assert.equal(handler, this.handler);
    this.handler = null;
    return true;
  }
  enableAudio(): number {
    this.log.push('enableAudio');
    return 0;
  }
  enableVideo(): number {
    this.log.push('enableVideo');
    return 0;
  }
  startPreview(): number {
    this.log.push('startPreview');
    return 0;
  }
  setupLocalVideo(canvas: NativeVideoCanvas): number {
    this.log.push('setupLocalVideo');
    this.localCanvases.push(canvas);
    return 0;
  }
  setupRemoteVideo(canvas: NativeVideoCanvas): number {
    this.log.push(`setupRemoteVideo(${canvas.uid})`);
    this.remoteCanvases.push(canvas);
    return 0;
  }
  joinChannelWithUserAccount(token: string, channelId: string, userAccount: string, options: NativeChannelMediaOptions): number {
    this.log.push(`joinChannelWithUserAccount(${token},${channelId},${userAccount})`);
    this.joinOptions = options;
    queueMicrotask(() => {
      if (this.joinBehaviour === 'success') this.handler?.onJoinChannelSuccess?.({ channelId, localUid: 1 }, 12);
      else if (this.joinBehaviour === 'mic-denied') this.handler?.onLocalAudioStateChanged?.({ channelId }, LOCAL_STREAM_STATE_FAILED, 2);
    });
    return 0;
  }
  getUserInfoByUid(uid: number): NativeUserInfo | undefined {
    const account = this.users.get(uid);
    return account ? { uid, userAccount: account } : undefined;
  }
  muteLocalAudioStream(mute: boolean): number {
    this.log.push(`muteLocalAudioStream(${mute})`);
    return 0;
  }
  adjustPlaybackSignalVolume(volume: number): number {
    this.log.push(`adjustPlaybackSignalVolume(${volume})`);
    return 0;
  }
  leaveChannel(): number {
    this.log.push('leaveChannel');
    return 0;
  }
  release(): void {
    this.log.push('release');
    this.released = true;
  }

  /** A remote user joins; its account becomes known (`infoFirst`: before onUserJoined). */
  remoteJoins(uid: number, account: string, infoFirst: boolean): void {
    const h = this.handler!;
    if (infoFirst) {
      this.users.set(uid, account);
      h.onUserJoined?.({}, uid, 0);
    } else {
      h.onUserJoined?.({}, uid, 0);
      this.users.set(uid, account);
      h.onUserInfoUpdated?.(uid, { uid, userAccount: account });
    }
  }
}

function setup(options: { joinTimeoutMs?: number } = {}) {
  const native = new FakeNativeEngine();
  const sdk: NativeSdkModule = { createAgoraRtcEngine: () => native };
  const engine = new AgoraNativeEngine(() => sdk, options);
  const events: EngineEvent[] = [];
  engine.onEvent((e) => events.push(e));
  return { native, engine, events, view: fakeView(), states: () => events.flatMap((e) => (e.type === 'state' ? [e.state] : [])) };
}

describe('AgoraNativeEngine', () => {
  describe('in video mode', () => {
    it('initialises for live broadcasting and joins with the user account as a broadcaster publishing microphone and camera', async () => {
      const { native, engine, view, states } = setup();
      await engine.join(VIDEO_CREDS, 'video', view);
      assert.deepEqual(native.log, [
        `initialize(${VIDEO_CREDS.app_id},${CHANNEL_PROFILE_LIVE_BROADCASTING})`,
        'registerEventHandler',
        'enableAudio',
        'adjustPlaybackSignalVolume(100)',
        'enableVideo',
        'setupLocalVideo',
        'startPreview',
        `joinChannelWithUserAccount(${VIDEO_CREDS.token},${VIDEO_CREDS.channel_id},${VIDEO_CREDS.user_id})`,
      ]);
      assert.deepEqual(native.joinOptions, {
        clientRoleType: CLIENT_ROLE_BROADCASTER,
        publishMicrophoneTrack: true,
        publishCameraTrack: true,
        autoSubscribeAudio: true,
        autoSubscribeVideo: true,
      });
      assert.equal(native.localCanvases[0]!.view, view.selfHost, 'the self-view goes to the self host');
      assert.deepEqual(states(), ['joining', 'waiting']);
    });

    it('maps the avatar account to its uid when onUserInfoUpdated arrives, and renders only that uid into the avatar host (fit)', async () => {
      const { native, engine, view, states } = setup();
      await engine.join(VIDEO_CREDS, 'video', view);
      native.remoteJoins(1001, AVATAR_BOT_ACCOUNT, false);
      native.remoteJoins(1002, 'live-user-someone-else', false);
      assert.deepEqual(native.remoteCanvases, [], 'nobody else is rendered');
      native.remoteJoins(2024, AVATAR_VIDEO_ACCOUNT, false);
      assert.deepEqual(native.remoteCanvases, [{ uid: 2024, view: view.avatarHost, renderMode: RENDER_MODE_FIT }]);
      assert.equal(engine.avatarUid, 2024);
      assert.equal(states().at(-1), 'playing');
      // A repeated info update does not set the view up twice.
      native.handler!.onUserInfoUpdated!(2024, { uid: 2024, userAccount: AVATAR_VIDEO_ACCOUNT });
      assert.equal(native.remoteCanvases.length, 1);
    });

    it('maps through getUserInfoByUid when the account is already known at onUserJoined', async () => {
      const { native, engine, view } = setup();
      await engine.join(VIDEO_CREDS, 'video', view);
      native.remoteJoins(77, AVATAR_VIDEO_ACCOUNT, true);
      assert.deepEqual(native.remoteCanvases, [{ uid: 77, view: view.avatarHost, renderMode: RENDER_MODE_FIT }]);
    });

    it('goes back to waiting when the avatar leaves, and reports RTC reconnection', async () => {
      const { native, engine, view, states } = setup();
      await engine.join(VIDEO_CREDS, 'video', view);
      native.remoteJoins(5, AVATAR_VIDEO_ACCOUNT, true);
      native.handler!.onConnectionStateChanged!({}, CONNECTION_STATE.reconnecting, 0);
      native.handler!.onConnectionStateChanged!({}, CONNECTION_STATE.connected, 0);
      native.handler!.onUserOffline!({}, 5, 0);
      assert.deepEqual(states(), ['joining', 'waiting', 'playing', 'reconnecting', 'playing', 'waiting']);
      assert.equal(engine.avatarUid, null);
    });

    it('leave leaves the channel, unregisters, releases the engine and clears the view — once', async () => {
      const { native, engine, view, states } = setup();
      await engine.join(VIDEO_CREDS, 'video', view);
      native.remoteJoins(5, AVATAR_VIDEO_ACCOUNT, true);
      native.log.length = 0;
      await engine.leave();
      assert.deepEqual(native.log, ['leaveChannel', 'unregisterEventHandler', 'release']);
      assert.ok(view.cleared >= 1);
      assert.equal(states().at(-1), 'left');
      await engine.leave();
      assert.deepEqual(native.log, ['leaveChannel', 'unregisterEventHandler', 'release'], 'idempotent');
    });
  });

  describe('in audio mode', () => {
    it('enables no video, publishes only the microphone, and renders nothing', async () => {
      const { native, engine, view, states } = setup();
      await engine.join(AUDIO_CREDS, 'audio', view);
      assert.ok(!native.log.includes('enableVideo'));
      assert.ok(!native.log.includes('setupLocalVideo'));
      assert.equal(native.joinOptions!.publishCameraTrack, false);
      assert.equal(native.joinOptions!.autoSubscribeVideo, false);
      assert.equal(native.joinOptions!.publishMicrophoneTrack, true);
      native.remoteJoins(9, AVATAR_BOT_ACCOUNT, false);
      assert.deepEqual(native.remoteCanvases, []);
      assert.equal(states().at(-1), 'playing', 'the avatar voice is there');
    });
  });

  describe('when joining fails', () => {
    it('a denied microphone rejects with microphone_denied and releases the engine', async () => {
      const { native, engine, view } = setup();
      native.joinBehaviour = 'mic-denied';
      await assert.rejects(engine.join(VIDEO_CREDS, 'video', view), (e: unknown) => e instanceof RtcError && e.kind === 'microphone_denied');
      assert.ok(native.released);
      assert.ok(native.log.includes('leaveChannel'));
    });

    it('no onJoinChannelSuccess in time rejects with rtc_join_failed', async () => {
      const { native, engine, view } = setup({ joinTimeoutMs: 20 });
      native.joinBehaviour = 'silent';
      await assert.rejects(engine.join(VIDEO_CREDS, 'video', view), (e: unknown) => e instanceof RtcError && e.kind === 'rtc_join_failed');
      assert.ok(native.released);
    });

    it('leave while joining cancels the join and releases everything', async () => {
      const { native, engine, view } = setup();
      native.joinBehaviour = 'silent';
      const join = engine.join(VIDEO_CREDS, 'video', view);
      await engine.leave();
      await assert.rejects(join, (e: unknown) => e instanceof RtcError && e.kind === 'cancelled');
      assert.ok(native.released);
    });
  });

  describe('loading the addon', () => {
    it('reports a clear engine_unavailable error when agora-electron-sdk is not installed', () => {
      const missing = () => {
        throw Object.assign(new Error("Cannot find module 'agora-electron-sdk'"), { code: 'MODULE_NOT_FOUND' });
      };
      assert.throws(() => loadAgoraNativeSdk(missing), (e: unknown) => e instanceof RtcError && e.kind === 'engine_unavailable' && e.message === NATIVE_MISSING_MESSAGE);
    });

    it('reports the same when there is no require at all (a sandboxed window)', () => {
      assert.throws(() => loadAgoraNativeSdk(undefined), (e: unknown) => e instanceof RtcError && e.kind === 'engine_unavailable');
      assert.throws(() => loadAgoraNativeSdk(() => ({})), (e: unknown) => e instanceof RtcError && e.message === NATIVE_MISSING_MESSAGE);
    });

    it('the default engine in plain Node (no global require) fails to join with engine_unavailable', async () => {
      const engine = new AgoraNativeEngine();
      await assert.rejects(engine.join(VIDEO_CREDS, 'video', fakeView()), (e: unknown) => e instanceof RtcError && e.kind === 'engine_unavailable');
    });

    it('passes the module through when it has createAgoraRtcEngine', () => {
      const mod: NativeSdkModule = { createAgoraRtcEngine: () => new FakeNativeEngine() };
      const seen: string[] = [];
      assert.equal(
        loadAgoraNativeSdk((id) => {
          seen.push(id);
          return mod;
        }),
        mod,
      );
      assert.deepEqual(seen, ['agora-electron-sdk']);
    });
  });

  it('plays the avatar at the avatar volume: set before the call (at the join) and during it, never amplified past 100', async () => {
    const { native, engine, view } = setup();
    engine.setAvatarVolume(40);
    await engine.join(VIDEO_CREDS, 'video', view);
    engine.setAvatarVolume(75);
    engine.setAvatarVolume(250);
    assert.deepEqual(native.log.filter((l) => l.startsWith('adjustPlaybackSignalVolume')), ['adjustPlaybackSignalVolume(40)', 'adjustPlaybackSignalVolume(75)', 'adjustPlaybackSignalVolume(100)']);
    assert.ok(native.log.indexOf('adjustPlaybackSignalVolume(40)') < native.log.findIndex((l) => l.startsWith('joinChannelWithUserAccount')), 'before the join');
  });

  it('mutes through muteLocalAudioStream', async () => {
    const { native, engine, view } = setup();
    await engine.join(VIDEO_CREDS, 'video', view);
    await engine.setMuted(true);
    assert.ok(native.log.includes('muteLocalAudioStream(true)'));
  });
});
