/**
 * The vocabulary of the session machine (session-machine.ts): the events it takes, the effects it asks
 * for, the context behind its visible state, and its configuration. Types only (and one default), so the
 * driver and its helpers can name them without the transition function.
 */
import type { ErrorInfo } from './errors.ts';
import type { CallMode, HangupReason } from './protocol.ts';
import type { ReconnectPolicy } from './reconnect-policy.ts';
import type { EndedBy, SessionState } from './session-types.ts';

// ---------------------------------------------------------------------------------------------------
// Events and effects

/** What the billing query returned after the end (spec §4.2). */
export interface FinalRecord {
  status: string;
  billedSeconds: number | null;
  creditsCost: number | null;
  /** A hangup reason the server's record carried, if any (not in the spec; read when present). */
  hangupReason?: string | null;
}

export type MachineEvent =
  | { type: 'start'; atMs: number; callMode: CallMode }
  /** Start as a spare: create the session and open its socket holding conn_init, for at most `holdForMs` after the create answers. */
  | { type: 'hold'; atMs: number; callMode: CallMode; holdForMs: number }
  /** The tap takes the held session: conn_init goes out (RTC first: once the RTC side is ready). */
  | { type: 'release'; atMs: number }
  /** A held session reached its `expiresAtMs` unused. */
  | { type: 'hold-expired'; atMs: number }
  | { type: 'created'; atMs: number; liveId: string; liveDurationS: number; callMode: CallMode }
  | { type: 'create-failed'; atMs: number; error: ErrorInfo }
  | { type: 'socket-open'; atMs: number }
  | { type: 'ack-success'; atMs: number }
  | { type: 'ack-not-ready'; atMs: number }
  | { type: 'ack-failed'; atMs: number; errorCode: string }
  | { type: 'forced-hangup'; atMs: number; reason: HangupReason }
  /** The control socket closed, errored or was found dead. `error.code` decides retry vs fatal. */
  | { type: 'socket-lost'; atMs: number; error: ErrorInfo }
  | { type: 'retry-due'; atMs: number }
  /** The user (or an AbortSignal, or dispose) ends the session. */
  | { type: 'hangup-requested'; atMs: number; reason: HangupReason }
  /** live_duration (+ grace) passed and the server has not ended the call. */
  | { type: 'duration-reached'; atMs: number }
  /** The status query made while reconnecting answered. */
  | { type: 'status-known'; atMs: number; record: FinalRecord }
  /** The billing query after the end finished (`record` null: it could not be read). */
  | { type: 'end-confirmed'; atMs: number; record: FinalRecord | null }
  /** Something unexpected broke in the driver. */
  | { type: 'error'; atMs: number; error: ErrorInfo }
  /** The renderer's side of the RTC channel is ready (joined, remote handler in place, microphone track ready). */
  | { type: 'rtc-ready'; atMs: number }
  /** Our side of the RTC channel failed (join refused, blocked network) or did not get ready in time. */
  | { type: 'rtc-failed'; atMs: number; error: ErrorInfo };

export type MachineEffect =
  /** Build the request and POST it (spec §4.1). Never retried. */
  | { type: 'create-session' }
  /**
   * Cancel the create: the driver stops it before the request is sent; once sent, it waits (bounded) for
   * the answer, because the service may have made the room and only the answer names it (`created` then
   * closes it).
   */
  | { type: 'abort-create' }
  /** Emit the `credentials` event (the renderer joins RTC). */
  | { type: 'emit-credentials' }
  /**
   * Open a new control socket (fresh URL/headers, seq_id from 1); it sends conn_init on open, unless
   * `holdConnInit`: then it only keeps the session company until `send-conn-init` (RTC first, then billing).
   */
  | { type: 'open-socket'; holdConnInit?: true }
  /** Send the held conn_init on the current socket (or on a fresh socket when it is not open yet). */
  | { type: 'send-conn-init' }
  /** Fire `rtc-failed` (timeout) at `atMs` unless the RTC side reports ready first. */
  | { type: 'schedule-rtc-guard'; atMs: number }
  | { type: 'cancel-rtc-guard' }
  /** Close the current control socket and ignore anything it still reports. */
  | { type: 'close-socket' }
  /**
   * Send type 5 with `reason` and close (spec §6 rule 7). On the current socket when it is open; otherwise
   * on a short-lived socket that sends only the hangup (never conn_init, so the avatar never goes live).
   */
  | { type: 'send-hangup'; reason: HangupReason }
  | { type: 'schedule-retry'; delayMs: number }
  | { type: 'cancel-retry' }
  /** Fire `hold-expired` at `atMs` (clock time). */
  | { type: 'schedule-hold-expiry'; atMs: number }
  | { type: 'cancel-hold-expiry' }
  /** Fire `duration-reached` at `atMs` (clock time). */
  | { type: 'schedule-duration-guard'; atMs: number }
  | { type: 'cancel-duration-guard' }
  /** Ask the server whether the session is still on (while reconnecting) → `status-known`. */
  | { type: 'query-status' }
  /** Poll the session until `ended` (bounded) → `end-confirmed` with the billing figures. */
  | { type: 'query-final' };

// ---------------------------------------------------------------------------------------------------
// Machine state

/** Counters and timestamps behind the visible state; all times are clock milliseconds. */
export interface SessionContext {
  callMode: CallMode;
  liveId: string | null;
  liveDurationS: number;
  /** When the create request began: the origin of `timingsMs`. */
  startedAtMs: number;
  createdAtMs: number | null;
  firstSocketOpenAtMs: number | null;
  liveAtMs: number | null;
  endedAtMs: number | null;
  /** Sockets opened so far (1-based attempt of the current one). */
  socketsOpened: number;
  notReadyRetries: number;
  /** Retries before going live (NOT_READY and pre-live drops); the NOT_READY policy's attempt counter. */
  preLiveRetries: number;
  /** When the pre-live retry episode began (first NOT_READY or drop). */
  warmupStartedAtMs: number | null;
  /** Sockets opened to restore a live connection, over the whole session. */
  reconnects: number;
  /** Attempts in the current reconnect episode, and when it began. */
  reconnectAttempt: number;
  dropStartedAtMs: number | null;
  /** Live start and end of live_duration (clock time); null before live. */
  liveSinceMs: number | null;
  endsAtMs: number | null;
  wentLive: boolean;
  hangupReason: HangupReason | null;
  endedBy: EndedBy | null;
  /** Set when the session is ending because something failed: the end is then `failed` with this error. */
  failure: ErrorInfo | null;
  /** The user cancelled while the create request was in flight. */
  cancelledDuringCreate: boolean;
  lastError: ErrorInfo | null;
  /** The renderer reported its side of the RTC channel ready (only tracked with `awaitRtcReady`). */
  rtcReady: boolean;
  /** The current socket holds its conn_init until the RTC side is ready. */
  connInitHeld: boolean;
  /** While the session is a spare (started by `hold`, not yet released): how long it may stay held. */
  holdForMs: number | null;
}

export interface Machine {
  state: SessionState;
  context: SessionContext;
}

export interface MachineConfig {
  notReadyPolicy: ReconnectPolicy;
  liveReconnectPolicy: ReconnectPolicy;
  /** How long after `endsAtMs` to wait for the server's own `timeout` before hanging up ourselves. */
  durationGraceMs: number;
  /**
   * RTC first, then billing: conn_init waits for `rtc-ready` (the socket opens meanwhile, holding it), and
   * an RTC failure before then ends the session with type 5 and no conn_init. Off for callers with no RTC
   * side (the CLI probe).
   */
  awaitRtcReady?: boolean;
  /** With `awaitRtcReady`: how long the RTC side may take before the session is given up. Default 30 000. */
  rtcReadyTimeoutMs?: number;
}

/** Default bound on the renderer's join before the session is given up (type 5, never billed). */
export const RTC_READY_TIMEOUT_MS = 30_000;

export interface TransitionResult {
  machine: Machine;
  effects: MachineEffect[];
}
