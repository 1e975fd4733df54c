/**
 * RTC identities (spec §2.5): the uids and channels the service names, and the avatar's uid derived
 * from our own. Dependency-free (no zod), so the renderer's engines import it without pulling the
 * protocol schemas into the bundle.
 */
import type { CallMode, RtcCredentials } from './protocol.ts';

export const rtcIds = {
  user: (creatorId: string, liveId: string) => `live-user-${creatorId}-${liveId}`,
  bot: (creatorId: string, liveId: string) => `live-bot-${creatorId}-${liveId}`,
  videoPush: (creatorId: string, liveId: string) => `live-video-push-${creatorId}-${liveId}`,
  audioChannel: (liveId: string) => `live-audio-${liveId}`,
  videoChannel: (liveId: string) => `live-user-${liveId}`,
};

/**
 * The avatar's RTC uids, derived from our own `rtc.user_id` (`live-user-<creatorID>-<liveID>`): video mode
 * renders video from `live-video-push-…`, audio mode plays audio from `live-bot-…` (spec §2.5). In video
 * mode the spec does not say which uid carries the voice, so audio from either is played. `null`/empty
 * when user_id does not follow the documented pattern (an engine then takes the first remote publisher).
 */
export function avatarUidFor(userId: string, mode: CallMode): { video: string | null; audio: string[] } {
  const m = /^live-user-(.+)$/.exec(userId);
  if (!m) return { video: null, audio: [] };
  const rest = m[1]!; // `<creatorID>-<liveID>`
  return mode === 'video'
    ? { video: `live-video-push-${rest}`, audio: [`live-video-push-${rest}`, `live-bot-${rest}`] }
    : { video: null, audio: [`live-bot-${rest}`] };
}

/** App ids the emulator issues start with this, so the renderer picks the demo engine for them. */
export const EMULATOR_APP_ID_PREFIX = 'emulator-';
export function isEmulatorCredentials(rtc: Pick<RtcCredentials, 'app_id'>): boolean {
  return rtc.app_id.startsWith(EMULATOR_APP_ID_PREFIX);
}

/**
 * The emulator's RTC token carries how long the demo engine's modelled channel join takes
 * (`emu-rtc-j<ms>-<random>`), so benches and tests on the emulator pay for a join as a real call would.
 * Tests can also have the demo avatar's media stop `freezeAfterMs` after it starts playing
 * (`emu-rtc-j<ms>f<ms>-<random>`), to exercise the media watchdog, or model a poor connection
 * (`emu-rtc-j<ms>-qpoor-<random>`), to show the weak-connection hint; only the emulator issues these
 * tokens, and only its `demoFreezeAfterMs` and `rtcQuality` knobs (never set outside tests) add them.
 */
export function emulatorRtcToken(joinMs: number, random: string, freezeAfterMs: number | null = null, quality: DemoQuality = 'good'): string {
  const freeze = freezeAfterMs === null ? '' : `f${Math.max(0, Math.round(freezeAfterMs))}`;
  return `emu-rtc-j${Math.max(0, Math.round(joinMs))}${freeze}-${quality === 'poor' ? 'qpoor-' : ''}${random}`;
}

/** The connection quality the demo engine models: `poor` lets tests show the visitor's weak-connection hint. */
export type DemoQuality = 'good' | 'poor';
/** The modelled quality an emulator token carries (`emu-rtc-j<ms>[f<ms>]-qpoor-…`), else good. */
export function demoQuality(token: string): DemoQuality {
  return /^emu-rtc-j\d{1,6}(?:f\d{1,7})?-qpoor-/.test(token) ? 'poor' : 'good';
}

// The freeze sits between the join's digits and the first `-`, so the random part can never be read as one.
const EMULATOR_TOKEN = /^emu-rtc-j(\d{1,6})(?:f(\d{1,7}))?-/;

/** The modelled join of an emulator token, in ms (0 for a token that carries none). */
export function demoJoinDelayMs(token: string): number {
  const m = EMULATOR_TOKEN.exec(token);
  return m ? Number(m[1]) : 0;
}

/** When the demo avatar's media stops (ms after it starts playing), or null: it never does. */
export function demoFreezeAfterMs(token: string): number | null {
  const m = EMULATOR_TOKEN.exec(token);
  return m?.[2] === undefined ? null : Number(m[2]);
}
