/**
 * Frame fuzzing of the control socket: 10,000+ generated and mutated server frames sent through a live
 * emulator WebSocket (real `ws` on 127.0.0.1, the emulator's test-only `injectFrame`) to the real
 * transport, ControlSocket and SessionController of a live call.
 *
 * Frames: valid shapes (pings, repeated acks, unknown types, echoes), random JSON with the protocol's key
 * names, wrong types, huge numbers, deep nesting, frames over 64 KB and over the 1 MiB hard cap, invalid
 * UTF-8 in text frames, binary frames, and mutations (truncation, flipped and inserted characters) of
 * valid frames.
 *
 * Checked after every batch of frames:
 *   - no transport handler threw (each is wrapped and counted) and nothing was logged at error level;
 *   - the call is still live, on the same socket, except after a frame the WebSocket RFC makes fatal
 *     (invalid UTF-8 in a text frame: close 1007; over the 1 MiB hard cap: close 1009), where the client
 *     reconnects at once and the call goes on;
 *   - the client answered exactly the pings of the batch plus one canonical ping sent after it
 *     (pings as the client's own parser reads them; the canonical one proves it still answers);
 * Frames that are real hangups (type 6, or a hangup reason without a client seq_id) are kept out of the
 * stream; a sample of them is sent to fresh calls, each of which must end, ended by the server.
 *
 * Seeded: PROPERTY_SEED (see test/helpers/property.ts); a failure prints the seed, the batch and its frames.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../helpers/fake-clock.ts';
import { createLogger } from '../../electron/core/log.ts';
import { MAX_WS_MESSAGE_BYTES, parseServerFrame } from '../../electron/core/protocol.ts';
import { ServiceClient } from '../../electron/core/rest-client.ts';
import { SessionController } from '../../electron/core/session-controller.ts';
import type { StartOptions } from '../../electron/core/session-types.ts';
import { WS_HARD_MAX_PAYLOAD_BYTES, wsTransportFactory, type TransportFactory } from '../../electron/core/transport.ts';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { propertySeed, scaledRuns } from '../helpers/property.ts';
import { driveUntilSettled, until } from '../helpers/until.ts';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const AUDIO: StartOptions = { callMode: 'audio', avatar: { persona: 'A fuzzing target.', image: PNG } };
const FRAMES = scaledRuns(10_200);
const BATCH = 50;
const HANGUP_SAMPLES = 20;

interface Frame {
  label: string;
  data: string | Uint8Array;
  binary: boolean;
}

// ---------------------------------------------------------------------------------------------------
// The oracle (independent of the client's code, from spec §6 and §8 and RFC 6455)

const utf8 = new TextDecoder('utf-8', { fatal: true });
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function byteLength(f: Frame): number {
  return typeof f.data === 'string' ? Buffer.byteLength(f.data) : f.data.byteLength;
}

/** The text of a text frame, or null when it is binary or not UTF-8. */
function textOf(f: Frame): string | null {
  if (f.binary) return null;
  if (typeof f.data === 'string') return f.data;
  try {
    return utf8.decode(f.data);
  } catch {
    return null;
  }
}

/** RFC 6455 makes the connection fail: invalid UTF-8 in a text frame; our 1 MiB hard cap closes with 1009. */
function dropsConnection(f: Frame): boolean {
  return byteLength(f) > WS_HARD_MAX_PAYLOAD_BYTES || (!f.binary && textOf(f) === null);
}

/** spec §6: type 6 is the forced hangup; a hangup reason without a client-style seq_id is read as one too
 *  (unless the frame is an ack by content or its envelope is malformed). Frames over 64 KB (spec §8) are
 *  ignored whatever they say. */
function isRealHangup(f: Frame): boolean {
  const text = textOf(f);
  if (text === null || byteLength(f) > MAX_WS_MESSAGE_BYTES) return false;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  if (!isRecord(v)) return false;
  if (v.type === 6 || v.type === '6') return true;
  // An envelope whose `type` is neither absent, a number nor a string is malformed (spec §6) and ignored.
  if (v.type !== undefined && typeof v.type !== 'number' && typeof v.type !== 'string') return false;
  const payload = isRecord(v.payload) ? v.payload : {};
  const ackLike = [payload.conn_init_ack, payload.conn_init, payload.ack, payload, v].some((c) => isRecord(c) && typeof c.success === 'boolean');
  return !ackLike && isRecord(payload.hangup) && typeof payload.hangup.hangup_reason === 'string' && typeof v.seq_id !== 'number';
}

/** Pings the client should answer: as its own parser reads them (a frame within the size limit). */
function isPing(f: Frame): boolean {
  const text = textOf(f);
  if (text === null || byteLength(f) > MAX_WS_MESSAGE_BYTES) return false;
  return parseServerFrame(text)?.kind === 'ping';
}

// ---------------------------------------------------------------------------------------------------
// Generators

const KEYS = ['type', 'payload', 'success', 'error_code', 'conn_init_ack', 'conn_init', 'ack', 'ping', 'heartbeat', 'hangup', 'hangup_reason', 'seq_id', 'live_id', '__proto__', 'constructor', 'toString'];
const keyArb = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 }));
const hugeNumberArb = fc.constantFrom('1e308', '-1e308', '1e400', '-0', '9007199254740993', '1e-400', '123456789012345678901234567890', '0.' + '1'.repeat(400), '9'.repeat(2000));
const typeArb = fc.oneof(
  fc.constantFrom('1', '2', '3', '4', '5', '7', '99', '-1', '2.5', '"ping"', '"PING"', '"heartbeat"', '"2"', '"3"', 'null', 'true', '[]', '{}', '[3]', '{"n":3}', '""'),
  hugeNumberArb,
  fc.integer().map(String),
);
const jsonArb = fc.json({ maxDepth: 4 });

/** A frame with protocol-like structure and wrong or odd values anywhere. */
const shapedArb: fc.Arbitrary<string> = fc
  .tuple(typeArb, fc.dictionary(keyArb, fc.oneof(jsonArb, hugeNumberArb, fc.constantFrom('true', 'false', '"NOT_READY"', '"LIVE_CONN_INIT_FAILED"'))), fc.boolean())
  .map(([type, entries, withType]) => {
    const body = Object.entries(entries).map(([k, v]) => `${JSON.stringify(k)}:${v}`);
    if (withType) body.unshift(`"type":${type}`);
    return `{${body.join(',')}}`;
  });

const validArb: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map((ts) => JSON.stringify({ type: 3, payload: { ping: { ts } } })),
  fc.constant(JSON.stringify({ type: 'ping' })),
  fc.constant(JSON.stringify({ type: 3 })),
  fc.constant(JSON.stringify({ type: 'heartbeat', payload: {} })),
  fc.constant(JSON.stringify({ type: 2, payload: { conn_init_ack: { success: true } } })),
  fc.constant(JSON.stringify({ type: 2, payload: { conn_init_ack: { success: false, error_code: 'NOT_READY' } } })),
  fc.constant(JSON.stringify({ type: 2, payload: { conn_init_ack: { success: false, error_code: 'LIVE_CONN_INIT_FAILED' } } })),
  fc.constant(JSON.stringify({ type: 2, payload: { success: false } })),
  fc.constant(JSON.stringify({ success: false, error_code: 'LIVE_CONN_INIT_FAILED' })),
  fc.constant(JSON.stringify({ type: 5, live_id: 'x', seq_id: 9, payload: { hangup: { hangup_reason: 'user_end' } } })),
  fc.constant(JSON.stringify({ type: 4, payload: { pong: { ts: 1 } } })),
  fc.integer({ min: 7, max: 10_000 }).map((type) => JSON.stringify({ type, payload: { note: 'unknown' } })),
  fc.constantFrom('', ' ', 'null', 'true', '0', '[]', '""', '{}', '[{"type":6}]', '"{\\"type\\":6}"'),
);

const mutatedArb: fc.Arbitrary<string> = fc
  .tuple(validArb, fc.array(fc.tuple(fc.nat(), fc.constantFrom('cut', 'flip', 'insert', 'dup'), fc.string({ minLength: 1, maxLength: 3 })), { minLength: 1, maxLength: 4 }))
  .map(([text, edits]) => {
    let s = text;
    for (const [at, op, chars] of edits) {
      const i = s.length === 0 ? 0 : at % s.length;
      if (op === 'cut') s = s.slice(0, i);
      else if (op === 'flip') s = s.slice(0, i) + chars[0] + s.slice(i + 1);
      else if (op === 'insert') s = s.slice(0, i) + chars + s.slice(i);
      else s = s.slice(0, i) + s.slice(i, i + 8) + s.slice(i);
    }
    return s;
  });

const deepArb: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 10, max: 60_000 }), fc.constantFrom('[', '{"a":'), fc.boolean())
  .map(([depth, open, closed]) => {
    const close = open === '[' ? ']' : '}';
    const inner = open.repeat(depth) + '1' + (closed ? close.repeat(depth) : '');
    return `{"type":3,"payload":{"ping":${inner}}}`;
  });

/** Hangup-like frames: some are real hangups (type 6 in any form), others only look like one. */
const hangupishArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('6', '"6"', '5', '2', 'null'),
    fc.oneof(fc.constantFrom('"user_end"', '"credit_insufficient"', '"audit_violation"', '""', '5', 'null', '{}', '"x"'), hugeNumberArb),
    fc.boolean(),
    fc.constantFrom('', ',"success":false', ',"success":true', ',"seq_id":3', ',"ping":{}'),
  )
  .map(([type, reason, withType, extra]) => `{${withType ? `"type":${type},` : ''}"payload":{"hangup":{"hangup_reason":${reason}}${extra}}}`);

const text = (label: string) => (data: string): Frame => ({ label, data, binary: false });
const frameArb: fc.Arbitrary<Frame> = fc.oneof(
  { weight: 20, arbitrary: validArb.map(text('valid')) },
  { weight: 30, arbitrary: shapedArb.map(text('shaped')) },
  { weight: 10, arbitrary: jsonArb.map(text('json')) },
  { weight: 20, arbitrary: mutatedArb.map(text('mutated')) },
  { weight: 4, arbitrary: deepArb.map(text('deep')) },
  { weight: 2, arbitrary: hangupishArb.map(text('hangup-like')) },
  { weight: 6, arbitrary: fc.string({ maxLength: 200, unit: 'binary' }).map(text('unicode')) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: MAX_WS_MESSAGE_BYTES - 64, max: 3 * MAX_WS_MESSAGE_BYTES }).map((n) =>
      text('large')(JSON.stringify({ type: 6, payload: { hangup: { hangup_reason: 'oversized' }, pad: 'x'.repeat(n) } })),
    ),
  },
  { weight: 6, arbitrary: fc.uint8Array({ maxLength: 300 }).map((data): Frame => ({ label: 'binary', data, binary: true })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.uint8Array({ maxLength: 40 }), fc.constantFrom(0xff, 0xfe, 0xc0, 0xc1, 0xf5, 0x80, 0xed))
      .map(([bytes, bad]): Frame => ({ label: 'invalid-utf8', data: Uint8Array.from([0x7b, ...bytes, bad, 0x7d]), binary: false })),
  },
);

function describeFrame(f: Frame): string {
  const bytes = byteLength(f);
  const shown = typeof f.data === 'string' ? JSON.stringify(f.data.slice(0, 160)) : `<${Buffer.from(f.data.slice(0, 40)).toString('hex')}>`;
  return `${f.label}${f.binary ? ' (binary)' : ''}, ${bytes} bytes: ${shown}${bytes > 160 ? '…' : ''}`;
}

// ---------------------------------------------------------------------------------------------------

describe('control socket frame fuzzing (live emulator WebSocket)', () => {
  const clock = new FakeClock();
  const logLines: string[] = [];
  const logger = createLogger({ level: 'debug', sink: (line) => logLines.push(line) });
  const throws: string[] = [];
  /** The real ws transport with every handler wrapped: a throw is recorded (and would otherwise be uncaught). */
  const guardedFactory: TransportFactory = (url, headers, handlers) => {
    const guard =
      <A extends unknown[]>(name: string, fn: (...args: A) => void) =>
      (...args: A) => {
        try {
          fn(...args);
        } catch (error) {
          throws.push(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        }
      };
    return wsTransportFactory(url, headers, {
      onOpen: guard('onOpen', () => handlers.onOpen()),
      onMessage: guard('onMessage', (data: string | Uint8Array, isBinary: boolean) => handlers.onMessage(data, isBinary)),
      onClose: guard('onClose', (code: number, reason: string) => handlers.onClose(code, reason)),
      onError: guard('onError', (error) => handlers.onError(error)),
    });
  };
  let emu: EmulatorHandle;
  let client: ServiceClient;

  before(async () => {
    emu = await startEmulator({ clock, port: 0 });
    client = new ServiceClient({ target: { surface: 'direct', baseUrl: emu.baseUrl, apiKey: emu.apiKey }, clock, logger });
  });
  after(async () => {
    await emu.close();
    assert.equal(clock.pendingCount, 0, `timers left: ${clock.pendingDelays().join(', ')}`);
  });

  async function liveCall(): Promise<{ controller: SessionController; liveId: string; done: Promise<unknown> }> {
    const controller = new SessionController({ client, clock, logger, transportFactory: guardedFactory });
    const done = controller.start(AUDIO);
    await until(() => controller.state.phase === 'live', { realTimeoutMs: 10_000, message: 'the call went live' });
    const state = controller.state;
    assert.ok(state.phase === 'live');
    return { controller, liveId: state.liveId, done };
  }

  const pongs = (liveId: string) => emu.getSession(liveId)!.clientMessages.filter((m) => m.type === 4).length;

  it(`a live call survives ${FRAMES} generated frames and keeps answering pings`, async (t) => {
    const seed = propertySeed();
    t.diagnostic(`frame fuzz: ${FRAMES} frames, seed ${seed} (replay: PROPERTY_SEED=${seed})`);
    const all = fc.sample(frameArb, { seed, numRuns: FRAMES });
    const hangups = all.filter(isRealHangup);
    const stream = all.filter((f) => !isRealHangup(f));

    // Batches; a frame that fails the connection goes alone, so its reconnect is checked on its own.
    const batches: Frame[][] = [];
    let batch: Frame[] = [];
    for (const f of stream) {
      if (dropsConnection(f)) {
        if (batch.length) batches.push(batch);
        batches.push([f]);
        batch = [];
      } else if (batch.push(f) >= BATCH) {
        batches.push(batch);
        batch = [];
      }
    }
    if (batch.length) batches.push(batch);
    // Two frames over the 1 MiB hard cap (cheap to describe, too big to generate in bulk).
    const hardCap: Frame = { label: 'over-hard-cap', data: JSON.stringify({ type: 3, pad: 'y'.repeat(WS_HARD_MAX_PAYLOAD_BYTES + 10) }), binary: false };
    batches.splice(Math.floor(batches.length / 3), 0, [hardCap]);
    batches.splice(Math.floor((2 * batches.length) / 3), 0, [hardCap]);

    const { controller, liveId, done } = await liveCall();
    const counts: Record<string, number> = {};
    let expectedSockets = 1;
    let sent = 0;
    for (const [index, frames] of batches.entries()) {
      const context = () => `seed ${seed}, batch ${index + 1}/${batches.length}:\n  ${frames.map(describeFrame).join('\n  ')}`;
      const pongsBefore = pongs(liveId);
      for (const f of frames) {
        assert.ok(emu.injectFrame(liveId, f.data, { binary: f.binary }), `the emulator has an open socket (${context()})`);
        counts[f.label] = (counts[f.label] ?? 0) + 1;
        sent += 1;
      }
      if (frames.length === 1 && dropsConnection(frames[0]!)) {
        // RFC 6455: the connection fails; the call must come back on a new socket at once.
        expectedSockets += 1;
        await until(() => emu.getSession(liveId)!.socketsOpened === expectedSockets && controller.state.phase === 'live' && emu.liveCount() === 1, {
          realTimeoutMs: 10_000,
          message: `the call reconnected (${context()})`,
        });
        await until(() => emu.injectFrame(liveId, '{"type":99}', { binary: false }), { realTimeoutMs: 5_000, message: 'the new socket is open' });
      }
      const expectedPongs = frames.filter(isPing).length + 1;
      assert.ok(emu.injectFrame(liveId, JSON.stringify({ type: 3, payload: { ping: { ts: index } } })), `the socket is open after the batch (${context()})`);
      await until(() => pongs(liveId) >= pongsBefore + expectedPongs, { realTimeoutMs: 10_000, message: `pongs after the batch (${context()})` });
      assert.equal(pongs(liveId), pongsBefore + expectedPongs, `pongs answered (${context()})`);
      assert.equal(controller.state.phase, 'live', `still live (${context()})`);
      assert.equal(emu.getSession(liveId)!.socketsOpened, expectedSockets, `no reconnect (${context()})`);
      assert.deepEqual(throws, [], `a handler threw (${context()})`);
      assert.deepEqual(
        logLines.filter((l) => / ERROR /.test(l)),
        [],
        `error-level log lines (${context()})`,
      );
    }
    t.diagnostic(`sent ${sent} frames (${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}); ${expectedSockets - 1} reconnects; ${hangups.length} real hangups held back`);
    assert.ok(sent >= FRAMES - hangups.length, 'every generated frame was sent');

    const terminal = await driveUntilSettled(clock, controller.hangup());
    assert.equal(terminal?.phase, 'ended');
    await done;
    await controller.dispose();
    assert.equal(emu.getSession(liveId)!.hangupReason, 'user_end');

    // A sample of the real hangups: each ends a fresh call, ended by the server.
    for (const f of hangups.slice(0, HANGUP_SAMPLES)) {
      const call = await liveCall();
      assert.ok(emu.injectFrame(call.liveId, f.data, { binary: f.binary }));
      const end = await driveUntilSettled(clock, call.done as Promise<{ phase: string; summary?: { endedBy: string | null } | null }>, { maxFakeMs: 20_000, stepMs: 250 }).catch(
        (error: unknown) => {
          throw new Error(`seed ${seed}: the call did not end after a real hangup frame: ${describeFrame(f)} (${String(error)})`);
        },
      );
      assert.ok(end.phase === 'ended' || end.phase === 'failed', `a hangup frame ends the call: ${describeFrame(f)}`);
      assert.equal(end.summary?.endedBy, 'server', describeFrame(f));
      await call.controller.dispose();
      // The emulator's own session ends when the client leaves (it did not send type 5: the server ended it).
      emu.forceHangup(call.liveId, 'external');
    }
    assert.deepEqual(throws, []);
  });
});
