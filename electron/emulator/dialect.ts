/**
 * How the emulator words what the spec leaves open, one knob per fair reading (types.ts): the ping's
 * format, the ack's type and nesting, HTTP error bodies, unknown extra fields, timestamps, and which
 * client message types a strict server knows. With the default knobs every function answers exactly as
 * the emulator always did (docs/service-protocol.md, "Assumptions"), so the readings are opt-in.
 */
import { MSG_CONN_INIT, MSG_HANGUP, MSG_PING, MSG_PONG, isRecord } from '../core/protocol.ts';
import type { ApiError } from './api-error.ts';
import type { EmulatorKnobs } from './types.ts';

/** `json-other-type`: a ping numbered past the spec's 1–6 and named in its payload as a heartbeat. */
export const OTHER_PING_TYPE = 9;
/** `json-named`: a ping whose type is a name, not a number. */
export const NAMED_PING_TYPE = 'ping';

/** What `extraFields` adds: fields no client knows (a newer service), in every JSON answer and frame. */
export const EXTRA_BODY_FIELDS = Object.freeze({ server_version: '1.9.0-beta', trace: Object.freeze({ region: 'emu-1', shard: 3 }) });
export const EXTRA_FRAME_FIELDS = Object.freeze({ trace_id: 'emu-trace', flags: Object.freeze(['beta']) });
export const EXTRA_LIVE_FIELDS = Object.freeze({ region: 'emu-1', labels: Object.freeze({}) });

export interface ServerFrame {
  type?: number | string;
  payload?: unknown;
  [field: string]: unknown;
}

/** The JSON ping the server sends every ping period, or null when it pings with control frames or not at all. */
export function pingFrame(knobs: Pick<EmulatorKnobs, 'pingFormat'>, nowMs: number): ServerFrame | null {
  switch (knobs.pingFormat) {
    case 'json':
      // ASSUMPTION: ping type 3, payload {ping:{ts}} (format not shown).
      return { type: MSG_PING, payload: { ping: { ts: nowMs } } };
    case 'json-other-type':
      return { type: OTHER_PING_TYPE, payload: { heartbeat: { ts: nowMs } } };
    case 'json-named':
      return { type: NAMED_PING_TYPE, payload: { ts: nowMs } };
    case 'ws-frames':
    case 'none':
      return null;
  }
}

/** The type of the server's JSON ping: a strict server takes a client message of that type as its reply. */
export function pingType(knobs: Pick<EmulatorKnobs, 'pingFormat'>): number | string | null {
  const frame = pingFrame(knobs, 0);
  return frame?.type ?? null;
}

/** conn_init_ack in the knobs' type and nesting (spec §6 shows `success` and `error_code` only). */
export function ackFrame(knobs: Pick<EmulatorKnobs, 'ackShape' | 'ackType'>, success: boolean, errorCode?: string): ServerFrame {
  const ack = success ? { success: true } : { success: false, error_code: errorCode };
  switch (knobs.ackShape) {
    case 'nested':
      return { type: knobs.ackType, payload: { conn_init_ack: ack } };
    case 'flat':
      return { type: knobs.ackType, payload: ack };
    case 'echo':
      return { type: knobs.ackType, payload: { conn_init: ack } };
    case 'top':
      return { type: knobs.ackType, ...ack };
  }
}

/** A server frame with the extra fields when `extraFields` is on (at the top and inside the payload). */
export function withExtraFrameFields(knobs: Pick<EmulatorKnobs, 'extraFields'>, frame: ServerFrame): ServerFrame {
  if (!knobs.extraFields) return frame;
  const payload = isRecord(frame.payload) ? { ...frame.payload, meta: { node: 'emu-1' } } : frame.payload;
  return { ...frame, ...EXTRA_FRAME_FIELDS, ...(payload === undefined ? {} : { payload }) };
}

/** A 2xx JSON body with the extra top-level fields when `extraFields` is on. */
export function withExtraBodyFields(knobs: Pick<EmulatorKnobs, 'extraFields'>, body: unknown): unknown {
  return knobs.extraFields && isRecord(body) ? { ...body, ...EXTRA_BODY_FIELDS } : body;
}

/** A session's `live` object with the extra fields when `extraFields` is on. */
export function withExtraLiveFields<T extends Record<string, unknown>>(knobs: Pick<EmulatorKnobs, 'extraFields'>, live: T): T {
  return knobs.extraFields ? { ...live, ...EXTRA_LIVE_FIELDS } : live;
}

/** A unix-seconds timestamp as the knobs write it (spec §2.1 documents strings). */
export function timestamp(knobs: Pick<EmulatorKnobs, 'timestamps'>, ms: number): string | number {
  const seconds = Math.floor(ms / 1000);
  return knobs.timestamps === 'number' ? seconds : String(seconds);
}

/** The body of an HTTP error answer in the knobs' shape: its content type (null: none) and text. */
export function errorAnswer(knobs: Pick<EmulatorKnobs, 'errorBody'>, error: ApiError): { contentType: string | null; text: string } {
  const json = (body: unknown) => ({ contentType: 'application/json; charset=utf-8', text: JSON.stringify(body) });
  switch (knobs.errorBody) {
    case 'nested':
      return json(error.toBody());
    case 'flat':
      return json({ code: error.code, message: error.message });
    case 'detail':
      return json({ detail: error.message });
    case 'html':
      return {
        contentType: 'text/html; charset=utf-8',
        text: `<!DOCTYPE html><html><head><title>${error.status}</title></head><body><h1>${error.status}</h1><p>The request could not be served.</p></body></html>`,
      };
    case 'empty':
      return { contentType: null, text: '' };
  }
}

/**
 * Whether a strict server knows a client message type: conn_init, hangup and a reply of its own JSON
 * ping's type. A lenient server (no `strictCloseCode`) knows them all (it ignores what it does not use).
 */
export function knowsClientType(knobs: Pick<EmulatorKnobs, 'strictCloseCode' | 'pingFormat'>, type: number | string): boolean {
  if (knobs.strictCloseCode === null) return true;
  return type === MSG_CONN_INIT || type === MSG_HANGUP || type === pingType(knobs);
}

/** Whether a client message of `type` may come before conn_init: a hangup, or a keep-alive (our pong, or
 *  on a strict server the reply to its ping). spec §6; the README's assumption on a delayed conn_init. */
export function mayPrecedeConnInit(knobs: Pick<EmulatorKnobs, 'strictCloseCode' | 'pingFormat'>, type: number | string): boolean {
  if (type === MSG_CONN_INIT || type === MSG_HANGUP) return true;
  return knobs.strictCloseCode === null ? type === MSG_PONG : type === pingType(knobs);
}

/** Whether a client message of `type` is a keep-alive the server takes (nothing to do but count it). */
export function isKeepAliveType(knobs: Pick<EmulatorKnobs, 'strictCloseCode' | 'pingFormat'>, type: number | string): boolean {
  return type === MSG_PONG || (knobs.strictCloseCode !== null && type === pingType(knobs));
}
