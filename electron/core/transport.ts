/**
 * The socket seam of the core. The control socket talks to a `SocketTransport` it gets from a
 * `TransportFactory`; production wires `wsTransportFactory` (the `ws` package, Node only), tests wire an
 * in-memory fake (test/helpers/fake-transport.ts). The transport knows nothing of the protocol.
 *
 * Contract every transport keeps (the control socket relies on it):
 * - handlers are given to the factory, so no event can fire before someone listens;
 * - `onOpen` at most once; `onError` at most once and always before `onClose`;
 * - `onClose` exactly once at the end of the transport's life, also after a local `close()`/`terminate()`
 *   (a failed handshake reports `onError` then `onClose(1006, …)`).
 */
import WebSocket from 'ws';
import { AvatarError } from './errors.ts';
import { MAX_WS_MESSAGE_BYTES } from './protocol.ts';

export interface TransportHandlers {
  onOpen(): void;
  /** `data` is the text of a text frame, or the bytes of a binary frame (`isBinary`). */
  onMessage(data: string | Uint8Array, isBinary: boolean): void;
  onClose(code: number, reason: string): void;
  /** A WebSocket ping control frame arrived (the transport answers it with a pong itself). Optional: a
   *  server may ping with control frames only, and any frame proves the socket alive. */
  onPing?(): void;
  /** A WebSocket pong control frame arrived (the answer to our `ping()` probe). */
  onPong?(): void;
  /** A handshake refusal (401 → `unauthorized`, 403 → `forbidden`, 404 → `not_found`) or a socket error (`network`). */
  onError(error: AvatarError): void;
}

export interface SocketTransport {
  /** Sends one text frame. Throws nothing: sending on a socket that is not open is a no-op (logged by the caller). */
  send(text: string): void;
  /** Polite close (close frame, wait for the peer's). */
  close(code?: number, reason?: string): void;
  /** Abrupt close: destroys the underlying connection now (used when the peer is presumed dead). */
  terminate(): void;
  /** True between `onOpen` and the start of closing. */
  readonly isOpen: boolean;
  /** Sends a WebSocket ping control frame (a liveness probe: every WebSocket peer answers with a pong). */
  ping?(): void;
  /** Sends an unsolicited WebSocket pong control frame (a one-way heartbeat, RFC 6455 §5.5.3). */
  pong?(): void;
}

export type TransportFactory = (url: string, headers: Record<string, string>, handlers: TransportHandlers) => SocketTransport;

export interface WsTransportOptions {
  /**
   * Frames larger than this make `ws` close the connection (code 1009) instead of buffering them. Default
   * `WS_HARD_MAX_PAYLOAD_BYTES`: a hard memory guard only. The spec's message limit (§8,
   * `MAX_WS_MESSAGE_BYTES`) is enforced one level up, where the control socket logs and ignores a frame over
   * it and keeps the call, rather than dropping a live connection because the server sent one oversized frame.
   */
  maxPayloadBytes?: number;
  /** Handshake timeout (default 10 000 ms; real time, `ws` owns this timer). */
  handshakeTimeoutMs?: number;
  /** A keep-alive agent (fast start: `WarmHttp.agent`), so the handshake reuses a warm connection. */
  agent?: import('node:http').Agent;
}

/** Default hard cap for one incoming frame (see `WsTransportOptions.maxPayloadBytes`). */
export const WS_HARD_MAX_PAYLOAD_BYTES = 16 * MAX_WS_MESSAGE_BYTES;

/** HTTP status of a refused WebSocket handshake → error code (spec §5, §7). */
export function handshakeError(status: number): AvatarError {
  const message = `The control socket handshake was refused (HTTP ${status}).`;
  if (status === 401) return new AvatarError('unauthorized', `${message} Check the API key.`, { status });
  if (status === 403) return new AvatarError('forbidden', `${message} Use the key that created the session.`, { status });
  if (status === 404) return new AvatarError('not_found', `${message} The session does not exist or has expired.`, { status });
  if (status >= 500) return new AvatarError('server', message, { status });
  return new AvatarError('network', message, { status });
}

/** A `TransportFactory` over the `ws` package: the handshake carries `headers` (spec §5 Authorization). */
export function createWsTransportFactory(options: WsTransportOptions = {}): TransportFactory {
  const maxPayload = options.maxPayloadBytes ?? WS_HARD_MAX_PAYLOAD_BYTES;
  const handshakeTimeout = options.handshakeTimeoutMs ?? 10_000;
  return (url, headers, handlers) => {
    let errored = false;
    let closed = false;
    const reportError = (error: AvatarError) => {
      if (errored || closed) return;
      errored = true;
      handlers.onError(error);
    };
    const reportClose = (code: number, reason: string) => {
      if (closed) return;
      closed = true;
      handlers.onClose(code, reason);
    };

    let ws: WebSocket;
    try {
      ws = new WebSocket(url, { headers, maxPayload, handshakeTimeout, perMessageDeflate: false, ...(options.agent ? { agent: options.agent } : {}) });
    } catch (error) {
      // Bad URL and the like: report asynchronously, as a real socket would.
      queueMicrotask(() => {
        reportError(new AvatarError('network', `Could not open the control socket: ${(error as Error).message}`, { cause: error }));
        reportClose(1006, 'invalid url');
      });
      return { send() {}, close() {}, terminate() {}, isOpen: false };
    }

    ws.on('open', () => handlers.onOpen());
    // `ws` answers a ping with a pong by itself (autoPong); the events only tell the owner a frame came.
    ws.on('ping', () => {
      if (!closed) handlers.onPing?.();
    });
    ws.on('pong', () => {
      if (!closed) handlers.onPong?.();
    });
    ws.on('message', (data, isBinary) => {
      if (closed) return;
      if (isBinary) handlers.onMessage(toBytes(data), true);
      else handlers.onMessage(toBytes(data).toString(), false);
    });
    // With this listener, `ws` leaves the refused handshake to us: report the status, then abort.
    ws.on('unexpected-response', (_req, res) => {
      reportError(handshakeError(res.statusCode ?? 0));
      res.resume();
      ws.terminate(); // aborts the request; ws then emits 'error' (suppressed: already reported) and 'close'
    });
    ws.on('error', (error) => {
      const code = (error as { code?: string }).code;
      const message = code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'The server sent a frame over the size limit.' : `Control socket error: ${error.message}`;
      reportError(new AvatarError('network', message, { cause: error }));
    });
    ws.on('close', (code, reason) => reportClose(code, reason.toString()));

    return {
      send(text) {
        if (ws.readyState === WebSocket.OPEN) ws.send(text);
      },
      close(code = 1000, reason = '') {
        if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
        else if (ws.readyState === WebSocket.OPEN) ws.close(code, reason);
      },
      terminate() {
        if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
      },
      ping() {
        if (ws.readyState === WebSocket.OPEN) ws.ping();
      },
      pong() {
        if (ws.readyState === WebSocket.OPEN) ws.pong();
      },
      get isOpen() {
        return ws.readyState === WebSocket.OPEN;
      },
    };
  };
}

/** The default `ws` transport (1 MiB hard frame cap, 10 s handshake timeout). */
export const wsTransportFactory: TransportFactory = createWsTransportFactory();

function toBytes(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
