/**
 * AgoraWebEngine (agora-rtc-sdk-ng adapter) against a typed fake of the SDK: the spec §2.5 web flow,
 * in order, and the clean-up whatever ends the call.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AgoraWebEngine,
  type AgoraConnectionState,
  type AgoraDeviceInfo,
  type AgoraNetworkQuality,
  type AgoraRemoteAudioStats,
  type AgoraRemoteVideoStats,
  type AgoraRtcStats,
  type AgoraLocalTrack,
  type AgoraMediaType,
  type AgoraPlayConfig,
  type AgoraRemoteTrack,
  type AgoraRemoteUser,
  type AgoraUid,
  type AgoraWebClient,
  type AgoraWebSdk,
} from '../../../renderer/src/rtc/agora-web-engine.ts';
import { RtcError, type EngineEvent, type LiveView } from '../../../renderer/src/rtc/engine.ts';
import { AUDIO_CREDS, AVATAR_BOT_UID, AVATAR_VIDEO_UID, VIDEO_CREDS, fakeView } from '../../helpers/rtc-fixtures.ts';


const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Lets the engine run until it says its side is ready (bounded: a few hundred turns of the loop). */
async function untilReady(events: EngineEvent[]): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (events.some((e) => e.type === 'ready')) return;
    await tick();
  }
  assert.fail('the engine never said it was ready');
}


type Listener = (...args: never[]) => void;

class FakeLocalTrack implements AgoraLocalTrack {
  stopped = false;
  closed = false;
  muted = false;
  played: { element: HTMLElement; config?: AgoraPlayConfig | undefined } | null = null;
  readonly ended = new Set<() => void>();
  devices: string[] = [];
  on(_event: 'track-ended', listener: () => void): void {
    this.ended.add(listener);
  }
  async setDevice(deviceId: string): Promise<void> {
    this.devices.push(deviceId);
    this.log.push(`${this.name}.setDevice(${deviceId})`);
  }
  /** The device behind the track went away. */
  end(): void {
    for (const l of this.ended) l();
  }
  constructor(
    readonly name: 'mic' | 'camera',
    private readonly log: string[],
  ) {}
  async setMuted(muted: boolean): Promise<void> {
    this.muted = muted;
    this.log.push(`${this.name}.setMuted(${muted})`);
  }
  play(element: HTMLElement, config?: AgoraPlayConfig): void {
    this.played = { element, config };
    this.log.push(`${this.name}.play`);
  }
  stop(): void {
    this.stopped = true;
    this.log.push(`${this.name}.stop`);
  }
  close(): void {
    this.closed = true;
    this.log.push(`${this.name}.close`);
  }
}

class FakeRemoteTrack implements AgoraRemoteTrack {
  stopped = false;
  played: Array<{ element?: HTMLElement | undefined; config?: AgoraPlayConfig | undefined }> = [];
  constructor(
    readonly label: string,
    private readonly log: string[],
  ) {}
  play(element?: HTMLElement, config?: AgoraPlayConfig): void {
    this.played.push({ element, config });
    this.log.push(`${this.label}.play`);
  }
  stop(): void {
    this.stopped = true;
    this.log.push(`${this.label}.stop`);
  }
  setVolume(volume: number): void {
    this.log.push(`${this.label}.setVolume(${volume})`);
  }
}

class FakeClient implements AgoraWebClient {
  readonly listeners = new Map<string, Listener>();
  readonly remote: FakeRemoteTrack[] = [];
  left = false;
  joinError: Error | null = null;
  /** The join never settles (an unreachable gateway). */
  joinHangs = false;
  proxyModes: Array<number | undefined> = [];
  startProxyServer(mode?: number): void {
    this.log.push(`startProxyServer(${String(mode)})`);
    this.proxyModes.push(mode);
  }
  constructor(private readonly log: string[]) {}
  on(event: string, listener: Listener): void {
    this.log.push(`on:${event}`);
    this.listeners.set(event, listener);
  }
  removeAllListeners(): void {
    this.log.push('removeAllListeners');
    this.listeners.clear();
  }
  async join(appId: string, channel: string, token: string | null, uid?: AgoraUid | null): Promise<AgoraUid> {
    this.log.push(`join(${appId},${channel},${token},${String(uid)})`);
    if (this.joinError) throw this.joinError;
    if (this.joinHangs) await new Promise(() => {});
    if (this.joinRetriesUntilLeave) {
      // As agora-rtc-sdk-ng 4.24 on a refusing network: it retries its gateway until the client leaves.
      await new Promise<void>((_, reject) => (this.#abortJoin = () => reject(Object.assign(new Error('AgoraRTCError OPERATION_ABORTED: cancel token canceled'), { name: 'AgoraRTCException', code: 'OPERATION_ABORTED' }))));
    }
    return uid ?? 0;
  }
  async publish(tracks: AgoraLocalTrack | AgoraLocalTrack[]): Promise<void> {
    for (const t of Array.isArray(tracks) ? tracks : [tracks]) this.log.push(`publish:${(t as FakeLocalTrack).name}`);
  }
  async subscribe(user: AgoraRemoteUser, mediaType: 'video' | 'audio'): Promise<AgoraRemoteTrack> {
    this.log.push(`subscribe:${String(user.uid)}:${mediaType}`);
    const track = new FakeRemoteTrack(`${String(user.uid)}:${mediaType}`, this.log);
    this.remote.push(track);
    return track;
  }
  rtcStats: Omit<AgoraRtcStats, "RecvBytes"> & { RecvBytes?: number } = { RecvBitrate: 0, RTT: 0 };
  videoStats: Record<string, AgoraRemoteVideoStats> = {};
  audioStats: Record<string, AgoraRemoteAudioStats> = {};
  getRTCStats(): Omit<AgoraRtcStats, "RecvBytes"> & { RecvBytes?: number } {
    return this.rtcStats;
  }
  getRemoteVideoStats(): Record<string, AgoraRemoteVideoStats> {
    return this.videoStats;
  }
  getRemoteAudioStats(): Record<string, AgoraRemoteAudioStats> {
    return this.audioStats;
  }
  connectionState: AgoraConnectionState = 'CONNECTED';
  joinRetriesUntilLeave = false;
  #abortJoin: (() => void) | null = null;
  async leave(): Promise<void> {
    this.#abortJoin?.();
    this.left = true;
    this.log.push('leave');
  }
  /** Simulate the SDK raising an event. */
  emit(event: 'user-published' | 'user-unpublished', user: AgoraRemoteUser, mediaType: AgoraMediaType): void;
  emit(event: 'connection-state-change', cur: AgoraConnectionState, prev: AgoraConnectionState, reason?: string): void;
  emit(event: 'token-privilege-will-expire' | 'token-privilege-did-expire'): void;
  emit(event: 'network-quality', stats: AgoraNetworkQuality): void;
  emit(event: string, ...args: unknown[]): void {
    const l = this.listeners.get(event) as ((...a: unknown[]) => void) | undefined;
    assert.ok(l, `a listener for ${event} is registered`);
    l(...args);
  }
}

class FakeSdk implements AgoraWebSdk {
  readonly log: string[] = [];
  client: FakeClient | null = null;
  mic: FakeLocalTrack | null = null;
  camera: FakeLocalTrack | null = null;
  micError: Error | null = null;
  cameraError: Error | null = null;
  onAutoplayFailed?: (() => void) | undefined;
  onMicrophoneChanged?: ((info: AgoraDeviceInfo) => void) | undefined;
  onCameraChanged?: ((info: AgoraDeviceInfo) => void) | undefined;
  microphones: Array<{ deviceId: string }> = [{ deviceId: 'default' }];
  cameras: Array<{ deviceId: string }> = [{ deviceId: 'cam-1' }];
  async getMicrophones(): Promise<Array<{ deviceId: string }>> {
    return this.microphones;
  }
  async getCameras(): Promise<Array<{ deviceId: string }>> {
    return this.cameras;
  }
  /** Resolves createMicrophoneAudioTrack only when released (to test leave during join). */
  holdMic: Promise<void> | null = null;
  /** Resolves createCameraVideoTrack only when released (a camera that takes its time to open). */
  holdCamera: Promise<void> | null = null;
  createClient(config: { mode: 'rtc' | 'live'; codec: string }): AgoraWebClient {
    this.log.push(`createClient(${config.mode},${config.codec})`);
    this.client = new FakeClient(this.log);
    return this.client;
  }
  async createMicrophoneAudioTrack(): Promise<AgoraLocalTrack> {
    this.log.push('createMicrophoneAudioTrack');
    if (this.holdMic) await this.holdMic;
    if (this.micError) throw this.micError;
    this.mic = new FakeLocalTrack('mic', this.log);
    return this.mic;
  }
  async createCameraVideoTrack(): Promise<AgoraLocalTrack> {
    this.log.push('createCameraVideoTrack');
    if (this.holdCamera) await this.holdCamera;
    if (this.cameraError) throw this.cameraError;
    this.camera = new FakeLocalTrack('camera', this.log);
    return this.camera;
  }
}

function setup(options: { joinTimeoutMs?: number; cloudProxy?: 'off' | 'udp' | 'tcp'; deviceGraceMs?: number; deviceRetryMs?: number } = {}) {
  const sdk = new FakeSdk();
  const engine = new AgoraWebEngine(sdk, options);
  const events: EngineEvent[] = [];
  engine.onEvent((e) => events.push(e));
  const view = fakeView();
  return { sdk, engine, events, view, states: () => events.filter((e) => e.type === 'state').map((e) => (e as { state: string }).state) };
}

function domError(name: string): Error {
  const e = new Error(`${name}: simulated`);
  e.name = name;
  return e;
}

describe('AgoraWebEngine', () => {
  describe('in video mode', () => {
    it('registers user-published before join, joins with the rtc fields and the string uid, then publishes the microphone and then the camera', async () => {
      const { sdk, engine, view } = setup();
      await engine.join(VIDEO_CREDS, 'video', view);
      const log = sdk.log;
      const at = (entry: string) => {
        const i = log.indexOf(entry);
        assert.ok(i >= 0, `${entry} happened (log: ${log.join(' | ')})`);
        return i;
      };
      const join = at(`join(${VIDEO_CREDS.app_id},${VIDEO_CREDS.channel_id},${VIDEO_CREDS.token},${VIDEO_CREDS.user_id})`);
      assert.ok(at('on:user-published') < join, 'user-published is registered before join (spec §2.5)');
      assert.ok(at('on:connection-state-change') < join);
      assert.ok(at('on:token-privilege-will-expire') < join);
      assert.ok(at('createMicrophoneAudioTrack') < join, 'devices are opened before entering the channel');
      assert.ok(join < at('publish:mic'), 'the microphone is published after joining');
      assert.ok(at('publish:mic') < at('publish:camera'), 'microphone first (required), then the camera');
      assert.deepEqual(
        log.filter((l) => l.startsWith('publish:')),
        ['publish:mic', 'publish:camera'],
      );
      assert.equal(log.filter((l) => l.startsWith('join(')).length, 1);
      assert.deepEqual(sdk.camera!.played, { element: view.selfHost, config: { fit: 'cover', mirror: true } }, 'self-view: mirrored, in the self host');
      assert.equal(typeof sdk.onAutoplayFailed, 'function', 'autoplay failures are handled');
    });

    it('subscribes to and renders only the avatar: video from live-video-push-… into the avatar host (contain), audio from the avatar uids', async () => {
      const { sdk, engine, view, states } = setup();
      await engine.join(VIDEO_CREDS, 'video', view);
      const client = sdk.client!;
      client.emit('user-published', { uid: 'someone-else' }, 'video');
      client.emit('user-published', { uid: 'someone-else' }, 'audio');
      client.emit('user-published', { uid: AVATAR_VIDEO_UID }, 'video');
      client.emit('user-published', { uid: AVATAR_BOT_UID }, 'audio');
      await tick();
      await tick();
      assert.deepEqual(
        sdk.log.filter((l) => l.startsWith('subscribe:')),
        [`subscribe:${AVATAR_VIDEO_UID}:video`, `subscribe:${AVATAR_BOT_UID}:audio`],
      );
      const video = client.remote.find((t) => t.label === `${AVATAR_VIDEO_UID}:video`)!;
      assert.deepEqual(video.played, [{ element: view.avatarHost, config: { fit: 'contain', mirror: false } }]);
      const audio = client.remote.find((t) => t.label === `${AVATAR_BOT_UID}:audio`)!;
      assert.equal(audio.played.length, 1, 'the avatar audio plays');
      assert.deepEqual(states(), ['joining', 'waiting', 'playing']);
    });

    it('leave stops and closes both local tracks, stops remote tracks, leaves the channel and clears the view', async () => {
      const { sdk, engine, view, states } = setup();
      await engine.join(VIDEO_CREDS, 'video', view);
      sdk.client!.emit('user-published', { uid: AVATAR_VIDEO_UID }, 'video');
      await tick();
      await engine.leave();
      assert.ok(sdk.mic!.stopped && sdk.mic!.closed, 'microphone stopped and closed');
      assert.ok(sdk.camera!.stopped && sdk.camera!.closed, 'camera stopped and closed');
      assert.ok(sdk.client!.remote.every((t) => t.stopped), 'remote tracks stopped');
      assert.ok(sdk.client!.left, 'left the channel');
      assert.equal(sdk.client!.listeners.size, 0, 'listeners removed');
      assert.equal(sdk.onAutoplayFailed, undefined);
      assert.ok(view.cleared >= 1, 'view cleared');
      assert.equal(states().at(-1), 'left');
      const stops = sdk.log.indexOf('mic.stop');
      assert.ok(stops >= 0 && stops < sdk.log.indexOf('leave'), 'tracks are released before leaving');
      await engine.leave(); // idempotent
      assert.equal(sdk.log.filter((l) => l === 'leave').length, 1);
    });

    it('is ready once the microphone is published; a camera still opening does not hold conn_init back', async () => {
      const { sdk, engine, view, events } = setup();
      let openCamera!: () => void;
      sdk.holdCamera = new Promise<void>((r) => (openCamera = r));
      sdk.log.length = 0;
      const joined = engine.join(VIDEO_CREDS, 'video', view);
      sdk.log.push('(waiting for ready)');
      await untilReady(events);
      sdk.log.push('ready');
      openCamera();
      await joined;
      assert.deepEqual(
        sdk.log.filter((l) => /^(createMicrophone|createCamera|join\(|publish:|ready$)/.test(l)),
        ['createMicrophoneAudioTrack', 'createCameraVideoTrack', `join(${VIDEO_CREDS.app_id},${VIDEO_CREDS.channel_id},${VIDEO_CREDS.token},${VIDEO_CREDS.user_id})`, 'publish:mic', 'ready', 'publish:camera'],
      );
      assert.deepEqual(sdk.camera!.played, { element: view.selfHost, config: { fit: 'cover', mirror: true } });
    });

    it('a camera that fails after our side is ready ends the join with its error and releases everything', async () => {
      const { sdk, engine, view, events } = setup();
      let openCamera!: () => void;
      sdk.holdCamera = new Promise<void>((r) => (openCamera = r));
      const joined = engine.join(VIDEO_CREDS, 'video', view);
      await untilReady(events);
      sdk.cameraError = domError('NotReadableError');
      openCamera();
      await assert.rejects(joined, (e: unknown) => e instanceof RtcError && e.kind === 'device_missing');
      assert.ok(sdk.mic!.stopped && sdk.mic!.closed);
      assert.ok(sdk.client!.left);
      assert.deepEqual(sdk.log.filter((l) => l.startsWith('publish:')), ['publish:mic']);
    });
  });

  describe('in audio mode', () => {
    it('publishes only the microphone, opens no camera, and plays audio from live-bot-… only', async () => {
      const { sdk, engine, view, states } = setup();
      await engine.join(AUDIO_CREDS, 'audio', view);
      assert.ok(!sdk.log.includes('createCameraVideoTrack'), 'no camera in audio mode');
      assert.deepEqual(sdk.log.filter((l) => l.startsWith('publish:')), ['publish:mic']);
      assert.ok(sdk.log.includes(`join(${AUDIO_CREDS.app_id},${AUDIO_CREDS.channel_id},${AUDIO_CREDS.token},${AUDIO_CREDS.user_id})`));
      sdk.client!.emit('user-published', { uid: AVATAR_VIDEO_UID }, 'video');
      sdk.client!.emit('user-published', { uid: AVATAR_BOT_UID }, 'audio');
      await tick();
      assert.deepEqual(sdk.log.filter((l) => l.startsWith('subscribe:')), [`subscribe:${AVATAR_BOT_UID}:audio`]);
      assert.equal(states().at(-1), 'playing');
    });
  });

  describe('the avatar volume', () => {
    it("sets the avatar voice's track to it before it plays, and again when it changes; the picture's track is left alone", async () => {
      const { sdk, engine, view } = setup();
      engine.setAvatarVolume(40);
      await engine.join(AUDIO_CREDS, 'audio', view);
      sdk.client!.emit('user-published', { uid: AVATAR_BOT_UID }, 'audio');
      await tick();
      engine.setAvatarVolume(75);
      const voice = `${AVATAR_BOT_UID}:audio`;
      assert.deepEqual(sdk.log.filter((l) => l.startsWith(voice)), [`${voice}.setVolume(40)`, `${voice}.play`, `${voice}.setVolume(75)`]);

      const video = setup();
      await video.engine.join(VIDEO_CREDS, 'video', video.view);
      video.sdk.client!.emit('user-published', { uid: AVATAR_VIDEO_UID }, 'video');
      await tick();
      video.engine.setAvatarVolume(30);
      assert.deepEqual(video.sdk.log.filter((l) => l.includes('setVolume')), []);
    });
  });

  describe('when a device is unavailable', () => {
    it('a denied microphone rejects with microphone_denied before joining, and nothing stays open', async () => {
      const { sdk, engine, view } = setup();
      const agoraError = Object.assign(new Error('AgoraRTCError PERMISSION_DENIED: NotAllowedError: Permission denied'), { code: 'PERMISSION_DENIED' });
      sdk.micError = agoraError;
      await assert.rejects(engine.join(VIDEO_CREDS, 'video', view), (e: unknown) => e instanceof RtcError && e.kind === 'microphone_denied');
      assert.ok(!sdk.log.some((l) => l.startsWith('join(')), 'never joined');
      assert.ok(!sdk.log.includes('createCameraVideoTrack'));
      assert.ok(sdk.client!.left && sdk.client!.listeners.size === 0, 'client released');
      assert.ok(view.cleared >= 1);
    });

    it('a missing camera rejects with device_missing before our side is ready: nothing published, the channel left', async () => {
      const { sdk, engine, view, events } = setup();
      sdk.cameraError = domError('NotFoundError');
      await assert.rejects(engine.join(VIDEO_CREDS, 'video', view), (e: unknown) => e instanceof RtcError && e.kind === 'device_missing');
      assert.ok(sdk.mic!.stopped && sdk.mic!.closed);
      assert.ok(!sdk.log.some((l) => l.startsWith('publish:')), 'nothing published');
      assert.ok(sdk.client!.left, 'the channel is left');
      assert.ok(!events.some((e) => e.type === 'ready'), 'never ready: conn_init is never sent');
    });

    it('a failed join rejects with rtc_join_failed and releases the local tracks', async () => {
      const { sdk, engine, view } = setup();
      const join = engine.join(VIDEO_CREDS, 'video', view);
      sdk.client!.joinError = new Error('CAN_NOT_GET_GATEWAY_SERVER');
      await assert.rejects(join, (e: unknown) => e instanceof RtcError && e.kind === 'rtc_join_failed');
      assert.ok(sdk.mic!.closed && sdk.camera!.closed);
    });
  });

  it('gives up on a join that never completes (rtc_join_failed) and leaves the channel', async () => {
    const { sdk, engine, view } = setup({ joinTimeoutMs: 20 });
    const join = engine.join(VIDEO_CREDS, 'video', view);
    sdk.client!.joinHangs = true; // the client exists as soon as join() starts
    await assert.rejects(join, (e: unknown) => e instanceof RtcError && e.kind === 'rtc_join_failed' && /too long \(the SDK's join never answered\)/.test(e.message));
    assert.ok(sdk.client!.left, 'leave() aborts the pending join');
    assert.ok(sdk.mic!.closed && sdk.camera!.closed);
    assert.ok(!sdk.log.some((l) => l.startsWith('publish:')));
  });

  it('at the bound, the SDK\'s own join error is in the message (its join ends when the client leaves)', async () => {
    const { sdk, engine, view } = setup({ joinTimeoutMs: 20 });
    const join = engine.join(VIDEO_CREDS, 'video', view);
    sdk.client!.joinRetriesUntilLeave = true;
    await assert.rejects(join, (e: unknown) => e instanceof RtcError && e.kind === 'rtc_join_failed' && /too long \(the SDK's join ended with AgoraRTCException OPERATION_ABORTED/.test(e.message));
  });

  it('a join error the SDK reports at once is named in the message', async () => {
    const { sdk, engine, view } = setup();
    const join = engine.join(VIDEO_CREDS, 'video', view);
    sdk.client!.joinError = Object.assign(new Error('invalid vendor key'), { name: 'AgoraRTCException', code: 'CAN_NOT_GET_GATEWAY_SERVER' });
    await assert.rejects(join, (e: unknown) => e instanceof RtcError && /AgoraRTCException CAN_NOT_GET_GATEWAY_SERVER: invalid vendor key/.test(e.message));
  });

  it('leave during join cancels it: nothing is published and every track is closed', async () => {
    const { sdk, engine, view } = setup();
    let release!: () => void;
    sdk.holdMic = new Promise<void>((r) => (release = r));
    const join = engine.join(VIDEO_CREDS, 'video', view);
    await tick();
    const left = engine.leave();
    release();
    await assert.rejects(join, (e: unknown) => e instanceof RtcError && e.kind === 'cancelled');
    await left;
    assert.ok(!sdk.log.some((l) => l.startsWith('join(') || l.startsWith('publish:')));
    assert.ok(sdk.mic!.stopped && sdk.mic!.closed);
  });

  it('reports autoplay blocking, RTC reconnection, token expiry and an unexpected disconnect', async () => {
    const { sdk, engine, view, events, states } = setup();
    await engine.join(VIDEO_CREDS, 'video', view);
    sdk.onAutoplayFailed!();
    sdk.client!.emit('connection-state-change', 'RECONNECTING', 'CONNECTED');
    sdk.client!.emit('connection-state-change', 'CONNECTED', 'RECONNECTING');
    sdk.client!.emit('token-privilege-will-expire');
    sdk.client!.emit('connection-state-change', 'DISCONNECTED', 'CONNECTED', 'NETWORK_ERROR');
    assert.ok(events.some((e) => e.type === 'autoplay-blocked'));
    assert.deepEqual(states(), ['joining', 'waiting', 'reconnecting', 'waiting']);
    assert.ok(events.some((e) => e.type === 'warning' && /expires/.test(e.message)));
    const error = events.find((e) => e.type === 'error');
    assert.ok(error && error.type === 'error' && error.error.kind === 'rtc_disconnected');
  });

  it('mutes the published microphone (and a microphone opened later starts muted)', async () => {
    const { sdk, engine, view } = setup();
    await engine.setMuted(true);
    await engine.join(VIDEO_CREDS, 'video', view);
    assert.equal(sdk.mic!.muted, true);
    await engine.setMuted(false);
    assert.equal(sdk.mic!.muted, false);
  });
});

describe('AgoraWebEngine connection figures', () => {
  const qualities = (events: EngineEvent[]) => events.filter((e) => e.type === 'quality').map((e) => (e as Extract<EngineEvent, { type: 'quality' }>).sample);

  it("reads the call's stats with each network-quality event: kbps, the avatar video's loss and frame rate, RTT, the worse direction's level", async () => {
    const { sdk, engine, events, view } = setup();
    await engine.join(VIDEO_CREDS, 'video', view);
    const client = sdk.client!;
    client.rtcStats = { RecvBitrate: 1_234_567, RTT: 48 };
    client.videoStats = { 'someone-else': { packetLossRate: 50, receiveFrameRate: 5 }, [AVATAR_VIDEO_UID]: { packetLossRate: 1.5, receiveFrameRate: 24, renderFrameRate: 23 } };
    client.audioStats = { [AVATAR_BOT_UID]: { packetLossRate: 9 } };
    client.emit('network-quality', { uplinkNetworkQuality: 1, downlinkNetworkQuality: 2 });
    client.rtcStats = { RecvBitrate: 300_000, RTT: 700 };
    client.videoStats = { [AVATAR_VIDEO_UID]: { packetLossRate: 18, renderFrameRate: 7 } };
    client.emit('network-quality', { uplinkNetworkQuality: 2, downlinkNetworkQuality: 5 });
    assert.deepEqual(qualities(events), [
      { bitrateKbps: 1235, packetLossPct: 1.5, frameRate: 24, rttMs: 48, level: 'good' },
      { bitrateKbps: 300, packetLossPct: 18, frameRate: 7, rttMs: 700, level: 'poor' },
    ]);
  });

  it('in an audio call: the avatar audio track loss, frame rate 0', async () => {
    const { sdk, engine, events, view } = setup();
    await engine.join(AUDIO_CREDS, 'audio', view);
    const client = sdk.client!;
    client.rtcStats = { RecvBitrate: 48_000, RTT: 30 };
    client.audioStats = { [AVATAR_BOT_UID]: { packetLossRate: 2.25 }, 'someone-else': { packetLossRate: 40 } };
    client.emit('network-quality', { uplinkNetworkQuality: 3, downlinkNetworkQuality: 1 });
    assert.deepEqual(qualities(events), [{ bitrateKbps: 48, packetLossPct: 2.25, frameRate: 0, rttMs: 30, level: 'fair' }]);
  });

  it('a pre-joined spare reports nothing before the tap', async () => {
    const { sdk, engine, events, view } = setup();
    await engine.prejoin(VIDEO_CREDS, 'video', view);
    sdk.client!.emit('network-quality', { uplinkNetworkQuality: 5, downlinkNetworkQuality: 5 });
    assert.deepEqual(qualities(events), []);
  });
});

describe('AgoraWebEngine pre-join (a spare session, ahead of the tap)', () => {
  it('joins receive-only: listeners before the join, no microphone or camera track, nothing published', async () => {
    const { sdk, engine, view } = setup();
    await engine.prejoin(VIDEO_CREDS, 'video', view);
    const log = [...sdk.log];
    const join = log.indexOf(`join(${VIDEO_CREDS.app_id},${VIDEO_CREDS.channel_id},${VIDEO_CREDS.token},${VIDEO_CREDS.user_id})`);
    assert.ok(join > log.indexOf('on:user-published') && log.indexOf('on:user-published') >= 0, 'the remote handler is in place before the join');
    assert.deepEqual(log.filter((l) => /^create(Microphone|Camera)|^publish:/.test(l)), [], 'no local track exists and nothing is published');
    assert.equal(sdk.mic, null);
    assert.equal(sdk.camera, null);
    assert.equal(engine.localAudioTrack(), null);
    assert.equal(engine.localVideoTrack(), null);
  });

  it('the tap opens the devices and publishes on the channel joined before, without joining again', async () => {
    const { sdk, engine, view } = setup();
    await engine.prejoin(VIDEO_CREDS, 'video', view);
    const before = sdk.log.length;
    await engine.join(VIDEO_CREDS, 'video', view);
    assert.deepEqual(sdk.log.slice(before), ['createMicrophoneAudioTrack', 'createCameraVideoTrack', 'publish:mic', 'publish:camera', 'camera.play']);
    assert.equal(sdk.log.filter((l) => l.startsWith('createClient')).length, 1);
    assert.equal(sdk.log.filter((l) => l.startsWith('join(')).length, 1);
  });

  it('a closed spare leaves its channel, without touching the live view or the SDK hook another call may be using', async () => {
    const { sdk, engine, view } = setup();
    await engine.prejoin(AUDIO_CREDS, 'audio', view);
    const callsHook = (): void => undefined;
    sdk.onAutoplayFailed = callsHook; // a call's engine set it since
    await engine.leave();
    assert.equal(sdk.client!.left, true);
    assert.deepEqual(sdk.log.filter((l) => /^create(Microphone|Camera)/.test(l)), []);
    assert.equal(view.cleared, 0, 'the shared live view is the call’s');
    assert.equal(sdk.onAutoplayFailed, callsHook);
  });

  it('the avatar published before the tap is subscribed but plays nothing on the attract screen', async () => {
    const { sdk, engine, view, states } = setup();
    await engine.prejoin(VIDEO_CREDS, 'video', view);
    sdk.client!.emit('user-published', { uid: AVATAR_VIDEO_UID }, 'video');
    sdk.client!.emit('user-published', { uid: AVATAR_BOT_UID }, 'audio');
    for (let i = 0; i < 5; i++) await tick();
    assert.equal(sdk.client!.remote.length, 2, 'subscribed ahead (the first frame is on its way)');
    assert.deepEqual(sdk.client!.remote.map((t) => t.played.length), [0, 0], 'neither its picture nor its voice is played');
    assert.deepEqual(states(), [], 'no engine state before the tap');
  });

  it('at the tap, the avatar already there plays and the state follows it: joining → playing, never back to waiting', async () => {
    const { sdk, engine, view, states } = setup();
    await engine.prejoin(VIDEO_CREDS, 'video', view);
    sdk.client!.emit('user-published', { uid: AVATAR_VIDEO_UID }, 'video');
    sdk.client!.emit('user-published', { uid: AVATAR_BOT_UID }, 'audio');
    for (let i = 0; i < 5; i++) await tick();
    await engine.join(VIDEO_CREDS, 'video', view);
    assert.deepEqual(states(), ['joining', 'playing']);
    const [video, audio] = sdk.client!.remote;
    assert.deepEqual(video!.played, [{ element: view.avatarHost, config: { fit: 'contain', mirror: false } }]);
    assert.equal(audio!.played.length, 1);
    assert.ok(sdk.log.indexOf('publish:mic') < sdk.log.indexOf(`${AVATAR_VIDEO_UID}:video.play`), 'played once our side is in the call');
  });

  it('in a voice-only call, the avatar\'s voice already there makes the tap playing', async () => {
    const { sdk, engine, view, states } = setup();
    await engine.prejoin(AUDIO_CREDS, 'audio', view);
    sdk.client!.emit('user-published', { uid: AVATAR_BOT_UID }, 'audio');
    for (let i = 0; i < 5; i++) await tick();
    assert.equal(sdk.client!.remote[0]!.played.length, 0);
    await engine.join(AUDIO_CREDS, 'audio', view);
    assert.deepEqual(states(), ['joining', 'playing']);
    assert.equal(sdk.client!.remote[0]!.played.length, 1);
  });
});

describe('AgoraWebEngine pre-join: a connection lost before the tap', () => {
  for (const [cur, reason] of [['DISCONNECTED', 'NETWORK_ERROR'], ['RECONNECTING', 'NETWORK_ERROR']] as const) {
    it(`${cur}: says so (prejoin-lost, no call error), and the tap joins on a fresh client, never publishing on the lost one`, async () => {
      const { sdk, engine, view, events } = setup();
      await engine.prejoin(VIDEO_CREDS, 'video', view);
      const lostClient = sdk.client!;
      lostClient.emit('connection-state-change', cur, 'CONNECTED', reason);
      assert.deepEqual(events.map((e) => e.type), ['prejoin-lost']);
      await engine.join(VIDEO_CREDS, 'video', view);
      assert.equal(lostClient.left, true, 'the lost client left its channel');
      const fresh = sdk.client!;
      assert.notEqual(fresh, lostClient);
      assert.equal(sdk.log.filter((l) => l.startsWith('createClient')).length, 2);
      assert.equal(sdk.log.filter((l) => l.startsWith('join(')).length, 2);
      const lostAt = sdk.log.lastIndexOf('leave');
      assert.ok(sdk.log.indexOf('publish:mic') > lostAt, 'published only on the fresh client');
      assert.ok(!events.some((e) => e.type === 'error'), 'the visitor sees no failure');
    });
  }

  it('a leave while pre-joined is not a lost connection', async () => {
    const { sdk, engine, view, events } = setup();
    await engine.prejoin(VIDEO_CREDS, 'video', view);
    sdk.client!.emit('connection-state-change', 'DISCONNECTED', 'CONNECTED', 'LEAVE');
    assert.deepEqual(events, []);
  });
});

describe('AgoraWebEngine media signals for the watchdog', () => {
  it('reports the avatar video\'s decode/render frame rates and freeze time, its audio\'s freeze time, and the connection', async () => {
    const { sdk, engine, view } = setup();
    await engine.join(VIDEO_CREDS, 'video', view);
    const client = sdk.client!;
    client.emit('user-published', { uid: AVATAR_VIDEO_UID }, 'video');
    client.emit('user-published', { uid: AVATAR_BOT_UID }, 'audio');
    for (let i = 0; i < 5; i++) await tick();
    client.videoStats = { [AVATAR_VIDEO_UID]: { packetLossRate: 0, receivePackets: 900, decodeFrameRate: 0, renderFrameRate: 0, totalFreezeTime: 3 } };
    client.audioStats = { [AVATAR_BOT_UID]: { packetLossRate: 0, receivePackets: 400, totalFreezeTime: 1 } };
    client.rtcStats = { RecvBitrate: 1_000_000, RTT: 40, RecvBytes: 123_456 };
    client.connectionState = 'RECONNECTING';
    assert.deepEqual(engine.remoteMediaProgress(), {
      video: 900,
      audio: 400,
      videoFrames: { decodeFps: 0, renderFps: 0, freezeMs: 3_000 },
      audioFreezeMs: 1_000,
      connection: { connected: false, bytesReceived: 123_456 },
    });
  });
});

describe('AgoraWebEngine: devices that come and go during the call', () => {
  const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  const notices = (events: EngineEvent[]) => events.flatMap((e) => (e.type === 'warning' && e.notice ? [e.notice] : []));

  it('an unplugged microphone with another one present: switches to it and tells the visitor', async () => {
    const { sdk, engine, view, events } = setup({ deviceGraceMs: 200, deviceRetryMs: 20 });
    await engine.join(VIDEO_CREDS, 'video', view);
    sdk.mic!.end();
    await wait(30);
    assert.deepEqual(sdk.mic!.devices, ['default']);
    assert.deepEqual(notices(events), ['microphoneLost', 'microphoneBack']);
    assert.ok(!events.some((e) => e.type === 'error'));
    await engine.leave();
  });

  it('no microphone left: the visitor is told, and the call ends (device_missing) after the grace time; a replug within it keeps the call', async () => {
    const { sdk, engine, view, events } = setup({ deviceGraceMs: 150, deviceRetryMs: 20 });
    await engine.join(VIDEO_CREDS, 'video', view);
    sdk.microphones = [];
    sdk.onMicrophoneChanged!({ state: 'INACTIVE', device: { deviceId: 'usb-mic' } });
    await wait(60);
    assert.deepEqual(notices(events), ['microphoneLost']);
    assert.ok(!events.some((e) => e.type === 'error'), 'not yet: the grace time runs');
    await wait(200);
    const error = events.find((e) => e.type === 'error');
    assert.ok(error?.type === 'error' && error.error.kind === 'device_missing', JSON.stringify(events));

    // Another call: the microphone comes back (replugged) within the grace time.
    const second = setup({ deviceGraceMs: 150, deviceRetryMs: 1_000 });
    await second.engine.join(VIDEO_CREDS, 'video', second.view);
    second.sdk.microphones = [];
    second.sdk.mic!.end();
    await wait(20);
    second.sdk.microphones = [{ deviceId: 'usb-mic' }];
    second.sdk.onMicrophoneChanged!({ state: 'ACTIVE', device: { deviceId: 'usb-mic' } });
    await wait(200);
    assert.deepEqual(second.sdk.mic!.devices, ['usb-mic']);
    assert.deepEqual(notices(second.events), ['microphoneLost', 'microphoneBack']);
    assert.ok(!second.events.some((e) => e.type === 'error'));
    await second.engine.leave();
  });

  it('no camera left: the visitor is told and the call goes on', async () => {
    const { sdk, engine, view, events } = setup({ deviceGraceMs: 60, deviceRetryMs: 20 });
    await engine.join(VIDEO_CREDS, 'video', view);
    sdk.cameras = [];
    sdk.camera!.end();
    await wait(150);
    assert.deepEqual(notices(events), ['cameraLost']);
    assert.ok(!events.some((e) => e.type === 'error'));
    sdk.cameras = [{ deviceId: 'cam-2' }];
    sdk.onCameraChanged!({ state: 'ACTIVE', device: { deviceId: 'cam-2' } });
    await wait(20);
    assert.deepEqual(sdk.camera!.devices, ['cam-2']);
    assert.deepEqual(notices(events), ['cameraLost', 'cameraBack']);
    await engine.leave();
    assert.equal(sdk.onMicrophoneChanged, undefined, 'the SDK hooks are released with the call');
  });
});

describe('AgoraWebEngine cloud proxy (rtc.cloudProxy)', () => {
  for (const [mode, code] of [['udp', 3], ['tcp', 5]] as const) {
    it(`${mode}: startProxyServer(${code}) before the join`, async () => {
      const { sdk, engine, view } = setup({ cloudProxy: mode });
      await engine.join(AUDIO_CREDS, 'audio', view);
      const log = sdk.log;
      const proxy = log.indexOf(`startProxyServer(${code})`);
      assert.ok(proxy >= 0 && proxy < log.findIndex((l) => l.startsWith('join(')), log.join(' | '));
    });
  }
  it('off (the default): no proxy call', async () => {
    const { sdk, engine, view } = setup();
    await engine.join(AUDIO_CREDS, 'audio', view);
    assert.deepEqual(sdk.client!.proxyModes, []);
  });
});
