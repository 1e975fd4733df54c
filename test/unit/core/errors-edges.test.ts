/**
 * The core's one error type, and the two small file helpers of the HTTP layer that turn trouble into it:
 * `readRegularFile` (bounded read of a configured file) and the create-request cache.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRegularFile } from '../../../electron/core/bounded-read.ts';
import { AvatarError, isAbortError, isAvatarError, throwIfAborted, toAvatarError } from '../../../electron/core/errors.ts';
import { createCachedRequestBuilder } from '../../../electron/core/request-cache.ts';
import type { StartOptions } from '../../../electron/core/session-types.ts';

describe('AvatarError', () => {
  it('is named AvatarError and carries code, message, status and details', () => {
    const error = new AvatarError('server', 'Down.', { status: 503, details: { operation: 'x' } });
    assert.equal(error.name, 'AvatarError');
    assert.equal(error.code, 'server');
    assert.equal(error.message, 'Down.');
    assert.equal(error.status, 503);
    assert.deepEqual(error.details, { operation: 'x' });
    assert.deepEqual(error.toInfo(), { code: 'server', message: 'Down.' });
  });

  it('has a cause only when one is given', () => {
    const without = new AvatarError('internal', 'x');
    assert.equal('cause' in without, false);
    const root = new Error('root');
    assert.equal(new AvatarError('internal', 'x', { cause: root }).cause, root);
    // A falsy cause is still a cause.
    const zero = new AvatarError('internal', 'x', { cause: 0 });
    assert.equal('cause' in zero, true);
    assert.equal(zero.cause, 0);
  });

  it('isAvatarError says exactly whether a value is one', () => {
    assert.equal(isAvatarError(new AvatarError('internal', 'x')), true);
    assert.equal(isAvatarError(new Error('x')), false);
    assert.equal(isAvatarError({ code: 'internal', message: 'x' }), false);
  });
});

describe('toAvatarError', () => {
  it('keeps an AvatarError as it is', () => {
    const error = new AvatarError('timeout', 'slow');
    assert.equal(toAvatarError(error, 'network'), error);
  });

  it('wraps an Error with its message as internal (or the fallback), keeping it as cause', () => {
    const boom = new Error('boom');
    const wrapped = toAvatarError(boom);
    assert.ok(wrapped instanceof AvatarError);
    assert.equal(wrapped.code, 'internal');
    assert.equal(wrapped.message, 'boom');
    assert.equal(wrapped.cause, boom);
    assert.equal(toAvatarError(boom, 'network').code, 'network');
  });

  it('uses the string form of a non-Error, or of an Error without a message', () => {
    const text = toAvatarError('plain words');
    assert.ok(text instanceof AvatarError);
    assert.equal(text.message, 'plain words');
    assert.equal(text.cause, 'plain words');
    assert.equal(toAvatarError(new Error('')).message, 'Error');
    assert.equal(toAvatarError({ message: 'not an Error' }).message, '[object Object]');
  });

  it('turns an abort or a timeout abort into cancelled with the original as cause', () => {
    for (const name of ['AbortError', 'TimeoutError']) {
      const abort = Object.assign(new Error('aborted'), { name });
      const error = toAvatarError(abort, 'network');
      assert.equal(error.code, 'cancelled', name);
      assert.equal(error.message, 'The operation was cancelled.');
      assert.equal(error.cause, abort);
    }
  });
});

describe('isAbortError', () => {
  it('is true only for objects named AbortError or TimeoutError', () => {
    assert.equal(isAbortError(new DOMException('x', 'AbortError')), true);
    assert.equal(isAbortError({ name: 'TimeoutError' }), true);
    assert.equal(isAbortError({ name: 'AbortError' }), true);
    for (const value of [null, undefined, 'AbortError', { name: 'TypeError' }, { name: '' }, {}, new Error('AbortError'), { nom: 'AbortError' }]) {
      assert.equal(isAbortError(value), false, String(value));
    }
  });
});

describe('throwIfAborted', () => {
  it('does nothing without a signal or with a live one', () => {
    throwIfAborted(undefined);
    throwIfAborted(new AbortController().signal);
  });

  it('throws cancelled with the reason as cause once the signal fired', () => {
    const controller = new AbortController();
    const reason = new Error('left');
    controller.abort(reason);
    assert.throws(
      () => throwIfAborted(controller.signal),
      (e: unknown) => e instanceof AvatarError && e.code === 'cancelled' && e.message === 'The operation was cancelled.' && e.cause === reason,
    );
  });
});

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

describe('createCachedRequestBuilder', () => {
  const start = (image: string | undefined): StartOptions => ({ callMode: 'audio', avatar: { persona: 'p', name: 'Ava', ...(image === undefined ? {} : { image }) } as StartOptions['avatar'] });

  function spy(stamp: string | null = '1:1') {
    const stamped: string[] = [];
    let builds = 0;
    const build = createCachedRequestBuilder({
      build: async (o) => {
        builds += 1;
        return { request: { call_mode: o.callMode, avatar: { persona: o.avatar?.persona ?? '', image_uri: `built-${builds}` } }, warnings: ['name is long', `build ${builds}`] };
      },
      fileStamp: async (path) => {
        stamped.push(path);
        return stamp;
      },
    });
    return { build, stamped, builds: () => builds };
  }

  it('stamps a local file path, including one whose name contains a scheme-like word', async () => {
    const { build, stamped } = spy();
    await build(start('/img/a.png'));
    await build(start('./my-data:pic.png'));
    await build(start('photos/https:x.png'));
    assert.deepEqual(stamped, ['/img/a.png', './my-data:pic.png', 'photos/https:x.png']);
  });

  it('does not stamp data:, http: or https: images, nor a missing image', async () => {
    const { build, stamped, builds } = spy();
    for (const image of ['data:image/png;base64,AA', 'http://cdn.test/a.png', 'HTTPS://cdn.test/a.png', undefined]) await build(start(image));
    assert.deepEqual(stamped, []);
    assert.equal(builds(), 4);
  });

  it('tolerates options without an avatar (the builder reports it)', async () => {
    const { build, stamped } = spy();
    const out = await build({ callMode: 'audio' } as unknown as StartOptions);
    assert.equal(out.request.avatar.image_uri, 'built-1');
    assert.deepEqual(stamped, []);
  });

  it('returns the warnings with every copy, cached or not', async () => {
    const { build, builds } = spy();
    const a = await build(start('/img/a.png'));
    const b = await build(start('/img/a.png'));
    assert.equal(builds(), 1);
    assert.deepEqual(a.warnings, ['name is long', 'build 1']);
    assert.deepEqual(b.warnings, ['name is long', 'build 1']);
    a.warnings.push('mine');
    assert.deepEqual((await build(start('/img/a.png'))).warnings, ['name is long', 'build 1']);
  });

  it('builds every time when the file cannot be stamped', async () => {
    const { build, builds } = spy(null);
    await build(start('/img/a.png'));
    await build(start('/img/a.png'));
    assert.equal(builds(), 2);
  });

  describe('with the real file stamp and builder', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'request-cache-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    // A 1×1 PNG: the default builder reads, sniffs and encodes it.
    const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

    it('encodes the file, reuses it while unchanged, and reads it again once replaced', async () => {
      const path = join(dir, 'a.png');
      writeFileSync(path, PNG);
      utimesSync(path, 1_000, 1_000);
      const build = createCachedRequestBuilder();
      const first = await build(start(path));
      assert.equal(first.request.avatar.image_uri, `data:image/png;base64,${PNG.toString('base64')}`);
      assert.equal(first.request.avatar.persona, 'p');
      const again = await build(start(path));
      assert.deepEqual(again, first);
      const bigger = Buffer.concat([PNG, Buffer.from([0])]);
      writeFileSync(path, bigger);
      utimesSync(path, 2_000, 2_000);
      const replaced = await build(start(path));
      assert.equal(replaced.request.avatar.image_uri, `data:image/png;base64,${bigger.toString('base64')}`);
    });

    it('builds again for every call while the file is missing (no stamp, no cache)', async () => {
      let builds = 0;
      const build = createCachedRequestBuilder({
        build: async (o) => {
          builds += 1;
          return { request: { call_mode: o.callMode, avatar: { persona: o.avatar.persona, image_uri: 'x' } }, warnings: [] };
        },
      });
      const missing = start(join(dir, 'never-there.png'));
      await build(missing);
      await build(missing);
      assert.equal(builds, 2);
    });

    it('lets the builder report a missing file every time, never a cached answer', async () => {
      const path = join(dir, 'gone.png');
      writeFileSync(path, PNG);
      const build = createCachedRequestBuilder();
      await build(start(path));
      rmSync(path);
      await assert.rejects(build(start(path)), (e: unknown) => e instanceof AvatarError);
      await assert.rejects(build(start(path)), (e: unknown) => e instanceof AvatarError);
    });
  });
});
