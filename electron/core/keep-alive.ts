/**
 * The client's keep-alive on the control socket, and how it adapts to the service. Spec §6 rule 4 says the
 * client "must send some message within 15 seconds" but shows no format for it, so the client tries the
 * fair readings in this order (`KEEP_ALIVE_STYLES`):
 *
 *  1. `pong-message`: our own assumption, `{type:4, live_id, seq_id, payload:{pong:{ts}}}` (protocol.ts);
 *  2. `ping-echo`: a message shaped like the server's own JSON ping (its `type` and `payload`) in the client
 *     envelope (`live_id`, `seq_id`), as a server that names only its own ping would expect;
 *  3. `ws-pong`: WebSocket pong control frames only, no message at all (RFC 6455 §5.5.3 allows an
 *     unsolicited pong as a one-way heartbeat), for a server that takes only the protocol's own frames.
 *
 * A server that closes the socket right after our keep-alive (`isKeepAliveRefusal`) has refused that style:
 * `KeepAlive.refused` moves to the next one, and the next connection uses it. One `KeepAlive` is shared by
 * every connection to one service (the kiosk keeps one per service URL and stores its style, so a restart
 * keeps what worked: kiosk/keep-alive-store.ts).
 */
import { silentLogger, type Logger } from './log.ts';
import { isRecord } from './protocol.ts';

export const KEEP_ALIVE_STYLES = ['pong-message', 'ping-echo', 'ws-pong'] as const;
export type KeepAliveStyle = (typeof KEEP_ALIVE_STYLES)[number];
export const DEFAULT_KEEP_ALIVE_STYLE: KeepAliveStyle = 'pong-message';

/** How each style is named to people (logs, errors, the wire report). */
export const KEEP_ALIVE_STYLE_LABELS: Readonly<Record<KeepAliveStyle, string>> = {
  'pong-message': 'a pong message (type 4)',
  'ping-echo': "a reply shaped like the server's own ping",
  'ws-pong': 'WebSocket pong frames only',
};

/**
 * A close counts as a refusal of our keep-alive when it comes this soon after the keep-alive and nothing
 * else was sent in between. Long enough for a round trip on a slow venue network, short against the 5 s
 * keep-alive period, so the next keep-alive is never confused with this one.
 */
export const KEEP_ALIVE_REFUSAL_WINDOW_MS = 2_000;

/**
 * Close codes with which a server says "I do not accept what you sent": protocol error (1002), unsupported
 * data (1003), invalid payload (1007), policy violation (1008), and the application range 4000–4999. A
 * normal close (1000), going away (1001) or an abnormal drop (1006) says nothing about the keep-alive.
 */
export function isRefusalCloseCode(code: number): boolean {
  return code === 1002 || code === 1003 || code === 1007 || code === 1008 || (code >= 4000 && code <= 4999);
}

/** The server's JSON ping as last seen: what a `ping-echo` keep-alive copies. */
export interface PingShape {
  /** The ping's `type` (a number or a name), or null when it had none. */
  type: number | string | null;
  payload: Record<string, unknown>;
}

/** The ping's type and payload from a frame the protocol recognised as a ping; null if it is not JSON. */
export function pingShapeFrom(text: string): PingShape | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(raw)) return null;
  const type = typeof raw.type === 'number' || typeof raw.type === 'string' ? raw.type : null;
  return { type, payload: isRecord(raw.payload) ? raw.payload : {} };
}

export interface KeepAliveOptions {
  /** The style to start with (a remembered one), default `pong-message`. */
  style?: KeepAliveStyle;
  /** Called when the style changes (the kiosk stores it for this service). */
  onChange?: (style: KeepAliveStyle) => void;
  logger?: Logger;
}

/** The keep-alive style of one service, shared by its connections. */
export class KeepAlive {
  #style: KeepAliveStyle;
  #pingShape: PingShape | null = null;
  readonly #onChange: ((style: KeepAliveStyle) => void) | undefined;
  readonly #log: Logger;

  constructor(options: KeepAliveOptions = {}) {
    this.#style = options.style ?? DEFAULT_KEEP_ALIVE_STYLE;
    this.#onChange = options.onChange;
    this.#log = options.logger ?? silentLogger;
  }

  /** The style a new connection uses. */
  get style(): KeepAliveStyle {
    return this.#style;
  }

  /** The server's last JSON ping (any connection), or null before one was seen. */
  get pingShape(): PingShape | null {
    return this.#pingShape;
  }

  notePing(shape: PingShape): void {
    this.#pingShape = shape;
  }

  /**
   * The server closed a socket with `code` right after a keep-alive of `style`. Moves to the next style
   * (`ping-echo` only once a JSON ping was seen: there is nothing to echo otherwise) and returns it, or
   * null when `style` was the last one. A refusal of a style no longer in use (an older socket) changes
   * nothing and returns the current style.
   */
  refused(style: KeepAliveStyle, code: number): KeepAliveStyle | null {
    if (style !== this.#style) return this.#style;
    const next = nextStyle(style, this.#pingShape !== null);
    if (next === null) {
      this.#log.warn('control socket: the service refused every keep-alive the spec allows', { style, code });
      return null;
    }
    this.#log.warn(`control socket: the service closed the socket (${code}) right after our keep-alive; the next connection sends ${KEEP_ALIVE_STYLE_LABELS[next]}`, { from: style, to: next, code });
    this.#style = next;
    try {
      this.#onChange?.(next);
    } catch (error) {
      this.#log.error('keep-alive: a change listener threw', { error: String(error) });
    }
    return next;
  }
}

/** How a refusal is said in an error message: what was refused and what the next connection sends. */
export function describeRefusal(style: KeepAliveStyle, next: KeepAliveStyle | null): string {
  const then = next
    ? `the next connection sends ${KEEP_ALIVE_STYLE_LABELS[next]}`
    : 'the service accepted none of the keep-alives the spec allows (our pong message, an echo of its ping, WebSocket pongs)';
  return `right after our keep-alive, ${KEEP_ALIVE_STYLE_LABELS[style]}; ${then}`;
}

/** The style after `style`, skipping `ping-echo` when no server ping is known. Pure. */
export function nextStyle(style: KeepAliveStyle, pingKnown: boolean): KeepAliveStyle | null {
  const order = KEEP_ALIVE_STYLES.filter((s) => s !== 'ping-echo' || pingKnown);
  const at = order.indexOf(style);
  if (at === -1) return order.find((s) => KEEP_ALIVE_STYLES.indexOf(s) > KEEP_ALIVE_STYLES.indexOf(style)) ?? null;
  return order[at + 1] ?? null;
}

export function isKeepAliveStyle(value: unknown): value is KeepAliveStyle {
  return typeof value === 'string' && (KEEP_ALIVE_STYLES as readonly string[]).includes(value);
}
