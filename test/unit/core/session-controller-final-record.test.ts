/**
 * SessionController: the REST reads around the end of a call. While reconnecting it asks once whether the
 * session is still on (a session the server already ended is not reconnected to); after the end it polls
 * until the service says `ended` (spec §3: the billing figures are readable then), bounded by
 * endQueryTimeoutMs, every endQueryIntervalMs. Credits are money: the figures in the summary must be the
 * service's own. In-memory transports and a FakeClock (session-world.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError, type ErrorCode } from '../../../electron/core/errors.ts';
import type { LiveRecord } from '../../../electron/core/protocol.ts';
import { ACK_OK, T0, tick, world } from '../../helpers/session-world.ts';

const LIVE_ID = 'live-final-1';

type Answer = (call: number, signal: AbortSignal | undefined) => Promise<LiveRecord>;

const record = (fields: Partial<LiveRecord> & Record<string, unknown>): LiveRecord =>
  ({ id: LIVE_ID, status: 'ended', created_at: '1', started_at: undefined, ended_at: undefined, ...fields }) as LiveRecord;

/** A query that answers only when its signal aborts (a service that never replies). */
const hanging: Answer = (_call, signal) =>
  new Promise((_resolve, reject) => {
    if (!signal) return; // without a signal it can never end
    signal.addEventListener('abort', () => reject(new AvatarError('cancelled', 'The operation was cancelled.')), { once: true });
  });

/** Resolves with 'pending' when `promise` has not settled after a few real milliseconds. */
async function settledSoon<T>(promise: Promise<T>, ms = 200): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((r) => (timer = setTimeout(() => r('pending'), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function build(answer: Answer, options: { endQueryIntervalMs?: number; clock?: FakeClock } = {}) {
  const h = world({
    liveId: LIVE_ID,
    liveDurationS: 600,
    ...(options.clock ? { clock: options.clock } : {}),
    query: ({ id, call, signal }) => {
      assert.equal(id, LIVE_ID);
      return answer(call, signal);
    },
    controller: { endQueryTimeoutMs: 10_000, endQueryIntervalMs: options.endQueryIntervalMs ?? 500 },
  });
  /** Each query: fake ms since T0. */
  return Object.assign(h, { queryTimes: h.queries, warnings: h.logged });
}

async function live(h: ReturnType<typeof build>) {
  const { result } = await h.startAcked();
  assert.equal(h.controller.state.phase, 'live');
  return { result };
}

describe('SessionController: the status query while reconnecting', () => {
  const droppedWhileServerEnded = async (statusRecord: LiveRecord) => {
    const h = build((call) => Promise.resolve(call === 1 ? statusRecord : record({ status: 'ended', billed_seconds: 30, credits_cost: 45 })));
    const { result } = await live(h);
    h.transports.last.serverClose(1006);
    const terminal = await result;
    assert.deepEqual(h.queryTimes, [0, 0], 'the status query, then the billing query');
    return { h, terminal };
  };

  it('a session the server ended with a reason: ending with that reason, ended by the server, no reconnect to it', async () => {
    const { h, terminal } = await droppedWhileServerEnded(record({ status: 'ended', hangup_reason: 'credit_insufficient' }));
    assert.deepEqual(
      h.states().map((s) => s.phase),
      ['creating', 'connecting', 'live', 'reconnecting', 'ending', 'ended'],
    );
    assert.deepEqual(h.states()[4], { phase: 'ending', liveId: LIVE_ID, reason: 'credit_insufficient' });
    assert.ok(terminal.phase === 'ended');
    assert.equal(terminal.summary.hangupReason, 'credit_insufficient');
    assert.equal(terminal.summary.endedBy, 'server');
    assert.equal(terminal.summary.finalStatus, 'ended');
    assert.equal(terminal.summary.billedSeconds, 30);
    assert.equal(terminal.summary.creditsCost, 45);
  });

  for (const [what, fields] of [
    ['no reason', {}],
    ['an empty reason', { hangup_reason: '' }],
    ['a reason that is not a string', { hangup_reason: 42 }],
  ] as const) {
    it(`a session the server ended with ${what}: the reason is "unknown" and the summary has none`, async () => {
      const { h, terminal } = await droppedWhileServerEnded(record({ status: 'ending', ...fields }));
      assert.deepEqual(h.states()[4], { phase: 'ending', liveId: LIVE_ID, reason: 'unknown' });
      assert.ok(terminal.phase === 'ended');
      assert.equal(terminal.summary.hangupReason, null);
      assert.equal(terminal.summary.endedBy, 'server');
    });
  }

  it('a failed status query is logged (debug, with its code) and the reconnect goes on', async () => {
    const h = build(() => Promise.reject(new AvatarError('server', 'HTTP 503')));
    await live(h);
    h.transports.last.serverClose(1006);
    await tick();
    assert.equal(h.controller.state.phase, 'reconnecting');
    assert.deepEqual(
      h.log.lines.filter((l) => l.message === 'session: status query failed'),
      [{ level: 'debug', message: 'session: status query failed', data: { code: 'server' } }],
    );
    h.transports.last.open();
    h.transports.last.receive(ACK_OK);
    assert.equal(h.controller.state.phase, 'live');
    await h.controller.dispose();
  });

  it('dispose does not wait for a status query that never answers', async () => {
    const h = build(hanging);
    await live(h);
    h.transports.last.serverClose(1006);
    await tick();
    assert.equal(h.controller.state.phase, 'reconnecting');
    const reconnect = h.transports.last;
    reconnect.open();
    reconnect.receive(ACK_OK);
    const disposed = h.controller.dispose();
    assert.equal(await settledSoon(disposed), undefined, 'dispose finished');
    assert.deepEqual(reconnect.frames().at(-1)?.type, 5);
  });
});

describe('SessionController: the billing query after the end', () => {
  it('stops at the first `ended` answer: one query, the figures of that answer, no waiting', async () => {
    const h = build(() => Promise.resolve(record({ status: 'ended', billed_seconds: 12, credits_cost: 18 })));
    const { result } = await live(h);
    const done = h.controller.hangup();
    await h.clock.advance(0);
    assert.equal(h.controller.state.phase, 'ended');
    await h.clock.advance(10_000);
    assert.deepEqual(h.queryTimes, [0]);
    const terminal = await done;
    assert.equal(await result, terminal);
    assert.ok(terminal?.phase === 'ended');
    assert.deepEqual([terminal.summary.finalStatus, terminal.summary.billedSeconds, terminal.summary.creditsCost], ['ended', 12, 18]);
  });

  it('polls every 500 ms while the service says `ending`, up to 10 s, and keeps the last figures', async () => {
    // After 100 polls the fake says not_found, so a controller that forgot to wait cannot spin forever.
    const h = build((call) =>
      call > 100 ? Promise.reject(new AvatarError('not_found', 'gone')) : Promise.resolve(record({ status: 'ending', billed_seconds: call, credits_cost: 0 })),
    );
    const { result } = await live(h);
    void h.controller.hangup();
    await h.clock.advance(9_999);
    assert.equal(h.controller.state.phase, 'ending');
    await h.clock.advance(1);
    const terminal = await result;
    assert.deepEqual(
      h.queryTimes,
      Array.from({ length: 21 }, (_, i) => i * 500),
    );
    assert.ok(terminal.phase === 'ended');
    assert.deepEqual([terminal.summary.finalStatus, terminal.summary.billedSeconds], ['ending', 21]);
    assert.equal(terminal.summary.timingsMs.ended, 0, 'the call ended at the hangup, not when the figures came');
  });

  it('the last poll falls on the deadline when the interval does not divide it', async () => {
    const h = build(() => Promise.resolve(record({ status: 'ending' })), { endQueryIntervalMs: 3_000 });
    const { result } = await live(h);
    void h.controller.hangup();
    await h.clock.advance(10_000);
    assert.equal((await result).phase, 'ended');
    assert.deepEqual(h.queryTimes, [0, 3_000, 6_000, 9_000, 10_000]);
  });

  for (const code of ['cancelled', 'not_found', 'forbidden', 'unauthorized'] as const) {
    it(`a ${code} answer stops the polling at once: warned, no figures`, async () => {
      const h = build(() => Promise.reject(new AvatarError(code, 'no')));
      const { result } = await live(h);
      void h.controller.hangup();
      await h.clock.advance(0);
      assert.equal(h.controller.state.phase, 'ended');
      const terminal = await result;
      assert.deepEqual(h.queryTimes, [0]);
      assert.deepEqual(h.warnings('session: final query failed'), [{ level: 'warn', message: 'session: final query failed', data: { code } }]);
      assert.ok(terminal.phase === 'ended');
      assert.deepEqual([terminal.summary.finalStatus, terminal.summary.billedSeconds, terminal.summary.creditsCost], [null, null, null]);
    });
  }

  it('other failures are retried until the deadline, each one warned', async () => {
    const code: ErrorCode = 'server';
    const h = build(() => Promise.reject(new AvatarError(code, 'HTTP 500')));
    const { result } = await live(h);
    void h.controller.hangup();
    await h.clock.advance(10_000);
    const terminal = await result;
    assert.equal(h.queryTimes.length, 21);
    assert.equal(h.warnings('session: final query failed').length, 21);
    assert.deepEqual(h.warnings('session: final query failed')[0], { level: 'warn', message: 'session: final query failed', data: { code } });
    assert.ok(terminal.phase === 'ended');
    assert.equal(terminal.summary.finalStatus, null);
  });

  it('dispose does not wait for a billing query that never answers', async () => {
    const h = build(hanging);
    const { result } = await live(h);
    void h.controller.hangup();
    await tick();
    assert.equal(h.controller.state.phase, 'ending');
    const disposed = h.controller.dispose();
    assert.equal(await settledSoon(disposed), undefined, 'dispose finished');
    const terminal = await result;
    assert.ok(terminal.phase === 'ended');
    assert.equal(terminal.summary.finalStatus, null);
    // The query we cut off is no failure of the service: nothing warned (whoever disposed says why).
    assert.deepEqual(h.warnings('session: final query failed'), []);
    assert.deepEqual(h.warnings('session: final query cut off').map((l) => [l.level, l.data]), [['debug', { code: 'cancelled' }]]);
  });

  it('a clock that cannot schedule the next poll ends the polling with the figures so far (no busy loop)', async () => {
    /** A clock whose timers run out once the call is over. */
    class ExhaustedClock extends FakeClock {
      exhausted = false;
      override setTimeout(fn: () => void, delayMs: number) {
        if (this.exhausted) throw new Error('no timer available');
        return super.setTimeout(fn, delayMs);
      }
    }
    const clock = new ExhaustedClock(T0);
    // After 50 polls the fake says not_found, so a controller that kept polling cannot spin forever.
    const h = build(
      (call) => (call > 50 ? Promise.reject(new AvatarError('not_found', 'gone')) : Promise.resolve(record({ status: 'ending', billed_seconds: 7, credits_cost: 9 }))),
      { clock },
    );
    const { result } = await live(h);
    clock.exhausted = true;
    void h.controller.hangup();
    const terminal = await result;
    assert.deepEqual(h.queryTimes, [0]);
    assert.ok(terminal.phase === 'ended');
    assert.deepEqual([terminal.summary.finalStatus, terminal.summary.billedSeconds, terminal.summary.creditsCost], ['ending', 7, 9]);
  });
});
