/**
 * The create-request cache (request-cache.ts): the session's create body is built once per options and
 * image file stamp, so a tap does not read and encode the avatar picture again; callers get copies; a local
 * file is stamped (a link or a data: URI is not), and a file that cannot be stamped is built every time, so
 * the builder reports a missing file rather than a cached answer standing in for it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AvatarError } from '../../../electron/core/errors.ts';
import { createCachedRequestBuilder } from '../../../electron/core/request-cache.ts';
import type { StartOptions } from '../../../electron/core/session-types.ts';

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

  describe('with a builder and a file stamp of its own', () => {
    const options: StartOptions = { callMode: 'audio', avatar: { persona: 'p', image: '/img/a.png', name: 'Ava' } };

    it('builds once per options and file stamp, and again when the file changes', async () => {
      let builds = 0;
      let stamp = '10:1';
      const build = createCachedRequestBuilder({
        build: async (o) => {
          builds += 1;
          return { request: { call_mode: o.callMode, avatar: { persona: o.avatar.persona, image_uri: `data:image/png;base64,${builds}` } }, warnings: ['w'] };
        },
        fileStamp: async () => stamp,
      });
      const a = await build(options);
      const b = await build({ ...options });
      assert.equal(builds, 1);
      assert.deepEqual(a, b);
      a.request.avatar.persona = 'mutated';
      assert.equal((await build(options)).request.avatar.persona, 'p', 'callers get copies');
      stamp = '11:2';
      assert.equal((await build(options)).request.avatar.image_uri, 'data:image/png;base64,2');
      await build({ ...options, callMode: 'video' });
      assert.equal(builds, 3);
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
    it('does not cache an unreadable file (the builder reports it)', async () => {
      let builds = 0;
      const build = createCachedRequestBuilder({
        build: async () => {
          builds += 1;
          throw new Error('cannot read');
        },
        fileStamp: async () => null,
      });
      await assert.rejects(build(options));
      await assert.rejects(build(options));
      assert.equal(builds, 2);
    });
    it('builds every time when the file cannot be stamped', async () => {
      const { build, builds } = spy(null);
      await build(start('/img/a.png'));
      await build(start('/img/a.png'));
      assert.equal(builds(), 2);
    });
  });

  describe('which images are stamped', () => {
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
