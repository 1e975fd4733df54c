/**
 * `PublicConfig`: what the renderer may know of the configuration (no secrets), and the shapes it is made
 * of (the cast, the video fit, prewarm, safety). Part of the IPC contract (electron/contract.ts
 * re-exports it).
 */
import type { CallMode } from '../core/protocol.ts';
import type { LanguageCode } from '../core/languages.ts';
import type { HoldReason, OpeningInfo, ServiceHealthStatus } from './availability.ts';

/** What the renderer may know of the configuration. No secrets. */
export interface PublicConfig {
  /** `demo`: the embedded emulator (no key configured); `direct`/`gateway`: the real service. */
  mode: 'demo' | 'direct' | 'gateway';
  hasApiKey: boolean;
  /** Where the key comes from, for the operator: environment, stored (encrypted), or none. */
  apiKeySource: 'env' | 'stored' | 'none';
  /** How well the stored key is protected: `false` (the OS keystore: macOS Keychain, Windows DPAPI, or
   *  no stored key), `true` (certainly weak: Linux told to use its hard-coded key), `'unknown'` (Linux:
   *  Electron does not say which provider its async encryption picked, keyring or hard-coded key). */
  apiKeyWeaklyProtected: KeyProtectionWeak;
  callMode: CallMode;
  /** Let the visitor choose audio or video on the attract screen. */
  allowModeChoice: boolean;
  avatar: { name: string; imageDataUrl: string | null; voice: string; gender?: AvatarGender };
  rtcEngine: 'auto' | 'agora-web' | 'agora-native';
  /** Seconds the ended/error screens stay before returning to attract. */
  returnToAttractSeconds: number;
  /** Seconds before live_duration at which the countdown warns. */
  countdownWarningSeconds: number;
  /** Silence (no voice, nobody in front of the camera) before "Are you still there?", then until hang-up. */
  idle: { promptSeconds: number; hangupSeconds: number };
  /** The venue's maximum call length (below live_duration); main hangs up there, and the live state's
   *  `endsAtMs` already reflects it. null: the service's live_duration only. */
  maxCallSeconds: number | null;
  /** The avatars a visitor may pick (length ≥ 1, config order). `avatar` above is always `cast[0]`. */
  cast: CastMember[];
  /** How the avatar video fills the screen (resolved: config `video.fit`, else `cover` in a portrait window). */
  video: { fit: VideoFit };
  /** The window's mode (`companion`: compact always-on-top window with a tray icon). */
  windowMode: 'kiosk' | 'windowed' | 'companion';
  /** Desktop companion settings (meaningful when windowMode is `companion`). */
  companion: { pushToTalk: boolean; shortcut: string };
  /** When main creates a spare session ahead of the tap (see docs/fast-start.md). */
  prewarm: { mode: PrewarmMode; prejoin?: boolean };
  /** The RTC side of calls: the provider's cloud proxy (firewalled venues), applied before every join. */
  rtc?: { cloudProxy: 'off' | 'udp' | 'tcp' };
  /** May the attract screen use the camera to notice visitors (frames never leave the renderer). */
  presence: { cameraEnabled: boolean };
  /** Demo mode only (`npm start -- --demo-devices`): the page gives the demo engine a synthetic microphone
   *  and camera, so a whole call can be seen on a machine with neither. Always false with a real key. */
  demoDevices?: boolean;
  /** How many start-up problems wait for staff (`StaffStatus.attention` has them). Only a count: the
   *  attract screen shows a small marker for staff, never the problem to visitors. */
  attention: number;
  /** Open or closed (opening hours); absent: always open. */
  opening?: OpeningInfo;
  /** Calls are held for a moment (an update is being installed); absent or null: not held. */
  hold?: HoldReason | null;
  /** Whether the service answers (kiosk/service-health.ts): while it cannot be reached the visitor sees a
   *  calm out-of-order screen instead of a button that would fail. Only the status: the why is for staff. */
  service?: { status: ServiceHealthStatus; ok: boolean };
  /** The languages a visitor may pick (config order) and the one each visitor starts in. */
  languages: LanguageCode[];
  defaultLanguage: LanguageCode;
  /** Accessibility mode: on for every visitor by default, and the low-reach band (percent of the
   *  screen's height, from the bottom) that holds every visitor control in that mode. */
  accessibility: { default: boolean; reachBandPercent: number };
  /** The avatar's volume, 0–100 % (`avatar-volume` events change it); absent: 100. */
  avatarVolume?: number;
  /** Who the kiosk is for and what visitors are told (docs/safety.md): the audience it runs as, the age
   *  gate before each call (adult only), and the venue's privacy notice with its address as a QR code. */
  safety: PublicSafety;
}

/** See `PublicConfig.safety`. */
export interface PublicSafety {
  audience: 'public' | 'adult';
  /** Adult only: the age each visitor confirms, and who checks it (`staff`: a member of staff with the PIN). */
  ageGate: { minimumAge: number; ageCheck: 'self' | 'staff' } | null;
  privacy: {
    /** The venue's notice per language (the operator's text), or null when none is set. */
    notice: Partial<Record<LanguageCode, string>> | null;
    /** Where the full notice is, or null. */
    url: string | null;
    /** `url` as a QR code: `size` modules a side and one SVG path of the dark ones (no quiet zone). */
    qr: { size: number; path: string } | null;
  };
}

/** See `PublicConfig.apiKeyWeaklyProtected`. */
export type KeyProtectionWeak = boolean | 'unknown';

export const VIDEO_FITS = ['contain', 'cover'] as const;
export type VideoFit = (typeof VIDEO_FITS)[number];

/** How the visitor's language speaks of an avatar (es "lista"/"listo", de "Gastgeberin"/"Gastgeber");
 *  `neutral` uses wording that names no gender where the language has it. */
export const AVATAR_GENDERS = ['female', 'male', 'neutral'] as const;
export type AvatarGender = (typeof AVATAR_GENDERS)[number];

/** The operator's greeting: one text, or one per language (the visitor's, else the default language's). */
export type Greeting = string | Partial<Record<LanguageCode, string>>;

/** One avatar of the cast, as the attract screen shows it. */
export interface CastMember {
  id: string;
  name: string;
  imageDataUrl: string | null;
  callMode: CallMode;
  greeting: Greeting | null;
  /** Optional for older mains (then neutral). */
  gender?: AvatarGender;
}

export const PREWARM_MODES = ['off', 'on-approach', 'always'] as const;
export type PrewarmMode = (typeof PREWARM_MODES)[number];
