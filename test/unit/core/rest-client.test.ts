/**
 * ServiceClient (rest-client.ts), the REST half of the service: what each call sends (method, path, body,
 * the key header on the direct surface and none on the gateway), which calls are retried (a read, once,
 * after a network error; never a create), the request timeout on a fake clock, cancellation, the exact
 * error (code, message, status, details, cause) a person sees for each kind of answer, the log lines it
 * writes (never the key or an RTC token), and the bound on an answer's size.
 *
 * Two ways to play the service: a loopback server on port 0 (`client()`, `handler`, `seen`) pins the wire
 * format; an injected fetch (`setup(answer)`) gives each answer exactly, for the error and log wording.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { createLogger, redact } from '../../../electron/core/log.ts';
import type { CreateSessionRequest } from '../../../electron/core/protocol.ts';
import { MAX_RESPONSE_BYTES, readCappedText, ServiceClient, type ServiceClientOptions } from '../../../electron/core/rest-client.ts';
import type { ServiceTarget } from '../../../electron/core/session-types.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { rejection } from '../../helpers/rejection.ts';
import { realDelay, until } from '../../helpers/until.ts';

const KEY = 'sk_test_REST_5f1a9c7e2b';
const RTC_TOKEN = 'rtc-token-007-c0ffee-secret';
const TIMEOUT_MS = 5_000;
/** An address nothing listens on; the injected fetch never goes there. */
const BASE = 'http://127.0.0.1:9';

const REQUEST: CreateSessionRequest = {
  call_mode: 'video',
  moderation: 'disabled',
  extra_motion: true,
  avatar: { persona: 'A calm museum guide.', image_uri: 'https://cdn.example.test/ava.png', name: 'Ava' },
};

const CREATED = {
  live: { id: 'live-1', status: 'waiting', live_duration: 600, call_mode: 'video' },
  rtc: { app_id: 'app-1', channel_id: 'live-user-live-1', user_id: 'live-user-c1-live-1', token: RTC_TOKEN, token_expire_at: 1700003600 },
};

const created = (token: string) => ({
  live: { id: 'live-1', status: 'waiting', live_duration: 600, call_mode: 'audio' },
  rtc: { app_id: 'app', channel_id: 'ch', user_id: 'u', token, token_expire_at: 1 },
});

const LIVE = {
  id: 'live 1/x',
  status: 'ended',
  call_mode: 'video',
  avatar: { name: 'Ava', voice: 'Tina', persona: 'A calm museum guide.' },
  billed_seconds: 12,
  credits_cost: 18,
  created_at: 1700000000,
  started_at: '1700000002',
  ended_at: '1700000013',
};

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen, index: number) => void;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(text);
}

// The loopback server: each test sets `handler` and reads what arrived in `seen`.
let server: Server;
let base: string;
let seen: Seen[] = [];
let handler: Handler;
let clock: FakeClock;

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(s);
      // No keep-alive: a pooled socket that a later test's cleanup closes would fail that test's request.
      res.setHeader('Connection', 'close');
      handler(req, res, s, seen.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
  clock = new FakeClock();
  handler = (_req, res) => json(res, 500, { error: { code: 'unset', message: 'no handler set' } });
});

const direct = (): ServiceTarget => ({ surface: 'direct', baseUrl: base, apiKey: KEY });
const gateway = (): ServiceTarget => ({ surface: 'gateway', gatewayUrl: base });
/** A client of the loopback server, on the test's FakeClock. */
const client = (extra: Partial<ServiceClientOptions> = {}) =>
  new ServiceClient({ target: direct(), clock, requestTimeoutMs: TIMEOUT_MS, ...extra });

// The injected fetch: each call is recorded in `sent` and answered by `answer`.
interface Sent {
  url: string;
  init: RequestInit;
}
type Answer = (url: string, init: RequestInit) => Response | Promise<Response>;

/** A client whose fetch answers with `answer`, on its own FakeClock, logging into `lines`. */
function setup(answer: Answer, options: { target?: ServiceTarget; timeoutMs?: number } = {}) {
  const sent: Sent[] = [];
  const logger = recordingLogger();
  const clock = new FakeClock();
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    sent.push({ url: String(input), init: init ?? {} });
    return answer(String(input), init ?? {});
  }) as typeof fetch;
  const client = new ServiceClient({
    target: options.target ?? { surface: 'direct', baseUrl: BASE, apiKey: KEY },
    fetch: fetchFn,
    clock,
    logger,
    requestTimeoutMs: options.timeoutMs ?? TIMEOUT_MS,
  });
  return { client, sent, lines: logger.lines, clock };
}

const reply = (status: number, body: string | null, headers: Record<string, string> = {}) => () => new Response(body, { status, headers });
const jsonReply = (status: number, body: unknown) => reply(status, JSON.stringify(body), { 'content-type': 'application/json' });

/** A fetch that never answers until its signal aborts, then rejects with the signal's reason (as undici does). */
const hang: Answer = (_url, init) =>
  new Promise<Response>((_resolve, reject) => {
    const signal = init.signal!;
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/** A response whose status fetch itself never produces (< 200); a custom fetch could, and the client must not misfile it. */
function oddStatus(status: number, text: string, headers: Record<string, string> = {}): Response {
  const real = new Response(text, { headers });
  return { status, headers: real.headers, body: real.body } as unknown as Response;
}

describe('ServiceClient', () => {
  describe('constructing', () => {
    it('rejects an invalid target with invalid_config', () => {
      assert.throws(
        () => new ServiceClient({ target: { surface: 'direct', baseUrl: 'ftp://h.test', apiKey: KEY } }),
        (err: unknown) => err instanceof AvatarError && err.code === 'invalid_config',
      );
      assert.throws(
        () => new ServiceClient({ target: { surface: 'gateway', gatewayUrl: 'https://gw.test', apiKey: KEY } as unknown as ServiceTarget }),
        (err: unknown) => err instanceof AvatarError && err.code === 'invalid_config',
      );
    });
    it('rejects a non-positive request timeout with invalid_config', () => {
      for (const requestTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        assert.throws(
          () => new ServiceClient({ target: direct(), requestTimeoutMs }),
          (err: unknown) => err instanceof AvatarError && err.code === 'invalid_config' && /requestTimeoutMs/.test(err.message),
        );
      }
    });
  });

  describe('createSession', () => {
    it('on direct, POSTs the JSON body with Content-Type and Authorization: Token <key>, and parses the answer', async () => {
      handler = (_req, res) => json(res, 200, CREATED);
      const res = await client().createSession(REQUEST);
      assert.equal(seen.length, 1);
      const s = seen[0]!;
      assert.equal(s.method, 'POST');
      assert.equal(s.url, '/live/v1/lives');
      assert.equal(s.headers['content-type'], 'application/json');
      assert.equal(s.headers.authorization, `Token ${KEY}`);
      assert.equal(s.headers.accept, 'application/json');
      assert.deepEqual(JSON.parse(s.body), REQUEST);
      assert.equal(res.live.id, 'live-1');
      assert.equal(res.live.live_duration, 600);
      assert.equal(res.rtc.token, RTC_TOKEN);
      assert.equal(res.rtc.token_expire_at, '1700003600');
      assert.equal(clock.pendingCount, 0, 'the request timer is cleared');
    });
    it('on the gateway, POSTs to /api/lives without any Authorization header', async () => {
      handler = (_req, res) => json(res, 200, CREATED);
      const res = await client({ target: gateway() }).createSession(REQUEST);
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.method, 'POST');
      assert.equal(seen[0]!.url, '/api/lives');
      assert.equal(seen[0]!.headers.authorization, undefined);
      assert.equal(seen[0]!.headers['content-type'], 'application/json');
      assert.equal(res.live.id, 'live-1');
    });
    it('on the gateway, sends the per-kiosk gateway headers on every request and the socket handshake', async () => {
      // The spec leaves customer authentication to the integrator: a device token identifies this kiosk.
      handler = (_req, res) => json(res, 200, CREATED);
      const c = client({ target: { surface: 'gateway', gatewayUrl: base, headers: { 'X-Device-Token': 'dev-kiosk-17-token' } } });
      await c.createSession(REQUEST);
      assert.equal(seen[0]!.headers['x-device-token'], 'dev-kiosk-17-token');
      assert.equal(seen[0]!.headers.authorization, undefined);
      assert.deepEqual(c.socketRequest('l1').headers, { 'X-Device-Token': 'dev-kiosk-17-token' });
      for (const headers of [{ Host: 'evil.test' }, { 'Bad Name': 'x' }, { 'X-Token': 'two\nlines' }] as Record<string, string>[]) {
        assert.throws(() => client({ target: { surface: 'gateway', gatewayUrl: base, headers } }), (e: unknown) => e instanceof AvatarError && e.code === 'invalid_config');
      }
    });
    it('rejects an invalid body with invalid_request before sending anything', async () => {
      handler = (_req, res) => json(res, 200, CREATED);
      const bad = { call_mode: 'video', avatar: { persona: '', image_uri: 'https://h.test/a.png' } } as CreateSessionRequest;
      const err = await rejection(client().createSession(bad));
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.details?.field, 'avatar.persona');
      assert.match(err.message, /session request is invalid.*persona is required/);
      const badMode = { ...REQUEST, call_mode: 'hologram' } as unknown as CreateSessionRequest;
      assert.equal((await rejection(client().createSession(badMode))).code, 'invalid_request');
      await realDelay(5);
      assert.equal(seen.length, 0);
    });
    it('is sent exactly once when the server never answers and the request times out', async () => {
      handler = () => {}; // never answers
      const p = client().createSession(REQUEST);
      p.catch(() => {});
      await until(() => seen.length === 1, { message: 'the request did not arrive' });
      await clock.advance(TIMEOUT_MS + 1);
      const err = await rejection(p);
      assert.equal(err.code, 'timeout');
      assert.match(err.message, /did not answer within 5 s \(creating a session\)/);
      await realDelay(20);
      assert.equal(seen.length, 1, 'never retried');
      assert.equal(clock.pendingCount, 0);
    });
    it('does not time out before requestTimeoutMs has passed', async () => {
      let respond: (() => void) | undefined;
      handler = (_req, res) => (respond = () => json(res, 200, CREATED));
      const p = client().createSession(REQUEST);
      p.catch(() => {});
      await until(() => seen.length === 1);
      await clock.advance(TIMEOUT_MS - 1);
      assert.equal(clock.pendingCount, 1);
      respond!();
      const res = await p;
      assert.equal(res.live.id, 'live-1');
      assert.equal(clock.pendingCount, 0);
    });
    it('is not retried after a network failure (the server saw exactly 1 request)', async () => {
      handler = (req) => req.socket.destroy();
      const err = await rejection(client().createSession(REQUEST));
      assert.equal(err.code, 'network');
      await realDelay(20);
      assert.equal(seen.length, 1);
    });
    it('registers the RTC token as a short-lived secret: masked at once, forgotten after 256 newer ones', async () => {
      let n = 0;
      const first = 'rtc-first-token-e1d2c3';
      const { client } = setup(() => new Response(JSON.stringify(created(n++ === 0 ? first : `rtc-later-token-${n}-abcdef`)), { status: 200 }));
      await client.createSession(REQUEST);
      assert.equal(redact(`t=${first}`), 't=***');
      for (let i = 0; i < 256; i++) await client.createSession(REQUEST);
      assert.equal(redact(`t=${first}`), `t=${first}`, 'a long-lived secret would be kept (and scanned) forever');
    });
  });

  describe('querySession', () => {
    it('GETs the encoded session path without a body and returns the live object', async () => {
      handler = (_req, res) => json(res, 200, { live: LIVE, extra: true });
      const live = await client().querySession('live 1/x');
      assert.equal(seen[0]!.method, 'GET');
      assert.equal(seen[0]!.url, '/live/v1/lives/live%201%2Fx');
      assert.equal(seen[0]!.headers.authorization, `Token ${KEY}`);
      assert.equal(seen[0]!.headers['content-type'], undefined);
      assert.equal(seen[0]!.body, '');
      assert.equal(live.id, 'live 1/x');
      assert.equal(live.status, 'ended');
      assert.equal(live.billed_seconds, 12);
      assert.equal(live.credits_cost, 18);
      assert.equal(live.created_at, '1700000000');
      assert.equal(live.avatar?.voice, 'Tina');
    });
    it('on the gateway, GETs /api/lives/{id} without Authorization', async () => {
      handler = (_req, res) => json(res, 200, { live: { id: 'l2', status: 'on_live' } });
      const live = await client({ target: gateway() }).querySession('l2');
      assert.equal(seen[0]!.url, '/api/lives/l2');
      assert.equal(seen[0]!.headers.authorization, undefined);
      assert.equal(live.status, 'on_live');
    });
    it('rejects an empty id with invalid_request before sending', async () => {
      const err = await rejection(client().querySession('  '));
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.details?.field, 'liveId');
      assert.equal(seen.length, 0);
    });
    it('refuses a non-string or blank session id before sending', async () => {
      const { client, sent } = setup(jsonReply(200, {}));
      for (const liveId of [42 as unknown as string, '   ']) {
        const error = await rejection(client.querySession(liveId));
        assert.equal(error.code, 'invalid_request');
        assert.equal(error.message, 'A session id (live_id) is required to query a session.');
        assert.deepEqual(error.details, { field: 'liveId' });
      }
      assert.equal(sent.length, 0);
    });
    it('retries once, immediately, after a network error and returns the second answer', async () => {
      handler = (req, res, _s, index) => (index === 0 ? req.socket.destroy() : json(res, 200, { live: LIVE }));
      const live = await client().querySession('live-1');
      assert.equal(live.status, 'ended');
      assert.equal(seen.length, 2);
      assert.equal(seen[1]!.url, '/live/v1/lives/live-1');
    });
    it('fails with network after the single retry fails too (2 requests, no more)', async () => {
      handler = (req) => req.socket.destroy();
      const err = await rejection(client().querySession('live-1'));
      assert.equal(err.code, 'network');
      await realDelay(20);
      assert.equal(seen.length, 2);
    });
    it('is not retried after a timeout', async () => {
      handler = () => {};
      const p = client().querySession('live-1');
      p.catch(() => {});
      await until(() => seen.length === 1);
      await clock.advance(TIMEOUT_MS);
      assert.equal((await rejection(p)).code, 'timeout');
      await realDelay(20);
      assert.equal(seen.length, 1);
    });
    it('is not retried after an HTTP error', async () => {
      handler = (_req, res) => json(res, 500, { message: 'boom' });
      assert.equal((await rejection(client().querySession('live-1'))).code, 'server');
      assert.equal(seen.length, 1);
    });
  });

  describe('cloneVoice and listVoices', () => {
    it('cloneVoice POSTs the JSON body to /live/v1/voices/clone and returns the voice', async () => {
      handler = (_req, res) => json(res, 200, { voice: 'my-voice', status: 'ready' });
      const res = await client().cloneVoice({ audio_url: 'https://h.test/s.mp3', voice: 'my-voice', language: 'en' });
      assert.equal(res.voice, 'my-voice');
      assert.equal(seen[0]!.method, 'POST');
      assert.equal(seen[0]!.url, '/live/v1/voices/clone');
      assert.equal(seen[0]!.headers['content-type'], 'application/json');
      assert.equal(seen[0]!.headers.authorization, `Token ${KEY}`);
      assert.deepEqual(JSON.parse(seen[0]!.body), { audio_url: 'https://h.test/s.mp3', voice: 'my-voice', language: 'en' });
    });
    it('cloneVoice rejects a missing voice name before sending', async () => {
      const err = await rejection(client().cloneVoice({ audio_url: 'https://h.test/s.mp3', voice: '' }));
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.details?.field, 'voice');
      assert.equal(seen.length, 0);
    });
    it('names the field of an invalid voice clone request, and the request when the whole value is wrong', async () => {
      const { client, sent } = setup(jsonReply(200, {}));
      const field = await rejection(client.cloneVoice({ audio_url: '', voice: 'v' }));
      assert.equal(field.code, 'invalid_request');
      assert.equal(field.message, 'The voice clone request is invalid (audio_url: audio_url is required).');
      assert.deepEqual(field.details, { field: 'audio_url' });
      const whole = await rejection(client.createSession(null as unknown as CreateSessionRequest));
      assert.equal(whole.code, 'invalid_request');
      assert.equal(whole.message, 'The session request is invalid (Invalid input: expected object, received null).');
      assert.equal(whole.details, undefined);
      assert.equal(sent.length, 0);
    });
    it('cloneVoice is not retried after a network error', async () => {
      handler = (req) => req.socket.destroy();
      assert.equal((await rejection(client().cloneVoice({ audio_url: 'https://h.test/s.mp3', voice: 'v' }))).code, 'network');
      await realDelay(20);
      assert.equal(seen.length, 1);
    });
    it('listVoices GETs /live/v1/voices and returns the list', async () => {
      handler = (_req, res) => json(res, 200, { voices: [{ voice: 'a' }, { voice: 'b', language: 'en' }] });
      const res = await client().listVoices();
      assert.deepEqual(res.voices.map((v) => v.voice), ['a', 'b']);
      assert.equal(seen[0]!.method, 'GET');
      assert.equal(seen[0]!.url, '/live/v1/voices');
    });
    it('clones a voice with POST, JSON body and the key header; lists voices with a bodiless GET', async () => {
      handler = (req, res) => (req.url === '/live/v1/voices/clone' ? json(res, 200, { voice: 'v-1' }) : json(res, 200, { voices: [{ voice: 'a' }] }));
      assert.deepEqual(await client().cloneVoice({ audio_url: 'https://a.test/v.mp3', voice: 'Mine' }), { voice: 'v-1' });
      assert.deepEqual(await client().listVoices(), { voices: [{ voice: 'a' }] });
      assert.equal(seen.length, 2);
      const [clone, list] = seen;
      assert.equal(clone!.method, 'POST');
      assert.equal(clone!.url, '/live/v1/voices/clone');
      assert.equal(clone!.headers.authorization, `Token ${KEY}`);
      assert.equal(clone!.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(clone!.body), { audio_url: 'https://a.test/v.mp3', voice: 'Mine' });
      assert.equal(list!.method, 'GET');
      assert.equal(list!.url, '/live/v1/voices');
      assert.equal(list!.headers.authorization, `Token ${KEY}`);
      assert.equal(list!.headers['content-type'], undefined, 'a GET has no body, so no Content-Type');
      assert.equal(list!.body, '');
    });
    it('listVoices on the gateway uses /api/voices', async () => {
      handler = (_req, res) => json(res, 200, { voices: [] });
      assert.deepEqual((await client({ target: gateway() }).listVoices()).voices, []);
      assert.equal(seen[0]!.url, '/api/voices');
      assert.equal(seen[0]!.headers.authorization, undefined);
    });
    it('listVoices retries once after a network error', async () => {
      handler = (req, res, _s, index) => (index === 0 ? req.socket.destroy() : json(res, 200, { voices: [{ voice: 'a' }] }));
      assert.equal((await client().listVoices()).voices.length, 1);
      assert.equal(seen.length, 2);
    });
  });

  describe('derive', () => {
    it('sends through the wrapped fetch, with the same target, timeout, clock and logger as the client it came from', async () => {
      const { client: base, sent, lines, clock } = setup(jsonReply(200, { live: LIVE }));
      const through: string[] = [];
      const derived = base.derive({
        wrapFetch: (inner) => (async (input: string | URL | Request, init?: RequestInit) => {
          through.push(String(input));
          return inner(input, init);
        }) as typeof fetch,
      });
      await derived.querySession('live-1');
      assert.deepEqual(through, [`${BASE}/live/v1/lives/live-1`]);
      assert.equal(sent.length, 1, 'the wrapper hands the request to the first client\'s own fetch');
      assert.equal(new Headers(sent[0]!.init.headers).get('authorization'), `Token ${KEY}`);
      await base.querySession('live-1');
      assert.equal(through.length, 1, 'the first client does not go through the wrapper');
      const logged = lines.length;
      assert.ok(logged > 0);
      await derived.querySession('live-1');
      assert.ok(lines.length > logged, "the derived client writes to the first client's log");

      // Its timeout runs on the first client's clock, after the first client's timeout.
      const slow = setup(hang);
      const p = slow.client.derive({}).querySession('live-1');
      p.catch(() => {});
      await until(() => slow.sent.length === 1);
      await slow.clock.advance(TIMEOUT_MS - 1);
      assert.equal(slow.clock.pendingCount, 1, 'still waiting 1 ms before the timeout');
      await slow.clock.advance(1);
      assert.equal((await rejection(p)).code, 'timeout');
      assert.equal(clock.pendingCount, 0);
    });
    it('writes to another logger when given one', async () => {
      const { client: base, lines } = setup(jsonReply(200, { live: LIVE }));
      const other = recordingLogger();
      await base.derive({ logger: other }).querySession('live-1');
      assert.equal(lines.length, 0);
      assert.ok(other.lines.length > 0);
    });
    it('on the direct surface, may use another key; the first client keeps its own', async () => {
      const { client: base, sent } = setup(jsonReply(200, { live: LIVE }));
      const other = base.derive({ apiKey: 'sk_other_0042_key' });
      await other.querySession('live-1');
      await base.querySession('live-1');
      assert.deepEqual(sent.map((s) => new Headers(s.init.headers).get('authorization')), ['Token sk_other_0042_key', `Token ${KEY}`]);
      assert.deepEqual(other.socketRequest('l1').headers, { Authorization: 'Token sk_other_0042_key' });
      assert.deepEqual(base.derive({}).socketRequest('l1').headers, { Authorization: `Token ${KEY}` });
    });
    it('on the gateway, adds no key: the gateway holds it', async () => {
      const { client: base, sent } = setup(jsonReply(200, { live: LIVE }), { target: { surface: 'gateway', gatewayUrl: BASE } });
      const derived = base.derive({ apiKey: 'sk_other_0042_key' });
      await derived.querySession('live-1');
      assert.equal(new Headers(sent[0]!.init.headers).get('authorization'), null);
      assert.equal(sent[0]!.url, `${BASE}/api/lives/live-1`);
      assert.deepEqual(derived.socketRequest('l1').headers, {});
      assert.equal(derived.target.surface, 'gateway');
    });
  });

  describe('socketRequest', () => {
    it('gives the ws:// URL and the Authorization header on direct, no key in the URL', () => {
      const r = client().socketRequest('live-1');
      assert.equal(r.url, `${base.replace('http:', 'ws:')}/live/ws/live/connect?live_id=live-1`);
      assert.deepEqual(r.headers, { Authorization: `Token ${KEY}` });
      assert.ok(!r.url.includes(KEY));
    });
    it('gives the gateway socket URL and no headers on the gateway', () => {
      const r = client({ target: gateway() }).socketRequest('live-1');
      assert.equal(r.url, `${base.replace('http:', 'ws:')}/api/ws?live_id=live-1`);
      assert.deepEqual(r.headers, {});
    });
  });

  describe('error mapping', () => {
    async function failWith(status: number, body: unknown, call: (c: ServiceClient) => Promise<unknown> = (c) => c.createSession(REQUEST), extra: Partial<ServiceClientOptions> = {}) {
      handler = (_req, res) => {
        if (typeof body === 'string') {
          res.writeHead(status, { 'Content-Type': 'text/html' });
          res.end(body);
        } else json(res, status, body);
      };
      const err = await rejection(call(client(extra)));
      assert.equal(err.status, status);
      return err;
    }
    const clone = (answer: Answer, target?: ServiceTarget) => rejection(setup(answer, target ? { target } : {}).client.cloneVoice({ audio_url: 'a', voice: 'v' }));

    describe('when the server answers 401', () => {
      it('fails with unauthorized and a message about the API key', async () => {
        const err = await failWith(401, { detail: 'Invalid token.' });
        assert.equal(err.code, 'unauthorized');
        assert.match(err.message, /API key was rejected.*HTTP 401/);
        assert.ok(!err.message.includes(KEY));
      });
      it('on the gateway, names the gateway and carries its message', async () => {
        const err = await failWith(401, { message: 'sign in first' }, undefined, { target: gateway() });
        assert.equal(err.code, 'unauthorized');
        assert.match(err.message, /gateway refused the request \(HTTP 401\).*sign in first/);
      });
    });
    it('never quotes the server on a direct 401 (it may echo the key)', async () => {
      const error = await clone(jsonReply(401, { error: { message: `Invalid token ${KEY}` } }));
      assert.equal(error.message, 'The API key was rejected by the avatar service (HTTP 401). Check the key in the settings.');
    });
    it('maps 403 on a query to forbidden, explaining the creator key rule', async () => {
      const err = await failWith(403, { detail: 'not the owner' }, (c) => c.querySession('live-1'));
      assert.equal(err.code, 'forbidden');
      assert.match(err.message, /different API key.*HTTP 403.*not the owner/);
    });
    it('words a 403 by operation and masks the key if the server echoes it', async () => {
      const error = await clone(jsonReply(403, { error: { message: `bad key ${KEY}` } }));
      assert.equal(error.code, 'forbidden');
      assert.equal(error.message, 'The avatar service refused access (HTTP 403). The service said: "bad key ***"');
      assert.ok(!error.message.includes(KEY));
    });
    it('maps 404 on a query to not_found naming the session', async () => {
      const err = await failWith(404, { detail: 'Not found.' }, (c) => c.querySession('live-9'));
      assert.equal(err.code, 'not_found');
      assert.match(err.message, /The session live-9 does not exist or has expired \(HTTP 404\)/);
    });
    it('says which session was not found, with a single space even when the id starts with one', async () => {
      const { client } = setup(reply(404, ''));
      const error = await rejection(client.querySession(' live-9'));
      assert.equal(error.code, 'not_found');
      assert.equal(error.message, 'The session live-9 does not exist or has expired (HTTP 404).');
      const plain = await rejection(client.querySession('live-8'));
      assert.equal(plain.message, 'The session live-8 does not exist or has expired (HTTP 404).');
    });
    it('maps 404 on create to not_found pointing at the service URL', async () => {
      const err = await failWith(404, '');
      assert.equal(err.code, 'not_found');
      assert.match(err.message, /Check the service URL/);
    });
    it('maps 402 to insufficient_credits', async () => {
      const err = await failWith(402, { error: { code: 'payment_required', message: 'Top up' } });
      assert.equal(err.code, 'insufficient_credits');
      assert.match(err.message, /not have enough credits.*45.*HTTP 402/);
      assert.equal(err.details?.serverCode, 'payment_required');
    });
    it('maps a 400 whose body mentions credits to insufficient_credits', async () => {
      const err = await failWith(400, { error: { code: 'bad_request', message: 'Insufficient credits: balance 12 < 45' } });
      assert.equal(err.code, 'insufficient_credits');
      assert.match(err.message, /Insufficient credits: balance 12 < 45/);
    });
    it('maps a 400 whose error code mentions balance to insufficient_credits', async () => {
      assert.equal((await failWith(400, { error: { code: 'LOW_BALANCE', message: 'nope' } })).code, 'insufficient_credits');
    });
    it('recognises low credits only on a 4xx other than 401 (or a 402), whatever the words', async () => {
      const credit = { error: { message: 'Insufficient balance' } };
      const cases: Array<[number, string]> = [
        [402, 'insufficient_credits'],
        [400, 'insufficient_credits'],
        [499, 'insufficient_credits'],
        [401, 'unauthorized'],
        [500, 'server'],
        [399, 'invalid_config'],
        [302, 'invalid_config'],
      ];
      for (const [status, code] of cases) {
        const error = await clone(jsonReply(status, credit));
        assert.equal(error.code, code, `HTTP ${status}`);
      }
      const byCode = await clone(jsonReply(409, { error: { code: 'CREDIT_LOW' } }));
      assert.equal(byCode.code, 'insufficient_credits');
      assert.equal(byCode.message, 'The account does not have enough credits to start (at least 45 are needed) (HTTP 409). Top up the account.');
    });
    it('maps a 400 {error: {message, field}} to invalid_request carrying the message and field', async () => {
      const err = await failWith(400, { error: { code: 'invalid_image', message: 'image_uri is not reachable', field: 'avatar.image_uri' } });
      assert.equal(err.code, 'invalid_request');
      assert.match(err.message, /rejected the session request \(HTTP 400\)\. The service said: "image_uri is not reachable"/);
      assert.deepEqual(err.details, { operation: 'createSession', serverCode: 'invalid_image', field: 'avatar.image_uri' });
    });
    it('names the rejected request per operation and keeps a string error.field only', async () => {
      const { client } = setup((url) => (url.endsWith('/voices') ? new Response(JSON.stringify({ error: { field: 5 } }), { status: 422 }) : new Response('', { status: 400 })));
      const list = await rejection(client.listVoices());
      assert.equal(list.message, 'The avatar service rejected the voice list request (HTTP 422).');
      assert.deepEqual(list.details, { operation: 'listVoices' });
      const query = await rejection(client.querySession('x'));
      assert.equal(query.message, 'The avatar service rejected the session query (HTTP 400).');
      const cloned = await clone(jsonReply(400, { error: { field: 'voice', message: 'taken' } }));
      assert.equal(cloned.message, 'The avatar service rejected the voice clone request (HTTP 400). The service said: "taken"');
      assert.deepEqual(cloned.details, { operation: 'cloneVoice', field: 'voice' });
    });
    it('reads a 400 whose body is empty, null, a string or has no error object without failing', async () => {
      for (const body of ['', 'null', '"oops"', '{}', '{"error":"text"}', '{"error":null}', '{"error":0}']) {
        const error = await clone(reply(400, body));
        assert.equal(error.code, 'invalid_request', body);
        assert.deepEqual(error.details, { operation: 'cloneVoice' }, body);
      }
    });
    it('maps 422 to invalid_request', async () => {
      const err = await failWith(422, { detail: 'voice: unknown voice' });
      assert.equal(err.code, 'invalid_request');
      assert.match(err.message, /HTTP 422.*unknown voice/);
    });
    it('maps 500 to server', async () => {
      const err = await failWith(500, { message: 'database down' });
      assert.equal(err.code, 'server');
      assert.match(err.message, /had a problem \(HTTP 500\)\. Try again in a moment\..*database down/);
    });
    it('maps an HTML 502 to server without any HTML in the message', async () => {
      const err = await failWith(502, '<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>');
      assert.equal(err.code, 'server');
      assert.equal(err.message, 'The avatar service had a problem (HTTP 502). Try again in a moment.');
    });
    it('ignores a blank or HTML (even indented) error body, and quotes a plain-text one', async () => {
      for (const body of ['', '   \n', '  <html><body>Bad gateway</body></html>', 'null']) {
        const error = await clone(reply(502, body));
        assert.equal(error.message, 'The avatar service had a problem (HTTP 502). Try again in a moment.', JSON.stringify(body));
      }
      const text = await clone(reply(502, '  upstream down \n'));
      assert.equal(text.message, 'The avatar service had a problem (HTTP 502). Try again in a moment. The service said: "upstream down"');
    });
    it('keeps the operation in details, and the server code only when there is one', async () => {
      const plain = await clone(reply(500, ''));
      assert.deepEqual(plain.details, { operation: 'cloneVoice' });
      assert.equal(plain.status, 500);
      const coded = await clone(jsonReply(500, { error: { code: 'E_UP', message: 'down' } }));
      assert.deepEqual(coded.details, { operation: 'cloneVoice', serverCode: 'E_UP' });
    });
    it('maps an unexpected 4xx (429) to server', async () => {
      const err = await failWith(429, 'slow down');
      assert.equal(err.code, 'server');
      assert.match(err.message, /unexpected status \(HTTP 429\).*slow down/);
    });
    it('maps a 3xx to invalid_config without following it (and without the query of the target)', async () => {
      handler = (_req, res) => {
        res.writeHead(302, { Location: 'https://elsewhere.example.test/live/v1/lives?token=abc' });
        res.end();
      };
      const err = await rejection(client().createSession(REQUEST));
      assert.equal(err.code, 'invalid_config');
      assert.equal(err.status, 302);
      assert.match(err.message, /redirects to https:\/\/elsewhere\.example\.test\/live\/v1\/lives \(HTTP 302\)/);
      assert.ok(!err.message.includes('token=abc'));
      assert.equal(seen.length, 1);
    });
    it('names the redirect target without its query, or none when there is no Location', async () => {
      const to = await clone(reply(307, '', { location: 'https://new.example.test/api?k=1#x' }));
      assert.equal(to.message, 'The service address redirects to https://new.example.test/api (HTTP 307); configure the final address instead.');
      const none = await clone(reply(301, ''));
      assert.equal(none.message, 'The service address redirects (HTTP 301); configure the final address instead.');
    });
    it('never carries the API key in its message, even when the server echoes it', async (t) => {
      const key = 'echoed-secret-key-7f3a9c';
      const server = createServer((req, res) => {
        req.resume();
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'invalid_request', message: `bad request from Authorization: Token ${key} (key ${key})` } }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const { port } = server.address() as AddressInfo;
      const client = new ServiceClient({ target: { surface: 'direct', baseUrl: `http://127.0.0.1:${port}`, apiKey: key } });
      const error = await client.listVoices().then(
        () => assert.fail('expected a failure'),
        (e: unknown) => e as AvatarError,
      );
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, /bad request from Authorization: Token \*\*\*/);
      assert.doesNotMatch(error.message, new RegExp(key));
    });
  });

  describe('answers it cannot read', () => {
    it('maps a 200 with invalid JSON to protocol', async () => {
      handler = (_req, res) => json(res, 200, '{"live": ');
      const err = await rejection(client().createSession(REQUEST));
      assert.equal(err.code, 'protocol');
      assert.match(err.message, /not valid JSON \(creating a session, HTTP 200\)/);
    });
    it('reports invalid JSON with the operation and the status kept', async () => {
      const { client } = setup(reply(200, 'not json'));
      const error = await rejection(client.listVoices());
      assert.equal(error.code, 'protocol');
      assert.equal(error.message, 'The avatar service sent an answer that is not valid JSON (listing voices, HTTP 200).');
      assert.equal(error.status, 200);
      assert.ok(error.cause instanceof SyntaxError);
    });
    it('maps a 200 with the wrong shape to protocol naming the field', async () => {
      handler = (_req, res) => json(res, 200, { live: CREATED.live });
      const err = await rejection(client().createSession(REQUEST));
      assert.equal(err.code, 'protocol');
      assert.equal(err.message, 'The avatar service sent an answer in an unexpected format (rtc is missing) (creating a session).');
    });
    it('reports a wrong shape with the field, the operation and the status kept', async () => {
      const { client } = setup(jsonReply(201, { voice: '' }));
      const error = await rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
      assert.equal(error.code, 'protocol');
      assert.equal(error.message, 'The avatar service sent an answer in an unexpected format (voice is not valid) (cloning a voice).');
      assert.equal(error.status, 201);
      assert.ok(error.cause instanceof Error);
    });
    it('names what is wrong in plain words, not the schema library\'s text (found by HTTP fuzzing)', async () => {
      handler = (_req, res) => json(res, 200, { live: CREATED.live, rtc: { ...CREATED.rtc, token: undefined } });
      assert.equal(
        (await rejection(client().createSession(REQUEST))).message,
        'The avatar service sent an answer in an unexpected format (rtc.token is missing) (creating a session).',
      );
      handler = (_req, res) => json(res, 200, { live: { ...CREATED.live, live_duration: 'long' }, rtc: CREATED.rtc });
      assert.equal(
        (await rejection(client().createSession(REQUEST))).message,
        'The avatar service sent an answer in an unexpected format (live.live_duration has the wrong type) (creating a session).',
      );
      handler = (_req, res) => json(res, 200, '[1, 2]');
      assert.equal(
        (await rejection(client().querySession('live-1'))).message,
        'The avatar service sent an answer in an unexpected format (the answer has the wrong type (not a JSON object)) (reading a session).',
      );
      handler = (_req, res) => json(res, 200, { live: { ...CREATED.live, id: '' }, rtc: CREATED.rtc });
      assert.equal(
        (await rejection(client().createSession(REQUEST))).message,
        'The avatar service sent an answer in an unexpected format (live.id is not valid) (creating a session).',
      );
    });
    it('maps a 200 query answer without live to protocol', async () => {
      handler = (_req, res) => json(res, 200, { id: 'live-1' });
      assert.equal((await rejection(client().querySession('live-1'))).code, 'protocol');
    });
    it('parses a 2xx answer at the edges of the range and treats 300 as a redirect, not a success', async () => {
      const ok = await setup(jsonReply(299, { voices: [] })).client.listVoices();
      assert.deepEqual(ok, { voices: [] });
      const redirect = await rejection(setup(jsonReply(300, { voices: [] })).client.listVoices());
      assert.equal(redirect.code, 'invalid_config');
      assert.equal(redirect.message, 'The service address redirects (HTTP 300); configure the final address instead.');
    });
    it('files a status under 200 as unexpected, reading an oversized body as empty rather than as a success', async () => {
      const big = JSON.stringify({ voices: [] });
      const error = await rejection(setup(() => oddStatus(199, big, { 'content-length': String(MAX_RESPONSE_BYTES + 1) })).client.listVoices());
      assert.equal(error.code, 'server');
      assert.equal(error.message, 'The avatar service answered with an unexpected status (HTTP 199).');
      const small = await rejection(setup(() => oddStatus(199, big)).client.listVoices());
      assert.equal(small.code, 'server');
    });
  });

  describe('when the service cannot be reached', () => {
    const fail = (thrown: unknown) => () => {
      throw thrown;
    };

    it('fails with network, naming the host and "connection refused"', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const c = new ServiceClient({ target: { surface: 'direct', baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY }, clock });
      const err = await rejection(c.createSession(REQUEST));
      assert.equal(err.code, 'network');
      assert.match(err.message, new RegExp(`Could not reach the avatar service at 127\\.0\\.0\\.1:${port} \\(connection refused\\)`));
      assert.equal((await rejection(c.querySession('live-1'))).code, 'network');
      assert.equal(clock.pendingCount, 0);
    });
    // The words for a socket error code come from a table in rest-client.ts; what matters to a person is that
    // a code they would not understand is put in words, each its own, and that an unknown code is still named.
    it('puts each socket error code it knows in words of its own, names an unknown code as it came, and keeps the error as cause', async () => {
      const known = ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT'];
      const said = new Map<string, string>();
      for (const code of [...known, 'EPROTO']) {
        const thrown = Object.assign(new TypeError('fetch failed'), { cause: { code } });
        const { client } = setup(fail(thrown));
        const error = await rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
        assert.equal(error.code, 'network');
        const words = /^Could not reach the avatar service at 127\.0\.0\.1:9 \((.+)\)\. Check the network connection and the service address\.$/.exec(error.message)?.[1];
        assert.ok(words, error.message);
        said.set(code, words);
        assert.equal(error.cause, thrown);
        // The words alone, for a caller that gives its own advice around them.
        assert.deepEqual(error.details, { reason: words });
      }
      for (const code of known) assert.match(said.get(code)!, /^[A-Za-z-]+( [A-Za-z-]+)+$/, `${code} is put in words, not shown as a code`);
      assert.equal(new Set(known.map((code) => said.get(code))).size, known.length, 'no two codes worded alike');
      assert.equal(said.get('EPROTO'), 'EPROTO');
      // The two a venue meets most: nothing listening at the address, and a name that does not resolve.
      assert.equal(said.get('ECONNREFUSED'), 'connection refused');
      assert.equal(said.get('ENOTFOUND'), 'host not found');
    });
    it('says nothing in brackets when the failure has no string code, even if it throws null or undefined', async () => {
      for (const thrown of [new Error('boom'), null, undefined, Object.assign(new Error('n'), { code: 42 })]) {
        const { client } = setup(fail(thrown));
        const error = await rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
        assert.equal(error.code, 'network');
        assert.equal(error.message, 'Could not reach the avatar service at 127.0.0.1:9. Check the network connection and the service address.');
        assert.equal(error.cause, thrown === undefined ? undefined : thrown, 'the failure is kept as the cause');
        assert.equal(error.details, undefined, 'no reason to give');
      }
    });
  });

  describe('timeouts', () => {
    it('times out on the injected clock with the reason as cause, in whole seconds or in milliseconds', async () => {
      for (const [timeoutMs, said] of [[5_000, '5 s'], [1_500, '1500 ms']] as const) {
        const { client, clock } = setup(hang, { timeoutMs });
        const pending = rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
        await clock.advance(timeoutMs);
        const error = await pending;
        assert.equal(error.code, 'timeout');
        assert.equal(error.message, `The avatar service did not answer within ${said} (cloning a voice). Check the network connection.`);
        assert.ok(error.cause instanceof Error);
        assert.equal(error.cause.name, 'TimeoutError');
        assert.equal(error.cause.message, `Request timed out after ${timeoutMs} ms`);
        // The bare fact, for a caller that gives its own advice (the service check).
        assert.deepEqual(error.details, { reason: `no answer within ${said}` });
        assert.equal(clock.pendingCount, 0);
      }
    });
    it('names the listing of voices in its timeout', async () => {
      const { client, clock } = setup(hang);
      const pending = rejection(client.listVoices());
      await clock.advance(TIMEOUT_MS);
      assert.equal((await pending).message, 'The avatar service did not answer within 5 s (listing voices). Check the network connection.');
    });
  });

  describe('cancellation', () => {
    it('fails with cancelled when the caller aborts a request in flight', async () => {
      handler = () => {};
      const ac = new AbortController();
      const p = client().createSession(REQUEST, { signal: ac.signal });
      p.catch(() => {});
      await until(() => seen.length === 1);
      ac.abort();
      const err = await rejection(p);
      assert.equal(err.code, 'cancelled');
      assert.equal(clock.pendingCount, 0);
    });
    it('logs a request its caller cancelled at debug, not as a warning (the caller says why); a timeout is a warning', async () => {
      const { client, lines, clock } = setup(hang);
      const controller = new AbortController();
      const pending = rejection(client.listVoices({ signal: controller.signal }));
      await Promise.resolve();
      controller.abort();
      assert.equal((await pending).code, 'cancelled');
      const late = rejection(client.listVoices());
      await clock.advance(TIMEOUT_MS);
      assert.equal((await late).code, 'timeout');
      assert.deepEqual(lines.filter((l) => l.message.includes('failed:')).map((l) => [l.level, l.message]), [
        ['debug', 'GET /live/v1/voices failed: cancelled'],
        ['warn', 'GET /live/v1/voices failed: timeout'],
      ]);
    });
    it('says cancelled, with the abort reason as cause, when the caller aborts mid-request', async () => {
      const { client } = setup(hang);
      const controller = new AbortController();
      const pending = rejection(client.listVoices({ signal: controller.signal }));
      await Promise.resolve();
      controller.abort(new Error('hung up'));
      const error = await pending;
      assert.equal(error.code, 'cancelled');
      assert.equal(error.message, 'The operation was cancelled.');
      assert.ok(error.cause instanceof Error && error.cause.message === 'hung up');
    });
    it('does not retry a query the caller aborted', async () => {
      handler = () => {};
      const ac = new AbortController();
      const p = client().querySession('live-1', { signal: ac.signal });
      p.catch(() => {});
      await until(() => seen.length === 1);
      ac.abort();
      assert.equal((await rejection(p)).code, 'cancelled');
      await realDelay(20);
      assert.equal(seen.length, 1);
    });
    it('sends nothing when the signal has already fired', async () => {
      const ac = new AbortController();
      ac.abort();
      assert.equal((await rejection(client().createSession(REQUEST, { signal: ac.signal }))).code, 'cancelled');
      assert.equal((await rejection(client().listVoices({ signal: ac.signal }))).code, 'cancelled');
      await realDelay(5);
      assert.equal(seen.length, 0);
    });
    it('sends no request at all when the caller already cancelled, and says cancelled with the reason as cause', async () => {
      const { client, sent } = setup(jsonReply(200, { voices: [] }));
      const controller = new AbortController();
      const reason = new Error('visitor left');
      controller.abort(reason);
      const error = await rejection(client.listVoices({ signal: controller.signal }));
      assert.equal(error.code, 'cancelled');
      assert.equal(error.message, 'The operation was cancelled.');
      assert.equal(error.cause, reason);
      assert.equal(sent.length, 0);
    });
  });

  describe('logging', () => {
    it('never writes the API key or the issued RTC token, but does log each request', async () => {
      const lines: string[] = [];
      const logger = createLogger({ level: 'debug', sink: (line) => lines.push(line) });
      const c = client({ logger });

      handler = (_req, res) => json(res, 200, CREATED);
      await c.createSession(REQUEST);
      handler = (_req, res) => json(res, 200, { live: { ...LIVE, id: 'live-1', rtc_token: RTC_TOKEN } });
      await c.querySession('live-1');
      handler = (_req, res) => json(res, 401, { detail: `bad key ${KEY}` });
      const unauthorized = await rejection(c.createSession(REQUEST));
      let dropped = false;
      handler = (req, res) => (dropped ? json(res, 200, { voices: [] }) : ((dropped = true), req.socket.destroy()));
      await c.listVoices();
      handler = () => {};
      const p = c.createSession(REQUEST);
      p.catch(() => {});
      await until(() => seen.length === 6);
      await clock.advance(TIMEOUT_MS);
      await rejection(p);

      const text = lines.join('\n');
      assert.ok(lines.length >= 6, `expected a line per request, got ${lines.length}`);
      assert.match(text, /POST \/live\/v1\/lives 200/);
      assert.match(text, /GET \/live\/v1\/lives\/live-1 200/);
      assert.match(text, /retrying once after a network error/);
      assert.match(text, /failed: timeout/);
      assert.ok(!text.includes(KEY), 'the API key leaked into the log');
      assert.ok(!text.includes(RTC_TOKEN), 'the RTC token leaked into the log');
      assert.ok(!unauthorized.message.includes(KEY), 'the API key leaked into the error message');
    });
    it('logs method, path, status and the clock-measured duration of a success, and nothing with the key', async () => {
      const { client, lines, clock } = setup(async () => {
        await Promise.resolve();
        clock.jump(37);
        return new Response(JSON.stringify({ voices: [] }), { status: 200 });
      });
      await client.listVoices();
      assert.deepEqual(lines, [{ level: 'info', message: 'GET /live/v1/voices 200 (37 ms)', data: { method: 'GET', path: '/live/v1/voices', status: 200, ms: 37 } }]);
    });
    it('logs an HTTP failure with its code, and a transport failure with its code and duration', async () => {
      let call = 0;
      const { client, lines, clock } = setup(() => {
        clock.jump(12);
        if (call++ === 0) return new Response('{}', { status: 503 });
        throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
      });
      await rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
      await rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
      assert.deepEqual(lines, [
        { level: 'warn', message: 'POST /live/v1/voices/clone 503 (12 ms): server', data: { method: 'POST', path: '/live/v1/voices/clone', status: 503, ms: 12, code: 'server' } },
        { level: 'warn', message: 'POST /live/v1/voices/clone failed: network', data: { method: 'POST', path: '/live/v1/voices/clone', code: 'network', ms: 12 } },
      ]);
      assert.ok(!JSON.stringify(lines).includes(KEY));
    });
  });

  describe('answer size', () => {
    async function hugeServer(t: { after(fn: () => Promise<void>): void }, declareLength: boolean) {
      const written = { bytes: 0, closed: false };
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const server = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json', ...(declareLength ? { 'content-length': String(400 * 1024 * 1024) } : {}) });
        res.write('{"voices":["');
        const pump = () => {
          // Bounded: at most 400 MB, stopped as soon as the client goes away.
          while (!written.closed && written.bytes < 400 * 1024 * 1024) {
            written.bytes += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end('"]}');
        };
        res.on('close', () => (written.closed = true));
        pump();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      t.after(async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
      return { written, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    }

    it('an oversized error answer is cut off too, and its status still decides the error', async (t) => {
      const written = { closed: false };
      const server = createServer((req, res) => {
        req.resume();
        res.writeHead(402, { 'content-type': 'application/json' });
        res.on('close', () => (written.closed = true));
        res.end(JSON.stringify({ error: { message: 'x'.repeat(3 * 1024 * 1024) } }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      t.after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
      const client = new ServiceClient({ target: { surface: 'direct', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: KEY } });
      const error = await client.listVoices().then(() => assert.fail('expected a failure'), (e: unknown) => e as AvatarError);
      assert.equal(error.code, 'insufficient_credits');
    });
    it('drops the text of an oversized error answer but keeps its status; an oversized 300 is a redirect', async () => {
      const huge = { 'content-length': String(MAX_RESPONSE_BYTES + 1) };
      const error = await rejection(setup(reply(500, '{"error":{"message":"secret detail"}}', huge)).client.listVoices());
      assert.equal(error.code, 'server');
      assert.equal(error.message, 'The avatar service had a problem (HTTP 500). Try again in a moment.');
      const redirect = await rejection(setup(reply(300, 'x', huge)).client.listVoices());
      assert.equal(redirect.code, 'invalid_config');
      const success = await rejection(setup(reply(200, 'x', huge)).client.listVoices());
      assert.equal(success.code, 'protocol');
      assert.equal(success.message, 'The avatar service sent an answer larger than 1024 KB; it was not read. Check the service address.');
    });
    for (const declareLength of [false, true]) {
      it(`stops reading past 1 MB and closes the connection (${declareLength ? 'a declared 400 MB length' : 'an endless chunked answer'})`, async (t) => {
        const { written, baseUrl } = await hugeServer(t, declareLength);
        const client = new ServiceClient({ target: { surface: 'direct', baseUrl, apiKey: KEY } });
        const error = await client.listVoices().then(
          () => assert.fail('expected a failure'),
          (e: unknown) => e as AvatarError,
        );
        assert.ok(error instanceof AvatarError);
        assert.equal(error.code, 'protocol');
        assert.equal(error.message, 'The avatar service sent an answer larger than 1024 KB; it was not read. Check the service address.');
        await until(() => written.closed, { realTimeoutMs: 10_000, message: 'the server sees the connection closed' });
        // What the server managed to push before the client hung up: the cap plus socket buffers, far from 400 MB.
        assert.ok(written.bytes < 64 * 1024 * 1024, `the server wrote ${written.bytes} bytes`);
      });
    }
  });
});

describe('readCappedText', () => {
  const stream = (parts: string[], onPull?: () => void) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const p of parts) controller.enqueue(new TextEncoder().encode(p));
        controller.close();
      },
      pull() {
        onPull?.();
      },
    });

  it('reads a body exactly at the limit and refuses one byte more', async () => {
    assert.equal(await readCappedText(new Response(stream(['ab', 'cd'])), 4), 'abcd');
    await assert.rejects(readCappedText(new Response(stream(['ab', 'cde'])), 4), (e: unknown) => e instanceof AvatarError && e.code === 'protocol');
    assert.equal(await readCappedText(new Response(stream(['ab', 'cde'])), 4, 'empty'), '');
  });

  it('trusts a declared length at the limit and refuses a larger one without reading', async () => {
    assert.equal(await readCappedText(new Response('abcd', { headers: { 'content-length': '4' } }), 4), 'abcd');
    // The body is short: only the declared length can refuse it.
    await assert.rejects(readCappedText(new Response('ab', { headers: { 'content-length': '5' } }), 4), (e: unknown) => e instanceof AvatarError && e.code === 'protocol');
    assert.equal(await readCappedText(new Response(null, { status: 200, headers: { 'content-length': '5' } }), 4, 'empty'), '');
  });

  it('returns an empty text for a body-less answer', async () => {
    assert.equal(await readCappedText(new Response(null, { status: 200 }), 4), '');
    assert.equal(await readCappedText(new Response(null, { status: 204 }), 4), '');
  });

  it('says the limit in KB', async () => {
    await assert.rejects(readCappedText(new Response('x'.repeat(3000)), 2048), (e: unknown) => e instanceof AvatarError && e.message === 'The avatar service sent an answer larger than 2 KB; it was not read. Check the service address.');
  });
});
