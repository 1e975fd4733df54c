/**
 * Main's log file (log-file.ts, over electron-log): redacted lines in main.log, rotated by size into
 * main.old.log; the folder and files kept private; what reaches the console (and on which stream: errors
 * and warnings to stderr, where journald and the service manager look for them); the level and scope;
 * lines logged through electron-log directly; and the tail staff read, of short, long, huge and missing
 * files.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import elog from 'electron-log/node';
import { addSecret } from '../../../electron/core/log.ts';
import { createMainLog, tailLines } from '../../../electron/operations/log-file.ts';
import { openFilesCounterOrSkip } from '../../helpers/open-files.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const tmp = tempDirsRemovedAfterEach('kiosk-log-');

let ids = 0;
const logId = () => `log-file-${process.pid}-${ids++}`;
const posix = process.platform !== 'win32';
const mode = (path: string) => statSync(path).mode & 0o777;

/** What was written to stdout and stderr while `fn` ran (synchronously). */
function captureConsole(fn: () => void): { stdout: string; stderr: string } {
  const out = { stdout: '', stderr: '' };
  const original = { stdout: process.stdout.write, stderr: process.stderr.write };
  process.stdout.write = ((chunk: string | Uint8Array) => ((out.stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((out.stderr += String(chunk)), true)) as typeof process.stderr.write;
  try {
    fn();
  } finally {
    process.stdout.write = original.stdout;
    process.stderr.write = original.stderr;
  }
  return out;
}

/** electron-log's own instance for a log id: how code that uses electron-log directly reaches main's log. */
function electronLogInstance(id: string): { info(...data: unknown[]): void } {
  return (elog as unknown as { Logger: { getInstance(o: { logId: string }): { info(...data: unknown[]): void } } }).Logger.getInstance({ logId: id });
}

const fileLines = (dir: string) => readFileSync(join(dir, 'main.log'), 'utf8').split('\n').filter(Boolean);
const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

describe('main log file (electron-log)', () => {
  describe('writing', () => {
    it('writes redacted lines to main.log; the tail is the last 200 lines', () => {
      const dir = tmp();
      const secret = 'sk-log-SECRET-1234567890';
      addSecret(secret);
      const log = createMainLog({ dir, console: false, logId: `t1-${Date.now()}` });
      log.logger.info(`Using key ${secret}`, { rtc: { token: 'tok-abcdef-123456' } });
      log.logger.error('Authorization: Token abc.def-ghi');
      for (let i = 0; i < 250; i++) log.logger.info(`line ${i}`);
      const text = readFileSync(join(dir, 'main.log'), 'utf8');
      assert.ok(!text.includes(secret) && !text.includes('tok-abcdef-123456') && !text.includes('abc.def-ghi'), text.slice(0, 500));
      assert.match(text, /INFO Using key \*\*\* \{"rtc":\{"token":"\*\*\*"\}\}/);
      assert.match(text, /ERROR Authorization: Token \*\*\*/);
      const tail = log.tail();
      assert.equal(tail.length, 200);
      assert.match(tail[199]!, /INFO line 249$/);
      assert.match(tail[0]!, /INFO line 50$/);
    });
    it('rotates by size: main.log becomes main.old.log and a new file starts', () => {
      const dir = tmp();
      const log = createMainLog({ dir, console: false, maxSizeBytes: 4_000, logId: `t2-${Date.now()}` });
      for (let i = 0; i < 100; i++) log.logger.info(`filler ${i} ${'x'.repeat(60)}`);
      assert.equal(existsSync(join(dir, 'main.old.log')), true);
      assert.ok(readFileSync(join(dir, 'main.log')).length <= 4_000 + 200);
      assert.match(log.tail(1)[0]!, /filler 99/);
    });
    it('keeps non-ASCII text intact (venue names, visitors\' languages)', () => {
      const dir = tmp();
      const log = createMainLog({ dir, console: false, logId: logId() });
      log.logger.info('Grüße aus Köln — 東京 ✓');
      assert.equal(fileLines(dir)[0]!.slice(25), 'INFO Grüße aus Köln — 東京 ✓');
    });
  });

  describe('privacy of the folder and files', { skip: !posix && 'POSIX modes' }, () => {
    it('creates the folder at 0700 and the log at 0600', () => {
      const dir = join(tmp(), 'logs', 'nested');
      const log = createMainLog({ dir, console: false, logId: logId() });
      log.logger.info('hello');
      assert.equal(mode(dir), 0o700);
      assert.equal(mode(log.path), 0o600);
    });

    it('makes a folder and both log files an older version left readable private again', () => {
      const dir = tmp();
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'main.log'), 'old\n', { mode: 0o644 });
      writeFileSync(join(dir, 'main.old.log'), 'older\n', { mode: 0o644 });
      writeFileSync(join(dir, 'other.txt'), 'not ours\n', { mode: 0o644 });
      createMainLog({ dir, console: false, logId: logId() });
      assert.deepEqual(
        readdirSync(dir).sort().map((f) => `${f} ${mode(join(dir, f)).toString(8)}`),
        ['main.log 600', 'main.old.log 600', 'other.txt 644'],
      );
      assert.equal(mode(dir), 0o700);
    });
  });

  describe('console, level and scope', () => {
    it('prints each line as written to the file; errors and warnings go to stderr, the rest to stdout', () => {
      const dir = tmp();
      const log = createMainLog({ dir, level: 'debug', logId: logId() });
      const printed = captureConsole(() => {
        log.logger.error('card reader gone');
        log.logger.warn('slow network');
        log.logger.info('call started');
        log.logger.debug('frame 1');
      });
      const lines = fileLines(dir);
      assert.equal(lines.length, 4);
      assert.match(lines[0]!, new RegExp(`^${ISO} ERROR card reader gone$`));
      assert.match(lines[3]!, new RegExp(`^${ISO} DEBUG frame 1$`));
      assert.equal(printed.stderr, `${lines[0]}\n${lines[1]}\n`);
      assert.equal(printed.stdout, `${lines[2]}\n${lines[3]}\n`);
    });
    it('console: false prints nothing, yet the file gets every line', () => {
      const dir = tmp();
      const log = createMainLog({ dir, console: false, logId: logId() });
      const printed = captureConsole(() => {
        log.logger.error('card reader gone');
        log.logger.info('call started');
      });
      assert.deepEqual(printed, { stdout: '', stderr: '' });
      assert.equal(fileLines(dir).length, 2);
    });
    it('logs from info up by default; a debug level adds debug lines; a scope tags each line', () => {
      const plain = tmp();
      const byDefault = createMainLog({ dir: plain, console: false, logId: logId() });
      byDefault.logger.debug('hidden');
      byDefault.logger.info('shown');
      assert.deepEqual(fileLines(plain).map((l) => l.slice(25)), ['INFO shown']);

      const verbose = tmp();
      const debug = createMainLog({ dir: verbose, console: false, level: 'debug', scope: 'updater', logId: logId() });
      debug.logger.debug('checking');
      assert.deepEqual(fileLines(verbose).map((l) => l.slice(25)), ['DEBUG [updater] checking']);
    });
  });

  describe('lines logged through electron-log directly', () => {
    it('land in main.log redacted (the key never reaches the file), objects as they are', () => {
      const dir = tmp();
      const id = logId();
      createMainLog({ dir, console: false, logId: id });
      const secret = 'sk-direct-SECRET-0987654321';
      addSecret(secret);
      electronLogInstance(id).info(`key ${secret}`, { calls: 3 });
      assert.deepEqual(fileLines(dir), ['key *** { calls: 3 }']);
    });

    it('without a log id, main\'s log is electron-log\'s "kiosk-main"', () => {
      const dir = tmp();
      createMainLog({ dir, console: false });
      electronLogInstance('kiosk-main').info('from a library');
      assert.deepEqual(fileLines(dir), ['from a library']);
    });
  });
});

describe('tail of a log file', () => {
  it('a short file: every line, first one included, without the trailing blank lines', () => {
    const path = join(tmp(), 'short.log');
    writeFileSync(path, 'first\r\nsecond\nthird\n\n\n');
    assert.deepEqual(tailLines(path, 10), ['first', 'second', 'third']);
    assert.deepEqual(tailLines(path, 2), ['second', 'third']);
  });
  it('a file over 512 KB: only its last 512 KB are read, and the line cut at that edge is dropped', () => {
    const path = join(tmp(), 'huge.log');
    // 7 000 lines of 100 bytes (99 + newline) = 700 000 bytes; the read starts inside line 1757.
    const lines = Array.from({ length: 7_000 }, (_, i) => `${String(i).padStart(6, '0')} ${'x'.repeat(92)}`);
    writeFileSync(path, lines.join('\n') + '\n');
    const tail = tailLines(path, 10_000);
    const firstWhole = Math.ceil((700_000 - 512 * 1024) / 100);
    assert.deepEqual(tail, lines.slice(firstWhole));
    assert.equal(tail[0]!.length, 99);
  });
  it('the tail of a missing file is empty', () => {
    assert.deepEqual(createMainLog({ dir: join(tmpdir(), 'kiosk-no-such-dir-x'), console: false, logId: 't3' }).tail(), []);
  });
  it('reading the tail leaves no file open (the staff panel asks for it again and again)', (t) => {
    const openFiles = openFilesCounterOrSkip(t);
    if (!openFiles) return;
    const dir = tmp();
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'main.log');
    writeFileSync(path, 'a\nb\n');
    const before = openFiles();
    for (let i = 0; i < 20; i++) tailLines(path, 1);
    assert.equal(openFiles(), before);
  });
});
