/**
 * The fleet console's store on disk: an append-only journal of JSON lines beside a snapshot, in the
 * console's data folder. What the console remembers (memory.ts) and its audit log (command-log.ts) are
 * both kept this way. Electron-free; the clock is injected (the flush timer).
 *
 * Why our own and not a database: what is kept is small and append-mostly (calls, changes of "since",
 * command records and answers), the console rebuilds its state in memory from it at start anyway, and
 * the kiosk keeps its ledger and event queue the same way. node:sqlite prints an experimental warning on
 * every start and has no types in @types/node 20; better-sqlite3 and lmdb are native addons (a rebuild
 * per Node version, a prebuilt download or a compiler at install). One file of lines, written with one
 * write and fdatasync, is what the crash-safety below needs and nothing more.
 *
 * Crash safety:
 *  - each line carries a sequence number `s`; the snapshot says up to which one it holds (`upTo`), so a
 *    crash between writing a snapshot and emptying the journal replays nothing twice;
 *  - a crash can tear only the last line: a line that does not parse is skipped (and counted), and the
 *    next write starts on a new line;
 *  - a snapshot is written to a temporary file, flushed, renamed over the old one and the folder flushed:
 *    it is the old one or the new one, never half of each.
 * Bounded: `compact(state)` (the caller's whole state as one value) replaces the journal once it passes
 * `maxBytes`; a journal of another kind (`rotate`) is renamed aside instead, keeping `keepRotated` files.
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { silentLogger, type Logger } from '../../core/log.ts';

/** Pending lines are written and flushed at most this long after they were appended. */
export const FLUSH_AFTER_MS = 250;

export interface JournalOptions {
  dir: string;
  /** Files: `<name>.jsonl` and `<name>.snapshot.json` (or `<name>-<time>.jsonl` once rotated). */
  name: string;
  clock: Clock;
  logger?: Logger;
  /** Default FLUSH_AFTER_MS. */
  flushAfterMs?: number;
}

export interface Journal {
  /** The snapshot's value as written by `compact` (validated by the caller), or null. */
  readonly snapshot: unknown;
  /** The records written after the snapshot, oldest first (each without its `s`). */
  readonly records: ReadonlyArray<Record<string, unknown>>;
  /** Lines that did not parse when the journal was read (a torn last line after a crash). */
  readonly skipped: number;
  /** The journal's size on disk (bytes), pending lines included. */
  readonly bytes: number;
  /** The snapshot's size on disk (bytes), 0 without one. */
  readonly snapshotBytes: number;
  /** Append a record: written within `flushAfterMs`, or at the next `flush()`. */
  append(record: Record<string, unknown>): void;
  /** Write what is pending and wait for the disk (fdatasync). */
  flush(): void;
  /** Replace the journal by `state` as the snapshot (atomically), then empty the journal. */
  compact(state: unknown): void;
  /** Rename the journal aside as `<name>-<time>.jsonl` and start an empty one; keep `keep` of them. */
  rotate(keep: number): void;
  /** The rotated files, newest first (full paths). */
  rotated(): string[];
  close(): void;
}

export function openJournal(options: JournalOptions): Journal {
  const { dir, name, clock } = options;
  const logger = options.logger ?? silentLogger;
  const flushAfterMs = options.flushAfterMs ?? FLUSH_AFTER_MS;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${name}.jsonl`);
  const snapshotPath = join(dir, `${name}.snapshot.json`);

  let upTo = 0;
  let snapshot: unknown = null;
  let snapshotBytes = 0;
  if (existsSync(snapshotPath)) {
    try {
      const raw = readFileSync(snapshotPath, 'utf8');
      snapshotBytes = Buffer.byteLength(raw);
      const parsed = JSON.parse(raw) as { upTo?: unknown; state?: unknown };
      if (typeof parsed.upTo === 'number' && Number.isInteger(parsed.upTo) && parsed.upTo >= 0) {
        upTo = parsed.upTo;
        snapshot = parsed.state ?? null;
      } else logger.error('Fleet console: the store\'s snapshot has no sequence number; it is ignored', { file: snapshotPath });
    } catch (error) {
      logger.error('Fleet console: the store\'s snapshot could not be read; it is ignored', { file: snapshotPath, error: String(error) });
    }
  }

  const records: Array<Record<string, unknown>> = [];
  let skipped = 0;
  let seq = upTo;
  let endsClean = true;
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8');
    endsClean = text.length === 0 || text.endsWith('\n');
    for (const line of text.split('\n')) {
      if (!line) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        skipped++;
        continue;
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { s?: unknown }).s !== 'number') {
        skipped++;
        continue;
      }
      const { s, ...record } = value as { s: number } & Record<string, unknown>;
      if (s > seq) seq = s;
      if (s > upTo) records.push(record);
    }
    if (skipped) logger.warn('Fleet console: lines of the store that did not parse were skipped (a write cut short)', { file: path, skipped });
  }

  let fd = openSync(path, 'a', 0o600);
  let bytes = fstatSync(fd).size;
  // A torn last line: the next record starts on a line of its own.
  if (!endsClean) bytes += writeSync(fd, '\n');
  let pending: string[] = [];
  let timer: TimerHandle | null = null;
  let closed = false;

  const flush = () => {
    if (timer !== null) {
      clock.clearTimeout(timer);
      timer = null;
    }
    if (!pending.length || closed) return;
    const text = pending.join('');
    pending = [];
    writeSync(fd, text);
    fdatasyncSync(fd);
  };

  const syncDir = () => {
    // The rename itself must reach the disk; some systems cannot open a folder (then the rename stands alone).
    try {
      const d = openSync(dir, 'r');
      try {
        fsyncSync(d);
      } finally {
        closeSync(d);
      }
    } catch {
      // nothing more can be done portably
    }
  };

  const rotatedPattern = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d{8}T\\d{6}(\\d{3})?Z(-\\d+)?\\.jsonl$`);
  const rotated = () =>
    readdirSync(dir)
      .filter((f) => rotatedPattern.test(f))
      .sort()
      .reverse()
      .map((f) => join(dir, f));

  return {
    get snapshot() {
      return snapshot;
    },
    records,
    skipped,
    get bytes() {
      return bytes;
    },
    get snapshotBytes() {
      return snapshotBytes;
    },
    append(record) {
      if (closed) return;
      const line = `${JSON.stringify({ s: ++seq, ...record })}\n`;
      pending.push(line);
      bytes += Buffer.byteLength(line);
      if (timer === null) timer = clock.setTimeout(flush, flushAfterMs);
    },
    flush,
    compact(state) {
      if (closed) return;
      flush();
      const tmp = `${snapshotPath}.tmp`;
      const out = openSync(tmp, 'w', 0o600);
      try {
        snapshotBytes = writeSync(out, JSON.stringify({ v: 1, upTo: seq, state }));
        fsyncSync(out);
      } finally {
        closeSync(out);
      }
      renameSync(tmp, snapshotPath);
      syncDir();
      // The snapshot holds everything up to `seq`: a crash before this truncation replays nothing twice.
      ftruncateSync(fd, 0);
      fdatasyncSync(fd);
      bytes = 0;
    },
    rotate(keep) {
      if (closed) return;
      flush();
      closeSync(fd);
      const stamp = new Date(clock.now()).toISOString().replace(/[-:]/g, '').replace('.', '');
      let target = join(dir, `${name}-${stamp}.jsonl`);
      for (let n = 2; existsSync(target); n++) target = join(dir, `${name}-${stamp}-${n}.jsonl`);
      renameSync(path, target);
      fd = openSync(path, 'a', 0o600);
      bytes = 0;
      syncDir();
      for (const old of rotated().slice(keep)) {
        rmSync(old, { force: true });
        logger.info('Fleet console: an old journal was removed (the store keeps a bounded number)', { file: basename(old) });
      }
    },
    rotated,
    close() {
      if (closed) return;
      flush();
      closed = true;
      closeSync(fd);
    },
  };
}

/** Read a rotated journal's records (for the audit log's older files). Lines that do not parse are skipped. */
export function readJournalFile(path: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const { s: _s, ...record } = value as Record<string, unknown>;
        out.push(record);
      }
    } catch {
      // a torn line
    }
  }
  return out;
}
