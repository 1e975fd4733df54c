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
 * A new result or event shape goes in its theme's file of electron/contract/ (re-exported below).
 */
import { z } from 'zod';
import { CALL_MODES, type CallMode, type RtcCredentials } from './core/protocol.ts';
import type { ErrorCode, ErrorInfo } from './core/errors.ts';
import type { SessionEvent, SessionState } from './core/session-types.ts';
import { buildKioskApi as buildApiFromShape, type ApiShape, type ArgMode } from './core/kiosk-api.ts';
import { LANGUAGE_CODES, type LanguageCode } from './core/languages.ts';
import type { WireCheckResult, WireReport } from './core/wire-report.ts';
import { CALL_QUALITY_LEVELS } from './contract/call.ts';
import type { PublicConfig } from './contract/config.ts';
import type { KioskEvent } from './contract/events.ts';
import {
  editableSettingsSchema,
  networkCheckOutcomeSchema,
  type DoctorReport,
  type LedgerTotals,
  type NetworkCheckReport,
  type NetworkCheckTicket,
  type PinState,
  type SaveSettingsResult,
  type StaffSettings,
  type StaffStatus,
  type VisitorReport,
  type VoiceList,
} from './contract/staff.ts';

export type { CallMode, RtcCredentials, ErrorCode, ErrorInfo, SessionEvent, SessionState, WireCheckResult, WireReport };
export type { SessionSummary, SessionPhase, EndedBy } from './core/session-types.ts';

// The shapes the results and events carry live in electron/contract/, one file per theme, so this file
// keeps the channels; every importer still reads them from here, the contract's one door.
export * from './contract/config.ts';
export * from './contract/availability.ts';
export * from './contract/call.ts';
export * from './contract/staff.ts';
export * from './contract/events.ts';

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

export const networkCheckFinishArgsSchema = z.strictObject({ checkId: z.string().min(1).max(200), outcome: networkCheckOutcomeSchema });

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
