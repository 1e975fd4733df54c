/**
 * The control WebSocket of the emulator (spec §4.3, §5, §6): handshake checks (auth, live_id, owner),
 * strict validation of every client frame, conn_init answers (NOT_READY / LIVE_CONN_INIT_FAILED /
 * success), server pings, client-silence detection, forced hangups, and the fault knobs (latency,
 * silent, dropAfterMs, garbageFrames, ackShape). Session state and billing are sessions.ts's job; each
 * `Connection` is the `SessionSocket` it talks back to.
 *
 * Strict but safe: a frame that breaks the protocol (not JSON, wrong shape, foreign live_id, seq_id not
 * starting at 1 or not increasing, a first frame other than conn_init or hangup, conn_init twice, hangup
 * without a reason) closes the socket with 1008;
 * binary frames close it with 1003; frames over `MAX_WS_MESSAGE_BYTES` with 1009 (spec §8). Unknown types are ignored,
 * unless the `strictCloseCode` knob makes a strict server that closes on them (dialect.ts words every
 * reading the spec leaves open: ping, ack, strictness).
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import { z } from 'zod';
import { CONN_INIT_VERSION, MAX_WS_MESSAGE_BYTES, MSG_CONN_INIT, MSG_FORCED_HANGUP, MSG_HANGUP, clientFrameSchema } from '../core/protocol.ts';
import type { Accounts } from './accounts.ts';
import { ApiError } from './api-error.ts';
import { DIRECT_WS_PATH, GATEWAY_WS_PATH, authenticate, requireOwner, type Surface } from './http.ts';
import type { SessionRecord, SessionSocket, SessionStore } from './sessions.ts';
import type { TimerSet } from './timers.ts';
import type { EmulatorKnobs } from './types.ts';
import { ackFrame, errorAnswer, isKeepAliveType, knowsClientType, mayPrecedeConnInit, pingFrame, pingType, withExtraFrameFields, type ServerFrame } from './dialect.ts';

/** A client frame as this server reads it: spec §6's envelope; a strict server whose ping type is a name
 *  takes a reply of that name as well (dialect.ts). */
type ClientMessage = { type: number | string; live_id: string; seq_id: number; payload: Record<string, unknown> };
const namedTypeFrameSchema = clientFrameSchema.extend({ type: z.union([z.number().int(), z.string().min(1)]) });

/** ASSUMPTION: unknown message types used by garbageFrames (the spec's numbering stops at 6). */
export const GARBAGE_UNKNOWN_TYPE = 99;
export const GARBAGE_OVERSIZED_TYPE = 98;
const OVERSIZED_FRAME_PADDING = MAX_WS_MESSAGE_BYTES + 4 * 1024;

export const CLOSE_NORMAL = 1000;
export const CLOSE_UNSUPPORTED_DATA = 1003;
export const CLOSE_POLICY_VIOLATION = 1008;

export interface WsContext {
  clock: Clock;
  timers: TimerSet;
  knobs: EmulatorKnobs;
  logger: Logger;
  accounts: Accounts;
  sessions: SessionStore;
  demoApiKey: string;
}

export class ControlSockets {
  readonly #ctx: WsContext;
  // spec §8: the maximum message size; ws closes with 1009 when a client frame is larger. Pongs to the
  // client's WebSocket pings are sent by each Connection (so the `silent` knob can withhold them too).
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WS_MESSAGE_BYTES, autoPong: false });
  readonly #connections = new Set<Connection>();
  /** Sessions that already got the oversized garbage frame (sent once per session). */
  readonly #oversizedSent = new Set<string>();
  #nextConnectionId = 1;

  constructor(ctx: WsContext) {
    this.#ctx = ctx;
  }

  /** The HTTP server's `upgrade` event. spec §4.3 / §5: live_id required; direct needs the key; owner only. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {}); // a client vanishing mid-handshake is not our error
    const { logger, sessions, timers } = this.#ctx;
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    let surface: Surface;
    if (url.pathname === DIRECT_WS_PATH) surface = 'direct';
    else if (url.pathname === GATEWAY_WS_PATH) surface = 'gateway';
    else return rejectUpgrade(socket, new ApiError(404, 'not_found', `No WebSocket route for ${url.pathname}.`), this.#ctx.knobs);
    let session: SessionRecord;
    try {
      const account = authenticate(this.#ctx, surface, req.headers.authorization);
      const liveId = url.searchParams.get('live_id');
      if (!liveId) throw new ApiError(400, 'invalid_request', 'The live_id query parameter is required.', 'live_id');
      session = requireOwner(sessions.get(liveId), account);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      logger.info('websocket handshake rejected', { status: error.status, code: error.code });
      return rejectUpgrade(socket, error, this.#ctx.knobs);
    }
    if (timers.closed) return rejectUpgrade(socket, new ApiError(404, 'not_found', 'The emulator is closing.'), this.#ctx.knobs);
    // The handshake answer (101) is delayed by latencyMs like every HTTP answer, so one injected latency
    // costs one round trip per protocol step: create, socket handshake, ack (the bench's 3 × latency floor).
    const accept = () => {
      if (socket.destroyed) return;
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onConnection(ws, session));
    };
    if (this.#ctx.knobs.latencyMs <= 0) accept();
    else if (timers.set(accept, this.#ctx.knobs.latencyMs) === null) socket.destroy();
  }

  /** Handle API: end the session with a forced hangup (type 6, then close). */
  forceHangup(liveId: string, reason: string): void {
    const session = this.#ctx.sessions.get(liveId);
    if (!session) throw new Error(`forceHangup: no session ${liveId}`);
    if (session.status === 'ending' || session.status === 'ended') {
      this.#ctx.logger.warn('forceHangup on a session that already ended', { liveId });
      return;
    }
    this.#ctx.sessions.end(session, reason, this.#ctx.clock.now(), true);
  }

  /** Handle API: terminate the session's sockets abruptly (no close frame). */
  dropConnection(liveId: string): void {
    for (const connection of [...this.#connections]) if (connection.session.id === liveId) connection.terminate('dropConnection');
  }

  /**
   * Handle API (test-only fault injection): send `data` as one raw frame on the session's newest open
   * socket, in order with everything already queued. Returns false when no socket can take it.
   */
  injectFrame(liveId: string, data: string | Uint8Array, binary: boolean): boolean {
    const open = [...this.#connections].filter((c) => c.session.id === liveId && c.canInject);
    const connection = open.at(-1);
    if (!connection) return false;
    connection.inject(typeof data === 'string' ? data : Buffer.from(data), binary);
    return true;
  }

  /** Terminate every socket and close the server (timers were cleared by the caller first). */
  async close(): Promise<void> {
    for (const connection of [...this.#connections]) connection.terminate('emulator closing');
    for (const client of this.#wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  get openCount(): number {
    return this.#connections.size;
  }

  #onConnection(ws: WebSocket, session: SessionRecord): void {
    const connection = new Connection(this.#nextConnectionId++, ws, session, this.#ctx, {
      onGone: (c) => this.#connections.delete(c),
      takeOversizedGarbage: () => {
        if (this.#oversizedSent.has(session.id)) return false;
        this.#oversizedSent.add(session.id);
        return true;
      },
    });
    this.#connections.add(connection);
    this.#ctx.logger.info('socket opened', { liveId: session.id, connection: connection.id });
    this.#ctx.sessions.attach(session, connection);
    connection.start();
  }
}

interface ConnectionHooks {
  onGone(connection: Connection): void;
  /** True once per session: whether this connection should send the oversized garbage frame. */
  takeOversizedGarbage(): boolean;
}

interface OutboxItem {
  atMs: number;
  run: () => void;
}

/** One accepted control socket. All server output goes through an ordered outbox delayed by latencyMs. */
class Connection implements SessionSocket {
  readonly id: number;
  readonly session: SessionRecord;
  readonly #ws: WebSocket;
  readonly #ctx: WsContext;
  readonly #hooks: ConnectionHooks;
  #lastSeqId = 0;
  /** conn_init answered on this socket (a second one is a protocol violation). */
  #answered = false;
  /** A success ack was sent on this socket. */
  #isLive = false;
  /** A close is queued: input is ignored from now on. */
  #closing = false;
  #gone = false;
  #pingTimer: TimerHandle | null = null;
  #silenceTimer: TimerHandle | null = null;
  #dropTimer: TimerHandle | null = null;
  #outboxTimer: TimerHandle | null = null;
  #outbox: OutboxItem[] = [];
  #lastOutAtMs = 0;

  constructor(id: number, ws: WebSocket, session: SessionRecord, ctx: WsContext, hooks: ConnectionHooks) {
    this.id = id;
    this.#ws = ws;
    this.session = session;
    this.#ctx = ctx;
    this.#hooks = hooks;
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on('close', (code, reason) => {
      if (!this.#gone) this.#ctx.logger.info('socket closed', { liveId: session.id, connection: id, code, reason: reason.toString() });
      this.#dispose(this.#ctx.clock.now());
    });
    ws.on('error', (error) => this.#ctx.logger.warn('socket error', { liveId: session.id, connection: id, error: error.message }));
    ws.on('ping', (data) => this.#onControlFrame('ping', data));
    ws.on('pong', () => this.#onControlFrame('pong'));
  }

  start(): void {
    this.#armPing();
    this.#armSilence();
  }

  // SessionSocket -------------------------------------------------------------------------------------

  /** spec §6 rule 5: type 6 with the reason, then close. */
  forceHangup(reason: string): void {
    if (this.#gone || this.#closing) return;
    this.#sendFrame({ type: MSG_FORCED_HANGUP, payload: { hangup: { hangup_reason: reason } } });
    this.#close(CLOSE_NORMAL, reason);
  }

  replaced(): void {
    this.#close(CLOSE_NORMAL, 'replaced by a newer connection');
  }

  expired(): void {
    this.#close(CLOSE_NORMAL, 'session expired');
  }

  /** Test-only fault injection (see ControlSockets.injectFrame). */
  get canInject(): boolean {
    return !this.#gone && !this.#closing && this.#ws.readyState === WebSocket.OPEN;
  }

  inject(data: string | Buffer, binary: boolean): void {
    this.#sendRaw(data, binary);
  }

  /** Abrupt end: no close frame (silence, dropAfterMs, dropConnection, shutdown). */
  terminate(why: string): void {
    if (this.#gone) return;
    this.#ctx.logger.info('socket terminated', { liveId: this.session.id, connection: this.id, why });
    const atMs = this.#ctx.clock.now();
    this.#ws.terminate();
    this.#dispose(atMs);
  }

  // Input ---------------------------------------------------------------------------------------------

  /**
   * A WebSocket control frame from the client. Every WebSocket peer answers a ping with a pong (RFC 6455
   * §5.5.2), unless `silent` makes this server play dead. A strict server counts the client's pongs as its
   * sign of life (spec §6 rule 4: "some message"; RFC 6455 §5.5.3: an unsolicited pong is a heartbeat).
   */
  #onControlFrame(kind: 'ping' | 'pong', data?: Buffer): void {
    if (this.#gone || this.#closing) return;
    this.session.clientControlFrames[kind] += 1;
    if (kind === 'ping') {
      if (this.#isLive && this.#ctx.knobs.silent) return;
      if (this.#ws.readyState === WebSocket.OPEN) this.#ws.pong(data);
      return;
    }
    if (this.#ctx.knobs.strictCloseCode !== null) this.#armSilence();
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (this.#gone || this.#closing) return;
    if (isBinary) return this.#violation(CLOSE_UNSUPPORTED_DATA, 'binary frames are not part of the protocol');
    let raw: unknown;
    try {
      raw = JSON.parse(rawToString(data));
    } catch {
      return this.#violation(CLOSE_POLICY_VIOLATION, 'frame is not valid JSON');
    }
    // spec §6: client messages carry type, live_id, seq_id and payload.
    const knobs = this.#ctx.knobs;
    const namedReply = knobs.strictCloseCode !== null && typeof pingType(knobs) === 'string';
    const parsed = (namedReply ? namedTypeFrameSchema : clientFrameSchema).safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return this.#violation(CLOSE_POLICY_VIOLATION, `bad client frame: ${issue ? `${issue.path.join('.') || '(frame)'} ${issue.message}` : 'invalid'}`);
    }
    const frame: ClientMessage = parsed.data;
    if (frame.live_id !== this.session.id) return this.#violation(CLOSE_POLICY_VIOLATION, 'live_id does not match this connection');
    // spec §6: seq_id is increasing per connection and starts at 1.
    const seqOk = this.#lastSeqId === 0 ? frame.seq_id === 1 : frame.seq_id > this.#lastSeqId;
    if (!seqOk) {
      return this.#violation(CLOSE_POLICY_VIOLATION, `seq_id ${frame.seq_id} after ${this.#lastSeqId}: must start at 1 and increase`);
    }
    // A strict server closes on a message type it does not know (the `strictCloseCode` reading); the
    // frame is recorded first, so a test sees what was refused.
    if (!knowsClientType(knobs, frame.type)) {
      this.session.clientMessages.push({ type: frame.type, seq_id: frame.seq_id });
      return this.#violation(knobs.strictCloseCode ?? CLOSE_POLICY_VIOLATION, `unknown message type ${frame.type}`);
    }
    // spec §6: conn_init is "sent immediately after the socket opens"; only a hangup may come before it,
    // or keep-alive pongs. ASSUMPTION (README, assumptions: a delayed conn_init): the service keeps a socket whose conn_init is
    // delayed (a pre-opened spare session's) alive while the client answers pings; we tolerate that here.
    if (this.#lastSeqId === 0 && !mayPrecedeConnInit(knobs, frame.type)) {
      return this.#violation(CLOSE_POLICY_VIOLATION, `the first frame must be conn_init, not type ${frame.type}`);
    }
    this.#lastSeqId = frame.seq_id;
    this.session.clientMessages.push({ type: frame.type, seq_id: frame.seq_id });
    this.#armSilence(); // spec §6 rule 4: any client message counts
    if (frame.type === MSG_CONN_INIT) return this.#onConnInit(frame);
    if (frame.type === MSG_HANGUP) return this.#onHangup(frame);
    if (isKeepAliveType(knobs, frame.type)) return;
    this.#ctx.logger.debug('ignoring client message of unknown type', { liveId: this.session.id, type: frame.type });
  }

  #onConnInit(frame: ClientMessage): void {
    const init = frame.payload.conn_init;
    if (!isRecord(init) || init.version !== CONN_INIT_VERSION) {
      return this.#violation(CLOSE_POLICY_VIOLATION, 'conn_init.version must be 1'); // spec §6, §9
    }
    if (this.#answered) return this.#violation(CLOSE_POLICY_VIOLATION, 'conn_init already answered on this connection; reconnect instead');
    this.#answered = true;
    const { sessions, knobs, clock, logger } = this.#ctx;
    const session = this.session;
    session.connInits += 1;
    if (knobs.garbageFrames) this.#sendGarbage();

    switch (session.status) {
      case 'ending':
      case 'ended':
        // The session is over: tell the client why (type 6), or that it can never start.
        if (session.hangupReason !== null) this.forceHangup(session.hangupReason);
        else {
          this.#sendAck(false, 'LIVE_CONN_INIT_FAILED');
          this.#close(CLOSE_NORMAL, 'LIVE_CONN_INIT_FAILED');
        }
        return;
      case 'on_live':
        // A reconnect while live: resume, billing never stopped (no double billing).
        logger.info('conn_init resumed a live session', { liveId: session.id, connection: this.id });
        this.#sendAck(true);
        this.#isLive = true;
        sessions.resume(session);
        this.#armDrop();
        return;
      case 'waiting': {
        if (knobs.initFailure) {
          // spec §6 rule 3: permanent failure; the session ends without billing.
          this.#sendAck(false, 'LIVE_CONN_INIT_FAILED');
          sessions.failInit(session);
          this.#close(CLOSE_NORMAL, 'LIVE_CONN_INIT_FAILED');
          return;
        }
        const warmupMs = knobs.warmupMs[session.callMode];
        if (clock.now() - session.createdAtMs < warmupMs) {
          // spec §6 rule 2: NOT_READY; the client must close, back off and reconnect. We keep the socket open.
          session.notReadyAnswers += 1;
          this.#sendAck(false, 'NOT_READY');
          return;
        }
        // spec §3, §6 rule 1: success → on_live, billing starts. The ack goes out before anything billing may send.
        this.#sendAck(true);
        this.#isLive = true;
        sessions.goLive(session);
        this.#armDrop();
        return;
      }
    }
  }

  /** spec §6 rule 7: the client ends the call with type 5. No acknowledgement is shown, so none is sent. */
  #onHangup(frame: ClientMessage): void {
    const hangup = frame.payload.hangup;
    const reason = isRecord(hangup) ? hangup.hangup_reason : undefined;
    if (typeof reason !== 'string' || !reason) return this.#violation(CLOSE_POLICY_VIOLATION, 'hangup.hangup_reason must be a non-empty string');
    const { sessions, clock, logger } = this.#ctx;
    logger.info('client hangup', { liveId: this.session.id, reason });
    if (this.session.status === 'waiting' || this.session.status === 'on_live') sessions.end(this.session, reason, clock.now(), false);
    this.#close(CLOSE_NORMAL, 'hangup');
  }

  #violation(code: number, message: string): void {
    this.#ctx.logger.warn('client protocol violation; closing', { liveId: this.session.id, connection: this.id, code, message });
    this.#close(code, message);
  }

  // Output --------------------------------------------------------------------------------------------

  #sendAck(success: boolean, errorCode?: 'NOT_READY' | 'LIVE_CONN_INIT_FAILED'): void {
    // ASSUMPTION: ack type 2, nested; knobs.ackType and knobs.ackShape choose others (the spec shows neither).
    this.#sendFrame(ackFrame(this.#ctx.knobs, success, errorCode));
  }

  /** garbageFrames: malformed JSON, a binary frame, an unknown type, and (once per session) an oversized frame. */
  #sendGarbage(): void {
    this.#sendRaw('{"type":3,"payload":{"ping":', false);
    this.#sendRaw(Buffer.from([0xde, 0xad, 0xbe, 0xef]), true);
    this.#sendFrame({ type: GARBAGE_UNKNOWN_TYPE, payload: { note: 'unknown message type' } });
    if (this.#hooks.takeOversizedGarbage()) {
      this.#sendFrame({ type: GARBAGE_OVERSIZED_TYPE, payload: { padding: 'x'.repeat(OVERSIZED_FRAME_PADDING) } });
    }
  }

  #sendFrame(frame: ServerFrame): void {
    this.#sendRaw(JSON.stringify(withExtraFrameFields(this.#ctx.knobs, frame)), false);
  }

  #sendRaw(data: string | Buffer, binary: boolean): void {
    // `silent` applies to frames queued after the socket went live, judged when they leave.
    const gated = this.#isLive;
    this.#enqueue(() => {
      if (this.#ws.readyState !== WebSocket.OPEN) return;
      if (gated && this.#ctx.knobs.silent) return;
      this.#ws.send(data, { binary });
    });
  }

  /** A WebSocket ping control frame, in order with the rest of the output (and withheld by `silent`). */
  #sendControlPing(): void {
    const gated = this.#isLive;
    this.#enqueue(() => {
      if (this.#ws.readyState !== WebSocket.OPEN) return;
      if (gated && this.#ctx.knobs.silent) return;
      this.#ws.ping();
    });
  }

  /** Close with a close frame, after everything already queued. */
  #close(code: number, reason: string): void {
    if (this.#gone || this.#closing) return;
    this.#closing = true;
    this.#clearTimer('ping');
    this.#clearTimer('silence');
    this.#clearTimer('drop');
    this.#enqueue(() => {
      if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) this.#ws.close(code, truncateReason(reason));
    });
  }

  /** Ordered, latency-delayed output: each item leaves at max(now + latencyMs, previous item's time). */
  #enqueue(run: () => void): void {
    if (this.#gone) return;
    const now = this.#ctx.clock.now();
    const atMs = Math.max(now + this.#ctx.knobs.latencyMs, this.#lastOutAtMs);
    this.#lastOutAtMs = atMs;
    this.#outbox.push({ atMs, run });
    this.#pump();
  }

  #pump(): void {
    if (this.#outboxTimer !== null) return;
    while (this.#outbox.length > 0 && !this.#gone) {
      const head = this.#outbox[0]!;
      const now = this.#ctx.clock.now();
      if (head.atMs > now) {
        this.#outboxTimer = this.#ctx.timers.set(() => {
          this.#outboxTimer = null;
          this.#pump();
        }, head.atMs - now);
        return;
      }
      this.#outbox.shift();
      head.run();
    }
  }

  // Timers --------------------------------------------------------------------------------------------

  /** spec §6 rule 4: a ping every pingIntervalMs while the socket is open. */
  #armPing(): void {
    const { timers, knobs, clock } = this.#ctx;
    // At least 1 ms: a 0 ms ping would re-arm forever inside one FakeClock.advance().
    this.#pingTimer = timers.set(() => {
      this.#pingTimer = null;
      if (this.#gone || this.#closing) return;
      if (knobs.garbageFrames) this.#sendFrame({ type: GARBAGE_UNKNOWN_TYPE, payload: { note: 'unknown message type' } });
      // The format is not shown: knobs.pingFormat picks it (dialect.ts; the default is type 3, {ping:{ts}}).
      const frame = pingFrame(knobs, clock.now());
      if (frame) this.#sendFrame(frame);
      else if (knobs.pingFormat === 'ws-frames') this.#sendControlPing();
      this.#armPing();
    }, Math.max(1, knobs.pingIntervalMs));
  }

  /** spec §6 rule 4: no client message within clientSilenceLimitMs → dead → force-disconnect. */
  #armSilence(): void {
    this.#clearTimer('silence');
    const { timers, knobs } = this.#ctx;
    this.#silenceTimer = timers.set(() => {
      this.#silenceTimer = null;
      this.terminate(`client silent for ${knobs.clientSilenceLimitMs} ms`);
    }, knobs.clientSilenceLimitMs);
  }

  /** dropAfterMs: terminate a live socket once per session, this long after it went live. */
  #armDrop(): void {
    const dropAfterMs = this.#ctx.knobs.dropAfterMs;
    if (dropAfterMs === null || this.session.dropUsed || this.#dropTimer !== null) return;
    this.#dropTimer = this.#ctx.timers.set(() => {
      this.#dropTimer = null;
      this.session.dropUsed = true;
      this.terminate(`dropAfterMs ${dropAfterMs}`);
    }, dropAfterMs);
  }

  #clearTimer(which: 'ping' | 'silence' | 'drop' | 'outbox'): void {
    const timers = this.#ctx.timers;
    switch (which) {
      case 'ping':
        timers.clear(this.#pingTimer);
        this.#pingTimer = null;
        return;
      case 'silence':
        timers.clear(this.#silenceTimer);
        this.#silenceTimer = null;
        return;
      case 'drop':
        timers.clear(this.#dropTimer);
        this.#dropTimer = null;
        return;
      case 'outbox':
        timers.clear(this.#outboxTimer);
        this.#outboxTimer = null;
        return;
    }
  }

  /** The socket is gone (closed or terminated) at `atMs`: stop everything and tell the session. */
  #dispose(atMs: number): void {
    if (this.#gone) return;
    this.#gone = true;
    for (const which of ['ping', 'silence', 'drop', 'outbox'] as const) this.#clearTimer(which);
    this.#outbox = [];
    this.#hooks.onGone(this);
    this.#ctx.sessions.detach(this.session, this, atMs);
  }
}

function rejectUpgrade(socket: Duplex, error: ApiError, knobs: Pick<EmulatorKnobs, 'errorBody'>): void {
  const { contentType, text } = errorAnswer(knobs, error);
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      (contentType ? `Content-Type: ${contentType}\r\n` : '') +
      `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n` +
      text,
  );
}

function rawToString(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/** Close reasons are limited to 123 bytes (RFC 6455). */
function truncateReason(reason: string): string {
  let out = reason;
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -1);
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
