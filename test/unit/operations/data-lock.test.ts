/**
 * One kiosk per data folder (electron/operations/data-lock.ts) with the process table injected: a live
 * holder keeps the folder, a gone or reused one does not, a torn lock is taken over, and a kiosk releases
 * only its own lock. Real starts of the browser mode: test/unit/browser/start-lines.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataLockedLine, FRESH_LOCK_MS, LOCK_FILE, lockDataFolder, type DataLockSystem, type LockHolder } from '../../../electron/operations/data-lock.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('kiosk-data-lock-');

/** A process table: the pids alive, each with its start time. */
function system(pid: number, alive: Record<number, string>): DataLockSystem {
  return {
    pid,
    startOf: (p) => alive[p] ?? null,
    alive: (holder: LockHolder) => alive[holder.pid] !== undefined && (holder.start === null || alive[holder.pid] === holder.start),
  };
}

const holderIn = (dir: string) => JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockHolder;

describe('one kiosk per data folder', () => {
  it('the first takes the lock (pid and start time, 0600); the second is told who holds it; release frees it', () => {
    const dir = tempDir();
    const first = lockDataFolder(dir, system(100, { 100: 'a', 200: 'b' }));
    assert.equal(first.ok, true);
    assert.deepEqual(holderIn(dir), { pid: 100, start: 'a' });
    assert.equal(statSync(join(dir, LOCK_FILE)).mode & 0o777, 0o600);
    const second = lockDataFolder(dir, system(200, { 100: 'a', 200: 'b' }));
    assert.deepEqual(second, { ok: false, holder: { pid: 100, start: 'a' } });
    if (first.ok) first.release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
    assert.equal(lockDataFolder(dir, system(200, { 200: 'b' })).ok, true);
  });

  it('a holder that is gone, or whose pid now runs another program (another start time), is taken over', () => {
    const dir = tempDir();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 100, start: 'a' }));
    assert.equal(lockDataFolder(dir, system(200, { 200: 'b' })).ok, true, 'pid 100 gone');
    assert.deepEqual(holderIn(dir), { pid: 200, start: 'b' });
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 100, start: 'a' }));
    assert.equal(lockDataFolder(dir, system(300, { 100: 'z', 300: 'c' })).ok, true, 'pid 100 reused');
  });

  it('a torn lock (a crash while it was written) is taken over; one just created (its pid being written) is not', () => {
    const dir = tempDir();
    writeFileSync(join(dir, LOCK_FILE), '');
    assert.deepEqual(lockDataFolder(dir, system(200, { 200: 'b' })), { ok: false, holder: { pid: 0, start: null } }, 'another start is writing it');
    const old = new Date(Date.now() - FRESH_LOCK_MS - 1_000);
    writeFileSync(join(dir, LOCK_FILE), '{"pid": 10');
    utimesSync(join(dir, LOCK_FILE), old, old);
    assert.equal(lockDataFolder(dir, system(200, { 200: 'b' })).ok, true);
    assert.equal(
      dataLockedLine('/d', { pid: 0, start: null }),
      'Another Avatar Kiosk is already running with the data folder /d: stop it first, or set AVATAR_KIOSK_DATA to another folder to run a second kiosk.',
    );
  });

  it('release removes only its own lock, never one a later start took over', () => {
    const dir = tempDir();
    const mine = lockDataFolder(dir, system(100, { 100: 'a' }));
    assert.equal(mine.ok, true);
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 200, start: 'b' }));
    if (mine.ok) mine.release();
    assert.deepEqual(holderIn(dir), { pid: 200, start: 'b' });
  });

  it('says in one sentence who holds the folder and the two ways on', () => {
    assert.equal(
      dataLockedLine('/home/you/.config/avatar-kiosk', { pid: 41213, start: null }),
      'Another Avatar Kiosk is already running with the data folder /home/you/.config/avatar-kiosk (process 41213): stop it first, or set AVATAR_KIOSK_DATA to another folder to run a second kiosk.',
    );
  });
});
