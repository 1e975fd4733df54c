/**
 * Shared fixtures for the RTC engine adapter tests: credentials in the spec's §2.5 naming, the avatar's
 * uids they imply, and a recording LiveView whose hosts are opaque tokens to the adapters.
 */
import type { RtcCredentials } from '../../electron/contract.ts';
import type { LiveView } from '../../renderer/src/rtc/engine.ts';

export const VIDEO_CREDS: RtcCredentials = {
  app_id: 'app-0123456789',
  channel_id: 'live-user-L42',
  user_id: 'live-user-C7-L42',
  token: 'rtc-token-abc',
  token_expire_at: '1893456000',
};
export const AUDIO_CREDS: RtcCredentials = { ...VIDEO_CREDS, channel_id: 'live-audio-L42' };
export const AVATAR_VIDEO_UID = 'live-video-push-C7-L42';
export const AVATAR_BOT_UID = 'live-bot-C7-L42';

export interface FakeView extends LiveView {
  readonly cleared: number;
}

export function fakeView(): FakeView {
  let cleared = 0;
  return {
    avatarHost: { id: 'avatar-host' } as unknown as HTMLElement,
    selfHost: { id: 'self-host' } as unknown as HTMLElement,
    showAvatarStream() {},
    showSelfStream() {},
    clear() {
      cleared++;
    },
    get cleared() {
      return cleared;
    },
  };
}
