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

export const startArgsSchema = z.strictObject({ callMode: z.enum(CALL_MODES).optional() });
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

// --- fast start (issue 7) ---
/** `present: null` = no camera, detection off, or unknown. */
export const attractReportArgsSchema = z.strictObject({ showing: z.boolean(), present: z.boolean().nullable() });
export type AttractReportArgs = z.infer<typeof attractReportArgsSchema>;

/** Per channel: the argument schema and the result type. */
export const ARG_SCHEMAS = {
  [CHANNELS.sessionStart]: startArgsSchema,
  [CHANNELS.sessionHangup]: noArgsSchema,
  [CHANNELS.sessionGetState]: noArgsSchema,
  [CHANNELS.sessionSetMuted]: setMutedArgsSchema,
  [CHANNELS.sessionReportMediaError]: mediaErrorArgsSchema,
  [CHANNELS.configGet]: noArgsSchema,
  [CHANNELS.configSetApiKey]: setApiKeyArgsSchema,
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
  windowMode: 'kiosk' | 'windowed';
  rtcEngine: 'auto' | 'agora-web' | 'agora-native';
  /** Seconds the ended/error screens stay before returning to attract. */
  returnToAttractSeconds: number;
  /** Seconds before live_duration at which the countdown warns. */
  countdownWarningSeconds: number;
  // --- fast start (issue 7) ---
  /** When main creates a spare session ahead of the tap (see README "Pre-warmed sessions"). */
  prewarm: { mode: PrewarmMode };
  /** May the attract screen use the camera to notice visitors (frames never leave the renderer). */
  presence: { cameraEnabled: boolean };
}

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
export type KioskEvent = SessionEvent | { type: 'muted'; muted: boolean } | SpareEvent;

/** The API preload exposes as `window.kiosk`. Every call resolves (never rejects) with a Result. */
export interface KioskApi {
  session: {
    start(args?: StartArgs): Promise<Result<{ liveId: string | null }>>;
    hangup(): Promise<Result<void>>;
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
