/**
 * The wire contract of the avatar service (../shared/spec/avatar-service.md), as schemas and constants.
 * Shared by the client core and the emulator, so both speak exactly the same shapes. Anything the spec
 * does not show is an ASSUMPTION, marked as such here and listed in README.md.
 */
import { z } from 'zod';
import { BILLING_UNIT_S, CONN_INIT_VERSION, CREDITS_PER_BILLING_UNIT } from './protocol-constants.ts';

// The service's figures (timings, sizes, credits) are named in protocol-constants.ts, each with its spec section.
export * from './protocol-constants.ts';

// ---------------------------------------------------------------------------------------------------
// Vocabulary (spec §2, §3, §6)

export const CALL_MODES = ['audio', 'video'] as const;
export type CallMode = (typeof CALL_MODES)[number];

export const MODERATION_VALUES = ['strict', 'disabled'] as const;
export type Moderation = (typeof MODERATION_VALUES)[number];

export const LIVE_STATUSES = ['waiting', 'on_live', 'ending', 'ended'] as const;
export type LiveStatus = (typeof LIVE_STATUSES)[number];

/** The thirteen hangup reasons the spec lists (§6; it says fourteen exist, one is not shown). */
export const HANGUP_REASONS = [
  'user_end',
  'timeout',
  'audit_violation',
  'credit_insufficient',
  'sip_closed',
  'provider_closed',
  'sip_reconnect_timeout',
  'client_reconnect_timeout',
  'prepared_sip_disconnected',
  'owner_taken_over',
  'owner_lease_lost',
  'ai_output_closed',
  'external',
] as const;
export type KnownHangupReason = (typeof HANGUP_REASONS)[number];
/** Unknown reasons from the server are kept as strings, never rejected (the fourteenth is not shown). */
export type HangupReason = KnownHangupReason | (string & {});

/** Reasons after which the client must not reconnect automatically (spec §6 rule 6). */
export const NO_RECONNECT_REASONS: ReadonlySet<string> = new Set(['credit_insufficient', 'audit_violation']);

export const CONN_INIT_ERROR_CODES = ['NOT_READY', 'LIVE_CONN_INIT_FAILED'] as const;

/** Message type numbers. conn_init = 1, hangup = 5 and forced hangup = 6 are in the spec. */
export const MSG_CONN_INIT = 1;
export const MSG_HANGUP = 5;
export const MSG_FORCED_HANGUP = 6;
/** ASSUMPTION: the ack, ping and pong numbers are not shown; 2/3/4 fill the gap between 1 and 5.
 *  The client never relies on them: it recognises the ack and pings by their content. */
export const MSG_CONN_INIT_ACK = 2;
export const MSG_PING = 3;
export const MSG_PONG = 4;

/** §2.3: the voice when the request names none. */
export const DEFAULT_VOICE = 'Tina';
/** §2.3, §8: the image formats (PNG, JPG/JPEG, WEBP). */
export const IMAGE_MIME_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type ImageMimeType = (typeof IMAGE_MIME_TYPES)[number];

/** Billing (spec §8): live time rounds up to whole `BILLING_UNIT_S` units, each `CREDITS_PER_BILLING_UNIT`. */
export function billableSeconds(liveMs: number): number {
  if (liveMs <= 0) return 0;
  const seconds = Math.ceil(liveMs / 1000);
  return Math.ceil(seconds / BILLING_UNIT_S) * BILLING_UNIT_S;
}
export function creditsFor(billedSeconds: number): number {
  return (billedSeconds / BILLING_UNIT_S) * CREDITS_PER_BILLING_UNIT;
}

// ---------------------------------------------------------------------------------------------------
// REST bodies (spec §2, §4)

export const avatarRequestSchema = z.object({
  persona: z.string().min(1, 'persona is required'),
  image_uri: z.string().min(1, 'image_uri is required'),
  name: z.string().optional(),
  voice: z.string().min(1).optional(),
});
export type AvatarRequest = z.infer<typeof avatarRequestSchema>;

export const createSessionRequestSchema = z.object({
  call_mode: z.enum(CALL_MODES),
  moderation: z.enum(MODERATION_VALUES).optional(),
  extra_motion: z.boolean().optional(),
  avatar: avatarRequestSchema,
});
export type CreateSessionRequest = z.infer<typeof createSessionRequestSchema>;

/** Timestamps are documented as strings; tolerate numbers too, normalise to string. */
const unixTimestamp = z.union([z.string(), z.number()]).transform((v) => String(v));
const optionalTimestamp = z.union([z.string(), z.number(), z.null()]).optional().transform((v) => (v === null || v === undefined ? undefined : String(v)));

export const rtcCredentialsSchema = z.object({
  app_id: z.string().min(1),
  channel_id: z.string().min(1),
  user_id: z.string().min(1),
  token: z.string().min(1),
  token_expire_at: unixTimestamp,
});
export type RtcCredentials = z.infer<typeof rtcCredentialsSchema>;

/** Unknown extra fields are tolerated everywhere (looseObject), unknown statuses kept as strings. */
export const createSessionResponseSchema = z.looseObject({
  live: z.looseObject({
    id: z.string().min(1),
    status: z.string(),
    live_duration: z.number().int().positive(),
    call_mode: z.enum(CALL_MODES),
  }),
  rtc: rtcCredentialsSchema,
});
export type CreateSessionResponse = z.infer<typeof createSessionResponseSchema>;

export const liveRecordSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  call_mode: z.string().optional(),
  live_duration: z.number().int().optional(),
  avatar: z
    .looseObject({ name: z.string().optional().nullable(), voice: z.string().optional().nullable(), persona: z.string().optional().nullable() })
    .optional()
    .nullable(),
  billed_seconds: z.number().int().nonnegative().optional().nullable(),
  credits_cost: z.number().nonnegative().optional().nullable(),
  created_at: optionalTimestamp,
  started_at: optionalTimestamp,
  ended_at: optionalTimestamp,
});
export type LiveRecord = z.infer<typeof liveRecordSchema>;

export const querySessionResponseSchema = z.looseObject({ live: liveRecordSchema });
export type QuerySessionResponse = z.infer<typeof querySessionResponseSchema>;

export const cloneVoiceRequestSchema = z.object({
  audio_url: z.string().min(1, 'audio_url is required'),
  voice: z.string().min(1, 'voice is required'),
  language: z.string().min(1).optional(),
});
export type CloneVoiceRequest = z.infer<typeof cloneVoiceRequestSchema>;

export const cloneVoiceResponseSchema = z.looseObject({ voice: z.string().min(1) });
export type CloneVoiceResponse = z.infer<typeof cloneVoiceResponseSchema>;

export const listVoicesResponseSchema = z.looseObject({
  voices: z.array(z.looseObject({ voice: z.string() })),
});
export type ListVoicesResponse = z.infer<typeof listVoicesResponseSchema>;

/** ASSUMPTION: the HTTP error body is not shown. The emulator answers `{error: {code, message}}`;
 *  the client reads `error.message`, `message`, `detail` or `msg` when present and tolerates anything. */
export interface ErrorBody {
  error: { code: string; message: string; field?: string };
}
export function errorMessageFromBody(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return typeof body === 'string' && body.trim() ? body.trim().slice(0, 300) : undefined;
  const b = body as Record<string, unknown>;
  const inner = typeof b.error === 'object' && b.error !== null ? (b.error as Record<string, unknown>) : undefined;
  for (const v of [inner?.message, b.message, b.detail, b.msg, b.error]) {
    if (typeof v === 'string' && v.trim()) return v.trim().slice(0, 300);
  }
  return undefined;
}
export function errorCodeFromBody(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const inner = typeof b.error === 'object' && b.error !== null ? (b.error as Record<string, unknown>) : undefined;
  for (const v of [inner?.code, b.code, b.error_code]) if (typeof v === 'string' && v) return v;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// WebSocket frames (spec §6)

/** Client → server envelope: `type`, `live_id`, `seq_id` (from 1 per connection), `payload`. */
export interface ClientFrame {
  type: number;
  live_id: string;
  seq_id: number;
  payload: Record<string, unknown>;
}

export function connInitFrame(liveId: string, seqId: number): ClientFrame {
  return { type: MSG_CONN_INIT, live_id: liveId, seq_id: seqId, payload: { conn_init: { version: CONN_INIT_VERSION } } };
}
export function hangupFrame(liveId: string, seqId: number, reason: HangupReason): ClientFrame {
  return { type: MSG_HANGUP, live_id: liveId, seq_id: seqId, payload: { hangup: { hangup_reason: reason } } };
}
/** ASSUMPTION: the client's keep-alive / ping reply (format not shown). Sent every few seconds and in
 *  answer to each server ping, so the server always hears "some message" within `CLIENT_SILENCE_LIMIT_MS`. */
export function pongFrame(liveId: string, seqId: number, nowMs: number): ClientFrame {
  return { type: MSG_PONG, live_id: liveId, seq_id: seqId, payload: { pong: { ts: nowMs } } };
}

export const clientFrameSchema = z.object({
  type: z.number().int(),
  live_id: z.string().min(1),
  seq_id: z.number().int().positive(),
  payload: z.record(z.string(), z.unknown()),
});

/** Server → client envelope: `type` and `payload`. */
export const serverFrameSchema = z.looseObject({
  type: z.union([z.number(), z.string()]).optional(),
  payload: z.unknown().optional(),
});

/** What a server frame means to the client, recognised by content (the ack's type is not shown). */
export type ServerMessage =
  | { kind: 'conn_init_ack'; success: true }
  | { kind: 'conn_init_ack'; success: false; errorCode: string }
  | { kind: 'forced_hangup'; reason: HangupReason }
  | { kind: 'ping' }
  | { kind: 'other'; type: number | string | undefined };

/**
 * Classify one text frame. Throws nothing: returns `null` for frames that are not JSON objects.
 * - forced hangup: type 6 (first: whatever else the frame carries), or a `hangup.hangup_reason` in the
 *   payload (without a client-style `seq_id`) of a frame that is not an ack.
 * - ack: a boolean `success` at `payload.conn_init_ack`, `payload.conn_init`, `payload`, or the top level.
 * - ping: type 3 or a type/payload that names `ping`/`heartbeat`.
 */
export function parseServerFrame(text: string): ServerMessage | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = serverFrameSchema.safeParse(raw);
  if (!parsed.success) return null;
  const frame = parsed.data as Record<string, unknown> & { type?: number | string; payload?: unknown };
  const payload = isRecord(frame.payload) ? frame.payload : {};
  const hangup = isRecord(payload.hangup) ? payload.hangup : undefined;
  const reasonOf = () => (hangup && typeof hangup.hangup_reason === 'string' && hangup.hangup_reason ? hangup.hangup_reason : 'unknown');
  // spec §6: type 6 IS the forced hangup, whatever else the frame carries; it is decided before the
  // content-based ack recognition below (a type 6 with a `success` field is still a hangup, not an ack).
  if (frame.type === MSG_FORCED_HANGUP || frame.type === String(MSG_FORCED_HANGUP)) return { kind: 'forced_hangup', reason: reasonOf() };

  for (const candidate of [payload.conn_init_ack, payload.conn_init, payload.ack, payload, frame]) {
    if (isRecord(candidate) && typeof candidate.success === 'boolean') {
      if (candidate.success) return { kind: 'conn_init_ack', success: true };
      const code = candidate.error_code ?? candidate.errorCode ?? candidate.code;
      return { kind: 'conn_init_ack', success: false, errorCode: typeof code === 'string' && code ? code : 'UNKNOWN' };
    }
  }
  // A frame with a client-style `seq_id` (e.g. our own type-5 hangup echoed back) is not a forced hangup.
  const clientStyle = typeof frame.seq_id === 'number';
  if (hangup && typeof hangup.hangup_reason === 'string' && !clientStyle) return { kind: 'forced_hangup', reason: reasonOf() };
  const typeName = typeof frame.type === 'string' ? frame.type.toLowerCase() : '';
  if (frame.type === MSG_PING || typeName === 'ping' || typeName === 'heartbeat' || 'ping' in payload || 'heartbeat' in payload) {
    return { kind: 'ping' };
  }
  return { kind: 'other', type: frame.type };
}

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
