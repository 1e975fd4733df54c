/**
 * What the media watchdog asks of the SDK engines, against small typed fakes: progress counters that grow
 * only while the avatar's media arrives, and one re-subscription of the avatar's tracks.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AgoraWebEngine,
  type AgoraLocalTrack,
  type AgoraRemoteTrack,
  type AgoraRemoteUser,
  type AgoraUid,
  type AgoraWebClient,
  type AgoraWebSdk,
} from '../../../renderer/src/rtc/agora-web-engine.ts';
import {
  AgoraNativeEngine,
  type NativeEventHandler,
  type NativeRtcEngine,
  type NativeVideoCanvas,
} from '../../../renderer/src/rtc/agora-native-engine.ts';
import { AVATAR_BOT_UID, AVATAR_VIDEO_UID, VIDEO_CREDS, fakeView } from '../../helpers/rtc-fixtures.ts';

const withLoss = (stats: Record<string, { receivePackets: number }>): Record<string, { packetLossRate: number; receivePackets: number }> =>
  Object.fromEntries(Object.entries(stats).map(([uid, s]) => [uid, { packetLossRate: 0, ...s }]));

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
type Listener = (...args: never[]) => void;

class WebClient implements AgoraWebClient {
  readonly log: string[] = [];
  readonly listeners = new Map<string, Listener>();
  video: Record<string, { receivePackets: number }> = {};
  audio: Record<string, { receivePackets: number }> = {};
  on(event: string, listener: Listener): void {
    this.listeners.set(event, listener);
  }
  removeAllListeners(): void {
    this.listeners.clear();
  }
  async join(_a: string, _c: string, _t: string | null, uid?: AgoraUid | null): Promise<AgoraUid> {
    return uid ?? 0;
  }
  async publish(): Promise<void> {}
  async subscribe(user: AgoraRemoteUser, mediaType: 'video' | 'audio'): Promise<AgoraRemoteTrack> {
    this.log.push(`subscribe:${String(user.uid)}:${mediaType}`);
    const log = this.log;
    return { play: () => log.push(`play:${String(user.uid)}:${mediaType}`), stop: () => log.push(`stop:${String(user.uid)}:${mediaType}`) };
  }
  async unsubscribe(user: AgoraRemoteUser, mediaType?: 'video' | 'audio'): Promise<void> {
    this.log.push(`unsubscribe:${String(user.uid)}:${String(mediaType)}`);
  }
  // The SDK's stats also carry loss figures (the quality report's); the watchdog reads only the packets.
  getRemoteVideoStats(): Record<string, { packetLossRate: number; receivePackets: number }> {
    return withLoss(this.video);
  }
  getRemoteAudioStats(): Record<string, { packetLossRate: number; receivePackets: number }> {
    return withLoss(this.audio);
  }
  async leave(): Promise<void> {}
  publishes(uid: string, mediaType: 'video' | 'audio'): void {
    (this.listeners.get('user-published') as (u: AgoraRemoteUser, m: string) => void)({ uid }, mediaType);
  }
}

function webSetup() {
  const client = new WebClient();
  const track = (): AgoraLocalTrack => ({ setMuted: async () => {}, play: () => {}, stop: () => {}, close: () => {} });
  const sdk: AgoraWebSdk = { createClient: () => client, createMicrophoneAudioTrack: async () => track(), createCameraVideoTrack: async () => track() };
  return { client, engine: new AgoraWebEngine(sdk) };
}

describe('AgoraWebEngine and the media watchdog', () => {
  it('progress sums the avatar\'s received packets (video and audio apart); null before any subscription', async () => {
    const { client, engine } = webSetup();
    await engine.join(VIDEO_CREDS, 'video', fakeView());
    assert.equal(engine.remoteMediaProgress(), null);
    client.publishes(AVATAR_VIDEO_UID, 'video');
    client.publishes(AVATAR_VIDEO_UID, 'audio');
    client.publishes('someone-else', 'video'); // not the avatar: never subscribed, never counted
    await settle();
    client.video = { [AVATAR_VIDEO_UID]: { receivePackets: 120 }, 'someone-else': { receivePackets: 9_999 } };
    client.audio = { [AVATAR_VIDEO_UID]: { receivePackets: 40 } };
    assert.deepEqual(engine.remoteMediaProgress(), { video: 120, audio: 40 });
    client.video = { [AVATAR_VIDEO_UID]: { receivePackets: 180 } };
    assert.deepEqual(engine.remoteMediaProgress(), { video: 180, audio: 40 });
  });

  it('resubscribeRemote stops, unsubscribes and subscribes again each of the avatar\'s tracks, and renders them again', async () => {
    const { client, engine } = webSetup();
    await engine.join(VIDEO_CREDS, 'video', fakeView());
    client.publishes(AVATAR_VIDEO_UID, 'video');
    client.publishes(AVATAR_BOT_UID, 'audio');
    await settle();
    client.log.length = 0;
    await engine.resubscribeRemote();
    assert.deepEqual(client.log, [
      `stop:${AVATAR_VIDEO_UID}:video`,
      `unsubscribe:${AVATAR_VIDEO_UID}:video`,
      `subscribe:${AVATAR_VIDEO_UID}:video`,
      `play:${AVATAR_VIDEO_UID}:video`,
      `stop:${AVATAR_BOT_UID}:audio`,
      `unsubscribe:${AVATAR_BOT_UID}:audio`,
      `subscribe:${AVATAR_BOT_UID}:audio`,
      `play:${AVATAR_BOT_UID}:audio`,
    ]);
    await engine.leave();
    client.log.length = 0;
    await engine.resubscribeRemote();
    assert.deepEqual(client.log, [], 'nothing after leave');
  });
});

class NativeFake implements NativeRtcEngine {
  readonly log: string[] = [];
  handler: NativeEventHandler | null = null;
  initialize(): number {
    return 0;
  }
  registerEventHandler(handler: NativeEventHandler): boolean {
    this.handler = handler;
    return true;
  }
  unregisterEventHandler(): boolean {
    return true;
  }
  enableAudio(): number {
    return 0;
  }
  enableVideo(): number {
    return 0;
  }
  startPreview(): number {
    return 0;
  }
  setupLocalVideo(): number {
    return 0;
  }
  setupRemoteVideo(canvas: NativeVideoCanvas): number {
    this.log.push(`setupRemoteVideo(${canvas.uid})`);
    return 0;
  }
  joinChannelWithUserAccount(): number {
    queueMicrotask(() => this.handler?.onJoinChannelSuccess?.({}, 1));
    return 0;
  }
  getUserInfoByUid(uid: number) {
    return uid === 7 ? { uid, userAccount: AVATAR_VIDEO_UID } : undefined;
  }
  muteLocalAudioStream(): number {
    return 0;
  }
  muteRemoteVideoStream(uid: number, mute: boolean): number {
    this.log.push(`muteRemoteVideoStream(${uid},${mute})`);
    return 0;
  }
  muteRemoteAudioStream(uid: number, mute: boolean): number {
    this.log.push(`muteRemoteAudioStream(${uid},${mute})`);
    return 0;
  }
  leaveChannel(): number {
    return 0;
  }
  release(): void {}
}

describe('AgoraNativeEngine and the media watchdog', () => {
  it('progress counts the avatar\'s stats reports that show media arriving; resubscribe mutes and unmutes its streams and sets its picture up again', async () => {
    const native = new NativeFake();
    const engine = new AgoraNativeEngine(() => ({ createAgoraRtcEngine: () => native }));
    await engine.join(VIDEO_CREDS, 'video', fakeView());
    assert.equal(engine.remoteMediaProgress(), null, 'no avatar yet');
    native.handler!.onUserJoined!({}, 7, 0);
    const h = native.handler!;
    h.onRemoteVideoStats!({}, { uid: 7, decoderOutputFrameRate: 25, receivedBitrate: 900 });
    h.onRemoteVideoStats!({}, { uid: 7, decoderOutputFrameRate: 0, receivedBitrate: 0 }); // frozen: not counted
    h.onRemoteVideoStats!({}, { uid: 8, decoderOutputFrameRate: 25, receivedBitrate: 900 }); // someone else
    h.onRemoteAudioStats!({}, { uid: 7, receivedBitrate: 24 });
    h.onRemoteAudioStats!({}, { uid: 7, receivedBitrate: 0 });
    assert.deepEqual(engine.remoteMediaProgress(), { video: 1, audio: 1 });
    native.log.length = 0;
    await engine.resubscribeRemote();
    assert.deepEqual(native.log, [
      'muteRemoteAudioStream(7,true)',
      'muteRemoteAudioStream(7,false)',
      'muteRemoteVideoStream(7,true)',
      'muteRemoteVideoStream(7,false)',
      'setupRemoteVideo(7)',
    ]);
    await engine.leave();
  });
});
