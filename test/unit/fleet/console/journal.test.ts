/**
 * The console's store on disk (journal.ts): lines appended and flushed on the injected clock, read back by
 * a new instance over the same folder; a torn last line (a crash mid-write) loses that line only and says
 * so; a snapshot replaces the journal atomically and is never replayed twice; rotation keeps a bounded
 * number of old files.
 */
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FLUSH_AFTER_MS, openJournal, readJournalFile } from '../../../../electron/fleet/console/journal.ts';
import { FakeClock } from '../../../helpers/fake-clock.ts';
import { recordingLogger } from '../../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-journal-');
const T0 = Date.parse('2026-11-24T10:00:00Z');

describe('openJournal', () => {
  it(`writes appended records within ${FLUSH_AFTER_MS} ms, each on its own numbered line, and a new instance reads them back in order`, async () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const j = openJournal({ dir, name: 'fleet', clock });
    j.append({ t: 'a', n: 1 });
    j.append({ t: 'b', n: 2 });
    assert.equal(readFileSync(join(dir, 'fleet.jsonl'), 'utf8'), '', 'nothing on disk before the flush');
    assert.deepEqual(clock.pendingDelays(), [FLUSH_AFTER_MS]);
    await clock.advance(FLUSH_AFTER_MS - 1);
    assert.equal(readFileSync(join(dir, 'fleet.jsonl'), 'utf8'), '');
    await clock.advance(1);
    assert.equal(readFileSync(join(dir, 'fleet.jsonl'), 'utf8'), '{"s":1,"t":"a","n":1}\n{"s":2,"t":"b","n":2}\n');
    j.append({ t: 'c', n: 3 });
    j.close();
    assert.equal(clock.pendingCount, 0, 'close writes what is pending and leaves no timer');

    const again = openJournal({ dir, name: 'fleet', clock });
    assert.deepEqual(again.records, [{ t: 'a', n: 1 }, { t: 'b', n: 2 }, { t: 'c', n: 3 }]);
    assert.equal(again.skipped, 0);
    assert.equal(again.snapshot, null);
    again.append({ t: 'd' });
    again.flush();
    assert.equal(readFileSync(join(dir, 'fleet.jsonl'), 'utf8').split('\n').at(-2), '{"s":4,"t":"d"}', 'the numbering goes on');
    again.close();
  });

  it('a crash mid-write (a torn last line) loses that line only, says so, and the next record starts on a line of its own', () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const j = openJournal({ dir, name: 'fleet', clock });
    j.append({ t: 'call', k: 'k-1' });
    j.append({ t: 'call', k: 'k-2' });
    j.close();
    appendFileSync(join(dir, 'fleet.jsonl'), '{"s":3,"t":"call","k":"k-');

    const logger = recordingLogger();
    const after = openJournal({ dir, name: 'fleet', clock, logger });
    assert.deepEqual(after.records, [{ t: 'call', k: 'k-1' }, { t: 'call', k: 'k-2' }]);
    assert.equal(after.skipped, 1);
    assert.deepEqual(logger.lines, [{ level: 'warn', message: 'Fleet console: lines of the store that did not parse were skipped (a write cut short)', data: { file: join(dir, 'fleet.jsonl'), skipped: 1 } }]);
    after.append({ t: 'call', k: 'k-3' });
    after.close();
    assert.equal(readFileSync(join(dir, 'fleet.jsonl'), 'utf8'), '{"s":1,"t":"call","k":"k-1"}\n{"s":2,"t":"call","k":"k-2"}\n{"s":3,"t":"call","k":"k-\n{"s":3,"t":"call","k":"k-3"}\n');

    const third = openJournal({ dir, name: 'fleet', clock });
    assert.deepEqual(third.records, [{ t: 'call', k: 'k-1' }, { t: 'call', k: 'k-2' }, { t: 'call', k: 'k-3' }]);
    assert.equal(third.skipped, 1, 'the torn line stays skipped; nothing after it is lost');
    third.close();
  });

  it('a line that parses but is no numbered record is skipped and counted too', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'fleet.jsonl'), '[1,2]\n{"t":"no-s"}\n{"s":1,"t":"ok"}\n');
    const j = openJournal({ dir, name: 'fleet', clock: new FakeClock(T0) });
    assert.deepEqual(j.records, [{ t: 'ok' }]);
    assert.equal(j.skipped, 2);
    j.close();
  });

  it('compact replaces the journal by one snapshot; a crash before the journal was emptied replays nothing twice', () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const j = openJournal({ dir, name: 'fleet', clock });
    j.append({ t: 'a' });
    j.append({ t: 'b' });
    j.flush();
    const beforeCompact = readFileSync(join(dir, 'fleet.jsonl'), 'utf8');
    j.compact({ all: ['a', 'b'] });
    assert.equal(j.bytes, 0);
    assert.equal(readFileSync(join(dir, 'fleet.jsonl'), 'utf8'), '');
    assert.equal(readFileSync(join(dir, 'fleet.snapshot.json'), 'utf8'), '{"v":1,"upTo":2,"state":{"all":["a","b"]}}');
    assert.equal(j.snapshotBytes, '{"v":1,"upTo":2,"state":{"all":["a","b"]}}'.length);
    assert.equal(existsSync(join(dir, 'fleet.snapshot.json.tmp')), false);
    j.append({ t: 'c' });
    j.close();

    // As if the console died between the snapshot's rename and the journal's truncation.
    writeFileSync(join(dir, 'fleet.jsonl'), `${beforeCompact}{"s":3,"t":"c"}\n`);
    const again = openJournal({ dir, name: 'fleet', clock });
    assert.deepEqual(again.snapshot, { all: ['a', 'b'] });
    assert.deepEqual(again.records, [{ t: 'c' }], 'records up to the snapshot are not read again');
    again.close();
  });

  it('a snapshot without its sequence number is ignored and logged, and the journal still reads', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'fleet.snapshot.json'), '{"state":{"x":1}}');
    writeFileSync(join(dir, 'fleet.jsonl'), '{"s":1,"t":"a"}\n');
    const logger = recordingLogger();
    const j = openJournal({ dir, name: 'fleet', clock: new FakeClock(T0), logger });
    assert.equal(j.snapshot, null);
    assert.deepEqual(j.records, [{ t: 'a' }]);
    assert.deepEqual(logger.lines, [{ level: 'error', message: "Fleet console: the store's snapshot has no sequence number; it is ignored", data: { file: join(dir, 'fleet.snapshot.json') } }]);
    j.close();
  });

  it('rotate renames the journal aside by time and keeps only the newest `keep` files', async () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const j = openJournal({ dir, name: 'audit', clock });
    for (let i = 1; i <= 4; i++) {
      j.append({ t: 'x', i });
      j.rotate(2);
      await clock.advance(1_000);
    }
    assert.deepEqual(readdirSync(dir).sort(), ['audit-20261124T100002000Z.jsonl', 'audit-20261124T100003000Z.jsonl', 'audit.jsonl']);
    assert.deepEqual(j.rotated().map((p) => p.slice(dir.length + 1)), ['audit-20261124T100003000Z.jsonl', 'audit-20261124T100002000Z.jsonl']);
    assert.deepEqual(readJournalFile(j.rotated()[0]!), [{ t: 'x', i: 4 }]);
    assert.equal(j.bytes, 0);
    j.close();
  });
});
