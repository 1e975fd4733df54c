/**
 * What a SessionController is built with: its service client, clock, policies and bounds, each with its
 * default. Kept apart from the driver so the driver file holds only how a session runs.
 */
import type { BuiltCreateRequest } from './avatar-input.ts';
import type { Clock } from './clock.ts';
import type { KeepAlive } from './keep-alive.ts';
import type { Logger } from './log.ts';
import type { ReconnectPolicy } from './reconnect-policy.ts';
import type { ServiceClient } from './rest-client.ts';
import type { SessionState, StartOptions } from './session-types.ts';
import type { TransportFactory } from './transport.ts';

export interface SessionControllerOptions {
  client: Pick<ServiceClient, 'createSession' | 'querySession' | 'socketRequest'>;
  clock?: Clock;
  logger?: Logger;
  /** Default: `wsTransportFactory` (the `ws` package). */
  transportFactory?: TransportFactory;
  /** Default `notReadyPolicy`: `NOT_READY_BACKOFF_MS`, its last delay repeated, within `NOT_READY_BUDGET_MS` (spec §6 rule 2). */
  notReadyPolicy?: ReconnectPolicy;
  /** Default 0/250/500/1000/2000 … ms within 10 s. */
  liveReconnectPolicy?: ReconnectPolicy;
  /** Keep-alive cadence of the control socket. Default `DEFAULT_KEEP_ALIVE_INTERVAL_MS` (well inside `CLIENT_SILENCE_LIMIT_MS`). */
  keepAliveIntervalMs?: number;
  /** No server frame for this long → the socket is dead. Default 15 000 ms. */
  deadAfterMs?: number;
  /** The keep-alive style of this service, shared with its other connections (the kiosk keeps one per
   *  service URL). Default: one of this controller's own, starting with our pong message. */
  keepAlive?: KeepAlive;
  /** From opening a socket to its conn_init_ack. Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** How long to poll for `ended` and the billing figures after the end. Default END_CONFIRM_TIMEOUT_MS (30 s). */
  endQueryTimeoutMs?: number;
  /** Poll period of that query. Default 500 ms. */
  endQueryIntervalMs?: number;
  /** Grace after live_duration before we hang up ourselves (the server should end it first). Default 2 000 ms. */
  durationGraceMs?: number;
  /** Bound on a best-effort hangup over a fresh socket. Default 3 000 ms. */
  hangupSocketTimeoutMs?: number;
  /**
   * A hangup while the create request is in flight does not abort it (the service may have made the room
   * already, and only its answer says which room to close): it waits this long for the answer, closes the
   * room with type 5 and no conn_init, and aborts the request only after this bound. Default 4 000 ms;
   * null: no bound here (a spare's owner waits however long, and bounds only its shutdown: `abandonCreate`).
   */
  createAnswerWaitMs?: number | null;
  /** Default `buildCreateRequest` (reads a local image into a data URI, validates). */
  buildRequest?: (options: StartOptions) => Promise<BuiltCreateRequest>;
  /**
   * RTC first, then billing (default false): conn_init waits for `rtcReady()` from whoever runs the RTC side
   * (the renderer); `rtcFailed()` or `rtcReadyTimeoutMs` without it ends the session with type 5 before any
   * conn_init. Off for callers with no RTC side (the CLI probe).
   */
  awaitRtcReady?: boolean;
  /** Default 30 000 ms. */
  rtcReadyTimeoutMs?: number;
}

/** Default bound on waiting for a create's answer after a cancel (see `createAnswerWaitMs`). */
export const DEFAULT_CREATE_ANSWER_WAIT_MS = 4_000;

export type TerminalState = Extract<SessionState, { phase: 'ended' | 'failed' }>;
