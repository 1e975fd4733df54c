/**
 * `readRegularFile` (bounded-read.ts), the bounded read of a configured file (an avatar or attract
 * picture): a file over its limit, a folder, a pipe or a device is refused with the path and the sizes in
 * words before anything is read; a file is read only up to what it holds; and its descriptor is given back.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRegularFile } from '../../../electron/core/bounded-read.ts';
import { AvatarError } from '../../../electron/core/errors.ts';

describe('readRegularFile', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bounded-read-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, bytes: number) => {
    const path = join(dir, name);
    writeFileSync(path, Buffer.alloc(bytes, 7));
    return path;
  };

  it('reads a file exactly at the limit, byte for byte', async () => {
    const path = file('at-limit.bin', 1000);
    const data = await readRegularFile(path, 1000);
    assert.equal(data.length, 1000);
    assert.ok(data.every((b) => b === 7));
  });

  it('refuses a file one byte over the limit, in MB, as invalid_request', async () => {
    const path = file('over.bin', 1001);
    await assert.rejects(readRegularFile(path, 1000, 'The picture'), (e: unknown) => e instanceof AvatarError && e.code === 'invalid_request' && e.message === `The picture ${path} is 0.0 MB; the limit is 0 MB.`);
    const big = file('big.bin', 3 * 1024 * 1024);
    await assert.rejects(readRegularFile(big, 2 * 1024 * 1024), (e: unknown) => e instanceof AvatarError && e.message === `The file ${big} is 3.0 MB; the limit is 2 MB.`);
  });

  it('reads an empty file as no bytes', async () => {
    assert.equal((await readRegularFile(file('empty.bin', 0), 10)).length, 0);
  });

  it('refuses a folder and a pipe as invalid_request', async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    await assert.rejects(readRegularFile(folder, 10, 'The image'), (e: unknown) => e instanceof AvatarError && e.code === 'invalid_request' && e.message === `The image ${folder} is a folder, not a file.`);
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(
      readRegularFile(fifo, 10),
      (e: unknown) => e instanceof AvatarError && e.code === 'invalid_request' && e.message === `The file ${fifo} is not a regular file (a device or a pipe); give the path of a picture file.`,
    );
  });

  // A kernel file says 4096 bytes but holds fewer: the read stops at what is there instead of padding or looping.
  const shortFile = '/sys/kernel/mm/transparent_hugepage/enabled';
  it('returns only the bytes there are when a file is shorter than its size says', { skip: existsSync(shortFile) ? false : `needs ${shortFile}, a /sys file whose size says more than it holds`, timeout: 2_000 }, async () => {
    assert.equal(statSync(shortFile).size, 4096);
    const data = await readRegularFile(shortFile, 8192);
    assert.ok(data.length > 0 && data.length < 4096, `read ${data.length} bytes`);
    assert.ok(!data.includes(0), 'no zero padding');
  });

  // Each read must give its file descriptor back, or a kiosk that runs for weeks runs out of them.
  it('closes the file it opened, on success and on refusal', { skip: existsSync('/proc/self/fd') ? false : 'counts open files in /proc/self/fd (Linux only)' }, async () => {
    const ok = file('fd-ok.bin', 10);
    const over = file('fd-over.bin', 11);
    const before = readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 20; i++) {
      await readRegularFile(ok, 10);
      await assert.rejects(readRegularFile(over, 10));
    }
    assert.ok(readdirSync('/proc/self/fd').length < before + 5, 'file descriptors leaked');
  });
});
