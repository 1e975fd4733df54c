/**
 * One control-WebSocket connection attempt, from open to close (spec §4.3, §6). It owns the per-connection
 * wire rules and reports what happened as typed outcomes; it decides nothing about the session (whether to
 * retry, end or give up is the session machine's job).
 *
 * - On open it sends `conn_init` with `seq_id` 1; `seq_id` then rises by one per message sent. A new
 *   connection is a new `ControlSocket`, so the numbering restarts at 1 (spec §6).
 * - Each server ping is answered; besides, a keep-alive goes out every `keepAliveIntervalMs` (default: the
 *   server's own ping period, `SERVER_PING_INTERVAL_MS`) on its own, well inside the server's
 *   `CLIENT_SILENCE_LIMIT_MS` (spec §6 rule 4). Its shape is not shown, so it is the style of the shared
 *   `KeepAlive` (keep-alive.ts) when this socket opened: our pong message, an echo of the server's ping, or
 *   WebSocket pong frames. A fixed cadence rather than "after a ping period of our own silence": with the
 *   server pinging at the same period, an idle-based timer ties with each ping anyway, and a fixed one is
 *   predictable (one extra small frame per period). A server that closes the socket right after our
 *   keep-alive has refused its style: the `KeepAlive` moves on, and the `closed` outcome says so.
 * - Dead detection (after Signal's KeepAlive): no frame at all from the server for `deadAfterMs` (default
 *   `CLIENT_SILENCE_LIMIT_MS`, three ping periods) → `terminate()` (no polite close to a peer that is gone)
 *   and report `dead`. Any frame counts, WebSocket ping and pong control frames included (a server may ping
 *   with those only). After two keep-alive periods without a frame (a server that sends no pings at all) each
 *   keep-alive also sends a WebSocket ping, which every live peer answers with a pong. A timer that fires
 *   much later than asked means the machine slept (sleep/resume): also `dead`.
 * - Malformed, binary, unknown and oversized (> `MAX_WS_MESSAGE_BYTES`, spec §8) frames are logged and ignored.
 * - Once it reports a terminal outcome (`closed`, `dead`, `error`) or its owner calls `close`/`hangup`/
 *   `terminate`, it reports nothing more: late callbacks of a socket being replaced are dropped here, and the
 *   owner also compares the socket with its current one (a generation guard at both levels).
 */
import { AvatarError } from './errors.ts';
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { KeepAlive, KEEP_ALIVE_REFUSAL_WINDOW_MS, isRefusalCloseCode, pingShapeFrom, type KeepAliveStyle, type PingShape } from './keep-alive.ts';
import { silentLogger, type Logger } from './log.ts';
import {
  CLIENT_SILENCE_LIMIT_MS,
  MAX_WS_MESSAGE_BYTES,
  MSG_PING,
  SERVER_PING_INTERVAL_MS,
  connInitFrame,
  hangupFrame,
  parseServerFrame,
  pongFrame,
  type ClientFrame,
  type HangupReason,
} from './protocol.ts';
import type { SocketTransport, TransportFactory } from './transport.ts';

/** What one connection reports to its owner. `closed`, `dead` and `error` are terminal. */
export type ControlSocketOutcome =
  /** The socket opened and `conn_init` (seq_id 1) went out. */
  | { kind: 'open' }
  | { kind: 'ack-success' }
  /** conn_init_ack `NOT_READY` (spec §6 rule 2): the owner closes and retries later. */
  | { kind: 'ack-not-ready' }
  /** conn_init_ack with another error code, normally `LIVE_CONN_INIT_FAILED` (spec §6 rule 3). */
  | { kind: 'ack-failed'; errorCode: string }
  /** Server type 6 (spec §6 rule 5). */
  | { kind: 'forced-hangup'; reason: HangupReason }
  /**
   * The server or the network closed the socket. `wasClean`: a close frame was received (not 1006).
   * `keepAliveRefused`: the server closed it right after our keep-alive of `style` (see keep-alive.ts);
   * `next` is the style the next connection uses, null when every style was refused.
   */
  | { kind: 'closed'; code: number; reason: string; wasClean: boolean; keepAliveRefused?: { style: KeepAliveStyle; next: KeepAliveStyle | null } }
  /** Nothing heard for `deadAfterMs`, or the clock jumped (sleep/resume); the socket was terminated. */
  | { kind: 'dead'; cause: 'silence' | 'clock-jump' }
  /** Handshake refused (unauthorized/forbidden/not_found), socket error (network), or no ack in time (timeout). */
  | { kind: 'error'; error: AvatarError };

export type ControlSocketListener = (outcome: ControlSocketOutcome, socket: ControlSocket) => void;

export interface ControlSocketOptions {
  liveId: string;
  url: string;
  headers: Record<string, string>;
  transportFactory: TransportFactory;
  onOutcome: ControlSocketListener;
  clock?: Clock;
  logger?: Logger;
  /** Send a keep-alive this often (from open), whatever else is sent. Default 5 000 ms. */
  keepAliveIntervalMs?: number;
  /** Terminate and report `dead` after this long without any server frame. Default 15 000 ms (3 pings). */
  deadAfterMs?: number;
  /** Report `error` (timeout) when no conn_init_ack arrives this long after the attempt began. Default 15 000 ms. */
  ackTimeoutMs?: number;
  /** A timer firing more than this late means the clock jumped. Default 5 000 ms. */
  clockJumpToleranceMs?: number;
  /** After a polite close, terminate if the transport has not closed within this. Default 2 000 ms. */
  closeTimeoutMs?: number;
  /** For logs: which attempt of the session this is. */
  generation?: number;
  /**
   * Default true. False makes a socket that sends nothing on open: used to deliver only a hangup to a
   * session that must never go live (cancelled during creation or warm-up), since conn_init could start
   * billing (spec §3 waiting → on_live).
   */
  sendConnInit?: boolean;
  /**
   * A pre-opened socket of a spare session (fast start): on open it sends nothing but keep-alives and
   * answers to pings, and the ack timer does not run until the owner calls `connInit()` (at the tap).
   * ASSUMPTION: the service keeps such a socket open although spec §6 says conn_init is "sent immediately
   * after the socket opens" (README, assumptions).
   */
  holdConnInit?: boolean;
  /** The keep-alive style and what the server's pings look like, shared by the service's connections.
   *  Default: a private one starting with our pong message. */
  keepAlive?: KeepAlive;
}

export const DEFAULT_KEEP_ALIVE_INTERVAL_MS = SERVER_PING_INTERVAL_MS;
export const DEFAULT_DEAD_AFTER_MS = CLIENT_SILENCE_LIMIT_MS;
export const DEFAULT_ACK_TIMEOUT_MS = 15_000;
export const DEFAULT_CLOCK_JUMP_TOLERANCE_MS = 5_000;
export const DEFAULT_CLOSE_TIMEOUT_MS = 2_000;

type Phase = 'connecting' | 'open' | 'finished';

interface Timer {
  handle: TimerHandle;
  dueAtMs: number;
}

export class ControlSocket {
  readonly liveId: string;
  readonly generation: number;
  /** Resolves when the underlying transport has closed (or was terminated). */
  readonly closed: Promise<void>;

  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #keepAliveMs: number;
  readonly #deadAfterMs: number;
  readonly #jumpToleranceMs: number;
  readonly #closeTimeoutMs: number;
  readonly #transport: SocketTransport;
  readonly #sendConnInit: boolean;
  readonly #holdConnInit: boolean;
  readonly #keepAlive: KeepAlive;
  /** Fixed for this connection: a refusal moves the shared `KeepAlive` on for the next one. */
  readonly #style: KeepAliveStyle;
  /** When the last server frame (any, control frames included) arrived. */
  #lastHeardAtMs = 0;
  /** When our last keep-alive went out, if it is the last thing we sent. */
  #keepAliveLastSentAtMs: number | null = null;
  #connInitSent = false;
  readonly #onOutcomeListener: ControlSocketListener;
  #phase: Phase = 'connecting';
  #lastSeqId = 0;
  #acked = false;
  #transportClosed = false;
  #resolveClosed!: () => void;
  #keepAliveTimer: Timer | null = null;
  #deadTimer: Timer | null = null;
  #ackTimer: Timer | null = null;
  #closeTimer: Timer | null = null;

  constructor(options: ControlSocketOptions) {
    this.liveId = options.liveId;
    this.generation = options.generation ?? 1;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger ?? silentLogger;
    this.#onOutcomeListener = options.onOutcome;
    this.#keepAliveMs = options.keepAliveIntervalMs ?? DEFAULT_KEEP_ALIVE_INTERVAL_MS;
    this.#deadAfterMs = options.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS;
    this.#jumpToleranceMs = options.clockJumpToleranceMs ?? DEFAULT_CLOCK_JUMP_TOLERANCE_MS;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    this.#sendConnInit = options.sendConnInit ?? true;
    this.#holdConnInit = options.holdConnInit ?? false;
    this.#keepAlive = options.keepAlive ?? new KeepAlive();
    this.#style = this.#keepAlive.style;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));

    const ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
    if (!this.#holdConnInit) this.#armAckTimer(ackTimeoutMs);

    this.#transport = options.transportFactory(options.url, options.headers, {
      onOpen: () => this.#handleOpen(),
      onMessage: (data, isBinary) => this.#handleMessage(data, isBinary),
      onClose: (code, reason) => this.#handleClose(code, reason),
      onError: (error) => this.#handleError(error),
      onPing: () => this.#handleControlFrame(),
      onPong: () => this.#handleControlFrame(),
    });
  }

  /** True while the socket is open and this object still reports outcomes. */
  get isOpen(): boolean {
    return this.#phase === 'open';
  }

  /** True once it reported a terminal outcome or was closed by its owner. */
  get isFinished(): boolean {
    return this.#phase === 'finished';
  }

  /** The keep-alive style this connection uses. */
  get keepAliveStyle(): KeepAliveStyle {
    return this.#style;
  }

  /** True once conn_init went out on this socket. */
  get connInitSent(): boolean {
    return this.#connInitSent;
  }

  /**
   * Sends the held conn_init now (a `holdConnInit` socket, at the tap) and starts the ack timer. Returns
   * false (and sends nothing) unless the socket is open, still reporting, and has not sent conn_init yet.
   */
  connInit(ackTimeoutMs: number = DEFAULT_ACK_TIMEOUT_MS): boolean {
    if (this.#phase !== 'open' || this.#connInitSent || !this.#transport.isOpen) return false;
    this.#armAckTimer(ackTimeoutMs);
    this.#connInitSent = true;
    this.#send((seqId) => connInitFrame(this.liveId, seqId));
    return true;
  }

  /** Sends type 5 with `reason` (spec §6 rule 7), then closes politely. Nothing is reported afterwards. */
  hangup(reason: HangupReason): void {
    if (this.#phase === 'open') this.#send((seqId) => hangupFrame(this.liveId, seqId, reason));
    this.close(1000, 'hangup');
  }

  /** Polite close; terminates if the transport has not closed within `closeTimeoutMs`. Idempotent. */
  close(code = 1000, reason = ''): void {
    if (this.#phase === 'finished') return;
    this.#finish();
    if (this.#transportClosed) return;
    this.#transport.close(code, reason);
    if (this.#transportClosed) return; // a transport may report its close synchronously
    this.#closeTimer = this.#arm(this.#closeTimeoutMs, () => {
      this.#closeTimer = null;
      this.#log.debug('control socket: close timed out, terminating', { generation: this.generation });
      this.#terminateTransport();
    });
  }

  /** Abrupt close. Nothing is reported afterwards. Idempotent. */
  terminate(): void {
    if (this.#phase !== 'finished') this.#finish();
    this.#terminateTransport();
  }

  // --- transport events ---------------------------------------------------------------------------

  #handleOpen(): void {
    if (this.#phase !== 'connecting') return;
    this.#phase = 'open';
    this.#lastHeardAtMs = this.#clock.now();
    this.#restartDeadTimer();
    this.#armKeepAlive();
    if (this.#sendConnInit && !this.#holdConnInit) {
      this.#connInitSent = true;
      this.#send((seqId) => connInitFrame(this.liveId, seqId)); // spec §6: immediately after open
    }
    this.#report({ kind: 'open' });
  }

  #handleMessage(data: string | Uint8Array, isBinary: boolean): void {
    if (this.#phase !== 'open') return;
    // Any frame at all proves the server is there.
    this.#heard();
    if (isBinary || typeof data !== 'string') {
      this.#log.warn('control socket: ignored a binary frame', { bytes: data.length, generation: this.generation });
      return;
    }
    const bytes = Buffer.byteLength(data);
    if (bytes > MAX_WS_MESSAGE_BYTES) {
      this.#log.warn(`control socket: ignored a frame over the ${MAX_WS_MESSAGE_BYTES / 1024} KB limit`, { bytes, generation: this.generation });
      return;
    }
    const message = parseServerFrame(data);
    if (!message) {
      this.#log.warn('control socket: ignored a malformed frame', { preview: data.slice(0, 80), generation: this.generation });
      return;
    }
    switch (message.kind) {
      case 'ping': {
        const shape = pingShapeFrom(data);
        if (shape) this.#keepAlive.notePing(shape);
        this.#sendKeepAlive(shape);
        return;
      }
      case 'conn_init_ack':
        if (this.#acked) {
          this.#log.warn('control socket: ignored a repeated conn_init_ack', { generation: this.generation });
          return;
        }
        if (this.#holdConnInit && !this.#connInitSent) {
          this.#log.warn('control socket: ignored a conn_init_ack before conn_init', { generation: this.generation });
          return;
        }
        this.#acked = true;
        this.#clearTimer(this.#ackTimer);
        this.#ackTimer = null;
        if (message.success) this.#report({ kind: 'ack-success' });
        else if (message.errorCode === 'NOT_READY') this.#report({ kind: 'ack-not-ready' });
        else this.#report({ kind: 'ack-failed', errorCode: message.errorCode });
        return;
      case 'forced_hangup':
        this.#report({ kind: 'forced-hangup', reason: message.reason });
        return;
      case 'other':
        this.#log.debug('control socket: ignored a frame of unknown type', { type: message.type, generation: this.generation });
        return;
    }
  }

  /** A WebSocket ping or pong control frame: the server is there (the transport answered a ping itself). */
  #handleControlFrame(): void {
    if (this.#phase === 'open') this.#heard();
  }

  #handleError(error: AvatarError): void {
    if (this.#phase === 'finished') return;
    this.#fail(error);
  }

  #handleClose(code: number, reason: string): void {
    this.#transportClosed = true;
    this.#clearTimer(this.#closeTimer);
    this.#closeTimer = null;
    this.#resolveClosed();
    if (this.#phase === 'finished') return;
    const refused = this.#keepAliveRefusedBy(code);
    this.#finish();
    this.#report({ kind: 'closed', code, reason, wasClean: code !== 1006, ...(refused ? { keepAliveRefused: refused } : {}) }, true);
  }

  // --- internals ------------------------------------------------------------------------------------

  #fail(error: AvatarError): void {
    this.#finish();
    this.#terminateTransport();
    this.#report({ kind: 'error', error }, true);
  }

  #dead(cause: 'silence' | 'clock-jump'): void {
    this.#log.warn('control socket: connection presumed dead', { cause, generation: this.generation });
    this.#finish();
    this.#terminateTransport();
    this.#report({ kind: 'dead', cause }, true);
  }

  /** Stops every timer except the close fallback and stops reporting. */
  #finish(): void {
    this.#phase = 'finished';
    for (const timer of [this.#keepAliveTimer, this.#deadTimer, this.#ackTimer]) this.#clearTimer(timer);
    this.#keepAliveTimer = this.#deadTimer = this.#ackTimer = null;
  }

  #terminateTransport(): void {
    this.#clearTimer(this.#closeTimer);
    this.#closeTimer = null;
    if (!this.#transportClosed) this.#transport.terminate();
    // A terminated transport is gone even if its close event is still on its way.
    this.#resolveClosed();
  }

  #report(outcome: ControlSocketOutcome, terminal = false): void {
    if (this.#phase === 'finished' && !terminal) return;
    this.#onOutcomeListener(outcome, this);
  }

  #send(build: (seqId: number) => ClientFrame | EchoFrame, isKeepAlive = false): void {
    if (this.#phase !== 'open' || !this.#transport.isOpen) return;
    this.#lastSeqId += 1;
    this.#transport.send(JSON.stringify(build(this.#lastSeqId)));
    this.#keepAliveLastSentAtMs = isKeepAlive ? this.#clock.now() : null;
  }

  #heard(): void {
    this.#lastHeardAtMs = this.#clock.now();
    this.#restartDeadTimer();
  }

  /**
   * One keep-alive in this connection's style, on the timer or in answer to a server ping (`ping`, its
   * shape when it was JSON). `ping-echo` copies the ping it answers, or on the timer the last ping seen
   * (on any connection); before any ping there is nothing to copy, and the server's first ping (every 5 s)
   * is answered well inside its 15 s window.
   */
  #sendKeepAlive(ping: PingShape | null): void {
    switch (this.#style) {
      case 'pong-message':
        return this.#send((seqId) => pongFrame(this.liveId, seqId, this.#clock.now()), true);
      case 'ping-echo': {
        const shape = ping ?? this.#keepAlive.pingShape;
        if (shape) this.#send((seqId) => echoFrame(shape, this.liveId, seqId), true);
        return;
      }
      case 'ws-pong':
        if (this.#phase !== 'open' || !this.#transport.isOpen || !this.#transport.pong) return;
        this.#transport.pong();
        this.#keepAliveLastSentAtMs = this.#clock.now();
        return;
    }
  }

  /** The server closed with `code` right after our keep-alive: it refused that style (keep-alive.ts). */
  #keepAliveRefusedBy(code: number): { style: KeepAliveStyle; next: KeepAliveStyle | null } | null {
    const sentAtMs = this.#keepAliveLastSentAtMs;
    if (sentAtMs === null || !isRefusalCloseCode(code) || this.#clock.now() - sentAtMs > KEEP_ALIVE_REFUSAL_WINDOW_MS) return null;
    return { style: this.#style, next: this.#keepAlive.refused(this.#style, code) };
  }

  #armAckTimer(ackTimeoutMs: number): void {
    this.#ackTimer = this.#arm(ackTimeoutMs, () => {
      this.#ackTimer = null;
      this.#fail(new AvatarError('timeout', `No conn_init answer within ${ackTimeoutMs} ms.`));
    });
  }

  #armKeepAlive(): void {
    this.#keepAliveTimer = this.#arm(this.#keepAliveMs, () => {
      this.#keepAliveTimer = null;
      // A server that sends nothing at all (no pings): ask the socket itself whether the peer is there.
      if (this.#clock.now() - this.#lastHeardAtMs >= 2 * this.#keepAliveMs && this.#transport.isOpen) this.#transport.ping?.();
      this.#sendKeepAlive(null);
      this.#armKeepAlive();
    });
  }

  #restartDeadTimer(): void {
    this.#clearTimer(this.#deadTimer);
    this.#deadTimer = this.#arm(this.#deadAfterMs, () => {
      this.#deadTimer = null;
      this.#dead('silence');
    });
  }

  /** A clock timer that reports a clock jump instead of running `fn` when it fires far too late. */
  #arm(delayMs: number, fn: () => void): Timer {
    const dueAtMs = this.#clock.now() + delayMs;
    const timer: Timer = {
      dueAtMs,
      handle: this.#clock.setTimeout(() => {
        if (this.#phase === 'finished' && timer !== this.#closeTimer) return;
        const lateMs = this.#clock.now() - dueAtMs;
        if (lateMs > this.#jumpToleranceMs && this.#phase !== 'finished') {
          if (timer === this.#keepAliveTimer) this.#keepAliveTimer = null;
          if (timer === this.#deadTimer) this.#deadTimer = null;
          if (timer === this.#ackTimer) this.#ackTimer = null;
          this.#dead('clock-jump');
          return;
        }
        fn();
      }, delayMs),
    };
    return timer;
  }

  #clearTimer(timer: Timer | null): void {
    if (timer) this.#clock.clearTimeout(timer.handle);
  }
}

/** A client frame whose type copies the server's ping: a number, or a name where the server uses names. */
type EchoFrame = Omit<ClientFrame, 'type'> & { type: number | string };

/** A keep-alive shaped like the server's ping: its type and payload, in the client envelope (spec §6). A
 *  ping without a type is one the protocol named in its payload; the echo then carries our ping number. */
function echoFrame(ping: PingShape, liveId: string, seqId: number): EchoFrame {
  return { type: ping.type ?? MSG_PING, live_id: liveId, seq_id: seqId, payload: ping.payload };
}
