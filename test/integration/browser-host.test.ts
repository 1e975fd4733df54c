/**
 * The browser mode's security: another local page or process cannot drive the kiosk. A real host
 * (electron/browser/kiosk-host.ts: the kiosk's services, staff operations, the server) on 127.0.0.1, the direct
 * surface with a known API key against the embedded emulator, and `ws` clients playing the page and the
 * intruders. Every wait is bounded; nothing leaves 127.0.0.1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { API_SHAPE, CHANNEL_ROWS, type KioskEvent } from '../../electron/contract.ts';
import { FakeClock } from '../helpers/fake-clock.ts';
import { connect as tcpConnect, type Socket } from 'node:net';
import { KIOSK_SOCKET_PATH, LAUNCH_PATH, SOCKET_CLOSE, type HostFrame } from '../../electron/core/kiosk-api.ts';
import { silentLogger } from '../../electron/core/log.ts';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { startBrowserKiosk, type BrowserKiosk } from '../../electron/browser/kiosk-host.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { GUARD_PATH, LOOPBACK_HOST, START_PATH, startBrowserHost, type BrowserHost } from '../../electron/browser/server.ts';
import { FIT_WINDOW_PATH } from '../../electron/browser/fit-window.ts';
import { INPUT_GUARD_SOURCE } from '../../electron/browser/input-guard.ts';
import { STAFF_LOCKED_MESSAGE } from '../../electron/kiosk/channels.ts';
import { CONTENT_SECURITY_POLICY } from '../../electron/kiosk/page-headers.ts';
import { realDelay, until } from '../helpers/until.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const KEY = 'sk-browsermode-4Hq8Zt2Lx7Vn3Pd9Rk5Wm1Yc6';
const WAIT_MS = 10_000;

/** A renderer folder of our own, so the test does not depend on a build. */
function rendererDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-browser-renderer-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>kiosk</title>');
  writeFileSync(join(dir, 'assets', 'app.js'), 'export {};');
  return dir;
}

/** The ways the key could show up in a frame. */
function keyForms(key: string): string[] {
  const b64 = Buffer.from(key).toString('base64');
  return [key, key.slice(0, 16), key.slice(-16), encodeURIComponent(key), b64.slice(2, -2), b64.slice(2, -2).replace(/\+/g, '-').replace(/\//g, '_'), Buffer.from(key).toString('hex')];
}

interface Client {
  ws: WebSocket;
  frames: HostFrame<KioskEvent>[];
  raw: string[];
  closed: Promise<{ code: number; reason: string }>;
  call(channel: string, arg?: unknown): Promise<unknown>;
}

/** Open a socket with `origin`; resolves once it is open (or rejects with the HTTP status it got). */
/** The page's part of a call: it joins the RTC channel of the credentials it received and says so. */
async function reportRtcReady(page: Client): Promise<void> {
  let liveId: string | null = null;
  await until(
    () => {
      for (const f of page.frames) if (f.type === 'event' && f.event.type === 'credentials') liveId = f.event.liveId;
      return liveId !== null;
    },
    { realTimeoutMs: WAIT_MS, message: 'the credentials' },
  );
  assert.deepEqual(await page.call('kiosk:session:rtc-ready', { liveId }), { ok: true, value: { accepted: true } });
}

function connect(url: string, origin: string | undefined, headers: Record<string, string> = {}): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { ...(origin ? { origin } : {}), ...headers } });
    const frames: Client['frames'] = [];
    const raw: string[] = [];
    let nextId = 1;
    const waiting = new Map<number, (result: unknown) => void>();
    ws.on('message', (data) => {
      const text = String(data);
      raw.push(text);
      const frame = JSON.parse(text) as HostFrame<KioskEvent>;
      frames.push(frame);
      if (frame.type === 'result') waiting.get(frame.id)?.(frame.result);
    });
    const closed = new Promise<{ code: number; reason: string }>((ok) => ws.on('close', (code, reason) => ok({ code, reason: String(reason) })));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', (e) => reject(e));
    ws.on('open', () =>
      resolve({
        ws,
        frames,
        raw,
        closed,
        call(channel, arg) {
          const id = nextId++;
          return new Promise((ok, fail) => {
            const timer = setTimeout(() => fail(new Error(`no answer to ${channel}`)), WAIT_MS);
            waiting.set(id, (r) => (clearTimeout(timer), ok(r)));
            ws.send(JSON.stringify(arg === undefined ? { type: 'call', id, channel } : { type: 'call', id, channel, arg }));
          });
        },
      }),
    );
  });
}

async function welcomed(client: Client): Promise<void> {
  await until(() => client.frames.some((f) => f.type === 'welcome') || client.ws.readyState === WebSocket.CLOSED, { realTimeoutMs: WAIT_MS, message: 'welcome or close' });
}

function httpGet(port: number, path: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: LOOPBACK_HOST, port, path, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.setTimeout(WAIT_MS, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** What a browser does with a launch address: trade its code for the session cookie (`name=value`). */
async function login(host: BrowserHost, url = host.launchUrl()): Promise<string> {
  const u = new URL(url);
  const answer = await httpGet(host.port, u.pathname + u.search, u.host);
  assert.equal(answer.status, 200);
  assert.match(answer.body, /<meta http-equiv="refresh" content="0;url=\/">/, 'on to the page, from our own origin');
  const setCookie = answer.headers['set-cookie'];
  assert.ok(Array.isArray(setCookie) && setCookie.length === 1, 'one cookie');
  assert.match(setCookie[0]!, /; HttpOnly; SameSite=Strict; Path=\/$/);
  return setCookie[0]!.split(';')[0]!;
}

/** The connected page: a socket with the session cookie, welcomed. */
async function openPage(host: BrowserHost, url: string, cookie: string): Promise<Client> {
  const page = await connect(url, host.origin, { cookie });
  await welcomed(page);
  return page;
}

describe('browser mode host', () => {
  let emulator: EmulatorHandle;
  let kiosk: BrowserKiosk;
  let socketUrl: string;
  let cookie: string;

  before(async () => {
    emulator = await startEmulator({ accounts: [{ apiKey: KEY }], knobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 50 } });
    // An installed kiosk: it has a staff PIN (without one it serves no visitor until setup).
    const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-browser-data-'));
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ staffPinHash: await hashPin('246813') }));
    kiosk = await startBrowserKiosk({
      dataDir,
      env: { AVATAR_API_KEY: KEY, AVATAR_BASE_URL: emulator.baseUrl },
      appRoot: ROOT,
      rendererDir: rendererDir(),
      logger: silentLogger,
      version: '0.0.0-test',
    });
    cookie = await login(kiosk.host);
    socketUrl = `ws://${LOOPBACK_HOST}:${kiosk.host.port}${KIOSK_SOCKET_PATH}`;
  });
  after(async () => {
    await kiosk?.close();
    await emulator?.close();
  });

  describe('where it listens', () => {
    it('binds 127.0.0.1 only, and lets a browser in with a one-time launch address', () => {
      assert.equal(kiosk.host.origin, `http://127.0.0.1:${kiosk.host.port}`);
      assert.match(kiosk.host.launchUrl(), new RegExp(`^http://127\\.0\\.0\\.1:${kiosk.host.port}${LAUNCH_PATH}\\?code=[A-Za-z0-9_-]{43}$`));
    });

    it('is not reachable on the IPv6 loopback nor on this machine\'s other addresses', async () => {
      const others = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a && !a.internal && !a.address.startsWith('fe80:')) // link-local needs a scope id
        .map((a) => a!.address);
      for (const address of ['::1', ...others]) {
        const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
          const req = request({ host: address, port: kiosk.host.port, path: '/', timeout: 2_000 }, (res) => (res.resume(), resolve(null)));
          req.on('error', (e: NodeJS.ErrnoException) => resolve(e));
          req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
          req.end();
        });
        assert.ok(error, `${address} answered`);
        assert.ok(['ECONNREFUSED', 'EADDRNOTAVAIL', 'ENETUNREACH', 'EHOSTUNREACH', 'ETIMEDOUT'].includes(error.code ?? ''), `${address}: ${error.code}`);
      }
    });

    it('serves the page with the app\'s CSP and headers, and nothing outside the renderer', async () => {
      const host = `127.0.0.1:${kiosk.host.port}`;
      const page = await httpGet(kiosk.host.port, '/', host, { cookie });
      assert.equal(page.status, 200);
      assert.equal(page.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.equal((await httpGet(kiosk.host.port, '/assets/app.js', host)).status, 200);
      assert.equal((await httpGet(kiosk.host.port, '/../package.json', host)).status, 404);
      assert.equal((await httpGet(kiosk.host.port, '/%2e%2e/%2e%2e/package.json', host)).status, 404);
    });

    it('loads the input guard first in every page it serves, from its own origin (the CSP allows it)', async () => {
      const host = `127.0.0.1:${kiosk.host.port}`;
      const page = await httpGet(kiosk.host.port, '/', host, { cookie });
      assert.equal(page.body, `<!doctype html><script src="${GUARD_PATH}"></script><script src="${FIT_WINDOW_PATH}"></script><title>kiosk</title>`, 'a page without a head tag: right after the doctype');
      const guard = await httpGet(kiosk.host.port, GUARD_PATH, host);
      assert.equal(guard.status, 200);
      assert.equal(guard.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(guard.body, INPUT_GUARD_SOURCE);
      for (const path of [START_PATH, `${LAUNCH_PATH}?code=spent`]) {
        assert.ok((await httpGet(kiosk.host.port, path, host)).body.startsWith(`<!doctype html><meta charset="utf-8"><script src="${GUARD_PATH}"></script>`), path);
      }
    });

    it('opens a browser on a start page with no secret: blank and looking again each half second without the session, on to the kiosk with it', async () => {
      const host = `127.0.0.1:${kiosk.host.port}`;
      assert.equal(kiosk.host.startUrl, `${kiosk.host.origin}${START_PATH}`);
      const without = await httpGet(kiosk.host.port, START_PATH, host);
      assert.equal(without.status, 200);
      assert.match(without.body, /<meta http-equiv="refresh" content="0\.5;url=\/start">/);
      assert.equal(without.headers['set-cookie'], undefined);
      assert.doesNotMatch(without.body, new RegExp(kiosk.host.sessionCookie.value));
      const withSession = await httpGet(kiosk.host.port, START_PATH, host, { cookie });
      assert.deepEqual([withSession.status, withSession.headers.location, withSession.body], [303, '/', '']);
      // The redirect names no fragment, so the browser keeps the start address's (`#fit=…`) for the kiosk's
      // page, which runs the window's fit too: a browser that had the cookie before its first request never
      // shows the start page.
      assert.match((await httpGet(kiosk.host.port, '/', host, { cookie })).body, new RegExp(`<script src="${FIT_WINDOW_PATH}"></script>`));
      assert.equal(`${kiosk.host.sessionCookie.name}=${kiosk.host.sessionCookie.value}`, cookie, 'the cookie the host gives its own browser is the session');
    });

    it('answers no request for another host name (DNS rebinding)', async () => {
      assert.equal((await httpGet(kiosk.host.port, '/', `attacker.example:${kiosk.host.port}`)).status, 421);
      await assert.rejects(connect(socketUrl, kiosk.host.origin, { host: `attacker.example:${kiosk.host.port}` }), /HTTP 403/);
    });
  });

  describe('who may open the socket', () => {
    it('refuses another origin, and a socket with no Origin, even with the session cookie', async () => {
      await assert.rejects(connect(socketUrl, 'http://evil.example', { cookie }), /HTTP 403/);
      await assert.rejects(connect(socketUrl, `http://localhost:${kiosk.host.port}`, { cookie }), /HTTP 403/);
      await assert.rejects(connect(socketUrl, `http://127.0.0.1:${kiosk.host.port + 1}`, { cookie }), /HTTP 403/);
      await assert.rejects(connect(socketUrl, undefined, { cookie }), /HTTP 403/);
    });

    it('authenticates in the upgrade request: no cookie, a wrong one or another port\'s gets 401 and never a socket', async () => {
      const name = kiosk.host.cookieName;
      for (const headers of [{} as Record<string, string>, { cookie: `${name}=wrong` }, { cookie: `avatar-kiosk-1=${cookie.split('=')[1]}` }, { cookie: `${name}=` }]) {
        await assert.rejects(connect(socketUrl, kiosk.host.origin, headers), /HTTP 401/, JSON.stringify(headers));
      }
      assert.equal(kiosk.host.connected, false);
      assert.equal(kiosk.kiosk.calls.state.phase, 'idle');
    });

    it('lets a launch code in once: used again, unknown or expired, it gets a page saying how to get in, and no cookie', async () => {
      const url = kiosk.host.launchUrl();
      await login(kiosk.host, url);
      const host = `127.0.0.1:${kiosk.host.port}`;
      for (const path of [new URL(url).pathname + new URL(url).search, `${LAUNCH_PATH}?code=guess`, LAUNCH_PATH]) {
        const again = await httpGet(kiosk.host.port, path, host);
        assert.equal(again.status, 403, path);
        assert.equal(again.headers['set-cookie'], undefined);
      }
      // The page itself is not served without the session (it would only fail to connect).
      assert.equal((await httpGet(kiosk.host.port, '/', host)).status, 403);
    });

    it('does not let unauthenticated sockets keep the page out, nor fill memory with big frames', async () => {
      // Upgrades without the cookie, and half-sent requests left open: none holds a slot.
      const held: Socket[] = [];
      for (let i = 0; i < 20; i++) {
        const sock = tcpConnect(kiosk.host.port, LOOPBACK_HOST);
        sock.on('error', () => undefined);
        await new Promise((ok) => sock.once('connect', ok));
        sock.write(`GET ${KIOSK_SOCKET_PATH} HTTP/1.1\r\nHost: 127.0.0.1:${kiosk.host.port}\r\nOrigin: ${kiosk.host.origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`);
        held.push(sock);
      }
      const refused = await Promise.allSettled(Array.from({ length: 8 }, () => connect(socketUrl, kiosk.host.origin)));
      assert.deepEqual(refused.map((r) => r.status === 'rejected' && /HTTP 401/.test(String(r.reason))), Array(8).fill(true));
      // An intruder's 31 MB "frame" never reaches a parser: there is no socket to send it on.
      const big = tcpConnect(kiosk.host.port, LOOPBACK_HOST);
      big.on('error', () => undefined);
      await new Promise((ok) => big.once('connect', ok));
      const answered = new Promise<string>((ok) => big.once('data', (d) => ok(String(d))));
      big.write(
        `GET ${KIOSK_SOCKET_PATH} HTTP/1.1\r\nHost: 127.0.0.1:${kiosk.host.port}\r\nOrigin: ${kiosk.host.origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
      assert.match(await answered, /^HTTP\/1\.1 401 /);
      big.destroy();
      // The real page still gets in at once.
      const page = await openPage(kiosk.host, socketUrl, cookie);
      assert.deepEqual(page.frames[0], { type: 'welcome', shape: API_SHAPE });
      for (const sock of held) sock.destroy();
      page.ws.close();
      await page.closed;
      await until(() => !kiosk.host.connected, { realTimeoutMs: WAIT_MS, message: 'the page left' });
    });

    it('lets one page in with the session, and refuses a second page while it is connected', async () => {
      const page = await openPage(kiosk.host, socketUrl, cookie);
      assert.deepEqual(page.frames[0], { type: 'welcome', shape: API_SHAPE });
      assert.equal(kiosk.host.connected, true);

      const second = await connect(socketUrl, kiosk.host.origin, { cookie });
      assert.deepEqual(await second.closed, { code: SOCKET_CLOSE.busy, reason: 'Another page is connected.' });
      assert.deepEqual(second.frames, []);

      page.ws.close();
      await page.closed;
      await until(() => !kiosk.host.connected, { realTimeoutMs: WAIT_MS, message: 'the page left' });
      const next = await openPage(kiosk.host, socketUrl, cookie);
      assert.equal(next.frames[0]?.type, 'welcome');
      next.ws.close();
      await next.closed;
      await until(() => !kiosk.host.connected, { realTimeoutMs: WAIT_MS, message: 'the page left' });
    });
  });

  describe('what the connected page may do', () => {
    it('answers every staff channel `unauthorized` while the panel is locked', async () => {
      const page = await openPage(kiosk.host, socketUrl, cookie);
      const staffChannels = CHANNEL_ROWS.filter((r) => r.spec.access === 'staff').map((r) => r.spec.channel);
      assert.ok(staffChannels.length >= 10);
      for (const channel of staffChannels) {
        assert.deepEqual(await page.call(channel, channel === 'kiosk:staff:set-api-key' ? { apiKey: 'sk-attacker-key-000' } : undefined), {
          ok: false,
          error: { code: 'unauthorized', message: STAFF_LOCKED_MESSAGE },
        });
      }
      page.ws.close();
      await page.closed;
      await until(() => !kiosk.host.connected, { realTimeoutMs: WAIT_MS, message: 'the page left' });
    });

    it('answers a frame that is not of the protocol with a typed error, and an unknown channel `invalid_request`', async () => {
      const page = await openPage(kiosk.host, socketUrl, cookie);
      page.ws.send('{"type":"call","id":-1,"channel":"kiosk:config:get"}');
      page.ws.send(Buffer.from([1, 2, 3]), { binary: true });
      await until(() => page.frames.filter((f) => f.type === 'error').length === 2, { realTimeoutMs: WAIT_MS, message: 'two errors' });
      assert.deepEqual(
        page.frames.filter((f) => f.type === 'error'),
        [
          { type: 'error', error: { code: 'invalid_request', message: 'Not a frame of this protocol (id): Too small: expected number to be >=0.' } },
          { type: 'error', error: { code: 'invalid_request', message: 'Binary frames are not part of this protocol.' } },
        ],
      );
      assert.deepEqual(await page.call('kiosk:shell:exec', { cmd: 'id' }), { ok: false, error: { code: 'invalid_request', message: 'Unknown channel: kiosk:shell:exec.' } });
      page.ws.close();
      await page.closed;
      await until(() => !kiosk.host.connected, { realTimeoutMs: WAIT_MS, message: 'the page left' });
    });

    it('never sends the API key: a whole call through the socket (config, start, live, hang-up, PIN pad)', async () => {
      const page = await openPage(kiosk.host, socketUrl, cookie);
      const config = (await page.call('kiosk:config:get')) as { ok: true; value: { mode: string; hasApiKey: boolean; apiKeySource: string } };
      assert.equal(config.value.mode, 'direct');
      assert.equal(config.value.hasApiKey, true);
      assert.equal(config.value.apiKeySource, 'env');
      assert.equal(((await page.call('kiosk:session:start', { callMode: 'audio' })) as { ok: boolean }).ok, true);
      await reportRtcReady(page);
      await until(() => page.frames.some((f) => f.type === 'event' && f.event.type === 'state' && f.event.state.phase === 'live'), { realTimeoutMs: WAIT_MS, message: 'live' });
      // A void Result's `value: undefined` is dropped by JSON, as it is by Electron's IPC.
      assert.deepEqual(await page.call('kiosk:session:hangup'), { ok: true });
      await until(() => page.frames.some((f) => f.type === 'event' && f.event.type === 'state' && f.event.state.phase === 'ended'), { realTimeoutMs: WAIT_MS, message: 'ended' });
      await page.call('kiosk:staff:pin-state');
      await page.call('kiosk:staff:unlock', { pin: '0000' });
      const leaks = page.raw.flatMap((frame, i) => keyForms(KEY).filter((form) => frame.includes(form)).map((form) => `frame ${i}: ${form.slice(0, 4)}…`));
      assert.deepEqual(leaks, []);
      assert.ok(page.raw.length >= 6, `${page.raw.length} frames read`);
      page.ws.close();
      await page.closed;
      await until(() => !kiosk.host.connected, { realTimeoutMs: WAIT_MS, message: 'the page left' });
    });

    it('hangs up a running call when the page goes away', async () => {
      const page = await openPage(kiosk.host, socketUrl, cookie);
      await page.call('kiosk:session:start', { callMode: 'audio' });
      await reportRtcReady(page);
      await until(() => kiosk.kiosk.calls.state.phase === 'live', { realTimeoutMs: WAIT_MS, message: 'live' });
      page.ws.terminate();
      await until(() => kiosk.kiosk.calls.state.phase === 'idle', { realTimeoutMs: WAIT_MS, message: 'back to idle' });
      assert.equal(kiosk.kiosk.calls.running, false);
    });
  });
});

describe('browser mode host on a fake clock', () => {
  const idle = { channels: { dispatch: async () => ({ ok: true as const, value: null }) }, events: { onEvent: () => () => {} } };

  it('a printed launch code is good for 60 seconds, unused, and no longer', async () => {
    const clock = new FakeClock();
    const host = await startBrowserHost({ ...idle, rendererDir: rendererDir(), clock });
    try {
      const late = new URL(host.launchUrl());
      const onTime = host.launchUrl();
      await clock.advance(60_000 - 1);
      await login(host, onTime);
      await clock.advance(1);
      assert.equal((await httpGet(host.port, late.pathname + late.search, late.host)).status, 403);
      assert.equal(clock.pendingCount, 0, 'no timer is kept for codes');
    } finally {
      await host.close();
    }
  });

  it('once a page is connected, every code still unspent is dropped (one printed earlier is no way in)', async () => {
    const clock = new FakeClock();
    const host = await startBrowserHost({ ...idle, rendererDir: rendererDir(), clock });
    try {
      const printed = new URL(host.launchUrl());
      const cookie = await login(host);
      const page = await openPage(host, `ws://${LOOPBACK_HOST}:${host.port}${KIOSK_SOCKET_PATH}`, cookie);
      const answer = await httpGet(host.port, printed.pathname + printed.search, printed.host);
      assert.equal(answer.status, 403);
      assert.equal(answer.headers['set-cookie'], undefined);
      page.ws.close();
      await page.closed;
    } finally {
      await host.close();
    }
  });
});
