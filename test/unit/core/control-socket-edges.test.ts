/**
 * Edges of ControlSocket that control-socket.test.ts leaves open: late or out-of-order transport callbacks
 * (open after close, error after close, a close reported while sending), timers that fire late or after
 * the socket finished, the exact 64 KB boundary, close/terminate bookkeeping, and what is logged.
 * A hand-driven transport stands in where FakeTransport keeps the contract too well to break it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock, TimerHandle } from '../../../electron/core/clock.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { ControlSocket, type ControlSocketOptions, type ControlSocketOutcome } from '../../../electron/core/control-socket.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { MAX_WS_MESSAGE_BYTES } from '../../../electron/core/protocol.ts';
import type { SocketTransport, TransportFactory, TransportHandlers } from '../../../electron/core/transport.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';

const LIVE_ID = 'live-9';
const ackOk = { type: 2, payload: { conn_init_ack: { success: true } } };
const ping = { type: 3, payload: { ping: {} } };


/**
 * A transport the test drives by hand, without FakeTransport's guarantees: `isOpen` is whatever the test
 * sets, `send` records even when not open, close/terminate only record, and `onSend` lets a test make the
 * transport fail in the middle of a send.
 */
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

function base(overrides: Partial<ControlSocketOptions> & Pick<ControlSocketOptions, 'transportFactory'>) {
  const clock = (overrides.clock as FakeClock | undefined) ?? new FakeClock(0);
  const outcomes: ControlSocketOutcome[] = [];
  const logger = recordingLogger();
  const socket = new ControlSocket({
    liveId: LIVE_ID,
    url: 'ws://127.0.0.1:1/live?live_id=live-9',
    headers: {},
    clock,
    logger,
    onOutcome: (outcome) => outcomes.push(outcome),
    ...overrides,
  });
  return { clock, outcomes, logger, socket, kinds: () => outcomes.map((o) => o.kind) };
}

function withFake(overrides: Partial<ControlSocketOptions> = {}) {
  const transports = new FakeTransports();
  const rest = base({ transportFactory: transports.factory, ...overrides });
  return { ...rest, transport: transports.last };
}

function withHand(overrides: Partial<ControlSocketOptions> = {}) {
  const transport = new HandTransport();
  const rest = base({ transportFactory: transport.factory, ...overrides });
  return { ...rest, transport };
}

describe('ControlSocket edges', () => {
  describe('identity', () => {
    it('defaults the generation to 1 and keeps a given one, which its logs carry', async () => {
      assert.equal(withFake().socket.generation, 1);
      const { socket, transport, clock, logger } = withFake({ generation: 7, deadAfterMs: 1_000 });
      assert.equal(socket.generation, 7);
      transport.open();
      await clock.advance(1_000);
      assert.deepEqual(logger.lines.at(-1), { level: 'warn', message: 'control socket: connection presumed dead', data: { cause: 'silence', generation: 7 } });
    });
  });

  describe('conn_init', () => {
    it('marks conn_init as sent on open, so connInit() cannot send a second one', () => {
      const { socket, transport } = withFake();
      assert.equal(socket.connInitSent, false);
      transport.open();
      assert.equal(socket.connInitSent, true);
      assert.equal(socket.connInit(), false);
      assert.deepEqual(transport.frames().map((f) => f.type), [1]);
    });

    it('refuses connInit() before open even when the transport already says it is open', () => {
      const { socket, transport } = withHand({ holdConnInit: true });
      transport.isOpen = true;
      assert.equal(socket.connInit(), false);
      assert.equal(socket.connInitSent, false);
      assert.deepEqual(transport.sent, []);
    });

    it('sends nothing when the transport reports open but is no longer open', () => {
      const { transport, kinds } = withHand();
      transport.isOpen = false;
      transport.handlers.onOpen();
      assert.deepEqual(transport.sent, []);
      assert.deepEqual(kinds(), ['open']);
    });

    it('reports the ack timeout with its exact message', async () => {
      const { transport, clock, outcomes } = withFake({ ackTimeoutMs: 1_000 });
      transport.open();
      await clock.advance(1_000);
      const last = outcomes.at(-1);
      assert.equal(last?.kind, 'error');
      assert.equal(last.kind === 'error' && last.error.code, 'timeout');
      assert.equal(last.kind === 'error' && last.error.message, 'No conn_init answer within 1000 ms.');
    });
  });

  describe('late transport callbacks', () => {
    it('ignores an open that arrives after its owner closed it (nothing sent, nothing reported)', () => {
      const { socket, transport, outcomes } = withHand();
      socket.close();
      transport.isOpen = true;
      transport.handlers.onOpen();
      assert.deepEqual(transport.sent, []);
      assert.deepEqual(outcomes, []);
      assert.equal(socket.isOpen, false);
    });

    it('ignores an error that arrives after its owner closed it', () => {
      const { socket, transport, outcomes } = withFake();
      transport.open();
      transport.autoCompleteClose = false;
      socket.close();
      transport.fail(new AvatarError('network', 'late'));
      assert.deepEqual(outcomes.map((o) => o.kind), ['open']);
    });

    it('does not report open after the transport closed while conn_init was being sent', () => {
      const { transport, outcomes, clock } = withHand();
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
      const { transport, outcomes, clock } = withHand({ sendConnInit: false });
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
  });

  describe('closing', () => {
    it('hangs up with close code 1000 and reason "hangup"', () => {
      const { socket, transport } = withFake();
      transport.open();
      socket.hangup('user_end');
      assert.deepEqual(transport.closeCalls, [{ code: 1000, reason: 'hangup' }]);
    });

    it('closes the transport once, however often close() is called', () => {
      const { socket, transport, clock } = withFake();
      transport.open();
      transport.autoCompleteClose = false;
      socket.close(4000, 'bye');
      socket.close(4001, 'again');
      assert.deepEqual(transport.closeCalls, [{ code: 4000, reason: 'bye' }]);
      assert.deepEqual(clock.pendingDelays(), [2_000]);
    });

    it('terminates after the given closeTimeoutMs when the peer does not answer, and logs it', async () => {
      const { socket, transport, clock, logger, outcomes } = withFake({ closeTimeoutMs: 500, generation: 3 });
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
      const { socket, transport, clock, outcomes } = withFake();
      transport.open();
      transport.autoCompleteClose = false;
      socket.close();
      clock.jump(60_000);
      await clock.advance(0);
      assert.equal(transport.terminated, true);
      assert.deepEqual(outcomes.map((o) => o.kind), ['open']);
    });

    it('terminate() terminates the transport, reports nothing and leaves no timer', () => {
      const { socket, transport, clock, outcomes } = withFake();
      transport.open();
      socket.terminate();
      assert.equal(transport.terminated, true);
      assert.equal(socket.isFinished, true);
      assert.deepEqual(outcomes.map((o) => o.kind), ['open']);
      assert.equal(clock.pendingCount, 0);
    });

    it('does not terminate a transport that has already closed', () => {
      const { socket, transport } = withFake();
      transport.open();
      transport.serverClose(1000, 'done');
      socket.terminate();
      assert.equal(transport.terminated, false);
    });
  });

  describe('frames the socket ignores', () => {
    it('answers a ping of exactly 64 KB and ignores one byte more', () => {
      const { transport, logger } = withFake();
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
      const { transport, logger } = withHand();
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
      const { transport, logger } = withFake();
      transport.open();
      const text = `{${'y'.repeat(200)}`;
      transport.receive(text);
      assert.deepEqual(logger.lines.at(-1), { level: 'warn', message: 'control socket: ignored a malformed frame', data: { preview: text.slice(0, 80), generation: 1 } });
    });

    it('logs a frame of unknown type with its type', () => {
      const { transport, logger, kinds } = withFake();
      transport.open();
      transport.receive({ type: 42, payload: {} });
      assert.deepEqual(logger.lines.at(-1), { level: 'debug', message: 'control socket: ignored a frame of unknown type', data: { type: 42, generation: 1 } });
      assert.deepEqual(kinds(), ['open']);
    });

    it('logs a repeated ack and an ack before conn_init', () => {
      const repeated = withFake();
      repeated.transport.open();
      repeated.transport.receive(ackOk);
      repeated.transport.receive(ackOk);
      assert.deepEqual(repeated.logger.lines.at(-1), { level: 'warn', message: 'control socket: ignored a repeated conn_init_ack', data: { generation: 1 } });
      const early = withFake({ holdConnInit: true });
      early.transport.open();
      early.transport.receive(ackOk);
      assert.deepEqual(early.logger.lines.at(-1), { level: 'warn', message: 'control socket: ignored a conn_init_ack before conn_init', data: { generation: 1 } });
      assert.deepEqual(early.kinds(), ['open']);
    });
  });

  describe('timers', () => {
    it('runs a timer that fires exactly the tolerance late as usual (a keep-alive, not a clock jump)', async () => {
      const { transport, clock, kinds } = withFake({ clockJumpToleranceMs: 1_000 });
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
        const { transport, clock, outcomes } = withFake(options);
        transport.open();
        clock.jump(jumpMs);
        await clock.advance(0);
        assert.deepEqual(outcomes.at(-1), { kind: 'dead', cause: 'clock-jump' });
        assert.equal(clock.pendingCount, 0);
      });
    }

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
});
