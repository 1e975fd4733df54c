/**
 * The avatar's volume as the kiosk keeps it (electron/kiosk/avatar-volume.ts): the default, a change kept
 * in its file and read back after a restart, a damaged file (logged, the default), a refused value and a
 * failed write (nothing changes, nobody is told).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { AVATAR_VOLUME_FILE, DEFAULT_AVATAR_VOLUME, memoryAvatarVolume, openAvatarVolume } from '../../../electron/kiosk/avatar-volume.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { rejection } from '../../helpers/rejection.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ak-volume-'));
  dirs.push(d);
  return d;
};

describe('the avatar volume', () => {
  it('starts at 100 % (the voice as sent) without a file, and says nothing about it', () => {
    const logger = recordingLogger();
    const volume = openAvatarVolume({ dir: tempDir(), logger });
    assert.deepEqual([volume.percent, DEFAULT_AVATAR_VOLUME], [100, 100]);
    assert.deepEqual(logger.lines, []);
  });

  it('keeps a change in its file (0600) before anyone hears of it, and a restarted kiosk reads it back', async () => {
    const dir = tempDir();
    const volume = openAvatarVolume({ dir });
    const heard: Array<[number, unknown]> = [];
    volume.onChange((percent) => heard.push([percent, JSON.parse(readFileSync(join(dir, AVATAR_VOLUME_FILE), 'utf8'))]));
    assert.equal(await volume.set(40), 40);
    assert.equal(volume.percent, 40);
    assert.deepEqual(heard, [[40, { v: 1, percent: 40 }]]);
    if (process.platform !== 'win32') assert.equal(statSync(join(dir, AVATAR_VOLUME_FILE)).mode & 0o777, 0o600);
    assert.equal(await volume.set(40), 40);
    assert.equal(heard.length, 1, 'the same volume again is no change');
    assert.equal(await volume.set(0), 0);
    assert.equal(openAvatarVolume({ dir }).percent, 0, 'after a restart');
  });

  it('plays at the default when its file is damaged, with a log line naming the file', () => {
    for (const text of ['{"v":1,"percent":', '{"v":1,"percent":150}', '{"v":1,"percent":40.5}', '{"percent":40}', '{"v":2,"percent":40}', '[40]', '40']) {
      const dir = tempDir();
      writeFileSync(join(dir, AVATAR_VOLUME_FILE), text);
      const logger = recordingLogger();
      assert.equal(openAvatarVolume({ dir, logger }).percent, 100, text);
      assert.deepEqual(logger.lines, [{ level: 'warn', message: 'The avatar volume file is damaged; playing at the default', data: { path: join(dir, AVATAR_VOLUME_FILE), percent: 100 } }], text);
    }
  });

  it('refuses a volume outside 0–100 or not whole, in words, and keeps the one it had', async () => {
    const dir = tempDir();
    const volume = openAvatarVolume({ dir });
    const heard: number[] = [];
    volume.onChange((p) => heard.push(p));
    for (const bad of [-1, 101, 40.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const e = await rejection(volume.set(bad));
      assert.deepEqual([e.code, e.message], ['invalid_request', `The avatar volume ${String(bad)} was refused: the volume is a whole percent from 0 to 100.`]);
    }
    assert.deepEqual([volume.percent, heard], [100, []]);
    assert.throws(() => readFileSync(join(dir, AVATAR_VOLUME_FILE)), { code: 'ENOENT' });
  });

  it('a volume that cannot be kept is refused, and nobody is told of a change that did not happen', async () => {
    const dir = tempDir();
    const volume = openAvatarVolume({ dir: join(dir, 'config.json') });
    writeFileSync(join(dir, 'config.json'), '{}'); // the data folder is a file: nothing can be written under it
    const heard: number[] = [];
    volume.onChange((p) => heard.push(p));
    const e = await rejection(volume.set(30));
    assert.deepEqual([e.code, e.message], ['internal', 'The avatar volume could not be saved (EEXIST); it stays at 100 %.']);
    assert.equal((e as Error & { cause?: { code?: string } }).cause?.code, 'EEXIST', 'the system error is kept as the cause');
    assert.deepEqual([volume.percent, heard], [100, []]);
  });

  it('in memory (a kiosk service without a data folder): the same rules, nothing written', async () => {
    const volume = memoryAvatarVolume();
    const heard: number[] = [];
    const off = volume.onChange((p) => heard.push(p));
    assert.equal(await volume.set(55), 55);
    off();
    assert.equal(await volume.set(60), 60);
    assert.deepEqual([volume.percent, heard], [60, [55]]);
    assert.equal((await rejection(volume.set(101))).code, 'invalid_request');
  });
});

describe('the avatar volume: its file and its listeners', () => {
  it('a file that cannot be read (a folder in its place) plays at the default, with the reason logged', () => {
    const dir = tempDir();
    mkdirSync(join(dir, AVATAR_VOLUME_FILE));
    const logger = recordingLogger();
    assert.equal(openAvatarVolume({ dir, logger }).percent, 100);
    assert.equal(logger.lines.length, 1);
    assert.equal(logger.lines[0]!.message, 'The avatar volume file could not be read; playing at the default');
    assert.equal(logger.lines[0]!.data!.path, join(dir, AVATAR_VOLUME_FILE));
    assert.match(String(logger.lines[0]!.data!.error), /EISDIR/);
    assert.equal(logger.lines[0]!.data!.percent, 100);
  });

  it('makes its data folder when it is not there yet', async () => {
    const dir = join(tempDir(), 'new', 'data');
    assert.equal(await openAvatarVolume({ dir }).set(25), 25);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, AVATAR_VOLUME_FILE), 'utf8')), { v: 1, percent: 25 });
  });

  it('a listener that unsubscribes while being told does not keep the others from hearing', async () => {
    const volume = memoryAvatarVolume(30);
    assert.equal(volume.percent, 30);
    const heard: string[] = [];
    const offA = volume.onChange((p) => {
      heard.push(`a${p}`);
      offA();
    });
    volume.onChange((p) => heard.push(`b${p}`));
    await volume.set(31);
    await volume.set(32);
    assert.deepEqual(heard, ['a31', 'b31', 'b32']);
  });

  it('a memory volume refuses a start outside 0–100', () => {
    assert.throws(() => memoryAvatarVolume(101));
  });
});
