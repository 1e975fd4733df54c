/**
 * The wire report's recorder (core/wire-recorder.ts): what it keeps of each HTTP answer (endpoint, status,
 * media type, body kind, shape, repeats), of each connection (opened or refused, who ended it, when after
 * our last message), of each server message (its role, its type, repeats) and of what the client sent; the
 * secrets it learns from answers and hides everywhere in the report, also in what it recorded before; and
 * the two error answers it asks for.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { ServiceClient } from '../../../electron/core/rest-client.ts';
import type { TransportFactory, TransportHandlers } from '../../../electron/core/transport.ts';
import { recordErrorAnswers, UNKNOWN_API_KEY, UNKNOWN_SESSION_ID, WireRecorder } from '../../../electron/core/wire-recorder.ts';
import type { Shape } from '../../../electron/core/wire-report.ts';

const LIVES = 'https://svc.example/live/v1/lives';

function recorderAt(startMs = 0): { recorder: WireRecorder; clock: FakeClock } {
  const clock = new FakeClock(startMs);
  return { recorder: new WireRecorder({ source: 'cli-probe', surface: 'direct', clock }), clock };
}

/** A recorded socket whose handlers note, in order, every event that reached the client. */
function socketOf(recorder: WireRecorder, transports = new FakeTransports()) {
  const seen: string[] = [];
  const client = recorder.recordingTransports(transports.factory)('ws://svc.example/ws', {}, {
    onOpen: () => seen.push('open'),
    onMessage: (data) => seen.push(`message ${typeof data === 'string' ? data : 'bytes'}`),
    onClose: (code) => seen.push(`close ${code}`),
    onError: (error) => seen.push(`error ${error.code}`),
  });
  return { client, server: transports.last, seen };
}

/** One JSON answer per call, as the service would send it. */
function answering(...bodies: unknown[]): typeof fetch {
  let i = 0;
  return async () => new Response(JSON.stringify(bodies[Math.min(i++, bodies.length - 1)]), { status: 200, headers: { 'content-type': 'application/json' } });
}

/** `levels` objects, each one `{ a: … }`, around `leaf`. */
function nestedIn(levels: number, leaf: unknown): unknown {
  return levels === 0 ? leaf : { a: nestedIn(levels - 1, leaf) };
}

describe('WireRecorder: HTTP answers', () => {
  it('records each answer’s endpoint, status, media type and body kind, one row per kind of answer with its count', async () => {
    const { recorder } = recorderAt();
    const notFound = JSON.stringify({ error: { code: 'not_found' } });
    const answers: Array<() => Response> = [
      () => new Response(notFound, { status: 404, headers: { 'content-type': 'Application/JSON ; charset=utf-8' } }),
      () => new Response(notFound, { status: 404, headers: { 'content-type': 'application/json' } }),
      () => new Response(notFound, { status: 404, headers: { 'content-type': 'application/json' } }),
      () => new Response(notFound, { status: 401, headers: { 'content-type': 'application/json' } }),
      () => new Response('  <html>Bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
      () => new Response('Bad gateway', { status: 502, headers: { 'content-type': 'text/plain' } }),
      () => new Response(' \n ', { status: 200 }),
    ];
    let i = 0;
    const fetch = recorder.recordingFetch(async () => answers[i++]!());
    const first = await fetch(`${LIVES}/abc123`);
    assert.equal(await first.text(), notFound, 'the caller reads the answer whole');
    await fetch(`${LIVES}/abc123`, { method: 'get' });
    await fetch(new Request('https://svc.example/live/v1/voices'));
    await fetch(new URL(`${LIVES}/abc123`));
    await fetch(`${LIVES}/abc123`, { method: 'POST' });
    await fetch(`${LIVES}/abc123`, { method: 'POST' });
    await fetch(LIVES, { method: 'POST' });
    const shape = { error: { code: 'string = not_found' } };
    assert.deepEqual(recorder.report().http, [
      { endpoint: 'GET /lives/{live_id}', status: 404, content_type: 'application/json', body: 'json', shape, count: 2 },
      { endpoint: 'GET /voices', status: 404, content_type: 'application/json', body: 'json', shape, count: 1 },
      { endpoint: 'GET /lives/{live_id}', status: 401, content_type: 'application/json', body: 'json', shape, count: 1 },
      { endpoint: 'POST /lives/{live_id}', status: 502, content_type: 'text/html', body: 'html', count: 1 },
      { endpoint: 'POST /lives/{live_id}', status: 502, content_type: 'text/plain', body: 'text', count: 1 },
      { endpoint: 'POST /lives', status: 200, content_type: 'text/plain', body: 'empty', count: 1 },
    ]);
  });

  it('keeps an answer it could not read as an empty one, and hands it on as it came', async () => {
    const { recorder } = recorderAt();
    const broken = new Response(new ReadableStream({ start: (c) => c.error(new Error('connection reset')) }), { status: 200 });
    const res = await recorder.recordingFetch(async () => broken)(LIVES, { method: 'POST' });
    assert.equal(res, broken);
    assert.deepEqual(recorder.report().http, [{ endpoint: 'POST /lives', status: 200, content_type: null, body: 'empty', count: 1 }]);
  });

  it('counts answers that differ only by an id as one shape (ids are hidden before answers are compared)', async () => {
    const { recorder } = recorderAt();
    const fetch = recorder.recordingFetch(answering({ live: { id: 'room-one-1' }, seats: { 'room-one-1': 2 } }, { live: { id: 'room-two-2' }, seats: { 'room-two-2': 3 } }));
    await fetch(`${LIVES}/room-one-1`);
    await fetch(`${LIVES}/room-two-2`);
    assert.deepEqual(recorder.report().http, [
      { endpoint: 'GET /lives/{live_id}', status: 200, content_type: 'application/json', body: 'json', shape: { live: { id: 'string' }, seats: { '{key}': 'number (integer)' } }, count: 2 },
    ]);
  });

  it('still records an absurdly deep answer as JSON, its shape cut at twelve levels', async () => {
    const { recorder } = recorderAt();
    const depth = 50_000;
    const text = '['.repeat(depth) + ']'.repeat(depth);
    await recorder.recordingFetch(async () => new Response(text, { status: 200, headers: { 'content-type': 'application/json' } }))(LIVES);
    const cut: Shape = Array.from({ length: 13 }).reduce<Shape>((inner) => [inner], 'nested too deep');
    assert.deepEqual(recorder.report().http, [{ endpoint: 'GET /lives', status: 200, content_type: 'application/json', body: 'json', shape: cut, count: 1 }]);
  });
});

describe('WireRecorder: secrets', () => {
  it('takes the strings under id-, token-, key-, secret-, persona- or password-named fields as secrets, also inside such a field and twelve levels down', async () => {
    const { recorder } = recorderAt();
    const fetch = recorder.recordingFetch(
      answering(
        { call_mode: 'video', idle_mode: 'video', ended_at: null },
        { api_key: { id: 'kid-7f3a9' }, type: 'kid-7f3a9' },
        { type: 'deep_user_0042', deep: nestedIn(11, { user_id: 'deep_user_0042' }) },
      ),
    );
    for (let i = 0; i < 3; i++) await fetch(LIVES);
    const [modes, nestedKey, deep] = recorder.report().http.map((h) => h.shape);
    assert.deepEqual(modes, { call_mode: 'string = video', idle_mode: 'string', ended_at: 'null' }, 'a field that only starts like an id holds no secret');
    assert.deepEqual(nestedKey, { api_key: { id: 'string' }, type: 'string' });
    assert.equal((deep as Record<string, Shape>).type, 'string');
    assert.equal(JSON.stringify(recorder.report()).includes('kid-7f3a9'), false);
    assert.equal(JSON.stringify(recorder.report()).includes('deep_user_0042'), false);
  });

  it('takes given secrets trimmed, from four characters on, and ignores what is not a string', async () => {
    const { recorder } = recorderAt();
    recorder.addSecrets(null, undefined, ' abcd ', 'xyz');
    await recorder.recordingFetch(answering({ type: 'abcd', status: 'xyz1' }))(LIVES);
    assert.deepEqual(recorder.report().http[0]!.shape, { type: 'string', status: 'string = xyz1' });
  });

  it('hides, in what it recorded earlier, a value it learns later is an id', async () => {
    const { recorder } = recorderAt();
    const fetch = recorder.recordingFetch(answering({ live: { status: 'roomx42abc1' } }, { live: { id: 'roomx42abc1', status: 'waiting' } }));
    await fetch(`${LIVES}/x`);
    const { server } = socketOf(recorder);
    server.open();
    server.receive({ type: 'notice', payload: { code: 'roomx42abc1' } });
    await fetch(LIVES, { method: 'POST' });
    const r = recorder.report();
    assert.deepEqual(
      r.http.map((h) => h.shape),
      [{ live: { status: 'string' } }, { live: { id: 'string', status: 'string = waiting' } }],
    );
    assert.deepEqual(r.socket.messages, [{ role: 'other', type: 'notice', shape: { type: 'string = notice', payload: { code: 'string' } }, count: 1 }]);
    assert.equal(JSON.stringify(r).includes('roomx42abc1'), false);
  });
});

describe('WireRecorder: connections', () => {
  it('counts opened connections, the status of each refused handshake, and who ended each connection and when', async () => {
    const { recorder, clock } = recorderAt(1_000);
    const transports = new FakeTransports();
    const ended = socketOf(recorder, transports);
    ended.server.open();
    ended.client.send(JSON.stringify({ type: 5, payload: {} }));
    await clock.advance(250);
    ended.client.terminate();
    const dropped = socketOf(recorder, transports);
    dropped.server.open();
    await clock.advance(1_000);
    dropped.server.serverClose(1006);
    const refused = socketOf(recorder, transports);
    refused.server.fail(new AvatarError('unauthorized', 'refused', { status: 401 }));
    const unreachable = socketOf(recorder, transports);
    unreachable.server.fail(new AvatarError('network', 'no route'));
    const failed = socketOf(recorder, transports);
    failed.server.open();
    failed.server.fail(new AvatarError('server', 'broke', { status: 500 }));

    assert.equal(ended.server.terminated, true, 'terminate reaches the socket');
    assert.deepEqual(
      [ended.seen, dropped.seen, refused.seen, unreachable.seen, failed.seen],
      [['open', 'close 1006'], ['open', 'close 1006'], ['error unauthorized', 'close 1006'], ['error network', 'close 1006'], ['open', 'error server', 'close 1006']],
      'every event passes through',
    );
    const r = recorder.report().socket;
    assert.equal(r.connections, 3);
    assert.deepEqual(r.refused_handshakes, [401]);
    assert.deepEqual(r.closes, [
      { code: 1006, by: 'client', after_client_message_ms: 250 },
      { code: 1006, by: 'network', after_client_message_ms: null },
      { code: 1006, by: 'network', after_client_message_ms: null },
    ]);
  });

  it('counts control frames for handlers that take none', () => {
    const { recorder } = recorderAt();
    const { server } = socketOf(recorder);
    server.open();
    server.receivePing();
    server.receivePong();
    server.receivePing();
    assert.deepEqual(recorder.report().socket.control_frames, { ping: 2, pong: 1 });
  });

  it('counts what the client sent while the socket was open, by type', async () => {
    const { recorder, clock } = recorderAt(1_000);
    const { client, server } = socketOf(recorder);
    client.send(JSON.stringify({ type: 1 }));
    server.open();
    await clock.advance(100);
    for (const text of [JSON.stringify({ type: 1, payload: {} }), '{}', '[1]', '{"type": true}', 'hello', JSON.stringify({ type: 'hangup' })]) client.send(text);
    await clock.advance(400);
    server.serverClose(1000);
    client.send(JSON.stringify({ type: 5 }));
    const r = recorder.report().socket;
    assert.deepEqual(r.client_sent.messages, { '1': 1, 'no type': 3, 'not JSON': 1, hangup: 1 });
    assert.deepEqual(r.closes, [{ code: 1000, by: 'server', after_client_message_ms: 400 }]);
  });
});

describe('WireRecorder: server messages', () => {
  it('tells messages apart by role, type and shape, and counts repeats', () => {
    const { recorder } = recorderAt();
    const { server, seen } = socketOf(recorder);
    server.open();
    server.receiveBinary(new Uint8Array([1, 2]));
    server.receiveBinary(new Uint8Array([3]));
    server.receive('hello');
    server.receive('null');
    server.receive({ type: true });
    server.receive({ type: 1_000_001 });
    server.receive({ type: 1_000_002 });
    server.receive({ type: { name: 'x' } });
    server.receive({ type: { name: 'y' } });
    server.receive({ type: 'status', payload: { n: 1 } });
    server.receive({ type: 'status', payload: { n: 2 } });
    assert.equal(seen.length, 12, 'every message passes through');
    assert.deepEqual(recorder.report().socket.messages, [
      { role: 'binary', type: null, count: 2 },
      { role: 'not_json', type: null, count: 1 },
      { role: 'other', type: null, shape: 'null', count: 1 },
      { role: 'other', type: null, shape: { type: 'boolean = true' }, count: 1 },
      // Types too large to show still tell messages apart.
      { role: 'other', type: null, shape: { type: 'number (integer)' }, count: 1 },
      { role: 'other', type: null, shape: { type: 'number (integer)' }, count: 1 },
      { role: 'other', type: null, shape: { type: { name: 'string' } }, count: 2 },
      { role: 'other', type: 'status', shape: { type: 'string = status', payload: { n: 'number (integer)' } }, count: 2 },
    ]);
  });

  it('counts bytes as binary, whatever the frame says it is', () => {
    const { recorder } = recorderAt();
    let handlers: TransportHandlers | undefined;
    const factory: TransportFactory = (_url, _headers, h) => {
      handlers = h;
      return { send() {}, close() {}, terminate() {}, isOpen: true };
    };
    recorder.recordingTransports(factory)('ws://svc.example/ws', {}, { onOpen() {}, onMessage() {}, onClose() {}, onError() {} });
    handlers!.onOpen();
    handlers!.onMessage(new TextEncoder().encode('{}'), false);
    handlers!.onMessage('{}', true);
    assert.deepEqual(recorder.report().socket.messages, [{ role: 'binary', type: null, count: 2 }]);
  });

  it('counts ids seen in messages as one shape', () => {
    const { recorder } = recorderAt();
    const { server } = socketOf(recorder);
    server.open();
    server.receive({ type: 'seats', payload: { live_id: 'room-one-1', seats: { 'room-one-1': 2 } } });
    server.receive({ type: 'seats', payload: { live_id: 'room-two-2', seats: { 'room-two-2': 3 } } });
    assert.deepEqual(recorder.report().socket.messages, [
      { role: 'other', type: 'seats', shape: { type: 'string = seats', payload: { live_id: 'string', seats: { '{key}': 'number (integer)' } } }, count: 2 },
    ]);
  });

  it('records where the ack’s success sat', () => {
    const ackOf = (frame: unknown) => {
      const { recorder } = recorderAt();
      const { server } = socketOf(recorder);
      server.open();
      server.receive(frame);
      return recorder.report().socket.ack;
    };
    assert.deepEqual(ackOf({ type: 2, payload: { ack: { success: true } } }), { type: 2, path: 'payload.ack', shape: { type: 'number = 2', payload: { ack: { success: 'boolean = true' } } } });
    assert.deepEqual(ackOf({ type: 2, payload: { conn_init_ack: {}, success: true } }), {
      type: 2,
      path: 'payload',
      shape: { type: 'number = 2', payload: { conn_init_ack: {}, success: 'boolean = true' } },
    });
    assert.deepEqual(ackOf({ type: 'conn_init_ack', success: false, error_code: 'BUSY', payload: {} }), {
      type: 'conn_init_ack',
      path: '(top level)',
      shape: { type: 'string = conn_init_ack', success: 'boolean = false', error_code: 'string = BUSY', payload: {} },
    });
  });

  it('names the ping’s format — none seen, JSON, WebSocket frames or both — and takes the period from the JSON pings when there are any', async () => {
    const { recorder, clock } = recorderAt();
    assert.deepEqual(recorder.report().socket.ping, { format: 'none-seen', type: null, shape: null, count: 0, period_ms: null });
    const { server } = socketOf(recorder);
    server.open();
    server.receive({ type: 3 });
    await clock.advance(1_000);
    server.receivePing();
    await clock.advance(1_000);
    server.receivePing();
    await clock.advance(2_000);
    server.receive({ type: 3 });
    assert.deepEqual(recorder.report().socket.ping, {
      format: 'both',
      type: 3,
      shape: { type: 'number = 3' },
      count: 4,
      period_ms: { min: 4_000, median: 4_000, max: 4_000, samples: 1 },
    });
  });
});

describe('WireRecorder: the report', () => {
  it('says what it is and what it could not see, each note once', () => {
    const { recorder } = recorderAt(Date.UTC(2026, 0, 2, 3, 4, 5));
    recorder.note('the ack: none asked for');
    recorder.note('the ack: none asked for');
    recorder.note('a second connection');
    const r = recorder.report();
    assert.deepEqual(
      { report: r.report, version: r.version, source: r.source, surface: r.surface, created_at: r.created_at, not_seen: r.not_seen },
      { report: 'avatar-kiosk wire report', version: 1, source: 'cli-probe', surface: 'direct', created_at: '2026-01-02T03:04:05.000Z', not_seen: ['the ack: none asked for', 'a second connection'] },
    );
    assert.deepEqual(r.socket.refused_handshakes, []);
  });
});

describe('recordErrorAnswers', () => {
  function service(): { fetch: typeof fetch; asked: Array<{ url: string; authorization: string | null }> } {
    const asked: Array<{ url: string; authorization: string | null }> = [];
    const fetch: typeof globalThis.fetch = async (input, init) => {
      const url = String(input);
      asked.push({ url, authorization: new Headers(init?.headers).get('authorization') });
      return url.includes('/voices')
        ? new Response(JSON.stringify({ detail: 'Invalid token.' }), { status: 401, headers: { 'content-type': 'application/json' } })
        : new Response(JSON.stringify({ error: { code: 'not_found', message: 'No such session.' } }), { status: 404, headers: { 'content-type': 'application/json' } });
    };
    return { fetch, asked };
  }

  it('on the direct surface, asks for an unknown session and, with an unknown key, the voice list, and records both errors', async () => {
    const { recorder, clock } = recorderAt();
    const { fetch, asked } = service();
    const client = new ServiceClient({ target: { surface: 'direct', baseUrl: 'https://svc.example', apiKey: 'sk_live_wire_0042' }, fetch, clock });
    await recordErrorAnswers(client, recorder);
    assert.deepEqual(asked, [
      { url: `${LIVES}/${UNKNOWN_SESSION_ID}`, authorization: 'Token sk_live_wire_0042' },
      { url: 'https://svc.example/live/v1/voices', authorization: `Token ${UNKNOWN_API_KEY}` },
    ]);
    const r = recorder.report();
    assert.deepEqual(r.http, [
      { endpoint: 'GET /lives/{live_id}', status: 404, content_type: 'application/json', body: 'json', shape: { error: { code: 'string = not_found', message: 'string' } }, count: 1 },
      { endpoint: 'GET /voices', status: 401, content_type: 'application/json', body: 'json', shape: { detail: 'string' }, count: 1 },
    ]);
    assert.deepEqual(r.not_seen, []);
  });

  it('on the gateway surface, asks only for the unknown session and notes why the 401 body is missing', async () => {
    const { recorder, clock } = recorderAt();
    const { fetch, asked } = service();
    const client = new ServiceClient({ target: { surface: 'gateway', gatewayUrl: 'https://gw.example/prefix' }, fetch, clock });
    await recordErrorAnswers(client, recorder);
    assert.deepEqual(asked, [{ url: `https://gw.example/prefix/api/lives/${UNKNOWN_SESSION_ID}`, authorization: null }]);
    const r = recorder.report();
    assert.deepEqual(r.http.map((h) => `${h.endpoint} ${h.status}`), ['GET /lives/{live_id} 404']);
    assert.deepEqual(r.not_seen, ['401 body: not asked for (the gateway surface sends no key of ours)']);
  });
});
