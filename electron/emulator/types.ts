/**
 * Public types of the emulator (re-exported by index.ts) and the knob defaults. Kept apart from
 * index.ts so the route and socket modules can import them without a cycle.
 */
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import type { DemoQuality } from '../core/rtc-ids.ts';
import { CLIENT_SILENCE_LIMIT_MS, MAX_LIVE_DURATION_S, SERVER_PING_INTERVAL_MS } from '../core/protocol.ts';

export const PING_FORMATS = ['json', 'json-other-type', 'json-named', 'ws-frames', 'none'] as const;
export type PingFormat = (typeof PING_FORMATS)[number];

/** The demo account's key: the gateway surface injects it, and demo mode uses it. Clearly not a real key. */
export const DEMO_API_KEY = 'emulator-demo-key-0001';

/** Run-time behaviour switches. All durations in milliseconds unless the name says otherwise. */
export interface EmulatorKnobs {
  /** Added before every HTTP answer and before every server WS message (default 0). */
  latencyMs: number;
  /** Added before create answers only, on top of `latencyMs` (default 0): the room exists at once, its
   *  answer is late, so a client can be stopped while its create is in flight. */
  createDelayMs: number;
  /** NOT_READY until this long after session creation (defaults audio 0, video 2500: "normal in video mode", spec §6 rule 2). */
  warmupMs: { audio: number; video: number };
  /** Answer LIVE_CONN_INIT_FAILED to conn_init (spec §6 rule 3). */
  initFailure: boolean;
  /** Server ping period (spec §6 rule 4: 5000). */
  pingIntervalMs: number;
  /** No client message for this long → the socket is treated as dead and terminated (spec §6 rule 4: 15000). */
  clientSilenceLimitMs: number;
  /** After a live client's socket goes away: wait this long for a new socket + conn_init, else end with client_reconnect_timeout (default 10000). */
  reconnectGraceMs: number;
  /** The server sends nothing on live sockets (pings, acks, forced hangups) — to test client dead-detection. */
  silent: boolean;
  /** Abruptly terminate a live socket this long after it went live (once per session); null = never. */
  dropAfterMs: number | null;
  /** Also send malformed JSON, a binary frame, an unknown type and an oversized (> `MAX_WS_MESSAGE_BYTES`) frame along the way. */
  garbageFrames: boolean;
  /** Where the ack puts `success`/`error_code` (spec §6 shows the fields, not their nesting): `nested`
   *  {payload:{conn_init_ack:{…}}}; `flat` {payload:{…}}; `echo` {payload:{conn_init:{…}}}; `top` at the
   *  top level beside `type`, with no payload. */
  ackShape: 'nested' | 'flat' | 'echo' | 'top';
  /** The ack's `type` (not shown in spec §6): a number or a name. Default 2. */
  ackType: number | string;
  /** How the server pings (spec §6 rule 4 shows no format): `json` {type:3,payload:{ping:{ts}}}; `json-other-type`
   *  {type:9,payload:{heartbeat:{ts}}}; `json-named` {type:"ping",payload:{ts}}; `ws-frames` WebSocket ping
   *  control frames only; `none` no ping at all. Default `json`. */
  pingFormat: PingFormat;
  /**
   * A strict server: a client message of a type it does not know closes the socket with this code (1003,
   * 1008, 4xxx). It knows conn_init (1), hangup (5) and a reply of its own ping's type; WebSocket pong
   * frames count as the client's sign of life. null (default): unknown types are ignored, and only
   * messages count (the lenient server the client was built against).
   */
  strictCloseCode: number | null;
  /** HTTP status of a successful create (spec §4.1 says 200; 201 Created is a fair REST reading). Default 200. */
  createStatus: 200 | 201;
  /** HTTP error bodies (spec §7: not shown): `nested` {error:{code,message,field?}}; `flat` {code,message};
   *  `detail` {detail}; `html` an HTML page (a proxy's); `empty` no body at all. Default `nested`. */
  errorBody: 'nested' | 'flat' | 'detail' | 'html' | 'empty';
  /** Unknown extra fields in every JSON answer and server frame (a newer service). Default false. */
  extraFields: boolean;
  /** Timestamps (created_at, started_at, ended_at, token_expire_at) as unix-second `string`s (§2.1) or `number`s. */
  timestamps: 'string' | 'number';
  /** live_duration to grant, in seconds (capped at `MAX_LIVE_DURATION_S`, spec §8, which is also the default). */
  liveDurationS: number;
  /** How long a session stays `ending` before `ended` (default 300). */
  endingMs: number;
  /** A `waiting` session never initialised (no socket, or a socket that never sent conn_init) expires after
   *  this: its socket is closed and it is 404 from then on (default 10 min). Also the "spare expired" knob. */
  sessionTtlMs: number;
  /** How long the demo engine's modelled RTC channel join takes for this emulator's sessions (carried in
   *  the RTC token it issues, `rtc-ids.ts`), so figures measured on the emulator include a join. Default 400. */
  rtcJoinMs: number;
  /** Test-only: the demo engine's avatar stops sending frames and voice this long after it starts playing
   *  (carried in the RTC token, `rtc-ids.ts`), to exercise the kiosk's media watchdog. Default null: never. */
  demoFreezeAfterMs: number | null;
  /** The connection quality the demo engine models for this emulator's sessions (carried in the RTC token
   *  like the join): `poor` makes it report weak figures, to show the visitor's hint. Default good. */
  rtcQuality: DemoQuality;
  /** Issue this RTC app id instead of the emulator's own (null): a non-emulator id makes the renderer use
   *  the real Web SDK, e.g. to prove that a network blocking the RTC provider costs nothing. */
  rtcAppId: string | null;
  /** Test-only: the server closes a keep-alive connection idle this long (announced in `Keep-Alive:
   *  timeout=`, as Node's server does; read at start, like the whole model), and its close is modelled at its worst moment: a
   *  request arriving on a connection idle for the last second before that close meets a reset (RST), as one
   *  crossing the close on the wire does. Default null: Node's own 5 s close, with no race forced. */
  idleCloseMs: number | null;
}

/** Frozen; startEmulator copies it (with a fresh warmupMs object) into each handle's mutable `knobs`. */
export const DEFAULT_KNOBS: Readonly<EmulatorKnobs> = Object.freeze({
  latencyMs: 0,
  createDelayMs: 0,
  warmupMs: Object.freeze({ audio: 0, video: 2_500 }),
  initFailure: false,
  pingIntervalMs: SERVER_PING_INTERVAL_MS,
  clientSilenceLimitMs: CLIENT_SILENCE_LIMIT_MS,
  reconnectGraceMs: 10_000,
  silent: false,
  dropAfterMs: null,
  garbageFrames: false,
  ackShape: 'nested',
  ackType: 2,
  pingFormat: 'json',
  strictCloseCode: null,
  createStatus: 200,
  errorBody: 'nested',
  extraFields: false,
  timestamps: 'string',
  liveDurationS: MAX_LIVE_DURATION_S,
  endingMs: 300,
  sessionTtlMs: 10 * 60_000,
  rtcJoinMs: 400,
  demoFreezeAfterMs: null,
  rtcQuality: 'good',
  rtcAppId: null,
  idleCloseMs: null,
});

export interface EmulatorAccount {
  apiKey: string;
  creatorId?: string;
  /** Credits; default `TRIAL_CREDITS` (spec §8). */
  balance?: number;
}

export interface EmulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Every timer and timestamp comes from it (tests pass FakeClock). */
  clock?: Clock;
  logger?: Logger;
  knobs?: Partial<EmulatorKnobs>;
  /** Default: one demo account (DEMO_API_KEY, `TRIAL_CREDITS`). The demo account is always present (the gateway injects it). */
  accounts?: EmulatorAccount[];
}

export type EmulatedStatus = 'waiting' | 'on_live' | 'ending' | 'ended';

/** A snapshot of one session as the emulator sees it (a copy: mutating it changes nothing). */
export interface EmulatedSession {
  id: string;
  apiKey: string;
  creatorId: string;
  status: EmulatedStatus;
  callMode: 'audio' | 'video';
  liveDurationS: number;
  /** Why the session ended (client type 5 reason or forced type 6 reason); null while running or after LIVE_CONN_INIT_FAILED. */
  hangupReason: string | null;
  /** Billable seconds so far (running while on_live, final afterwards), spec §8 rounding. */
  billedSeconds: number;
  /** Credits for billedSeconds (`CREDITS_PER_BILLING_UNIT` per `BILLING_UNIT_S`). */
  creditsCost: number;
  /** conn_init messages received (all sockets). */
  connInits: number;
  /** NOT_READY acks sent. */
  notReadyAnswers: number;
  /** WebSocket connections accepted for this session. */
  socketsOpened: number;
  /** Every valid client frame, in arrival order, across connections (a type is a name only where a
   *  strict server with a named ping took a reply of that name). */
  clientMessages: Array<{ type: number | string; seq_id: number }>;
  /** WebSocket control frames received from the client, across connections. */
  clientControlFrames: { ping: number; pong: number };
  createdAtMs: number;
  /** When the avatar went live (billing start), or null. */
  startedAtMs: number | null;
  /** End of the billing window / when the session ended, or null. */
  endedAtMs: number | null;
  /** The effective create request (gateway defaults applied; very long data URIs abbreviated). */
  request: unknown;
  /** The create body as the client sent it (no defaults filled in): what a test asserts the kiosk asked for. */
  receivedRequest: unknown;
}

export interface EmulatorHandle {
  /** 'http://127.0.0.1:PORT' — direct surface root {base_url}. */
  readonly baseUrl: string;
  /** 'http://127.0.0.1:PORT/gateway' — gateway surface root {gateway_url}; its /api/... injects the demo account. */
  readonly gatewayUrl: string;
  /** The demo key. */
  readonly apiKey: string;
  /** Mutable at run time. */
  readonly knobs: EmulatorKnobs;
  /** Sends type 6 with `reason`, then closes the socket; the session ends (billing stops now). Throws for an unknown id; no-op once ending/ended. */
  forceHangup(liveId: string, reason: string): void;
  /** Terminates the session's socket abruptly (no close frame). */
  dropConnection(liveId: string): void;
  /**
   * Test-only fault injection: sends `data` as one raw server frame (text unless `binary`; a Uint8Array
   * sent as text carries its bytes as they are, e.g. invalid UTF-8) on the session's newest open socket,
   * after anything already queued. Returns false when the session has no open socket.
   */
  injectFrame(liveId: string, data: string | Uint8Array, options?: { binary?: boolean }): boolean;
  getSession(liveId: string): EmulatedSession | undefined;
  listSessions(): EmulatedSession[];
  /** Sessions currently on_live (i.e. billing). */
  liveCount(): number;
  /** Credits of an account (default: the demo account). Throws for an unknown key. */
  balance(apiKey?: string): number;
  /** Set an account's credits (clamped at 0). Throws for an unknown key. */
  setBalance(apiKey: string, credits: number): void;
  addAccount(account: EmulatorAccount): void;
  /** Closes the server and every socket, and clears every timer it made. */
  close(): Promise<void>;
}
