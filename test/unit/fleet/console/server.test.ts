/**
 * The fleet console's web server in-process on 127.0.0.1, with a scripted broker link and a real
 * FleetState: who gets in (token, cookie, Host, Origin), the exact answers (status, headers, bodies),
 * the command endpoint's checks, the page's files, screenshots, CSV, /metrics and the pushed stream.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { commandViews } from '../../../../electron/fleet/command-table.ts';
import type { ConsoleLink, SendOptions } from '../../../../electron/fleet/console/link.ts';
import type { LinkHealth } from '../../../../electron/fleet/console/link-health.ts';
import { createConsoleMetrics } from '../../../../electron/fleet/console/metrics.ts';
import { accountsFromTokens } from '../../../../electron/fleet/console/accounts.ts';
import { openCommandLog } from '../../../../electron/fleet/console/command-log.ts';
import { createCommander } from '../../../../electron/fleet/console/commander.ts';
import { NEEDS_ACCOUNT, PUSH_INTERVAL_MS, startConsoleServer, type ConsoleServer, type ConsoleServerOptions } from '../../../../electron/fleet/console/server.ts';
import { consoleSessions, KEY_HEADER, PLAIN_COOKIE, SECURE_COOKIE } from '../../../../electron/fleet/console/sessions.ts';
import { FleetState } from '../../../../electron/fleet/console/state.ts';
import type { CommandResponse, CommandTarget } from '../../../../electron/fleet/console/view.ts';
import { PNG_1x1 } from '../../../helpers/fleet-payloads.ts';
import { httpRequest, type Reply } from '../../../helpers/http-request.ts';
import { recordingLogger } from '../../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';
import { accepts, freePort } from '../../../../electron/fleet/console/demo-broker.ts';
import { until } from '../../../helpers/until.ts';

const T0 = Date.parse('2026-11-24T10:00:00Z');
/** Needs escaping in an address and a cookie. */
const TOKEN = 'op tok+en/=1';
/** A read-only viewer's token. */
const VIEWER_TOKEN = 'viewer-token-0123456789';
const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const NEEDS_TOKEN = NEEDS_ACCOUNT;
const SENT: CommandResponse = { ok: true, id: 'c-1', expected: ['k-1'], expiresAt: '2026-11-24T10:02:00.000Z' };

/** The broker link as the server sees it: connected or not, and each command it was asked to send. */
class ScriptedLink implements ConsoleLink {
  connected = true;
  sent: Array<{ target: CommandTarget; command: Record<string, unknown> }> = [];
  answer: () => Promise<CommandResponse> = () => Promise.resolve(SENT);
  ready(): Promise<void> {
    return Promise.resolve();
  }
  async send(target: CommandTarget, command: Record<string, unknown>, options?: SendOptions): Promise<CommandResponse> {
    this.sent.push({ target, command });
    const res = await this.answer();
    // As the real link: whoever counts answers hears of a command it is about to publish.
    if (res.ok) options?.onSending?.({ id: res.id, expected: res.expected, expiresAtMs: Date.parse(res.expiresAt) });
    return res;
  }
  onConnectionChange(): () => void {
    return () => undefined;
  }
  /** What health() says besides `connected`. */
  lostAt: string | null = null;
  droppedMessages: number | null = null;
  health(): LinkHealth {
    return { broker: 'mqtt://broker.test:1883', connected: this.connected, lostAt: this.lostAt, notice: null, droppedMessages: this.droppedMessages, lastMessageAtMs: null, takeovers: 0, sessionsLost: 0 };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const status = (kioskId: string) => JSON.stringify({ online: true, kioskId, group: 'lobby', version: '1.2.3', mode: 'direct', phase: 'idle', cast: ['ava'], open: true, today: { sessions: 0, credits: 0 }, queued: 0 });
const call = (id: string) => JSON.stringify({ id, kioskId: 'k-1', record: { kind: 'session', end_at: '2026-11-24T09:59:00Z', end_reason: 'user_end', credits_cost: 2.5, avatar: 'ava' } });

const newRoot = tempDirsRemovedAfterEach('ak-console-server-');
const open: ConsoleServer[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

interface Rig {
  server: ConsoleServer;
  state: FleetState;
  link: ScriptedLink;
  logger: ReturnType<typeof recordingLogger>;
  root: string;
  pageDir: string;
  /** The Host header the server accepts, and the bearer token. */
  auth: Record<string, string>;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, body: string | Buffer, headers?: Record<string, string>): Promise<Reply>;
}

async function rig(options: Partial<ConsoleServerOptions> & { page?: boolean } = {}): Promise<Rig> {
  const root = newRoot();
  const pageDir = join(root, 'page');
  mkdirSync(pageDir);
  if (options.page !== false) writeFileSync(join(pageDir, 'index.html'), '<!doctype html><title>console</title>');
  const state = options.state ?? new FleetState({ now: () => T0 });
  const link = new ScriptedLink();
  const logger = recordingLogger();
  const accounts = accountsFromTokens([
    { name: 'ops', role: 'operator', token: TOKEN },
    { name: 'wall', role: 'viewer', token: VIEWER_TOKEN },
  ]);
  const log = openCommandLog({ clock: { now: () => T0, setTimeout: () => 0 as never, clearTimeout: () => undefined }, logger });
  const commander = createCommander({ link, state, log, now: () => T0, logger });
  const server = await startConsoleServer({ state, link, metrics: createConsoleMetrics(state, () => link.connected), sessions: consoleSessions(accounts, () => T0), commander, log, pageDir, brokerLabel: 'mqtt://broker.test:1883', now: () => T0, logger, ...options });
  open.push(server);
  const auth = { host: new URL(server.origin).host, authorization: `Bearer ${TOKEN}` };
  return {
    server,
    state,
    link,
    logger,
    root,
    pageDir,
    auth,
    get: (path, headers = auth) => httpRequest(server.origin, path, { headers }),
    post: (path, body, headers = {}) => httpRequest(server.origin, path, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', ...headers }, body }),
  };
}

/** The status, the type and the body of a plain-text answer. */
const said = (r: Reply) => ({ status: r.status, type: r.headers['content-type'], body: r.body });
const text = (status: number, body: string) => ({ status, type: TEXT, body });

describe('fleet console server: who gets in', () => {
  it('sends the strict headers on every answer, a refusal included', async () => {
    const { get, auth } = await rig();
    for (const reply of [await get('/'), await get('/api/kiosks', { host: auth.host! })]) {
      assert.equal(reply.headers['content-security-policy'], CSP);
      assert.equal(reply.headers['x-content-type-options'], 'nosniff');
      assert.equal(reply.headers['referrer-policy'], 'no-referrer');
      assert.equal(reply.headers['x-frame-options'], 'DENY');
      assert.equal(reply.headers['cache-control'], 'no-store');
    }
  });

  it('refuses a request without the token, or with a wrong one, saying how to get in (Content-Length in bytes)', async () => {
    const { get, auth } = await rig();
    const none = await get('/api/kiosks', { host: auth.host! });
    assert.deepEqual(said(none), text(401, NEEDS_TOKEN));
    assert.equal(none.headers['content-length'], String(Buffer.byteLength(NEEDS_TOKEN)));
    assert.deepEqual(said(await get('/api/kiosks', { host: auth.host!, authorization: 'Bearer not-the-token' })), text(401, NEEDS_TOKEN));
    assert.deepEqual(said(await get('/api/kiosks', { host: auth.host!, authorization: `Basic ${TOKEN}` })), text(401, NEEDS_TOKEN));
    assert.deepEqual(said(await get('/api/kiosks', { host: auth.host!, authorization: `Token: ${TOKEN}` })), text(401, NEEDS_TOKEN), 'seven characters, but not "Bearer "');
    assert.deepEqual(said(await get('/api/kiosks', { host: auth.host!, cookie: `other=1; ${PLAIN_COOKIE}=` })), text(401, NEEDS_TOKEN));
    assert.deepEqual(said(await get('/api/kiosks', { host: auth.host!, cookie: `${PLAIN_COOKIE}=wrong` })), text(401, NEEDS_TOKEN));
    assert.deepEqual(said(await get(`/api/spend?token=${encodeURIComponent(TOKEN)}`, { host: auth.host! })), text(401, NEEDS_TOKEN), 'a token in the address counts for nothing');
  });

  it('takes the bearer token with spaces around it', async () => {
    const { get, auth } = await rig();
    assert.equal((await get('/api/spend', { host: auth.host!, authorization: `Bearer   ${TOKEN}  ` })).status, 200);
  });

  /** Sign in on `host` with `token`: the reply, the session cookie's value and the page key. */
  const signIn = async (r: Rig, token: string, host = r.auth.host!) => {
    const reply = await r.post('/api/sign-in', JSON.stringify({ token }), { host, authorization: '' });
    const cookie = (reply.headers['set-cookie'] as string[] | undefined)?.[0] ?? '';
    return { reply, cookie, id: /^[^=]+=([^;]+)/.exec(cookie)?.[1] ?? '', key: reply.status === 200 ? (JSON.parse(reply.body) as { key: string }).key : '' };
  };

  it('signs in with a token: a session cookie that is not the token (HttpOnly, SameSite=Strict, __Host- on 127.0.0.1) and a page key', async () => {
    const r = await rig();
    const { reply, cookie, id, key } = await signIn(r, TOKEN);
    assert.equal(reply.status, 200);
    assert.deepEqual(JSON.parse(reply.body), { ok: true, me: { name: 'ops', role: 'operator' }, key });
    assert.equal(cookie, `${SECURE_COOKIE}=${id}; Secure; HttpOnly; SameSite=Strict; Path=/`);
    assert.ok(!cookie.includes(TOKEN) && !cookie.includes(encodeURIComponent(TOKEN)), 'the cookie is not the token');
    assert.match(id, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(key, id);
    // Cookie and key together open the API; the cookie alone does not (another server on 127.0.0.1 gets the
    // cookie, never the key), and neither is a bearer token.
    const both = await r.get('/api/me', { host: r.auth.host!, cookie: `${SECURE_COOKIE}=${id}`, [KEY_HEADER]: key });
    assert.deepEqual({ status: both.status, body: JSON.parse(both.body) as unknown }, { status: 200, body: { name: 'ops', role: 'operator' } });
    const tries: Array<Record<string, string>> = [{ cookie: `${SECURE_COOKIE}=${id}` }, { authorization: `Bearer ${id}` }, { authorization: `Bearer ${key}` }, { cookie: `${SECURE_COOKIE}=${id}`, [KEY_HEADER]: 'wrong' }, { [KEY_HEADER]: key }];
    for (const headers of tries) {
      assert.deepEqual(said(await r.get('/api/kiosks', { host: r.auth.host!, ...headers })), text(401, NEEDS_TOKEN), JSON.stringify(headers));
    }
  });

  it('takes a plain cookie under a host name that is not this computer (no Secure cookie over http there), and refuses a wrong token', async () => {
    const r = await rig({ allowedHosts: ['console.example.com'] });
    const plain = await signIn(r, TOKEN, 'console.example.com');
    assert.equal(plain.cookie, `${PLAIN_COOKIE}=${plain.id}; HttpOnly; SameSite=Strict; Path=/`);
    const wrong = await signIn(r, 'not-a-token');
    assert.deepEqual({ status: wrong.reply.status, cookie: wrong.cookie, body: JSON.parse(wrong.reply.body) as unknown }, { status: 401, cookie: '', body: { ok: false, error: { code: 'unauthorized', message: "That token is not one of the console's accounts." } } });
  });

  it('signs out: the session ends, and the cookie is cleared', async () => {
    const r = await rig();
    const { id, key } = await signIn(r, TOKEN);
    const headers = { host: r.auth.host!, cookie: `${SECURE_COOKIE}=${id}`, [KEY_HEADER]: key, authorization: '' };
    const out = await r.post('/api/sign-out', '{}', headers);
    assert.deepEqual({ status: out.status, cookie: out.headers['set-cookie'] }, { status: 204, cookie: [`${SECURE_COOKIE}=; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`] });
    assert.equal((await r.get('/api/me', headers)).status, 401);
  });

  it('a viewer sees but cannot send (403, nothing sent); an operator can', async () => {
    const r = await rig();
    assert.equal((await r.get('/api/kiosks', { host: r.auth.host!, authorization: `Bearer ${VIEWER_TOKEN}` })).status, 200);
    const refused = await r.post('/api/command', JSON.stringify({ target: { kiosks: ['k-1'] }, command: { cmd: 'ping' } }), { authorization: `Bearer ${VIEWER_TOKEN}` });
    assert.equal(refused.status, 403);
    assert.deepEqual(JSON.parse(refused.body), { ok: false, error: { code: 'forbidden', message: '"wall" is a read-only account (viewer): it cannot send commands. An operator account can.' } });
    assert.deepEqual(r.link.sent, []);
    const sent = await r.post('/api/command', JSON.stringify({ target: { kiosks: ['k-1'] }, command: { cmd: 'ping' } }));
    assert.equal(sent.status, 200);
    assert.equal(r.link.sent.length, 1);
  });

  it('refuses a request another site makes (another port on 127.0.0.1 is "same-site"), and every answer refuses embedding', async () => {
    const r = await rig();
    for (const site of ['same-site', 'cross-site']) {
      const api = await r.get('/api/kiosks', { ...r.auth, 'sec-fetch-site': site, 'sec-fetch-mode': 'cors' });
      assert.equal(api.status, 403, site);
      assert.equal((await r.get('/api/screenshots/0123456789abcdef0123456789abcdef.png', { ...r.auth, 'sec-fetch-site': site, 'sec-fetch-dest': 'image', 'sec-fetch-mode': 'no-cors' })).status, 403, `${site} image`);
    }
    const shot = await r.get('/api/screenshots/0123456789abcdef0123456789abcdef.png');
    assert.deepEqual([shot.headers['x-frame-options'], shot.headers['cross-origin-resource-policy'], /frame-ancestors 'none'/.test(String(shot.headers['content-security-policy']))], ['DENY', 'same-origin', true]);
  });

  it('answers the favicon with 204 before asking for the token', async () => {
    const { get, auth } = await rig();
    const icon = await get('/favicon.ico', { host: auth.host! });
    assert.deepEqual({ status: icon.status, body: icon.body, csp: icon.headers['content-security-policy'] }, { status: 204, body: '', csp: CSP });
  });

  it('answers only under its own host names (any case) and those it was given: 421 otherwise, even with the token', async () => {
    const { server, get, auth } = await rig({ allowedHosts: ['Console.Example.COM'] });
    const port = new URL(server.origin).port;
    for (const host of [`127.0.0.1:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, 'console.example.com'])
      assert.equal((await get('/api/spend', { ...auth, host })).status, 200, host);
    for (const host of [`evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`, 'localhost']) assert.deepEqual(said(await get('/api/spend', { ...auth, host })), text(421, 'Wrong host name for the fleet console.'), host);
  });

  it('takes no other host name when given none', async () => {
    const { get, auth } = await rig();
    for (const host of ['fleet.venue.example', 'console.example.com']) assert.deepEqual(said(await get('/api/spend', { ...auth, host })), text(421, 'Wrong host name for the fleet console.'), host);
  });

  it('refuses a request with no Host header at all (HTTP/1.0), whatever host names it was given', async () => {
    const { server } = await rig({ allowedHosts: ['console.example.com'] });
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server.origin).port), '127.0.0.1', () => socket.end('GET /favicon.ico HTTP/1.0\r\n\r\n'));
      let got = '';
      socket.on('data', (d: Buffer) => (got += d.toString()));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 421 Misdirected Request\r\n/);
    assert.match(answer, /\r\n\r\nWrong host name for the fleet console\.$/);
  });

  it('binds where told: [::1] shown in brackets, 0.0.0.0 opened as 127.0.0.1 and its own name accepted; says where it serves', async () => {
    const v6 = await rig({ host: '::1' });
    assert.match(v6.server.origin, /^http:\/\/\[::1\]:\d+$/);
    assert.equal((await v6.get('/api/spend')).status, 200);
    const any = await rig({ host: '0.0.0.0' });
    const port = new URL(any.server.origin).port;
    assert.equal(any.server.origin, `http://127.0.0.1:${port}`);
    assert.equal((await any.get('/api/spend', { ...any.auth, host: `0.0.0.0:${port}` })).status, 200);
    assert.deepEqual(any.logger.lines, [{ level: 'info', message: 'Fleet console: serving', data: { origin: any.server.origin } }]);
  });

  it('listens on the port it is given, and fails to start when that port is taken', async () => {
    const port = await freePort();
    const first = await rig({ port });
    assert.equal(first.server.origin, `http://127.0.0.1:${port}`);
    await assert.rejects(rig({ port }), { code: 'EADDRINUSE' });
  });
});

describe('fleet console server: POST /api/command', () => {
  const body = (target: unknown, command: unknown = { cmd: 'ping' }) => JSON.stringify({ target, command });

  it('hands a valid command to the link as given and answers what the link says, a refusal included, with 200', async () => {
    const { post, link } = await rig();
    const sent = await post('/api/command', body({ kiosks: ['k-1', 'k-2'] }, { cmd: 'apply', settings: { cast: ['ava'] } }));
    assert.deepEqual({ status: sent.status, type: sent.headers['content-type'], body: JSON.parse(sent.body) as unknown }, { status: 200, type: JSON_TYPE, body: SENT });
    link.answer = () => Promise.resolve({ ok: false, error: { code: 'network', message: 'not connected' } });
    const refused = await post('/api/command', body({ group: 'lobby' }), { 'content-type': 'application/json; charset=utf-8' });
    assert.deepEqual({ status: refused.status, body: refused.body }, { status: 200, body: '{"ok":false,"error":{"code":"network","message":"not connected"}}' });
    await post('/api/command', body({ fleet: true }));
    assert.deepEqual(link.sent, [
      { target: { kiosks: ['k-1', 'k-2'] }, command: { cmd: 'apply', settings: { cast: ['ava'] } } },
      { target: { group: 'lobby' }, command: { cmd: 'ping' } },
      { target: { fleet: true }, command: { cmd: 'ping' } },
    ]);
  });

  const invalid = (message: string) => ({ status: 400, body: { ok: false, error: { code: 'invalid_request', message } } });
  const answer = (r: Reply) => ({ status: r.status, body: JSON.parse(r.body) as unknown });

  it('refuses a body that is not JSON, or not a command request, naming the place', async () => {
    const { post, link } = await rig();
    assert.deepEqual(answer(await post('/api/command', '{"target":')), invalid('The body is not JSON.'));
    assert.deepEqual(answer(await post('/api/command', body({ kiosks: ['x'.repeat(65)] }))), invalid('Invalid request at "target.kiosks.0": Too big: expected string to have <=64 characters.'));
    assert.deepEqual(answer(await post('/api/command', body({ kiosks: ['x'.repeat(64)] }, {}))).status, 200);
    assert.deepEqual(answer(await post('/api/command', body({ kiosks: [] }))), invalid('Invalid request at "target.kiosks": Too small: expected array to have >=1 items.'));
    assert.deepEqual(answer(await post('/api/command', body({ group: 'g'.repeat(65) }))), invalid('Invalid request at "target.group": Too big: expected string to have <=64 characters.'));
    assert.deepEqual(answer(await post('/api/command', body({ fleet: false }))), invalid('Invalid request at "target": Invalid input.'));
    assert.deepEqual(answer(await post('/api/command', body({ fleet: true, group: 'lobby' }))), invalid('Invalid request at "target": Invalid input.'));
    assert.deepEqual(answer(await post('/api/command', JSON.stringify({ target: { fleet: true } }))), invalid('Invalid request at "command": Invalid input: expected record, received undefined.'));
    assert.deepEqual(answer(await post('/api/command', JSON.stringify({ target: { fleet: true }, command: {}, extra: 1 }))), invalid('Invalid request at "": Unrecognized key: "extra".'));
    assert.equal(link.sent.length, 1);
  });

  it('takes a body of exactly 256 KiB, refuses one byte more (413)', async () => {
    const { post, link } = await rig();
    const padded = (bytes: number) => {
      const base = body({ fleet: true }, { cmd: 'ping', pad: '' });
      return base.replace('"pad":""', `"pad":"${'x'.repeat(bytes - base.length)}"`);
    };
    assert.equal((await post('/api/command', padded(256 * 1024))).status, 200);
    assert.deepEqual(answer(await post('/api/command', padded(256 * 1024 + 1))), { status: 413, body: { ok: false, error: { code: 'invalid_request', message: 'The request is larger than 262144 bytes.' } } });
    assert.equal(link.sent.length, 1);
  });

  it('needs its own Origin (when one is sent) and a JSON content type; another path is 404', async () => {
    const { server, post, link } = await rig({ allowedHosts: ['a'] });
    const port = new URL(server.origin).port;
    const ok = body({ fleet: true });
    assert.equal((await post('/api/command', ok, { origin: `http://127.0.0.1:${port}` })).status, 200);
    assert.equal((await post('/api/command', ok, { origin: `https://LOCALHOST:${port}` })).status, 200);
    for (const origin of ['http://evil.example', `http://127.0.0.1:${port}.evil`, 'null', 'ahttp://'])
      assert.deepEqual(said(await post('/api/command', ok, { origin })), text(403, 'Cross-origin requests are refused.'), origin);
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/jsonx', 'text/application/json'])
      assert.deepEqual(said(await post('/api/command', ok, { 'content-type': type })), text(415, 'Send JSON (Content-Type: application/json).'), type);
    const untyped = await httpRequest(server.origin, '/api/command', { method: 'POST', headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}` }, body: ok });
    assert.deepEqual(said(untyped), text(415, 'Send JSON (Content-Type: application/json).'));
    assert.deepEqual(said(await post('/api/commands', ok)), text(404, 'Not found.'));
    assert.equal(link.sent.length, 2);
  });

  it('answers 500 and logs why when the link fails (an Error or anything else thrown)', async () => {
    const { post, link, logger } = await rig();
    link.answer = () => Promise.reject(new Error('socket gone'));
    assert.deepEqual(said(await post('/api/command', body({ fleet: true }))), text(500, 'Internal error.'));
    link.answer = () => Promise.reject('plain refusal');
    assert.deepEqual(said(await post('/api/command', body({ fleet: true }))), text(500, 'Internal error.'));
    assert.deepEqual(logger.lines.slice(1), [
      { level: 'error', message: 'Fleet console: request failed', data: { error: 'socket gone' } },
      { level: 'error', message: 'Fleet console: request failed', data: { error: 'plain refusal' } },
    ]);
  });
});

describe('fleet console server: what it serves', () => {
  it('refuses methods other than GET, HEAD and POST (405); HEAD answers like GET without a body', async () => {
    const { server, auth } = await rig();
    assert.deepEqual(said(await httpRequest(server.origin, '/api/spend', { method: 'PUT', headers: auth })), text(405, 'Method not allowed.'));
    assert.deepEqual(said(await httpRequest(server.origin, '/api/spend', { method: 'DELETE', headers: auth })), text(405, 'Method not allowed.'));
    const head = await httpRequest(server.origin, '/api/spend', { method: 'HEAD', headers: auth });
    assert.deepEqual({ status: head.status, type: head.headers['content-type'], length: head.headers['content-length'], body: head.body }, { status: 200, type: JSON_TYPE, length: '11', body: '' });
  });

  it('lists the kiosks with its start time and the link state', async () => {
    const { get, state, link } = await rig();
    state.onStatus('k-1', status('k-1'), false);
    link.connected = false;
    const listed = await get('/api/kiosks');
    assert.equal(listed.headers['content-type'], JSON_TYPE);
    assert.deepEqual(JSON.parse(listed.body), { consoleStartedAt: '2026-11-24T10:00:00.000Z', connected: false, total: 1, offset: 0, kiosks: JSON.parse(JSON.stringify(state.rows())) as unknown });
    assert.equal((JSON.parse(listed.body) as { kiosks: Array<{ kioskId: string }> }).kiosks[0]!.kioskId, 'k-1');
  });

  it('gives the spend as rows and as a CSV attachment', async () => {
    const { get, state } = await rig();
    state.onEvent('k-1', call('e-1'));
    assert.deepEqual(JSON.parse((await get('/api/spend')).body), { rows: [{ kioskId: 'k-1', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 2.5, demo: false }] });
    const csv = await get('/api/spend.csv');
    assert.deepEqual(
      { status: csv.status, type: csv.headers['content-type'], disposition: csv.headers['content-disposition'], body: csv.body },
      { status: 200, type: 'text/csv; charset=utf-8', disposition: 'attachment; filename="fleet-spend.csv"', body: 'day,kiosk,avatar,sessions,credits,demo\r\n2026-11-24,k-1,ava,1,2.5,no\r\n' },
    );
  });

  it('serves the fleet-wide /metrics in Prometheus text', async () => {
    const { get, state, link } = await rig();
    state.onStatus('k-1', status('k-1'), false);
    link.connected = false;
    const metrics = await get('/metrics');
    assert.equal(metrics.status, 200);
    assert.equal(metrics.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(metrics.body, /^avatar_fleet_broker_connected 0$/m);
    assert.match(metrics.body, /^avatar_fleet_kiosk_online\{kiosk="k-1"\} 1$/m);
  });

  it('serves a kept screenshot under its random name (the cookie alone opens it); a forgotten one is 404, any other name Not found', async () => {
    const { get, state, auth } = await rig();
    state.commandSent({ id: 'c-1', cmd: 'screenshot', expected: new Set(['k-1']), expiresAtMs: Date.now() + 60_000 });
    const shot = state.onResult('k-1', JSON.stringify({ id: 'c-1', cmd: 'screenshot', ok: true, result: { width: 1, height: 1, png: PNG_1x1.toString('base64') } }))!;
    const name = /([0-9a-f]{32})\.png$/.exec(shot.screenshotUrl!)![1]!;
    const png = await get(`/api/screenshots/${name}.png`);
    assert.deepEqual({ status: png.status, type: png.headers['content-type'], bytes: png.bytes }, { status: 200, type: 'image/png', bytes: PNG_1x1 });
    assert.deepEqual(said(await get(`/api/screenshots/${'0'.repeat(32)}.png`)), text(404, 'That screenshot is no longer kept.'));
    assert.deepEqual(said(await get(`/api/screenshots/${name}.png`, { host: auth.host! })), text(401, NEEDS_TOKEN));
    for (const path of ['/api/screenshots/1.png', `/x/api/screenshots/${name}.png`, `/api/screenshots/${name}.pngx`, `/api/screenshots/${name}xpng`, `/api/screenshots/a${name}.png`])
      assert.deepEqual(said(await get(path)), text(404, 'Not found.'), path);
  });

  it('serves the page\'s files with their types; anything else is octet-stream', async () => {
    const { get, pageDir } = await rig();
    const files: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8', 'logo.svg': 'image/svg+xml', 'pic.png': 'image/png', 'font.woff2': 'font/woff2', 'data.bin': 'application/octet-stream' };
    for (const name of Object.keys(files)) writeFileSync(join(pageDir, name), `contents of ${name}`);
    for (const [name, type] of Object.entries(files)) {
      const served = await get(`/${name}`);
      assert.deepEqual({ status: served.status, type: served.headers['content-type'], body: served.body }, { status: 200, type, body: `contents of ${name}` }, name);
    }
    const index = await get('/index.html');
    assert.deepEqual({ status: index.status, type: index.headers['content-type'] }, { status: 200, type: 'text/html; charset=utf-8' });
  });

  it('never serves a file outside the page folder, a neighbour whose name starts the same included', async () => {
    const { get, root } = await rig();
    writeFileSync(join(root, 'secret.txt'), 'secret');
    mkdirSync(join(root, 'page-secret'));
    writeFileSync(join(root, 'page-secret', 'a.txt'), 'secret');
    for (const path of ['/..%2fsecret.txt', '/..%2fpage-secret%2fa.txt', '/missing.js']) assert.deepEqual(said(await get(path)), text(404, 'Not found.'), path);
  });

  it('says the page is not built when its index is missing', async () => {
    const { get } = await rig({ page: false });
    assert.deepEqual(said(await get('/')), text(404, 'The console page is not built: run `npm run build`.'));
  });

  it('answers 500 to an address it cannot decode, and logs it', async () => {
    const { get, logger } = await rig();
    assert.deepEqual(said(await get('/%E0%A4%A')), text(500, 'Internal error.'));
    assert.deepEqual(logger.lines[1], { level: 'error', message: 'Fleet console: request failed', data: { error: 'URI malformed' } });
  });
});

/** An open `/api/stream`: what arrived so far. */
function openStream(origin: string, headers: Record<string, string>): Promise<{ res: IncomingMessage; text: () => string; ended: () => boolean }> {
  const url = new URL('/api/stream', origin);
  return new Promise((resolve, reject) => {
    const req = get({ host: url.hostname, port: url.port, path: url.pathname, headers }, (res) => {
      let got = '';
      let ended = false;
      res.on('data', (d: Buffer) => (got += d.toString()));
      res.on('end', () => (ended = true));
      resolve({ res, text: () => got, ended: () => ended });
    });
    req.on('error', reject);
  });
}

describe('fleet console server: the pushed stream', () => {
  it('opens with a snapshot, then pushes changed rows each interval, and the link state when it changes, nothing else', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { server, auth, state, link } = await rig();
    state.onStatus('k-1', status('k-1'), false);
    const rows = JSON.stringify(state.rows());
    state.takeChanged();
    const stream = await openStream(server.origin, auth);
    assert.equal(stream.res.statusCode, 200);
    assert.equal(stream.res.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(stream.res.headers.connection, 'keep-alive');
    const snapshot = `retry: 2000\nevent: fleet\ndata: {"type":"snapshot","consoleStartedAt":"2026-11-24T10:00:00.000Z","broker":"mqtt://broker.test:1883","connected":true,"link":{"lostAt":null,"droppedMessages":null,"notice":null},"me":{"name":"ops","role":"operator"},"kiosks":${rows},"commands":${JSON.stringify(commandViews())},"log":[]}\n\n`;
    await until(() => stream.text() === snapshot, { message: 'the snapshot' });

    t.mock.timers.tick(PUSH_INTERVAL_MS); // nothing changed: nothing sent
    state.onStatus('k-2', status('k-2'), false);
    t.mock.timers.tick(PUSH_INTERVAL_MS - 1);
    t.mock.timers.tick(1);
    const k2 = `event: fleet\ndata: {"type":"rows","connected":true,"link":{"lostAt":null,"droppedMessages":null,"notice":null},"kiosks":${JSON.stringify(state.rows().filter((r) => r.kioskId === 'k-2'))},"log":[]}\n\n`;
    await until(() => stream.text().length >= snapshot.length + k2.length, { message: 'the changed row' });
    link.connected = false;
    link.lostAt = '2026-11-24T10:00:00.000Z';
    t.mock.timers.tick(PUSH_INTERVAL_MS);
    t.mock.timers.tick(PUSH_INTERVAL_MS); // told once
    link.connected = true;
    link.lostAt = null;
    t.mock.timers.tick(PUSH_INTERVAL_MS);
    link.droppedMessages = 5; // the broker's drop counter changed: told too
    t.mock.timers.tick(PUSH_INTERVAL_MS);
    const off = 'event: fleet\ndata: {"type":"rows","connected":false,"link":{"lostAt":"2026-11-24T10:00:00.000Z","droppedMessages":null,"notice":null},"kiosks":[],"log":[]}\n\n';
    const on = 'event: fleet\ndata: {"type":"rows","connected":true,"link":{"lostAt":null,"droppedMessages":null,"notice":null},"kiosks":[],"log":[]}\n\n';
    const dropped = 'event: fleet\ndata: {"type":"rows","connected":true,"link":{"lostAt":null,"droppedMessages":5,"notice":null},"kiosks":[],"log":[]}\n\n';
    await until(() => stream.text().length >= snapshot.length + k2.length + off.length + on.length + dropped.length, { message: 'the link state' });
    assert.equal(stream.text(), snapshot + k2 + off + on + dropped);

    await server.close();
    await until(() => stream.ended(), { message: 'the stream ends when the server closes' });
    assert.equal(await accepts(Number(new URL(server.origin).port)), false, 'no longer listening');
  });

  it('ends a stream whose snapshot fails (after its headers went out), and logs why', async () => {
    const state = new FleetState({ now: () => T0 });
    state.rows = () => {
      throw new Error('rows broke');
    };
    const { server, auth, logger } = await rig({ state });
    const stream = await openStream(server.origin, auth);
    await until(() => stream.ended(), { message: 'the stream ends' });
    assert.deepEqual({ status: stream.res.statusCode, text: stream.text() }, { status: 200, text: '' });
    assert.deepEqual(logger.lines[1], { level: 'error', message: 'Fleet console: request failed', data: { error: 'rows broke' } });
  });

  it('needs the token too', async () => {
    const { get, auth } = await rig();
    assert.deepEqual(said(await get('/api/stream', { host: auth.host! })), text(401, NEEDS_TOKEN));
  });

  it('its push timer never holds the process open (a start whose port is taken leaves it behind)', async (t) => {
    const made: NodeJS.Timeout[] = [];
    const realSetInterval = globalThis.setInterval;
    t.mock.method(globalThis, 'setInterval', (...args: Parameters<typeof setInterval>) => {
      const timer = realSetInterval(...args);
      made.push(timer);
      return timer;
    });
    const { server } = await rig();
    await assert.rejects(rig({ port: Number(new URL(server.origin).port) }), { code: 'EADDRINUSE' });
    assert.deepEqual(made.map((timer) => timer.hasRef()), [false, false]);
    for (const timer of made) clearInterval(timer);
  });
});
