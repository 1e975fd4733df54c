/**
 * The wire report: what the service actually sent, as shapes, never values. It settles the wire details
 * the spec does not show (docs/service-protocol.md, "Assumptions"): message types, field names and
 * nesting, the ping's format and period, the ack's type and nesting, close codes, HTTP status codes and
 * error body shapes. Values are replaced by their kind (`string`, `number`, …); only the fields that carry
 * the protocol's own vocabulary (`type`, `status`, `success`, `error_code`, `code`, `hangup_reason`,
 * `call_mode`) show their value, and only when it is a short word that is none of the secrets the report
 * was given (key, tokens, ids, persona). Keys that look like ids are masked too.
 *
 * Dependency-free (the staff panel renders a report: the contract carries these types); the recording
 * itself is wire-recorder.ts.
 */

/** A JSON value's shape: a kind for a leaf (`"string"`, `"number = 3"` for a vocabulary field), an array
 *  of its first element's shape, or an object of its fields' shapes. */
export type Shape = string | Shape[] | { [field: string]: Shape };

export interface HttpExchange {
  /** The endpoint relative to the surface's root, ids replaced: `POST /lives`, `GET /lives/{live_id}`. */
  endpoint: string;
  status: number;
  /** The media type of the answer (`application/json`, `text/html`), or null when none was sent. */
  content_type: string | null;
  /** `json` (with `shape`), `html`, `text` or `empty`. */
  body: 'json' | 'html' | 'text' | 'empty';
  shape?: Shape;
  /** How many answers had exactly this endpoint, status and shape. */
  count: number;
}

export interface ServerMessage {
  /** What the client took it for: the ack, a ping, a forced hangup, or another message. */
  role: 'ack' | 'ping' | 'forced_hangup' | 'other' | 'not_json' | 'binary';
  /** The message's `type` value (a number or a name; null when absent). */
  type: number | string | null;
  shape?: Shape;
  count: number;
}

export interface PeriodMs {
  min: number;
  median: number;
  max: number;
  /** How many intervals between consecutive pings were measured. */
  samples: number;
}

export interface WireReport {
  report: 'avatar-kiosk wire report';
  version: 1;
  /** `cli-probe`: one short billed call; `service-check`: the staff panel's check (no conn_init, nothing billed). */
  source: 'cli-probe' | 'service-check';
  surface: 'direct' | 'gateway';
  /** When it was made (ISO 8601). */
  created_at: string;
  http: HttpExchange[];
  socket: {
    /** Connections opened, and the HTTP status of each refused handshake. */
    connections: number;
    refused_handshakes: number[];
    messages: ServerMessage[];
    /** The conn_init answer as seen: its type and where `success` sat; null when none came (or none was asked for). */
    ack: { type: number | string | null; path: string; shape: Shape } | null;
    ping: {
      /** `json`: a ping message; `ws-frames`: WebSocket ping control frames only; `both`; `none-seen`. */
      format: 'json' | 'ws-frames' | 'both' | 'none-seen';
      /** The JSON ping's type and shape (format `json` or `both`). */
      type: number | string | null;
      shape: Shape | null;
      count: number;
      /** Between consecutive pings on one connection, null when fewer than two came. */
      period_ms: PeriodMs | null;
    };
    /** Control frames from the server (pings, and pongs answering our probes). */
    control_frames: { ping: number; pong: number };
    /** What the client sent, by message type (and control frames): the keep-alive it used shows here. */
    client_sent: { messages: Record<string, number>; ping_frames: number; pong_frames: number };
    /** Each connection's end: the close code, who closed first (`network`: dropped, 1006), how long after our last message. */
    closes: Array<{ code: number; by: 'server' | 'client' | 'network'; after_client_message_ms: number | null }>;
  };
  /** What this report could not see, and why. */
  not_seen: string[];
}

/** The staff panel's wire report (operations/wire-check.ts): what the service sent during an unbilled service check. */
export interface WireCheckResult {
  ok: boolean;
  /** One sentence for the panel. */
  message: string;
  report: WireReport;
  /** Where it was written (the kiosk's data folder), or null when it could not be. */
  savedTo: string | null;
}

/** The fields whose values are the protocol's own words, shown when they are short and not secret. */
export const VOCABULARY_FIELDS: ReadonlySet<string> = new Set(['type', 'status', 'success', 'error_code', 'code', 'hangup_reason', 'call_mode']);

/** Secrets shorter than this are not searched for (a 1-letter persona would mask everything). */
const MIN_SECRET_LENGTH = 4;
const WORD = /^[A-Za-z][A-Za-z0-9_.-]{0,39}$/;
/** A key that is an id rather than a field name: long, with digits, or hex-like. */
const ID_LIKE_KEY = /^(?=.*\d)[A-Za-z0-9_-]{12,}$|^[0-9a-f-]{16,}$/i;

/**
 * The shape of `value`. `secrets` are values that must never appear (checked both ways: a vocabulary
 * value that contains one, or is contained in one, is not shown).
 */
export function shapeOf(value: unknown, secrets: readonly string[] = [], depth = 0): Shape {
  if (depth > 12) return 'nested too deep';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0], secrets, depth + 1)];
  if (typeof value === 'object') {
    const out: Record<string, Shape> = {};
    for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
      const safeKey = isSafeKey(key, secrets) ? key : maskedKey(out);
      out[safeKey] = VOCABULARY_FIELDS.has(key) ? vocabularyLeaf(field, secrets, depth) : shapeOf(field, secrets, depth + 1);
    }
    return out;
  }
  return leafKind(value);
}

/** A string's kind: `string`, or what its format says without its value (timestamps settle this way). */
function leafKind(value: unknown): string {
  if (typeof value === 'string') {
    if (value === '') return 'string (empty)';
    if (/^\d+$/.test(value)) return 'string (digits)';
    if (/^\d{4}-\d{2}-\d{2}T/.test(value)) return 'string (ISO date)';
    return 'string';
  }
  if (typeof value === 'number') return Number.isInteger(value) ? 'number (integer)' : 'number';
  return typeof value;
}

function vocabularyLeaf(value: unknown, secrets: readonly string[], depth: number): Shape {
  if (typeof value === 'boolean') return `boolean = ${value}`;
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < 1e6) return `number = ${value}`;
  if (typeof value === 'string' && WORD.test(value) && !touchesSecret(value, secrets)) return `string = ${value}`;
  return shapeOf(value, secrets, depth + 1);
}

/** `{key}`, `{key 2}`, …: a masked key that does not collide with one already in `out`. */
function maskedKey(out: Record<string, unknown>): string {
  if (!('{key}' in out)) return '{key}';
  let n = 2;
  while (`{key ${n}}` in out) n++;
  return `{key ${n}}`;
}

function isSafeKey(key: string, secrets: readonly string[]): boolean {
  return !ID_LIKE_KEY.test(key) && !touchesSecret(key, secrets);
}

/** True when `text` contains a secret or is part of one. */
export function touchesSecret(text: string, secrets: readonly string[]): boolean {
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    // Both ways: a value holding a secret, and a long value that is a piece of one (a word of a persona is not).
    if (text.includes(secret) || (text.length >= 8 && secret.includes(text))) return true;
  }
  return false;
}

/** A value of the protocol's vocabulary (a message type), or null when it is not one to show. */
export function vocabularyValue(value: unknown, secrets: readonly string[]): number | string | null {
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < 1e6) return value;
  if (typeof value === 'string' && WORD.test(value) && !touchesSecret(value, secrets)) return value;
  return null;
}

/** Min, median and max of `intervals` (ms, rounded), or null when there are none. */
export function periodOf(intervals: readonly number[]): PeriodMs | null {
  if (intervals.length === 0) return null;
  const sorted = [...intervals].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: Math.round(sorted[0]!), median: Math.round(median), max: Math.round(sorted.at(-1)!), samples: sorted.length };
}

/** The endpoint of a request relative to its surface: `{method} /lives/{live_id}` and the like. */
export function endpointOf(method: string, url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return `${method} (unparsable URL)`;
  }
  const m = /\/(lives|voices)(\/[^/]+)?(\/[^/]+)?\/?$/.exec(path);
  if (!m) return `${method} (other path)`;
  if (m[1] === 'voices') return `${method} /voices${m[2] === '/clone' ? '/clone' : m[2] ? '/{voice}' : ''}`;
  return `${method} /lives${m[2] ? '/{live_id}' : ''}`;
}

/** `shape` again, with any key or shown value that touches one of `secrets` masked (secrets learnt after
 *  the shape was taken). */
export function scrubShape(shape: Shape, secrets: readonly string[]): Shape {
  if (typeof shape === 'string') {
    const at = shape.indexOf(' = ');
    return at !== -1 && touchesSecret(shape.slice(at + 3), secrets) ? shape.slice(0, at) : shape;
  }
  if (Array.isArray(shape)) return shape.map((s) => scrubShape(s, secrets));
  const out: Record<string, Shape> = {};
  for (const [key, field] of Object.entries(shape)) out[isSafeKey(key, secrets) || /^\{key( \d+)?\}$/.test(key) ? key : maskedKey(out)] = scrubShape(field, secrets);
  return out;
}

/** Two shapes are the same (for counting repeats). */
export function sameShape(a: Shape | undefined, b: Shape | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
