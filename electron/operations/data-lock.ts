/**
 * One kiosk per data folder: two kiosks writing the same ledger, config.json and visitor counts would lose
 * data without a word. The first start takes `kiosk.lock` in the data folder (created with O_EXCL, so of
 * two starts at the same moment exactly one wins) and writes its pid into it; a second start reads that pid
 * and is told who holds the folder. A lock whose pid is gone (a kiosk that crashed, or was killed) is taken
 * over: it must never keep the next start out. So is one that cannot be read (torn by a crash while it was
 * written), unless it is younger than FRESH_LOCK_MS: that one is another start writing its pid right now.
 *
 * A pid alone can be reused by an unrelated process after a crash; on Linux the lock also keeps the
 * process's start time (/proc/<pid>/stat), so a reused pid is seen as stale. Elsewhere the pid is trusted
 * (the sentence names it, so a person can check).
 *
 * No package: proper-lockfile and its kin judge staleness by a file's age (a kiosk runs for months), not by
 * whether the holder is alive; an O_EXCL file with the pid is all this needs.
 */
import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'kiosk.lock';

export interface LockHolder {
  pid: number;
  /** The holder's start time (Linux: clock ticks since boot, /proc/<pid>/stat field 22), or null. */
  start: string | null;
}

export type DataLock = { ok: true; release(): void } | { ok: false; holder: LockHolder };

export interface DataLockSystem {
  pid: number;
  /** Whether `holder` is a live process (the same one that wrote the lock). */
  alive(holder: LockHolder): boolean;
  /** This process's start time, as `LockHolder.start`. */
  startOf(pid: number): string | null;
}

/** Linux's start time of `pid`, or null where /proc is absent or the process is gone. */
export function procStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state is field 3, start 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

export const realSystem: DataLockSystem = {
  pid: process.pid,
  startOf: procStart,
  alive(holder) {
    try {
      process.kill(holder.pid, 0);
    } catch (error) {
      // EPERM: it exists, owned by another user.
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
    }
    const start = procStart(holder.pid);
    return holder.start === null || start === null || start === holder.start;
  },
};

/** An unreadable lock younger than this is one being written, not one torn by a crash. */
export const FRESH_LOCK_MS = 2_000;

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY; // gone already
  }
}

function readHolder(path: string): LockHolder | null {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; start?: unknown };
    if (typeof value.pid !== 'number' || !Number.isInteger(value.pid) || value.pid <= 0) return null;
    return { pid: value.pid, start: typeof value.start === 'string' ? value.start : null };
  } catch {
    return null;
  }
}

/** Take the data folder's lock, or say who holds it (a stale lock, as above, is removed and taken). */
export function lockDataFolder(dir: string, system: DataLockSystem = realSystem): DataLock {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, LOCK_FILE);
  const mine: LockHolder = { pid: system.pid, start: system.startOf(system.pid) };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(path);
      if (holder && holder.pid !== system.pid && system.alive(holder)) return { ok: false, holder };
      // Unreadable and new: another start has just created it and is writing its pid (O_EXCL, then write).
      if (!holder && ageMs(path) < FRESH_LOCK_MS) return { ok: false, holder: { pid: 0, start: null } };
      // Stale: its kiosk is gone. Removed, then taken with O_EXCL again (another start may win that race).
      try {
        unlinkSync(path);
      } catch {
        // someone else removed it first
      }
      continue;
    }
    writeSync(fd, JSON.stringify(mine));
    closeSync(fd);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.removeListener('exit', release);
      // Only our own lock: never one a later start took over.
      if (readHolder(path)?.pid === mine.pid) {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      }
    };
    process.once('exit', release);
    return { ok: true, release };
  }
  const holder = readHolder(path);
  return { ok: false, holder: holder ?? { pid: 0, start: null } };
}

/** The sentence a second start prints: who holds the folder, and the two ways on. */
export function dataLockedLine(dir: string, holder: LockHolder): string {
  const who = holder.pid > 0 ? ` (process ${holder.pid})` : '';
  return `Another Avatar Kiosk is already running with the data folder ${dir}${who}: stop it first, or set AVATAR_KIOSK_DATA to another folder to run a second kiosk.`;
}
