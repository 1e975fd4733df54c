/**
 * The browser mode's host: serves the built renderer on 127.0.0.1 with the app's CSP and headers, and
 * carries the contract over one WebSocket on the same origin (`{id, channel, arg}` → `{id, result}`, plus
 * the kiosk's events). Every call goes through the channel registry's `dispatch` (kiosk/channels.ts), so
 * the schemas and the staff-PIN gate are the ones main uses.
 *
 * Who may drive the kiosk (another local page or process must not):
 *  - the server listens on 127.0.0.1 only, and answers only requests whose `Host` is that address and
 *    port (a DNS-rebound name is refused);
 *  - the page's session is an HttpOnly, SameSite=Strict cookie. The host's own browser gets it over its
 *    private DevTools pipe (window-watch.ts) and opens on `START_PATH`, a blank page with no secret that
 *    moves on to the kiosk once the cookie is there, so nothing on the browser's command line or in a file
 *    lets anyone in. Any other browser gets in with a one-time launch code (`/launch?code=…`, good once
 *    and for `LAUNCH_CODE_TTL_MS`), printed only when no window could open, so an address left in a
 *    terminal or a journal is spent or dead within a minute; once a page is connected, every code still
 *    unspent is dropped;
 *  - the socket is authenticated in its upgrade request (path, Host, Origin = this origin, the session
 *    cookie): nothing unauthenticated ever becomes a socket, so no frame is read, no slot is held and
 *    no buffer is filled before authentication;
 *  - one page at a time: a second page is refused while one is connected.
 * The API key never reaches the page: the service's results and events carry none (contract.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { API_SHAPE, type KioskEvent } from '../contract.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { KIOSK_SOCKET_PATH, LAUNCH_PATH, SOCKET_CLOSE, type HostFrame } from '../core/kiosk-api.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import type { ChannelRegistry } from '../kiosk/channels.ts';
import type { KioskEvents } from '../kiosk/events.ts';
import { mimeTypeFor, securityHeaders } from '../kiosk/page-headers.ts';
import { parsePageFrame } from './frames.ts';
import { INPUT_GUARD_SOURCE } from './input-guard.ts';
import { FIT_WINDOW_PATH, FIT_WINDOW_SOURCE } from './fit-window.ts';

/** The only address the browser mode listens on. */
export const LOOPBACK_HOST = '127.0.0.1';
/** A launch code is good once, and only this long after it was made: it is printed for a person at the
 *  terminal (who can ask for a new one). */
export const LAUNCH_CODE_TTL_MS = 60_000;
/** The blank page the host's browser opens first: it looks again every `START_RETRY_SECONDS` until the
 *  session cookie is there, then moves on to the kiosk. */
export const START_PATH = '/start';
export const START_RETRY_SECONDS = 0.5;
/** The input guard (input-guard.ts), a script of the host's that every page it serves loads first. */
export const GUARD_PATH = '/kiosk-guard.js';
/** Unused launch codes kept at most (the oldest goes first). */
export const MAX_LAUNCH_CODES = 8;
/** The largest frame of the authenticated page: the staff panel may send a picked picture as a data: URI
 *  (≤ 30 MB, contract.ts). Nobody else gets a socket at all. */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024;
/** Bounds on a request's headers and body, so idle or trickling connections cannot pile up. */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface BrowserHostOptions {
  /** The channel registry every call is dispatched through. */
  channels: Pick<ChannelRegistry, 'dispatch'>;
  /** The kiosk's events, forwarded to the connected page. */
  events: KioskEvents;
  /** The built renderer (out/renderer). */
  rendererDir: string;
  /** 0 (default): a free port. */
  port?: number;
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
  /** The blank start page's address (`START_PATH`): what a browser is opened on. */
  readonly startUrl: string;
  /** The page's session cookie (for the host's own browser, over its DevTools pipe; never printed). */
  readonly sessionCookie: { readonly name: string; readonly value: string };
  readonly port: number;
  /** A fresh one-time address (`/launch?code=…`) that lets one browser in; spent once used, dead after
   *  `LAUNCH_CODE_TTL_MS`. */
  launchUrl(): string;
  /** The session cookie's name (a cookie is not scoped by port, so the port is in the name). */
  readonly cookieName: string;
  /** Whether a page is connected now. */
  readonly connected: boolean;
  close(): Promise<void>;
}

function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The value of cookie `name` in a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export async function startBrowserHost(options: BrowserHostOptions): Promise<BrowserHost> {
  const { channels, events, clock = systemClock, logger = silentLogger } = options;
  const rendererDir = resolve(options.rendererDir);
  // The page's session: per launch of the host, only ever in an HttpOnly cookie (never printed or logged).
  const sessionToken = newToken();
  const sessionTokenDigest = digest(sessionToken);
  /** Unused launch codes: their digest → when they stop being good (clock ms). */
  const launchCodes = new Map<string, number>();
  let origin = '';
  let hostHeader = '';
  let cookieName = '';
  let page: WebSocket | null = null;

  const hasSession = (req: IncomingMessage): boolean => {
    const given = cookieValue(req.headers.cookie, cookieName);
    return given !== null && timingSafeEqual(digest(given), sessionTokenDigest);
  };

  /** Spend a launch code: true once for a code that is known and still good. */
  function spendCode(code: string | null): boolean {
    if (!code) return false;
    const key = digest(code).toString('hex');
    const until = launchCodes.get(key);
    launchCodes.delete(key);
    return until !== undefined && clock.now() < until;
  }

  const http = createServer((req, res) => {
    void serveFile(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  http.headersTimeout = REQUEST_TIMEOUT_MS;
  http.requestTimeout = REQUEST_TIMEOUT_MS;

  async function serveFile(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.host !== hostHeader) return void res.writeHead(421, { 'content-type': 'text/plain' }).end('Misdirected request.\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    const url = new URL(req.url ?? '/', origin);
    // Browsers ask for an icon the renderer does not have: no content, rather than a logged 404.
    if (url.pathname === '/favicon.ico') return void res.writeHead(204, securityHeaders()).end();
    if (url.pathname === GUARD_PATH) {
      return void res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store', ...securityHeaders() }).end(req.method === 'HEAD' ? undefined : INPUT_GUARD_SOURCE);
    }
    if (url.pathname === FIT_WINDOW_PATH) {
      return void res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store', ...securityHeaders() }).end(req.method === 'HEAD' ? undefined : FIT_WINDOW_SOURCE);
    }
    if (url.pathname === START_PATH) {
      // With the session: on to the kiosk (a same-origin redirect carries the Strict cookie).
      if (hasSession(req)) return void res.writeHead(303, { location: '/', 'cache-control': 'no-store', ...securityHeaders() }).end();
      return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...securityHeaders() }).end(req.method === 'HEAD' ? undefined : START_PAGE);
    }
    if (url.pathname === LAUNCH_PATH) {
      if (!spendCode(url.searchParams.get('code'))) {
        logger.warn('Browser mode: a launch code was refused (unknown, used or expired)');
        return void res.writeHead(403, { 'content-type': 'text/html; charset=utf-8', ...securityHeaders() }).end(NOT_LET_IN_PAGE);
      }
      // A page of ours that moves on to `/`, not a 303: the browser came here from its launch file (another
      // site), and a SameSite=Strict cookie is only sent on a navigation our own origin starts.
      return void res
        .writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'set-cookie': `${cookieName}=${sessionToken}; HttpOnly; SameSite=Strict; Path=/`,
          'cache-control': 'no-store',
          ...securityHeaders(),
        })
        .end(req.method === 'HEAD' ? undefined : ENTER_PAGE);
    }
    const file = fileFor(req.url ?? '/', rendererDir);
    // The page itself only with the session cookie: without one, say how to get in (its scripts are no secret).
    if (file && relative(rendererDir, file) === 'index.html' && !hasSession(req)) {
      return void res.writeHead(403, { 'content-type': 'text/html; charset=utf-8', ...securityHeaders() }).end(NOT_LET_IN_PAGE);
    }
    const info = file ? await stat(file).catch(() => null) : null;
    if (!file || !info?.isFile()) return void res.writeHead(404, { 'content-type': 'text/plain', ...securityHeaders() }).end('Not found.\n');
    const body = withGuard(await readFile(file), file);
    res.writeHead(200, { 'content-type': mimeTypeFor(file), 'cache-control': 'no-store', ...securityHeaders() });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: 400 | 401 | 403, why: string) => {
      logger.warn('Browser mode: a socket was refused', { why });
      const text = status === 400 ? 'Bad Request' : status === 401 ? 'Unauthorized' : 'Forbidden';
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    socket.on('error', () => undefined);
    const path = new URL(req.url ?? '/', origin).pathname;
    if (path !== KIOSK_SOCKET_PATH) return refuse(400, 'not the kiosk socket path');
    if (req.headers.host !== hostHeader) return refuse(403, 'wrong Host');
    if (req.headers.origin !== origin) return refuse(403, 'wrong Origin');
    if (!hasSession(req)) return refuse(401, 'no session cookie');
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws));
  });

  function send(ws: WebSocket, frame: HostFrame<KioskEvent>): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  }

  function accept(ws: WebSocket): void {
    ws.on('error', () => undefined);
    if (page) {
      logger.warn('Browser mode: a second page was refused (one page at a time)');
      return ws.close(SOCKET_CLOSE.busy, 'Another page is connected.');
    }
    page = ws;
    // The page is in: no other code stays good (one printed earlier, one for a browser that was slow).
    launchCodes.clear();
    const unsubscribe = events.onEvent((event) => send(ws, { type: 'event', event }));
    send(ws, { type: 'welcome', shape: API_SHAPE });
    logger.info('Browser mode: the page is connected');
    options.onPageConnected?.();
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const parsed = isBinary ? ({ ok: false, message: 'Binary frames are not part of this protocol.' } as const) : parsePageFrame(rawText(data));
      if (!parsed.ok) return send(ws, { type: 'error', error: { code: 'invalid_request', message: parsed.message } });
      const { id, channel, arg } = parsed.frame;
      void channels.dispatch(channel, arg).then(
        (result) => send(ws, { type: 'result', id, result }),
        // dispatch() never rejects (kiosk/channels.ts); a bug there must still answer the call.
        (error: unknown) => send(ws, { type: 'result', id, result: { ok: false, error: { code: 'internal', message: String(error) } } }),
      );
    });
    ws.on('close', () => {
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
  cookieName = `avatar-kiosk-${address.port}`;
  let closed: Promise<void> | null = null;

  return {
    origin,
    startUrl: `${origin}${START_PATH}`,
    sessionCookie: { name: cookieName, value: sessionToken },
    port: address.port,
    cookieName,
    launchUrl() {
      const code = newToken();
      launchCodes.set(digest(code).toString('hex'), clock.now() + LAUNCH_CODE_TTL_MS);
      while (launchCodes.size > MAX_LAUNCH_CODES) launchCodes.delete(launchCodes.keys().next().value!);
      return `${origin}${LAUNCH_PATH}?code=${code}`;
    },
    get connected() {
      return page !== null;
    },
    close() {
      closed ??= (async () => {
        launchCodes.clear();
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

/** The script tag of the input guard, first in the head of every page the host serves. */
const GUARD_TAG = `<script src="${GUARD_PATH}"></script>`;
/** The app window's fit (fit-window.ts): it does nothing without its `#fit=` fragment (a kiosk window, Electron). */
const FIT_TAG = `<script src="${FIT_WINDOW_PATH}"></script>`;

/** The renderer's pages with the guard's script tag (and the window fit's) first in their head (after the doctype when there is
 *  no head tag: before it, the page would render in quirks mode); other files as they are. */
export function withGuard(body: Buffer, file: string): Buffer {
  if (!file.endsWith('.html')) return body;
  const html = body.toString('utf8');
  const at = /<head[^>]*>/i.exec(html) ?? /^\s*<!doctype[^>]*>/i.exec(html);
  const cut = at ? at.index + at[0].length : 0;
  return Buffer.from(`${html.slice(0, cut)}${GUARD_TAG}${FIT_TAG}${html.slice(cut)}`, 'utf8');
}

/** The host's browser's first page: blank until the session cookie is there (the kiosk shows next). */
const START_PAGE = `<!doctype html><meta charset="utf-8">${GUARD_TAG}${FIT_TAG}<meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="${START_RETRY_SECONDS};url=${START_PATH}"><title>Avatar Kiosk</title>\n`;

/** What a browser that was just let in gets: on to the kiosk's page. */
const ENTER_PAGE = `<!doctype html><meta charset="utf-8">${GUARD_TAG}<meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=/"><title>Avatar Kiosk</title>\n`;

/** What a browser without the session sees: how to get in. */
const NOT_LET_IN_PAGE =
  `<!doctype html><meta charset="utf-8">${GUARD_TAG}<title>Avatar Kiosk</title><h1>This address does not open the kiosk</h1>` +
  '<p>A kiosk address works once, within a minute. Ask the kiosk for a new one (press Enter where it runs), or stop it and start it again.</p>\n';

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
