/**
 * The page after the first load (kiosk/renderer-recovery.ts), on a fake clock: reloads back off while
 * crashes keep coming, a failed reload is tried again, a stable page ends the streak, and when reloads
 * do not help the app is relaunched.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, StrictClock } from '../../helpers/fake-clock.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { createRendererRecovery, gpuGoneNeedsReload, MAX_RELOADS_BEFORE_RELAUNCH, RELOAD_DELAYS_MS, STABLE_PAGE_MS } from '../../../electron/kiosk/renderer-recovery.ts';

function setup(loadResults: boolean[] = []) {
  const clock = new FakeClock();
  const seq: string[] = [];
  const t0 = clock.now();
  const recovery = createRendererRecovery({
    clock,
    load: () => {
      seq.push(`load@${clock.now() - t0}`);
      return (loadResults.shift() ?? true) ? Promise.resolve() : Promise.reject(new Error('ERR_FAILED'));
    },
    relaunch: () => void seq.push(`relaunch@${clock.now() - t0}`),
  });
  return { clock, seq, recovery };
}

describe('renderer recovery', () => {
  it('reloads at once after one crash; crashes that keep coming wait 2, 5, 15, 30 s, then the app is relaunched', async () => {
    const { clock, seq, recovery } = setup();
    assert.deepEqual(RELOAD_DELAYS_MS, [0, 2_000, 5_000, 15_000, 30_000]);
    let elapsed = 0;
    for (let i = 0; i < MAX_RELOADS_BEFORE_RELAUNCH; i++) {
      recovery.requestReload('crashed');
      recovery.requestReload('crashed again before the reload'); // coalesced
      const delay = RELOAD_DELAYS_MS[i]!;
      await clock.advance(delay);
      elapsed += delay;
      await clock.advance(1_000); // the page is up for a second, then crashes again
      elapsed += 1_000;
    }
    recovery.requestReload('crashed');
    assert.deepEqual(seq, ['load@0', 'load@3000', 'load@9000', 'load@25000', 'load@56000', 'relaunch@57000']);
    assert.equal(elapsed, 57_000);
    recovery.requestReload('after the relaunch was asked for');
    await clock.advance(60_000);
    assert.equal(seq.length, 6);
    recovery.dispose();
    assert.equal(clock.pendingCount, 0);
  });

  it('tries a failed reload again, so the window is not left blank', async () => {
    const { clock, seq, recovery } = setup([false, false, true]);
    recovery.requestReload('crashed');
    await clock.advance(0);
    await clock.advance(2_000);
    await clock.advance(5_000);
    assert.deepEqual(seq, ['load@0', 'load@2000', 'load@7000']);
    assert.equal(recovery.streak, 3);
    recovery.dispose();
  });

  it('a renderer that dies during the reload fails that reload', async () => {
    const clock = new FakeClock();
    let loads = 0;
    const recovery = createRendererRecovery({ clock, load: () => (++loads === 1 ? new Promise<void>(() => {}) : Promise.resolve()), relaunch: () => assert.fail('no relaunch') });
    recovery.requestReload('crashed');
    await clock.advance(0);
    recovery.onRendererGone('crashed');
    await clock.advance(2_000);
    assert.equal(loads, 2);
    recovery.dispose();
  });

  it('a page that stays up for a minute ends the streak: the next crash reloads at once again', async () => {
    const { clock, seq, recovery } = setup();
    recovery.requestReload('crashed');
    await clock.advance(0);
    recovery.requestReload('crashed');
    await clock.advance(2_000);
    assert.equal(recovery.streak, 2);
    await clock.advance(STABLE_PAGE_MS);
    assert.equal(recovery.streak, 0);
    recovery.requestReload('crashed');
    await clock.advance(0);
    assert.deepEqual(seq, ['load@0', 'load@2000', 'load@62000']);
    recovery.dispose();
    assert.equal(clock.pendingCount, 0);
  });

  it('only a GPU process that did not exit cleanly needs a reload', () => {
    assert.equal(gpuGoneNeedsReload({ type: 'GPU', reason: 'crashed' }), true);
    assert.equal(gpuGoneNeedsReload({ type: 'GPU', reason: 'killed' }), true);
    assert.equal(gpuGoneNeedsReload({ type: 'GPU', reason: 'clean-exit' }), false);
    assert.equal(gpuGoneNeedsReload({ type: 'Utility', reason: 'crashed' }), false);
  });

  it('says each reload with its reason and place in the streak, each failed reload, and the relaunch', async () => {
    const clock = new FakeClock();
    const log = recordingLogger();
    const results = [false, true];
    const recovery = createRendererRecovery({ clock, logger: log, maxReloads: 2, load: () => (results.shift() ?? true ? Promise.resolve() : Promise.reject(new Error('ERR_FAILED'))), relaunch: () => {} });
    recovery.requestReload('crashed');
    await clock.advance(0);
    await clock.advance(2_000);
    recovery.requestReload('GPU gone');
    assert.deepEqual(log.lines, [
      { level: 'warn', message: 'Reloading the kiosk page', data: { reason: 'crashed', attempt: 1, of: 2, inMs: 0 } },
      { level: 'error', message: 'The kiosk page did not reload', data: { error: 'ERR_FAILED' } },
      { level: 'warn', message: 'Reloading the kiosk page', data: { reason: 'reload failed', attempt: 2, of: 2, inMs: 2_000 } },
      { level: 'error', message: 'The kiosk page keeps failing; relaunching the app', data: { reason: 'GPU gone', reloads: 2 } },
    ]);
    recovery.dispose();
  });

  it('a load that fails with something that is not an Error is said as text; a renderer gone mid-reload names its reason', async () => {
    const clock = new FakeClock();
    const log = recordingLogger();
    let loads = 0;
    const recovery = createRendererRecovery({ clock, logger: log, load: () => (++loads === 1 ? Promise.reject('net::ERR_ABORTED') : new Promise<void>(() => {})), relaunch: () => {} });
    recovery.requestReload('crashed');
    await clock.advance(0);
    await clock.advance(2_000);
    recovery.onRendererGone('oom');
    await clock.advance(0);
    assert.deepEqual(log.lines.filter((l) => l.level === 'error').map((l) => l.data), [{ error: 'net::ERR_ABORTED' }, { error: 'the renderer process is gone (oom)' }]);
    recovery.dispose();
  });

  it('a crash while a reload is loading is not a second reload', async () => {
    const clock = new FakeClock();
    let release!: () => void;
    let loads = 0;
    const recovery = createRendererRecovery({ clock, load: () => (++loads, new Promise<void>((r) => (release = r))), relaunch: () => assert.fail('no relaunch') });
    recovery.requestReload('crashed');
    await clock.advance(0);
    recovery.requestReload('crashed again while loading');
    assert.equal(recovery.streak, 1);
    release();
    await clock.advance(10_000);
    assert.equal(loads, 1);
    recovery.dispose();
  });

  it('the stable minute starts again at each load', async () => {
    const { clock, recovery } = setup();
    recovery.requestReload('crashed');
    await clock.advance(50_000);
    recovery.noteLoaded();
    await clock.advance(10_000);
    assert.equal(recovery.streak, 1, 'sixty seconds after the first load, but only ten after the last');
    await clock.advance(50_000);
    assert.equal(recovery.streak, 0);
    recovery.dispose();
  });

  it('the minute does not end the streak while a reload is waiting or loading', async () => {
    const clock = new FakeClock();
    let release: (() => void) | null = null;
    let loads = 0;
    const recovery = createRendererRecovery({ clock, load: () => (++loads === 2 ? new Promise<void>((r) => (release = r)) : Promise.resolve()), relaunch: () => {} });
    recovery.requestReload('crashed');
    await clock.advance(0); // loaded: the minute runs until 60 s
    await clock.advance(59_000);
    recovery.requestReload('crashed'); // waits 2 s: past the minute
    await clock.advance(1_000);
    assert.equal(recovery.streak, 2, 'a reload is waiting');
    await clock.advance(1_000); // the reload starts and hangs
    assert.equal(loads, 2);
    recovery.noteLoaded(); // (another load finished meanwhile)
    await clock.advance(STABLE_PAGE_MS);
    assert.equal(recovery.streak, 2, 'a reload is loading');
    release!();
    await clock.advance(STABLE_PAGE_MS);
    assert.equal(recovery.streak, 0);
    recovery.dispose();
  });

  it('after dispose nothing reloads', async () => {
    const { clock, seq, recovery } = setup();
    recovery.requestReload('crashed');
    recovery.dispose();
    await clock.advance(60_000);
    recovery.requestReload('crashed');
    await clock.advance(60_000);
    assert.deepEqual(seq, []);
    assert.equal(clock.pendingCount, 0);
  });
});

describe('renderer recovery: what the last measurement left alive', () => {
  it('past the end of its table of pauses, the last pause repeats', async () => {
    const clock = new FakeClock();
    const loads: number[] = [];
    const t0 = clock.now();
    const recovery = createRendererRecovery({ clock, delaysMs: [0, 100], maxReloads: 4, load: () => (loads.push(clock.now() - t0), Promise.reject(new Error('ERR_FAILED'))), relaunch: () => {} });
    recovery.requestReload('crashed');
    await clock.advance(1_000);
    assert.deepEqual(loads, [0, 100, 200, 300]);
    recovery.dispose();
  });

  it('a renderer gone while no reload is under way changes nothing (and does not throw)', () => {
    const { recovery, seq } = setup();
    recovery.onRendererGone('crashed');
    assert.deepEqual(seq, []);
    recovery.dispose();
  });

  it('clears only timers it set: a first load noted, and a dispose with nothing pending', async () => {
    const clock = new StrictClock();
    const recovery = createRendererRecovery({ clock, load: () => Promise.resolve(), relaunch: () => {} });
    recovery.noteLoaded();
    recovery.dispose();
    const idle = createRendererRecovery({ clock, load: () => Promise.resolve(), relaunch: () => {} });
    idle.dispose();
    assert.deepEqual(clock.foreignClears, []);
  });
});
