import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { createLogger } from '../../../electron/core/log.ts';
import type { CreateSessionRequest } from '../../../electron/core/protocol.ts';
import { ServiceClient, type ServiceClientOptions } from '../../../electron/core/rest-client.ts';
import type { ServiceTarget } from '../../../electron/core/session-types.ts';
import { rejection } from '../../helpers/rejection.ts';
import { realDelay, until } from '../../helpers/until.ts';

const KEY = 'sk_test_REST_5f1a9c7e2b';
const RTC_TOKEN = 'rtc-token-007-c0ffee-secret';
const TIMEOUT_MS = 5_000;

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

describe('ServiceClient', () => {
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
  const client = (extra: Partial<ServiceClientOptions> = {}) =>
    new ServiceClient({ target: direct(), clock, requestTimeoutMs: TIMEOUT_MS, ...extra });

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
    it('maps 403 on a query to forbidden, explaining the creator key rule', async () => {
      const err = await failWith(403, { detail: 'not the owner' }, (c) => c.querySession('live-1'));
      assert.equal(err.code, 'forbidden');
      assert.match(err.message, /different API key.*HTTP 403.*not the owner/);
    });
    it('maps 404 on a query to not_found naming the session', async () => {
      const err = await failWith(404, { detail: 'Not found.' }, (c) => c.querySession('live-9'));
      assert.equal(err.code, 'not_found');
      assert.match(err.message, /The session live-9 does not exist or has expired \(HTTP 404\)/);
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
    it('maps a 400 {error: {message, field}} to invalid_request carrying the message and field', async () => {
      const err = await failWith(400, { error: { code: 'invalid_image', message: 'image_uri is not reachable', field: 'avatar.image_uri' } });
      assert.equal(err.code, 'invalid_request');
      assert.match(err.message, /rejected the session request \(HTTP 400\)\. The service said: "image_uri is not reachable"/);
      assert.deepEqual(err.details, { operation: 'createSession', serverCode: 'invalid_image', field: 'avatar.image_uri' });
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
    it('maps a 200 with invalid JSON to protocol', async () => {
      handler = (_req, res) => json(res, 200, '{"live": ');
      const err = await rejection(client().createSession(REQUEST));
      assert.equal(err.code, 'protocol');
      assert.match(err.message, /not valid JSON \(creating a session, HTTP 200\)/);
    });
    it('maps a 200 with the wrong shape to protocol naming the field', async () => {
      handler = (_req, res) => json(res, 200, { live: CREATED.live });
      const err = await rejection(client().createSession(REQUEST));
      assert.equal(err.code, 'protocol');
      assert.equal(err.message, 'The avatar service sent an answer in an unexpected format (rtc is missing) (creating a session).');
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
  });

  describe('when the connection is refused (closed port)', () => {
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
  });
});

describe('ServiceClient error messages', () => {
  it('never carry the API key, even when the server echoes it', async (t) => {
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

describe('ServiceClient answer size', () => {
  /** A server whose answer never ends (chunked, no length), or declares a huge length: counts what it wrote. */
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
