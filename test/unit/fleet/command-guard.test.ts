/**
 * What a remote command must get past before it runs (command-guard.ts): the rate limit (on a fake clock: a
 * burst, then one token per period, the part of a period already waited, a bucket that fills up part-way
 * through one), the expiry (each refusal word for word, and its exact bounds), the id read from a payload
 * that is not a valid command, and the ids kept on disk across a restart (the file's mode, a damaged entry
 * among good ones, its bound, a folder it cannot write) with the compact answers it keeps for repeats.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { COMMANDS_FILE, compactAnswer, createRateLimiter, expiryProblem, MAX_COMMAND_LIFETIME_MS, openCommandLog } from '../../../electron/fleet/command-guard.ts';
import { readCommandId, type CommandResult } from '../../../electron/fleet/commands.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-cmdguard-');

/** Takes `n` tokens at the clock's current time, one result each. */
const takeN = (limiter: { take(): boolean }, n: number) => Array.from({ length: n }, () => limiter.take());

const shot = (id: string): CommandResult => ({ id, cmd: 'screenshot', ok: true, result: { mime: 'image/png', width: 1, height: 1, png: 'AAAA' }, at: 'then' });

describe('createRateLimiter', () => {
  it('lets a burst through, then one per refill period, and fills back up to the burst only', async () => {
    const clock = new FakeClock(0);
    const limiter = createRateLimiter(clock, 3, 1000);
    assert.deepEqual([1, 2, 3, 4].map(() => limiter.take()), [true, true, true, false]);
    await clock.advance(999);
    assert.equal(limiter.take(), false);
    await clock.advance(1);
    assert.deepEqual([limiter.take(), limiter.take()], [true, false]);
    await clock.advance(60_000);
    assert.deepEqual([1, 2, 3, 4].map(() => limiter.take()), [true, true, true, false]);
  });

  it('a take in the middle of a period leaves the period where it began', async () => {
    const clock = new FakeClock(0);
    const limiter = createRateLimiter(clock, 3, 1000);
    await clock.advance(500);
    assert.equal(limiter.take(), true);
    await clock.advance(500);
    assert.deepEqual(takeN(limiter, 4), [true, true, true, false], 'the token taken at 500 ms is back at 1000 ms');
  });

  it('an empty bucket earns whole periods only and keeps the part of a period already waited', async () => {
    const clock = new FakeClock(0);
    const limiter = createRateLimiter(clock, 3, 1000);
    assert.deepEqual(takeN(limiter, 4), [true, true, true, false]);
    await clock.advance(1500);
    assert.deepEqual(takeN(limiter, 2), [true, false]);
    await clock.advance(500);
    assert.deepEqual(takeN(limiter, 2), [true, false], 'the half period waited before 1500 ms counts');
    await clock.advance(500);
    assert.equal(limiter.take(), false);
    await clock.advance(500);
    assert.equal(limiter.take(), true);
  });

  it('a bucket that fills up part-way through a period starts its next period then', async () => {
    const clock = new FakeClock(0);
    const limiter = createRateLimiter(clock, 3, 1000);
    takeN(limiter, 3);
    await clock.advance(10_500);
    assert.deepEqual(takeN(limiter, 4), [true, true, true, false]);
    await clock.advance(500);
    assert.equal(limiter.take(), false, 'full at 10 500 ms: the next token is due at 11 500 ms');
    await clock.advance(500);
    assert.equal(limiter.take(), true);
  });
});

describe('expiryProblem', () => {
  const now = Date.parse('2026-11-24T18:00:00Z');
  it('needs an expiry, refuses a passed or too distant one, and accepts either kind', () => {
    assert.equal(expiryProblem(undefined, undefined, now)?.code, 'invalid_request');
    assert.equal(expiryProblem('2026-11-24T17:59:59Z', undefined, now)?.code, 'expired');
    assert.equal(expiryProblem('2026-11-24T17:59:59Z', 60, now)?.code, 'expired', 'a passed expiresAt wins over a message expiry');
    assert.equal(expiryProblem(new Date(now + MAX_COMMAND_LIFETIME_MS + 1000).toISOString(), undefined, now)?.code, 'invalid_request');
    assert.equal(expiryProblem(undefined, MAX_COMMAND_LIFETIME_MS / 1000 + 1, now)?.code, 'invalid_request');
    assert.equal(expiryProblem('2026-11-24T18:05:00Z', undefined, now), null);
    assert.equal(expiryProblem(undefined, 300, now), null);
  });

  it('says in words what is missing or wrong', () => {
    assert.deepEqual(expiryProblem(undefined, undefined, now), {
      code: 'invalid_request',
      message: 'The command carries no expiry: set "expiresAt" (an ISO time) in it, or publish it with an MQTT 5 message expiry interval, so a command kept for an offline kiosk cannot run long after it was meant.',
    });
    assert.deepEqual(expiryProblem(undefined, 86_401, now), { code: 'invalid_request', message: "The command's message expiry (86401 s) is longer than the 24 h a command may wait." });
    assert.deepEqual(expiryProblem('2026-11-24T17:00:00Z', undefined, now), {
      code: 'expired',
      message: "The command expired at 2026-11-24T17:00:00Z (the kiosk's clock says 2026-11-24T18:00:00.000Z); it was not run.",
    });
    assert.deepEqual(expiryProblem('2026-11-26T18:00:00Z', undefined, now), { code: 'invalid_request', message: '"expiresAt" (2026-11-26T18:00:00Z) is more than 24 h ahead.' });
  });

  it('takes its bounds exactly: expired at the instant, and a lifetime of exactly 24 h is allowed', () => {
    assert.equal(expiryProblem('2026-11-24T18:00:00Z', undefined, now)?.code, 'expired');
    assert.equal(expiryProblem('2026-11-24T18:00:00.001Z', undefined, now), null);
    assert.equal(expiryProblem(new Date(now + MAX_COMMAND_LIFETIME_MS).toISOString(), undefined, now), null);
    assert.equal(expiryProblem(undefined, MAX_COMMAND_LIFETIME_MS / 1000, now), null);
  });
});

describe('readCommandId', () => {
  it('reads the id from a string or number id, or from text that is not JSON; null when there is none', () => {
    assert.equal(readCommandId('{"id":"c-1","cmd":"nope"}'), 'c-1');
    assert.equal(readCommandId('{"id":42,"cmd":"ping"}'), '42');
    assert.equal(readCommandId('{"id":"torn-1","cmd":"pi'), 'torn-1');
    assert.equal(readCommandId(`{"id":"${'x'.repeat(80)}"}`), 'x'.repeat(64));
    assert.equal(readCommandId('{"id":"a\\u0000b"}'), 'ab', 'no control characters into the operator\'s logs');
    assert.equal(readCommandId('[1,2]'), null);
    assert.equal(readCommandId('not json'), null);
    assert.equal(readCommandId(Buffer.from('{"cmd":"ping"}')), null);
  });
});

describe('openCommandLog', () => {
  it('remembers ids and compact answers across a reopen; an id started but never answered is a duplicate', () => {
    const dir = tempDir();
    const clock = new FakeClock(Date.parse('2026-11-24T18:00:00Z'));
    const log = openCommandLog({ dir, clock, limit: 3 });
    log.started('shot', 'screenshot');
    log.finished({ id: 'shot', cmd: 'screenshot', ok: true, result: { mime: 'image/png', width: 1, height: 1, png: 'AAAA' }, at: 'then' });
    log.started('boom', 'restart'); // the kiosk stops during it
    const again = openCommandLog({ dir, clock, limit: 3 });
    assert.deepEqual(again.earlier('shot', 'now'), {
      id: 'shot',
      cmd: 'screenshot',
      ok: true,
      result: { mime: 'image/png', width: 1, height: 1, png: null, note: 'The picture was sent with the first answer; send a new id for a new screenshot.' },
      at: 'then',
    });
    assert.equal((again.earlier('boom', 'now') as { error: { code: string } }).error.code, 'duplicate');
    assert.equal(again.earlier('new', 'now'), null);
    // Bounded: the oldest ids go first.
    for (const id of ['a', 'b', 'c']) again.started(id, 'ping');
    assert.equal(openCommandLog({ dir, clock, limit: 3 }).earlier('shot', 'now'), null);
    // A damaged file is no list at all, never a crash.
    writeFileSync(join(dir, COMMANDS_FILE), '{"v":1,"done":[{"id":');
    assert.equal(openCommandLog({ dir, clock }).earlier('a', 'now'), null);
  });

  it('writes its file for the owner only', () => {
    const dir = tempDir();
    openCommandLog({ dir, clock: new FakeClock(0) }).started('a', 'ping');
    assert.equal(statSync(join(dir, COMMANDS_FILE)).mode & 0o777, 0o600);
  });

  it('keeps the good entries of a file with a damaged one among them', () => {
    const dir = tempDir();
    const good = { id: 'b', cmd: 'ping', atMs: 0, answer: { id: 'b', cmd: 'ping', ok: true, result: {}, at: 'then' } };
    writeFileSync(join(dir, COMMANDS_FILE), JSON.stringify({ v: 1, done: [{ id: 'a', cmd: 'ping', atMs: -1 }, good] }));
    const log = openCommandLog({ dir, clock: new FakeClock(0) });
    assert.equal(log.earlier('a', 'now'), null);
    assert.deepEqual(log.earlier('b', 'now'), good.answer);
  });

  it('remembers exactly its limit of ids', () => {
    const dir = tempDir();
    const log = openCommandLog({ dir, clock: new FakeClock(0), limit: 2 });
    log.started('a', 'ping');
    log.started('b', 'reload');
    const again = openCommandLog({ dir, clock: new FakeClock(0), limit: 2 });
    assert.deepEqual([again.earlier('a', 'now')?.cmd, again.earlier('b', 'now')?.cmd], ['ping', 'reload']);
    assert.deepEqual((JSON.parse(readFileSync(join(dir, COMMANDS_FILE), 'utf8')) as { done: { id: string }[] }).done.map((e) => e.id), ['a', 'b']);
  });

  it('answers a repeat of a command that never finished with the whole refusal', () => {
    const log = openCommandLog({ dir: tempDir(), clock: new FakeClock(Date.parse('2026-11-24T18:00:00Z')) });
    log.started('r-1', 'restart');
    assert.deepEqual(log.earlier('r-1', '2026-11-24T18:05:00Z'), {
      id: 'r-1',
      cmd: 'restart',
      ok: false,
      error: {
        code: 'duplicate',
        message: 'Command "r-1" (restart) was started at 2026-11-24T18:00:00.000Z and never answered (the kiosk stopped during it); it is not run again. Send a new id to run it.',
      },
      at: '2026-11-24T18:05:00Z',
    });
  });

  it('ignores the answer of a command it never saw start', () => {
    const dir = tempDir();
    const log = openCommandLog({ dir, clock: new FakeClock(0) });
    log.finished(shot('stranger'));
    assert.equal(log.earlier('stranger', 'now'), null);
    assert.equal(openCommandLog({ dir, clock: new FakeClock(0) }).earlier('stranger', 'now'), null);
  });

  it('logs, and goes on, when its folder cannot be written', () => {
    const parent = tempDir();
    const dir = join(parent, 'not-a-folder');
    writeFileSync(dir, 'a file where the folder should be');
    const logger = recordingLogger();
    const log = openCommandLog({ dir, clock: new FakeClock(0), logger });
    log.started('a', 'ping');
    assert.deepEqual(log.earlier('a', 'now'), {
      id: 'a',
      cmd: 'ping',
      ok: false,
      error: { code: 'duplicate', message: 'Command "a" (ping) was started at 1970-01-01T00:00:00.000Z and never answered (the kiosk stopped during it); it is not run again. Send a new id to run it.' },
      at: 'now',
    });
    assert.equal(logger.lines.length, 1);
    assert.deepEqual([logger.lines[0]!.level, logger.lines[0]!.message], ['error', 'Fleet link: the list of commands already run could not be saved']);
    assert.match(String(logger.lines[0]!.data?.error), /^Error: EEXIST: file already exists, mkdir '.*not-a-folder'$/);
  });
});

describe('compactAnswer', () => {
  it('leaves a failure and an answer without a picture as they are', () => {
    const failed: CommandResult = { id: 'x', cmd: 'screenshot', ok: false, error: { code: 'busy', message: 'In a call.' }, at: 'then' };
    assert.equal(compactAnswer(failed), failed);
    const plain: CommandResult = { id: 'y', cmd: 'ping', ok: true, result: { pong: true }, at: 'then' };
    assert.equal(compactAnswer(plain), plain);
  });

  it('keeps the compact answer of a failure for its repeat', () => {
    const dir = tempDir();
    const log = openCommandLog({ dir, clock: new FakeClock(0) });
    log.started('x', 'screenshot');
    const failed: CommandResult = { id: 'x', cmd: 'screenshot', ok: false, error: { code: 'busy', message: 'In a call.' }, at: 'then' };
    log.finished(failed);
    assert.deepEqual(openCommandLog({ dir, clock: new FakeClock(0) }).earlier('x', 'now'), failed);
  });
});
