/**
 * ServiceClient at its edges: the exact error (code, message, status, details, cause) a person sees for each
 * kind of answer, the log lines it writes (never the key), the request timeout on a fake clock, and the
 * response size bound of `readCappedText`. Most cases use an injected fetch (the client takes one), so each
 * answer is exactly the one under test; the wire format is pinned once against a loopback server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { redact, type Logger } from '../../../electron/core/log.ts';
import type { CreateSessionRequest } from '../../../electron/core/protocol.ts';
import { MAX_RESPONSE_BYTES, readCappedText, ServiceClient } from '../../../electron/core/rest-client.ts';
import type { ServiceTarget } from '../../../electron/core/session-types.ts';
import { rejection } from '../../helpers/rejection.ts';

const KEY = 'sk_edge_KEY_93b1f0c4d2';
const BASE = 'http://127.0.0.1:9';
const TIMEOUT_MS = 5_000;

const REQUEST: CreateSessionRequest = {
  call_mode: 'audio',
  avatar: { persona: 'A guide.', image_uri: 'https://cdn.example.test/a.png' },
};

const created = (token: string) => ({
  live: { id: 'live-1', status: 'waiting', live_duration: 600, call_mode: 'audio' },
  rtc: { app_id: 'app', channel_id: 'ch', user_id: 'u', token, token_expire_at: 1 },
});

interface Sent {
  url: string;
  init: RequestInit;
}
interface LogLine {
  level: string;
  message: string;
  data: Record<string, unknown> | undefined;
}

type Answer = (url: string, init: RequestInit) => Response | Promise<Response>;

function setup(answer: Answer, options: { target?: ServiceTarget; timeoutMs?: number } = {}) {
  const sent: Sent[] = [];
  const lines: LogLine[] = [];
  const clock = new FakeClock();
  const log = (level: string) => (message: string, data?: Record<string, unknown>) => lines.push({ level, message, data });
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
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
  return { client, sent, lines, clock };
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

describe('ServiceClient on the wire (loopback server)', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        res.setHeader('Connection', 'close');
        if (req.url === '/live/v1/voices/clone') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ voice: 'v-1' }));
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ voices: [{ voice: 'a' }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('clones a voice with POST, JSON body and the key header; lists voices with a bodiless GET', async () => {
    const client = new ServiceClient({ target: { surface: 'direct', baseUrl: base, apiKey: KEY }, requestTimeoutMs: TIMEOUT_MS });
    assert.deepEqual(await client.cloneVoice({ audio_url: 'https://a.test/v.mp3', voice: 'Mine' }), { voice: 'v-1' });
    assert.deepEqual(await client.listVoices(), { voices: [{ voice: 'a' }] });
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
});

describe('ServiceClient: what is sent', () => {
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

describe('ServiceClient: logs', () => {
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

describe('ServiceClient: timeouts', () => {
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
      assert.equal(clock.pendingCount, 0);
    }
  });

  it('names the listing of voices in its timeout', async () => {
    const { client, clock } = setup(hang);
    const pending = rejection(client.listVoices());
    await clock.advance(TIMEOUT_MS);
    assert.equal((await pending).message, 'The avatar service did not answer within 5 s (listing voices). Check the network connection.');
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
});

describe('ServiceClient: transport failures', () => {
  const fail = (thrown: unknown) => () => {
    throw thrown;
  };

  it('turns each known socket error code into words, keeps unknown codes, and keeps the error as cause', async () => {
    const table: Record<string, string> = {
      ECONNREFUSED: 'connection refused',
      ECONNRESET: 'connection reset',
      ENOTFOUND: 'host not found',
      EAI_AGAIN: 'name lookup failed',
      ETIMEDOUT: 'connection timed out',
      EHOSTUNREACH: 'host unreachable',
      ENETUNREACH: 'network unreachable',
      UND_ERR_SOCKET: 'connection closed',
      CERT_HAS_EXPIRED: 'TLS certificate expired',
      DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
      EPROTO: 'EPROTO',
    };
    for (const [code, words] of Object.entries(table)) {
      const thrown = Object.assign(new TypeError('fetch failed'), { cause: { code } });
      const { client } = setup(fail(thrown));
      const error = await rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
      assert.equal(error.code, 'network');
      assert.equal(error.message, `Could not reach the avatar service at 127.0.0.1:9 (${words}). Check the network connection and the service address.`);
      assert.equal(error.cause, thrown);
    }
  });

  it('says nothing in brackets when the failure has no string code, even if it throws null or undefined', async () => {
    for (const thrown of [new Error('boom'), null, undefined, Object.assign(new Error('n'), { code: 42 })]) {
      const { client } = setup(fail(thrown));
      const error = await rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
      assert.equal(error.code, 'network');
      assert.equal(error.message, 'Could not reach the avatar service at 127.0.0.1:9. Check the network connection and the service address.');
    }
  });
});

describe('ServiceClient: answers it cannot read', () => {
  it('reports invalid JSON with the operation and the status kept', async () => {
    const { client } = setup(reply(200, 'not json'));
    const error = await rejection(client.listVoices());
    assert.equal(error.code, 'protocol');
    assert.equal(error.message, 'The avatar service sent an answer that is not valid JSON (listing voices, HTTP 200).');
    assert.equal(error.status, 200);
    assert.ok(error.cause instanceof SyntaxError);
  });

  it('reports a wrong shape with the field, the operation and the status kept', async () => {
    const { client } = setup(jsonReply(201, { voice: '' }));
    const error = await rejection(client.cloneVoice({ audio_url: 'a', voice: 'v' }));
    assert.equal(error.code, 'protocol');
    assert.equal(error.message, 'The avatar service sent an answer in an unexpected format (voice is not valid) (cloning a voice).');
    assert.equal(error.status, 201);
    assert.ok(error.cause instanceof Error);
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
});

describe('ServiceClient: HTTP errors', () => {
  const clone = (answer: Answer, target?: ServiceTarget) => rejection(setup(answer, target ? { target } : {}).client.cloneVoice({ audio_url: 'a', voice: 'v' }));

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

  it('names the redirect target without its query, or none when there is no Location', async () => {
    const to = await clone(reply(307, '', { location: 'https://new.example.test/api?k=1#x' }));
    assert.equal(to.message, 'The service address redirects to https://new.example.test/api (HTTP 307); configure the final address instead.');
    const none = await clone(reply(301, ''));
    assert.equal(none.message, 'The service address redirects (HTTP 301); configure the final address instead.');
  });

  it('words a 403 by operation and masks the key if the server echoes it', async () => {
    const error = await clone(jsonReply(403, { error: { message: `bad key ${KEY}` } }));
    assert.equal(error.code, 'forbidden');
    assert.equal(error.message, 'The avatar service refused access (HTTP 403). The service said: "bad key ***"');
    assert.ok(!error.message.includes(KEY));
  });

  it('never quotes the server on a direct 401 (it may echo the key)', async () => {
    const error = await clone(jsonReply(401, { error: { message: `Invalid token ${KEY}` } }));
    assert.equal(error.message, 'The API key was rejected by the avatar service (HTTP 401). Check the key in the settings.');
  });

  it('says which session was not found, with a single space even when the id starts with one', async () => {
    const { client } = setup(reply(404, ''));
    const error = await rejection(client.querySession(' live-9'));
    assert.equal(error.code, 'not_found');
    assert.equal(error.message, 'The session live-9 does not exist or has expired (HTTP 404).');
    const plain = await rejection(client.querySession('live-8'));
    assert.equal(plain.message, 'The session live-8 does not exist or has expired (HTTP 404).');
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
    for (const body of ['', 'null', '"oops"', '{}', '{"error":"text"}']) {
      const error = await clone(reply(400, body));
      assert.equal(error.code, 'invalid_request', body);
      assert.deepEqual(error.details, { operation: 'cloneVoice' }, body);
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
