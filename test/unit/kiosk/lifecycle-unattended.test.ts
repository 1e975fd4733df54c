/**
 * Unattended operation in the lifecycle: a fatal error in main hangs up and relaunches; a
 * renderer unresponsive for 10 s is reloaded (after hanging up); the display stays awake while live.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, StrictClock, flushMicrotasks } from '../../helpers/fake-clock.ts';
import { createLifecycle, createPowerSaveGuard, stopInReverse } from '../../../electron/kiosk/lifecycle.ts';
import type { Logger } from '../../../electron/core/log.ts';

/** A logger that keeps only warnings, as [message, fields]. */
function keepWarnings(lines: unknown[]): Logger {
  return { debug() {}, info() {}, error() {}, warn: (m, d) => void lines.push([m, d]) };
}

/** A logger that keeps warnings and errors, as [level, message, fields]. */
function keepWarningsAndErrors(lines: unknown[]): Logger {
  return { debug() {}, info() {}, warn: (m, d) => void lines.push(['warn', m, d]), error: (m, d) => void lines.push(['error', m, d]) };
}

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

describe('lifecycle: a kiosk window closed by the window manager', () => {
  it('is refused while running (with a warning), let through once the app is quitting', async () => {
    const { lines, lifecycle } = harness();
    let prevented = 0;
    assert.equal(lifecycle.onKioskWindowClose({ preventDefault: () => void prevented++ }), true);
    assert.equal(prevented, 1);
    assert.deepEqual(lines, ['warn A window close was refused: the kiosk quits only through the staff panel, a signal or an update']);
    const quitting = lifecycle.requestQuit('tray');
    assert.equal(lifecycle.onKioskWindowClose({ preventDefault: () => void prevented++ }), false);
    await quitting;
    assert.equal(lifecycle.onKioskWindowClose({ preventDefault: () => void prevented++ }), false);
    assert.equal(prevented, 1);
  });
});

describe('lifecycle: where a quit came from', () => {
  function sources() {
    const infos: unknown[] = [];
    const lifecycle = createLifecycle({
      clock: new FakeClock(),
      logger: { debug() {}, warn() {}, error() {}, info: (m, d) => void infos.push([m, d]) },
      hangupSession: async () => {},
      shutdownService: async () => {},
      quitApp: () => {},
      reloadRenderer: () => {},
    });
    return { infos, lifecycle };
  }

  for (const [call, source] of [
    ['SIGINT', 'SIGINT'],
    ['SIGTERM', 'SIGTERM'],
    ['SIGHUP', 'SIGHUP'],
    ['SIGUSR2', 'other'],
  ] as const) {
    it(`${call} is logged as ${source}`, async () => {
      const { infos, lifecycle } = sources();
      lifecycle.onSignal(call as NodeJS.Signals);
      assert.deepEqual(infos[0], ['Shutting down', { source }]);
    });
  }

  it('the updater, all windows closed; a second request is logged and ignored', async () => {
    const a = sources();
    a.lifecycle.onBeforeQuitForUpdate();
    a.lifecycle.onWindowAllClosed();
    assert.deepEqual(a.infos, [['Shutting down', { source: 'update' }], ['Already shutting down; ignoring another quit request', { source: 'window-all-closed' }]]);
    assert.equal(a.lifecycle.phase, 'shutting-down');
    const b = sources();
    b.lifecycle.onWindowAllClosed();
    assert.deepEqual(b.infos[0], ['Shutting down', { source: 'window-all-closed' }]);
  });

  it('a shutdown past its bound quits with a warning naming the bound; a failed one is an error, then quits', async () => {
    const clock = new FakeClock();
    const lines: unknown[] = [];
    const seq: string[] = [];
    const lifecycle = createLifecycle({
      clock,
      shutdownTimeoutMs: 1_000,
      logger: keepWarningsAndErrors(lines),
      hangupSession: async () => {},
      shutdownService: () => new Promise<void>(() => {}),
      quitApp: () => void seq.push('quit'),
      reloadRenderer: () => {},
    });
    const quitting = lifecycle.requestQuit('tray');
    await clock.advance(1_000);
    await quitting;
    assert.deepEqual(seq, ['quit']);
    assert.deepEqual(lines, [['warn', 'Shutdown timed out; quitting anyway', { timeoutMs: 1_000 }]]);
    assert.equal(clock.pendingCount, 0);
    const failing: unknown[] = [];
    const other = createLifecycle({
      clock: new FakeClock(),
      logger: { debug() {}, info() {}, warn() {}, error: (m, d) => void failing.push([m, d]) },
      hangupSession: async () => {},
      shutdownService: () => Promise.reject(new Error('socket gone')),
      quitApp: () => {},
      reloadRenderer: () => {},
    });
    await other.requestQuit('tray');
    assert.deepEqual(failing, [['Shutdown failed', { error: 'Error: socket gone' }]]);
    assert.equal(other.phase, 'done');
  });
});

describe('lifecycle: a crash while recovering', () => {
  function world(options: { hangupFails?: boolean; relaunch?: boolean; shutdownNeverEnds?: boolean; hangupWaits?: boolean } = {}) {
    const clock = new FakeClock();
    const seq: string[] = [];
    const lines: unknown[] = [];
    let release = () => {};
    const lifecycle = createLifecycle({
      clock,
      shutdownTimeoutMs: 1_000,
      logger: keepWarningsAndErrors(lines),
      hangupSession: async (why) => {
        seq.push(`hangup:${why}`);
        if (options.hangupWaits) await new Promise<void>((r) => (release = r));
        if (options.hangupFails) throw new Error('no session');
      },
      shutdownService: () => (seq.push('shutdown'), options.shutdownNeverEnds ? new Promise<void>(() => {}) : Promise.resolve()),
      quitApp: () => void seq.push('quit'),
      reloadRenderer: () => void seq.push('reload'),
      ...(options.relaunch === false ? {} : { relaunchApp: () => void seq.push('relaunch') }),
    });
    return { clock, seq, lines, lifecycle, release: () => release() };
  }

  it('a renderer gone: logged with its reason and exit code; a hang-up that fails is a warning and the page still reloads', async () => {
    const { seq, lines, lifecycle } = world({ hangupFails: true });
    await lifecycle.onRenderProcessGone({ reason: 'oom', exitCode: 9 });
    assert.deepEqual(seq, ['hangup:renderer gone: oom', 'reload']);
    assert.deepEqual(lines, [
      ['error', 'The renderer process is gone; hanging up and reloading', { reason: 'oom', exitCode: 9 }],
      ['warn', 'Hangup after a renderer crash failed', { error: 'Error: no session' }],
    ]);
    await lifecycle.onRenderProcessGone({ reason: 'crashed' });
    assert.deepEqual(seq.slice(2), ['hangup:renderer gone: crashed', 'reload'], 'after one recovery, the next crash recovers again');
  });

  it('a quit that starts during the hang-up after a crash: no reload', async () => {
    const { seq, lifecycle } = world();
    const recovering = lifecycle.onRenderProcessGone({ reason: 'crashed' });
    void lifecycle.requestQuit('tray');
    await recovering;
    assert.equal(seq.includes('reload'), false);
  });

  it('an unresponsive renderer whose hang-up fails is still reloaded, with a warning; a quit during the wait stops it', async () => {
    const a = world({ hangupFails: true });
    a.lifecycle.onUnresponsive();
    await a.clock.advance(10_000);
    await flushMicrotasks();
    assert.deepEqual(a.seq, ['hangup:renderer unresponsive', 'reload']);
    assert.deepEqual(a.lines, [
      ['warn', 'The renderer is unresponsive', { reloadInMs: 10_000 }],
      ['error', 'The renderer stayed unresponsive; hanging up and reloading', { afterMs: 10_000 }],
      ['warn', 'Hangup for an unresponsive renderer failed', { error: 'Error: no session' }],
    ]);
    const b = world();
    b.lifecycle.onUnresponsive();
    void b.lifecycle.requestQuit('tray');
    await b.clock.advance(10_000);
    await flushMicrotasks();
    assert.deepEqual(b.seq, ['shutdown', 'quit']);
    const c = world();
    void c.lifecycle.requestQuit('tray');
    c.lifecycle.onUnresponsive();
    await c.clock.advance(10_000);
    assert.deepEqual(c.lines, [], 'not while quitting');
    assert.deepEqual(c.seq, ['shutdown', 'quit']);
  });

  it('an unresponsive renderer whose quit starts during the hang-up: no reload', async () => {
    const { seq, lifecycle, clock, release } = world({ hangupWaits: true });
    lifecycle.onUnresponsive();
    await clock.advance(10_000);
    assert.deepEqual(seq, ['hangup:renderer unresponsive']);
    void lifecycle.requestQuit('tray');
    release();
    await flushMicrotasks();
    assert.equal(seq.includes('reload'), false);
  });

  it('a fatal error without a relaunch hook quits; during a quit it does not shut down twice', async () => {
    const a = world({ relaunch: false });
    await a.lifecycle.onFatalError('uncaughtException', 'boom');
    assert.deepEqual(a.seq, ['shutdown', 'quit']);
    const b = world();
    void b.lifecycle.requestQuit('tray');
    await b.lifecycle.onFatalError('unhandledRejection', new Error('x'));
    assert.deepEqual(b.seq.filter((s) => s === 'shutdown'), ['shutdown']);
    assert.equal(b.seq.includes('relaunch'), true);
  });

  it('a fatal error whose hang-up runs past the bound relaunches with a warning', async () => {
    const { clock, lines, lifecycle } = world({ shutdownNeverEnds: true });
    const done = lifecycle.onFatalError('uncaughtException', 'boom');
    await clock.advance(1_000);
    await done;
    assert.deepEqual(lines.at(-1), ['warn', 'Hang-up timed out after a fatal error; relaunching anyway', { timeoutMs: 1_000 }]);
  });

  it('the fatal error is logged with its kind, name, message and the top of its stack', async () => {
    const { lines, lifecycle } = world();
    const error = new TypeError('bad');
    error.stack = ['TypeError: bad', ...Array.from({ length: 8 }, (_, i) => `    at f${i}`)].join('\n');
    await lifecycle.onFatalError('uncaughtException', error);
    assert.deepEqual(lines[0], ['error', 'Fatal error in main: hanging up and relaunching the kiosk', { kind: 'uncaughtException', error: `TypeError: bad\n${Array.from({ length: 5 }, (_, i) => `    at f${i}`).join('\n')}` }]);
    const noStack = new Error('flat');
    noStack.stack = '';
    const second = world();
    await second.lifecycle.onFatalError('unhandledRejection', noStack);
    assert.deepEqual(second.lines[0], ['error', 'Fatal error in main: hanging up and relaunching the kiosk', { kind: 'unhandledRejection', error: 'Error: flat' }]);
    await second.lifecycle.onFatalError('uncaughtException', 42);
    assert.deepEqual(second.lines.at(-1), ['error', 'Another fatal error while recovering from one', { kind: 'uncaughtException', error: '42' }]);
  });

  it('a responsive renderer with no timer pending says nothing', () => {
    const { lines, lifecycle } = world();
    lifecycle.onResponsive();
    assert.deepEqual(lines, []);
  });
});

describe('power save guard: a kiosk window that shows', () => {
  it('with whileShown, held while the window shows as well as during a call; without it, only during a call', () => {
    const calls: string[] = [];
    let next = 1;
    const blocker = { start: (t: string) => (calls.push(`start:${t}`), next++), stop: (id: number) => void calls.push(`stop:${id}`) };
    const guard = createPowerSaveGuard(blocker, undefined, { whileShown: true });
    guard.windowShown(true);
    assert.equal(guard.active, true);
    guard.onEvent({ type: 'state', state: { phase: 'live' } });
    guard.windowShown(false);
    assert.equal(guard.active, true, 'the call holds it');
    guard.onEvent({ type: 'state', state: { phase: 'ended' } });
    assert.equal(guard.active, false);
    assert.deepEqual(calls, ['start:prevent-display-sleep', 'stop:1']);
    const companion = createPowerSaveGuard(blocker);
    companion.windowShown(true);
    assert.equal(companion.active, false);
    companion.onEvent({ type: 'state' });
    assert.equal(companion.active, false, 'a state event without a state changes nothing');
  });
});

describe('stopInReverse: the bound', () => {
  it('warns with the bound when it cut the stop short; says nothing when all stopped in time', async () => {
    const clock = new FakeClock();
    const lines: unknown[] = [];
    const logger = keepWarnings(lines);
    const pending = stopInReverse([{ name: 'hangs', stop: () => new Promise<void>(() => {}) }], { clock, timeoutMs: 500, logger });
    await clock.advance(500);
    assert.equal(await pending, 'timeout');
    assert.deepEqual(lines, [['The features did not stop in time; quitting anyway', { timeoutMs: 500 }]]);
    lines.length = 0;
    assert.equal(await stopInReverse([{ name: 'quick', stop: () => {} }], { clock, logger }), 'done');
    assert.deepEqual(lines, []);
    assert.equal(clock.pendingCount, 0);
  });

  it('a feature that fails to stop is named in the warning', async () => {
    const lines: unknown[] = [];
    const logger = keepWarnings(lines);
    await stopInReverse([{ name: 'fleet', stop: () => Promise.reject(new Error('broker gone')) }], { clock: new FakeClock(), logger });
    assert.deepEqual(lines, [['A feature did not stop cleanly', { feature: 'fleet', error: 'Error: broker gone' }]]);
  });

  it('waits three seconds by default', async () => {
    const clock = new FakeClock();
    const pending = stopInReverse([{ name: 'hangs', stop: () => new Promise<void>(() => {}) }], { clock });
    await clock.advance(2_999);
    assert.equal(clock.pendingCount, 1);
    await clock.advance(1);
    assert.equal(await pending, 'timeout');
  });
});

describe('lifecycle: what each path says and holds', () => {
  function recorded() {
    const clock = new StrictClock();
    const lines: unknown[] = [];
    const seq: string[] = [];
    const at = (level: string) => (m: string, d?: Record<string, unknown>) => void lines.push([level, m, d]);
    let release = () => {};
    const lifecycle = createLifecycle({
      clock,
      logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
      hangupSession: async (why) => void seq.push(`hangup:${why}`),
      shutdownService: () => (seq.push('shutdown'), new Promise<void>((r) => (release = r))),
      quitApp: () => void seq.push('quit'),
      reloadRenderer: () => void seq.push('reload'),
      relaunchApp: () => void seq.push('relaunch'),
    });
    return { clock, lines, seq, lifecycle, release: () => release() };
  }

  it('before-quit is logged as its own source', () => {
    const { lines, lifecycle } = recorded();
    lifecycle.onBeforeQuit({ preventDefault() {} });
    assert.deepEqual(lines, [['info', 'Shutting down', { source: 'before-quit' }]]);
  });

  it('a renderer gone while quitting: nothing logged, nothing hung up (the shutdown does it)', async () => {
    const { lines, seq, lifecycle } = recorded();
    void lifecycle.requestQuit('tray');
    await lifecycle.onRenderProcessGone({ reason: 'crashed' });
    assert.deepEqual(seq, ['shutdown']);
    assert.deepEqual(lines, [['info', 'Shutting down', { source: 'tray' }]]);
  });

  it('while a fatal error hangs up, the phase is shutting down; then done', async () => {
    const { lifecycle, release, seq } = recorded();
    const fatal = lifecycle.onFatalError('uncaughtException', 'boom');
    assert.equal(lifecycle.phase, 'shutting-down');
    release();
    await fatal;
    assert.equal(lifecycle.phase, 'done');
    assert.deepEqual(seq, ['shutdown', 'relaunch']);
  });

  it('responsive again after unresponsive: the timer cleared and said; with nothing pending, nothing cleared or said', async () => {
    const { clock, lines, lifecycle } = recorded();
    lifecycle.onResponsive();
    assert.deepEqual([lines, clock.foreignClears], [[], []]);
    lifecycle.onUnresponsive();
    lifecycle.onResponsive();
    assert.deepEqual(lines.at(-1), ['info', 'The renderer is responsive again', undefined]);
    assert.equal(clock.pendingCount, 0);
    assert.deepEqual(clock.foreignClears, []);
  });
});

describe('power save guard: which states are a call', () => {
  const blocker = () => {
    const calls: string[] = [];
    let next = 1;
    return { calls, start: (t: string) => (calls.push(`start:${t}`), next++), stop: (id: number) => void calls.push(`stop:${id}`) };
  };
  const state = (phase: string) => ({ type: 'state', state: { phase } });

  it('reconnecting is a call even when it is the first state heard; ending still is; idle ends it', () => {
    const b = blocker();
    const guard = createPowerSaveGuard(b);
    guard.onEvent(state('reconnecting'));
    assert.equal(guard.active, true);
    guard.onEvent(state('ending'));
    assert.equal(guard.active, true, 'still in the call while it ends');
    guard.onEvent(state('idle'));
    assert.equal(guard.active, false);
    guard.onEvent(state('live'));
    guard.onEvent(state('connecting'));
    assert.equal(guard.active, true, 'a state between neither starts nor ends it');
    guard.onEvent(state('failed'));
    assert.deepEqual(b.calls, ['start:prevent-display-sleep', 'stop:1', 'start:prevent-display-sleep', 'stop:2']);
  });

  it('only state events count: another event carrying a state is ignored', () => {
    const guard = createPowerSaveGuard(blocker());
    guard.onEvent({ type: 'call-figures', state: { phase: 'live' } });
    assert.equal(guard.active, false);
  });

  it('with whileShown, the window counts as hidden until it is said to show', () => {
    const guard = createPowerSaveGuard(blocker(), undefined, { whileShown: true });
    guard.onEvent(state('idle'));
    assert.equal(guard.active, false);
  });

  it('says when it blocks display sleep (and why) and when it allows it again', () => {
    const lines: unknown[] = [];
    const logger = { debug: (m: string, d?: Record<string, unknown>) => void lines.push([m, d]), info() {}, warn() {}, error() {} };
    const guard = createPowerSaveGuard(blocker(), logger, { whileShown: true });
    guard.windowShown(true);
    guard.windowShown(false);
    assert.deepEqual(lines, [['Display sleep blocked', { inCall: false, shown: true }], ['Display sleep allowed again', undefined]]);
  });
});

describe('stopInReverse: features without a stop', () => {
  it('are passed over without a warning', async () => {
    const lines: unknown[] = [];
    const logger = keepWarnings(lines);
    assert.equal(await stopInReverse([{ name: 'a' }, { name: 'b', stop: undefined }], { clock: new FakeClock(), logger }), 'done');
    assert.deepEqual(lines, []);
  });
});
