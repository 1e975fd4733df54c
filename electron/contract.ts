/**
 * The one IPC contract between main, preload and renderer. Channel names, argument schemas, result
 * and event types live here and nowhere else. Main registers every handler through a typed `handle()`
 * that validates arguments with these schemas and checks the sender frame; preload exposes the narrow
 * `KioskApi` below as `window.kiosk`; the renderer imports only types (and the pure helpers) from here.
 *
 * The renderer never receives the API key: `PublicConfig` says only whether one is set, and
 * `config.setApiKey` is write-only.
 */
import { z } from 'zod';
import { CALL_MODES, type CallMode, type RtcCredentials } from './core/protocol.ts';
import type { ErrorCode, ErrorInfo } from './core/errors.ts';
import type { SessionEvent, SessionState } from './core/session-types.ts';

export type { CallMode, RtcCredentials, ErrorCode, ErrorInfo, SessionEvent, SessionState };
export type { SessionSummary, SessionPhase, EndedBy } from './core/session-types.ts';

export const IPC_PREFIX = 'kiosk:';

/** Renderer → main (invoke/handle). */
export const CHANNELS = {
  sessionStart: 'kiosk:session:start',
  sessionHangup: 'kiosk:session:hangup',
  sessionGetState: 'kiosk:session:get-state',
  sessionSetMuted: 'kiosk:session:set-muted',
  /** The renderer reports a media/RTC failure (mic denied, join failed); main ends the session. */
  sessionReportMediaError: 'kiosk:session:report-media-error',
  configGet: 'kiosk:config:get',
  configSetApiKey: 'kiosk:config:set-api-key',
  // --- staff operations (issue 6) ---
  staffPinState: 'kiosk:staff:pin-state',
  staffSetPin: 'kiosk:staff:set-pin',
  staffUnlock: 'kiosk:staff:unlock',
  staffLock: 'kiosk:staff:lock',
  staffStatus: 'kiosk:staff:status',
  staffGetSettings: 'kiosk:staff:get-settings',
  staffSaveSettings: 'kiosk:staff:save-settings',
  staffSetApiKey: 'kiosk:staff:set-api-key',
  staffListVoices: 'kiosk:staff:list-voices',
  staffCloneVoice: 'kiosk:staff:clone-voice',
  staffRunDoctor: 'kiosk:staff:run-doctor',
  staffLedgerTotals: 'kiosk:staff:ledger-totals',
  staffLedgerCsv: 'kiosk:staff:ledger-csv',
  staffLogTail: 'kiosk:staff:log-tail',
  staffSetOpenAtLogin: 'kiosk:staff:set-open-at-login',
  staffExitKiosk: 'kiosk:staff:exit-kiosk',
  staffRestart: 'kiosk:staff:restart',
  appReportError: 'kiosk:app:report-error',
  // --- end staff operations ---
  // --- fast start (issue 7) ---
  /** The attract screen shows/hides, or presence in front of it changes (drives the spare session). */
  attractReport: 'kiosk:attract:report',
} as const;
export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

/** Main → renderer (send/on). */
export const EVENT_CHANNEL = 'kiosk:event' as const;

/** Every handler answers with a Result: Electron carries only an error's message across IPC. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorInfo };
export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (code: ErrorCode, message: string): Result<never> => ({ ok: false, error: { code, message } });

// ---------------------------------------------------------------------------------------------------
// Arguments (validated in main before a handler runs)

export const startArgsSchema = z.strictObject({
  callMode: z.enum(CALL_MODES).optional(),
  // --- cast of avatars (issue 8) ---
  /** Which cast member to talk to (`PublicConfig.cast[].id`); default: the first. */
  avatarId: z.string().min(1).max(64).optional(),
});
export type StartArgs = z.infer<typeof startArgsSchema>;

export const setMutedArgsSchema = z.strictObject({ muted: z.boolean() });
export type SetMutedArgs = z.infer<typeof setMutedArgsSchema>;

export const MEDIA_ERROR_KINDS = ['microphone_denied', 'camera_denied', 'device_missing', 'rtc_join_failed', 'rtc_disconnected', 'engine_unavailable', 'other'] as const;
export type MediaErrorKind = (typeof MEDIA_ERROR_KINDS)[number];
export const mediaErrorArgsSchema = z.strictObject({
  kind: z.enum(MEDIA_ERROR_KINDS),
  message: z.string().max(500),
});
export type MediaErrorArgs = z.infer<typeof mediaErrorArgsSchema>;

/** `null` clears the stored key (back to demo mode unless the environment sets one). */
export const setApiKeyArgsSchema = z.strictObject({ apiKey: z.string().trim().min(8).max(512).nullable() });
export type SetApiKeyArgs = z.infer<typeof setApiKeyArgsSchema>;

export const noArgsSchema = z.undefined().or(z.strictObject({}));

// --- staff operations (issue 6): argument schemas ---
/** Why the renderer hangs up: the visitor's button, or the idle prompt running out (recorded in the ledger). */
export const HANGUP_CAUSES = ['visitor', 'idle'] as const;
export type HangupCause = (typeof HANGUP_CAUSES)[number];
export const hangupArgsSchema = z.undefined().or(z.strictObject({ cause: z.enum(HANGUP_CAUSES).optional() }));
export type HangupArgs = z.infer<typeof hangupArgsSchema>;

export const pinArgsSchema = z.strictObject({ pin: z.string().regex(/^[0-9]{4,8}$/, 'the PIN must be 4 to 8 digits') });
export type PinArgs = z.infer<typeof pinArgsSchema>;

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

export const openAtLoginArgsSchema = z.strictObject({ enabled: z.boolean() });
export type OpenAtLoginArgs = z.infer<typeof openAtLoginArgsSchema>;

export const reportErrorArgsSchema = z.strictObject({
  message: z.string().max(2000),
  stack: z.string().max(8000).optional(),
  source: z.string().max(200).optional(),
});
export type ReportErrorArgs = z.infer<typeof reportErrorArgsSchema>;
// --- end staff operations ---
// --- fast start (issue 7) ---
/** `present: null` = no camera, detection off, or unknown. */
export const attractReportArgsSchema = z.strictObject({ showing: z.boolean(), present: z.boolean().nullable() });
export type AttractReportArgs = z.infer<typeof attractReportArgsSchema>;

/** Per channel: the argument schema and the result type. */
export const ARG_SCHEMAS = {
  [CHANNELS.sessionStart]: startArgsSchema,
  [CHANNELS.sessionHangup]: hangupArgsSchema,
  [CHANNELS.sessionGetState]: noArgsSchema,
  [CHANNELS.sessionSetMuted]: setMutedArgsSchema,
  [CHANNELS.sessionReportMediaError]: mediaErrorArgsSchema,
  [CHANNELS.configGet]: noArgsSchema,
  [CHANNELS.configSetApiKey]: setApiKeyArgsSchema,
  // --- staff operations (issue 6) ---
  [CHANNELS.staffPinState]: noArgsSchema,
  [CHANNELS.staffSetPin]: pinArgsSchema,
  [CHANNELS.staffUnlock]: pinArgsSchema,
  [CHANNELS.staffLock]: noArgsSchema,
  [CHANNELS.staffStatus]: noArgsSchema,
  [CHANNELS.staffGetSettings]: noArgsSchema,
  [CHANNELS.staffSaveSettings]: saveSettingsArgsSchema,
  [CHANNELS.staffSetApiKey]: setApiKeyArgsSchema,
  [CHANNELS.staffListVoices]: noArgsSchema,
  [CHANNELS.staffCloneVoice]: cloneVoiceArgsSchema,
  [CHANNELS.staffRunDoctor]: noArgsSchema,
  [CHANNELS.staffLedgerTotals]: noArgsSchema,
  [CHANNELS.staffLedgerCsv]: ledgerCsvArgsSchema,
  [CHANNELS.staffLogTail]: noArgsSchema,
  [CHANNELS.staffSetOpenAtLogin]: openAtLoginArgsSchema,
  [CHANNELS.staffExitKiosk]: noArgsSchema,
  [CHANNELS.staffRestart]: noArgsSchema,
  [CHANNELS.appReportError]: reportErrorArgsSchema,
  // --- fast start (issue 7) ---
  [CHANNELS.attractReport]: attractReportArgsSchema,
} as const satisfies Record<Channel, z.ZodType>;

export interface ChannelResults {
  [CHANNELS.sessionStart]: { liveId: string | null };
  [CHANNELS.sessionHangup]: void;
  [CHANNELS.sessionGetState]: SessionState;
  [CHANNELS.sessionSetMuted]: void;
  [CHANNELS.sessionReportMediaError]: void;
  [CHANNELS.configGet]: PublicConfig;
  [CHANNELS.configSetApiKey]: PublicConfig;
  // --- staff operations (issue 6) ---
  [CHANNELS.staffPinState]: PinState;
  [CHANNELS.staffSetPin]: PinState;
  [CHANNELS.staffUnlock]: PinState;
  [CHANNELS.staffLock]: void;
  [CHANNELS.staffStatus]: StaffStatus;
  [CHANNELS.staffGetSettings]: StaffSettings;
  [CHANNELS.staffSaveSettings]: SaveSettingsResult;
  [CHANNELS.staffSetApiKey]: StaffSettings;
  [CHANNELS.staffListVoices]: VoiceList;
  [CHANNELS.staffCloneVoice]: { voice: string };
  [CHANNELS.staffRunDoctor]: DoctorReport;
  [CHANNELS.staffLedgerTotals]: LedgerTotals;
  [CHANNELS.staffLedgerCsv]: { fileName: string; csv: string };
  [CHANNELS.staffLogTail]: { lines: string[] };
  [CHANNELS.staffSetOpenAtLogin]: void;
  [CHANNELS.staffExitKiosk]: void;
  [CHANNELS.staffRestart]: void;
  [CHANNELS.appReportError]: void;
  // --- fast start (issue 7) ---
  [CHANNELS.attractReport]: void;
}
export type ChannelArgs<C extends Channel> = z.input<(typeof ARG_SCHEMAS)[C]>;

// ---------------------------------------------------------------------------------------------------
// View models

/** What the renderer may know of the configuration. No secrets. */
export interface PublicConfig {
  /** `demo`: the embedded emulator (no key configured); `direct`/`gateway`: the real service. */
  mode: 'demo' | 'direct' | 'gateway';
  hasApiKey: boolean;
  /** Where the key comes from, for the operator: environment, stored (encrypted), or none. */
  apiKeySource: 'env' | 'stored' | 'none';
  /** Whether the stored key is only weakly protected (Linux without a keyring). */
  apiKeyWeaklyProtected: boolean;
  callMode: CallMode;
  /** Let the visitor choose audio or video on the attract screen. */
  allowModeChoice: boolean;
  avatar: { name: string; imageDataUrl: string | null; voice: string };
  rtcEngine: 'auto' | 'agora-web' | 'agora-native';
  /** Seconds the ended/error screens stay before returning to attract. */
  returnToAttractSeconds: number;
  /** Seconds before live_duration at which the countdown warns. */
  countdownWarningSeconds: number;
  // --- staff operations (issue 6) ---
  /** Silence (no voice, nobody in front of the camera) before "Are you still there?", then until hang-up. */
  idle: { promptSeconds: number; hangupSeconds: number };
  /** The venue's maximum call length (below live_duration); main hangs up there, and the live state's
   *  `endsAtMs` already reflects it. null: the service's live_duration only. */
  maxCallSeconds: number | null;
  // --- fleets and companions (issue 8) ---
  /** The avatars a visitor may pick (length ≥ 1, config order). `avatar` above is always `cast[0]`. */
  cast: CastMember[];
  /** How the avatar video fills the screen (resolved: config `video.fit`, else `cover` in a portrait window). */
  video: { fit: VideoFit };
  /** The window's mode (`companion`: compact always-on-top window with a tray icon). */
  windowMode: 'kiosk' | 'windowed' | 'companion';
  /** Desktop companion settings (meaningful when windowMode is `companion`). */
  companion: { pushToTalk: boolean; shortcut: string };
  // --- fast start (issue 7) ---
  /** When main creates a spare session ahead of the tap (see README "Fast start"). */
  prewarm: { mode: PrewarmMode };
  /** May the attract screen use the camera to notice visitors (frames never leave the renderer). */
  presence: { cameraEnabled: boolean };
}

// --- fleets and companions (issue 8) ---
export const VIDEO_FITS = ['contain', 'cover'] as const;
export type VideoFit = (typeof VIDEO_FITS)[number];

/** One avatar of the cast, as the attract screen shows it. */
export interface CastMember {
  id: string;
  name: string;
  imageDataUrl: string | null;
  callMode: CallMode;
  greeting: string | null;
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

// --- staff operations (issue 6): view models ---
export interface PinState {
  pinSet: boolean;
  unlocked: boolean;
  /** > 0 while the pad is locked after 5 wrong tries. */
  lockedForMs: number;
  attemptsLeft: number;
}
export interface StaffStatus {
  mode: 'demo' | 'direct' | 'gateway';
  serviceUrl: string | null;
  hasApiKey: boolean;
  /** The last 20 errors, newest last. */
  errors: Array<{ atMs: number; code: string; message: string }>;
  version: string;
  uptimeS: number;
  today: { sessions: number; credits: number; unknownCredits: number };
  /** null where the platform does not support it. */
  openAtLogin: boolean | null;
}
export interface StaffSettings {
  settings: EditableSettings;
  hasApiKey: boolean;
  apiKeySource: 'env' | 'stored' | 'none';
  /** Dotted keys locked by policy (fleet issue); [] for now. */
  managed: string[];
}
export type SaveSettingsResult =
  | { saved: true; settings: StaffSettings; restartRequired: boolean }
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
}
export interface LedgerTotals {
  today: LedgerTotalsRow;
  last7Days: LedgerTotalsRow;
  month: LedgerTotalsRow;
}
// --- end staff operations ---
// --- fast start (issue 7) ---
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
}

/** Main → renderer events: the session's own events, the shared mute state, and spare sessions. */
export type KioskEvent = SessionEvent | { type: 'muted'; muted: boolean } | SpareEvent | CommandEvent;

/** The API preload exposes as `window.kiosk`. Every call resolves (never rejects) with a Result. */
export interface KioskApi {
  session: {
    start(args?: StartArgs): Promise<Result<{ liveId: string | null }>>;
    hangup(args?: HangupArgs): Promise<Result<void>>;
    getState(): Promise<Result<SessionState>>;
    setMuted(args: SetMutedArgs): Promise<Result<void>>;
    reportMediaError(args: MediaErrorArgs): Promise<Result<void>>;
    /** Subscribe to session events; returns the unsubscribe function. */
    onEvent(listener: (event: KioskEvent) => void): () => void;
  };
  config: {
    get(): Promise<Result<PublicConfig>>;
    setApiKey(args: SetApiKeyArgs): Promise<Result<PublicConfig>>;
  };
  // --- staff operations (issue 6) ---
  staff: {
    pinState(): Promise<Result<PinState>>;
    setPin(args: PinArgs): Promise<Result<PinState>>;
    unlock(args: PinArgs): Promise<Result<PinState>>;
    lock(): Promise<Result<void>>;
    status(): Promise<Result<StaffStatus>>;
    getSettings(): Promise<Result<StaffSettings>>;
    saveSettings(args: SaveSettingsArgs): Promise<Result<SaveSettingsResult>>;
    setApiKey(args: SetApiKeyArgs): Promise<Result<StaffSettings>>;
    listVoices(): Promise<Result<VoiceList>>;
    cloneVoice(args: CloneVoiceArgs): Promise<Result<{ voice: string }>>;
    runDoctor(): Promise<Result<DoctorReport>>;
    ledgerTotals(): Promise<Result<LedgerTotals>>;
    ledgerCsv(args?: LedgerCsvArgs): Promise<Result<{ fileName: string; csv: string }>>;
    logTail(): Promise<Result<{ lines: string[] }>>;
    setOpenAtLogin(args: OpenAtLoginArgs): Promise<Result<void>>;
    exitKiosk(): Promise<Result<void>>;
    restart(): Promise<Result<void>>;
  };
  app: {
    reportError(args: ReportErrorArgs): Promise<Result<void>>;
  };
  // --- fast start (issue 7) ---
  attract: {
    /** Send whenever the attract screen shows or hides and whenever presence changes
     *  (`present: null` = no camera / detection off / unknown). */
    report(args: AttractReportArgs): Promise<Result<void>>;
  };
}

/** Is this an IPC channel of ours? (main rejects everything else). */
export function isKnownChannel(name: string): name is Channel {
  return (Object.values(CHANNELS) as string[]).includes(name);
}

/** Validate a channel's argument; a failure becomes an `invalid_request` Result, never a throw. */
export function parseArgs<C extends Channel>(channel: C, arg: unknown): Result<z.output<(typeof ARG_SCHEMAS)[C]>> {
  const parsed = ARG_SCHEMAS[channel].safeParse(arg);
  if (parsed.success) return ok(parsed.data as z.output<(typeof ARG_SCHEMAS)[C]>);
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length ? ` (${issue.path.join('.')})` : '';
  return fail('invalid_request', `Invalid arguments for ${channel}${where}: ${issue?.message ?? 'unexpected value'}.`);
}
