/**
 * The browser's end of a DevTools pipe, scripted: what the host wrote (each command parsed), answers
 * (`{}` unless the test says otherwise) and events the test sends. The host's end is the real
 * `connectCdpPipe` over two in-memory streams.
 */
import { PassThrough } from 'node:stream';
import type { Clock } from '../../electron/core/clock.ts';
import { connectCdpPipe, type CdpConnection } from '../../electron/browser/cdp-pipe.ts';

export interface SentCommand {
  id: number;
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

export interface ScriptedBrowser {
  /** The host's connection. */
  cdp: CdpConnection;
  /** Every command the host sent, in order. */
  sent: SentCommand[];
  /** How the browser answers `method` from now on: a result, an error message, or `'silent'` (never). */
  answer(method: string, with_: Record<string, unknown> | { error: string } | 'silent'): void;
  /** Answer a command the browser kept silent about. */
  answerLate(id: number, result: Record<string, unknown>): void;
  /** Raw bytes from the browser (framing tests). */
  write(bytes: string | Buffer): void;
  /** An event from the browser. */
  emit(method: string, params: Record<string, unknown>, sessionId?: string): void;
  /** The browser closes its end (it exited). */
  hangUp(): void;
}

export function scriptedBrowser(options: { clock?: Clock; timeoutMs?: number } = {}): ScriptedBrowser {
  const toBrowser = new PassThrough();
  const fromBrowser = new PassThrough();
  const sent: SentCommand[] = [];
  const answers = new Map<string, Record<string, unknown> | { error: string } | 'silent'>();
  let pending = '';
  const frame = (message: unknown) => fromBrowser.write(`${JSON.stringify(message)}\0`);
  toBrowser.on('data', (d: Buffer) => {
    pending += d.toString('utf8');
    for (let nul = pending.indexOf('\0'); nul !== -1; nul = pending.indexOf('\0')) {
      const command = JSON.parse(pending.slice(0, nul)) as SentCommand;
      pending = pending.slice(nul + 1);
      sent.push(command);
      const how = answers.get(command.method) ?? {};
      if (how === 'silent') continue;
      const session = command.sessionId ? { sessionId: command.sessionId } : {};
      if ('error' in how && typeof how.error === 'string') frame({ id: command.id, error: { code: -32000, message: how.error }, ...session });
      else frame({ id: command.id, result: how, ...session });
    }
  });
  return {
    cdp: connectCdpPipe(toBrowser, fromBrowser, options),
    sent,
    answer: (method, with_) => void answers.set(method, with_),
    answerLate: (id, result) => frame({ id, result }),
    write: (bytes) => void fromBrowser.write(bytes),
    emit: (method, params, sessionId) => frame({ method, params, ...(sessionId ? { sessionId } : {}) }),
    hangUp: () => void fromBrowser.end(),
  };
}
