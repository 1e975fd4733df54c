/**
 * The fake clock every core test leans on, and `sleep` over any clock: timers fire in time order (ties in
 * the order they were set), cancelled sleeps reject with `cancelled` and leave no timer and no listener
 * behind, and waiting for promise chains to settle really waits; `settledWithin` bounds a shutdown step on
 * wall time and leaves no timer behind.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { settledWithin, sleep, type TimerHandle } from '../../../electron/core/clock.ts';
import { FakeClock, flushMicrotasks } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';

const START = 1_000_000;

describe('FakeClock', () => {
  it('fires due timers in time order, ties in the order they were set, each at its own time', async () => {
    const clock = new FakeClock(START);
    const fired: string[] = [];
    const at = (name: string) => () => fired.push(`${name}@${clock.now() - START}`);
    clock.setTimeout(at('c300'), 300);
    clock.setTimeout(at('a100'), 100);
    clock.setTimeout(at('b200'), 200);
    clock.setTimeout(at('a100-second'), 100);
    clock.setTimeout(at('a100-third'), 100);
    clock.setTimeout(at('late'), 1001);
    await clock.advance(1000);
    assert.deepEqual(fired, ['a100@100', 'a100-second@100', 'a100-third@100', 'b200@200', 'c300@300']);
    assert.equal(clock.now(), START + 1000);
    assert.deepEqual(clock.pendingDelays(), [1]);
  });

  it('also fires timers set by a firing timer when they fall inside the window', async () => {
    const clock = new FakeClock(START);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now() - START);
      clock.setTimeout(() => fired.push(clock.now() - START), 50);
      clock.setTimeout(() => fired.push(clock.now() - START), 500);
    }, 100);
    await clock.advance(200);
    assert.deepEqual(fired, [100, 150]);
    assert.deepEqual(clock.pendingDelays(), [400]);
  });

  it('lists pending delays from now, sorted', async () => {
    const clock = new FakeClock(START);
    clock.setTimeout(() => {}, 1000);
    clock.setTimeout(() => {}, 250);
    clock.setTimeout(() => {}, 5000);
    clock.setTimeout(() => {}, -20); // a negative delay is due now, as with the real clock
    assert.deepEqual(clock.pendingDelays(), [0, 250, 1000, 5000]);
    await clock.advance(100);
    assert.deepEqual(clock.pendingDelays(), [150, 900, 4900]);
    assert.equal(clock.pendingCount, 3);
  });

  it('ignores clearing a handle that is not one of its timers, as the real clock does', async () => {
    const clock = new FakeClock(START);
    const fired: string[] = [];
    const handle = clock.setTimeout(() => fired.push('kept'), 10);
    clock.clearTimeout(undefined as unknown as TimerHandle);
    clock.clearTimeout(42);
    assert.equal(clock.pendingCount, 1);
    clock.setTimeout(() => fired.push('cleared'), 5);
    clock.clearTimeout(clock.setTimeout(() => fired.push('cleared too'), 5));
    await clock.advance(10);
    assert.deepEqual(fired, ['cleared', 'kept']);
    clock.clearTimeout(handle); // already fired: nothing to do
    assert.equal(clock.pendingCount, 0);
  });
});

describe('sleep', () => {
  it('resolves exactly when the delay has passed on the clock, leaving nothing behind', async () => {
    const clock = new FakeClock(START);
    const controller = new AbortController();
    let resolved = false;
    const done = sleep(clock, 1000, controller.signal).then(() => (resolved = true));
    await clock.advance(999);
    assert.equal(resolved, false);
    await clock.advance(1);
    await done;
    assert.equal(resolved, true);
    assert.equal(clock.pendingCount, 0);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('works without a signal', async () => {
    const clock = new FakeClock(START);
    let resolved = false;
    const done = sleep(clock, 50).then(() => (resolved = true));
    await clock.advance(49);
    assert.equal(resolved, false);
    await clock.advance(1);
    await done;
    assert.equal(resolved, true);
  });

  it('rejects with cancelled when aborted, clearing its timer and its listener', async () => {
    const clock = new FakeClock(START);
    const controller = new AbortController();
    const done = sleep(clock, 1000, controller.signal);
    await clock.advance(10);
    const reason = new Error('visitor left');
    controller.abort(reason);
    await assert.rejects(done, (error: unknown) => {
      assert.ok(error instanceof AvatarError);
      assert.deepEqual({ code: error.code, message: error.message, cause: error.cause }, { code: 'cancelled', message: 'The operation was cancelled.', cause: reason });
      return true;
    });
    assert.equal(clock.pendingCount, 0);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  it('rejects at once, setting no timer, when the signal is already aborted', async () => {
    const clock = new FakeClock(START);
    const reason = new Error('already gone');
    const signal = AbortSignal.abort(reason);
    await assert.rejects(sleep(clock, 1000, signal), (error: unknown) => {
      assert.ok(error instanceof AvatarError);
      assert.deepEqual({ code: error.code, message: error.message, cause: error.cause }, { code: 'cancelled', message: 'The operation was cancelled.', cause: reason });
      return true;
    });
    assert.equal(clock.pendingCount, 0);
  });
});

describe('settledWithin (wall time)', () => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

  it('says true for work that resolves or fails in time, and clears its own timer at once', async () => {
    const before = timers();
    assert.equal(await settledWithin(Promise.resolve('done'), 60_000), true);
    assert.equal(await settledWithin(Promise.reject(new Error('failed on the way out')), 60_000), true);
    assert.equal(timers(), before, 'no one-minute timer left to hold the process open');
  });

  it('says false for work still running when the time is up, and leaves it to the caller', async () => {
    const before = timers();
    let finish!: () => void;
    const work = new Promise<void>((resolve) => (finish = resolve));
    assert.equal(await settledWithin(work, 30), false);
    assert.equal(timers(), before);
    finish();
    assert.equal(await settledWithin(work, 30), true);
  });
});

describe('flushMicrotasks', () => {
  it('lets a chain of ten promise callbacks settle', async () => {
    let settled = false;
    let chain = Promise.resolve();
    for (let i = 0; i < 9; i++) chain = chain.then(() => {});
    void chain.then(() => (settled = true));
    await flushMicrotasks();
    assert.equal(settled, true);
  });
});
