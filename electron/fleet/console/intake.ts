/**
 * What the console takes from a kiosk, and how much of it. A kiosk's broker login is all that stands behind
 * its numbers: a broken or compromised kiosk must not blind the fleet's monitoring (a negative or infinite
 * figure makes prom-client throw, and the whole `/metrics` with it), push spend below zero, or grow the
 * console without bound by inventing label values. So every payload is read here, checked and bounded,
 * before any of it reaches the fleet's state, its spend or its metrics:
 *
 *  - each figure has a floor of 0 and a ceiling far above any real kiosk's (a call's credits, a day's calls);
 *    a figure outside them (negative, not finite — JSON's `1e999` parses as Infinity — or absurd) refuses the
 *    whole payload, with a reason from a short list that the console counts;
 *  - a call's end must lie within a window around the console's clock (a forged year would hold the
 *    "last call" alert off for ever and add a spend row per day);
 *  - each kiosk may use only LABEL_VALUES_PER_KIOSK distinct values per label (end reason, error code,
 *    avatar); further ones are counted under `other` (the figures stay whole, the series stay bounded) and
 *    the folding itself is counted.
 *
 * Pure: no clock of its own, no I/O.
 */
import { z } from 'zod';
import type { FunnelDay } from '../../core/funnel.ts';
import { funnelDaySchema } from '../../core/funnel-schema.ts';

/** A call's credits: about 90 a minute, so this is weeks of one call. */
export const MAX_CALL_CREDITS = 1_000_000;
/** A day's calls and credits, as a kiosk's status reports them. */
export const MAX_DAY_SESSIONS = 100_000;
export const MAX_DAY_CREDITS = 100_000_000;
/** Events queued or dropped on a kiosk (its queue holds 5,000 by default). */
export const MAX_QUEUE_FIGURE = 1_000_000_000;
/** A call may end this far ahead of the console's clock (the kiosk's clock runs fast)… */
export const END_AHEAD_MS = 24 * 60 * 60 * 1000;
/** …or this long ago (a kiosk that was offline for months sends its queue when it is back). */
export const END_BEHIND_MS = 400 * 24 * 60 * 60 * 1000;
/** Distinct values each label may take per kiosk; more are counted as OTHER_LABEL. */
export const LABEL_VALUES_PER_KIOSK = 8;
export const OTHER_LABEL = 'other';
/** A kiosk id as a topic level may spell it (the console's commands take no other). */
export const KIOSK_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** Why a payload was refused (a bounded set: it labels a metric). */
export type RefusalReason = 'malformed' | 'negative' | 'not_finite' | 'too_large' | 'bad_time' | 'unsolicited' | 'not_png';
export const REFUSAL_REASONS: readonly RefusalReason[] = ['malformed', 'negative', 'not_finite', 'too_large', 'bad_time', 'unsolicited', 'not_png'];
/** Which kind of message it was. */
export type Topic = 'status' | 'events' | 'results';
/** The labels each kiosk's values are counted under. */
export type BoundedLabel = 'end_reason' | 'code' | 'avatar';

const figure = (max: number) => z.number().min(0).max(max);

const statusSchema = z.looseObject({
  online: z.boolean(),
  kioskId: z.string().max(64).optional(),
  reason: z.string().max(200).optional(),
  group: z.string().max(64).nullable().optional(),
  phase: z.string().max(40).optional(),
  open: z.boolean().optional(),
  version: z.string().max(64).optional(),
  mode: z.string().max(40).optional(),
  // `day`, `from`, `to`: the kiosk's local day the counters are for (a kiosk before these fields sends none).
  today: z
    .object({
      sessions: figure(MAX_DAY_SESSIONS).int(),
      credits: figure(MAX_DAY_CREDITS),
      demoSessions: figure(MAX_DAY_SESSIONS).int().optional(),
      day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(),
      from: z.string().max(40).optional(),
      to: z.string().max(40).optional(),
    })
    .optional(),
  lastErrorCode: z.string().max(64).nullable().optional(),
  queued: figure(MAX_QUEUE_FIGURE).int().optional(),
  droppedEvents: figure(MAX_QUEUE_FIGURE).int().optional(),
  policyError: z.string().max(2000).nullable().optional(),
  // Who the kiosk is for (fleet/mqtt-link.ts `FleetSafety`); an older kiosk sends none. Content-review
  // hang-ups since the kiosk's start: a million would be one every 30 s for a year.
  safety: z
    .looseObject({
      audience: z.enum(['public', 'adult']),
      moderation: z.enum(['strict', 'disabled']),
      region: z.string().max(12).nullable(),
      refusal: z.string().max(2000).nullable(),
      auditViolations: z.number().int().min(0).max(1_000_000),
    })
    .optional(),
  // The kiosk's safe-updates status (safe-updates.ts `UpdateStatus`): its phase and the version waiting.
  update: z
    .looseObject({ phase: z.string().max(40), ready: z.string().max(64).nullable().optional(), pinned: z.string().max(64).nullable().optional(), off: z.string().max(500).nullable().optional(), floor: z.string().max(64).nullable().optional() })
    .nullable()
    .optional(),
  avatarVolume: z.number().int().min(0).max(100).optional(),
  // Whether the kiosk reaches its service (kiosk/service-health.ts): a short status word, what is the case,
  // what to do.
  service: z.looseObject({ status: z.string().max(40), message: z.string().max(500), action: z.string().max(500).nullable() }).optional(),
  // The day's visitor funnel is read on its own (readVisitors): a malformed one is dropped and counted,
  // and the rest of the status still counts.
  visitors: z.unknown().optional(),
  at: z.string().max(40).optional(),
});
export type KioskStatus = z.infer<typeof statusSchema>;

const sessionSchema = z.looseObject({
  kind: z.literal('session'),
  end_at: z.string().max(40),
  live_at: z.string().max(40).nullable().optional(),
  end_reason: z.string().max(64),
  credits_cost: z.union([figure(MAX_CALL_CREDITS), z.literal('unknown')]).optional(),
  surface: z.string().max(20).optional(),
  error_code: z.string().max(64).optional(),
  avatar: z.string().max(64).optional(),
});
const spareSchema = z.looseObject({ kind: z.literal('spare'), status: z.string().max(20), reason: z.string().max(200).optional() });
const eventSchema = z.object({ id: z.string().max(80), kioskId: z.string().max(64).optional(), at: z.string().max(40).optional(), record: z.unknown() });

const resultSchema = z.looseObject({
  id: z.string().max(64).nullable(),
  cmd: z.string().max(32).nullable(),
  ok: z.boolean(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.string().max(64), message: z.string().max(2000) }).optional(),
  at: z.string().max(40).optional(),
});
export type KioskAnswer = z.infer<typeof resultSchema>;

export type Read<T> = { ok: true; value: T } | { ok: false; reason: RefusalReason };

/** A call as the console counts it: its figures checked, its end within the window. */
export interface CallRecord {
  kind: 'session';
  endAtMs: number;
  endReason: string;
  errorCode: string | null;
  avatar: string | null;
  /** 0 when the kiosk did not know (`unknown`) or did not say. */
  credits: number;
  /** A call on the kiosk's built-in emulator (ledger surface `demo`): play money. */
  demo: boolean;
  /** Whether it went live (`live_at` set); a record that does not say (an older kiosk) is taken as live. */
  wentLive: boolean;
}
export interface SpareRecord {
  kind: 'spare';
  status: string;
  reason: string | null;
}
/** A ledger event: its id (for repeats) and its record (the ledger writes only these two kinds). */
export interface KioskEvent {
  id: string;
  record: CallRecord | SpareRecord;
}

export function readStatus(payload: Buffer | string): Read<KioskStatus> {
  return check(statusSchema, parseJson(payload));
}

/**
 * A status' `visitors` (core/funnel-schema.ts `funnelDaySchema`: whole counts within bounds, at most 64 short keys
 * per breakdown); `undefined` when the status carries none (an older kiosk).
 */
export function readVisitors(raw: unknown): Read<FunnelDay> | undefined {
  return raw === undefined ? undefined : check(funnelDaySchema, raw);
}

/** A ledger event. `nowMs`: the console's clock, for the window a call's end must lie in. */
export function readEvent(payload: Buffer | string, nowMs: number): Read<KioskEvent> {
  const envelope = check(eventSchema, parseJson(payload));
  if (!envelope.ok) return envelope;
  const { id, record } = envelope.value;
  const kind = typeof record === 'object' && record !== null ? (record as { kind?: unknown }).kind : undefined;
  if (kind === 'session') {
    const call = check(sessionSchema, record);
    if (!call.ok) return call;
    const r = call.value;
    const endAtMs = Date.parse(r.end_at);
    if (Number.isNaN(endAtMs) || endAtMs > nowMs + END_AHEAD_MS || endAtMs < nowMs - END_BEHIND_MS) return { ok: false, reason: 'bad_time' };
    const credits = typeof r.credits_cost === 'number' ? r.credits_cost : 0;
    return { ok: true, value: { id, record: { kind: 'session', endAtMs, endReason: r.end_reason, errorCode: r.error_code ?? null, avatar: r.avatar ?? null, credits, demo: r.surface === 'demo', wentLive: r.live_at !== null } } };
  }
  if (kind === 'spare') {
    const spare = check(spareSchema, record);
    if (!spare.ok) return spare;
    return { ok: true, value: { id, record: { kind: 'spare', status: spare.value.status, reason: spare.value.reason ?? null } } };
  }
  return { ok: false, reason: 'malformed' };
}

export function readAnswer(payload: Buffer | string): Read<KioskAnswer> {
  return check(resultSchema, parseJson(payload));
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A screenshot's picture from its base64 text: a PNG of at most `maxBytes`, or why not. */
export function readPng(base64: unknown, maxBytes: number): Read<Buffer> {
  if (typeof base64 !== 'string') return { ok: false, reason: 'malformed' };
  // Sized before it is decoded: base64 carries 3 bytes in 4 characters.
  if (Math.floor((base64.length * 3) / 4) > maxBytes + 3) return { ok: false, reason: 'too_large' };
  const png = Buffer.from(base64, 'base64');
  if (png.length > maxBytes) return { ok: false, reason: 'too_large' };
  if (png.length < 24 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return { ok: false, reason: 'not_png' };
  return { ok: true, value: png };
}

/**
 * The label values one kiosk has used, LABEL_VALUES_PER_KIOSK per label: a value seen before, or a new one
 * while there is room, is itself; any other is OTHER_LABEL.
 */
export class LabelBudget {
  private readonly seen = new Map<BoundedLabel, Set<string>>();
  /** Values counted as OTHER_LABEL, per label. */
  readonly folded = new Map<BoundedLabel, number>();

  constructor(private readonly limit = LABEL_VALUES_PER_KIOSK) {}

  value(label: BoundedLabel, value: string): string {
    let values = this.seen.get(label);
    if (!values) this.seen.set(label, (values = new Set()));
    if (values.has(value)) return value;
    if (values.size < this.limit && value !== OTHER_LABEL) {
      values.add(value);
      return value;
    }
    if (value !== OTHER_LABEL) this.folded.set(label, (this.folded.get(label) ?? 0) + 1);
    return OTHER_LABEL;
  }
}

/** Refusals counted by topic and reason. */
export class Refusals {
  private readonly counts = new Map<string, number>();

  add(topic: Topic, reason: RefusalReason): void {
    const key = `${topic}\u0000${reason}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** Every (topic, reason) counted so far. */
  entries(): Array<{ topic: Topic; reason: RefusalReason; count: number }> {
    return [...this.counts].map(([key, count]) => {
      const [topic, reason] = key.split('\u0000') as [Topic, RefusalReason];
      return { topic, reason, count };
    });
  }

  count(topic: Topic, reason?: RefusalReason): number {
    return this.entries()
      .filter((e) => e.topic === topic && (reason === undefined || e.reason === reason))
      .reduce((n, e) => n + e.count, 0);
  }
}

function check<T>(schema: z.ZodType<T>, raw: unknown): Read<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  // A number zod will not take as one (Infinity, NaN), whichever check or union of options it failed.
  const value = valueAt(raw, issue.path);
  if (typeof value === 'number' && !Number.isFinite(value)) return { ok: false, reason: 'not_finite' };
  if (issue.code === 'too_small' && issue.origin === 'number') return { ok: false, reason: 'negative' };
  if (issue.code === 'too_big' && issue.origin === 'number') return { ok: false, reason: 'too_large' };
  return { ok: false, reason: 'malformed' };
}

function valueAt(raw: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur = raw;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function parseJson(payload: Buffer | string): unknown {
  try {
    return JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));
  } catch {
    return undefined;
  }
}
