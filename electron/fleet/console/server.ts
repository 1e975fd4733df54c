/**
 * The fleet console's web server (node:http): the built page, a server-sent stream of the fleet (its first
 * frame carries the commands the page offers, from command-table.ts, and the latest commands sent), the
 * command endpoint, each command's answers as a stream, the kiosk list filtered and paged, screenshots,
 * the spend CSV, the visitor funnel (JSON and CSV) and the fleet-wide `/metrics`.
 *
 * It is an operator's tool that can hang up calls across the fleet, so:
 *  - it listens on 127.0.0.1 unless told otherwise, and checks the Host header (a DNS-rebinding page
 *    cannot reach it under another name);
 *  - the page's files are public (they hold no data); everything else needs an account (accounts.ts):
 *    its token as `Authorization: Bearer …` (the CLI, Prometheus, scripts), or a browser session made by
 *    signing in with it (sessions.ts: a cookie and a page key, neither of them the token);
 *  - a viewer account reads; only an operator sends (commander.ts), and the audit log says who did;
 *  - a request another site makes — another port on 127.0.0.1 included — is refused (Fetch Metadata),
 *    and every answer says it may not be framed or embedded elsewhere (frame-ancestors, X-Frame-Options,
 *    Cross-Origin-Resource-Policy);
 *  - a POST needs its own Origin and a JSON body (no form can send one);
 *  - the page runs under a strict CSP: only its own scripts, styles, images and connections.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { z } from 'zod';
import { silentLogger, type Logger } from '../../core/log.ts';
import { commandViews } from '../command-table.ts';
import type { Account } from './accounts.ts';
import type { CommandLog } from './command-log.ts';
import type { Commander } from './commander.ts';
import type { ConsoleLink } from './link.ts';
import type { ConsoleMetrics } from './metrics.ts';
import type { ConsoleSessions } from './sessions.ts';
import { spendCsv, type FleetState } from './state.ts';
import { kioskMatches, STATUS_FILTERS, type CommandFrame, type ConsoleFrame, type KioskFilter, type KioskPage, type LinkView, type StatusFilter } from './view.ts';
import { visitorsCsv, visitorsView } from './visitors.ts';

export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** How often changed rows are pushed to the page. */
export const PUSH_INTERVAL_MS = 250;
/** The latest commands the page's first frame carries. */
export const LOG_IN_SNAPSHOT = 50;
const MAX_BODY_BYTES = 256 * 1024;
const MAX_PAGE = 10_000;
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2' };
const TEXT = 'text/plain; charset=utf-8';
export const NEEDS_ACCOUNT = 'The fleet console needs an account: sign in on its page with your token, or send "Authorization: Bearer <token>".';

const requestSchema = z.strictObject({
  target: z.union([z.strictObject({ kiosks: z.array(z.string().max(64)).min(1).max(10_000) }), z.strictObject({ group: z.string().max(64) }), z.strictObject({ fleet: z.literal(true) })]),
  command: z.record(z.string(), z.unknown()),
  expiresInS: z.number().int().optional(),
  firstWave: z.number().int().optional(),
});
const signInSchema = z.strictObject({ token: z.string().min(1).max(200) });

export interface ConsoleServerOptions {
  state: FleetState;
  link: ConsoleLink;
  metrics: ConsoleMetrics;
  sessions: ConsoleSessions;
  commander: Commander;
  log: CommandLog;
  /** The built page (out/fleet-console). */
  pageDir: string;
  brokerLabel: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** More Host header values to accept (`console.example.com`, behind a reverse proxy). */
  allowedHosts?: string[];
  /** 0: a free port. */
  port?: number;
  now(): number;
  logger?: Logger;
}

export interface ConsoleServer {
  readonly origin: string;
  close(): Promise<void>;
}

/** A Host header naming this computer (where browsers take a Secure cookie over http). */
const LOOPBACK_HOST = /^(127(\.\d{1,3}){3}|localhost|\[::1\])(:\d+)?$/i;

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const { state, link, metrics, sessions, commander, log } = options;
  const logger = options.logger ?? silentLogger;
  const bind = options.host ?? '127.0.0.1';
  const startedAt = new Date(options.now()).toISOString();
  const streams = new Map<ServerResponse, Account>();
  const followers = new Set<() => void>();
  let allowedHosts = new Set<string>();

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      logger.error('Fleet console: request failed', { error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) send(res, 500, TEXT, 'Internal error.');
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cache-Control', 'no-store');
    if (!allowedHosts.has((req.headers.host ?? '').toLowerCase())) return send(res, 421, TEXT, 'Wrong host name for the fleet console.');
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const path = url.pathname;
    const isApi = path.startsWith('/api/') || path === '/metrics';

    // Fetch Metadata: a request made by another site's page (another port on this computer is "same-site")
    // is refused, but a link followed to the page itself is fine.
    const site = req.headers['sec-fetch-site'];
    if ((site === 'cross-site' || site === 'same-site') && !(req.method === 'GET' && req.headers['sec-fetch-mode'] === 'navigate' && !isApi)) {
      return send(res, 403, TEXT, 'Requests from another site (another port on this computer included) are refused.');
    }
    if (path === '/favicon.ico') return void res.writeHead(204).end();

    if (req.method === 'POST') {
      const origin = req.headers.origin;
      if (origin !== undefined && !allowedHosts.has(origin.replace(/^https?:\/\//, '').toLowerCase())) return send(res, 403, TEXT, 'Cross-origin requests are refused.');
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return send(res, 415, TEXT, 'Send JSON (Content-Type: application/json).');
      if (path === '/api/sign-in') return signIn(req, res);
      const who = sessions.who(req.headers);
      if (!who) return send(res, 401, TEXT, NEEDS_ACCOUNT);
      if (path === '/api/sign-out') {
        sessions.signOut(req.headers);
        res.setHeader('Set-Cookie', sessions.clearCookies(secureCookie(req)));
        return void res.writeHead(204).end();
      }
      if (path === '/api/command') return command(req, res, who);
      return send(res, 404, TEXT, 'Not found.');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, TEXT, 'Method not allowed.');
    if (!isApi) return staticFile(path === '/' ? '/index.html' : path, res);

    // Screenshots are shown as images, which carry no header: the cookie alone opens them, under a random name (state.ts).
    const shot = /^\/api\/screenshots\/([0-9a-f]{32})\.png$/.exec(path);
    if (shot) {
      if (!sessions.whoByCookie(req.headers)) return send(res, 401, TEXT, NEEDS_ACCOUNT);
      const found = state.screenshot(shot[1]!);
      return found ? send(res, 200, 'image/png', found.png) : send(res, 404, TEXT, 'That screenshot is no longer kept.');
    }
    const who = sessions.who(req.headers);
    if (!who) return send(res, 401, TEXT, NEEDS_ACCOUNT);

    if (path === '/metrics') return send(res, 200, metrics.registry.contentType, await metrics.render());
    if (path === '/api/me') return json(res, 200, who);
    if (path === '/api/kiosks') return kiosks(url, res);
    if (path === '/api/spend.csv') {
      res.setHeader('Content-Disposition', 'attachment; filename="fleet-spend.csv"');
      return send(res, 200, 'text/csv; charset=utf-8', spendCsv(state.spendRows()));
    }
    if (path === '/api/spend') return json(res, 200, { rows: state.spendRows() });
    if (path === '/api/visitors') return json(res, 200, visitorsView(state.funnels()));
    if (path === '/api/visitors.csv') {
      res.setHeader('Content-Disposition', 'attachment; filename="fleet-visitors.csv"');
      return send(res, 200, 'text/csv; charset=utf-8', visitorsCsv(visitorsView(state.funnels())));
    }
    if (path === '/api/stream') return stream(req, res, who);
    if (path === '/api/commands') {
      const limit = Number(url.searchParams.get('limit') ?? 50);
      return json(res, 200, { commands: log.recent(Number.isInteger(limit) && limit > 0 ? Math.min(limit, 1000) : 50) });
    }
    const one = /^\/api\/commands\/([A-Za-z0-9_.:-]{1,64})(\/stream)?$/.exec(path);
    if (one) {
      const found = log.get(one[1]!);
      if (!found) return json(res, 404, { ok: false, error: { code: 'not_found', message: `The console keeps no command "${one[1]}" (it keeps the latest ones).` } });
      return one[2] ? followCommand(req, res, one[1]!) : json(res, 200, found);
    }
    return send(res, 404, TEXT, 'Not found.');
  }

  async function readJson(req: IncomingMessage, res: ServerResponse): Promise<{ ok: true; body: unknown } | { ok: false }> {
    let raw = '';
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        json(res, 413, { ok: false, error: { code: 'invalid_request', message: `The request is larger than ${MAX_BODY_BYTES} bytes.` } });
        return { ok: false };
      }
      raw += chunk.toString('utf8');
    }
    try {
      return { ok: true, body: JSON.parse(raw) };
    } catch {
      json(res, 400, { ok: false, error: { code: 'invalid_request', message: 'The body is not JSON.' } });
      return { ok: false };
    }
  }

  async function signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const read = await readJson(req, res);
    if (!read.ok) return;
    const parsed = signInSchema.safeParse(read.body);
    const signed = parsed.success ? sessions.signIn(parsed.data.token) : null;
    if (!signed) return json(res, 401, { ok: false, error: { code: 'unauthorized', message: 'That token is not one of the console\'s accounts.' } });
    log.signedIn(signed.who.name, signed.who.role);
    res.setHeader('Set-Cookie', sessions.cookies(signed.sessionId, secureCookie(req)));
    json(res, 200, { ok: true, me: signed.who, key: signed.key });
  }

  async function command(req: IncomingMessage, res: ServerResponse, who: Account): Promise<void> {
    const read = await readJson(req, res);
    if (!read.ok) return;
    const parsed = requestSchema.safeParse(read.body);
    if (!parsed.success) return json(res, 400, { ok: false, error: { code: 'invalid_request', message: `Invalid request at "${parsed.error.issues[0]!.path.join('.')}": ${parsed.error.issues[0]!.message}.` } });
    const { expiresInS, firstWave, ...rest } = parsed.data;
    const result = await commander.send({ ...rest, ...(expiresInS !== undefined ? { expiresInS } : {}), ...(firstWave !== undefined ? { firstWave } : {}) }, who);
    // A refusal is an answer, not a failed request: the page shows its message. A viewer's is forbidden.
    json(res, !result.ok && result.error.code === 'forbidden' && who.role !== 'operator' ? 403 : 200, result);
  }

  function kiosks(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const status = q.get('status') ?? 'all';
    if (!(STATUS_FILTERS as readonly string[]).includes(status)) return json(res, 400, { ok: false, error: { code: 'invalid_request', message: `status must be one of ${STATUS_FILTERS.join(', ')} (got "${status}").` } });
    const offset = Number(q.get('offset') ?? 0);
    const limit = Number(q.get('limit') ?? MAX_PAGE);
    if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      return json(res, 400, { ok: false, error: { code: 'invalid_request', message: `offset must be 0 or more and limit 1 to ${MAX_PAGE}.` } });
    }
    const filter: KioskFilter = { status: status as StatusFilter, ...(q.get('group') ? { group: q.get('group')! } : {}), ...(q.get('search') ? { search: q.get('search')! } : {}) };
    const rows = state
      .rows()
      .filter((r) => kioskMatches(r, filter))
      .sort((a, b) => a.kioskId.localeCompare(b.kioskId));
    const page: KioskPage = { consoleStartedAt: startedAt, connected: link.connected, total: rows.length, offset, kiosks: rows.slice(offset, offset + limit) };
    json(res, 200, page);
  }

  async function staticFile(path: string, res: ServerResponse): Promise<void> {
    const file = normalize(join(options.pageDir, decodeURIComponent(path)));
    if (!file.startsWith(options.pageDir + sep)) return send(res, 404, TEXT, 'Not found.');
    try {
      const body = await readFile(file);
      send(res, 200, TYPES[extname(file)] ?? 'application/octet-stream', body);
    } catch {
      send(res, 404, TEXT, path === '/index.html' ? 'The console page is not built: run `npm run build`.' : 'Not found.');
    }
  }

  function stream(req: IncomingMessage, res: ServerResponse, who: Account): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    // The page's buttons come from the kiosks' own table of commands (plain data: no code goes to the page).
    const snapshot: ConsoleFrame = { type: 'snapshot', consoleStartedAt: startedAt, broker: options.brokerLabel, connected: link.connected, link: linkView(), me: who, kiosks: state.rows(), commands: commandViews(), log: log.recent(LOG_IN_SNAPSHOT) };
    res.write(`retry: 2000\nevent: fleet\ndata: ${JSON.stringify(snapshot)}\n\n`);
    streams.set(res, who);
    req.on('close', () => streams.delete(res));
  }

  /** One command's answers as they come, until every kiosk answered or expired (then the stream ends). */
  function followCommand(req: IncomingMessage, res: ServerResponse, id: string): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    const write = (frame: CommandFrame) => res.write(`event: command\ndata: ${JSON.stringify(frame)}\n\n`);
    const found = log.get(id)!;
    write({ type: 'record', command: found.command, answers: found.answers });
    if (found.command.state !== 'waiting') {
      write({ type: 'done', command: found.command });
      return void res.end();
    }
    const end = () => {
      stop();
      followers.delete(end);
      res.end();
    };
    const stop = log.follow(id, (frame) => {
      write(frame);
      if (frame.type === 'done') end();
    });
    followers.add(end);
    req.on('close', end);
  }

  const linkView = (): LinkView => {
    const h = link.health();
    return { lostAt: h.lostAt, droppedMessages: h.droppedMessages, notice: h.notice };
  };
  let lastConnected = link.connected;
  let lastLink = JSON.stringify(linkView());
  const pushTimer = setInterval(() => {
    const rows = state.takeChanged();
    const changedLog = log.takeChanged();
    const connected = link.connected;
    const linkNow = linkView();
    const linkText = JSON.stringify(linkNow);
    if (rows.length === 0 && changedLog.length === 0 && connected === lastConnected && linkText === lastLink) return;
    lastConnected = connected;
    lastLink = linkText;
    const frame: ConsoleFrame = { type: 'rows', connected, link: linkNow, kiosks: rows, log: changedLog };
    const text = `event: fleet\ndata: ${JSON.stringify(frame)}\n\n`;
    for (const s of streams.keys()) s.write(text);
  }, PUSH_INTERVAL_MS);
  pushTimer.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, bind, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = bind.includes(':') ? `[${bind}]` : bind;
  allowedHosts = new Set([`${shownHost}:${port}`, `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, ...(options.allowedHosts ?? [])].map((h) => h.toLowerCase()));
  const origin = `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${port}`;
  logger.info('Fleet console: serving', { origin });
  return {
    origin,
    async close() {
      clearInterval(pushTimer);
      for (const end of [...followers]) end();
      for (const s of streams.keys()) s.end();
      streams.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** Whether the browser takes a Secure (`__Host-`) cookie for this request: over https (a reverse proxy
 *  says so), or on 127.0.0.1 / localhost / [::1], which browsers treat as secure. */
function secureCookie(req: IncomingMessage): boolean {
  return req.headers['x-forwarded-proto'] === 'https' || LOOPBACK_HOST.test(req.headers.host ?? '');
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}
