/**
 * What a remote command must get past before it runs: the rate limit (on a fake clock), the expiry, the
 * id read from a payload that is not a valid command, and the ids kept on disk across a restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { COMMANDS_FILE, createRateLimiter, expiryProblem, MAX_COMMAND_LIFETIME_MS, openCommandLog } from '../../../electron/fleet/command-guard.ts';
import { readCommandId } from '../../../electron/fleet/commands.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

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
    const dir = mkdtempSync(join(tmpdir(), 'ak-cmdlog-'));
    dirs.push(dir);
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
});
