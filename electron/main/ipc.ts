/**
 * The one place IPC handlers are registered. Electron-free: it takes an `ipcMain`-like object and
 * structural types for the event, so the sender check and the rejection of unknown channels are
 * unit-tested without Electron (test/unit/main/ipc.test.ts).
 *
 * Every channel of the contract goes through `handleIpc`, which
 *  1. rejects anything that is not our main frame showing our own page (a subframe, a navigated-away
 *     frame, another window, or a destroyed frame) with `forbidden`, before looking at the arguments;
 *  2. hands the raw argument to the channel registry's `dispatch` (kiosk/channels.ts), where each owner
 *     registered its handlers: it validates the argument with the contract's schema, checks the staff
 *     gate, and rejects unknown channels with `invalid_request`;
 *  3. always answers with a `Result` (never throws across IPC: Electron would carry only a message).
 */
import { CHANNELS, fail, type Result } from '../contract.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import type { ChannelRegistry } from '../kiosk/channels.ts';

/** What we read of Electron's `WebFrameMain`. */
export interface FrameLike {
  readonly url: string;
  readonly detached?: boolean;
}

/** What we read of Electron's `IpcMainInvokeEvent`. `senderFrame` is null once the frame is gone. */
export interface InvokeEventLike {
  readonly senderFrame: FrameLike | null;
}

export interface IpcMainLike {
  handle(channel: string, listener: (event: InvokeEventLike, ...args: unknown[]) => Promise<unknown> | unknown): void;
  removeHandler(channel: string): void;
}

export interface IpcOptions {
  /** The channel registry every call is dispatched through (kiosk/channels.ts). */
  channels: Pick<ChannelRegistry, 'dispatch'>;
  /** The main frame of our window right now (null before the window exists or after it is gone). */
  getMainFrame: () => FrameLike | null;
  /** Our page's origin, e.g. `app://kiosk` (see window.ts). */
  origin: string;
  logger?: Logger;
}

/** Is this invoke from our own main frame, showing our own page? */
export function isTrustedSender(event: InvokeEventLike, options: Pick<IpcOptions, 'getMainFrame' | 'origin'>): boolean {
  const frame = event.senderFrame;
  if (!frame || frame.detached) return false;
  const main = options.getMainFrame();
  if (!main || frame !== main) return false;
  return originOf(frame.url) === options.origin;
}

/** Validate sender and dispatch one invoke. Exposed for tests; `registerIpc` wires it to every channel. */
export async function handleIpc(channel: string, event: InvokeEventLike, args: unknown[], options: IpcOptions): Promise<Result<unknown>> {
  const logger = options.logger ?? silentLogger;
  if (!isTrustedSender(event, options)) {
    logger.warn('Rejected IPC from an untrusted sender', { channel, url: safeUrl(event.senderFrame?.url) });
    return fail('forbidden', 'This request did not come from the kiosk page.');
  }
  // One argument per call (the preload always sends exactly one or none): extra ones are a bug or an attack.
  if (args.length > 1) return fail('invalid_request', `Invalid arguments for ${channel}: expected at most one argument.`);
  try {
    return await options.channels.dispatch(channel, args[0]);
  } catch (error) {
    logger.error('IPC handler threw', { channel, error: String(error) });
    return fail('internal', 'The request failed unexpectedly.');
  }
}

/** Register a handler for every contract channel. Returns a function that removes them all. */
export function registerIpc(ipcMain: IpcMainLike, options: IpcOptions): () => void {
  const channels = Object.values(CHANNELS);
  for (const channel of channels) {
    ipcMain.handle(channel, (event, ...args) => handleIpc(channel, event, args, options));
  }
  return () => {
    for (const channel of channels) ipcMain.removeHandler(channel);
  };
}

export function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    // `URL.origin` is "null" for non-special schemes (app://, file://): build it ourselves.
    if (u.protocol === 'file:') return 'file://';
    return `${u.protocol}//${u.host}`;
  } catch {
    return null;
  }
}

function safeUrl(url: string | undefined): string {
  if (!url) return '(none)';
  return url.length > 200 ? url.slice(0, 200) + '…' : url;
}
