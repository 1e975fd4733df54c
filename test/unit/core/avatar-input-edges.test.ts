/**
 * The edges of turning a visitor's avatar settings into the create-session body: each wrong value gets
 * its own message and field (a form points at the input from `details.field`), an absent optional value
 * (undefined or null) is simply left out of the body, and an image is classified as a data: URI, an
 * http(s) link or a local file by its start only. Files are read through an injected `readFile`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCreateRequest, sniffImageType } from '../../../electron/core/avatar-input.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { MAX_BASE64_IMAGE_BYTES } from '../../../electron/core/protocol.ts';
import type { StartOptions } from '../../../electron/core/session-types.ts';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PNG = Uint8Array.from([...PNG_SIGNATURE, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01]);
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const PNG_URI = `data:image/png;base64,${b64(PNG)}`;
const PERSONA = 'A calm museum guide.';
const LINK = 'https://cdn.test/faces/guide.png';

/** Loose input on purpose: the builder must cope with whatever a settings file or a form hands it. */
function build(options: unknown, readFile?: (path: string) => Promise<Uint8Array>) {
  return buildCreateRequest(options as StartOptions, readFile ? { readFile } : {});
}

function withAvatar(avatar: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return { callMode: 'video', ...extra, avatar: { persona: PERSONA, image: LINK, ...avatar } };
}

async function rejection(promise: Promise<unknown>): Promise<AvatarError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AvatarError, `expected an AvatarError, got ${String(error)}`);
    assert.equal(error.code, 'invalid_request');
    return error;
  }
  assert.fail('expected a rejection');
}

/** The exact message and field a person would be shown. */
async function assertRejects(promise: Promise<unknown>, message: string, field: string): Promise<AvatarError> {
  const err = await rejection(promise);
  assert.deepEqual({ message: err.message, field: err.details?.field }, { message, field });
  return err;
}

const readsPng = async () => PNG;

describe('buildCreateRequest edges', () => {
  describe('the options object and call mode', () => {
    it('names missing options (null or not an object) before anything else', async () => {
      await assertRejects(build(null), 'Session options are missing.', 'avatar');
      await assertRejects(build('video'), 'Session options are missing.', 'avatar');
    });
    it('asks for a call mode when it is null or empty, and names an unknown one', async () => {
      for (const callMode of [null, '', undefined]) {
        await assertRejects(build({ ...(withAvatar({}) as object), callMode }), 'Choose a call mode: "audio" or "video".', 'callMode');
      }
      await assertRejects(build({ ...(withAvatar({}) as object), callMode: 'hologram' }), 'Unknown call mode "hologram"; use "audio" or "video".', 'callMode');
    });
    it('names a missing avatar and a persona that is absent, not text, or blank', async () => {
      await assertRejects(build({ callMode: 'audio', avatar: null }), 'The avatar (persona and image) is missing.', 'avatar');
      const persona = 'Describe the avatar\'s persona: who the character is and how it talks.';
      for (const value of [undefined, 42, '   ']) {
        await assertRejects(build(withAvatar({ persona: value })), persona, 'avatar.persona');
      }
    });
  });

  describe('optional settings', () => {
    it('leaves out a name, voice, moderation and extraMotion given as null', async () => {
      const { request, warnings } = await build(withAvatar({ name: null, voice: null }, { moderation: null, extraMotion: null }));
      assert.deepEqual(request, { call_mode: 'video', avatar: { persona: PERSONA, image_uri: LINK } });
      assert.deepEqual(warnings, []);
    });
    it('rejects a name or a voice that is not text, naming the field', async () => {
      await assertRejects(build(withAvatar({ name: 7 })), 'The avatar name must be text.', 'avatar.name');
      await assertRejects(build(withAvatar({ voice: ['Tina'] })), 'The voice must be a voice name.', 'avatar.voice');
    });
    it('sends the trimmed name, voice, moderation and extraMotion', async () => {
      const { request } = await build(withAvatar({ name: '  Ada ', voice: ' Tina ' }, { callMode: 'audio', moderation: 'disabled', extraMotion: false }));
      assert.deepEqual(request, {
        call_mode: 'audio',
        moderation: 'disabled',
        extra_motion: false,
        avatar: { persona: PERSONA, image_uri: LINK, name: 'Ada', voice: 'Tina' },
      });
    });
  });

  describe('image classification by its start', () => {
    it('rejects an image that is not text, and trims a link before passing it through', async () => {
      const choose = 'Choose an avatar image: a PNG, JPEG or WEBP file, an http(s) link, or a data: URI.';
      await assertRejects(build(withAvatar({ image: 12 })), choose, 'avatar.image');
      const { request } = await build(withAvatar({ image: `  ${LINK}\n` }));
      assert.equal(request.avatar.image_uri, LINK);
    });
    it('passes a link through even when its path contains "data:" or "file:"', async () => {
      for (const link of ['https://cdn.test/data:face.png', 'http://cdn.test/file:face.png']) {
        const { request } = await build(withAvatar({ image: link }));
        assert.equal(request.avatar.image_uri, link);
      }
    });
    it('reads a local path that merely contains "http://", "file:" or "ab:" as a file', async () => {
      for (const path of ['/srv/mirror/http://cdn/face.png', '/srv/file:face.png', '/srv/ab:face.png']) {
        const read: string[] = [];
        const { request } = await build(withAvatar({ image: path }), async (p) => (read.push(p), PNG));
        assert.deepEqual({ uri: request.avatar.image_uri, read }, { uri: PNG_URI, read: [path] });
      }
    });
    it('rejects a link that is not a valid address, shortening it past 80 characters', async () => {
      const eighty = `https://[${'a'.repeat(71)}`;
      assert.equal(eighty.length, 80);
      await assertRejects(build(withAvatar({ image: eighty })), `The image link is not a valid address: ${eighty}`, 'avatar.image');
      const long = `${eighty}b`;
      await assertRejects(build(withAvatar({ image: long })), `The image link is not a valid address: ${long.slice(0, 77)}...`, 'avatar.image');
    });
    it('rejects a file: link with a remote host', async () => {
      await assertRejects(build(withAvatar({ image: 'file://fileserver/faces/a.png' })), 'The image file link is not valid: file://fileserver/faces/a.png', 'avatar.image');
    });
    it('rejects another scheme by name', async () => {
      await assertRejects(
        build(withAvatar({ image: 'ftp://cdn.test/a.png' })),
        'Unsupported image link "ftp://cdn.test/a.png"; use an http(s) link, a data: URI or a local file.',
        'avatar.image',
      );
    });
    it('expands "~" and "~/…" to the home folder, and nothing else', async () => {
      const cases: Array<[string, string]> = [
        ['~', homedir()],
        ['~/faces/a.png', `${homedir()}/faces/a.png`],
        ['faces/~/a.png', 'faces/~/a.png'],
        ['~guest/a.png', '~guest/a.png'],
      ];
      for (const [image, expected] of cases) {
        const read: string[] = [];
        await build(withAvatar({ image }), async (p) => (read.push(p), PNG));
        assert.deepEqual(read, [expected], image);
      }
    });
  });

  describe('read failures', () => {
    const path = '/srv/faces/a.png';
    const failing = (error: unknown) => async (): Promise<Uint8Array> => { throw error; };
    const cases: Array<[string, string]> = [
      ['ENOENT', `Image file not found: ${path}`],
      ['ENOTDIR', `Image file not found: ${path}`],
      ['EISDIR', `The image path is a folder, not a file: ${path}`],
      ['EACCES', `The image file cannot be read (permission denied): ${path}`],
      ['EPERM', `The image file cannot be read (permission denied): ${path}`],
      ['EIO', `The image file could not be read: ${path}`],
    ];
    for (const [code, message] of cases) {
      it(`${code} becomes "${message}", keeping the error as its cause`, async () => {
        const error = Object.assign(new Error(code), { code });
        const err = await assertRejects(build(withAvatar({ image: path }), failing(error)), message, 'avatar.image');
        assert.equal(err.cause, error);
      });
    }
    it('copes with a reader that throws null', async () => {
      await assertRejects(build(withAvatar({ image: path }), failing(null)), `The image file could not be read: ${path}`, 'avatar.image');
    });
    it('a validation error without a cause carries none', async () => {
      const err = await rejection(build(withAvatar({ image: 'ftp://x.test/a.png' })));
      assert.equal(err.cause, undefined);
    });
  });

  describe('data: URIs', () => {
    it('accepts a JPEG declared as image/jpeg', async () => {
      const uri = `data:image/jpeg;base64,${b64(JPEG)}`;
      assert.equal((await build(withAvatar({ image: uri }))).request.avatar.image_uri, uri);
    });
    it('rejects a header that only contains data:image/… further along', async () => {
      await assertRejects(
        build(withAvatar({ image: `data:data:image/png;base64,${b64(PNG)}` })),
        'An image data URI must start with "data:image/<png|jpeg|jpg|webp>;base64,".',
        'avatar.image',
      );
    });
    it('rejects Base64 whose length is not a multiple of 4, or with stray characters at either end', async () => {
      for (const data of [`${b64(PNG)}A`, `!!!!${b64(PNG)}`, `${b64(PNG)}!!!!`]) {
        await assertRejects(build(withAvatar({ image: `data:image/png;base64,${data}` })), 'The embedded image is not valid Base64.', 'avatar.image');
      }
    });
    // 27,962,027 Base64 characters decode to 20,971,520 bytes (20 MB exactly) without padding, one less
    // with a trailing "=": the limit is "under 20 MB", so only the first is too large.
    const AT_LIMIT = 27_962_027;
    it('refuses an embedded image of exactly 20 MB, counting padding', async () => {
      await assertRejects(
        build(withAvatar({ image: `data:image/png;base64,${'A'.repeat(AT_LIMIT)}` })),
        'The embedded image is 20.0 MB; Base64 images must be under 20 MB. Use a smaller image or an http(s) link.',
        'avatar.image',
      );
      await assertRejects(
        build(withAvatar({ image: `data:image/png;base64,${'A'.repeat(AT_LIMIT + 1)}=` })),
        'The embedded image is 20.0 MB; Base64 images must be under 20 MB. Use a smaller image or an http(s) link.',
        'avatar.image',
      );
    });
    it('lets 20 MB less one byte (one "=") past the size check', async () => {
      await assertRejects(build(withAvatar({ image: `data:image/png;base64,${'A'.repeat(AT_LIMIT - 1)}=` })), 'The embedded image is not valid Base64.', 'avatar.image');
      await assertRejects(build(withAvatar({ image: `data:image/png;base64,${'A'.repeat(AT_LIMIT - 2)}==` })), 'The embedded image is not valid Base64.', 'avatar.image');
    });
  });

  describe('the default file reader', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'avatar-input-edges-'));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });
    it('refuses a file of exactly 20 MB from its size, before reading it', async () => {
      const path = join(dir, 'huge.png');
      await writeFile(path, PNG);
      await truncate(path, MAX_BASE64_IMAGE_BYTES); // sparse: no 20 MB written
      await assertRejects(build(withAvatar({ image: path })), `The image file ${path} is 20.0 MB; the limit is 20 MB.`, 'avatar.image');
    });
  });
});

describe('sniffImageType at its edges', () => {
  it('recognises signatures of exactly the minimum length', () => {
    assert.equal(sniffImageType(Uint8Array.from(PNG_SIGNATURE)), 'image/png');
    assert.equal(sniffImageType(Uint8Array.from([0xff, 0xd8, 0xff])), 'image/jpeg');
    assert.equal(sniffImageType(Uint8Array.from(Buffer.from('RIFF\0\0\0\0WEBP'))), 'image/webp');
  });
  it('refuses a PNG signature with any one byte wrong', () => {
    for (let i = 0; i < PNG_SIGNATURE.length; i++) {
      const bytes = Uint8Array.from([...PNG_SIGNATURE, 0, 0, 0, 0]);
      bytes[i] = bytes[i]! ^ 0xff;
      assert.equal(sniffImageType(bytes), null, `byte ${i}`);
    }
  });
  it('refuses a JPEG signature with any one byte wrong', () => {
    for (let i = 0; i < 3; i++) {
      const bytes = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]);
      bytes[i] = 0x00;
      assert.equal(sniffImageType(bytes), null, `byte ${i}`);
    }
  });
  it('refuses RIFF…WEBP with RIFF wrong', () => {
    assert.equal(sniffImageType(Uint8Array.from(Buffer.from('RIFX\0\0\0\0WEBPVP8 '))), null);
  });
});
