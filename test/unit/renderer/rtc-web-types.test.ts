/**
 * The agora-web engine's calls checked against agora-rtc-sdk-ng's own type definitions (its .d.ts), not
 * only against the fake in rtc-web.test.ts. `callsAsTheEngineDoes` makes every SDK call the engine makes,
 * with the same arguments, on the REAL SDK types, and hands the results to the engine's own declarations
 * (`AgoraLocalTrack`, `AgoraRemoteTrack`…). The compiler does the checking (`npm run typecheck` covers
 * test/); the function is never run (it would need the RTC provider). The run-time test only records that
 * this file compiled.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IAgoraRTC } from 'agora-rtc-sdk-ng';
import { avatarUidFor } from '../../../electron/core/rtc-ids.ts';
import { CLOUD_PROXY_MODES, type AgoraNetworkQuality, type AgoraRemoteAudioStats, type AgoraRemoteVideoStats, type AgoraRtcStats, type AgoraConnectionState, type AgoraLocalTrack, type AgoraRemoteTrack } from '../../../renderer/src/rtc/agora-web-engine.ts';
import { VIDEO_CREDS } from '../../helpers/rtc-fixtures.ts';

export async function callsAsTheEngineDoes(sdk: IAgoraRTC, avatarHost: HTMLElement, selfHost: HTMLElement): Promise<void> {
  const creds = VIDEO_CREDS;
  const ids = avatarUidFor(creds.user_id, 'video');
  sdk.setLogLevel(3);
  sdk.disableLogUpload();
  const client = sdk.createClient({ mode: 'rtc', codec: 'vp8' });
  client.on('user-published', async (user, mediaType) => {
    if (mediaType === 'video' && String(user.uid) === ids.video) {
      const track = await client.subscribe(user, 'video');
      // (The engine's AgoraRemoteTrack lets `play` go without an element, for audio; a video track needs one.)
      const ours: Pick<AgoraRemoteTrack, 'stop'> = track;
      track.play(avatarHost, { fit: 'contain', mirror: false });
      ours.stop();
    } else if (mediaType === 'audio') {
      const track = await client.subscribe(user, 'audio');
      const ours: Pick<AgoraRemoteTrack, 'stop'> = track;
      track.play();
      ours.stop();
    }
  });
  client.on('user-unpublished', (user, mediaType) => void [String(user.uid), mediaType]);
  client.on('user-left', (user, reason) => void [String(user.uid), reason]);
  client.on('connection-state-change', (cur, prev, reason) => {
    const states: AgoraConnectionState[] = [cur, prev];
    void [states, reason];
  });
  client.on('token-privilege-will-expire', () => undefined);
  client.on('token-privilege-did-expire', () => undefined);
  client.on('network-quality', (q) => {
    const ours: AgoraNetworkQuality = q;
    const rtc: AgoraRtcStats = client.getRTCStats();
    const video: Record<string, AgoraRemoteVideoStats> = client.getRemoteVideoStats();
    const audio: Record<string, AgoraRemoteAudioStats> = client.getRemoteAudioStats();
    void [ours, rtc, video, audio];
  });
  sdk.onAutoplayFailed = () => undefined;
  const mic = await sdk.createMicrophoneAudioTrack({ AEC: true, ANS: true, AGC: true });
  const camera = await sdk.createCameraVideoTrack({ encoderConfig: '480p_1', facingMode: 'user' });
  const micOurs: Pick<AgoraLocalTrack, 'setMuted' | 'stop' | 'close' | 'getMediaStreamTrack'> = mic;
  const cameraOurs: AgoraLocalTrack = camera;
  await micOurs.setMuted(true);
  client.startProxyServer(CLOUD_PROXY_MODES.udp);
  client.startProxyServer(CLOUD_PROXY_MODES.tcp);
  await client.join(creds.app_id, creds.channel_id, creds.token, creds.user_id);
  await client.publish(mic);
  await client.publish(camera);
  cameraOurs.play(selfHost, { fit: 'cover', mirror: true });
  client.removeAllListeners();
  await client.leave();
}

describe('agora-web engine against agora-rtc-sdk-ng type definitions', () => {
  it('compiled: every SDK call the engine makes type-checks against the package .d.ts', () => {
    assert.equal(typeof callsAsTheEngineDoes, 'function');
    assert.deepEqual(CLOUD_PROXY_MODES, { udp: 3, tcp: 5 }, 'the modes of startProxyServer in the .d.ts');
  });
});
