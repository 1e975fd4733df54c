/**
 * An in-memory `SocketTransport` for unit tests. The test plays the server: `open()`, `receive()`,
 * `serverClose()`, `fail()`; and reads what the client sent with `frames()`. Nothing happens on its own:
 * no event fires unless the test (or a client call) causes it, so sequences are exact.
 */
import { AvatarError } from '../../electron/core/errors.ts';
import type { SocketTransport, TransportFactory, TransportHandlers } from '../../electron/core/transport.ts';

export interface SentFrame {
  type: number;
  live_id: string;
  seq_id: number;
  payload: Record<string, unknown>;
}

export class FakeTransport implements SocketTransport {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly #handlers: TransportHandlers;
  readonly sent: string[] = [];
  /** Local close() calls, in order. */
  readonly closeCalls: Array<{ code: number | undefined; reason: string | undefined }> = [];
  terminated = false;
  /** WebSocket ping / pong control frames the client sent (a liveness probe / a pong-only keep-alive). */
  pingsSent = 0;
  pongsSent = 0;
  #state: 'connecting' | 'open' | 'closing' | 'closed' = 'connecting';
  /** When true (default), a local close() completes at once (the peer answers the close frame). */
  autoCompleteClose = true;

  constructor(url: string, headers: Record<string, string>, handlers: TransportHandlers) {
    this.url = url;
    this.headers = headers;
    this.#handlers = handlers;
  }

  get isOpen(): boolean {
    return this.#state === 'open';
  }

  get isClosed(): boolean {
    return this.#state === 'closed';
  }

  send(text: string): void {
    if (this.#state === 'open') this.sent.push(text);
  }

  close(code?: number, reason?: string): void {
    this.closeCalls.push({ code, reason });
    if (this.#state === 'closed' || this.#state === 'closing') return;
    this.#state = 'closing';
    if (this.autoCompleteClose) this.#closed(code ?? 1000, reason ?? '');
  }

  ping(): void {
    if (this.#state === 'open') this.pingsSent += 1;
  }

  pong(): void {
    if (this.#state === 'open') this.pongsSent += 1;
  }

  terminate(): void {
    this.terminated = true;
    if (this.#state !== 'closed') this.#closed(1006, '');
  }

  // --- the server's side -------------------------------------------------------------------------------

  open(): void {
    if (this.#state !== 'connecting') throw new Error('FakeTransport.open: not connecting');
    this.#state = 'open';
    this.#handlers.onOpen();
  }

  receive(frame: unknown): void {
    this.#handlers.onMessage(typeof frame === 'string' ? frame : JSON.stringify(frame), false);
  }

  receiveBinary(bytes: Uint8Array): void {
    this.#handlers.onMessage(bytes, true);
  }

  /** A WebSocket ping control frame from the server (the real transport answers it with a pong itself). */
  receivePing(): void {
    this.#handlers.onPing?.();
  }

  /** A WebSocket pong control frame from the server (the answer to the client's probe). */
  receivePong(): void {
    this.#handlers.onPong?.();
  }

  /** The peer closes (or the network drops: code 1006). */
  serverClose(code = 1000, reason = ''): void {
    if (this.#state === 'closed') return;
    this.#closed(code, reason);
  }

  /** Completes a pending local close (when `autoCompleteClose` is false). */
  completeClose(): void {
    if (this.#state === 'closing') this.#closed(1000, '');
  }

  fail(error: AvatarError): void {
    this.#handlers.onError(error);
    if (this.#state !== 'closed') this.#closed(1006, '');
  }

  /** The client's frames, parsed. */
  frames(): SentFrame[] {
    return this.sent.map((text) => JSON.parse(text) as SentFrame);
  }

  #closed(code: number, reason: string): void {
    this.#state = 'closed';
    this.#handlers.onClose(code, reason);
  }
}

/** A factory that records every transport it made. */
export class FakeTransports {
  readonly all: FakeTransport[] = [];
  readonly factory: TransportFactory = (url, headers, handlers) => {
    const transport = new FakeTransport(url, headers, handlers);
    this.all.push(transport);
    return transport;
  };

  get last(): FakeTransport {
    const t = this.all.at(-1);
    if (!t) throw new Error('no transport was made');
    return t;
  }

  /** Transports that are not closed (a disposed client must leave none). */
  openCount(): number {
    return this.all.filter((t) => !t.isClosed).length;
  }
}

/** In-memory sockets that the "server" opens (or refuses) as soon as the client dials. */
export function autoAnsweringTransports(behaviour: 'open' | 'refuse' = 'open'): { transports: FakeTransports; factory: TransportFactory } {
  const transports = new FakeTransports();
  const factory: TransportFactory = (url, headers, handlers) => {
    const t = transports.factory(url, headers, handlers) as FakeTransport;
    queueMicrotask(() => (behaviour === 'open' ? t.open() : t.fail(new AvatarError('network', 'connection refused'))));
    return t;
  };
  return { transports, factory };
}
