/**
 * The browser mode's security: another local page or process cannot drive the kiosk. A real host
 * (electron/browser/kiosk-host.ts: kiosk service, staff operations, the server) on 127.0.0.1, the direct
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
import { FakeClock } from '../../electron/core/clock.ts';
import { KIOSK_SOCKET_PATH, SECRET_FRAGMENT_KEY, SOCKET_CLOSE, type HostFrame } from '../../electron/core/kiosk-api.ts';
import { silentLogger } from '../../electron/core/log.ts';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { startBrowserKiosk, type BrowserKiosk } from '../../electron/browser/kiosk-host.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { HELLO_TIMEOUT_MS, LOOPBACK_HOST, startBrowserHost } from '../../electron/browser/server.ts';
import { STAFF_LOCKED_MESSAGE } from '../../electron/kiosk/dispatch.ts';
import { CONTENT_SECURITY_POLICY } from '../../electron/kiosk/page-headers.ts';
import { realDelay, until } from '../helpers/until.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const KEY = 'sk-browsermode-4Hq8Zt2Lx7Vn3Pd9Rk5Wm1Yc6';
const SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstu';
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

async function hello(client: Client, secret = SECRET): Promise<void> {
  client.ws.send(JSON.stringify({ type: 'hello', secret }));
  await until(() => client.frames.some((f) => f.type === 'welcome') || client.ws.readyState === WebSocket.CLOSED, { realTimeoutMs: WAIT_MS, message: 'welcome or close' });
}

function httpGet(port: number, path: string, host: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: LOOPBACK_HOST, port, path, headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.setTimeout(WAIT_MS, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe('browser mode host', () => {
  let emulator: EmulatorHandle;
  let kiosk: BrowserKiosk;
  let socketUrl: string;

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
      secret: SECRET,
    });
    socketUrl = `ws://${LOOPBACK_HOST}:${kiosk.host.port}${KIOSK_SOCKET_PATH}`;
  });
  after(async () => {
    await kiosk?.close();
    await emulator?.close();
  });

  describe('where it listens', () => {
    it('binds 127.0.0.1 only, and gives the secret to the page in the URL fragment', () => {
      assert.equal(kiosk.host.origin, `http://127.0.0.1:${kiosk.host.port}`);
      assert.equal(kiosk.host.pageUrl, `http://127.0.0.1:${kiosk.host.port}/#${SECRET_FRAGMENT_KEY}=${SECRET}`);
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
      const page = await httpGet(kiosk.host.port, '/', host);
      assert.equal(page.status, 200);
      assert.equal(page.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.equal((await httpGet(kiosk.host.port, '/assets/app.js', host)).status, 200);
      assert.equal((await httpGet(kiosk.host.port, '/../package.json', host)).status, 404);
      assert.equal((await httpGet(kiosk.host.port, '/%2e%2e/%2e%2e/package.json', host)).status, 404);
    });

    it('answers no request for another host name (DNS rebinding)', async () => {
      assert.equal((await httpGet(kiosk.host.port, '/', `attacker.example:${kiosk.host.port}`)).status, 421);
      await assert.rejects(connect(socketUrl, kiosk.host.origin, { host: `attacker.example:${kiosk.host.port}` }), /HTTP 403/);
    });
  });

  describe('who may open the socket', () => {
    it('refuses another origin, and a socket with no Origin', async () => {
      await assert.rejects(connect(socketUrl, 'http://evil.example'), /HTTP 403/);
      await assert.rejects(connect(socketUrl, `http://localhost:${kiosk.host.port}`), /HTTP 403/);
      await assert.rejects(connect(socketUrl, `http://127.0.0.1:${kiosk.host.port + 1}`), /HTTP 403/);
      await assert.rejects(connect(socketUrl, undefined), /HTTP 403/);
    });

    it('closes a socket whose first frame has a wrong secret, no secret, or is a call', async () => {
      for (const first of [{ type: 'hello', secret: 'wrong' }, { type: 'hello' }, { type: 'call', id: 1, channel: 'kiosk:session:start' }, 'not json']) {
        const intruder = await connect(socketUrl, kiosk.host.origin);
        intruder.ws.send(typeof first === 'string' ? first : JSON.stringify(first));
        assert.deepEqual(await intruder.closed, { code: SOCKET_CLOSE.refused, reason: 'Refused.' });
        assert.deepEqual(intruder.frames, []);
      }
      assert.equal(kiosk.service.state.phase, 'idle');
    });

    it('lets one page in with the secret, and refuses a second page while it is connected', async () => {
      const page = await connect(socketUrl, kiosk.host.origin);
      await hello(page);
      assert.deepEqual(page.frames[0], { type: 'welcome', shape: API_SHAPE });
      assert.equal(kiosk.host.connected, true);

      const second = await connect(socketUrl, kiosk.host.origin);
      second.ws.send(JSON.stringify({ type: 'hello', secret: SECRET }));
      assert.deepEqual(await second.closed, { code: SOCKET_CLOSE.busy, reason: 'Another page is connected.' });
      assert.deepEqual(second.frames, []);

      page.ws.close();
      await page.closed;
      await until(() => !kiosk.host.connected, { realTimeoutMs: WAIT_MS, message: 'the page left' });
      const next = await connect(socketUrl, kiosk.host.origin);
      await hello(next);
      assert.equal(next.frames[0]?.type, 'welcome');
      next.ws.close();
      await next.closed;
      await until(() => !kiosk.host.connected, { realTimeoutMs: WAIT_MS, message: 'the page left' });
    });
  });

  describe('what the connected page may do', () => {
    it('answers every staff channel `unauthorized` while the panel is locked', async () => {
      const page = await connect(socketUrl, kiosk.host.origin);
      await hello(page);
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
      const page = await connect(socketUrl, kiosk.host.origin);
      await hello(page);
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
      const page = await connect(socketUrl, kiosk.host.origin);
      await hello(page);
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
      const page = await connect(socketUrl, kiosk.host.origin);
      await hello(page);
      await page.call('kiosk:session:start', { callMode: 'audio' });
      await reportRtcReady(page);
      await until(() => kiosk.service.state.phase === 'live', { realTimeoutMs: WAIT_MS, message: 'live' });
      page.ws.terminate();
      await until(() => kiosk.service.state.phase === 'idle', { realTimeoutMs: WAIT_MS, message: 'back to idle' });
      assert.equal(kiosk.service.running, false);
    });
  });
});

describe('browser mode host on a fake clock', () => {
  it('closes a socket that says nothing within the hello timeout, and leaves no timer behind', async () => {
    const clock = new FakeClock();
    const host = await startBrowserHost({ service: { handle: async () => ({ ok: true, value: null }), onEvent: () => () => {} }, rendererDir: rendererDir(), clock, secret: SECRET });
    try {
      const silent = await connect(`ws://${LOOPBACK_HOST}:${host.port}${KIOSK_SOCKET_PATH}`, host.origin);
      await until(() => clock.pendingCount === 1, { realTimeoutMs: WAIT_MS, message: 'the hello timer' });
      assert.deepEqual(clock.pendingDelays(), [HELLO_TIMEOUT_MS]);
      await clock.advance(HELLO_TIMEOUT_MS - 1);
      await realDelay(20);
      assert.equal(silent.ws.readyState, WebSocket.OPEN);
      await clock.advance(1);
      assert.deepEqual(await silent.closed, { code: SOCKET_CLOSE.refused, reason: 'No hello in time.' });
      assert.equal(clock.pendingCount, 0);
    } finally {
      await host.close();
    }
  });
});
