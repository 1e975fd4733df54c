/**
 * Records what the service sends, for the wire report (wire-report.ts): it wraps the REST client's `fetch`
 * and the control socket's `TransportFactory`, lets everything through unchanged, and keeps only shapes,
 * counts and times — never a value that could be a key, a token, an id or a persona (every such value it
 * sees in an answer becomes one more secret the report is checked against).
 */
import { systemClock, type Clock } from './clock.ts';
import { isRecord, parseServerFrame } from './protocol.ts';
import { toAvatarError } from './errors.ts';
import { silentLogger } from './log.ts';
import { readCappedText, type ServiceClient } from './rest-client.ts';
import type { SocketTransport, TransportFactory } from './transport.ts';
import {
  endpointOf,
  periodOf,
  sameShape,
  scrubShape,
  shapeOf,
  vocabularyValue,
  type HttpExchange,
  type ServerMessage,
  type Shape,
  type WireReport,
} from './wire-report.ts';

/** Answers are read for their shape up to this size (the API's answers are a few KB). */
const MAX_RECORDED_BODY_BYTES = 256 * 1024;
/** Keys whose string values are secrets or ids (added to the secrets the report is checked against). */
const SECRET_KEY = /(^|_)(id|token|key|secret|persona|password)$/i;

interface Connection {
  opened: boolean;
  closedByClient: boolean;
  lastClientMessageAtMs: number | null;
  jsonPingAtMs: number[];
  framePingAtMs: number[];
}

export interface WireRecorderOptions {
  source: WireReport['source'];
  surface: WireReport['surface'];
  clock?: Clock;
}

export class WireRecorder {
  readonly #source: WireReport['source'];
  readonly #surface: WireReport['surface'];
  readonly #clock: Clock;
  readonly #secrets = new Set<string>();
  readonly #http: HttpExchange[] = [];
  readonly #messages: ServerMessage[] = [];
  readonly #connections: Connection[] = [];
  readonly #refused: number[] = [];
  readonly #closes: WireReport['socket']['closes'] = [];
  readonly #clientMessages = new Map<string, number>();
  readonly #notes: string[] = [];
  #ack: WireReport['socket']['ack'] = null;
  #jsonPing: { type: number | string | null; shape: Shape } | null = null;
  #control = { ping: 0, pong: 0 };
  #clientFrames = { ping: 0, pong: 0 };

  constructor(options: WireRecorderOptions) {
    this.#source = options.source;
    this.#surface = options.surface;
    this.#clock = options.clock ?? systemClock;
  }

  /** Values that must never appear in the report (the key, the persona, ids, tokens). */
  addSecrets(...values: Array<string | null | undefined>): void {
    for (const v of values) if (typeof v === 'string' && v.trim().length >= 4) this.#secrets.add(v.trim());
  }

  /** A note for `not_seen`: something this report could not observe, and why. */
  note(text: string): void {
    if (!this.#notes.includes(text)) this.#notes.push(text);
  }

  /** `fetch` that records each answer's endpoint, status, media type and body shape. */
  recordingFetch(inner: typeof fetch): typeof fetch {
    return async (input, init) => {
      const res = await inner(input, init);
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      let text = '';
      try {
        text = await readCappedText(res.clone(), MAX_RECORDED_BODY_BYTES, 'empty');
      } catch {
        // The client reads the answer itself and reports any failure; the report keeps what it has.
      }
      this.#recordHttp(endpointOf((init?.method ?? 'GET').toUpperCase(), url), res.status, res.headers.get('content-type'), text);
      return res;
    };
  }

  /** A `TransportFactory` that records every connection's frames, control frames and close. */
  recordingTransports(inner: TransportFactory): TransportFactory {
    return (url, headers, handlers) => {
      const conn: Connection = { opened: false, closedByClient: false, lastClientMessageAtMs: null, jsonPingAtMs: [], framePingAtMs: [] };
      this.#connections.push(conn);
      const transport = inner(url, headers, {
        onOpen: () => {
          conn.opened = true;
          handlers.onOpen();
        },
        onMessage: (data, isBinary) => {
          this.#recordServerMessage(conn, data, isBinary);
          handlers.onMessage(data, isBinary);
        },
        onClose: (code, reason) => {
          if (conn.opened) {
            const by = conn.closedByClient ? 'client' : code === 1006 ? 'network' : 'server';
            const after = conn.lastClientMessageAtMs === null ? null : this.#clock.now() - conn.lastClientMessageAtMs;
            this.#closes.push({ code, by, after_client_message_ms: after });
          }
          handlers.onClose(code, reason);
        },
        onError: (error) => {
          if (!conn.opened && error.status !== undefined) this.#refused.push(error.status);
          handlers.onError(error);
        },
        onPing: () => {
          this.#control.ping += 1;
          conn.framePingAtMs.push(this.#clock.now());
          handlers.onPing?.();
        },
        onPong: () => {
          this.#control.pong += 1;
          handlers.onPong?.();
        },
      });
      const recorded: SocketTransport = {
        send: (text) => {
          if (transport.isOpen) {
            this.#recordClientMessage(text);
            conn.lastClientMessageAtMs = this.#clock.now();
          }
          transport.send(text);
        },
        close: (code, reason) => {
          conn.closedByClient = true;
          transport.close(code, reason);
        },
        terminate: () => {
          conn.closedByClient = true;
          transport.terminate();
        },
        get isOpen() {
          return transport.isOpen;
        },
        ...(transport.ping ? { ping: () => (transport.isOpen && (this.#clientFrames.ping += 1), transport.ping!()) } : {}),
        ...(transport.pong ? { pong: () => (transport.isOpen && (this.#clientFrames.pong += 1), transport.pong!()) } : {}),
      };
      return recorded;
    };
  }

  report(): WireReport {
    const secrets = [...this.#secrets];
    const jsonPings = this.#connections.reduce((n, c) => n + c.jsonPingAtMs.length, 0);
    const framePings = this.#control.ping;
    const format = jsonPings > 0 && framePings > 0 ? 'both' : jsonPings > 0 ? 'json' : framePings > 0 ? 'ws-frames' : 'none-seen';
    const intervals = this.#connections.flatMap((c) => gaps(jsonPings > 0 ? c.jsonPingAtMs : c.framePingAtMs));
    // Shapes were taken as they came; a secret learnt later (from a later answer) is checked again here.
    const scrub = (shape: Shape) => scrubShape(shape, secrets);
    return {
      report: 'avatar-kiosk wire report',
      version: 1,
      source: this.#source,
      surface: this.#surface,
      created_at: new Date(this.#clock.now()).toISOString(),
      http: this.#http.map((h) => ({ ...h, ...(h.shape === undefined ? {} : { shape: scrub(h.shape) }) })),
      socket: {
        connections: this.#connections.filter((c) => c.opened).length,
        refused_handshakes: [...this.#refused],
        messages: this.#messages.map((m) => ({ ...m, type: vocabularyValue(m.type, secrets), ...(m.shape === undefined ? {} : { shape: scrub(m.shape) }) })),
        ack: this.#ack ? { ...this.#ack, type: vocabularyValue(this.#ack.type, secrets), shape: scrub(this.#ack.shape) } : null,
        ping: {
          format,
          type: this.#jsonPing ? vocabularyValue(this.#jsonPing.type, secrets) : null,
          shape: this.#jsonPing ? scrub(this.#jsonPing.shape) : null,
          count: jsonPings + framePings,
          period_ms: periodOf(intervals),
        },
        control_frames: { ...this.#control },
        client_sent: { messages: Object.fromEntries(this.#clientMessages), ping_frames: this.#clientFrames.ping, pong_frames: this.#clientFrames.pong },
        closes: [...this.#closes],
      },
      not_seen: [...this.#notes],
    };
  }

  // --- recording ------------------------------------------------------------------------------------

  #recordHttp(endpoint: string, status: number, contentType: string | null, text: string): void {
    const mediaType = contentType ? contentType.split(';')[0]!.trim().toLowerCase() || null : null;
    const trimmed = text.trim();
    let body: HttpExchange['body'] = trimmed === '' ? 'empty' : trimmed.startsWith('<') ? 'html' : 'text';
    let shape: Shape | undefined;
    if (body === 'text') {
      try {
        const json = JSON.parse(trimmed) as unknown;
        this.#harvestSecrets(json);
        body = 'json';
        shape = shapeOf(json, [...this.#secrets]);
      } catch {
        // plain text: its words are not recorded
      }
    }
    const same = this.#http.find((h) => h.endpoint === endpoint && h.status === status && h.body === body && sameShape(h.shape, shape));
    if (same) same.count += 1;
    else this.#http.push({ endpoint, status, content_type: mediaType, body, ...(shape === undefined ? {} : { shape }), count: 1 });
  }

  #recordServerMessage(conn: Connection, data: string | Uint8Array, isBinary: boolean): void {
    if (isBinary || typeof data !== 'string') return this.#countMessage({ role: 'binary', type: null, count: 1 });
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return this.#countMessage({ role: 'not_json', type: null, count: 1 });
    }
    this.#harvestSecrets(json);
    const parsed = parseServerFrame(data);
    const rawType = isRecord(json) && (typeof json.type === 'number' || typeof json.type === 'string') ? json.type : null;
    const shape = shapeOf(json, [...this.#secrets]);
    const role: ServerMessage['role'] = !parsed
      ? 'other'
      : parsed.kind === 'conn_init_ack'
        ? 'ack'
        : parsed.kind === 'ping'
          ? 'ping'
          : parsed.kind === 'forced_hangup'
            ? 'forced_hangup'
            : 'other';
    if (role === 'ack' && !this.#ack) this.#ack = { type: rawType, path: ackPath(json), shape };
    if (role === 'ping') {
      conn.jsonPingAtMs.push(this.#clock.now());
      this.#jsonPing ??= { type: rawType, shape };
    }
    this.#countMessage({ role, type: rawType, shape, count: 1 });
  }

  #countMessage(message: ServerMessage): void {
    const same = this.#messages.find((m) => m.role === message.role && m.type === message.type && sameShape(m.shape, message.shape));
    if (same) same.count += 1;
    else this.#messages.push(message);
  }

  #recordClientMessage(text: string): void {
    let type = 'not JSON';
    try {
      const json = JSON.parse(text) as unknown;
      const value = isRecord(json) ? vocabularyValue(json.type, []) : null;
      type = value === null ? 'no type' : String(value);
    } catch {
      // counted as not JSON
    }
    this.#clientMessages.set(type, (this.#clientMessages.get(type) ?? 0) + 1);
  }

  /** Every string under an id-, token-, key- or persona-like field becomes a secret for the report. */
  #harvestSecrets(value: unknown, depth = 0): void {
    if (depth > 12 || typeof value !== 'object' || value === null) return;
    for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
      if (typeof field === 'string' && SECRET_KEY.test(key)) this.addSecrets(field);
      else this.#harvestSecrets(field, depth + 1);
    }
  }
}

/** Where the ack's `success` sat: `payload.conn_init_ack`, `payload.conn_init`, `payload.ack`, `payload` or the top level. */
function ackPath(json: unknown): string {
  if (!isRecord(json)) return '(not an object)';
  const payload = isRecord(json.payload) ? json.payload : null;
  for (const name of ['conn_init_ack', 'conn_init', 'ack']) {
    const inner = payload?.[name];
    if (isRecord(inner) && typeof inner.success === 'boolean') return `payload.${name}`;
  }
  if (payload && typeof payload.success === 'boolean') return 'payload';
  return typeof json.success === 'boolean' ? '(top level)' : '(elsewhere)';
}

function gaps(times: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < times.length; i++) out.push(times[i]! - times[i - 1]!);
  return out;
}

/** A session id no service has: its query shows the service's 404 body. */
export const UNKNOWN_SESSION_ID = 'wire-report-no-such-session';
/** A key no account has: a request with it shows the service's 401 body (direct surface only). */
export const UNKNOWN_API_KEY = 'wire-report-not-a-key';

/**
 * Two free requests whose answers show the service's error bodies (spec §7 does not show them): the query
 * of a session that does not exist (404) and, on the direct surface, the voice list with a key that does
 * not exist (401). Nothing is created or billed; the errors are expected and only recorded.
 */
export async function recordErrorAnswers(client: ServiceClient, recorder: WireRecorder): Promise<void> {
  // The errors are what we asked for: not worth a warning in the log.
  const recording = client.derive({ wrapFetch: (inner) => recorder.recordingFetch(inner), logger: silentLogger });
  await recording.querySession(UNKNOWN_SESSION_ID).catch((error: unknown) => toAvatarError(error));
  if (client.target.surface !== 'direct') {
    recorder.note('401 body: not asked for (the gateway surface sends no key of ours)');
    return;
  }
  const wrongKey = client.derive({ apiKey: UNKNOWN_API_KEY, wrapFetch: (inner) => recorder.recordingFetch(inner), logger: silentLogger });
  await wrongKey.listVoices().catch((error: unknown) => toAvatarError(error));
}
