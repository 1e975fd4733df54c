/**
 * The one IPC contract between main, preload and renderer. Each channel is declared once, in `KIOSK_API`:
 * its name, where it sits in the `KioskApi` the renderer calls (group and method), its argument schema,
 * its result type and who may call it. Everything else is derived from that table:
 *  - the preload (and the E2E bridge, and any other transport) builds `window.kiosk` with `buildKioskApi`;
 *  - main registers one handler per channel (electron/main/ipc.ts), and it and the browser host dispatch
 *    through the channel registry (electron/kiosk/channels.ts), which validates the argument and refuses
 *    every `staff` channel while the staff panel is locked, in that one place;
 *  - `CHANNELS`, `ARG_SCHEMAS`, `ChannelResults` and the `KioskApi` type.
 *
 * The renderer never receives the API key: `PublicConfig` says only whether one is set, and the only
 * channel that takes a key is the staff panel's (write-only, PIN-gated).
 *
 * Adding a channel: add its argument schema (if any) and one row to `KIOSK_API`, then the handler in the
 * owner that registers its group (kiosk/channels.ts); the compiler points at every place that lacks it.
 */
import { z } from 'zod';
import { CALL_MODES, type CallMode, type RtcCredentials } from './core/protocol.ts';
import type { ErrorCode, ErrorInfo } from './core/errors.ts';
import type { SessionEvent, SessionState } from './core/session-types.ts';
import { buildKioskApi as buildApiFromShape, type ApiShape, type ArgMode } from './core/kiosk-api.ts';
import { LANGUAGE_CODES, type LanguageCode } from './core/languages.ts';
import type { WireCheckResult, WireReport } from './core/wire-report.ts';
import type { FunnelCounts, FunnelDay } from './core/funnel.ts';

export type { CallMode, RtcCredentials, ErrorCode, ErrorInfo, SessionEvent, SessionState };
export type { SessionSummary, SessionPhase, EndedBy } from './core/session-types.ts';

export const IPC_PREFIX = 'kiosk:';

/** Main → renderer (send/on). */
export const EVENT_CHANNEL = 'kiosk:event' as const;

/** Every handler answers with a Result: Electron carries only an error's message across IPC. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorInfo };
export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (code: ErrorCode, message: string): Result<never> => ({ ok: false, error: { code, message } });

// ---------------------------------------------------------------------------------------------------
// Arguments (validated in main before a handler runs)

export const noArgsSchema = z.undefined().or(z.strictObject({}));

/** The visitor languages (electron/core/languages.ts). */
export { LANGUAGE_CODES, type LanguageCode };

export const startArgsSchema = z.strictObject({
  callMode: z.enum(CALL_MODES).optional(),
  /** Which cast member to talk to (`PublicConfig.cast[].id`); default: the first. */
  avatarId: z.string().min(1).max(64).optional(),
  /** The visitor's language (one of `PublicConfig.languages`); default: `defaultLanguage`. */
  language: z.enum(LANGUAGE_CODES).optional(),
});
export type StartArgs = z.infer<typeof startArgsSchema>;

export const setMutedArgsSchema = z.strictObject({ muted: z.boolean() });
export type SetMutedArgs = z.infer<typeof setMutedArgsSchema>;

/** The visitor's answer on the age gate (adult kiosks): `confirmed` true is "yes, I am old enough". */
export const ageGateAnswerArgsSchema = z.strictObject({ confirmed: z.boolean() });
export type AgeGateAnswerArgs = z.infer<typeof ageGateAnswerArgsSchema>;
/** What the age gate asks for on this kiosk: nothing (public), the visitor's own answer, or staff's PIN. */
export type AgeGateTicket = { required: false } | { required: true; minimumAge: number; ageCheck: 'self' | 'staff' };

export const MEDIA_ERROR_KINDS = ['microphone_denied', 'camera_denied', 'device_missing', 'rtc_join_failed', 'rtc_disconnected', 'engine_unavailable', 'other'] as const;
export type MediaErrorKind = (typeof MEDIA_ERROR_KINDS)[number];
export const mediaErrorArgsSchema = z.strictObject({
  kind: z.enum(MEDIA_ERROR_KINDS),
  message: z.string().max(500),
});
export type MediaErrorArgs = z.infer<typeof mediaErrorArgsSchema>;

/** The renderer's side of the session's RTC channel is ready (joined, remote handler in place, microphone
 *  track ready): main sends conn_init now (RTC first, then billing). */
export const rtcReadyArgsSchema = z.strictObject({ liveId: z.string().min(1).max(200) });
export type RtcReadyArgs = z.infer<typeof rtcReadyArgsSchema>;

/** How the call's connection is doing, from the RTC SDK's network quality (unknown: no figure yet). */
export const CALL_QUALITY_LEVELS = ['unknown', 'good', 'fair', 'poor', 'down'] as const;
export type CallQualityLevel = (typeof CALL_QUALITY_LEVELS)[number];
/** The renderer's periodic figures for the running call (throttled; `final` once at its end). Ranges are
 *  what a real call can show: anything outside is a bug or a forged report, refused. */
export const callQualityArgsSchema = z.strictObject({
  liveId: z.string().min(1).max(200),
  bitrateKbps: z.number().finite().min(0).max(100_000),
  packetLossPct: z.number().finite().min(0).max(100),
  frameRate: z.number().finite().min(0).max(240),
  rttMs: z.number().finite().min(0).max(60_000),
  level: z.enum(CALL_QUALITY_LEVELS),
  final: z.boolean().optional(),
});
export type CallQualityArgs = z.infer<typeof callQualityArgsSchema>;
/**
 * Field figures of a call, from the RTC SDK's own events as the renderer sees them: when its channel join
 * finished (`joined`, with the join's own duration), the avatar's `user-published`, and its first decoded
 * video frame (`first_frame`) or first audio (`first_audio`). Main times each report from the tap.
 */
export const CALL_MILESTONES = ['joined', 'avatar_published', 'first_frame', 'first_audio'] as const;
export type CallMilestone = (typeof CALL_MILESTONES)[number];
export const callMilestoneArgsSchema = z.strictObject({
  liveId: z.string().min(1).max(200),
  milestone: z.enum(CALL_MILESTONES),
  /** `joined` only: how long the channel join itself took (ms). */
  durationMs: z.number().finite().min(0).max(600_000).optional(),
});
export type CallMilestoneArgs = z.infer<typeof callMilestoneArgsSchema>;
/**
 * One call's field figures, all from the tap (ms; null: did not happen): our RTC side ready, the conn_init
 * ack (live), the avatar's user-published, its first decoded frame (video) or first audio; the channel
 * join's own duration; the cloud proxy mode; how the call ended. Emitted once per tap, just before its
 * terminal state (ledger, /metrics, fleet status, staff Status tab).
 */
export interface CallFigures {
  liveId: string | null;
  callMode: CallMode;
  tapToRtcReadyMs: number | null;
  tapToConnInitAckMs: number | null;
  tapToAvatarPublishedMs: number | null;
  tapToFirstFrameMs: number | null;
  tapToFirstAudioMs: number | null;
  joinMs: number | null;
  proxy: 'off' | 'udp' | 'tcp';
  endReason: string;
}
export interface CallFiguresEvent {
  type: 'call-figures';
  figures: CallFigures;
}

/** The last call's figures as main keeps them (staff Status tab, /metrics). */
export interface LastCallQuality {
  bitrateKbps: number;
  packetLossPct: number;
  frameRate: number;
  rttMs: number;
  level: CallQualityLevel;
  /** When main received these figures (ms since the epoch). */
  atMs: number;
  /** The call had ended when these were sent (its final figures). */
  final: boolean;
}

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
export const networkCheckFinishArgsSchema = z.strictObject({ checkId: z.string().min(1).max(200), outcome: networkCheckOutcomeSchema });
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

/** `null` clears the stored key (back to demo mode unless the environment sets one). Staff only. */
export const setApiKeyArgsSchema = z.strictObject({ apiKey: z.string().trim().min(8).max(512).nullable() });
export type SetApiKeyArgs = z.infer<typeof setApiKeyArgsSchema>;


/** Why the renderer hangs up: the visitor's button, the idle prompt running out, or the media watchdog
 *  (the avatar's picture or voice stopped arriving; recorded in the ledger and counted in the metrics). */
export const HANGUP_CAUSES = ['visitor', 'idle', 'media_stalled'] as const;
/** Every cause a hangup is recorded with: the renderer's, and `operator` (a remote `end-call` from the fleet,
 *  which only main gives: the page cannot claim it). */
export type HangupCause = (typeof HANGUP_CAUSES)[number] | 'operator';
export const hangupArgsSchema = z.undefined().or(z.strictObject({ cause: z.enum(HANGUP_CAUSES).optional() }));
export type HangupArgs = z.infer<typeof hangupArgsSchema>;

export const pinArgsSchema = z.strictObject({ pin: z.string().regex(/^[0-9]{4,8}$/, 'the PIN must be 4 to 8 digits') });
export type PinArgs = z.infer<typeof pinArgsSchema>;
/** A new PIN: 6 to 8 digits (a 4-digit PIN falls to a USB key injector in about a day). Unlocking still
 *  takes 4 or 5 digits, for a hash made before this rule. */
export const newPinArgsSchema = z.strictObject({ pin: z.string().regex(/^[0-9]{6,8}$/, 'the PIN must be 6 to 8 digits') });

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
export const saveSettingsArgsSchema = z.strictObject({ settings: editableSettingsSchema });
export type SaveSettingsArgs = z.infer<typeof saveSettingsArgsSchema>;

export const cloneVoiceArgsSchema = z.strictObject({
  audioUrl: z.string().trim().min(1).max(2048),
  voice: z.string().trim().min(1).max(64),
  language: z.string().trim().min(2).max(16).optional(),
});
export type CloneVoiceArgs = z.infer<typeof cloneVoiceArgsSchema>;

export const ledgerCsvArgsSchema = z.strictObject({
  since: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'since must be a date as YYYY-MM-DD').optional(),
});
export type LedgerCsvArgs = z.infer<typeof ledgerCsvArgsSchema>;

/**
 * The avatar's volume on this kiosk: a whole percent, 0 (silent) to 100 (as the service sends it). 100 is
 * the most every engine plays without amplifying (agora-web's remote `setVolume` tops out there), so
 * staff turn the avatar down from it and back up to it. Staff set it here; the fleet with `set-volume`.
 */
export const AVATAR_VOLUME_MIN = 0;
export const AVATAR_VOLUME_MAX = 100;
const AVATAR_VOLUME_RULE = `the volume is a whole percent from ${AVATAR_VOLUME_MIN} to ${AVATAR_VOLUME_MAX}`;
export const avatarVolumeSchema = z
  .number({ error: AVATAR_VOLUME_RULE })
  .int({ error: AVATAR_VOLUME_RULE })
  .min(AVATAR_VOLUME_MIN, { error: AVATAR_VOLUME_RULE })
  .max(AVATAR_VOLUME_MAX, { error: AVATAR_VOLUME_RULE });
export const setAvatarVolumeArgsSchema = z.strictObject({ percent: avatarVolumeSchema });
export type SetAvatarVolumeArgs = z.infer<typeof setAvatarVolumeArgsSchema>;

export const openAtLoginArgsSchema = z.strictObject({ enabled: z.boolean() });
export type OpenAtLoginArgs = z.infer<typeof openAtLoginArgsSchema>;

export const reportErrorArgsSchema = z.strictObject({
  message: z.string().max(2000),
  stack: z.string().max(8000).optional(),
  source: z.string().max(200).optional(),
});
export type ReportErrorArgs = z.infer<typeof reportErrorArgsSchema>;
/** `present: null` = no camera, detection off, or unknown. */
export const attractReportArgsSchema = z.strictObject({ showing: z.boolean(), present: z.boolean().nullable() });
export type AttractReportArgs = z.infer<typeof attractReportArgsSchema>;
/** A step of the visitor funnel the page senses (docs/analytics.md): its name and nothing else, so no
 *  time, image or identifier can travel with it. Main rate-limits them (kiosk/visitor-funnel.ts). */
export const VISITOR_STEPS = ['noticed', 'approached', 'greeted'] as const;
export const visitorStepArgsSchema = z.strictObject({ step: z.enum(VISITOR_STEPS) });
export type VisitorStepArgs = z.infer<typeof visitorStepArgsSchema>;

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

// ---------------------------------------------------------------------------------------------------
// The channels

/** `visitor`: anyone on the kiosk page; `staff`: only while the staff panel is unlocked (each call
 *  refreshes the panel's idle timeout). The PIN pad's own channels are `visitor`. */
export type Access = 'visitor' | 'staff';

export type { ArgMode, ApiShape };

export interface ChannelSpec {
  readonly channel: `kiosk:${string}`;
  readonly access: Access;
  readonly arg: ArgMode;
  readonly args: z.ZodType;
  readonly whenOmitted?: unknown;
  /** The result type, for the compiler only (`returns<T>()` is undefined at run time). */
  readonly result: unknown;
}

/** A type-only marker for `ChannelSpec.result`. */
const returns = <T>(): T => undefined as T;

export const KIOSK_API = {
  session: {
    start: { channel: 'kiosk:session:start', access: 'visitor', arg: 'optional', whenOmitted: {}, args: startArgsSchema, result: returns<{ liveId: string | null }>() },
    hangup: { channel: 'kiosk:session:hangup', access: 'visitor', arg: 'optional', args: hangupArgsSchema, result: returns<void>() },
    getState: { channel: 'kiosk:session:get-state', access: 'visitor', arg: 'none', args: noArgsSchema, result: returns<SessionState>() },
    setMuted: { channel: 'kiosk:session:set-muted', access: 'visitor', arg: 'required', args: setMutedArgsSchema, result: returns<void>() },
    /** The renderer reports a media/RTC failure (mic denied, join failed); main ends the session. */
    reportMediaError: { channel: 'kiosk:session:report-media-error', access: 'visitor', arg: 'required', args: mediaErrorArgsSchema, result: returns<void>() },
    /** The renderer joined the session's RTC channel; `accepted` false: not the running session (ignored). */
    rtcReady: { channel: 'kiosk:session:rtc-ready', access: 'visitor', arg: 'required', args: rtcReadyArgsSchema, result: returns<{ accepted: boolean }>() },
    /** The running call's connection figures (every few seconds, and once at its end); main keeps the last. */
    reportQuality: { channel: 'kiosk:session:report-quality', access: 'visitor', arg: 'required', args: callQualityArgsSchema, result: returns<{ accepted: boolean }>() },
    /** The running call's field milestones from the RTC SDK's events; `accepted` false: not the running call. */
    reportMilestone: { channel: 'kiosk:session:report-milestone', access: 'visitor', arg: 'required', args: callMilestoneArgsSchema, result: returns<{ accepted: boolean }>() },
    /** A visitor tapped to talk on an adult kiosk: the age gate shows (counted as asked). */
    ageGateAsk: { channel: 'kiosk:session:age-gate-ask', access: 'visitor', arg: 'none', args: noArgsSchema, result: returns<AgeGateTicket>() },
    /** The visitor's own answer; "yes" opens the next call (a `staff` check refuses it: staff unlock). */
    ageGateAnswer: { channel: 'kiosk:session:age-gate-answer', access: 'visitor', arg: 'required', args: ageGateAnswerArgsSchema, result: returns<{ passed: boolean }>() },
    /** `ageCheck: staff`: a member of staff (the panel unlocked with the PIN) opens the next call. */
    ageGateStaffUnlock: { channel: 'kiosk:session:age-gate-staff-unlock', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<{ passed: boolean }>() },
  },
  config: {
    get: { channel: 'kiosk:config:get', access: 'visitor', arg: 'none', args: noArgsSchema, result: returns<PublicConfig>() },
  },
  staff: {
    pinState: { channel: 'kiosk:staff:pin-state', access: 'visitor', arg: 'none', args: noArgsSchema, result: returns<PinState>() },
    setPin: { channel: 'kiosk:staff:set-pin', access: 'visitor', arg: 'required', args: newPinArgsSchema, result: returns<PinState>() },
    unlock: { channel: 'kiosk:staff:unlock', access: 'visitor', arg: 'required', args: pinArgsSchema, result: returns<PinState>() },
    lock: { channel: 'kiosk:staff:lock', access: 'visitor', arg: 'none', args: noArgsSchema, result: returns<void>() },
    status: { channel: 'kiosk:staff:status', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<StaffStatus>() },
    getSettings: { channel: 'kiosk:staff:get-settings', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<StaffSettings>() },
    saveSettings: { channel: 'kiosk:staff:save-settings', access: 'staff', arg: 'required', args: saveSettingsArgsSchema, result: returns<SaveSettingsResult>() },
    setApiKey: { channel: 'kiosk:staff:set-api-key', access: 'staff', arg: 'required', args: setApiKeyArgsSchema, result: returns<StaffSettings>() },
    listVoices: { channel: 'kiosk:staff:list-voices', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<VoiceList>() },
    cloneVoice: { channel: 'kiosk:staff:clone-voice', access: 'staff', arg: 'required', args: cloneVoiceArgsSchema, result: returns<{ voice: string }>() },
    runDoctor: { channel: 'kiosk:staff:run-doctor', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<DoctorReport>() },
    /** The video-network check: a test session's RTC credentials for the screen to join receive-only. */
    networkCheckStart: { channel: 'kiosk:staff:network-check-start', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<NetworkCheckTicket>() },
    /** The screen's measurement; main ends the test session with type 5 and answers the report. */
    networkCheckFinish: { channel: 'kiosk:staff:network-check-finish', access: 'staff', arg: 'required', args: networkCheckFinishArgsSchema, result: returns<NetworkCheckReport>() },
    /** The service check, recorded: what the service sent (shapes only), nothing billed; also written to wire-report.json. */
    wireReport: { channel: 'kiosk:staff:wire-report', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<WireCheckResult>() },
    ledgerTotals: { channel: 'kiosk:staff:ledger-totals', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<LedgerTotals>() },
    ledgerCsv: { channel: 'kiosk:staff:ledger-csv', access: 'staff', arg: 'optional', whenOmitted: {}, args: ledgerCsvArgsSchema, result: returns<{ fileName: string; csv: string }>() },
    /** The visitor funnel (docs/analytics.md): counts only, by hour and by day, in the kiosk's own zone. */
    visitors: { channel: 'kiosk:staff:visitors', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<VisitorReport>() },
    logTail: { channel: 'kiosk:staff:log-tail', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<{ lines: string[] }>() },
    /** The avatar's volume (0–100 %), kept across restarts; the Status tab shows it. */
    setAvatarVolume: { channel: 'kiosk:staff:set-avatar-volume', access: 'staff', arg: 'required', args: setAvatarVolumeArgsSchema, result: returns<{ percent: number }>() },
    setOpenAtLogin: { channel: 'kiosk:staff:set-open-at-login', access: 'staff', arg: 'required', args: openAtLoginArgsSchema, result: returns<void>() },
    exitKiosk: { channel: 'kiosk:staff:exit-kiosk', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<void>() },
    restart: { channel: 'kiosk:staff:restart', access: 'staff', arg: 'none', args: noArgsSchema, result: returns<void>() },
  },
  app: {
    /** Any page error is worth a (redacted) log line, locked panel or not. */
    reportError: { channel: 'kiosk:app:report-error', access: 'visitor', arg: 'required', args: reportErrorArgsSchema, result: returns<void>() },
  },
  attract: {
    /** Sent whenever the attract screen shows or hides and whenever presence in front of it changes
     *  (`present: null` = no camera / detection off / unknown); drives the spare session. */
    report: { channel: 'kiosk:attract:report', access: 'visitor', arg: 'required', args: attractReportArgsSchema, result: returns<void>() },
    /** The page sensed a funnel step (someone noticed, stayed, was greeted); `counted` false: held back. */
    visitorStep: { channel: 'kiosk:attract:visitor-step', access: 'visitor', arg: 'required', args: visitorStepArgsSchema, result: returns<{ counted: boolean }>() },
  },
} as const satisfies Record<string, Record<string, ChannelSpec>>;

type Table = typeof KIOSK_API;
export type ApiGroup = keyof Table;
export type ApiMethod<G extends ApiGroup> = keyof Table[G] & string;

/** One row per channel: where it sits in the API, and its spec. */
type Row = { [G in ApiGroup]: { [M in ApiMethod<G>]: { group: G; method: M; key: `${G}${Capitalize<M>}`; spec: Table[G][M] } }[ApiMethod<G>] }[ApiGroup];

export type Channel = Row['spec']['channel'];
type SpecOf<C extends Channel> = Extract<Row, { spec: { channel: C } }>['spec'];

/** Every channel by a short name (`sessionStart`, `staffStatus`, …): `group` + `Method`. */
export type Channels = { [R in Row as R['key']]: R['spec']['channel'] };
/** Per channel: the argument schema. */
export type ArgSchemas = { [R in Row as R['spec']['channel']]: R['spec']['args'] };
/** Per channel: the result type. */
export type ChannelResults = { [R in Row as R['spec']['channel']]: R['spec']['result'] };
export type ChannelArgs<C extends Channel> = z.input<SpecOf<C>['args']>;

export interface ChannelRow {
  group: ApiGroup;
  method: string;
  spec: ChannelSpec;
}
/** The table as rows, in declaration order. */
export const CHANNEL_ROWS: readonly ChannelRow[] = Object.freeze(
  Object.entries(KIOSK_API).flatMap(([group, methods]) =>
    Object.entries(methods as Record<string, ChannelSpec>).map(([method, spec]) => ({ group: group as ApiGroup, method, spec })),
  ),
);
const ROW_BY_CHANNEL: ReadonlyMap<string, ChannelRow> = new Map(CHANNEL_ROWS.map((r) => [r.spec.channel, r]));

export const CHANNELS = Object.freeze(
  Object.fromEntries(CHANNEL_ROWS.map((r) => [`${r.group}${r.method[0]!.toUpperCase()}${r.method.slice(1)}`, r.spec.channel])),
) as Channels;
export const ARG_SCHEMAS = Object.freeze(Object.fromEntries(CHANNEL_ROWS.map((r) => [r.spec.channel, r.spec.args]))) as ArgSchemas;

/** The row of a channel of ours, or undefined (main rejects everything else). */
export function channelRow(name: string): ChannelRow | undefined {
  return ROW_BY_CHANNEL.get(name);
}

/** Is this an IPC channel of ours? (main rejects everything else). */
export function isKnownChannel(name: string): name is Channel {
  return ROW_BY_CHANNEL.has(name);
}

/** Validate a channel's argument; a failure becomes an `invalid_request` Result, never a throw. */
export function parseArgs<C extends Channel>(channel: C, arg: unknown): Result<z.output<ArgSchemas[C]>> {
  const parsed = (ARG_SCHEMAS[channel] as z.ZodType).safeParse(arg);
  if (parsed.success) return ok(parsed.data as z.output<ArgSchemas[C]>);
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length ? ` (${issue.path.join('.')})` : '';
  return fail('invalid_request', `Invalid arguments for ${channel}${where}: ${issue?.message ?? 'unexpected value'}.`);
}

// ---------------------------------------------------------------------------------------------------
// The renderer's side: `window.kiosk`

type MethodOf<S> = S extends { arg: infer A; args: infer Z extends z.ZodType; result: infer R }
  ? A extends 'none'
    ? () => Promise<Result<R>>
    : A extends 'optional'
      ? (args?: z.input<Z>) => Promise<Result<R>>
      : (args: z.input<Z>) => Promise<Result<R>>
  : never;
type DerivedApi = { [G in ApiGroup]: { [M in ApiMethod<G>]: MethodOf<Table[G][M]> } };

export interface EventSubscription {
  /** Subscribe to main's events; returns the unsubscribe function. */
  onEvent(listener: (event: KioskEvent) => void): () => void;
}

/** The API preload exposes as `window.kiosk`. Every call resolves (never rejects) with a Result. */
export type KioskApi = Omit<DerivedApi, 'session'> & { session: DerivedApi['session'] & EventSubscription };

export const API_SHAPE: ApiShape = Object.fromEntries(
  Object.entries(KIOSK_API).map(([group, methods]) => [
    group,
    Object.fromEntries(
      Object.entries(methods as Record<string, ChannelSpec>).map(([method, s]) => [
        method,
        { channel: s.channel, arg: s.arg, ...(s.whenOmitted !== undefined ? { whenOmitted: s.whenOmitted } : {}) },
      ]),
    ),
  ]),
);

/**
 * Build `window.kiosk` from the shape (electron/core/kiosk-api.ts, typed here as `KioskApi`). The preload,
 * the E2E bridge and the browser mode's socket share this one builder. It lives in a zod-free module so
 * the renderer can bundle it without this file's schemas.
 */
export const buildKioskApi: (
  shape: ApiShape,
  invoke: (channel: string, arg?: unknown) => Promise<unknown>,
  onEvent: EventSubscription['onEvent'],
) => KioskApi = buildApiFromShape;

// ---------------------------------------------------------------------------------------------------
// View models

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

/** Main → renderer: a tray menu item or the global shortcut asks the renderer (which owns the media) to act. */
export const KIOSK_COMMANDS = ['toggle-call', 'hangup', 'open-settings'] as const;
export type KioskCommand = (typeof KIOSK_COMMANDS)[number];
export interface CommandEvent {
  type: 'command';
  command: KioskCommand;
  /** For `toggle-call` from a tray "Talk to …" item: which cast member. */
  avatarId?: string;
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
export type { WireCheckResult, WireReport };
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
export const PREWARM_MODES = ['off', 'on-approach', 'always'] as const;
export type PrewarmMode = (typeof PREWARM_MODES)[number];

/**
 * A pre-warmed ("spare") session's life (fast start): created ahead of the tap, then used by a tap,
 * expired (closed with type 5 before any conn_init, never billed) or failed (dropped quietly).
 * Observers (ledger, metrics) record every spare's end; the renderer may ignore these.
 */
export interface SpareEvent {
  type: 'spare';
  status: 'created' | 'used' | 'expired' | 'failed';
  liveId: string | null;
  callMode: CallMode;
  /** Why it expired or failed (e.g. `max_age`, `nobody_present`, `settings_changed`, an error code). */
  reason?: string;
  /** On `created`: the spare's RTC credentials, so the renderer can join its channel receive-only ahead of
   *  the tap (pre-join). Never logged or recorded. */
  rtc?: RtcCredentials;
}

/** Main → renderer events: the session's own events, the shared mute state, and spare sessions. */
/** The settings changed while running (a remote `apply`, the staff panel): the page reloads its view of them. */
export interface ConfigChangedEvent {
  type: 'config-changed';
}
/** Staff or the fleet set the avatar's volume: the page plays the avatar's voice at it from now on. */
export interface AvatarVolumeEvent {
  type: 'avatar-volume';
  /** 0–100 %. */
  percent: number;
}
export type KioskEvent = SessionEvent | { type: 'muted'; muted: boolean } | SpareEvent | CommandEvent | OpeningEvent | HoldEvent | CallFiguresEvent | ConfigChangedEvent | AvatarVolumeEvent | ServiceEvent;

/**
 * Whether the kiosk can reach its service, as checked at start-up and after each settings change (a read
 * that creates nothing and bills nothing), then again with backoff while it cannot:
 * `checking` (not known yet), `demo` (the built-in emulator), `connected`, `wrong_scheme` (a URL that is
 * not https://), `no_url` (a key but no service URL), `unreachable` (no answer), `refused_key` (HTTP 401/403),
 * `not_service` (something answered, but not as the avatar service), `misconfigured` (any other setting).
 */
export const SERVICE_HEALTH_STATUSES = ['checking', 'demo', 'connected', 'wrong_scheme', 'no_url', 'unreachable', 'refused_key', 'not_service', 'misconfigured'] as const;
export type ServiceHealthStatus = (typeof SERVICE_HEALTH_STATUSES)[number];
export interface ServiceHealth {
  status: ServiceHealthStatus;
  /** A call can start (connected, demo, or not known yet). */
  ok: boolean;
  /** What is the case, for staff (English, one sentence or two). */
  message: string;
  /** What to do about it (null when nothing is to be done). */
  action: string | null;
  /** When it was last checked (ms since the epoch), or null before the first check. */
  checkedAtMs: number | null;
  /** When it is checked again by itself (ms since the epoch), or null when only a settings change will. */
  nextCheckAtMs: number | null;
}
/** The service became reachable or stopped being reachable (or why it is not changed). */
export interface ServiceEvent {
  type: 'service';
  service: ServiceHealth;
}

/** Why new calls wait: `updating` from the decision to install an update until the app quits for it. */
export type HoldReason = 'updating';
/** The attract screen shows a calm "back in a moment" screen while held; main refuses calls then too. */
export interface HoldEvent {
  type: 'hold';
  hold: HoldReason | null;
}

/** Opening hours (`schedule`): outside them the attract screen says closed and main refuses calls. */
export interface OpeningInfo {
  open: boolean;
  /** While closed: the next opening (ISO), or null when none is scheduled soon. */
  nextOpenAt: string | null;
  /** The venue's time zone, to show the opening time in (null: no schedule). */
  timeZone: string | null;
}
export interface OpeningEvent {
  type: 'opening';
  opening: OpeningInfo;
}

