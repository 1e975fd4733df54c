import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../../helpers/fake-clock.ts';
import { createLifecycle, type LifecycleHooks } from '../../../electron/kiosk/lifecycle.ts';

/**
 * A fake app around the lifecycle: `shutdownService` behaves like the kiosk's shutdown (memoised, hangs
 * up a live session once), `quitApp` re-emits before-quit like Electron's app.quit() does.
 */
function harness(options: { live?: boolean; shutdownDelayMs?: number; shutdownNeverEnds?: boolean } = {}) {
  const clock = new FakeClock();
  const calls = { hangups: 0, quits: 0, reloads: 0, shutdowns: 0, beforeQuitPrevented: 0, beforeQuitAllowed: 0 };
  let live = options.live ?? true;
  let shutdownPromise: Promise<void> | null = null;
  const hangupOnce = async () => {
    if (!live) return;
    live = false;
    calls.hangups++;
  };
  const hooks: LifecycleHooks = {
    clock,
    shutdownTimeoutMs: 8_000,
    hangupSession: hangupOnce,
    shutdownService: () => {
      calls.shutdowns++;
      shutdownPromise ??= (async () => {
        if (options.shutdownNeverEnds) return new Promise<void>(() => {});
        if (options.shutdownDelayMs) await new Promise<void>((r) => clock.setTimeout(r, options.shutdownDelayMs!));
        await hangupOnce();
      })();
      return shutdownPromise;
    },
    quitApp: () => {
      calls.quits++;
      beforeQuit(); // Electron emits before-quit again when app.quit() is called
    },
    reloadRenderer: () => {
      calls.reloads++;
    },
  };
  const lifecycle = createLifecycle(hooks);
  function beforeQuit(): void {
    let prevented = false;
    lifecycle.onBeforeQuit({ preventDefault: () => (prevented = true) });
    if (prevented) calls.beforeQuitPrevented++;
    else calls.beforeQuitAllowed++;
  }
  return {
    clock,
    calls,
    lifecycle,
    beforeQuit,
    setLive(v: boolean) {
      live = v;
    },
  };
}

describe('lifecycle: every quit path hangs up a live session exactly once', () => {
  it('window closed → hang up once, then quit', async () => {
    const h = harness();
    h.lifecycle.onWindowAllClosed();
    await h.clock.advance(0);
    assert.equal(h.calls.hangups, 1);
    assert.equal(h.calls.quits, 1);
    assert.equal(h.lifecycle.phase, 'done');
    assert.equal(h.calls.beforeQuitAllowed, 1, 'the quit after shutdown is let through');
  });

  it('before-quit → held (preventDefault) until the hangup is done, then let through', async () => {
    const h = harness({ shutdownDelayMs: 500 });
    h.beforeQuit();
    assert.equal(h.calls.beforeQuitPrevented, 1);
    assert.equal(h.calls.hangups, 0);
    await h.clock.advance(499);
    assert.equal(h.calls.quits, 0, 'not quit before the hangup finished');
    await h.clock.advance(1);
    assert.equal(h.calls.hangups, 1);
    assert.equal(h.calls.quits, 1);
    assert.equal(h.calls.beforeQuitAllowed, 1);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} → hang up once, then quit`, async () => {
      const h = harness();
      h.lifecycle.onSignal(signal);
      await h.clock.advance(0);
      assert.equal(h.calls.hangups, 1);
      assert.equal(h.calls.quits, 1);
    });
  }

  it('a second signal (and any other quit request) while shutting down does not hang up again', async () => {
    const h = harness({ shutdownDelayMs: 1_000 });
    h.lifecycle.onSignal('SIGINT');
    h.lifecycle.onSignal('SIGINT');
    h.lifecycle.onSignal('SIGTERM');
    h.beforeQuit();
    h.lifecycle.onWindowAllClosed();
    await h.clock.advance(1_000);
    assert.equal(h.calls.shutdowns, 1);
    assert.equal(h.calls.hangups, 1);
    assert.equal(h.calls.quits, 1);
    // after the app is done, more signals change nothing
    h.lifecycle.onSignal('SIGTERM');
    await h.clock.advance(0);
    assert.equal(h.calls.hangups, 1);
    assert.equal(h.calls.quits, 1);
  });

  it('without a live session quitting still works and hangs up nothing', async () => {
    const h = harness({ live: false });
    h.lifecycle.onSignal('SIGTERM');
    await h.clock.advance(0);
    assert.equal(h.calls.hangups, 0);
    assert.equal(h.calls.quits, 1);
  });

  it('a shutdown that never finishes is cut off by the timeout (the kiosk still quits)', async () => {
    const h = harness({ shutdownNeverEnds: true });
    h.lifecycle.onSignal('SIGTERM');
    await h.clock.advance(7_999);
    assert.equal(h.calls.quits, 0);
    await h.clock.advance(1);
    assert.equal(h.calls.quits, 1);
    assert.equal(h.clock.pendingCount, 0, 'no timer left');
  });

  it('a failing shutdown still quits', async () => {
    const h = harness();
    const lifecycle = createLifecycle({
      clock: h.clock,
      hangupSession: async () => {},
      shutdownService: async () => {
        throw new Error('boom');
      },
      quitApp: () => h.calls.quits++,
      reloadRenderer: () => {},
    });
    await lifecycle.requestQuit('other');
    assert.equal(h.calls.quits, 1);
    assert.equal(h.clock.pendingCount, 0);
  });
});

describe('lifecycle: render-process-gone', () => {
  it('hangs up once and reloads the renderer (back to attract); the app keeps running', async () => {
    const h = harness();
    await h.lifecycle.onRenderProcessGone({ reason: 'crashed', exitCode: 139 });
    assert.equal(h.calls.hangups, 1);
    assert.equal(h.calls.reloads, 1);
    assert.equal(h.calls.quits, 0);
    assert.equal(h.lifecycle.phase, 'running');
  });

  it('two crash reports at once reload once and hang up once', async () => {
    const h = harness();
    const a = h.lifecycle.onRenderProcessGone({ reason: 'crashed' });
    const b = h.lifecycle.onRenderProcessGone({ reason: 'oom' });
    await Promise.all([a, b]);
    assert.equal(h.calls.hangups, 1);
    assert.equal(h.calls.reloads, 1);
  });

  it('a crash during quit neither reloads nor hangs up twice', async () => {
    const h = harness({ shutdownDelayMs: 100 });
    h.lifecycle.onSignal('SIGTERM');
    await h.lifecycle.onRenderProcessGone({ reason: 'killed' });
    await h.clock.advance(100);
    await flushMicrotasks();
    assert.equal(h.calls.reloads, 0);
    assert.equal(h.calls.hangups, 1);
    assert.equal(h.calls.quits, 1);
  });

  it('then a quit after the crash does not hang up the (already ended) session again', async () => {
    const h = harness();
    await h.lifecycle.onRenderProcessGone({ reason: 'crashed' });
    h.lifecycle.onWindowAllClosed();
    await h.clock.advance(0);
    assert.equal(h.calls.hangups, 1);
    assert.equal(h.calls.quits, 1);
  });
});
