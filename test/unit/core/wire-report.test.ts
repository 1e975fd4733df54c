/**
 * The wire report's shapes (core/wire-report.ts): values become kinds, the protocol's own words show only
 * where they are short and not secret, id-like keys are masked, and secrets learnt late are scrubbed; the
 * endpoint names, the ping period, and the recorder's handling of control frames and closes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { WireRecorder } from '../../../electron/core/wire-recorder.ts';
import { endpointOf, periodOf, scrubShape, shapeOf, touchesSecret, vocabularyValue, type Shape } from '../../../electron/core/wire-report.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';

describe('shapeOf', () => {
  it('replaces every value by its kind, and shows the vocabulary fields’ short words', () => {
    assert.deepEqual(
      shapeOf({
        type: 2,
        payload: { conn_init_ack: { success: false, error_code: 'NOT_READY' } },
        live: { id: 'f00dcafe12345678', status: 'on_live', started_at: '1700000000', ended_at: null, when: '2026-01-02T03:04:05Z', ratio: 0.5, tags: ['a', 'b'], none: [] },
        message: 'Starting needs 45 credits',
      }),
      {
        type: 'number = 2',
        payload: { conn_init_ack: { success: 'boolean = false', error_code: 'string = NOT_READY' } },
        live: { id: 'string', status: 'string = on_live', started_at: 'string (digits)', ended_at: 'null', when: 'string (ISO date)', ratio: 'number', tags: ['string'], none: [] },
        message: 'string',
      },
    );
  });

  it('never shows a vocabulary value that is a secret, holds one, is a long piece of one, or is not a short word', () => {
    const secrets = ['sk-live-0123456789', 'tok_abcdefghijkl'];
    assert.deepEqual(shapeOf({ type: 'sk-live-0123456789', code: 'x-sk-live-0123456789', status: 'abcdefghij', error_code: 'two words', hangup_reason: 'a'.repeat(41) }, [...secrets, 'xxabcdefghijxx']), {
      type: 'string',
      code: 'string',
      status: 'string',
      error_code: 'string',
      hangup_reason: 'string',
    });
    assert.equal(touchesSecret('ended', ['The guide ended her tour']), false, 'a short word inside a persona is not a piece of a secret');
  });

  it('masks keys that look like ids or hold a secret', () => {
    assert.deepEqual(shapeOf({ sessions: { 'a1b2c3d4e5f60718': { ok: true }, live_2024_user_99: 1, secretive: 2 } }, ['secretive']), {
      sessions: { '{key}': { ok: 'boolean' }, '{key 2}': 'number (integer)', '{key 3}': 'number (integer)' },
    });
  });

  it('names an empty string, and a date only where the value starts with one', () => {
    assert.deepEqual(shapeOf({ note: '', when: '2026-01-02T03:04:05Z', said: 'at 2026-01-02T03:04:05Z', digits: '0042' }), {
      note: 'string (empty)',
      when: 'string (ISO date)',
      said: 'string',
      digits: 'string (digits)',
    });
  });

  it('shows a vocabulary number only when it is a whole number under a million, and a word only when it is a string', () => {
    const shown = [999_999, -999_999, 1_000_000, 1.5, '12', null, ['ack'], 'video'].map((value) => (shapeOf({ code: value }) as Record<string, Shape>).code);
    assert.deepEqual(shown, ['number = 999999', 'number = -999999', 'number (integer)', 'number', 'string (digits)', 'null', ['string'], 'string = video']);
    assert.deepEqual(shapeOf({ call_mode: 'audio', mode: 'audio' }), { call_mode: 'string = audio', mode: 'string' }, 'call_mode is one of the protocol’s words');
  });

  it('stops twelve levels down, however the levels nest (objects, arrays, vocabulary fields)', () => {
    const wrap = (levels: number, inner: (x: unknown) => unknown, leaf: unknown): unknown => (levels === 0 ? leaf : inner(wrap(levels - 1, inner, leaf)));
    const kinds: Array<(x: unknown) => unknown> = [(x) => ({ a: x }), (x) => [x], (x) => ({ status: x })];
    for (const inner of kinds) {
      assert.deepEqual(shapeOf(wrap(12, inner, 0.5)), wrap(12, inner, 'number') as Shape, 'twelve levels are shown');
      assert.deepEqual(shapeOf(wrap(13, inner, 0.5)), wrap(13, inner, 'nested too deep') as Shape, 'the thirteenth is not');
    }
  });

  it('keeps field names, however long or dotted, and masks whole keys that are ids', () => {
    assert.deepEqual(shapeOf({ d: 1, top_visitors_now: 2, 'audio.sample_rate_16000': 3, 'sample_rate_16000.hz': 4, cafebabedeadbeef: 5 }), {
      d: 'number (integer)',
      top_visitors_now: 'number (integer)',
      'audio.sample_rate_16000': 'number (integer)',
      'sample_rate_16000.hz': 'number (integer)',
      '{key}': 'number (integer)',
    });
  });

  it('touchesSecret ignores secrets under four characters and takes a piece of a secret from eight characters on', () => {
    assert.equal(touchesSecret('cats', ['cat']), false, 'a three-letter secret would mask too much');
    assert.equal(touchesSecret('abcd', ['abcd']), true);
    assert.equal(touchesSecret('abcdefgh', ['xxabcdefghxx']), true);
    assert.equal(touchesSecret('abcdefg', ['xxabcdefgxx']), false);
  });

  it('vocabularyValue gives a type only when it is a whole number under a million or a short word that is no secret', () => {
    const values = [999_999, -3, 1_000_000, 1.5, '12', null, true, ['ack'], 'conn_init_ack', 'two words', 'sk_live_abcd'];
    assert.deepEqual(
      values.map((v) => vocabularyValue(v, ['sk_live_abcd'])),
      [999_999, -3, null, null, null, null, null, null, 'conn_init_ack', null, null],
    );
    assert.equal(vocabularyValue(true, []), null, 'a boolean is no type, even with no secret to check');
  });

  it('scrubShape hides a shown word and a key that a later-learnt secret touches', () => {
    const shape = { type: 'string = liveabc123', payload: { liveabc123: 'number (integer)', ok: 'boolean = true' } };
    assert.deepEqual(scrubShape(shape, ['liveabc123']), { type: 'string', payload: { '{key}': 'number (integer)', ok: 'boolean = true' } });
  });

  it('scrubShape checks only a shown value: a kind stays whole, and a long piece of a secret is hidden', () => {
    // A four-letter secret (a short persona, say) that is a word of a kind name must not cut the kind.
    const shape = { when: 'string (ISO date)', n: 'number (integer)', status: 'string = abcdefgh', ok: 'boolean = true' };
    assert.deepEqual(scrubShape(shape, ['date', 'xxabcdefghxx']), { when: 'string (ISO date)', n: 'number (integer)', status: 'string', ok: 'boolean = true' });
  });
});

describe('endpointOf and periodOf', () => {
  it('names endpoints relative to either surface, with ids replaced', () => {
    assert.deepEqual(
      [
        ['POST', 'https://svc.example/live/v1/lives'],
        ['GET', 'https://svc.example/live/v1/lives/abc123?x=1'],
        ['GET', 'https://gw.example/prefix/api/voices'],
        ['POST', 'https://gw.example/api/voices/clone'],
        ['GET', 'https://svc.example/elsewhere'],
        ['GET', 'not a url'],
      ].map(([m, u]) => endpointOf(m!, u!)),
      ['POST /lives', 'GET /lives/{live_id}', 'GET /voices', 'POST /voices/clone', 'GET (other path)', 'GET (unparsable URL)'],
    );
  });

  it('names a voice, a session’s sub-path, and nothing deeper or merely alike', () => {
    assert.deepEqual(
      [
        ['GET', 'https://svc.example/live/v1/voices/v-123'],
        ['POST', 'https://svc.example/live/v1/lives/abc123/hangup'],
        ['GET', 'https://svc.example/live/v1/lives/'],
        ['GET', 'https://svc.example/live/v1/lives/a/b/c'],
        ['GET', 'https://gw.example/api/voices-archive'],
      ].map(([m, u]) => endpointOf(m!, u!)),
      ['GET /voices/{voice}', 'POST /lives/{live_id}', 'GET /lives', 'GET (other path)', 'GET (other path)'],
    );
  });

  it('gives min, median and max of the gaps, or null with none', () => {
    assert.equal(periodOf([]), null);
    assert.deepEqual(periodOf([5_000]), { min: 5_000, median: 5_000, max: 5_000, samples: 1 });
    assert.deepEqual(periodOf([5_100, 4_900, 5_000, 6_000]), { min: 4_900, median: 5_050, max: 6_000, samples: 4 });
  });
});

describe('WireRecorder', () => {
  it('records control frames, the ping period from them, what the client sent, and who closed', async () => {
    const clock = new FakeClock(0);
    const recorder = new WireRecorder({ source: 'cli-probe', surface: 'direct', clock });
    const transports = new FakeTransports();
    const seen: string[] = [];
    const t = recorder.recordingTransports(transports.factory)('ws://x/ws', {}, {
      onOpen: () => seen.push('open'),
      onMessage: () => seen.push('message'),
      onClose: (code) => seen.push(`close ${code}`),
      onError: () => seen.push('error'),
      onPing: () => seen.push('ping'),
    });
    const server = transports.last;
    server.open();
    t.send(JSON.stringify({ type: 1, live_id: 'L', seq_id: 1, payload: {} }));
    for (let i = 0; i < 3; i++) {
      await clock.advance(5_000);
      server.receivePing();
    }
    t.pong!();
    server.receive({ type: 6, payload: { hangup: { hangup_reason: 'timeout' } } });
    await clock.advance(40);
    server.serverClose(1000, 'bye');
    assert.deepEqual(seen, ['open', 'ping', 'ping', 'ping', 'message', 'close 1000'], 'everything passes through');
    const r = recorder.report();
    assert.deepEqual(r.socket.ping, { format: 'ws-frames', type: null, shape: null, count: 3, period_ms: { min: 5_000, median: 5_000, max: 5_000, samples: 2 } });
    assert.deepEqual(r.socket.messages, [{ role: 'forced_hangup', type: 6, shape: { type: 'number = 6', payload: { hangup: { hangup_reason: 'string = timeout' } } }, count: 1 }]);
    assert.deepEqual(r.socket.client_sent, { messages: { '1': 1 }, ping_frames: 0, pong_frames: 1 });
    assert.deepEqual(r.socket.closes, [{ code: 1000, by: 'server', after_client_message_ms: 15_040 }]);
    assert.equal(r.created_at, '1970-01-01T00:00:15.040Z');
  });

  it('takes every id, token or persona it sees in an answer as a secret (a value shown elsewhere is then hidden)', async () => {
    const recorder = new WireRecorder({ source: 'service-check', surface: 'direct', clock: new FakeClock(0) });
    const answer = { live: { id: 'roomx42abc', status: 'waiting' }, rtc: { token: 'tok-abcdef' } };
    const fetch = recorder.recordingFetch(async () => new Response(JSON.stringify(answer), { status: 201, headers: { 'content-type': 'application/json; charset=utf-8' } }));
    await fetch('https://svc.example/live/v1/lives', { method: 'POST' });
    const transports = new FakeTransports();
    recorder.recordingTransports(transports.factory)('ws://x', {}, { onOpen() {}, onMessage() {}, onClose() {}, onError() {} });
    transports.last.open();
    transports.last.receive({ type: 'roomx42abc', payload: { status: 'roomx42abc' } });
    const r = recorder.report();
    assert.deepEqual(r.http, [{ endpoint: 'POST /lives', status: 201, content_type: 'application/json', body: 'json', shape: { live: { id: 'string', status: 'string = waiting' }, rtc: { token: 'string' } }, count: 1 }]);
    assert.deepEqual(r.socket.messages, [{ role: 'other', type: null, shape: { type: 'string', payload: { status: 'string' } }, count: 1 }]);
    assert.equal(JSON.stringify(r).includes('roomx42abc'), false);
  });
});
