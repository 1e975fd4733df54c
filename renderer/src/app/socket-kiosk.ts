/**
 * Browser mode (no preload, so no `window.kiosk`): the same `KioskApi`, carried over one WebSocket to the
 * host that served this page (electron/browser/server.ts). The host sends the contract's shape and the
 * API is built with the contract's own builder, so no channel is listed here.
 *
 * The page holds no secret: the host let this browser in with a one-time launch code and set an HttpOnly
 * session cookie, which the browser sends with the socket's upgrade request (and again after a reload).
 */
import type { KioskApi, KioskEvent, Result } from '../../../electron/contract.ts';
import { buildKioskApi, KIOSK_SOCKET_PATH, SOCKET_CLOSE, type ApiShape, type HostFrame, type PageFrame } from '../../../electron/core/kiosk-api.ts';

/** How long the page waits for the host's welcome. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** A reloaded page may reach the host before it has noticed the old page left: try again a few times. */
export const BUSY_RETRIES = 5;
export const BUSY_RETRY_DELAY_MS = 300;

type PageWindow = Pick<Window, 'location'>;

const gone = (message: string): Result<never> => ({ ok: false, error: { code: 'network', message } });

type Attempt = { api: KioskApi } | { busy: true } | null;

function attempt(url: string): Promise<Attempt> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url);
    const pending = new Map<number, (result: Result<unknown>) => void>();
    const listeners = new Set<(event: KioskEvent) => void>();
    let nextId = 1;
    let closedMessage: string | null = null;
    let settled = false;
    const settle = (value: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      socket.close();
      settle(null);
    }, CONNECT_TIMEOUT_MS);

    const send = (frame: PageFrame) => socket.send(JSON.stringify(frame));
    const invoke = (channel: string, arg?: unknown): Promise<Result<unknown>> => {
      if (closedMessage !== null || socket.readyState !== WebSocket.OPEN) return Promise.resolve(gone(closedMessage ?? 'The kiosk host is not connected.'));
      const id = nextId++;
      return new Promise((done) => {
        pending.set(id, done);
        send(arg === undefined ? { type: 'call', id, channel } : { type: 'call', id, channel, arg });
      });
    };
    const onEvent = (listener: (event: KioskEvent) => void) => {
      if (typeof listener !== 'function') return () => {};
      listeners.add(listener);
      return () => void listeners.delete(listener);
    };

    socket.addEventListener('message', (message) => {
      let frame: HostFrame<KioskEvent>;
      try {
        frame = JSON.parse(String(message.data)) as HostFrame<KioskEvent>;
      } catch {
        return;
      }
      if (frame.type === 'welcome') {
        settle({ api: buildKioskApi<KioskApi, KioskEvent>(frame.shape as ApiShape, invoke, onEvent) });
      } else if (frame.type === 'result') {
        const done = pending.get(frame.id);
        pending.delete(frame.id);
        done?.(frame.result as Result<unknown>);
      } else if (frame.type === 'event') {
        for (const listener of [...listeners]) {
          try {
            listener(frame.event);
          } catch (error) {
            console.error(error);
          }
        }
      } else if (frame.type === 'error') {
        console.error(`Kiosk host: ${frame.error.message}`);
      }
    });
    socket.addEventListener('close', (event) => {
      closedMessage = event.code === SOCKET_CLOSE.shutdown ? 'The kiosk is shutting down.' : 'The connection to the kiosk host was lost.';
      for (const done of pending.values()) done(gone(closedMessage));
      pending.clear();
      settle(event.code === SOCKET_CLOSE.busy ? { busy: true } : null);
    });
  });
}

/**
 * Connect to the host that served this page and build the `KioskApi` over the socket; null when the host
 * refuses (the app then shows that the kiosk cannot start).
 */
export async function connectSocketKiosk(win: PageWindow = window): Promise<KioskApi | null> {
  const url = `${win.location.protocol === 'https:' ? 'wss:' : 'ws:'}//${win.location.host}${KIOSK_SOCKET_PATH}`;
  for (let i = 0; i <= BUSY_RETRIES; i++) {
    const result = await attempt(url);
    if (result && 'api' in result) return result.api;
    if (!result) return null;
    await new Promise((r) => setTimeout(r, BUSY_RETRY_DELAY_MS));
  }
  return null;
}
