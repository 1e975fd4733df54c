/**
 * What happens to an error nobody caught in main (electron/kiosk/fatal.ts): before the lifecycle takes
 * over, it is logged and the app relaunched after a pause (once, however many follow); afterwards the
 * running kiosk's handler gets the uncaught ones, while a load or start-up failure still relaunches.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { createFatalHandler, describeFatal, STARTUP_RELAUNCH_DELAY_MS, type FatalKind } from '../../../electron/kiosk/fatal.ts';

function world() {
  const clock = new FakeClock();
  const seen: string[] = [];
  const logged: { message: string; details: Record<string, unknown> }[] = [];
  const handler = createFatalHandler({
    log: (message, details) => logged.push({ message, details }),
    relaunch: () => seen.push('relaunch'),
    exit: (code) => seen.push(`exit ${code}`),
    clock,
  });
  return { clock, seen, logged, handler };
}

describe('describeFatal: what of an error goes into the log', () => {
  it('an Error gives its message and the first eight lines of its stack', () => {
    const error = new Error('boom');
    error.stack = ['Error: boom', ...Array.from({ length: 12 }, (_, i) => `    at frame${i}`)].join('\n');
    const described = describeFatal(error);
    assert.equal(described.message, 'boom');
    assert.equal(described.stack, ['Error: boom', ...Array.from({ length: 7 }, (_, i) => `    at frame${i}`)].join('\n'));
  });

  it('an Error without a stack has no stack field; anything else is its string', () => {
    const error = new Error('no stack');
    error.stack = '';
    assert.deepEqual(describeFatal(error), { message: 'no stack' });
    assert.equal('stack' in describeFatal(error), false);
    assert.deepEqual(describeFatal('a string'), { message: 'a string' });
    assert.deepEqual(describeFatal(42), { message: '42' });
    assert.deepEqual(describeFatal(undefined), { message: 'undefined' });
  });
});

describe('createFatalHandler: before the lifecycle exists, an error relaunches the kiosk after a pause', () => {
  for (const kind of ['uncaughtException', 'unhandledRejection', 'load', 'startup'] as FatalKind[]) {
    it(`${kind}: logged with the delay, then relaunch and exit 1 after ${STARTUP_RELAUNCH_DELAY_MS} ms, not before`, async () => {
      const { clock, seen, logged, handler } = world();
      assert.equal(handler.relaunching, false);
      handler.report(kind, new Error('failed to load'));
      assert.equal(handler.relaunching, true);
      assert.equal(logged.length, 1);
      assert.equal(logged[0]!.message, 'Fatal start-up error; relaunching the kiosk');
      assert.equal(logged[0]!.details.kind, kind);
      assert.equal((logged[0]!.details.error as { message: string }).message, 'failed to load');
      assert.equal(logged[0]!.details.relaunchInMs, STARTUP_RELAUNCH_DELAY_MS);
      await clock.advance(STARTUP_RELAUNCH_DELAY_MS - 1);
      assert.deepEqual(seen, []);
      await clock.advance(1);
      assert.deepEqual(seen, ['relaunch', 'exit 1']);
    });
  }

  it('a second error before the relaunch is logged as such and schedules no second relaunch', async () => {
    const { clock, seen, logged, handler } = world();
    handler.report('startup', new Error('first'));
    handler.report('uncaughtException', new Error('second'));
    assert.equal(logged.length, 2);
    assert.equal(logged[1]!.message, 'Another fatal error before the relaunch');
    assert.equal(logged[1]!.details.kind, 'uncaughtException');
    assert.equal((logged[1]!.details.error as { message: string }).message, 'second');
    assert.equal(clock.pendingCount, 1);
    await clock.advance(STARTUP_RELAUNCH_DELAY_MS * 3);
    assert.deepEqual(seen, ['relaunch', 'exit 1']);
  });
});

describe('createFatalHandler: once the lifecycle took over', () => {
  it('uncaught exceptions and rejections go to the lifecycle, with nothing logged or scheduled here', async () => {
    const { clock, seen, logged, handler } = world();
    const running: [string, unknown][] = [];
    handler.takeOver((kind, error) => running.push([kind, error]));
    const a = new Error('a');
    handler.report('uncaughtException', a);
    handler.report('unhandledRejection', 'b');
    assert.deepEqual(running, [['uncaughtException', a], ['unhandledRejection', 'b']]);
    assert.deepEqual(logged, []);
    assert.equal(handler.relaunching, false);
    await clock.advance(STARTUP_RELAUNCH_DELAY_MS * 2);
    assert.deepEqual(seen, []);
  });

  it('a load or start-up failure still relaunches (the lifecycle only handles what happens while it runs)', async () => {
    for (const kind of ['load', 'startup'] as const) {
      const { clock, seen, logged, handler } = world();
      const running: string[] = [];
      handler.takeOver((k) => running.push(k));
      handler.report(kind, new Error(kind));
      assert.deepEqual(running, []);
      assert.equal(logged[0]!.message, 'Fatal start-up error; relaunching the kiosk');
      await clock.advance(STARTUP_RELAUNCH_DELAY_MS);
      assert.deepEqual(seen, ['relaunch', 'exit 1']);
    }
  });
});
