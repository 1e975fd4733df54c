/**
 * Unattended operation in the lifecycle: a fatal error in main hangs up and relaunches; a
 * renderer unresponsive for 10 s is reloaded (after hanging up); the display stays awake while live.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../../helpers/fake-clock.ts';
import { createLifecycle, createPowerSaveGuard, stopInReverse } from '../../../electron/kiosk/lifecycle.ts';

function harness(options: { shutdownNeverEnds?: boolean } = {}) {
  const clock = new FakeClock();
  const seq: string[] = [];
  const lines: string[] = [];
  const lifecycle = createLifecycle({
    clock,
    shutdownTimeoutMs: 8_000,
    logger: { debug() {}, info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) },
    hangupSession: async (why) => void seq.push(`hangup:${why}`),
    shutdownService: () => {
      seq.push('shutdown');
      return options.shutdownNeverEnds ? new Promise<void>(() => {}) : Promise.resolve();
    },
    quitApp: () => void seq.push('quit'),
    reloadRenderer: () => void seq.push('reload'),
    relaunchApp: () => void seq.push('relaunch'),
  });
  return { clock, seq, lines, lifecycle };
}

describe('lifecycle: fatal errors in main', () => {
  it('uncaught exception: log, shut down (hang up) once, relaunch; a second error does not repeat it', async () => {
    const { seq, lines, lifecycle } = harness();
    const a = lifecycle.onFatalError('uncaughtException', new TypeError('boom'));
    const b = lifecycle.onFatalError('unhandledRejection', new Error('again'));
    await Promise.all([a, b]);
    assert.deepEqual(seq, ['shutdown', 'relaunch']);
    assert.equal(lifecycle.phase, 'done');
    assert.deepEqual(lines, ['error Fatal error in main: hanging up and relaunching the kiosk', 'error Another fatal error while recovering from one']);
    // The relaunch path is not also a quit: before-quit passes straight through now.
    let prevented = false;
    lifecycle.onBeforeQuit({ preventDefault: () => (prevented = true) });
    assert.equal(prevented, false);
  });

  it('a hang-up that never finishes still relaunches after the shutdown timeout', async () => {
    const { clock, seq, lifecycle } = harness({ shutdownNeverEnds: true });
    const done = lifecycle.onFatalError('unhandledRejection', 'x');
    await clock.advance(7_999);
    assert.deepEqual(seq, ['shutdown']);
    await clock.advance(1);
    await done;
    assert.deepEqual(seq, ['shutdown', 'relaunch']);
    assert.equal(clock.pendingCount, 0);
  });
});

describe('lifecycle: an unresponsive renderer', () => {
  it('is hung up and reloaded after 10 s', async () => {
    const { clock, seq, lifecycle } = harness();
    lifecycle.onUnresponsive();
    lifecycle.onUnresponsive(); // Electron may repeat it: one timer
    await clock.advance(9_999);
    assert.deepEqual(seq, []);
    await clock.advance(1);
    await flushMicrotasks();
    assert.deepEqual(seq, ['hangup:renderer unresponsive', 'reload']);
    assert.equal(clock.pendingCount, 0);
  });

  it('is left alone if it recovers in time', async () => {
    const { clock, seq, lifecycle } = harness();
    lifecycle.onUnresponsive();
    await clock.advance(5_000);
    lifecycle.onResponsive();
    await clock.advance(20_000);
    assert.deepEqual(seq, []);
    assert.equal(clock.pendingCount, 0);
  });
});

describe('power save guard', () => {
  it('blocks display sleep from live until the call is over, once per call', () => {
    const calls: string[] = [];
    let next = 7;
    const guard = createPowerSaveGuard({ start: (t) => (calls.push(`start:${t}`), next++), stop: (id) => void calls.push(`stop:${id}`) });
    const state = (phase: string) => ({ type: 'state', state: { phase } });
    for (const p of ['creating', 'connecting']) guard.onEvent(state(p));
    assert.equal(guard.active, false);
    guard.onEvent(state('live'));
    guard.onEvent(state('reconnecting'));
    guard.onEvent(state('live'));
    guard.onEvent({ type: 'muted' });
    assert.equal(guard.active, true);
    guard.onEvent(state('ending'));
    guard.onEvent(state('ended'));
    guard.onEvent(state('idle'));
    guard.onEvent(state('live'));
    guard.onEvent(state('failed'));
    assert.deepEqual(calls, ['start:prevent-display-sleep', 'stop:7', 'start:prevent-display-sleep', 'stop:8']);
    assert.equal(guard.active, false);
  });
});

describe('stopInReverse (the quit waits for the features)', () => {
  it('stops the last started first, each awaited, a failing one logged and skipped', async () => {
    const seq: string[] = [];
    const outcome = await stopInReverse([
      { name: 'a', stop: async () => void seq.push('a') },
      { name: 'b', stop: () => Promise.reject(new Error('b broke')) },
      { name: 'c', stop: async () => {
        await new Promise((r) => setImmediate(r));
        seq.push('c');
      } },
      { name: 'no stop' },
    ]);
    assert.equal(outcome, 'done');
    assert.deepEqual(seq, ['c', 'a']);
  });

  it('gives up at the bound: a broker that never answers cannot keep the app alive', async () => {
    const clock = new FakeClock();
    const pending = stopInReverse([{ name: 'hangs', stop: () => new Promise<void>(() => {}) }], { clock, timeoutMs: 3_000 });
    await clock.advance(3_000);
    assert.equal(await pending, 'timeout');
    assert.equal(clock.pendingCount, 0);
  });
});
