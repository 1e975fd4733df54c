/**
 * The session as a UI sees it: the states the controller moves through, the summary it ends with, and
 * the events it emits. Plain data only (no classes, no functions), so it crosses IPC unchanged and the
 * renderer can import these types through electron/contract.ts.
 */
import type { ErrorInfo } from './errors.ts';
import type { CallMode, HangupReason, Moderation, RtcCredentials } from './protocol.ts';

/** Which surface of the service to use (spec §4, §5). The key exists only on the direct surface. */
export type ServiceTarget =
  | { surface: 'direct'; baseUrl: string; apiKey: string }
  | { surface: 'gateway'; gatewayUrl: string; headers?: Record<string, string> };

/** The avatar as a caller describes it; `image` is a local file path, an http(s) URL or a data: URI. */
export interface AvatarInput {
  persona: string;
  image: string;
  name?: string;
  voice?: string;
}

export interface StartOptions {
  callMode: CallMode;
  avatar: AvatarInput;
  moderation?: Moderation;
  extraMotion?: boolean;
}

export type SessionPhase =
  | 'idle'
  | 'creating'
  | 'held'
  | 'connecting'
  | 'warming'
  | 'live'
  | 'reconnecting'
  | 'ending'
  | 'ended'
  | 'failed';

/** Who ended the call. */
export type EndedBy = 'client' | 'server' | 'network' | 'limit';

export interface SessionSummary {
  liveId: string;
  callMode: CallMode;
  wentLive: boolean;
  /** The server's forced reason, or `user_end` when the client ended it. */
  hangupReason: HangupReason | null;
  endedBy: EndedBy | null;
  /** `live.status` from the query endpoint after the end (null if it could not be read). */
  finalStatus: string | null;
  billedSeconds: number | null;
  creditsCost: number | null;
  notReadyRetries: number;
  reconnects: number;
  /** The session's maximum length in seconds, from the create response. */
  liveDurationS: number;
  /** Milliseconds since the create request began; null when that point was never reached. */
  timingsMs: { create: number | null; socketOpen: number | null; live: number | null; ended: number | null };
}

export type SessionState =
  | { phase: 'idle' }
  | { phase: 'creating' }
  /**
   * A spare: created ahead of the tap, its control socket opening or open (`socketOpen`) and holding
   * conn_init, so the service keeps it `waiting` and never bills it (spec §3). `release` (the tap) moves
   * it to `connecting`; otherwise it ends with type 5 before any conn_init, at the latest at `expiresAtMs`.
   */
  | { phase: 'held'; liveId: string; socketOpen: boolean; expiresAtMs: number }
  /** Socket opening / conn_init sent, waiting for the ack. `attempt` counts sockets opened (1-based). */
  | { phase: 'connecting'; liveId: string; attempt: number }
  /** NOT_READY: waiting `retryInMs` before the next conn_init (spec §6 rule 2). */
  | { phase: 'warming'; liveId: string; notReadyRetries: number; retryInMs: number; retryAtMs: number }
  /** The avatar is live; billing runs. `endsAtMs` = live start + live_duration (clock time). */
  | { phase: 'live'; liveId: string; sinceMs: number; endsAtMs: number }
  /** The control socket dropped while live; the call (RTC) continues while we reconnect. */
  | { phase: 'reconnecting'; liveId: string; attempt: number; sinceMs: number; endsAtMs: number }
  | { phase: 'ending'; liveId: string; reason: HangupReason }
  | { phase: 'ended'; liveId: string; summary: SessionSummary }
  | { phase: 'failed'; liveId: string | null; error: ErrorInfo; summary: SessionSummary | null };

export type SessionEvent =
  | { type: 'state'; state: SessionState; previous: SessionPhase }
  /** RTC credentials for the renderer's engine, emitted once the session is created. */
  | { type: 'credentials'; liveId: string; callMode: CallMode; liveDurationS: number; rtc: RtcCredentials }
  /** Something a person should know that does not stop the call (e.g. a name over 20 characters). */
  | { type: 'warning'; message: string };
