/**
 * HTTP fuzzing of the REST client (electron/core/rest-client.ts) against a loopback server that answers
 * each request with a generated fault: bodies that are empty, HTML, truncated JSON, JSON of the wrong shape
 * or types, random JSON, plain text, invalid UTF-8, deep nesting, large, or echoing the API key; statuses
 * from 1xx-like to 5xx with and without bodies, any content type; and deliveries that stall before the
 * headers or in the middle of the body (past the request timeout, on a FakeClock), reset the connection
 * mid-body, lie about Content-Length, or are not HTTP at all.
 *
 * Every case must end in a typed AvatarError (a known code, the expected one where the status or delivery
 * decides it) with a human message: one sentence or more in plain words, no stack, no raw parser text,
 * never the key. A create or a clone is never retried (exactly one request reaches the server); a read is
 * retried at most once, and only after a network failure.
 *
 * Seeded: see test/helpers/property.ts (PROPERTY_SEED, PROPERTY_RUNS_SCALE).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import fc from 'fast-check';
import { FakeClock } from '../helpers/fake-clock.ts';
import { AvatarError, ERROR_CODES, type ErrorCode } from '../../electron/core/errors.ts';
import {
  cloneVoiceResponseSchema,
  createSessionResponseSchema,
  listVoicesResponseSchema,
  querySessionResponseSchema,
  type CreateSessionRequest,
} from '../../electron/core/protocol.ts';
import { ServiceClient } from '../../electron/core/rest-client.ts';
import { propertyParams } from '../helpers/property.ts';
import { until } from '../helpers/until.ts';

const KEY = 'sk-httpfuzz-3Jv8Qm1Xr6Tz0Lp5';
const TIMEOUT_MS = 5_000;
const REQUEST: CreateSessionRequest = { call_mode: 'audio', avatar: { persona: 'A fuzz target.', image_uri: 'https://cdn.example.test/a.png' } };

type Op = 'create' | 'query' | 'list' | 'clone';
type BodyKind =
  | 'empty'
  | 'html'
  | 'truncated-json'
  | 'wrong-types'
  | 'random-json'
  | 'text'
  | 'invalid-utf8'
  | 'deep'
  | 'large'
  | 'echo-key'
  | 'error-shaped';
type Delivery = 'normal' | 'stall-before-headers' | 'stall-mid-body' | 'reset-mid-body' | 'short-content-length' | 'not-http' | 'slow-under-timeout';

interface Case {
  op: Op;
  status: number;
  body: BodyKind;
  contentType: string | null;
  delivery: Delivery;
  seedText: string;
}

const VALID: Record<Op, unknown> = {
  create: {
    live: { id: 'L1', status: 'waiting', live_duration: 600, call_mode: 'audio' },
    rtc: { app_id: 'a', channel_id: 'c', user_id: 'u', token: 't-123456', token_expire_at: '1700003600' },
  },
  query: { live: { id: 'L1', status: 'ended', billed_seconds: 4, credits_cost: 6 } },
  list: { voices: [{ voice: 'Mine' }] },
  clone: { voice: 'Mine' },
};
const SCHEMAS = { create: createSessionResponseSchema, query: querySessionResponseSchema, list: listVoicesResponseSchema, clone: cloneVoiceResponseSchema };

/** The valid answer with one leaf replaced by a value of the wrong type. */
function wrongTypes(op: Op, pick: number): unknown {
  const copy = structuredClone(VALID[op]) as Record<string, any>;
  const leaves: Array<[Record<string, any>, string]> = [];
  const walk = (o: Record<string, any>) => {
    for (const k of Object.keys(o)) {
      if (o[k] && typeof o[k] === 'object' && !Array.isArray(o[k])) walk(o[k]);
      else leaves.push([o, k]);
    }
  };
  walk(copy);
  const [holder, key] = leaves[pick % leaves.length]!;
  const wrong = [null, 42, -1, 1e308, 'text', true, [], {}, ''];
  holder[key] = wrong.find((w) => typeof w !== typeof holder[key] || (w === '' && holder[key] !== '')) ?? null;
  if (key === 'voices') holder[key] = { voice: 'not an array' };
  return copy;
}

function bodyFor(c: Case): Buffer {
  switch (c.body) {
    case 'empty':
      return Buffer.alloc(0);
    case 'html':
      return Buffer.from(`<!DOCTYPE html><html><head><title>${c.status} Bad Gateway</title></head><body><h1>nginx</h1>${c.seedText}</body></html>`);
    case 'truncated-json': {
      const text = JSON.stringify(VALID[c.op]);
      return Buffer.from(text.slice(0, Math.max(1, c.seedText.length % text.length)));
    }
    case 'wrong-types':
      return Buffer.from(JSON.stringify(wrongTypes(c.op, c.seedText.length)));
    case 'random-json':
      return Buffer.from(c.seedText);
    case 'text':
      return Buffer.from(`Service Unavailable ${c.seedText}`);
    case 'invalid-utf8':
      return Buffer.concat([Buffer.from('{"error":{"message":"'), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from('"}}')]);
    case 'deep':
      return Buffer.from('['.repeat(50_000) + ']'.repeat(50_000));
    case 'large':
      return Buffer.from(JSON.stringify({ error: { message: 'x'.repeat(2_000_000) } }));
    case 'echo-key':
      return Buffer.from(
        JSON.stringify({ error: { code: 'bad_auth', message: `Authorization: Token ${KEY} was rejected (key ${KEY})` }, detail: `api_key=${KEY}` }),
      );
    case 'error-shaped':
      return Buffer.from(JSON.stringify({ error: { code: c.seedText.slice(0, 10) || 'oops', message: c.seedText || 'went wrong' } }));
  }
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  op: fc.constantFrom<Op>('create', 'create', 'query', 'list', 'clone'),
  status: fc.constantFrom(200, 201, 204, 299, 301, 302, 307, 400, 401, 402, 403, 404, 409, 418, 422, 429, 500, 502, 503, 504, 599),
  body: fc.constantFrom<BodyKind>('empty', 'html', 'truncated-json', 'wrong-types', 'random-json', 'text', 'invalid-utf8', 'deep', 'large', 'echo-key', 'error-shaped'),
  contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/html', 'text/plain', 'application/octet-stream', null),
  delivery: fc.oneof(
    { weight: 12, arbitrary: fc.constant<Delivery>('normal') },
    { weight: 2, arbitrary: fc.constantFrom<Delivery>('stall-before-headers', 'stall-mid-body', 'reset-mid-body', 'short-content-length', 'not-http', 'slow-under-timeout') },
  ),
  seedText: fc.oneof(fc.json({ maxDepth: 3 }), fc.string({ maxLength: 40 })),
});

/** The codes the case may end in, where the status or the delivery decides it (null: any known code). */
function expectedCodes(c: Case, bodyText: string): ErrorCode[] | null {
  // A body over the 1 MB cap (declared or read) is cut off by us, maybe before a stall or reset reaches
  // us: then it ends as a normal delivery of that status would (protocol on a 2xx, the status's code otherwise).
  const cutOff = (c.body === 'large' && c.delivery !== 'normal' && expectedCodes({ ...c, delivery: 'normal' }, '')) || [];
  if (c.delivery === 'stall-before-headers') return ['timeout'];
  if (c.delivery === 'stall-mid-body') return ['timeout', ...cutOff];
  if (c.delivery === 'reset-mid-body' || c.delivery === 'short-content-length') return ['network', ...cutOff];
  if (c.delivery === 'not-http') return ['network'];
  if (c.status >= 200 && c.status < 300) return ['protocol'];
  if (c.status === 402) return ['insufficient_credits'];
  if (c.status >= 300 && c.status < 400) return ['invalid_config'];
  if (c.status === 401) return ['unauthorized'];
  // ASSUMPTION 9 (docs/service-protocol.md): a 4xx whose error text talks about credits or balance means a low balance.
  const credit: ErrorCode[] = c.status < 500 && /balance|credit/i.test(bodyText) ? ['insufficient_credits'] : [];
  if (c.status === 403) return ['forbidden', ...credit];
  if (c.status === 404) return ['not_found', ...credit];
  if (c.status === 400 || c.status === 422) return ['invalid_request', ...credit];
  return ['server', ...credit];
}

/** Our part of a message is plain words; the server's own text may follow, quoted, after "The service said:". */
function assertHuman(message: string, where: string): void {
  assert.ok(message.length > 10 && message.length <= 600, `${where}: message length ${message.length}`);
  const ours = message.replace(/ The service said: ".*"$/s, '');
  assert.match(ours, /^[A-Z]/, `${where}: starts like a sentence: ${message}`);
  assert.match(ours, /[.)]$/, `${where}: ends like a sentence: ${ours}`);
  assert.doesNotMatch(ours, /\n|\bat .+:\d+:\d+|\[object |undefined|NaN|SyntaxError|TypeError|Unexpected token|fetch failed|JSON\.parse/, `${where}: raw text in ${ours}`);
}

function leaksKey(text: string): boolean {
  return [KEY, KEY.slice(0, 12), KEY.slice(-12), Buffer.from(KEY).toString('base64').slice(0, 16)].some((form) => text.includes(form));
}

describe('REST client HTTP fuzzing (loopback server)', () => {
  let server: Server;
  let base: string;
  let current: Case | null = null;
  let requests = 0;
  const sockets = new Set<Socket>();

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        requests += 1;
        const c = current;
        if (!c) return void res.writeHead(500).end();
        respond(c, res);
      });
    });
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function respond(c: Case, res: ServerResponse): void {
    const body = c.status === 204 && c.body === 'empty' ? Buffer.alloc(0) : bodyFor(c);
    const headers: Record<string, string> = { connection: 'close' };
    if (c.contentType) headers['content-type'] = c.contentType;
    if (c.status >= 300 && c.status < 400) headers.location = `${base}/elsewhere?token=${KEY}`;
    const socket = res.socket!;
    switch (c.delivery) {
      case 'normal':
        res.writeHead(c.status, headers);
        res.end(c.status === 204 ? undefined : body);
        return;
      case 'slow-under-timeout':
        setTimeout(() => {
          res.writeHead(c.status, headers);
          res.end(c.status === 204 ? undefined : body);
        }, 20);
        return;
      case 'stall-before-headers':
        return; // nothing, ever (the client's timeout ends it)
      case 'stall-mid-body':
        res.writeHead(c.status === 204 ? 200 : c.status, { ...headers, 'content-length': String(body.length + 100) });
        res.write(body.subarray(0, Math.floor(body.length / 2)));
        return; // and then nothing
      case 'reset-mid-body':
        res.writeHead(c.status === 204 ? 200 : c.status, { ...headers, 'content-length': String(body.length + 100) });
        res.write(body.subarray(0, Math.floor(body.length / 2)), () => socket.destroy());
        return;
      case 'short-content-length':
        socket.end(`HTTP/1.1 ${c.status === 204 ? 200 : c.status} X\r\nContent-Length: ${body.length + 50}\r\nConnection: close\r\n\r\n${body.toString('latin1')}`, 'latin1');
        return;
      case 'not-http':
        socket.end(`SSH-2.0-OpenSSH_9.6 ${c.seedText}\r\n`);
        return;
    }
  }

  it('every malformed answer ends in a typed error with a human message; creates and clones are never retried (1,000 cases)', async (t) => {
    const clock = new FakeClock();
    const client = new ServiceClient({ target: { surface: 'direct', baseUrl: base, apiKey: KEY }, clock, requestTimeoutMs: TIMEOUT_MS });
    const seen: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        current = c;
        requests = 0;
        const call =
          c.op === 'create'
            ? client.createSession(REQUEST)
            : c.op === 'query'
              ? client.querySession('L1')
              : c.op === 'list'
                ? client.listVoices()
                : client.cloneVoice({ audio_url: 'https://cdn.example.test/v.mp3', voice: 'Mine' });
        const settled = call.then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        let outcome: Awaited<typeof settled> | null = null;
        void settled.then((o) => (outcome = o));
        await until(() => requests >= 1 || outcome !== null, { realTimeoutMs: 10_000, message: 'the request reached the server' });
        if (c.delivery.startsWith('stall')) {
          // Past the timeout, on the client's clock.
          await until(() => outcome !== null || sockets.size > 0, { realTimeoutMs: 2_000 });
          await clock.advance(TIMEOUT_MS + 1);
        }
        await until(() => outcome !== null, { realTimeoutMs: 15_000, message: `the call settled (${JSON.stringify({ ...c, seedText: c.seedText.slice(0, 40) })})` });
        const result = outcome!;
        const bodyText = bodyFor(c).toString('utf8').slice(0, 2_000);
        const where = `${c.op} ${c.status} ${c.body} ${c.contentType} ${c.delivery}`;
        if (result.ok) {
          // Only a body the schema accepts may succeed (the generators make none, but be exact about it).
          assert.ok(c.delivery === 'normal' || c.delivery === 'slow-under-timeout', `${where}: resolved`);
          assert.ok(c.status >= 200 && c.status < 300);
          assert.ok(SCHEMAS[c.op].safeParse(JSON.parse(bodyText)).success, `${where}: resolved with an invalid body`);
          seen.ok = (seen.ok ?? 0) + 1;
          return;
        }
        const error = result.error;
        assert.ok(error instanceof AvatarError, `${where}: not an AvatarError: ${String(error)}`);
        assert.ok(ERROR_CODES.includes(error.code), `${where}: unknown code ${error.code}`);
        const expected = expectedCodes(c, bodyText);
        if (expected) assert.ok(expected.includes(error.code), `${where}: ${error.code} (expected ${expected.join(' or ')}): ${error.message}`);
        assertHuman(error.message, where);
        assert.ok(!leaksKey(error.message), `${where}: the message shows the key: ${error.message}`);
        assert.ok(!leaksKey(JSON.stringify(error.details ?? {})), `${where}: the details carry the key`);
        // Retries: never for create/clone; reads once, only after a network failure.
        const maxRequests = (c.op === 'query' || c.op === 'list') && error.code === 'network' ? 2 : 1;
        await new Promise((r) => setTimeout(r, 2)); // a retry would have arrived by now
        assert.ok(requests >= 1 && requests <= maxRequests, `${where}: ${requests} requests (max ${maxRequests})`);
        if (c.op === 'create' || c.op === 'clone') assert.equal(requests, 1, `${where}: retried`);
        seen[error.code] = (seen[error.code] ?? 0) + 1;
        // No timer may outlive the call.
        assert.equal(clock.pendingCount, 0, `${where}: ${clock.pendingCount} timers left`);
      }),
      propertyParams('REST client / HTTP fuzz', 1_000, (line) => t.diagnostic(line)),
    );
    t.diagnostic(`outcomes: ${Object.entries(seen).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    current = null;
  });
});
