/**
 * The fleet console's web server (node:http): the built page, a server-sent stream of the fleet (its first
 * frame carries the commands the page offers, from command-table.ts), the command endpoint, screenshots, the spend CSV, the visitor funnel (JSON and CSV) and the fleet-wide `/metrics`.
 *
 * It is an operator's tool that can hang up calls across the fleet, so:
 *  - it listens on 127.0.0.1 unless told otherwise, and checks the Host header (a DNS-rebinding page
 *    cannot reach it under another name);
 *  - every request needs the operator token: once in the address the console prints (`/?token=…`,
 *    exchanged for an HttpOnly, SameSite=Strict cookie and a redirect that drops it from the address
 *    bar), or as `Authorization: Bearer …` (Prometheus, scripts); compared in constant time;
 *  - a POST needs its own Origin and a JSON body (no form can send one);
 *  - the page runs under a strict CSP: only its own scripts, styles, images and connections.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { z } from 'zod';
import { silentLogger, type Logger } from '../../core/log.ts';
import { commandViews } from '../command-table.ts';
import type { ConsoleLink } from './link.ts';
import type { ConsoleMetrics } from './metrics.ts';
import { spendCsv, type FleetState } from './state.ts';
import type { CommandResponse, ConsoleFrame, LinkView } from './view.ts';
import { visitorsCsv, visitorsView } from './visitors.ts';

export const COOKIE = 'fleet_console';
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** How often changed rows are pushed to the page. */
export const PUSH_INTERVAL_MS = 250;
const MAX_BODY_BYTES = 256 * 1024;
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2' };

const requestSchema = z.strictObject({
  target: z.union([z.strictObject({ kiosks: z.array(z.string().max(64)).min(1).max(10_000) }), z.strictObject({ group: z.string().max(64) }), z.strictObject({ fleet: z.literal(true) })]),
  command: z.record(z.string(), z.unknown()),
});

export interface ConsoleServerOptions {
  state: FleetState;
  link: ConsoleLink;
  metrics: ConsoleMetrics;
  /** The built page (out/fleet-console). */
  pageDir: string;
  token: string;
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
  /** The address to open: it carries the token once. */
  readonly pageUrl: string;
  close(): Promise<void>;
}

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const { state, link, metrics } = options;
  const logger = options.logger ?? silentLogger;
  const bind = options.host ?? '127.0.0.1';
  const tokenHash = createHash('sha256').update(options.token).digest();
  const startedAt = new Date(options.now()).toISOString();
  const streams = new Set<ServerResponse>();
  let allowedHosts = new Set<string>();

  const tokenOk = (given: string | null | undefined) => given != null && timingSafeEqual(createHash('sha256').update(given).digest(), tokenHash);
  const authed = (req: IncomingMessage) => {
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && tokenOk(auth.slice(7).trim())) return true;
    const cookie = (req.headers.cookie ?? '')
      .split(';')
      .map((c) => c.trim().split('='))
      .find(([name]) => name === COOKIE);
    return tokenOk(cookie?.[1] ? decodeURIComponent(cookie[1]) : null);
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      logger.error('Fleet console: request failed', { error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'Internal error.');
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cache-Control', 'no-store');
    if (!allowedHosts.has((req.headers.host ?? '').toLowerCase())) return send(res, 421, 'text/plain; charset=utf-8', 'Wrong host name for the fleet console.');
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const path = url.pathname;

    if (path === '/favicon.ico') return void res.writeHead(204).end();
    if (req.method === 'GET' && path === '/' && url.searchParams.has('token')) {
      if (!tokenOk(url.searchParams.get('token'))) return send(res, 401, 'text/plain; charset=utf-8', 'This token is not the console\'s. Open the address the console printed.');
      res.setHeader('Set-Cookie', `${COOKIE}=${encodeURIComponent(options.token)}; HttpOnly; SameSite=Strict; Path=/`);
      res.writeHead(303, { Location: '/' });
      return void res.end();
    }
    if (!authed(req)) {
      return send(res, 401, 'text/plain; charset=utf-8', 'The fleet console needs its operator token: open the address it printed when it started (…/?token=…), or send "Authorization: Bearer <token>".');
    }
    if (req.method === 'POST') {
      const origin = req.headers.origin;
      if (origin !== undefined && !allowedHosts.has(origin.replace(/^https?:\/\//, '').toLowerCase())) return send(res, 403, 'text/plain; charset=utf-8', 'Cross-origin requests are refused.');
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return send(res, 415, 'text/plain; charset=utf-8', 'Send JSON (Content-Type: application/json).');
      if (path === '/api/command') return command(req, res);
      return send(res, 404, 'text/plain; charset=utf-8', 'Not found.');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'Method not allowed.');

    if (path === '/metrics') return send(res, 200, metrics.registry.contentType, await metrics.render());
    if (path === '/api/kiosks') return json(res, 200, { consoleStartedAt: startedAt, connected: link.connected, kiosks: state.rows() });
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
    if (path === '/api/stream') return stream(req, res);
    const shot = /^\/api\/screenshots\/(\d{1,10})\.png$/.exec(path);
    if (shot) {
      const found = state.screenshot(shot[1]!);
      return found ? send(res, 200, 'image/png', found.png) : send(res, 404, 'text/plain; charset=utf-8', 'That screenshot is no longer kept.');
    }
    return staticFile(path === '/' ? '/index.html' : path, res);
  }

  async function staticFile(path: string, res: ServerResponse): Promise<void> {
    const file = normalize(join(options.pageDir, decodeURIComponent(path)));
    if (!file.startsWith(options.pageDir + sep)) return send(res, 404, 'text/plain; charset=utf-8', 'Not found.');
    try {
      const body = await readFile(file);
      send(res, 200, TYPES[extname(file)] ?? 'application/octet-stream', body);
    } catch {
      send(res, 404, 'text/plain; charset=utf-8', path === '/index.html' ? 'The console page is not built: run `npm run build`.' : 'Not found.');
    }
  }

  async function command(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return json(res, 413, { ok: false, error: { code: 'invalid_request', message: `The command is larger than ${MAX_BODY_BYTES} bytes.` } });
      raw += chunk.toString('utf8');
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return json(res, 400, { ok: false, error: { code: 'invalid_request', message: 'The body is not JSON.' } });
    }
    const parsed = requestSchema.safeParse(body);
    if (!parsed.success) return json(res, 400, { ok: false, error: { code: 'invalid_request', message: `Invalid request at "${parsed.error.issues[0]!.path.join('.')}": ${parsed.error.issues[0]!.message}.` } });
    const result: CommandResponse = await link.send(parsed.data.target, parsed.data.command);
    // A refusal is an answer, not a failed request: the page shows its message.
    json(res, 200, result);
  }

  function stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    // The page's buttons come from the kiosks' own table of commands (plain data: no code goes to the page).
    const snapshot: ConsoleFrame = { type: 'snapshot', consoleStartedAt: startedAt, broker: options.brokerLabel, connected: link.connected, link: linkView(), kiosks: state.rows(), commands: commandViews() };
    res.write(`retry: 2000\nevent: fleet\ndata: ${JSON.stringify(snapshot)}\n\n`);
    streams.add(res);
    req.on('close', () => streams.delete(res));
  }

  const linkView = (): LinkView => {
    const h = link.health();
    return { lostAt: h.lostAt, droppedMessages: h.droppedMessages, notice: h.notice };
  };
  let lastConnected = link.connected;
  let lastLink = JSON.stringify(linkView());
  const pushTimer = setInterval(() => {
    const rows = state.takeChanged();
    const connected = link.connected;
    const linkNow = linkView();
    const linkText = JSON.stringify(linkNow);
    if (rows.length === 0 && connected === lastConnected && linkText === lastLink) return;
    lastConnected = connected;
    lastLink = linkText;
    const frame: ConsoleFrame = { type: 'rows', connected, link: linkNow, kiosks: rows };
    const text = `event: fleet\ndata: ${JSON.stringify(frame)}\n\n`;
    for (const s of streams) s.write(text);
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
    pageUrl: `${origin}/?token=${encodeURIComponent(options.token)}`,
    async close() {
      clearInterval(pushTimer);
      for (const s of streams) s.end();
      streams.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}
