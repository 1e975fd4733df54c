/**
 * The wire contract (protocol.ts, spec §2–§8): billing rounds up to whole 2-second units; server frames are
 * read into an ack, a forced hangup, a ping or "other" however their fields are typed, and anything that
 * is not a frame is null; the client's own frames carry exactly the spec's keys; the REST schemas accept
 * the documented bodies and name what is wrong with the exact message a caller shows; error bodies are
 * read into a message and a code.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_VOICE,
  MAX_IMAGE_BYTES,
  billableSeconds,
  cloneVoiceRequestSchema,
  cloneVoiceResponseSchema,
  connInitFrame,
  createSessionRequestSchema,
  createSessionResponseSchema,
  creditsFor,
  errorCodeFromBody,
  errorMessageFromBody,
  hangupFrame,
  HANGUP_REASONS,
  listVoicesResponseSchema,
  liveRecordSchema,
  NO_RECONNECT_REASONS,
  parseServerFrame,
  pongFrame,
  querySessionResponseSchema,
} from '../../../electron/core/protocol.ts';

/** The messages zod reports, with their paths, so a test pins the exact wording a caller shows. */
function issues(result: { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } }): string[] {
  return (result.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('billing (spec §8)', () => {
  describe('billableSeconds', () => {
    it('rounds 11 s up to 12 s', () => {
      assert.equal(billableSeconds(11_000), 12);
    });
    it('rounds 11.001 s up to 12 s', () => {
      assert.equal(billableSeconds(11_001), 12);
    });
    it('keeps an even 12 s at 12 s', () => {
      assert.equal(billableSeconds(12_000), 12);
    });
    it('bills 12.001 s as 14 s', () => {
      assert.equal(billableSeconds(12_001), 14);
    });
    it('bills a single millisecond as 2 s', () => {
      assert.equal(billableSeconds(1), 2);
    });
    it('bills nothing for 0 ms or a negative duration', () => {
      assert.equal(billableSeconds(0), 0);
      assert.equal(billableSeconds(-500), 0);
    });
  });

  describe('creditsFor', () => {
    it('charges 3 credits per 2 seconds: 12 s → 18, 2 s → 3, 600 s → 900, 0 → 0', () => {
      assert.equal(creditsFor(12), 18);
      assert.equal(creditsFor(2), 3);
      assert.equal(creditsFor(600), 900);
      assert.equal(creditsFor(0), 0);
    });
    it('chains with billableSeconds: 11 s live costs 18 credits, 1 ms costs 3', () => {
      assert.equal(creditsFor(billableSeconds(11_000)), 18);
      assert.equal(creditsFor(billableSeconds(1)), 3);
    });
  });
});

describe('parseServerFrame', () => {
  const parse = (value: unknown) => parseServerFrame(JSON.stringify(value));

  describe('conn_init_ack', () => {
    it('recognises a nested successful ack', () => {
      assert.deepEqual(parse({ type: 2, payload: { conn_init_ack: { success: true } } }), { kind: 'conn_init_ack', success: true });
    });
    it('recognises a flat successful ack (success at the top level)', () => {
      assert.deepEqual(parse({ type: 2, success: true }), { kind: 'conn_init_ack', success: true });
    });
    it('recognises success directly in the payload', () => {
      assert.deepEqual(parse({ type: 2, payload: { success: true } }), { kind: 'conn_init_ack', success: true });
    });
    it('reports NOT_READY', () => {
      assert.deepEqual(parse({ type: 2, payload: { conn_init_ack: { success: false, error_code: 'NOT_READY' } } }), {
        kind: 'conn_init_ack',
        success: false,
        errorCode: 'NOT_READY',
      });
    });
    it('reports LIVE_CONN_INIT_FAILED from a flat ack', () => {
      assert.deepEqual(parse({ type: 2, success: false, error_code: 'LIVE_CONN_INIT_FAILED' }), {
        kind: 'conn_init_ack',
        success: false,
        errorCode: 'LIVE_CONN_INIT_FAILED',
      });
    });
    it('reports UNKNOWN for a failed ack without an error_code', () => {
      assert.deepEqual(parse({ type: 2, payload: { conn_init_ack: { success: false } } }), {
        kind: 'conn_init_ack',
        success: false,
        errorCode: 'UNKNOWN',
      });
    });
    it('reports UNKNOWN for an empty or non-string error_code', () => {
      assert.deepEqual(parse({ payload: { conn_init_ack: { success: false, error_code: '' } } }), {
        kind: 'conn_init_ack',
        success: false,
        errorCode: 'UNKNOWN',
      });
      assert.deepEqual(parse({ payload: { conn_init_ack: { success: false, error_code: 7 } } }), {
        kind: 'conn_init_ack',
        success: false,
        errorCode: 'UNKNOWN',
      });
    });
    it('does not treat a non-boolean success as an ack', () => {
      assert.deepEqual(parse({ type: 2, payload: { conn_init_ack: { success: 'true' } } }), { kind: 'other', type: 2 });
    });
  });

  describe('forced hangup (type 6)', () => {
    it('carries the hangup reason', () => {
      assert.deepEqual(parse({ type: 6, payload: { hangup: { hangup_reason: 'credit_insufficient' } } }), {
        kind: 'forced_hangup',
        reason: 'credit_insufficient',
      });
    });
    it('reports "unknown" when type 6 has no payload', () => {
      assert.deepEqual(parse({ type: 6 }), { kind: 'forced_hangup', reason: 'unknown' });
    });
    it('reports "unknown" when the reason is missing or empty', () => {
      assert.deepEqual(parse({ type: 6, payload: { hangup: {} } }), { kind: 'forced_hangup', reason: 'unknown' });
      assert.deepEqual(parse({ type: 6, payload: { hangup: { hangup_reason: '' } } }), { kind: 'forced_hangup', reason: 'unknown' });
    });
    it('reports "unknown" for a type-6 frame whose reason is not a string', () => {
      assert.deepEqual(parse({ type: 6, payload: { hangup: { hangup_reason: 42 } } }), { kind: 'forced_hangup', reason: 'unknown' });
    });
    it('keeps a reason the spec does not list, as a string', () => {
      assert.deepEqual(parse({ type: 6, payload: { hangup: { hangup_reason: 'fourteenth_reason' } } }), {
        kind: 'forced_hangup',
        reason: 'fourteenth_reason',
      });
    });
    it('recognises a hangup payload without a type number as a forced hangup', () => {
      assert.deepEqual(parse({ payload: { hangup: { hangup_reason: 'external' } } }), { kind: 'forced_hangup', reason: 'external' });
    });
    it('does not take a hangup payload with a non-string reason (and no type 6) for a forced hangup', () => {
      assert.deepEqual(parse({ type: 7, payload: { hangup: { hangup_reason: 42 } } }), { kind: 'other', type: 7 });
    });
    it('does not mistake our own type-5 hangup echoed back (client-style seq_id) for a forced hangup', () => {
      assert.deepEqual(parse(hangupFrame('live-1', 4, 'user_end')), { kind: 'other', type: 5 });
    });
    it('still treats type 6 as a forced hangup even if it carries a seq_id', () => {
      assert.deepEqual(parse({ type: 6, seq_id: 9, payload: { hangup: { hangup_reason: 'timeout' } } }), { kind: 'forced_hangup', reason: 'timeout' });
    });
    it('is a forced hangup even when the frame also carries an ack-like success field (found by frame fuzzing)', () => {
      assert.deepEqual(parse({ type: 6, payload: { hangup: { hangup_reason: 'external' }, success: true } }), { kind: 'forced_hangup', reason: 'external' });
      assert.deepEqual(parse({ type: '6', success: false, error_code: 'NOT_READY' }), { kind: 'forced_hangup', reason: 'unknown' });
      assert.deepEqual(parse({ type: 6, payload: { conn_init_ack: { success: true } } }), { kind: 'forced_hangup', reason: 'unknown' });
    });
    it('accepts the type as the string "6"', () => {
      assert.deepEqual(parse({ type: '6', payload: { hangup: { hangup_reason: 'timeout' } } }), { kind: 'forced_hangup', reason: 'timeout' });
    });
  });

  describe('ping', () => {
    it('recognises type 3', () => {
      assert.deepEqual(parse({ type: 3, payload: {} }), { kind: 'ping' });
    });
    it('treats a null payload as an empty one (a type-3 frame with payload null is still a ping)', () => {
      assert.deepEqual(parse({ type: 3, payload: null }), { kind: 'ping' });
      assert.deepEqual(parse({ type: 9, payload: null }), { kind: 'other', type: 9 });
    });
    it('recognises {type: "ping"} and {type: "heartbeat"}', () => {
      assert.deepEqual(parse({ type: 'ping' }), { kind: 'ping' });
      assert.deepEqual(parse({ type: 'PING' }), { kind: 'ping' });
      assert.deepEqual(parse({ type: 'heartbeat' }), { kind: 'ping' });
    });
    it('recognises the type names ping and heartbeat in any case, and not pong', () => {
      assert.deepEqual(parse({ type: 'PING' }), { kind: 'ping' });
      assert.deepEqual(parse({ type: 'HeartBeat' }), { kind: 'ping' });
      assert.deepEqual(parse({ type: 'pong' }), { kind: 'other', type: 'pong' });
    });
    it('recognises a payload naming ping', () => {
      assert.deepEqual(parse({ type: 99, payload: { ping: { ts: 1 } } }), { kind: 'ping' });
    });
    it('recognises a payload that names heartbeat as a ping, and does not for other payload keys', () => {
      assert.deepEqual(parse({ payload: { heartbeat: {} } }), { kind: 'ping' });
      assert.deepEqual(parse({ payload: { beat: {} } }), { kind: 'other', type: undefined });
    });
  });

  describe('anything else', () => {
    it('returns other with the type for an unknown type', () => {
      assert.deepEqual(parse({ type: 42, payload: { foo: 1 } }), { kind: 'other', type: 42 });
      assert.deepEqual(parse({ type: 'news' }), { kind: 'other', type: 'news' });
    });
    it('returns other with an undefined type for an empty object', () => {
      assert.deepEqual(parse({}), { kind: 'other', type: undefined });
    });
    it('returns null for invalid JSON', () => {
      assert.equal(parseServerFrame('{not json'), null);
      assert.equal(parseServerFrame(''), null);
    });
    it('returns null for arrays, numbers, strings, booleans and null', () => {
      assert.equal(parseServerFrame('[1,2,3]'), null);
      assert.equal(parseServerFrame('[{"success":true}]'), null);
      assert.equal(parseServerFrame('42'), null);
      assert.equal(parseServerFrame('"ping"'), null);
      assert.equal(parseServerFrame('true'), null);
      assert.equal(parseServerFrame('null'), null);
    });
    it('returns null for an object whose type is neither a number nor a string', () => {
      assert.equal(parse({ type: { nested: true } }), null);
    });
  });
});

describe('client frame builders (spec §6)', () => {
  it('connInitFrame builds exactly the conn_init envelope', () => {
    assert.deepEqual(connInitFrame('live-1', 1), { type: 1, live_id: 'live-1', seq_id: 1, payload: { conn_init: { version: 1 } } });
  });
  it('hangupFrame builds exactly the hangup envelope', () => {
    assert.deepEqual(hangupFrame('live-1', 3, 'user_end'), {
      type: 5,
      live_id: 'live-1',
      seq_id: 3,
      payload: { hangup: { hangup_reason: 'user_end' } },
    });
  });
  it('pongFrame uses type 4 and carries the time', () => {
    assert.deepEqual(pongFrame('live-1', 2, 1234), { type: 4, live_id: 'live-1', seq_id: 2, payload: { pong: { ts: 1234 } } });
  });
  it('serialises to JSON with exactly the spec keys and no extras', () => {
    assert.equal(JSON.stringify(connInitFrame('x', 1)), '{"type":1,"live_id":"x","seq_id":1,"payload":{"conn_init":{"version":1}}}');
  });
});

describe('constants', () => {
  it('lists the thirteen shown hangup reasons, and does not reconnect after balance or safety hangups', () => {
    assert.equal(HANGUP_REASONS.length, 13);
    assert.deepEqual([...NO_RECONNECT_REASONS].sort(), ['audit_violation', 'credit_insufficient']);
  });
  it('allows images up to 50 MB and defaults the voice to Tina (spec §2.3)', () => {
    assert.equal(MAX_IMAGE_BYTES, 52_428_800);
    assert.equal(DEFAULT_VOICE, 'Tina');
  });
});

describe('createSessionRequestSchema', () => {
  const valid = {
    call_mode: 'video',
    moderation: 'disabled',
    extra_motion: true,
    avatar: { persona: 'A friendly guide', image_uri: 'https://example.test/a.png', name: 'Ava', voice: 'Tina' },
  };

  it('accepts a valid body unchanged', () => {
    const r = createSessionRequestSchema.safeParse(valid);
    assert.equal(r.success, true);
    assert.deepEqual(r.data, valid);
  });
  it('accepts the minimal body (call_mode, persona, image_uri)', () => {
    const r = createSessionRequestSchema.safeParse({ call_mode: 'audio', avatar: { persona: 'p', image_uri: 'u' } });
    assert.equal(r.success, true);
  });
  it('rejects a missing persona', () => {
    const r = createSessionRequestSchema.safeParse({ ...valid, avatar: { image_uri: 'u' } });
    assert.equal(r.success, false);
    assert.deepEqual(r.error?.issues[0]?.path, ['avatar', 'persona']);
  });
  it('rejects an empty persona with "persona is required"', () => {
    const r = createSessionRequestSchema.safeParse({ ...valid, avatar: { persona: '', image_uri: 'u' } });
    assert.equal(r.success, false);
    assert.equal(r.error?.issues[0]?.message, 'persona is required');
  });
  it('rejects a missing image_uri', () => {
    const r = createSessionRequestSchema.safeParse({ ...valid, avatar: { persona: 'p' } });
    assert.equal(r.success, false);
    assert.deepEqual(r.error?.issues[0]?.path, ['avatar', 'image_uri']);
  });
  it('rejects an empty image_uri with "image_uri is required"', () => {
    const result = createSessionRequestSchema.safeParse({ call_mode: 'audio', avatar: { persona: 'p', image_uri: '' } });
    assert.deepEqual(issues(result), ['avatar.image_uri: image_uri is required']);
  });
  it('rejects a missing call_mode', () => {
    const { call_mode: _omit, ...rest } = valid;
    const r = createSessionRequestSchema.safeParse(rest);
    assert.equal(r.success, false);
    assert.deepEqual(r.error?.issues[0]?.path, ['call_mode']);
  });
  it('rejects a call_mode other than audio or video', () => {
    const r = createSessionRequestSchema.safeParse({ ...valid, call_mode: 'hologram' });
    assert.equal(r.success, false);
    assert.deepEqual(r.error?.issues[0]?.path, ['call_mode']);
  });
  it('rejects an unknown moderation value and a non-boolean extra_motion', () => {
    assert.equal(createSessionRequestSchema.safeParse({ ...valid, moderation: 'off' }).success, false);
    assert.equal(createSessionRequestSchema.safeParse({ ...valid, extra_motion: 'yes' }).success, false);
  });
});

describe('createSessionResponseSchema', () => {
  const response = {
    live: { id: 'live-1', status: 'waiting', live_duration: 600, call_mode: 'video' },
    rtc: { app_id: 'app', channel_id: 'live-user-live-1', user_id: 'live-user-c-live-1', token: 'rtc-token', token_expire_at: '1700003600' },
  };

  it('accepts the documented response', () => {
    const r = createSessionResponseSchema.safeParse(response);
    assert.equal(r.success, true);
    assert.equal(r.data?.rtc.token_expire_at, '1700003600');
  });
  it('accepts a numeric token_expire_at and normalises it to a string', () => {
    const r = createSessionResponseSchema.safeParse({ ...response, rtc: { ...response.rtc, token_expire_at: 1700003600 } });
    assert.equal(r.success, true);
    assert.equal(r.data?.rtc.token_expire_at, '1700003600');
  });
  it('keeps extra fields at the top level and inside live', () => {
    const r = createSessionResponseSchema.safeParse({ ...response, request_id: 'r-9', live: { ...response.live, region: 'eu' } });
    assert.equal(r.success, true);
    assert.equal((r.data as Record<string, unknown>).request_id, 'r-9');
    assert.equal((r.data?.live as Record<string, unknown>).region, 'eu');
  });
  it('keeps an unknown status as a string', () => {
    const r = createSessionResponseSchema.safeParse({ ...response, live: { ...response.live, status: 'preparing' } });
    assert.equal(r.success, true);
    assert.equal(r.data?.live.status, 'preparing');
  });
  it('rejects a response without rtc, with an empty token, or with a non-positive live_duration', () => {
    assert.equal(createSessionResponseSchema.safeParse({ live: response.live }).success, false);
    assert.equal(createSessionResponseSchema.safeParse({ ...response, rtc: { ...response.rtc, token: '' } }).success, false);
    assert.equal(createSessionResponseSchema.safeParse({ ...response, live: { ...response.live, live_duration: 0 } }).success, false);
  });
});

describe('liveRecordSchema (query response, spec §4)', () => {
  it('normalises timestamps: null and an explicit undefined become undefined, numbers become strings', () => {
    const record = liveRecordSchema.parse({ id: 'live-1', status: 'ended', created_at: null, started_at: 1_700_000_000, ended_at: '1700000600' });
    assert.equal(record.created_at, undefined);
    assert.equal(record.started_at, '1700000000');
    assert.equal(record.ended_at, '1700000600');
    const explicit = liveRecordSchema.parse({ id: 'live-1', status: 'ended', ended_at: undefined });
    assert.equal(explicit.ended_at, undefined);
  });

  it('requires an id and a status, and checks the types of the billing figures and the avatar', () => {
    assert.equal(liveRecordSchema.safeParse({ status: 'ended' }).success, false);
    assert.equal(liveRecordSchema.safeParse({ id: 'live-1' }).success, false);
    assert.deepEqual(issues(liveRecordSchema.safeParse({ id: 'live-1', status: 'ended', avatar: { name: 5 } })).map((s) => s.split(':')[0]), ['avatar.name']);
    assert.equal(liveRecordSchema.safeParse({ id: 'live-1', status: 'ended', avatar: { voice: null, persona: null, name: null } }).success, true);
  });

  it('querySessionResponseSchema needs a valid live record', () => {
    assert.equal(querySessionResponseSchema.safeParse({}).success, false);
    assert.equal(querySessionResponseSchema.safeParse({ live: {} }).success, false);
    assert.equal(querySessionResponseSchema.parse({ live: { id: 'live-1', status: 'ended', billed_seconds: 12 } }).live.billed_seconds, 12);
  });
});

describe('voice schemas (spec §2.4, §4)', () => {
  it('rejects an empty audio_url and voice with their own messages', () => {
    assert.deepEqual(issues(cloneVoiceRequestSchema.safeParse({ audio_url: '', voice: '' })), ['audio_url: audio_url is required', 'voice: voice is required']);
    assert.equal(cloneVoiceRequestSchema.safeParse({}).success, false);
  });

  it('accepts names and URLs longer than one character, and a language', () => {
    const body = { audio_url: 'https://example.invalid/sample.wav', voice: 'Anna', language: 'en' };
    assert.deepEqual(cloneVoiceRequestSchema.parse(body), body);
    assert.deepEqual(issues(cloneVoiceRequestSchema.safeParse({ ...body, language: '' })).map((s) => s.split(':')[0]), ['language']);
  });

  it('needs a non-empty voice in the clone response', () => {
    assert.equal(cloneVoiceResponseSchema.parse({ voice: 'Anna' }).voice, 'Anna');
    assert.equal(cloneVoiceResponseSchema.safeParse({ voice: '' }).success, false);
    assert.equal(cloneVoiceResponseSchema.safeParse({}).success, false);
  });

  it('needs a voices array of records with a string voice', () => {
    assert.deepEqual(listVoicesResponseSchema.parse({ voices: [{ voice: 'Tina' }] }).voices, [{ voice: 'Tina' }]);
    assert.equal(listVoicesResponseSchema.safeParse({}).success, false);
    assert.equal(listVoicesResponseSchema.safeParse({ voices: [{ voice: 1 }] }).success, false);
  });
});

describe('error bodies', () => {
  describe('errorMessageFromBody', () => {
    it('reads error.message from {error: {code, message}}', () => {
      assert.equal(errorMessageFromBody({ error: { code: 'bad_image', message: 'The image has no face.' } }), 'The image has no face.');
    });
    it('reads message, detail and msg', () => {
      assert.equal(errorMessageFromBody({ message: 'Nope' }), 'Nope');
      assert.equal(errorMessageFromBody({ detail: 'Invalid token.' }), 'Invalid token.');
      assert.equal(errorMessageFromBody({ msg: 'oops' }), 'oops');
    });
    it('prefers error.message over message over detail', () => {
      assert.equal(errorMessageFromBody({ error: { message: 'first' }, message: 'second', detail: 'third' }), 'first');
      assert.equal(errorMessageFromBody({ message: 'second', detail: 'third' }), 'second');
    });
    it('reads a string error field', () => {
      assert.equal(errorMessageFromBody({ error: 'quota exceeded' }), 'quota exceeded');
    });
    it('returns a plain string body trimmed', () => {
      assert.equal(errorMessageFromBody('  Service unavailable \n'), 'Service unavailable');
    });
    it('trims the message and cuts it at 300 characters', () => {
      assert.equal(errorMessageFromBody({ error: { message: '  quota reached  ' } }), 'quota reached');
      assert.equal(errorMessageFromBody({ message: ` ${'x'.repeat(400)} ` }), 'x'.repeat(300));
    });
    it('caps a long (e.g. HTML) string at 300 characters', () => {
      const html = '<html><body>' + 'x'.repeat(1000) + '</body></html>';
      const out = errorMessageFromBody(html);
      assert.equal(out?.length, 300);
      assert.equal(out, html.slice(0, 300));
    });
    it('returns undefined for null, undefined, numbers, blank strings and bodies without a message', () => {
      assert.equal(errorMessageFromBody(null), undefined);
      assert.equal(errorMessageFromBody(undefined), undefined);
      assert.equal(errorMessageFromBody(500), undefined);
      assert.equal(errorMessageFromBody('   '), undefined);
      assert.equal(errorMessageFromBody({}), undefined);
      assert.equal(errorMessageFromBody({ error: { code: 'x' } }), undefined);
      assert.equal(errorMessageFromBody({ message: '  ' }), undefined);
    });
  });

  describe('errorCodeFromBody', () => {
    it('reads error.code, code and error_code', () => {
      assert.equal(errorCodeFromBody({ error: { code: 'insufficient_balance', message: 'm' } }), 'insufficient_balance');
      assert.equal(errorCodeFromBody({ code: 'E42' }), 'E42');
      assert.equal(errorCodeFromBody({ error_code: 'NOT_READY' }), 'NOT_READY');
    });
    it('returns undefined for strings, null, numeric codes and empty codes', () => {
      assert.equal(errorCodeFromBody('<html>502</html>'), undefined);
      assert.equal(errorCodeFromBody('E42'), undefined);
      assert.equal(errorCodeFromBody(null), undefined);
      assert.equal(errorCodeFromBody({ code: 42 }), undefined);
      assert.equal(errorCodeFromBody({ code: '' }), undefined);
      assert.equal(errorCodeFromBody({ message: 'no code' }), undefined);
    });
  });

  it('reads fields only from a plain object, not from a function that happens to carry them', () => {
    const fn = Object.assign(() => undefined, { message: 'from a function', code: 'FN' });
    assert.equal(errorMessageFromBody({ error: fn, message: 'outer' }), 'outer');
    assert.equal(errorCodeFromBody({ error: fn, code: 'OUTER' }), 'OUTER');
    assert.equal(errorCodeFromBody(fn), undefined);
  });
});
