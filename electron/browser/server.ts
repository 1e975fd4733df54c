/**
 * The browser mode's host: serves the built renderer on 127.0.0.1 with the app's CSP and headers, and
 * carries the contract over one WebSocket on the same origin (`{id, channel, arg}` → `{id, result}`, plus
 * the service's events). Every call goes through `KioskService.handle`, so the schemas and the staff-PIN
 * gate are the ones main uses.
 *
 * Who may drive the kiosk (another local page or process must not):
 *  - the server listens on 127.0.0.1 only, and answers only requests whose `Host` is that address and
 *    port (a DNS-rebound name is refused);
 *  - the socket's `Origin` must be this server's own origin;
 *  - the first frame must present the per-launch secret (compared in constant time); the page got it in
 *    the URL fragment, which browsers never send to a server, and the secret is never logged;
 *  - one page at a time: a second page is refused while one is connected;
 *  - a socket that has not said hello within `helloTimeoutMs` is closed, and at most a few may wait.
 * The API key never reaches the page: the service's results and events carry none (contract.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { API_SHAPE, type KioskEvent, type Result } from '../contract.ts';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import { KIOSK_SOCKET_PATH, SECRET_FRAGMENT_KEY, SOCKET_CLOSE, type HostFrame } from '../core/kiosk-api.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { mimeTypeFor, securityHeaders } from '../kiosk/page-headers.ts';
import { parsePageFrame } from './frames.ts';

/** The only address the browser mode listens on. */
export const LOOPBACK_HOST = '127.0.0.1';
/** A socket must present the secret this soon after it opens. */
export const HELLO_TIMEOUT_MS = 5_000;
/** Sockets that have not said hello yet, at most. */
export const MAX_PENDING_SOCKETS = 4;
/** The largest frame: the staff panel may send a picked picture as a data: URI (≤ 30 MB, contract.ts). */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024;

export interface KioskBackend {
  handle(channel: string, rawArg: unknown): Promise<Result<unknown>>;
  onEvent(listener: (event: KioskEvent) => void): () => void;
}

export interface BrowserHostOptions {
  service: KioskBackend;
  /** The built renderer (out/renderer). */
  rendererDir: string;
  /** 0 (default): a free port. */
  port?: number;
  /** Default: 32 random bytes, base64url. */
  secret?: string;
  clock?: Clock;
  logger?: Logger;
  /** A page presented the secret and is now the connected page. */
  onPageConnected?(): void;
  /** The connected page went away (closed, reloaded, crashed). */
  onPageGone?(): void;
}

export interface BrowserHost {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly port: number;
  /** The page's URL with the secret in its fragment. Give it to the browser only; never log it. */
  readonly pageUrl: string;
  /** Whether a page is connected now. */
  readonly connected: boolean;
  close(): Promise<void>;
}

export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export async function startBrowserHost(options: BrowserHostOptions): Promise<BrowserHost> {
  const { service, clock = systemClock, logger = silentLogger } = options;
  const rendererDir = resolve(options.rendererDir);
  const secret = options.secret ?? newSecret();
  const secretDigest = digest(secret);
  let origin = '';
  let hostHeader = '';
  let page: WebSocket | null = null;
  const pending = new Map<WebSocket, TimerHandle>();

  const http = createServer((req, res) => {
    void serveFile(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  async function serveFile(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.host !== hostHeader) return void res.writeHead(421, { 'content-type': 'text/plain' }).end('Misdirected request.\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    // Browsers ask for an icon the renderer does not have: no content, rather than a logged 404.
    if (new URL(req.url ?? '/', origin).pathname === '/favicon.ico') return void res.writeHead(204, securityHeaders()).end();
    const file = fileFor(req.url ?? '/', rendererDir);
    const info = file ? await stat(file).catch(() => null) : null;
    if (!file || !info?.isFile()) return void res.writeHead(404, { 'content-type': 'text/plain', ...securityHeaders() }).end('Not found.\n');
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': mimeTypeFor(file), 'cache-control': 'no-store', ...securityHeaders() });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: number, why: string) => {
      logger.warn('Browser mode: a socket was refused', { why });
      socket.end(`HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const path = new URL(req.url ?? '/', origin).pathname;
    if (path !== KIOSK_SOCKET_PATH) return refuse(400, 'not the kiosk socket path');
    if (req.headers.host !== hostHeader) return refuse(403, 'wrong Host');
    if (req.headers.origin !== origin) return refuse(403, 'wrong Origin');
    if (pending.size >= MAX_PENDING_SOCKETS) return refuse(403, 'too many sockets waiting');
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws));
  });

  function send(ws: WebSocket, frame: HostFrame<KioskEvent>): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  }

  function accept(ws: WebSocket): void {
    pending.set(
      ws,
      clock.setTimeout(() => {
        pending.delete(ws);
        ws.close(SOCKET_CLOSE.refused, 'No hello in time.');
      }, HELLO_TIMEOUT_MS),
    );
    let unsubscribe: (() => void) | null = null;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const parsed = isBinary ? ({ ok: false, message: 'Binary frames are not part of this protocol.' } as const) : parsePageFrame(rawText(data));
      if (!unsubscribe) {
        // Not yet this page's socket: only a hello with the secret makes it so.
        const timer = pending.get(ws);
        if (timer !== undefined) clock.clearTimeout(timer);
        pending.delete(ws);
        if (!parsed.ok || parsed.frame.type !== 'hello' || !timingSafeEqual(digest(parsed.frame.secret), secretDigest)) {
          logger.warn('Browser mode: a socket presented no valid secret');
          return ws.close(SOCKET_CLOSE.refused, 'Refused.');
        }
        if (page) {
          logger.warn('Browser mode: a second page was refused (one page at a time)');
          return ws.close(SOCKET_CLOSE.busy, 'Another page is connected.');
        }
        page = ws;
        unsubscribe = service.onEvent((event) => send(ws, { type: 'event', event }));
        send(ws, { type: 'welcome', shape: API_SHAPE });
        logger.info('Browser mode: the page is connected');
        options.onPageConnected?.();
        return;
      }
      if (!parsed.ok) return send(ws, { type: 'error', error: { code: 'invalid_request', message: parsed.message } });
      if (parsed.frame.type !== 'call') return send(ws, { type: 'error', error: { code: 'invalid_request', message: 'Already connected.' } });
      const { id, channel, arg } = parsed.frame;
      void service.handle(channel, arg).then(
        (result) => send(ws, { type: 'result', id, result }),
        // handle() never rejects (dispatch.ts); a bug there must still answer the call.
        (error: unknown) => send(ws, { type: 'result', id, result: { ok: false, error: { code: 'internal', message: String(error) } } }),
      );
    });
    ws.on('error', () => undefined);
    ws.on('close', () => {
      const timer = pending.get(ws);
      if (timer !== undefined) clock.clearTimeout(timer);
      pending.delete(ws);
      if (!unsubscribe) return;
      unsubscribe();
      if (page === ws) {
        page = null;
        logger.info('Browser mode: the page went away');
        options.onPageGone?.();
      }
    });
  }

  await new Promise<void>((ok, fail) => {
    http.once('error', fail);
    http.listen(options.port ?? 0, LOOPBACK_HOST, () => {
      http.off('error', fail);
      ok();
    });
  });
  const address = http.address();
  if (!address || typeof address === 'string') throw new Error('The browser mode server has no address.');
  hostHeader = `${LOOPBACK_HOST}:${address.port}`;
  origin = `http://${hostHeader}`;
  let closed: Promise<void> | null = null;

  return {
    origin,
    port: address.port,
    pageUrl: `${origin}/#${SECRET_FRAGMENT_KEY}=${encodeURIComponent(secret)}`,
    get connected() {
      return page !== null;
    },
    close() {
      closed ??= (async () => {
        for (const [ws, timer] of pending) {
          clock.clearTimeout(timer);
          ws.terminate();
        }
        pending.clear();
        for (const ws of wss.clients) ws.close(SOCKET_CLOSE.shutdown, 'The kiosk is shutting down.');
        wss.close();
        await new Promise<void>((ok) => {
          http.close(() => ok());
          http.closeAllConnections();
        });
        for (const ws of wss.clients) ws.terminate();
      })();
      return closed;
    },
  };
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

/** `/` → index.html; anything outside `root` (traversal, NUL, bad escapes) → null. */
export function fileFor(requestUrl: string, root: string): string | null {
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(requestUrl, 'http://host').pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0')) return null;
  if (pathname === '/' || pathname === '') pathname = '/index.html';
  const file = resolve(root, '.' + normalize(pathname));
  const rel = relative(root, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).includes('..')) return null;
  return join(root, rel);
}
