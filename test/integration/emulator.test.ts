/**
 * The emulator against the spec (../shared/spec/avatar-service.md), driven with raw `fetch` and raw `ws`
 * clients — never the app's core — so these tests pin the emulator's wire behaviour on their own.
 * Time comes from a FakeClock; real I/O is awaited between clock steps with bounded real-time waits.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import WebSocket from 'ws';
import { FakeClock } from '../helpers/fake-clock.ts';
import type { Logger } from '../../electron/core/log.ts';
import { DEMO_API_KEY, startEmulator, type EmulatorHandle, type EmulatorKnobs, type EmulatorOptions } from '../../electron/emulator/index.ts';

const T0 = 1_700_000_000_000;
const T0_S = '1700000000';
const OTHER_KEY = 'emulator-other-key-0002';
const PNG_DATA_URI = 'data:image/png;base64,iVBORw0KGgo=';

// ---------------------------------------------------------------------------------------------------
// Helpers

interface LogLine {
  level: string;
  message: string;
  data: Record<string, unknown> | undefined;
}

function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (message: string, data?: Record<string, unknown>) => void lines.push({ level, message, data });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

interface Env {
  emu: EmulatorHandle;
  clock: FakeClock;
  lines: LogLine[];
}

async function setup(t: TestContext, knobs: Partial<EmulatorKnobs> = {}, extra: Omit<EmulatorOptions, 'clock' | 'knobs' | 'logger'> = {}): Promise<Env> {
  const clock = new FakeClock(T0);
  const { logger, lines } = captureLogger();
  const emu = await startEmulator({ clock, logger, knobs, ...extra });
  t.after(() => emu.close());
  return { emu, clock, lines };
}

function realDelay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Poll `condition` in real time; fail after `timeoutMs`. */
async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await realDelay(5);
  }
}

interface ApiOptions {
  key?: string | null;
  surface?: 'direct' | 'gateway';
  body?: unknown;
  rawBody?: string;
  contentType?: string;
}

async function api(emu: EmulatorHandle, method: string, path: string, options: ApiOptions = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const surface = options.surface ?? 'direct';
  const url = surface === 'direct' ? `${emu.baseUrl}/live/v1${path}` : `${emu.gatewayUrl}/api${path}`;
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? emu.apiKey : options.key;
  if (surface === 'direct' && key !== null) headers.authorization = `Token ${key}`;
  let body: string | undefined;
  if (options.rawBody !== undefined || options.body !== undefined) {
    headers['content-type'] = options.contentType ?? 'application/json';
    body = options.rawBody ?? JSON.stringify(options.body);
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

function createBody(callMode: 'audio' | 'video' = 'audio', avatar: Record<string, unknown> = {}): unknown {
  return { call_mode: callMode, avatar: { persona: 'A friendly museum guide.', image_uri: PNG_DATA_URI, ...avatar } };
}

async function createSession(emu: EmulatorHandle, callMode: 'audio' | 'video' = 'audio', options: ApiOptions = {}): Promise<any> {
  const res = await api(emu, 'POST', '/lives', { body: createBody(callMode), ...options });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

interface Received {
  text: string;
  binary: boolean;
  json: any;
}

/** A raw `ws` client that queues what it receives and numbers its frames from seq_id 1. */
class TestClient {
  readonly ws: WebSocket;
  readonly liveId: string;
  readonly closed: Promise<{ code: number; reason: string }>;
  isClosed = false;
  #seq = 0;
  #queue: Received[] = [];
  #waiters: Array<(m: Received) => void> = [];

  private constructor(ws: WebSocket, liveId: string) {
    this.ws = ws;
    this.liveId = liveId;
    ws.on('message', (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      const text = buf.toString('utf8');
      let json: unknown = undefined;
      if (!isBinary) {
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
      }
      const msg = { text, binary: isBinary, json };
      const waiter = this.#waiters.shift();
      if (waiter) waiter(msg);
      else this.#queue.push(msg);
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.isClosed = true;
        resolve({ code, reason: reason.toString() });
      }),
    );
    ws.on('error', () => {});
  }

  static url(emu: EmulatorHandle, liveId: string, surface: 'direct' | 'gateway' = 'direct'): string {
    const wsBase = emu.baseUrl.replace(/^http/, 'ws');
    return surface === 'direct' ? `${wsBase}/live/ws/live/connect?live_id=${liveId}` : `${wsBase}/gateway/api/ws?live_id=${liveId}`;
  }

  static async connect(emu: EmulatorHandle, liveId: string, options: { key?: string | null; surface?: 'direct' | 'gateway' } = {}): Promise<TestClient> {
    const surface = options.surface ?? 'direct';
    const key = options.key === undefined ? emu.apiKey : options.key;
    const headers: Record<string, string> = surface === 'direct' && key !== null ? { authorization: `Token ${key}` } : {};
    const ws = new WebSocket(TestClient.url(emu, liveId, surface), { headers });
    const client = new TestClient(ws, liveId);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new HandshakeRejected(res.statusCode ?? 0)));
      ws.once('error', reject);
    });
    return client;
  }

  /** The next frame from the server, within a bounded real time. */
  next(timeoutMs = 5_000): Promise<Received> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error('no message within ' + timeoutMs + ' ms'));
      }, timeoutMs);
      const waiter = (m: Received) => {
        clearTimeout(timer);
        resolve(m);
      };
      this.#waiters.push(waiter);
    });
  }

  async nextJson(timeoutMs?: number): Promise<any> {
    const m = await this.next(timeoutMs);
    assert.equal(m.binary, false, 'expected a text frame');
    return m.json;
  }

  /** Assert nothing arrives for `ms` of real time. */
  async expectSilence(ms = 60): Promise<void> {
    await realDelay(ms);
    assert.deepEqual(this.#queue.map((m) => m.text.slice(0, 200)), []);
  }

  send(type: number, payload: Record<string, unknown>, overrides: Record<string, unknown> = {}): void {
    this.ws.send(JSON.stringify({ type, live_id: this.liveId, seq_id: ++this.#seq, payload, ...overrides }));
  }

  connInit(): void {
    this.send(1, { conn_init: { version: 1 } });
  }

  pong(ts = 0): void {
    this.send(4, { pong: { ts } });
  }

  hangup(reason = 'user_end'): void {
    this.send(5, { hangup: { hangup_reason: reason } });
  }

  async closedWithin(timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('socket not closed within ' + timeoutMs + ' ms')), timeoutMs);
    });
    try {
      return await Promise.race([this.closed, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

class HandshakeRejected extends Error {
  readonly status: number;
  constructor(status: number) {
    super(`handshake rejected with HTTP ${status}`);
    this.status = status;
  }
}

async function handshakeStatus(emu: EmulatorHandle, liveId: string, options: { key?: string | null; surface?: 'direct' | 'gateway' } = {}): Promise<number> {
  try {
    const client = await TestClient.connect(emu, liveId, options);
    client.ws.close();
    return 101;
  } catch (error) {
    if (error instanceof HandshakeRejected) return error.status;
    throw error;
  }
}

/** Connect, send conn_init, return the client and its first answer. */
async function connectAndInit(emu: EmulatorHandle, liveId: string, options: { key?: string | null; surface?: 'direct' | 'gateway' } = {}): Promise<{ client: TestClient; ack: any }> {
  const client = await TestClient.connect(emu, liveId, options);
  client.connInit();
  return { client, ack: await client.nextJson() };
}

const ACK_OK = { type: 2, payload: { conn_init_ack: { success: true } } };
const ackFail = (code: string) => ({ type: 2, payload: { conn_init_ack: { success: false, error_code: code } } });

/** A live audio session (warm-up 0) with its connected client, live at the clock's current time. */
async function liveSession(env: Env, callMode: 'audio' | 'video' = 'audio'): Promise<{ liveId: string; client: TestClient; created: any }> {
  const created = await createSession(env.emu, callMode);
  const liveId: string = created.live.id;
  const { client, ack } = await connectAndInit(env.emu, liveId);
  assert.deepEqual(ack, ACK_OK);
  return { liveId, client, created };
}

function socketClosedLogged(lines: LogLine[], liveId: string, count = 1): () => boolean {
  return () => lines.filter((l) => (l.message === 'socket closed' || l.message === 'socket terminated') && l.data?.liveId === liveId).length >= count;
}

// ---------------------------------------------------------------------------------------------------

describe('emulator REST surface', () => {
  describe('authentication (spec §5)', () => {
    it('answers 401 unauthorized on the direct surface without a key or with a wrong key', async (t) => {
      const { emu } = await setup(t);
      const missing = await api(emu, 'POST', '/lives', { key: null, body: createBody() });
      assert.equal(missing.status, 401);
      assert.equal(missing.body.error.code, 'unauthorized');
      const wrong = await api(emu, 'POST', '/lives', { key: 'not-a-key', body: createBody() });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error.code, 'unauthorized');
      const list = await api(emu, 'GET', '/voices', { key: null });
      assert.equal(list.status, 401);
      const bearer = await fetch(`${emu.baseUrl}/live/v1/voices`, { headers: { authorization: `Bearer ${emu.apiKey}` } });
      assert.equal(bearer.status, 401);
      await bearer.text();
    });

    it('rejects a WebSocket handshake without a valid key with HTTP 401', async (t) => {
      const { emu } = await setup(t);
      const created = await createSession(emu);
      assert.equal(await handshakeStatus(emu, created.live.id, { key: null }), 401);
      assert.equal(await handshakeStatus(emu, created.live.id, { key: 'not-a-key' }), 401);
      assert.equal(await handshakeStatus(emu, created.live.id), 101);
    });

    it('needs no key on the gateway surface, which acts as the demo account', async (t) => {
      const { emu } = await setup(t);
      const created = await createSession(emu, 'audio', { surface: 'gateway', key: null });
      const viaGateway = await api(emu, 'GET', `/lives/${created.live.id}`, { surface: 'gateway' });
      assert.equal(viaGateway.status, 200);
      const viaDirect = await api(emu, 'GET', `/lives/${created.live.id}`, { key: DEMO_API_KEY });
      assert.equal(viaDirect.status, 200);
      assert.equal(emu.getSession(created.live.id)?.apiKey, DEMO_API_KEY);
      const { ack } = await connectAndInit(emu, created.live.id, { surface: 'gateway' });
      assert.deepEqual(ack, ACK_OK);
    });

    it('answers 403 forbidden when another key queries or connects to a session (spec §5)', async (t) => {
      const { emu } = await setup(t, {}, { accounts: [{ apiKey: OTHER_KEY }] });
      const created = await createSession(emu);
      const res = await api(emu, 'GET', `/lives/${created.live.id}`, { key: OTHER_KEY });
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'forbidden');
      assert.equal(await handshakeStatus(emu, created.live.id, { key: OTHER_KEY }), 403);
    });
  });

  describe('routing', () => {
    it('answers 404 not_found for an unknown session id, over REST and on the socket', async (t) => {
      const { emu } = await setup(t);
      const res = await api(emu, 'GET', '/lives/does-not-exist');
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'not_found');
      assert.equal(await handshakeStatus(emu, 'does-not-exist'), 404);
    });

    it('answers 404 for unknown routes and 405 with Allow for a wrong method', async (t) => {
      const { emu } = await setup(t);
      const unknown = await fetch(`${emu.baseUrl}/live/v2/lives`);
      assert.equal(unknown.status, 404);
      assert.equal(((await unknown.json()) as any).error.code, 'not_found');
      const wrong = await api(emu, 'GET', '/lives');
      assert.equal(wrong.status, 405);
      assert.equal(wrong.headers.get('allow'), 'POST');
      assert.equal(wrong.body.error.code, 'method_not_allowed');
      const wrongQuery = await api(emu, 'DELETE', '/lives/abc');
      assert.equal(wrongQuery.status, 405);
      assert.equal(wrongQuery.headers.get('allow'), 'GET');
    });

    it('rejects a socket without live_id with HTTP 400', async (t) => {
      const { emu } = await setup(t);
      const ws = new WebSocket(`${emu.baseUrl.replace('http', 'ws')}/live/ws/live/connect`, { headers: { authorization: `Token ${emu.apiKey}` } });
      const status = await new Promise<number>((resolve) => {
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('open', () => resolve(101));
        ws.on('error', () => {});
      });
      assert.equal(status, 400);
    });
  });

  describe('validation of create (spec §2.3, §4.1)', () => {
    const cases: Array<{ name: string; body: unknown; field: string | undefined }> = [
      { name: 'a missing persona', body: { call_mode: 'audio', avatar: { image_uri: PNG_DATA_URI } }, field: 'avatar.persona' },
      { name: 'an unknown call_mode', body: createBody('holo' as 'audio'), field: 'call_mode' },
      { name: 'a missing avatar', body: { call_mode: 'video' }, field: 'avatar' },
      { name: 'an unknown moderation value', body: { ...(createBody() as object), moderation: 'off' }, field: 'moderation' },
      { name: 'a GIF data URI', body: createBody('audio', { image_uri: 'data:image/gif;base64,R0lGODlh' }), field: 'avatar.image_uri' },
      { name: 'a data URI without ;base64', body: createBody('audio', { image_uri: 'data:image/png,abcd' }), field: 'avatar.image_uri' },
      { name: 'broken Base64', body: createBody('audio', { image_uri: 'data:image/png;base64,not base64!' }), field: 'avatar.image_uri' },
      { name: 'an ftp URL', body: createBody('audio', { image_uri: 'ftp://example.com/a.png' }), field: 'avatar.image_uri' },
      { name: 'a bare path', body: createBody('audio', { image_uri: '/home/kiosk/face.png' }), field: 'avatar.image_uri' },
      { name: 'a JSON array', body: [1, 2], field: undefined },
    ];
    for (const c of cases) {
      it(`answers 400 invalid_request naming the field for ${c.name}`, async (t) => {
        const { emu } = await setup(t);
        const res = await api(emu, 'POST', '/lives', { body: c.body });
        assert.equal(res.status, 400);
        assert.equal(res.body.error.code, 'invalid_request');
        assert.equal(res.body.error.field, c.field);
        assert.equal(typeof res.body.error.message, 'string');
        assert.equal(emu.listSessions().length, 0);
      });
    }

    it('accepts http(s) image URLs and every allowed data URI type', async (t) => {
      const { emu } = await setup(t);
      for (const image_uri of [
        'https://example.com/face.png',
        'http://example.com/face',
        'data:image/jpeg;base64,/9j/4AAQ',
        'data:image/jpg;base64,/9j/4AAQ',
        'data:image/webp;base64,UklGRg==',
      ]) {
        const res = await api(emu, 'POST', '/lives', { body: createBody('audio', { image_uri }) });
        assert.equal(res.status, 200, image_uri);
      }
    });

    it('answers 400 for a body that is not JSON and 415 for another content type', async (t) => {
      const { emu } = await setup(t);
      const notJson = await api(emu, 'POST', '/lives', { rawBody: '{"call_mode":' });
      assert.equal(notJson.status, 400);
      assert.equal(notJson.body.error.code, 'invalid_request');
      const form = await api(emu, 'POST', '/lives', { rawBody: 'call_mode=audio', contentType: 'application/x-www-form-urlencoded' });
      assert.equal(form.status, 415);
    });

    it('answers 400 for a Base64 image that decodes to 20 MB or more', async (t) => {
      const { emu } = await setup(t);
      const twentyMbBase64 = 'A'.repeat(((20 * 1024 * 1024) / 3) * 4 + 4); // decodes to just over 20 MB
      const res = await api(emu, 'POST', '/lives', { body: createBody('audio', { image_uri: 'data:image/png;base64,' + twentyMbBase64 }) });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.field, 'avatar.image_uri');
    });

    it('answers 413 for a body over 60 MB', async (t) => {
      const { emu } = await setup(t);
      const res = await api(emu, 'POST', '/lives', { rawBody: JSON.stringify({ call_mode: 'audio', pad: 'x'.repeat(61 * 1024 * 1024) }) });
      assert.equal(res.status, 413);
      assert.equal(res.body.error.code, 'payload_too_large');
    });
  });

  describe('balance (spec §3, §8)', () => {
    it('answers 402 insufficient_credits under 45 credits and creates at exactly 45', async (t) => {
      const { emu } = await setup(t);
      emu.setBalance(DEMO_API_KEY, 44);
      const refused = await api(emu, 'POST', '/lives', { body: createBody() });
      assert.equal(refused.status, 402);
      assert.equal(refused.body.error.code, 'insufficient_credits');
      emu.setBalance(DEMO_API_KEY, 45);
      const ok = await api(emu, 'POST', '/lives', { body: createBody() });
      assert.equal(ok.status, 200);
      assert.equal(emu.balance(), 45);
    });

    it('gives new accounts 1000 trial credits', async (t) => {
      const { emu } = await setup(t);
      emu.addAccount({ apiKey: OTHER_KEY });
      assert.equal(emu.balance(), 1000);
      assert.equal(emu.balance(OTHER_KEY), 1000);
    });
  });

  describe('create and query (spec §2.5, §4.1, §4.2)', () => {
    it('returns a waiting session with RTC ids per the native channel map', async (t) => {
      const { emu } = await setup(t);
      const audio = await createSession(emu, 'audio');
      const id: string = audio.live.id;
      const creatorId = emu.getSession(id)!.creatorId;
      assert.match(id, /^[0-9a-f]{16}$/);
      assert.deepEqual(audio.live, { id, status: 'waiting', live_duration: 600, call_mode: 'audio' });
      assert.match(audio.rtc.app_id, /^emulator-/);
      assert.equal(audio.rtc.channel_id, `live-audio-${id}`);
      assert.equal(audio.rtc.user_id, `live-user-${creatorId}-${id}`);
      assert.equal(typeof audio.rtc.token, 'string');
      assert.ok(audio.rtc.token.length >= 32);
      assert.equal(audio.rtc.token_expire_at, String(T0 / 1000 + 3600));

      const video = await createSession(emu, 'video');
      assert.equal(video.rtc.channel_id, `live-user-${video.live.id}`);
      assert.equal(video.rtc.user_id, `live-user-${creatorId}-${video.live.id}`);
      assert.notEqual(video.rtc.token, audio.rtc.token);
    });

    it('uses the configured creator id in the RTC user id', async (t) => {
      const { emu } = await setup(t, {}, { accounts: [{ apiKey: OTHER_KEY, creatorId: 'kiosk42', balance: 500 }] });
      const created = await createSession(emu, 'audio', { key: OTHER_KEY });
      assert.equal(created.rtc.user_id, `live-user-kiosk42-${created.live.id}`);
      assert.equal(emu.balance(OTHER_KEY), 500);
    });

    it('caps live_duration at 600 seconds', async (t) => {
      const { emu } = await setup(t, { liveDurationS: 900 });
      const created = await createSession(emu);
      assert.equal(created.live.live_duration, 600);
      emu.knobs.liveDurationS = 120;
      assert.equal((await createSession(emu)).live.live_duration, 120);
    });

    it('answers the query with avatar defaults and null billing window before the session goes live', async (t) => {
      const { emu } = await setup(t);
      const created = await createSession(emu, 'video');
      const res = await api(emu, 'GET', `/lives/${created.live.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        live: {
          id: created.live.id,
          status: 'waiting',
          call_mode: 'video',
          live_duration: 600,
          avatar: { name: null, voice: 'Tina', persona: 'A friendly museum guide.' },
          billed_seconds: 0,
          credits_cost: 0,
          created_at: T0_S,
          started_at: null,
          ended_at: null,
        },
      });
    });

    it('applies gateway defaults moderation disabled and extra_motion true, and leaves them unset on the direct surface', async (t) => {
      const { emu } = await setup(t);
      const viaGateway = await createSession(emu, 'audio', { surface: 'gateway' });
      const gatewayRequest = emu.getSession(viaGateway.live.id)!.request as any;
      assert.equal(gatewayRequest.moderation, 'disabled');
      assert.equal(gatewayRequest.extra_motion, true);
      const strict = await api(emu, 'POST', '/lives', { surface: 'gateway', body: { ...(createBody() as object), moderation: 'strict', extra_motion: false } });
      const strictRequest = emu.getSession(strict.body.live.id)!.request as any;
      assert.equal(strictRequest.moderation, 'strict');
      assert.equal(strictRequest.extra_motion, false);
      const direct = await createSession(emu);
      const directRequest = emu.getSession(direct.live.id)!.request as any;
      assert.equal(directRequest.moderation, undefined);
      assert.equal(directRequest.extra_motion, undefined);
    });

    it('expires a waiting session that never connected after sessionTtlMs (then 404)', async (t) => {
      const { emu, clock } = await setup(t, { sessionTtlMs: 60_000 });
      const created = await createSession(emu);
      await clock.advance(59_999);
      assert.equal((await api(emu, 'GET', `/lives/${created.live.id}`)).status, 200);
      await clock.advance(1);
      assert.equal((await api(emu, 'GET', `/lives/${created.live.id}`)).status, 404);
      assert.equal(emu.getSession(created.live.id), undefined);
    });
  });

  describe('voices (spec §4.4, §4.5, §8)', () => {
    it('clones the first 10 voices free, charges 899 for the 11th and answers 402 when the balance is short', async (t) => {
      const { emu } = await setup(t);
      for (let i = 1; i <= 10; i++) {
        const res = await api(emu, 'POST', '/voices/clone', { body: { audio_url: `https://example.com/v${i}.mp3`, voice: `voice-${i}` } });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { voice: `voice-${i}` });
      }
      assert.equal(emu.balance(), 1000);
      const eleventh = await api(emu, 'POST', '/voices/clone', { body: { audio_url: 'https://example.com/s.WAV', voice: 'voice-11', language: 'en' } });
      assert.equal(eleventh.status, 200);
      assert.equal(emu.balance(), 101);
      const twelfth = await api(emu, 'POST', '/voices/clone', { body: { audio_url: 'https://example.com/s.wav', voice: 'voice-12' } });
      assert.equal(twelfth.status, 402);
      assert.equal(twelfth.body.error.code, 'insufficient_credits');
      assert.equal(emu.balance(), 101);
      const list = await api(emu, 'GET', '/voices');
      assert.deepEqual(list.body, { voices: Array.from({ length: 11 }, (_, i) => ({ voice: `voice-${i + 1}` })) });
    });

    it('answers 409 for a duplicate name and 400 for a bad audio_url', async (t) => {
      const { emu } = await setup(t);
      assert.equal((await api(emu, 'POST', '/voices/clone', { body: { audio_url: 'https://example.com/a.mp3', voice: 'Narrator' } })).status, 200);
      const duplicate = await api(emu, 'POST', '/voices/clone', { body: { audio_url: 'https://example.com/b.mp3', voice: 'narrator' } });
      assert.equal(duplicate.status, 409);
      assert.equal(duplicate.body.error.code, 'conflict');
      for (const audio_url of ['https://example.com/a.ogg', 'ftp://example.com/a.mp3', 'not a url']) {
        const bad = await api(emu, 'POST', '/voices/clone', { body: { audio_url, voice: 'Other' } });
        assert.equal(bad.status, 400, audio_url);
        assert.equal(bad.body.error.field, 'audio_url');
      }
      const missingName = await api(emu, 'POST', '/voices/clone', { body: { audio_url: 'https://example.com/a.mp3' } });
      assert.equal(missingName.status, 400);
      assert.equal(missingName.body.error.field, 'voice');
    });

    it("lists only the caller's clones; the gateway lists the demo account's", async (t) => {
      const { emu } = await setup(t, {}, { accounts: [{ apiKey: OTHER_KEY }] });
      await api(emu, 'POST', '/voices/clone', { body: { audio_url: 'https://example.com/a.mp3', voice: 'Mine' } });
      await api(emu, 'POST', '/voices/clone', { key: OTHER_KEY, body: { audio_url: 'https://example.com/b.mp3', voice: 'Theirs' } });
      assert.deepEqual((await api(emu, 'GET', '/voices')).body, { voices: [{ voice: 'Mine' }] });
      assert.deepEqual((await api(emu, 'GET', '/voices', { key: OTHER_KEY })).body, { voices: [{ voice: 'Theirs' }] });
      assert.deepEqual((await api(emu, 'GET', '/voices', { surface: 'gateway' })).body, { voices: [{ voice: 'Mine' }] });
      const viaGateway = await api(emu, 'POST', '/voices/clone', { surface: 'gateway', body: { audio_url: 'https://example.com/c.mp3', voice: 'Kiosk' } });
      assert.equal(viaGateway.status, 200);
      assert.deepEqual((await api(emu, 'GET', '/voices')).body, { voices: [{ voice: 'Mine' }, { voice: 'Kiosk' }] });
    });
  });
});

describe('emulator control socket', () => {
  describe('conn_init (spec §3, §6 rules 1-3)', () => {
    it('answers NOT_READY during the video warm-up, then success once 2500 ms have passed', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const created = await createSession(emu, 'video');
      const liveId: string = created.live.id;

      const first = await connectAndInit(emu, liveId);
      assert.deepEqual(first.ack, ackFail('NOT_READY'));
      assert.equal(first.client.isClosed, false, 'the server leaves closing to the client');
      first.client.ws.close();
      await first.client.closedWithin();

      await clock.advance(2_000);
      const second = await connectAndInit(emu, liveId);
      assert.deepEqual(second.ack, ackFail('NOT_READY'));
      second.client.ws.close();

      await clock.advance(500);
      const third = await connectAndInit(emu, liveId);
      assert.deepEqual(third.ack, ACK_OK);

      const session = emu.getSession(liveId)!;
      assert.equal(session.status, 'on_live');
      assert.equal(session.startedAtMs, T0 + 2_500);
      assert.equal(session.connInits, 3);
      assert.equal(session.notReadyAnswers, 2);
      assert.equal(session.socketsOpened, 3);
      assert.deepEqual(session.clientMessages, [
        { type: 1, seq_id: 1 },
        { type: 1, seq_id: 1 },
        { type: 1, seq_id: 1 },
      ]);
      assert.equal(emu.liveCount(), 1);
    });

    it('goes live at once in audio mode (warm-up 0)', async (t) => {
      const env = await setup(t);
      const { liveId } = await liveSession(env);
      assert.equal(env.emu.getSession(liveId)!.status, 'on_live');
      assert.equal(env.emu.getSession(liveId)!.notReadyAnswers, 0);
      assert.equal(env.emu.balance(), 997, 'the first 2-second unit is paid as it starts');
    });

    it('answers LIVE_CONN_INIT_FAILED with initFailure, closes the socket and ends the session without billing', async (t) => {
      const env = await setup(t, { initFailure: true });
      const { emu, clock } = env;
      const created = await createSession(emu);
      const { client, ack } = await connectAndInit(emu, created.live.id);
      assert.deepEqual(ack, ackFail('LIVE_CONN_INIT_FAILED'));
      assert.equal((await client.closedWithin()).code, 1000);
      assert.equal(emu.getSession(created.live.id)!.status, 'ending');
      await clock.advance(300);
      const session = emu.getSession(created.live.id)!;
      assert.equal(session.status, 'ended');
      assert.equal(session.billedSeconds, 0);
      assert.equal(session.startedAtMs, null);
      assert.equal(emu.balance(), 1000);
      assert.equal(emu.liveCount(), 0);
      const retry = await connectAndInit(emu, created.live.id);
      assert.deepEqual(retry.ack, ackFail('LIVE_CONN_INIT_FAILED'), 'the failure is permanent');
    });
  });

  describe('heartbeat (spec §6 rule 4)', () => {
    it('pings every 5000 ms with the clock time', async (t) => {
      const env = await setup(t);
      const { clock } = env;
      const { client } = await liveSession(env);
      await clock.advance(4_999);
      await client.expectSilence();
      await clock.advance(1);
      assert.deepEqual(await client.nextJson(), { type: 3, payload: { ping: { ts: T0 + 5_000 } } });
      client.pong(T0 + 5_000);
      await clock.advance(5_000);
      assert.deepEqual(await client.nextJson(), { type: 3, payload: { ping: { ts: T0 + 10_000 } } });
      await client.expectSilence();
    });

    it('terminates a socket whose client says nothing for 15000 ms', async (t) => {
      const env = await setup(t);
      const { clock } = env;
      const { client } = await liveSession(env);
      await clock.advance(14_999);
      assert.equal((await client.nextJson()).type, 3);
      assert.equal((await client.nextJson()).type, 3);
      await realDelay(30);
      assert.equal(client.isClosed, false);
      await clock.advance(1);
      assert.equal((await client.closedWithin()).code, 1006, 'terminated, no close frame');
    });

    it('counts any client message (a pong) as alive, restarting the 15000 ms window', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const { client, liveId } = await liveSession(env);
      await clock.advance(10_000);
      client.pong();
      await waitFor(() => emu.getSession(liveId)!.clientMessages.length === 2, 'the pong to arrive');
      await clock.advance(14_999);
      await realDelay(30);
      assert.equal(client.isClosed, false);
      await clock.advance(1);
      assert.equal((await client.closedWithin()).code, 1006);
    });
  });

  describe('reconnect grace', () => {
    it('keeps a session live when the client reconnects within the grace window; billing never stops', async (t) => {
      const env = await setup(t);
      const { emu, clock, lines } = env;
      const { client, liveId } = await liveSession(env);
      await clock.advance(3_000);
      client.ws.terminate();
      await waitFor(socketClosedLogged(lines, liveId), 'the server to notice the drop');
      await clock.advance(9_000);
      assert.equal(emu.getSession(liveId)!.status, 'on_live');
      const again = await connectAndInit(emu, liveId);
      assert.deepEqual(again.ack, ACK_OK);
      await clock.advance(10_000);
      assert.equal(emu.getSession(liveId)!.status, 'on_live');
      assert.equal(emu.liveCount(), 1);
      again.client.hangup();
      assert.equal((await again.client.closedWithin()).code, 1000);
      const session = emu.getSession(liveId)!;
      assert.equal(session.status, 'ending');
      assert.equal(session.billedSeconds, 22);
      assert.equal(session.creditsCost, 33);
      assert.equal(session.startedAtMs, T0);
      assert.equal(emu.balance(), 967);
    });

    it('ends with client_reconnect_timeout when nobody reconnects, billing up to the drop', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const { client, liveId } = await liveSession(env);
      await clock.advance(15_000); // silent client → terminated at 15 s
      assert.equal((await client.closedWithin()).code, 1006);
      await clock.advance(9_999);
      assert.equal(emu.getSession(liveId)!.status, 'on_live');
      await clock.advance(1);
      const session = emu.getSession(liveId)!;
      assert.equal(session.status, 'ending');
      assert.equal(session.hangupReason, 'client_reconnect_timeout');
      assert.equal(session.endedAtMs, T0 + 15_000);
      assert.equal(session.billedSeconds, 16);
      assert.equal(session.creditsCost, 24);
      assert.equal(emu.balance(), 976, 'credits charged during the grace window are refunded');
      // A late reconnect learns why the session ended.
      const late = await connectAndInit(emu, liveId);
      assert.deepEqual(late.ack, { type: 6, payload: { hangup: { hangup_reason: 'client_reconnect_timeout' } } });
      assert.equal((await late.client.closedWithin()).code, 1000);
    });

    it('ends with client_reconnect_timeout when a new socket opens but never sends conn_init', async (t) => {
      const env = await setup(t, { reconnectGraceMs: 5_000 });
      const { emu, clock, lines } = env;
      const { client, liveId } = await liveSession(env);
      client.ws.terminate();
      await waitFor(socketClosedLogged(lines, liveId), 'the server to notice the drop');
      const mute = await TestClient.connect(emu, liveId);
      await clock.advance(4_999);
      await mute.expectSilence(30);
      await clock.advance(1);
      // The grace timer (armed at the drop) fires before the new socket's first ping: no ping follows the hangup.
      assert.deepEqual(await mute.nextJson(), { type: 6, payload: { hangup: { hangup_reason: 'client_reconnect_timeout' } } });
      assert.equal((await mute.closedWithin()).code, 1000);
      assert.equal(emu.getSession(liveId)!.billedSeconds, 0);
    });

    // A socket that holds its conn_init (a pre-opened spare session).
    it('keeps a socket without conn_init open while the client answers pings, then goes live on a late conn_init', async (t) => {
      const env = await setup(t, { warmupMs: { audio: 0, video: 2_500 } });
      const { emu, clock } = env;
      const created = await createSession(emu, 'video');
      const liveId: string = created.live.id;
      const client = await TestClient.connect(emu, liveId);
      for (let i = 1; i <= 8; i++) {
        await clock.advance(5_000);
        assert.equal((await client.nextJson()).type, 3, `ping ${i}`);
        client.pong(i); // the keep-alive: 40 s held, far beyond the 15 s silence limit
        await waitFor(() => emu.getSession(liveId)!.clientMessages.length === i, `pong ${i} to arrive`);
      }
      assert.equal(emu.getSession(liveId)!.status, 'waiting');
      client.connInit();
      assert.deepEqual(await client.nextJson(), ACK_OK, 'warm-up (2.5 s) is long over: live on the first conn_init');
      const session = emu.getSession(liveId)!;
      assert.equal(session.status, 'on_live');
      assert.equal(session.connInits, 1);
      assert.equal(session.notReadyAnswers, 0);
      assert.deepEqual(session.clientMessages.map((m) => m.type), [4, 4, 4, 4, 4, 4, 4, 4, 1]);
      assert.deepEqual(session.clientMessages.map((m) => m.seq_id), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it('expires a session whose socket never sent conn_init after sessionTtlMs: closes the socket, bills nothing, then 404', async (t) => {
      const env = await setup(t, { sessionTtlMs: 20_000 });
      const { emu, clock } = env;
      const created = await createSession(emu, 'audio');
      const liveId: string = created.live.id;
      const client = await TestClient.connect(emu, liveId);
      for (let i = 1; i <= 3; i++) {
        await clock.advance(5_000);
        assert.equal((await client.nextJson()).type, 3);
        client.pong(i);
        await waitFor(() => emu.getSession(liveId)!.clientMessages.length === i, `pong ${i} to arrive`);
      }
      assert.equal(emu.getSession(liveId)!.status, 'waiting');
      await clock.advance(5_000); // 20 s: the TTL (made at create) fires before the socket's fourth ping
      assert.deepEqual(await client.closedWithin(), { code: 1000, reason: 'session expired' });
      assert.equal(emu.getSession(liveId), undefined);
      assert.equal((await api(emu, 'GET', `/lives/${liveId}`)).status, 404);
      assert.equal(await handshakeStatus(emu, liveId), 404);
      assert.equal(emu.balance(), 1000);
    });

    it('a hangup on a socket that never sent conn_init ends the session unbilled', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const created = await createSession(emu, 'audio');
      const liveId: string = created.live.id;
      const client = await TestClient.connect(emu, liveId);
      await clock.advance(5_000);
      assert.equal((await client.nextJson()).type, 3);
      client.pong();
      client.hangup('user_end');
      assert.equal((await client.closedWithin()).code, 1000);
      const session = emu.getSession(liveId)!;
      assert.equal(session.status, 'ending');
      assert.equal(session.hangupReason, 'user_end');
      assert.equal(session.connInits, 0);
      assert.equal(session.billedSeconds, 0);
      assert.equal(emu.balance(), 1000);
    });

    it('replaces an older socket of the same session with a newer one', async (t) => {
      const env = await setup(t);
      const { emu } = env;
      const { client, liveId } = await liveSession(env);
      const second = await connectAndInit(emu, liveId);
      assert.deepEqual(second.ack, ACK_OK);
      assert.equal((await client.closedWithin()).code, 1000);
      assert.equal(emu.getSession(liveId)!.status, 'on_live');
      assert.equal(emu.getSession(liveId)!.socketsOpened, 2);
    });
  });

  describe('ending the call (spec §6, §8)', () => {
    it('records a client hangup, closes the socket and bills 11 s live as 12 s / 18 credits after ending → ended', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const { client, liveId } = await liveSession(env);
      await clock.advance(11_000);
      while ((await client.nextJson()).type !== 3) {
        /* skip to the pings */
      }
      client.hangup('user_end');
      assert.equal((await client.closedWithin()).code, 1000);
      let session = emu.getSession(liveId)!;
      assert.equal(session.status, 'ending');
      assert.equal(session.hangupReason, 'user_end');
      assert.equal(emu.liveCount(), 0);
      await clock.advance(299);
      assert.equal(emu.getSession(liveId)!.status, 'ending');
      await clock.advance(1);
      session = emu.getSession(liveId)!;
      assert.equal(session.status, 'ended');
      assert.deepEqual(session.clientMessages, [
        { type: 1, seq_id: 1 },
        { type: 5, seq_id: 2 },
      ]);
      const res = await api(emu, 'GET', `/lives/${liveId}`);
      assert.equal(res.body.live.status, 'ended');
      assert.equal(res.body.live.billed_seconds, 12);
      assert.equal(res.body.live.credits_cost, 18);
      assert.equal(res.body.live.started_at, T0_S);
      assert.equal(res.body.live.ended_at, String(T0 / 1000 + 11));
      assert.equal(emu.balance(), 982);
    });

    it('reports running billing figures while live', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const { liveId } = await liveSession(env);
      await clock.advance(3_500);
      const res = await api(emu, 'GET', `/lives/${liveId}`);
      assert.equal(res.body.live.status, 'on_live');
      assert.equal(res.body.live.billed_seconds, 4);
      assert.equal(res.body.live.credits_cost, 6);
      assert.equal(res.body.live.started_at, T0_S);
      assert.equal(res.body.live.ended_at, null);
      assert.equal(emu.balance(), 994);
    });

    it('hangs up with credit_insufficient when 45 credits run out after 30 s', async (t) => {
      const env = await setup(t, { clientSilenceLimitMs: 60_000 });
      const { emu, clock } = env;
      emu.setBalance(DEMO_API_KEY, 45);
      const { client, liveId } = await liveSession(env);
      await clock.advance(29_999);
      assert.equal(emu.getSession(liveId)!.status, 'on_live');
      assert.equal(emu.balance(), 0);
      await clock.advance(1);
      const frames: any[] = [];
      for (;;) {
        const f = await client.nextJson();
        frames.push(f);
        if (f.type === 6) break;
      }
      assert.deepEqual(frames.at(-1), { type: 6, payload: { hangup: { hangup_reason: 'credit_insufficient' } } });
      assert.deepEqual(frames.slice(0, -1).map((f) => f.payload.ping.ts), [5, 10, 15, 20, 25, 30].map((s) => T0 + s * 1000));
      assert.equal((await client.closedWithin()).code, 1000);
      const session = emu.getSession(liveId)!;
      assert.equal(session.hangupReason, 'credit_insufficient');
      assert.equal(session.billedSeconds, 30);
      assert.equal(session.creditsCost, 45);
      assert.equal(emu.balance(), 0);
    });

    it('hangs up with credit_insufficient at the next 2-second unit when the balance is emptied mid-call', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const { client, liveId } = await liveSession(env);
      await clock.advance(5_000);
      emu.setBalance(DEMO_API_KEY, 0);
      await clock.advance(1_000);
      assert.deepEqual(await client.nextJson(), { type: 3, payload: { ping: { ts: T0 + 5_000 } } });
      assert.deepEqual(await client.nextJson(), { type: 6, payload: { hangup: { hangup_reason: 'credit_insufficient' } } });
      const session = emu.getSession(liveId)!;
      assert.equal(session.billedSeconds, 6);
      assert.equal(session.creditsCost, 9);
    });

    it('hangs up with timeout at live_duration', async (t) => {
      const env = await setup(t, { liveDurationS: 20, pingIntervalMs: 60_000, clientSilenceLimitMs: 60_000 });
      const { emu, clock } = env;
      const { client, liveId, created } = await liveSession(env);
      assert.equal(created.live.live_duration, 20);
      await clock.advance(19_999);
      await client.expectSilence();
      await clock.advance(1);
      assert.deepEqual(await client.nextJson(), { type: 6, payload: { hangup: { hangup_reason: 'timeout' } } });
      assert.equal((await client.closedWithin()).code, 1000);
      const session = emu.getSession(liveId)!;
      assert.equal(session.hangupReason, 'timeout');
      assert.equal(session.billedSeconds, 20);
      assert.equal(session.creditsCost, 30);
      assert.equal(emu.balance(), 970);
    });

    it('forceHangup sends type 6 with the reason, then closes', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const { client, liveId } = await liveSession(env);
      await clock.advance(1_000);
      emu.forceHangup(liveId, 'audit_violation');
      assert.deepEqual(await client.nextJson(), { type: 6, payload: { hangup: { hangup_reason: 'audit_violation' } } });
      const closed = await client.closedWithin();
      assert.equal(closed.code, 1000);
      assert.equal(closed.reason, 'audit_violation');
      assert.equal(emu.getSession(liveId)!.hangupReason, 'audit_violation');
      assert.equal(emu.getSession(liveId)!.billedSeconds, 2);
    });

    it('a hangup while still waiting ends the session without billing', async (t) => {
      const env = await setup(t);
      const { emu } = env;
      const created = await createSession(emu, 'video');
      const { client, ack } = await connectAndInit(emu, created.live.id);
      assert.deepEqual(ack, ackFail('NOT_READY'));
      client.hangup('user_end');
      assert.equal((await client.closedWithin()).code, 1000);
      const session = emu.getSession(created.live.id)!;
      assert.equal(session.status, 'ending');
      assert.equal(session.hangupReason, 'user_end');
      assert.equal(session.billedSeconds, 0);
      assert.equal(emu.balance(), 1000);
    });
  });

  describe('strictness about client frames (spec §6, §8)', () => {
    const violations: Array<{ name: string; send: (c: TestClient) => void; code: number }> = [
      { name: 'a foreign live_id', send: (c) => c.send(1, { conn_init: { version: 1 } }, { live_id: 'someone-else' }), code: 1008 },
      { name: 'a first seq_id other than 1', send: (c) => c.send(1, { conn_init: { version: 1 } }, { seq_id: 2 }), code: 1008 },
      {
        name: 'a seq_id that does not increase',
        send: (c) => {
          c.connInit();
          c.send(4, { pong: {} }, { seq_id: 1 });
        },
        code: 1008,
      },
      { name: 'a first frame of unknown type before conn_init', send: (c) => c.send(7, { note: {} }), code: 1008 },
      { name: 'malformed JSON', send: (c) => c.ws.send('{"type":1,'), code: 1008 },
      { name: 'a frame without payload', send: (c) => c.ws.send(JSON.stringify({ type: 1, live_id: c.liveId, seq_id: 1 })), code: 1008 },
      { name: 'conn_init version 2', send: (c) => c.send(1, { conn_init: { version: 2 } }), code: 1008 },
      { name: 'a hangup without a reason', send: (c) => c.send(5, { hangup: {} }), code: 1008 },
      { name: 'a binary frame', send: (c) => c.ws.send(Buffer.from([1, 2, 3])), code: 1003 },
      { name: 'a frame over 64 KB', send: (c) => c.send(4, { pong: { pad: 'x'.repeat(65 * 1024) } }), code: 1009 },
    ];
    for (const v of violations) {
      it(`closes the socket with ${v.code} for ${v.name}`, async (t) => {
        const { emu } = await setup(t);
        const created = await createSession(emu);
        const client = await TestClient.connect(emu, created.live.id);
        v.send(client);
        assert.equal((await client.closedWithin()).code, v.code);
      });
    }

    it('closes with 1008 on a second conn_init on the same socket', async (t) => {
      const { emu } = await setup(t);
      const created = await createSession(emu, 'video');
      const { client, ack } = await connectAndInit(emu, created.live.id);
      assert.deepEqual(ack, ackFail('NOT_READY'));
      client.connInit();
      assert.equal((await client.closedWithin()).code, 1008);
    });

    it('ignores unknown message types but records them and counts them as alive', async (t) => {
      const env = await setup(t);
      const { emu } = env;
      const { client, liveId } = await liveSession(env);
      client.send(42, { anything: true });
      client.send(3, { ping: {} }, { seq_id: 7 });
      await waitFor(() => emu.getSession(liveId)!.clientMessages.length === 3, 'the frames to arrive');
      await client.expectSilence(30);
      assert.equal(client.isClosed, false);
      assert.deepEqual(emu.getSession(liveId)!.clientMessages, [
        { type: 1, seq_id: 1 },
        { type: 42, seq_id: 2 },
        { type: 3, seq_id: 7 },
      ]);
    });
  });

  describe('fault knobs', () => {
    it('latencyMs delays every HTTP answer and every server frame on the clock', async (t) => {
      const env = await setup(t, { latencyMs: 500 });
      const { emu, clock } = env;
      let settled = false;
      const pending = api(emu, 'POST', '/lives', { body: createBody() }).then((r) => {
        settled = true;
        return r;
      });
      await realDelay(60);
      assert.equal(settled, false);
      await clock.advance(499);
      await realDelay(30);
      assert.equal(settled, false);
      await clock.advance(1);
      const created = await pending;
      assert.equal(created.status, 200);

      // The handshake answer (101) is delayed too: the socket opens at +1000, not before.
      let opened = false;
      const connecting = TestClient.connect(emu, created.body.live.id).then((c) => {
        opened = true;
        return c;
      });
      await waitFor(() => clock.pendingCount >= 1, 'the delayed handshake to be scheduled');
      await realDelay(30);
      assert.equal(opened, false);
      await clock.advance(500);
      const client = await connecting;
      client.connInit();
      await waitFor(() => emu.getSession(created.body.live.id)!.connInits === 1, 'conn_init to arrive');
      await client.expectSilence();
      await clock.advance(500);
      assert.deepEqual(await client.nextJson(), ACK_OK);
      // The socket opened at +1000, so its first ping is made at +6000 and leaves at +6500.
      await clock.advance(4_500);
      await client.expectSilence(30);
      await clock.advance(500);
      assert.deepEqual(await client.nextJson(), { type: 3, payload: { ping: { ts: T0 + 6_000 } } });
    });

    it('silent stops every server frame on live sockets, pings included, until switched off', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const { client, liveId } = await liveSession(env);
      emu.knobs.silent = true;
      await clock.advance(5_000);
      client.pong();
      await waitFor(() => emu.getSession(liveId)!.clientMessages.length === 2, 'the pong');
      await clock.advance(5_000);
      await client.expectSilence();
      assert.equal(client.isClosed, false);
      emu.knobs.silent = false;
      await clock.advance(5_000);
      assert.deepEqual(await client.nextJson(), { type: 3, payload: { ping: { ts: T0 + 15_000 } } });
    });

    it('dropAfterMs terminates the live socket once per session', async (t) => {
      const env = await setup(t, { dropAfterMs: 3_000, pingIntervalMs: 60_000 });
      const { emu, clock, lines } = env;
      const { client, liveId } = await liveSession(env);
      await clock.advance(2_999);
      await realDelay(20);
      assert.equal(client.isClosed, false);
      await clock.advance(1);
      assert.equal((await client.closedWithin()).code, 1006);
      await waitFor(socketClosedLogged(lines, liveId), 'the drop to be logged');
      const again = await connectAndInit(emu, liveId);
      assert.deepEqual(again.ack, ACK_OK);
      await clock.advance(6_000);
      await realDelay(20);
      assert.equal(again.client.isClosed, false);
      assert.equal(emu.getSession(liveId)!.status, 'on_live');
    });

    it('dropConnection terminates the socket abruptly and the grace window starts', async (t) => {
      const env = await setup(t);
      const { emu, clock } = env;
      const { client, liveId } = await liveSession(env);
      emu.dropConnection(liveId);
      assert.equal((await client.closedWithin()).code, 1006);
      await clock.advance(10_000);
      assert.equal(emu.getSession(liveId)!.hangupReason, 'client_reconnect_timeout');
      assert.equal(emu.getSession(liveId)!.billedSeconds, 0);
    });

    it('garbageFrames sends malformed JSON, a binary frame, an unknown type and (once) an oversized frame before the ack', async (t) => {
      const env = await setup(t, { garbageFrames: true });
      const { emu, clock } = env;
      const created = await createSession(emu);
      const liveId: string = created.live.id;
      const client = await TestClient.connect(emu, liveId);
      client.connInit();
      const malformed = await client.next();
      assert.equal(malformed.binary, false);
      assert.equal(malformed.json, undefined);
      assert.equal((await client.next()).binary, true);
      assert.deepEqual((await client.next()).json, { type: 99, payload: { note: 'unknown message type' } });
      const oversized = await client.next();
      assert.ok(Buffer.byteLength(oversized.text) > 64 * 1024);
      assert.equal(oversized.json.type, 98);
      assert.deepEqual(await client.nextJson(), ACK_OK);
      await clock.advance(5_000);
      assert.deepEqual(await client.nextJson(), { type: 99, payload: { note: 'unknown message type' } });
      assert.equal((await client.nextJson()).type, 3);

      client.ws.close();
      await client.closedWithin();
      const again = await TestClient.connect(emu, liveId);
      again.connInit();
      const kinds: string[] = [];
      for (;;) {
        const m = await again.next();
        kinds.push(m.binary ? 'binary' : m.json === undefined ? 'malformed' : `type ${m.json.type}`);
        if (m.json?.type === 2) break;
      }
      assert.deepEqual(kinds, ['malformed', 'binary', 'type 99', 'type 2']);
    });

    it("ackShape 'flat' puts success and error_code directly in the payload", async (t) => {
      const env = await setup(t, { ackShape: 'flat' });
      const { emu } = env;
      const video = await createSession(emu, 'video');
      assert.deepEqual((await connectAndInit(emu, video.live.id)).ack, { type: 2, payload: { success: false, error_code: 'NOT_READY' } });
      const audio = await createSession(emu, 'audio');
      assert.deepEqual((await connectAndInit(emu, audio.live.id)).ack, { type: 2, payload: { success: true } });
    });

    it('warmupMs is configurable per call mode', async (t) => {
      const env = await setup(t, { warmupMs: { audio: 1_000, video: 0 } });
      const { emu } = env;
      const audio = await createSession(emu, 'audio');
      assert.deepEqual((await connectAndInit(emu, audio.live.id)).ack, ackFail('NOT_READY'));
      const video = await createSession(emu, 'video');
      assert.deepEqual((await connectAndInit(emu, video.live.id)).ack, ACK_OK);
    });
  });
});

describe('emulator lifecycle', () => {
  it('close() terminates sockets, clears every timer and stops listening', async () => {
    const clock = new FakeClock(T0);
    const emu = await startEmulator({ clock });
    const created = await createSession(emu, 'video');
    const waiting = await TestClient.connect(emu, created.live.id);
    const env = { emu, clock, lines: [] };
    const { client } = await liveSession(env);
    await clock.advance(1_000);
    assert.ok(clock.pendingCount > 0);
    await emu.close();
    assert.equal(clock.pendingCount, 0);
    assert.equal((await client.closedWithin()).code, 1006);
    assert.equal((await waiting.closedWithin()).code, 1006);
    await assert.rejects(fetch(`${emu.baseUrl}/live/v1/voices`, { headers: { authorization: `Token ${emu.apiKey}` } }));
    await emu.close(); // idempotent
  });

  it('close() during a latency-delayed answer leaves no timer behind', async () => {
    const clock = new FakeClock(T0);
    const emu = await startEmulator({ clock, knobs: { latencyMs: 1_000 } });
    const pending = api(emu, 'GET', '/voices').then(
      () => 'answered',
      () => 'failed',
    );
    await waitFor(() => clock.pendingCount === 1, 'the delayed answer to be scheduled');
    await emu.close();
    assert.equal(clock.pendingCount, 0);
    assert.equal(await pending, 'failed');
  });

  it('runs on the system clock by default', async () => {
    const emu = await startEmulator();
    try {
      const created = await createSession(emu);
      const { ack } = await connectAndInit(emu, created.live.id);
      assert.deepEqual(ack, ACK_OK);
      assert.ok(Math.abs(Number((await api(emu, 'GET', `/lives/${created.live.id}`)).body.live.created_at) - Date.now() / 1000) < 5);
    } finally {
      await emu.close();
    }
  });
});
