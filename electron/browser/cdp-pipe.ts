/**
 * The DevTools protocol over the pipe Chromium opens with `--remote-debugging-pipe`: the browser reads
 * commands on its file descriptor 3 and writes answers and events on 4, each a JSON message ended by a NUL
 * byte. The browser mode's host uses it to watch the kiosk's windows (window-watch.ts).
 *
 * Why a pipe and not `--remote-debugging-port`: a port, even on 127.0.0.1, is open to every local process
 * and user, and whoever connects drives the browser (reads the session cookie, opens any page; no browser
 * policy stops the protocol). The pipe is inherited by the host alone, needs no port to discover and no
 * `--remote-allow-origins`, and works through Debian's `/usr/bin/chromium` wrapper script (it passes
 * descriptors 3 and 4 on to the browser it execs) and with Chrome on Linux, macOS and Windows.
 *
 * Bounded: every command has a deadline (`CDP_COMMAND_TIMEOUT_MS`, on the injected clock), at most
 * `MAX_PENDING_COMMANDS` wait at once, and a message larger than `MAX_MESSAGE_BYTES` (or one that is not
 * JSON of the protocol) ends the connection: a browser that talks nonsense is not a browser to keep.
 */
import type { Readable, Writable } from 'node:stream';
import { z } from 'zod';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';

/** How long a command may wait for its answer. */
export const CDP_COMMAND_TIMEOUT_MS = 10_000;
/** Commands waiting for an answer at most; beyond that a new one fails at once. */
export const MAX_PENDING_COMMANDS = 64;
/** The largest message read from the browser (the events we ask for are a few hundred bytes). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export type CdpFailure = 'closed' | 'timeout' | 'protocol' | 'refused' | 'busy';

/** A command that did not succeed: the browser refused it (`refused`, with its message), never answered
 *  (`timeout`), went away (`closed`), spoke nonsense (`protocol`), or too many were waiting (`busy`). */
export class CdpError extends Error {
  readonly reason: CdpFailure;
  constructor(reason: CdpFailure, message: string) {
    super(message);
    this.name = 'CdpError';
    this.reason = reason;
  }
}

const answerSchema = z.object({
  id: z.number().int(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number(), message: z.string() }).optional(),
  sessionId: z.string().optional(),
});
const eventSchema = z.object({
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
  sessionId: z.string().optional(),
});

export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

export interface CdpConnection {
  /** Send a command (to `sessionId`'s target when given); resolves with its result. */
  send(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<Record<string, unknown>>;
  /** Every event the browser sends; returns the unsubscribe. */
  onEvent(listener: (event: CdpEvent) => void): () => void;
  /** Once, when the connection ends (the browser closed its end, or `close()`); `why` is one line. */
  onClose(listener: (why: string) => void): void;
  readonly closed: boolean;
  /** End the connection; waiting commands fail with `closed`. */
  close(why?: string): void;
}

/** A connection over the browser's pipe: `toBrowser` is its descriptor 3, `fromBrowser` its 4. */
export function connectCdpPipe(toBrowser: Writable, fromBrowser: Readable, options: { clock?: Clock; timeoutMs?: number } = {}): CdpConnection {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? CDP_COMMAND_TIMEOUT_MS;
  const pending = new Map<number, { method: string; ok(result: Record<string, unknown>): void; fail(error: CdpError): void; timer: TimerHandle }>();
  const listeners = new Set<(event: CdpEvent) => void>();
  const closeListeners: Array<(why: string) => void> = [];
  let nextId = 1;
  let closed = false;
  let chunks: Buffer[] = [];
  let buffered = 0;

  function end(why: string): void {
    if (closed) return;
    closed = true;
    for (const [id, waiting] of pending) {
      clock.clearTimeout(waiting.timer);
      pending.delete(id);
      waiting.fail(new CdpError('closed', `The browser's DevTools pipe closed before it answered ${waiting.method} (${why}).`));
    }
    listeners.clear();
    fromBrowser.off('data', onData);
    toBrowser.on('error', () => undefined);
    for (const listener of closeListeners.splice(0)) listener(why);
  }

  function onMessage(text: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return end('the browser sent a message that is not JSON');
    }
    const answer = answerSchema.safeParse(raw);
    if (answer.success) {
      const waiting = pending.get(answer.data.id);
      if (!waiting) return; // an answer to a command that already timed out
      pending.delete(answer.data.id);
      clock.clearTimeout(waiting.timer);
      if (answer.data.error) waiting.fail(new CdpError('refused', `${waiting.method}: ${answer.data.error.message}`));
      else waiting.ok(answer.data.result ?? {});
      return;
    }
    const event = eventSchema.safeParse(raw);
    if (!event.success) return end('the browser sent a message that is not of the DevTools protocol');
    const delivered: CdpEvent = { method: event.data.method, params: event.data.params ?? {}, ...(event.data.sessionId ? { sessionId: event.data.sessionId } : {}) };
    for (const listener of [...listeners]) listener(delivered);
  }

  function onData(data: Buffer): void {
    let start = 0;
    for (let nul = data.indexOf(0); nul !== -1 && !closed; nul = data.indexOf(0, start)) {
      chunks.push(data.subarray(start, nul));
      const message = Buffer.concat(chunks).toString('utf8');
      chunks = [];
      buffered = 0;
      start = nul + 1;
      onMessage(message);
    }
    if (closed || start >= data.length) return;
    buffered += data.length - start;
    if (buffered > MAX_MESSAGE_BYTES) return end(`the browser sent a message over ${MAX_MESSAGE_BYTES} bytes`);
    chunks.push(data.subarray(start));
  }

  fromBrowser.on('data', onData);
  fromBrowser.once('end', () => end('the browser closed it'));
  fromBrowser.once('close', () => end('the browser closed it'));
  fromBrowser.on('error', (e: Error) => end(e.message));
  toBrowser.on('error', (e: Error) => end(e.message));

  return {
    send(method, params = {}, sessionId) {
      if (closed) return Promise.reject(new CdpError('closed', `The browser's DevTools pipe is closed (${method} not sent).`));
      if (pending.size >= MAX_PENDING_COMMANDS) return Promise.reject(new CdpError('busy', `${pending.size} DevTools commands are already waiting (${method} not sent).`));
      const id = nextId++;
      return new Promise((ok, fail) => {
        const timer = clock.setTimeout(() => {
          pending.delete(id);
          fail(new CdpError('timeout', `The browser did not answer ${method} within ${timeoutMs / 1000} s.`));
        }, timeoutMs);
        pending.set(id, { method, ok, fail, timer });
        toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
      });
    },
    onEvent(listener) {
      if (closed) return () => undefined;
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    onClose(listener) {
      if (closed) listener('already closed');
      else closeListeners.push(listener);
    },
    get closed() {
      return closed;
    },
    close(why = 'closed by the host') {
      end(why);
    },
  };
}
