/**
 * Edges of the wire contract that protocol.test.ts leaves open: which server frames count as a ping, an
 * ack or a forced hangup when fields have the wrong type, the exact messages of the REST schemas, how
 * timestamps are normalised, and how error bodies are read.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_VOICE,
  MAX_IMAGE_BYTES,
  billableSeconds,
  cloneVoiceRequestSchema,
  cloneVoiceResponseSchema,
  createSessionRequestSchema,
  errorCodeFromBody,
  errorMessageFromBody,
  listVoicesResponseSchema,
  liveRecordSchema,
  parseServerFrame,
  querySessionResponseSchema,
} from '../../../electron/core/protocol.ts';

const parse = (frame: unknown) => parseServerFrame(JSON.stringify(frame));

/** The messages zod reports, with their paths, so a test pins the exact wording a caller shows. */
function issues(result: { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } }): string[] {
  return (result.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('parseServerFrame edges', () => {
  it('treats a null payload as an empty one (a type-3 frame with payload null is still a ping)', () => {
    assert.deepEqual(parse({ type: 3, payload: null }), { kind: 'ping' });
    assert.deepEqual(parse({ type: 9, payload: null }), { kind: 'other', type: 9 });
  });

  it('recognises a payload that names heartbeat as a ping, and does not for other payload keys', () => {
    assert.deepEqual(parse({ payload: { heartbeat: {} } }), { kind: 'ping' });
    assert.deepEqual(parse({ payload: { beat: {} } }), { kind: 'other', type: undefined });
  });

  it('reports "unknown" for a type-6 frame whose reason is not a string', () => {
    assert.deepEqual(parse({ type: 6, payload: { hangup: { hangup_reason: 42 } } }), { kind: 'forced_hangup', reason: 'unknown' });
  });

  it('does not take a hangup payload with a non-string reason (and no type 6) for a forced hangup', () => {
    assert.deepEqual(parse({ type: 7, payload: { hangup: { hangup_reason: 42 } } }), { kind: 'other', type: 7 });
  });

  it('recognises a type-6 string frame only for exactly "6", and ping/heartbeat type names case-insensitively', () => {
    assert.deepEqual(parse({ type: 'PING' }), { kind: 'ping' });
    assert.deepEqual(parse({ type: 'HeartBeat' }), { kind: 'ping' });
    assert.deepEqual(parse({ type: 'pong' }), { kind: 'other', type: 'pong' });
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

describe('createSessionRequestSchema messages', () => {
  it('rejects an empty image_uri with "image_uri is required"', () => {
    const result = createSessionRequestSchema.safeParse({ call_mode: 'audio', avatar: { persona: 'p', image_uri: '' } });
    assert.deepEqual(issues(result), ['avatar.image_uri: image_uri is required']);
  });
});

describe('errorMessageFromBody / errorCodeFromBody', () => {
  it('trims the message and cuts it at 300 characters', () => {
    assert.equal(errorMessageFromBody({ error: { message: '  quota reached  ' } }), 'quota reached');
    assert.equal(errorMessageFromBody({ message: ` ${'x'.repeat(400)} ` }), 'x'.repeat(300));
  });

  it('reads fields only from a plain object, not from a function that happens to carry them', () => {
    const fn = Object.assign(() => undefined, { message: 'from a function', code: 'FN' });
    assert.equal(errorMessageFromBody({ error: fn, message: 'outer' }), 'outer');
    assert.equal(errorCodeFromBody({ error: fn, code: 'OUTER' }), 'OUTER');
    assert.equal(errorCodeFromBody(fn), undefined);
  });
});

describe('spec constants (§2.3)', () => {
  it('allows images up to 50 MB and defaults the voice to Tina', () => {
    assert.equal(MAX_IMAGE_BYTES, 52_428_800);
    assert.equal(DEFAULT_VOICE, 'Tina');
  });

  it('bills nothing for exactly 0 ms', () => {
    assert.equal(billableSeconds(0), 0);
  });
});
