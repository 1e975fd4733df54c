/**
 * What the staff panel receives: the PIN pad's state, the Status tab, the settings form, voices, the
 * doctor, the video-network check, the ledger and the visitor funnel. Part of the IPC contract
 * (electron/contract.ts re-exports it).
 *
 * Two schemas live here rather than with the argument schemas in contract.ts: the editable settings and
 * the network check's outcome travel both ways (sent by the panel, answered back inside `StaffSettings`
 * and `NetworkCheckReport`), and this folder may not import contract.ts (that would be a circle).
 */
import { z } from 'zod';
import { CALL_MODES, type RtcCredentials } from '../core/protocol.ts';
import type { ErrorCode } from '../core/errors.ts';
import type { FunnelCounts, FunnelDay } from '../core/funnel.ts';
import type { CallFigures, LastCallQuality } from './call.ts';
import type { KeyProtectionWeak } from './config.ts';
import type { ServiceHealth } from './availability.ts';

/**
 * Shape only (types and sane lengths): ranges and cross-field rules are checked by main with the config
 * schema (electron/kiosk/config.ts), which answers per-field messages in `SaveSettingsResult.fieldErrors`.
 */
export const editableSettingsSchema = z.strictObject({
  service: z.strictObject({
    surface: z.enum(['direct', 'gateway']),
    baseUrl: z.string().max(2048).optional(),
    gatewayUrl: z.string().max(2048).optional(),
  }),
  callMode: z.enum(CALL_MODES),
  allowModeChoice: z.boolean(),
  avatar: z.strictObject({
    /** A file path, an http(s) URL or a data: URI (a picked file may arrive as a data: URI). */
    imagePath: z.string().max(30_000_000),
    persona: z.string().max(20_000).optional(),
    name: z.string().max(200),
    voice: z.string().max(200),
  }),
  moderation: z.enum(['strict', 'disabled']).optional(),
  extraMotion: z.boolean().optional(),
  /** Who the kiosk is for (docs/safety.md). Absent: the file's stay as they are (a form without them).
   *  Where a policy file exists these are the policy's: the panel shows them locked, and a value saved
   *  here is not used. */
  audience: z.enum(['public', 'adult']).optional(),
  region: z.string().max(12).optional(),
  adult: z.strictObject({ allowedRegions: z.array(z.string().max(12)).max(300), minimumAge: z.number(), ageCheck: z.enum(['self', 'staff']) }).optional(),
  window: z.strictObject({ mode: z.enum(['kiosk', 'windowed', 'companion']), width: z.number(), height: z.number() }),
  rtcEngine: z.enum(['auto', 'agora-web', 'agora-native']),
  returnToAttractSeconds: z.number(),
  countdownWarningSeconds: z.number(),
  idle: z.strictObject({ promptSeconds: z.number(), hangupSeconds: z.number() }),
  maxCallSeconds: z.number().optional(),
});
export type EditableSettings = z.infer<typeof editableSettingsSchema>;

/** The video-network check (staff Diagnostics): what the screen measured on the test session's channel. */
export const NETWORK_CHECK_STATES = ['connected', 'failed', 'timeout'] as const;
export const networkCheckOutcomeSchema = z.strictObject({
  ok: z.boolean(),
  /** From the join call to joined, ms (null: it never joined). */
  joinMs: z.number().finite().min(0).max(120_000).nullable(),
  state: z.enum(NETWORK_CHECK_STATES),
  /** The cloud proxy the join used (config rtc.cloudProxy). */
  proxy: z.enum(['off', 'udp', 'tcp']),
  /** For staff: what happened, in words. */
  message: z.string().max(500),
});
export type NetworkCheckOutcome = z.infer<typeof networkCheckOutcomeSchema>;

/** What main hands the screen for the check: the test session's RTC credentials (never conn_init). */
export interface NetworkCheckTicket {
  checkId: string;
  rtc: RtcCredentials;
  cloudProxy: 'off' | 'udp' | 'tcp';
}
export interface NetworkCheckReport extends NetworkCheckOutcome {
  /** The test session was ended with type 5. */
  sessionClosed: boolean;
  /** What the service says the test session cost (0 expected; null: not read back). */
  creditsCost: number | null;
}

export interface PinState {
  pinSet: boolean;
  unlocked: boolean;
  /** > 0 while the pad is locked after 5 wrong tries. */
  lockedForMs: number;
  attemptsLeft: number;
  /** No PIN, and setup may not open (an administrator's policy exists or names the PIN): the kiosk is out
   *  of order for visitors; this says why, for staff (null when not so). */
  outOfOrder: string | null;
  /** Settings that were not used (a bad value in config.json or the environment), one line each ("config.json:
   *  callMode is invalid, using video"): said on the PIN pad, where staff read them without the panel.
   *  Absent or empty when every setting applies. */
  settingsNotUsed?: string[];
}
export interface StaffStatus {
  mode: 'demo' | 'direct' | 'gateway';
  serviceUrl: string | null;
  hasApiKey: boolean;
  apiKeySource: 'env' | 'stored' | 'none';
  /** As `PublicConfig.apiKeyWeaklyProtected`. */
  apiKeyWeaklyProtected: KeyProtectionWeak;
  /** Start-up problems that still apply (empty when the kiosk started cleanly). */
  attention: AttentionItem[];
  /** Whether the service answers, as last checked (nothing created, nothing billed), and what to do. */
  service?: ServiceHealth;
  /** The last 20 errors, newest last. */
  errors: Array<{ atMs: number; code: string; message: string }>;
  version: string;
  uptimeS: number;
  /** Real calls only (the service's); demo calls on the built-in emulator apart, in `demoSessions`. */
  today: { sessions: number; credits: number; unknownCredits: number; demoSessions: number };
  /** null where the platform does not support it. */
  openAtLogin: boolean | null;
  /** Whether the host can start itself again (false in the browser mode: the panel offers no Restart). */
  canRestart?: boolean;
  /** The PIN in use has fewer than 6 digits: staff should choose a new one. */
  pinTooShort?: boolean;
  /** The last call's connection figures (absent until a call has reported some since the kiosk started). */
  lastCall?: LastCallQuality;
  /** The last call's field figures (absent until a call has ended since the kiosk started). */
  lastCallFigures?: CallFigures;
  /** Who the kiosk is for (docs/safety.md): the audience, the moderation every create sends, the region,
   *  why adult was refused, the age gate's counts and the calls the service's content review ended. */
  safety: {
    audience: 'public' | 'adult';
    moderation: 'strict' | 'disabled';
    region: string | null;
    refusal: string | null;
    ageGate: { asked: number; confirmed: number; declined: number } | null;
    auditViolations: number;
  };
  /** The avatar's volume, 0–100 % (absent from an older main: 100). */
  avatarVolume?: number;
}
export interface StaffSettings {
  settings: EditableSettings;
  hasApiKey: boolean;
  apiKeySource: 'env' | 'stored' | 'none';
  /** Where no key can be stored (the browser mode): what to set instead, shown in place of the key field. */
  apiKeyNotStorable?: string;
  /** Dotted keys locked by the administrator's policy file or the environment. */
  managed: string[];
}
export type SaveSettingsResult =
  | { saved: true; settings: StaffSettings; restartRequired: boolean; apiKeyCleared?: boolean }
  | { saved: false; fieldErrors: Record<string, string> };
export interface VoiceList {
  builtIn: string[];
  custom: string[];
  current: string;
}
export type DoctorCheckId = 'config' | 'key' | 'service' | 'microphone' | 'camera';
export interface DoctorCheck {
  id: DoctorCheckId;
  /** null: not checked here (main leaves microphone/camera to the renderer) or skipped. */
  ok: boolean | null;
  message: string;
}
export interface DoctorReport {
  ok: boolean;
  checks: DoctorCheck[];
}

export interface LedgerTotalsRow {
  sessions: number;
  credits: number;
  billedSeconds: number;
  /** Sessions whose cost could not be read (not counted in `credits`). */
  unknownCredits: number;
  /** Calls on the built-in emulator (demo mode) that went live: never in `sessions`, `credits` or
   *  `billedSeconds`, since nobody paid for them; counted here so the ledger can say they happened. A demo
   *  attempt that never went live (cancelled or failed while connecting) is in none of the figures. */
  demoSessions: number;
}
export interface LedgerTotals {
  today: LedgerTotalsRow;
  last7Days: LedgerTotalsRow;
  month: LedgerTotalsRow;
}

/** What a start-up problem is about. */
export const ATTENTION_KINDS = ['config', 'policy', 'cast', 'key', 'sandbox', 'visitors'] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];
/**
 * A problem found while the kiosk started (a bad config file, policy setting or cast member, a stored key
 * that could not be read). The kiosk runs on safe defaults meanwhile; staff see it on the Status tab, the
 * log and /metrics have it. Never a blocking dialog: nobody may be there to click it.
 */
export interface AttentionItem {
  kind: AttentionKind;
  code: ErrorCode;
  /** What is wrong and what to do, for staff (no secrets). */
  message: string;
}

/** The visitor funnel as the staff panel's Visitors tab reads it (docs/analytics.md). Counts only, nothing
 *  finer than the hour; the panel applies `threshold` to whatever it lets leave the screen. */
export interface VisitorReport {
  /** The kiosk's IANA time zone the hours and days are in. */
  timeZone: string;
  /** Counts below it are shown as "fewer than N" outside the kiosk's own store (exports, CSV). */
  threshold: number;
  /** The kiosk's local day so far. */
  today: FunnelDay;
  /** The last 7 days hour by hour (`YYYY-MM-DDTHH`, local), oldest first; hours with no count left out. */
  hours: Array<{ hour: string; counts: FunnelCounts }>;
  /** Up to 13 months day by day, oldest first (days older than 90 days exist only rolled up). */
  days: FunnelDay[];
  /** Whether presence detection is on: noticed and approached are counted only then. */
  counting: { presence: boolean };
}
