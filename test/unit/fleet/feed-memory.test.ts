/**
 * The newest feed read per channel, kept in the kiosk's data folder (electron/fleet/feed-memory.ts): kept
 * across a restart, only ever moved forward, written owner-only, and a file that is not as the kiosk writes
 * it is not used, said once in the log and in `problem`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FEED_MEMORY_FILE, openFeedMemory } from '../../../electron/fleet/feed-memory.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-feed-memory-');
const seen = (signedAt: string, version = '1.2.0', minVersion = version) => ({ signedAt, version, minVersion });

describe('the newest feed read per channel', () => {
  it('starts empty without a file, keeps the newest per channel across a restart, never goes back', () => {
    const dir = tempDir();
    const logger = recordingLogger();
    const memory = openFeedMemory(dir, logger);
    assert.deepEqual([memory.newest('latest'), memory.problem], [null, null]);
    memory.saw('latest', seen('2026-11-24T18:00:00.000Z'));
    memory.saw('latest', seen('2026-11-24T17:00:00.000Z', '9.9.9'));
    memory.saw('beta', seen('2026-11-20T00:00:00.000Z', '2.0.0-beta.1'));
    assert.deepEqual(memory.newest('latest'), seen('2026-11-24T18:00:00.000Z'));
    memory.saw('latest', seen('2026-11-25T00:00:00.000Z', '1.2.0', '1.0.0'));
    const again = openFeedMemory(dir, logger);
    assert.deepEqual([again.newest('latest'), again.newest('beta'), again.problem], [seen('2026-11-25T00:00:00.000Z', '1.2.0', '1.0.0'), seen('2026-11-20T00:00:00.000Z', '2.0.0-beta.1'), null]);
    assert.equal(statSync(join(dir, FEED_MEMORY_FILE)).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, FEED_MEMORY_FILE), 'utf8')), {
      v: 1,
      channels: { beta: seen('2026-11-20T00:00:00.000Z', '2.0.0-beta.1'), latest: seen('2026-11-25T00:00:00.000Z', '1.2.0', '1.0.0') },
    });
    assert.deepEqual(logger.lines, []);
  });

  it('keeps at most 16 channels, the oldest written going first', () => {
    const dir = tempDir();
    const memory = openFeedMemory(dir);
    for (let i = 0; i < 17; i++) memory.saw(`c${i}`, seen('2026-11-24T18:00:00.000Z'));
    const again = openFeedMemory(dir);
    assert.deepEqual([again.newest('c0'), again.newest('c1')?.version, again.newest('c16')?.version, again.problem], [null, '1.2.0', '1.2.0', null]);
  });

  it('does not use a file that is not as it writes it: starts empty, says why once', () => {
    const cases: Array<[string, string]> = [
      ['{"v":1,"channels":{"latest":', 'is not JSON'],
      ['{"v":2,"channels":{}}', 'is not as this kiosk writes it (v: Invalid input: expected 1)'],
      ['{"v":1,"channels":{"latest":{"signedAt":"yesterday","version":"1.2.0","minVersion":"1.2.0"}}}', 'is not as this kiosk writes it (channels.latest.signedAt: Invalid ISO datetime)'],
      ['{"v":1,"channels":{"latest":{"signedAt":"2026-11-24T18:00:00.000Z","version":"1.2","minVersion":"1.2.0"}}}', 'is not as this kiosk writes it (channels.latest.version: Invalid input)'],
      ['{"v":1,"channels":{"../x":{"signedAt":"2026-11-24T18:00:00.000Z","version":"1.2.0","minVersion":"1.2.0"}}}', 'is not as this kiosk writes it (channels.../x: Invalid key in record)'],
      ['{"v":1,"channels":{},"extra":true}', 'is not as this kiosk writes it (the file: Unrecognized key: "extra")'],
    ];
    for (const [text, why] of cases) {
      const dir = tempDir();
      writeFileSync(join(dir, FEED_MEMORY_FILE), text);
      const logger = recordingLogger();
      const memory = openFeedMemory(dir, logger);
      const problem = `${join(dir, FEED_MEMORY_FILE)} ${why}: started without it, so until this kiosk reads its channel again only the feeds' expiry keeps an older one out`;
      assert.deepEqual([memory.newest('latest'), memory.problem], [null, problem], text);
      assert.deepEqual(logger.lines, [{ level: 'error', message: 'Updates: the newest feeds seen could not be read', data: { problem } }], text);
      memory.saw('latest', seen('2026-11-24T18:00:00.000Z'));
      assert.equal(openFeedMemory(dir).problem, null, 'written afresh once a feed is read');
    }
  });

  it('says when the file cannot be read (a folder in its place)', () => {
    const dir = tempDir();
    mkdirSync(join(dir, FEED_MEMORY_FILE));
    assert.match(openFeedMemory(dir).problem ?? '', /update-feeds\.json could not be read \(EISDIR\): started without it/);
  });

  it('says when the newest cannot be saved (a file where its folder should be), and still knows it until the kiosk stops', () => {
    const dir = join(tempDir(), 'file-in-the-way');
    writeFileSync(dir, '');
    const logger = recordingLogger();
    const memory = openFeedMemory(join(dir, 'data'), logger);
    memory.saw('latest', seen('2026-11-24T18:00:00.000Z'));
    assert.deepEqual(memory.newest('latest'), seen('2026-11-24T18:00:00.000Z'));
    assert.deepEqual(
      logger.lines.map((l) => [l.level, l.message]),
      [
        ['error', 'Updates: the newest feeds seen could not be read'],
        ['error', 'Updates: the newest feed seen could not be saved; after a restart an older one could be accepted until it expires'],
      ],
    );
    assert.match(memory.problem ?? '', /could not be read \(ENOTDIR\)/);
  });
});
