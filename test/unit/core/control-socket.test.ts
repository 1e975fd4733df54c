/**
 * ControlSocket (control-socket.ts): one control WebSocket of a session. It sends conn_init on open (or
 * holds it for a spare), reads the server's ack, answers pings and keeps its own keep-alive, declares the
 * link dead after silence or a clock jump, reports a server hangup, a close or an error once, and closes
 * politely (then terminates). A FakeTransport plays the server on a FakeClock; a hand-driven transport
 * stands in where FakeTransport keeps the contract too well to break it (late or out-of-order callbacks).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock, TimerHandle } from '../../../electron/core/clock.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { ControlSocket, type ControlSocketOptions, type ControlSocketOutcome } from '../../../electron/core/control-socket.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { MAX_WS_MESSAGE_BYTES } from '../../../electron/core/protocol.ts';
import { handshakeError, type SocketTransport, type TransportFactory, type TransportHandlers } from '../../../electron/core/transport.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';

const LIVE_ID = 'live-123';

class HandTransport implements SocketTransport {
  handlers!: TransportHandlers;
  isOpen = false;
  readonly sent: string[] = [];
  readonly closeCalls: Array<[number | undefined, string | undefined]> = [];
  terminateCalls = 0;
  onSend: (() => void) | null = null;
  readonly factory: TransportFactory = (_url, _headers, handlers) => {
    this.handlers = handlers;
    return this;
  };
  send(text: string): void {
    this.sent.push(text);
    this.onSend?.();
  }
  close(code?: number, reason?: string): void {
    this.closeCalls.push([code, reason]);
  }
  terminate(): void {
    this.terminateCalls += 1;
  }
  types(): number[] {
    return this.sent.map((s) => (JSON.parse(s) as { type: number }).type);
  }
}

/** A ControlSocket on a FakeClock over the given transport factory, with its outcomes and log recorded. */
function start(overrides: Partial<ControlSocketOptions> & Pick<ControlSocketOptions, 'transportFactory'>) {
  const clock = new FakeClock(0);
  const outcomes: ControlSocketOutcome[] = [];
  const logger = recordingLogger();
  const socket = new ControlSocket({
    liveId: LIVE_ID,
    url: 'ws://emulator.invalid/live/ws/live/connect?live_id=live-123',
    headers: { Authorization: 'Token abc' },
    clock,
    logger,
    onOutcome: (outcome) => outcomes.push(outcome),
    ...overrides,
  });
  return { clock, outcomes, logger, socket, kinds: () => outcomes.map((o) => o.kind) };
}

/** A ControlSocket over a FakeTransport the test plays the server on. */
function setup(overrides: Partial<ControlSocketOptions> = {}) {
  const transports = new FakeTransports();
  const world = start({ transportFactory: transports.factory, ...overrides });
  const transport = transports.last;
  /** Type and seq_id of every frame the client sent, e.g. "1#1". */
  const sent = () => transport.frames().map((f) => `${f.type}#${f.seq_id}`);
  return { ...world, transports, transport, sent };
}

/** A ControlSocket over a HandTransport. */
function setupByHand(overrides: Partial<ControlSocketOptions> = {}) {
  const transport = new HandTransport();
  return { ...start({ transportFactory: transport.factory, ...overrides }), transport };
}

const ping = { type: 3, payload: { ping: { ts: 1 } } };
const ackOk = { type: 2, payload: { conn_init_ack: { success: true } } };

describe('ControlSocket', () => {
  describe('when the socket opens', () => {
    it('connects with the given URL and headers and sends conn_init with seq_id 1 at once', () => {
      const { transport, sent, kinds } = setup();
      assert.equal(transport.url, 'ws://emulator.invalid/live/ws/live/connect?live_id=live-123');
      assert.deepEqual(transport.headers, { Authorization: 'Token abc' });
      assert.deepEqual(sent(), []);
      transport.open();
      assert.deepEqual(transport.frames(), [{ type: 1, live_id: LIVE_ID, seq_id: 1, payload: { conn_init: { version: 1 } } }]);
      assert.deepEqual(sent(), ['1#1']);
      assert.deepEqual(kinds(), ['open']);
    });
    it('sends nothing on open when made for a hangup only (sendConnInit: false)', () => {
      const { transport, socket, sent } = setup({ sendConnInit: false });
      transport.open();
      assert.deepEqual(sent(), []);
      socket.hangup('user_end');
      assert.deepEqual(transport.frames(), [{ type: 5, live_id: LIVE_ID, seq_id: 1, payload: { hangup: { hangup_reason: 'user_end' } } }]);
    });
    it('marks conn_init as sent on open, so connInit() cannot send a second one', () => {
      const { socket, transport } = setup();
      assert.equal(socket.connInitSent, false);
      transport.open();
      assert.equal(socket.connInitSent, true);
      assert.equal(socket.connInit(), false);
      assert.deepEqual(transport.frames().map((f) => f.type), [1]);
    });
    it('sends nothing when the transport reports open but is no longer open', () => {
      const { transport, kinds } = setupByHand();
      transport.isOpen = false;
      transport.handlers.onOpen();
      assert.deepEqual(transport.sent, []);
      assert.deepEqual(kinds(), ['open']);
    });
    it('defaults the generation to 1 and keeps a given one, which its logs carry', async () => {
      assert.equal(setup().socket.generation, 1);
      const { socket, transport, clock, logger } = setup({ generation: 7, deadAfterMs: 1_000 });
      assert.equal(socket.generation, 7);
      transport.open();
      await clock.advance(1_000);
      assert.deepEqual(logger.lines.at(-1), { level: 'warn', message: 'control socket: connection presumed dead', data: { cause: 'silence', generation: 7 } });
    });
  });

  describe('when the server answers conn_init', () => {
    const cases: Array<[string, unknown, ControlSocketOutcome]> = [
      ['a nested success ack', ackOk, { kind: 'ack-success' }],
      ['a flat success ack', { type: 2, payload: { success: true } }, { kind: 'ack-success' }],
      ['NOT_READY', { type: 2, payload: { conn_init_ack: { success: false, error_code: 'NOT_READY' } } }, { kind: 'ack-not-ready' }],
      ['a flat NOT_READY', { type: 2, payload: { success: false, error_code: 'NOT_READY' } }, { kind: 'ack-not-ready' }],
      [
        'LIVE_CONN_INIT_FAILED',
        { type: 2, payload: { conn_init_ack: { success: false, error_code: 'LIVE_CONN_INIT_FAILED' } } },
        { kind: 'ack-failed', errorCode: 'LIVE_CONN_INIT_FAILED' },
      ],
    ];
    for (const [name, frame, expected] of cases) {
      it(`reports ${name} as ${expected.kind}`, () => {
        const { transport, outcomes } = setup();
        transport.open();
        transport.receive(frame);
        assert.deepEqual(outcomes, [{ kind: 'open' }, expected]);
      });
    }

    it('ignores a second ack on the same connection', () => {
      const { transport, kinds, logger } = setup();
      transport.open();
      transport.receive(ackOk);
      transport.receive(ackOk);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
      assert.ok(logger.lines.some((l) => l.level === 'warn' && /repeated conn_init_ack/.test(l.message)));
    });
    it('logs a repeated ack, and an ack before conn_init, by name', () => {
      const repeated = setup();
      repeated.transport.open();
      repeated.transport.receive(ackOk);
      repeated.transport.receive(ackOk);
      assert.deepEqual(repeated.logger.lines.at(-1), { level: 'warn', message: 'control socket: ignored a repeated conn_init_ack', data: { generation: 1 } });
      const early = setup({ holdConnInit: true });
      early.transport.open();
      early.transport.receive(ackOk);
      assert.deepEqual(early.logger.lines.at(-1), { level: 'warn', message: 'control socket: ignored a conn_init_ack before conn_init', data: { generation: 1 } });
      assert.deepEqual(early.kinds(), ['open']);
    });
    it('reports a timeout error when no ack comes within ackTimeoutMs, and terminates', async () => {
      const { clock, transport, outcomes } = setup({ ackTimeoutMs: 3_000 });
      transport.open();
      await clock.advance(2_999);
      assert.equal(outcomes.length, 1);
      await clock.advance(1);
      assert.equal(outcomes[1]?.kind, 'error');
      assert.equal(outcomes[1]?.kind === 'error' && outcomes[1].error.code, 'timeout');
      assert.equal(transport.terminated, true);
      assert.equal(clock.pendingCount, 0);
    });
    it('reports the ack timeout as "No conn_init answer within 1000 ms."', async () => {
      const { transport, clock, outcomes } = setup({ ackTimeoutMs: 1_000 });
      transport.open();
      await clock.advance(1_000);
      const last = outcomes.at(-1);
      assert.equal(last?.kind, 'error');
      assert.equal(last.kind === 'error' && last.error.code, 'timeout');
      assert.equal(last.kind === 'error' && last.error.message, 'No conn_init answer within 1000 ms.');
    });
  });

  describe('seq_id', () => {
    it('increases by one per message (conn_init 1, pongs 2 and 3) and restarts at 1 on a new connection', () => {
      const first = setup();
      first.transport.open();
      first.transport.receive(ping);
      first.transport.receive(ping);
      assert.deepEqual(first.sent(), ['1#1', '4#2', '4#3']);
      first.socket.close();

      const second = setup();
      second.transport.open();
      second.transport.receive(ping);
      assert.deepEqual(second.sent(), ['1#1', '4#2']);
      second.socket.close();
    });
    it('numbers the hangup after what was sent before', () => {
      const { transport, socket, sent } = setup();
      transport.open();
      transport.receive(ackOk);
      transport.receive(ping);
      socket.hangup('user_end');
      assert.deepEqual(sent(), ['1#1', '4#2', '5#3']);
      assert.deepEqual(transport.frames()[2]?.payload, { hangup: { hangup_reason: 'user_end' } });
    });
  });

  describe('heartbeat', () => {
    it('answers each server ping with a pong carrying the clock time', async () => {
      const { clock, transport } = setup();
      transport.open();
      await clock.advance(1_234);
      transport.receive(ping);
      assert.deepEqual(transport.frames()[1], { type: 4, live_id: LIVE_ID, seq_id: 2, payload: { pong: { ts: 1_234 } } });
    });
    it('keeps its own 5 s keep-alive cadence besides answering pings, and never declares the link dead while pings come', async () => {
      const { clock, transport, kinds, socket } = setup();
      transport.open();
      transport.receive(ackOk);
      await clock.advance(2_500); // the server's ping phase is not ours
      for (let i = 0; i < 3; i++) {
        transport.receive(ping);
        await clock.advance(5_000);
      }
      // "time:type#seq" of everything after conn_init; a pong carries the time it was sent.
      const log = transport.frames().slice(1).map((f) => `${(f.payload.pong as { ts: number }).ts}:${f.type}#${f.seq_id}`);
      assert.deepEqual(log, ['2500:4#2', '5000:4#3', '7500:4#4', '10000:4#5', '12500:4#6', '15000:4#7']);
      await clock.advance(5_000 * 20 - 2_500);
      assert.deepEqual(kinds(), ['open', 'ack-success', 'dead'], 'dead only once the pings stopped for 15 s');
      socket.close();
      assert.equal(clock.pendingCount, 0);
    });
    it('sends a keep-alive pong every 5 s on its own, at 5 s and 10 s, and is dead at 15 s without a server frame', async () => {
      const { clock, transport, sent, kinds, outcomes } = setup();
      transport.open();
      transport.receive(ackOk);
      const sentAt: number[] = [];
      for (let t = 0; t < 15_000; t += 1_000) {
        const before = sent().length;
        await clock.advance(1_000);
        if (sent().length > before) sentAt.push(clock.now());
      }
      assert.deepEqual(sent(), ['1#1', '4#2', '4#3']);
      assert.deepEqual(sentAt, [5_000, 10_000]);
      assert.deepEqual(kinds(), ['open', 'ack-success', 'dead']);
      assert.deepEqual(outcomes[2], { kind: 'dead', cause: 'silence' });
      assert.equal(transport.terminated, true, 'terminated, not politely closed');
      assert.deepEqual(transport.closeCalls, []);
      assert.equal(clock.pendingCount, 0);
    });
    it('counts any server frame, even garbage, as a sign of life', async () => {
      const { clock, transport, kinds } = setup();
      transport.open();
      transport.receive(ackOk);
      await clock.advance(14_000);
      transport.receive('not json');
      await clock.advance(14_000);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
      await clock.advance(1_000);
      assert.deepEqual(kinds(), ['open', 'ack-success', 'dead']);
    });
  });

  describe('when the clock jumps (sleep/resume)', () => {
    it('treats a clock jump (sleep/resume) as a dead connection', async () => {
      const { clock, transport, outcomes } = setup();
      transport.open();
      transport.receive(ackOk);
      await clock.advance(1_000);
      clock.jump(60_000); // the machine slept for a minute; timers fire late on resume
      await clock.advance(0);
      assert.deepEqual(outcomes.at(-1), { kind: 'dead', cause: 'clock-jump' });
      assert.equal(outcomes.filter((o) => o.kind === 'dead').length, 1);
      assert.equal(transport.terminated, true);
      assert.equal(clock.pendingCount, 0);
    });
    it('does not take a small timer delay for a clock jump', async () => {
      const { clock, transport, kinds } = setup();
      transport.open();
      transport.receive(ackOk);
      clock.jump(4_000);
      await clock.advance(1_000);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
      assert.equal(transport.sent.length, 2, 'the keep-alive went out, late but normal');
    });
    it('runs a timer that fires exactly the tolerance late as usual (a keep-alive, not a clock jump)', async () => {
      const { transport, clock, kinds } = setup({ clockJumpToleranceMs: 1_000 });
      transport.open();
      transport.receive(ackOk);
      await clock.advance(4_000);
      clock.jump(1_000 + 1_000); // now 6 000: the 5 000 keep-alive fires exactly 1 000 late
      await clock.advance(0);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
      assert.deepEqual(transport.frames().map((f) => f.type), [1, 4]);
    });
    for (const [which, options, jumpMs] of [
      ['the keep-alive', { keepAliveIntervalMs: 1_000, deadAfterMs: 30_000, ackTimeoutMs: 30_000 }, 20_000],
      ['the ack deadline', { keepAliveIntervalMs: 30_000, deadAfterMs: 30_000, ackTimeoutMs: 1_000 }, 20_000],
      ['the dead timer', { keepAliveIntervalMs: 30_000, deadAfterMs: 1_000, ackTimeoutMs: 30_000 }, 20_000],
    ] as const) {
      it(`leaves no timer behind when ${which} fires late (clock jump)`, async () => {
        const { transport, clock, outcomes } = setup(options);
        transport.open();
        clock.jump(jumpMs);
        await clock.advance(0);
        assert.deepEqual(outcomes.at(-1), { kind: 'dead', cause: 'clock-jump' });
        assert.equal(clock.pendingCount, 0);
      });
    }
  });

  describe('when the server sends garbage', () => {
    it('logs and ignores malformed JSON, binary, unknown types and frames over 64 KB, and carries on', () => {
      const { transport, kinds, logger, sent } = setup();
      transport.open();
      transport.receive('{"type":3,"payload":{"ping":');
      transport.receive('[1,2,3]');
      transport.receiveBinary(new Uint8Array([0xde, 0xad, 0xbe, 0xef]));
      transport.receive({ type: 99, payload: { note: 'unknown' } });
      transport.receive({ type: 3, payload: { ping: { ts: 1 }, padding: 'x'.repeat(MAX_WS_MESSAGE_BYTES) } });
      assert.deepEqual(kinds(), ['open']);
      assert.deepEqual(sent(), ['1#1'], 'the oversized ping was not answered');
      const warnings = logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
      assert.equal(warnings.length, 4);
      assert.ok(warnings.some((m) => /binary/.test(m)));
      assert.ok(warnings.some((m) => /64 KB/.test(m)));
      transport.receive(ackOk);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
    });
    it('answers a ping of exactly 64 KB and ignores one byte more', () => {
      const { transport, logger } = setup();
      transport.open();
      const frameOf = (bytes: number) => {
        const skeleton = JSON.stringify({ type: 3, pad: '' });
        return JSON.stringify({ type: 3, pad: 'x'.repeat(bytes - skeleton.length) });
      };
      transport.receive(frameOf(MAX_WS_MESSAGE_BYTES));
      assert.deepEqual(transport.frames().map((f) => f.type), [1, 4]);
      transport.receive(frameOf(MAX_WS_MESSAGE_BYTES + 1));
      assert.deepEqual(transport.frames().map((f) => f.type), [1, 4]);
      assert.deepEqual(logger.lines.at(-1), {
        level: 'warn',
        message: 'control socket: ignored a frame over the 64 KB limit',
        data: { bytes: MAX_WS_MESSAGE_BYTES + 1, generation: 1 },
      });
    });
    it('logs bytes handed over as text-but-not-a-string as a binary frame', () => {
      const { transport, logger } = setupByHand();
      transport.isOpen = true;
      transport.handlers.onOpen();
      transport.handlers.onMessage(new Uint8Array([51]), false);
      transport.handlers.onMessage(new Uint8Array([1, 2]), true);
      assert.deepEqual(logger.lines, [
        { level: 'warn', message: 'control socket: ignored a binary frame', data: { bytes: 1, generation: 1 } },
        { level: 'warn', message: 'control socket: ignored a binary frame', data: { bytes: 2, generation: 1 } },
      ]);
      assert.equal(transport.sent.length, 1, 'only conn_init: the byte "3" was not taken for a ping');
    });
    it('logs a malformed frame with an 80-character preview', () => {
      const { transport, logger } = setup();
      transport.open();
      const text = `{${'y'.repeat(200)}`;
      transport.receive(text);
      assert.deepEqual(logger.lines.at(-1), { level: 'warn', message: 'control socket: ignored a malformed frame', data: { preview: text.slice(0, 80), generation: 1 } });
    });
    it('logs a frame of unknown type with its type', () => {
      const { transport, logger, kinds } = setup();
      transport.open();
      transport.receive({ type: 42, payload: {} });
      assert.deepEqual(logger.lines.at(-1), { level: 'debug', message: 'control socket: ignored a frame of unknown type', data: { type: 42, generation: 1 } });
      assert.deepEqual(kinds(), ['open']);
    });
  });

  describe('when the server hangs up (type 6)', () => {
    it('reports the reason', () => {
      const { transport, outcomes } = setup();
      transport.open();
      transport.receive(ackOk);
      transport.receive({ type: 6, payload: { hangup: { hangup_reason: 'credit_insufficient' } } });
      assert.deepEqual(outcomes.at(-1), { kind: 'forced-hangup', reason: 'credit_insufficient' });
    });
  });

  describe('when the connection closes or fails', () => {
    it('reports a server close with its code and reason, once', () => {
      const { transport, outcomes, clock } = setup();
      transport.open();
      transport.serverClose(1001, 'going away');
      transport.receive(ackOk);
      assert.deepEqual(outcomes, [{ kind: 'open' }, { kind: 'closed', code: 1001, reason: 'going away', wasClean: true }]);
      assert.equal(clock.pendingCount, 0);
    });
    it('reports an abnormal close (1006) as not clean', () => {
      const { transport, outcomes } = setup();
      transport.open();
      transport.serverClose(1006);
      assert.deepEqual(outcomes.at(-1), { kind: 'closed', code: 1006, reason: '', wasClean: false });
    });
    it('reports a refused handshake as an error with its code, and nothing after it', async () => {
      const { transport, outcomes, socket, clock } = setup();
      transport.fail(handshakeError(401));
      assert.equal(outcomes.length, 1);
      assert.equal(outcomes[0]?.kind, 'error');
      assert.equal(outcomes[0]?.kind === 'error' && outcomes[0].error.code, 'unauthorized');
      assert.equal(socket.isFinished, true);
      await socket.closed;
      assert.equal(clock.pendingCount, 0);
    });
  });

  describe('when transport callbacks come late or out of order', () => {
    it('ignores an open that arrives after its owner closed it (nothing sent, nothing reported)', () => {
      const { socket, transport, outcomes } = setupByHand();
      socket.close();
      transport.isOpen = true;
      transport.handlers.onOpen();
      assert.deepEqual(transport.sent, []);
      assert.deepEqual(outcomes, []);
      assert.equal(socket.isOpen, false);
    });
    it('ignores an error that arrives after its owner closed it', () => {
      const { socket, transport, outcomes } = setup();
      transport.open();
      transport.autoCompleteClose = false;
      socket.close();
      transport.fail(new AvatarError('network', 'late'));
      assert.deepEqual(outcomes.map((o) => o.kind), ['open']);
    });
    it('does not report open after the transport closed while conn_init was being sent', () => {
      const { transport, outcomes, clock } = setupByHand();
      transport.isOpen = true;
      transport.onSend = () => {
        transport.isOpen = false;
        transport.onSend = null;
        transport.handlers.onClose(1006, '');
      };
      transport.handlers.onOpen();
      assert.deepEqual(outcomes, [{ kind: 'closed', code: 1006, reason: '', wasClean: false }]);
      assert.equal(clock.pendingCount, 0);
    });
    it('does not keep re-arming the keep-alive once the transport closed during a keep-alive send', async () => {
      const { transport, outcomes, clock } = setupByHand({ sendConnInit: false });
      transport.isOpen = true;
      transport.handlers.onOpen();
      transport.onSend = () => {
        transport.isOpen = false;
        transport.onSend = null;
        transport.handlers.onClose(1001, 'going away');
      };
      await clock.advance(5_000);
      assert.deepEqual(outcomes.map((o) => o.kind), ['open', 'closed']);
      await clock.advance(5_000);
      assert.equal(clock.pendingCount, 0);
      assert.equal(transport.sent.length, 1);
    });
    it('reports nothing from a timer callback already queued when the socket closed', async () => {
      // A real clock cannot always take back a callback that is already due; model that with a clock whose
      // clearTimeout does nothing.
      const inner = new FakeClock(0);
      const leaky: Clock = {
        now: () => inner.now(),
        setTimeout: (fn, ms): TimerHandle => inner.setTimeout(fn, ms),
        clearTimeout: () => {},
      };
      const transports = new FakeTransports();
      const outcomes: ControlSocketOutcome[] = [];
      const socket = new ControlSocket({ liveId: LIVE_ID, url: 'ws://127.0.0.1:1/', headers: {}, transportFactory: transports.factory, clock: leaky, onOutcome: (o) => outcomes.push(o), ackTimeoutMs: 1_000 });
      transports.last.open();
      socket.close();
      await inner.advance(30_000);
      assert.deepEqual(outcomes.map((o) => o.kind), ['open']);
      assert.deepEqual(transports.last.frames().map((f) => f.type), [1]);
    });
  });

  describe('when its owner closes it', () => {
    it('closes politely and reports nothing more (events of a replaced socket are dropped)', () => {
      const { transport, socket, outcomes, clock } = setup();
      transport.open();
      socket.close();
      assert.deepEqual(transport.closeCalls, [{ code: 1000, reason: '' }]);
      transport.receive(ackOk);
      transport.receive({ type: 6, payload: { hangup: { hangup_reason: 'timeout' } } });
      assert.deepEqual(outcomes, [{ kind: 'open' }]);
      assert.equal(clock.pendingCount, 0);
    });
    it('terminates when the peer does not answer the close within closeTimeoutMs', async () => {
      const { transport, socket, clock } = setup({ closeTimeoutMs: 2_000 });
      transport.autoCompleteClose = false;
      transport.open();
      socket.close();
      let closed = false;
      void socket.closed.then(() => (closed = true));
      await clock.advance(1_999);
      assert.equal(closed, false);
      assert.equal(transport.terminated, false);
      await clock.advance(1);
      assert.equal(transport.terminated, true);
      assert.equal(closed, true);
      assert.equal(clock.pendingCount, 0);
    });
    it('terminates after the given closeTimeoutMs when the peer does not answer, and logs it', async () => {
      const { socket, transport, clock, logger, outcomes } = setup({ closeTimeoutMs: 500, generation: 3 });
      transport.open();
      transport.autoCompleteClose = false;
      socket.close();
      await clock.advance(499);
      assert.equal(transport.terminated, false);
      await clock.advance(1);
      assert.equal(transport.terminated, true);
      assert.deepEqual(logger.lines.at(-1), { level: 'debug', message: 'control socket: close timed out, terminating', data: { generation: 3 } });
      assert.deepEqual(outcomes.map((o) => o.kind), ['open']);
    });
    it('terminates the close fallback even when it fires far too late (after a sleep), and reports nothing', async () => {
      const { socket, transport, clock, outcomes } = setup();
      transport.open();
      transport.autoCompleteClose = false;
      socket.close();
      clock.jump(60_000);
      await clock.advance(0);
      assert.equal(transport.terminated, true);
      assert.deepEqual(outcomes.map((o) => o.kind), ['open']);
    });
    it('sends the hangup before closing, and only if open', () => {
      const { transport, socket, sent } = setup();
      socket.hangup('user_end'); // still connecting: nothing can be sent
      assert.deepEqual(sent(), []);
      assert.equal(transport.closeCalls.length, 1);
    });
    it('hangs up with close code 1000 and reason "hangup"', () => {
      const { socket, transport } = setup();
      transport.open();
      socket.hangup('user_end');
      assert.deepEqual(transport.closeCalls, [{ code: 1000, reason: 'hangup' }]);
    });
    it('is idempotent', () => {
      const { transport, socket } = setup();
      transport.open();
      socket.close();
      socket.close();
      socket.terminate();
      assert.equal(transport.closeCalls.length, 1);
    });
    it('closes the transport once, however often close() is called', () => {
      const { socket, transport, clock } = setup();
      transport.open();
      transport.autoCompleteClose = false;
      socket.close(4000, 'bye');
      socket.close(4001, 'again');
      assert.deepEqual(transport.closeCalls, [{ code: 4000, reason: 'bye' }]);
      assert.deepEqual(clock.pendingDelays(), [2_000]);
    });
    it('terminate() terminates the transport, reports nothing and leaves no timer', () => {
      const { socket, transport, clock, outcomes } = setup();
      transport.open();
      socket.terminate();
      assert.equal(transport.terminated, true);
      assert.equal(socket.isFinished, true);
      assert.deepEqual(outcomes.map((o) => o.kind), ['open']);
      assert.equal(clock.pendingCount, 0);
    });
    it('does not terminate a transport that has already closed', () => {
      const { socket, transport } = setup();
      transport.open();
      transport.serverClose(1000, 'done');
      socket.terminate();
      assert.equal(transport.terminated, false);
    });
  });

  // A spare's socket holds its conn_init until the tap.
  describe('with holdConnInit (a spare session)', () => {
    it('sends nothing on open, keeps the socket alive without an ack deadline, and sends conn_init on connInit()', async () => {
      const { clock, transport, socket, sent, kinds } = setup({ holdConnInit: true, ackTimeoutMs: 1_000 });
      transport.open();
      assert.deepEqual(sent(), []);
      assert.equal(socket.connInitSent, false);
      for (let i = 0; i < 4; i++) {
        await clock.advance(5_000);
        transport.receive(ping);
      }
      // 20 s: far past the 1 s ack timeout, which does not run yet; keep-alives and ping answers only.
      assert.deepEqual(sent(), ['4#1', '4#2', '4#3', '4#4', '4#5', '4#6', '4#7', '4#8']);
      assert.deepEqual(kinds(), ['open']);
      assert.equal(socket.connInit(1_000), true);
      assert.equal(socket.connInit(1_000), false, 'once');
      assert.deepEqual(sent().at(-1), '1#9');
      assert.deepEqual(transport.frames().at(-1)!.payload, { conn_init: { version: 1 } });
      assert.equal(socket.connInitSent, true);
      transport.receive(ackOk);
      assert.deepEqual(kinds(), ['open', 'ack-success']);
      socket.close();
    });
    it('starts the ack deadline at connInit()', async () => {
      const { clock, transport, socket, kinds } = setup({ holdConnInit: true });
      transport.open();
      await clock.advance(4_000);
      socket.connInit(1_000);
      await clock.advance(999);
      assert.deepEqual(kinds(), ['open']);
      await clock.advance(1);
      assert.deepEqual(kinds(), ['open', 'error']);
      assert.equal(socket.isFinished, true);
    });
    it('ignores an ack that arrives before conn_init, and refuses connInit() before open', () => {
      const { transport, socket, kinds } = setup({ holdConnInit: true });
      assert.equal(socket.connInit(), false, 'not open yet');
      transport.open();
      transport.receive(ackOk);
      assert.deepEqual(kinds(), ['open']);
      socket.close();
    });
    it('refuses connInit() before open even when the transport already says it is open', () => {
      const { socket, transport } = setupByHand({ holdConnInit: true });
      transport.isOpen = true;
      assert.equal(socket.connInit(), false);
      assert.equal(socket.connInitSent, false);
      assert.deepEqual(transport.sent, []);
    });
  });
});
