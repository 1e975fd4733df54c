/**
 * Turning a visitor's avatar settings into the create-session body (avatar-input.ts): each wrong value gets
 * its own message and field (a form points at the input from `details.field`), an absent optional value
 * (undefined or null) is simply left out of the body, and an image is classified as a data: URI, an
 * http(s) link or a local file by its start only; a local file is sized before it is read and typed by its
 * magic bytes. Files are read from a temporary folder, or through an injected `readFile`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildCreateRequest, sniffImageType } from '../../../electron/core/avatar-input.ts';
import { readRegularFile } from '../../../electron/core/bounded-read.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { readImageAsDataUrl } from '../../../electron/kiosk/appearance.ts';
import { MAX_BASE64_IMAGE_BYTES, MAX_IMAGE_BYTES } from '../../../electron/core/protocol.ts';
import type { StartOptions } from '../../../electron/core/session-types.ts';
import { rejection } from '../../helpers/rejection.ts';

// Tiny but real image headers.
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PNG = Uint8Array.from([
  ...PNG_SIGNATURE,
  0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, // IHDR length + type
  0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, // 1x1 RGBA
  0x1f, 0x15, 0xc4, 0x89, // CRC
]);
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9]);
const WEBP = Uint8Array.from([...Buffer.from('RIFF'), 0x1a, 0x00, 0x00, 0x00, ...Buffer.from('WEBPVP8 '), 0x0e, 0x00, 0x00, 0x00, 0x30, 0x01, 0x00, 0x9d, 0x01, 0x2a]);
const TEXT = new TextEncoder().encode('hello, I am not a picture at all\n');

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const PNG_URI = `data:image/png;base64,${b64(PNG)}`;
const PERSONA = 'A calm museum guide.';
const LINK = 'https://cdn.test/faces/guide.png';

/** The AvatarError `promise` rejects with, which must be `invalid_request` (a wrong value, not trouble). */
async function invalidRequest(promise: Promise<unknown>): Promise<AvatarError> {
  const err = await rejection(promise);
  assert.equal(err.code, 'invalid_request');
  return err;
}

/** The field a person is pointed at, and a message matching `pattern`. */
async function assertInvalid(fn: () => Promise<unknown>, field: string, pattern: RegExp): Promise<AvatarError> {
  const err = await invalidRequest(fn());
  assert.equal(err.details?.field, field);
  assert.match(err.message, pattern);
  return err;
}

/** The exact message and field a person would be shown. */
async function assertRejects(promise: Promise<unknown>, message: string, field: string): Promise<AvatarError> {
  const err = await invalidRequest(promise);
  assert.deepEqual({ message: err.message, field: err.details?.field }, { message, field });
  return err;
}

function options(image: string, extra: Partial<StartOptions> = {}, avatar: Partial<StartOptions['avatar']> = {}): StartOptions {
  return { callMode: 'video', ...extra, avatar: { persona: PERSONA, image, ...avatar } };
}

/** Loose input on purpose: the builder must cope with whatever a settings file or a form hands it. */
function build(options: unknown, readFile?: (path: string) => Promise<Uint8Array>) {
  return buildCreateRequest(options as StartOptions, readFile ? { readFile } : {});
}

function withAvatar(avatar: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return { callMode: 'video', ...extra, avatar: { persona: PERSONA, image: LINK, ...avatar } };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('sniffImageType', () => {
  it('recognises PNG, JPEG and WEBP by their magic bytes', () => {
    assert.equal(sniffImageType(PNG), 'image/png');
    assert.equal(sniffImageType(JPEG), 'image/jpeg');
    assert.equal(sniffImageType(WEBP), 'image/webp');
  });
  it('recognises signatures of exactly the minimum length', () => {
    assert.equal(sniffImageType(Uint8Array.from(PNG_SIGNATURE)), 'image/png');
    assert.equal(sniffImageType(Uint8Array.from([0xff, 0xd8, 0xff])), 'image/jpeg');
    assert.equal(sniffImageType(Uint8Array.from(Buffer.from('RIFF\0\0\0\0WEBP'))), 'image/webp');
  });
  it('returns null for text, empty input, truncated headers and other formats', () => {
    assert.equal(sniffImageType(TEXT), null);
    assert.equal(sniffImageType(new Uint8Array()), null);
    assert.equal(sniffImageType(PNG.subarray(0, 7)), null);
    assert.equal(sniffImageType(JPEG.subarray(0, 2)), null);
    assert.equal(sniffImageType(WEBP.subarray(0, 11)), null);
    assert.equal(sniffImageType(new TextEncoder().encode('GIF89a\x01\x00\x01\x00')), null);
    assert.equal(sniffImageType(new TextEncoder().encode('RIFF\x00\x00\x00\x00WAVEfmt ')), null);
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

describe('buildCreateRequest', () => {
  let dir: string;
  let pngPath: string;
  let jpegAsPng: string;
  let webpPath: string;
  let textAsPng: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'avatar-input-'));
    pngPath = join(dir, 'face.png');
    jpegAsPng = join(dir, 'really-a-jpeg.png');
    webpPath = join(dir, 'face.webp');
    textAsPng = join(dir, 'notes.png');
    await writeFile(pngPath, PNG);
    await writeFile(jpegAsPng, JPEG);
    await writeFile(webpPath, WEBP);
    await writeFile(textAsPng, TEXT);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('with a local image file', () => {
    it('sends a PNG as a data:image/png;base64 URI with the exact bytes', async () => {
      const { request, warnings } = await buildCreateRequest(options(pngPath));
      assert.equal(request.avatar.image_uri, `data:image/png;base64,${b64(PNG)}`);
      assert.deepEqual(Buffer.from(request.avatar.image_uri.split(',')[1]!, 'base64'), Buffer.from(PNG));
      assert.deepEqual(warnings, []);
    });
    it('types a JPEG named .png as image/jpeg (magic bytes win over the extension)', async () => {
      const { request } = await buildCreateRequest(options(jpegAsPng));
      assert.equal(request.avatar.image_uri, `data:image/jpeg;base64,${b64(JPEG)}`);
    });
    it('sends a WEBP as image/webp', async () => {
      const { request } = await buildCreateRequest(options(webpPath));
      assert.equal(request.avatar.image_uri, `data:image/webp;base64,${b64(WEBP)}`);
    });
    it('accepts a file:// URL', async () => {
      const { request } = await buildCreateRequest(options(pathToFileURL(pngPath).href));
      assert.equal(request.avatar.image_uri, `data:image/png;base64,${b64(PNG)}`);
    });
    it('rejects a text file named .png, naming the file', async () => {
      await assertInvalid(() => buildCreateRequest(options(textAsPng)), 'avatar.image', new RegExp(`${escape(textAsPng)} is not a PNG, JPEG or WEBP`));
    });
    it('rejects a missing file with "not found" and the path', async () => {
      const missing = join(dir, 'nope.png');
      const err = await assertInvalid(() => buildCreateRequest(options(missing)), 'avatar.image', /not found/);
      assert.ok(err.message.includes(missing));
    });
    it('rejects a folder', async () => {
      await assertInvalid(() => buildCreateRequest(options(dir)), 'avatar.image', /is a folder/);
    });
    it('rejects a file of 20 MB or more (read through an injected readFile)', async () => {
      const big = new Uint8Array(MAX_BASE64_IMAGE_BYTES);
      big.set(PNG);
      let readPath = '';
      const err = await assertInvalid(
        () => buildCreateRequest(options('/imaginary/huge.png'), { readFile: async (p) => ((readPath = p), big) }),
        'avatar.image',
        /20\.0 MB.*under 20 MB/,
      );
      assert.equal(readPath, '/imaginary/huge.png');
      assert.ok(err.message.includes('/imaginary/huge.png'));
    });
    it('accepts a file one byte under 20 MB', async () => {
      const justUnder = new Uint8Array(MAX_BASE64_IMAGE_BYTES - 1);
      justUnder.set(PNG);
      const { request } = await buildCreateRequest(options('/imaginary/ok.png'), { readFile: async () => justUnder });
      assert.ok(request.avatar.image_uri.startsWith('data:image/png;base64,iVBORw0KGgo'));
    });
    it('encodes only the view of a Uint8Array that is a slice of a larger buffer', async () => {
      const backing = new Uint8Array(PNG.length + 20).fill(0x41);
      backing.set(PNG, 10);
      const view = backing.subarray(10, 10 + PNG.length);
      const { request } = await buildCreateRequest(options('/imaginary/view.png'), { readFile: async () => view });
      assert.equal(request.avatar.image_uri, `data:image/png;base64,${b64(PNG)}`);
    });
    it('maps a permission error to invalid_request', async () => {
      const eacces = Object.assign(new Error('EACCES'), { code: 'EACCES' });
      await assertInvalid(
        () => buildCreateRequest(options('/imaginary/locked.png'), { readFile: async () => Promise.reject(eacces) }),
        'avatar.image',
        /permission denied/,
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

  describe('when the image file cannot be read', () => {
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
  });

  describe('with an http(s) link', () => {
    it('passes the link through unchanged without reading anything', async () => {
      const link = 'https://cdn.example.test/people/ava.png?size=large';
      const { request } = await buildCreateRequest(options(link), { readFile: async () => assert.fail('must not read a file') });
      assert.equal(request.avatar.image_uri, link);
      const http = await buildCreateRequest(options('http://127.0.0.1:9/a.jpg'));
      assert.equal(http.request.avatar.image_uri, 'http://127.0.0.1:9/a.jpg');
    });
    it('rejects an unsupported scheme', async () => {
      await assertInvalid(() => buildCreateRequest(options('ftp://h.test/a.png')), 'avatar.image', /Unsupported image link/);
    });
    it('rejects another scheme by name', async () => {
      await assertRejects(
        build(withAvatar({ image: 'ftp://cdn.test/a.png' })),
        'Unsupported image link "ftp://cdn.test/a.png"; use an http(s) link, a data: URI or a local file.',
        'avatar.image',
      );
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
  });

  describe('classifying the image by its start only', () => {
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
  });

  describe('with a data: URI', () => {
    it('accepts a valid PNG data URI unchanged', async () => {
      const uri = `data:image/png;base64,${b64(PNG)}`;
      assert.equal((await buildCreateRequest(options(uri))).request.avatar.image_uri, uri);
    });
    it('accepts image/jpg as an alias for JPEG and image/webp', async () => {
      const jpg = `data:image/jpg;base64,${b64(JPEG)}`;
      assert.equal((await buildCreateRequest(options(jpg))).request.avatar.image_uri, jpg);
      const webp = `data:image/webp;base64,${b64(WEBP)}`;
      assert.equal((await buildCreateRequest(options(webp))).request.avatar.image_uri, webp);
    });
    it('accepts a JPEG declared as image/jpeg', async () => {
      const uri = `data:image/jpeg;base64,${b64(JPEG)}`;
      assert.equal((await build(withAvatar({ image: uri }))).request.avatar.image_uri, uri);
    });
    it('rejects a non-image type', async () => {
      await assertInvalid(() => buildCreateRequest(options(`data:text/plain;base64,${b64(PNG)}`)), 'avatar.image', /must start with "data:image\//);
    });
    it('rejects an unsupported image type (gif)', async () => {
      await assertInvalid(() => buildCreateRequest(options(`data:image/gif;base64,${b64(PNG)}`)), 'avatar.image', /Unsupported image type "image\/gif"/);
    });
    it('rejects a bad prefix (no ;base64, or no comma)', async () => {
      await assertInvalid(() => buildCreateRequest(options(`data:image/png,${b64(PNG)}`)), 'avatar.image', /must start with/);
      await assertInvalid(() => buildCreateRequest(options('data:image/png;base64')), 'avatar.image', /must start with/);
    });
    it('rejects a header that only contains data:image/… further along', async () => {
      await assertRejects(
        build(withAvatar({ image: `data:data:image/png;base64,${b64(PNG)}` })),
        'An image data URI must start with "data:image/<png|jpeg|jpg|webp>;base64,".',
        'avatar.image',
      );
    });
    it('rejects bytes that do not match the declared type', async () => {
      await assertInvalid(
        () => buildCreateRequest(options(`data:image/png;base64,${b64(JPEG)}`)),
        'avatar.image',
        /declared as image\/png but its content is image\/jpeg/,
      );
    });
    it('rejects bytes that are not an image at all', async () => {
      await assertInvalid(() => buildCreateRequest(options(`data:image/png;base64,${b64(TEXT.subarray(0, 30))}`)), 'avatar.image', /not a PNG, JPEG or WEBP/);
    });
    it('rejects invalid Base64 and empty data', async () => {
      await assertInvalid(() => buildCreateRequest(options('data:image/png;base64,iVBO!!Rw0K')), 'avatar.image', /not valid Base64/);
      await assertInvalid(() => buildCreateRequest(options('data:image/png;base64,')), 'avatar.image', /not valid Base64/);
    });
    it('rejects Base64 whose length is not a multiple of 4, or with stray characters at either end', async () => {
      for (const data of [`${b64(PNG)}A`, `!!!!${b64(PNG)}`, `${b64(PNG)}!!!!`]) {
        await assertRejects(build(withAvatar({ image: `data:image/png;base64,${data}` })), 'The embedded image is not valid Base64.', 'avatar.image');
      }
    });
    it('rejects a data URI that decodes to 20 MB or more', async () => {
      const header = b64(PNG.subarray(0, 24)); // 32 characters, no padding
      const data = header + 'A'.repeat(Math.ceil((MAX_BASE64_IMAGE_BYTES * 4) / 3) - header.length + 4);
      await assertInvalid(() => buildCreateRequest(options(`data:image/png;base64,${data}`)), 'avatar.image', /must be under 20 MB/);
    });
    it('accepts a data URI that decodes to one byte under 20 MB', async () => {
      // 27 962 028 characters with "==" padding decode to 20 971 519 bytes.
      const header = b64(PNG.subarray(0, 24));
      const total = 27_962_028;
      const data = header + 'A'.repeat(total - header.length - 2) + '==';
      const uri = `data:image/png;base64,${data}`;
      const { request } = await buildCreateRequest(options(uri));
      assert.equal(request.avatar.image_uri.length, uri.length);
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
    it('rejects an invalid or missing call mode with details.field callMode', async () => {
      await assertInvalid(() => buildCreateRequest(options('https://h.test/a.png', { callMode: 'hologram' as never })), 'callMode', /Unknown call mode "hologram"/);
      await assertInvalid(() => buildCreateRequest(options('https://h.test/a.png', { callMode: undefined as never })), 'callMode', /Choose a call mode/);
    });
    it('rejects a missing avatar', async () => {
      await assertInvalid(() => buildCreateRequest({ callMode: 'video' } as StartOptions), 'avatar', /avatar/);
    });
    it('names a missing avatar and a persona that is absent, not text, or blank', async () => {
      await assertRejects(build({ callMode: 'audio', avatar: null }), 'The avatar (persona and image) is missing.', 'avatar');
      const persona = 'Describe the avatar\'s persona: who the character is and how it talks.';
      for (const value of [undefined, 42, '   ']) {
        await assertRejects(build(withAvatar({ persona: value })), persona, 'avatar.persona');
      }
    });
    it('rejects an empty or whitespace persona with details.field avatar.persona', async () => {
      for (const persona of ['', '   \n\t']) {
        await assertInvalid(() => buildCreateRequest(options('https://h.test/a.png', {}, { persona })), 'avatar.persona', /persona/);
      }
    });
    it('trims the persona', async () => {
      const { request } = await buildCreateRequest(options('https://h.test/a.png', {}, { persona: '  A pirate.  ' }));
      assert.equal(request.avatar.persona, 'A pirate.');
    });
    it('rejects a missing image with details.field avatar.image', async () => {
      await assertInvalid(() => buildCreateRequest(options('   ')), 'avatar.image', /Choose an avatar image/);
    });
    it('a validation error without a cause carries none', async () => {
      const err = await invalidRequest(build(withAvatar({ image: 'ftp://x.test/a.png' })));
      assert.equal(err.cause, undefined);
    });
  });

  describe('optional settings', () => {
    it('builds the minimal request body', async () => {
      const { request, warnings } = await buildCreateRequest(options('https://h.test/a.png', { callMode: 'audio' }));
      assert.deepEqual(request, { call_mode: 'audio', avatar: { persona: 'A calm museum guide.', image_uri: 'https://h.test/a.png' } });
      assert.deepEqual(warnings, []);
    });
    it('warns (does not fail) on a name of 21 characters and keeps the name', async () => {
      const name = 'A'.repeat(21);
      const { request, warnings } = await buildCreateRequest(options('https://h.test/a.png', {}, { name }));
      assert.equal(request.avatar.name, name);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /21 characters; 20 or fewer are recommended/);
    });
    it('does not warn on a name of exactly 20 characters, counting emoji as one character', async () => {
      const name = '😀'.repeat(20); // 40 UTF-16 units, 20 characters
      const { request, warnings } = await buildCreateRequest(options('https://h.test/a.png', {}, { name }));
      assert.equal(request.avatar.name, name);
      assert.deepEqual(warnings, []);
    });
    it('omits an empty name and an empty or whitespace voice (service default)', async () => {
      const { request } = await buildCreateRequest(options('https://h.test/a.png', {}, { name: '  ', voice: '  ' }));
      assert.equal('name' in request.avatar, false);
      assert.equal('voice' in request.avatar, false);
    });
    it('leaves out a name, voice, moderation and extraMotion given as null', async () => {
      const { request, warnings } = await build(withAvatar({ name: null, voice: null }, { moderation: null, extraMotion: null }));
      assert.deepEqual(request, { call_mode: 'video', avatar: { persona: PERSONA, image_uri: LINK } });
      assert.deepEqual(warnings, []);
    });
    it('passes a voice through trimmed', async () => {
      const { request } = await buildCreateRequest(options('https://h.test/a.png', {}, { voice: ' my-clone ' }));
      assert.equal(request.avatar.voice, 'my-clone');
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
    it('rejects a name or a voice that is not text, naming the field', async () => {
      await assertRejects(build(withAvatar({ name: 7 })), 'The avatar name must be text.', 'avatar.name');
      await assertRejects(build(withAvatar({ voice: ['Tina'] })), 'The voice must be a voice name.', 'avatar.voice');
    });
    it('passes moderation and extraMotion through only when set (false included)', async () => {
      const none = await buildCreateRequest(options('https://h.test/a.png'));
      assert.equal('moderation' in none.request, false);
      assert.equal('extra_motion' in none.request, false);
      const set = await buildCreateRequest(options('https://h.test/a.png', { moderation: 'strict', extraMotion: false }));
      assert.equal(set.request.moderation, 'strict');
      assert.equal(set.request.extra_motion, false);
    });
    it('rejects an unknown moderation value and a non-boolean extraMotion', async () => {
      await assertInvalid(() => buildCreateRequest(options('https://h.test/a.png', { moderation: 'off' as never })), 'moderation', /Unknown moderation setting "off"/);
      await assertInvalid(() => buildCreateRequest(options('https://h.test/a.png', { extraMotion: 'yes' as never })), 'extraMotion', /true or false/);
    });
  });
});

describe('local image files are sized before they are read', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'avatar-bounded-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a pipe (reading it would block) without reading it', async () => {
    const fifo = join(dir, 'pipe.png');
    execFileSync('mkfifo', [fifo]);
    await assertInvalid(() => buildCreateRequest(options(fifo)), 'avatar.image', /^The image file .*pipe\.png is not a regular file \(a device or a pipe\); give the path of a picture file\.$/);
    await assert.rejects(readImageAsDataUrl(fifo), (e: unknown) => e instanceof AvatarError && /is not a regular file/.test(e.message));
  });
  it('refuses a file over the limit from its size (a sparse 30 MB file: nothing is read)', async () => {
    const huge = join(dir, 'huge.png');
    await writeFile(huge, PNG);
    await truncate(huge, 30 * 1024 * 1024);
    await assertInvalid(() => buildCreateRequest(options(huge)), 'avatar.image', /^The image file .*huge\.png is 30\.0 MB; the limit is 20 MB\.$/);
  });
  it('refuses a file of exactly 20 MB from its size, before reading it', async () => {
    const path = join(dir, 'huge.png');
    await writeFile(path, PNG);
    await truncate(path, MAX_BASE64_IMAGE_BYTES); // sparse: no 20 MB written
    await assertRejects(build(withAvatar({ image: path })), `The image file ${path} is 20.0 MB; the limit is 20 MB.`, 'avatar.image');
  });
  it('the attract screen picture: a device, or a file over its limit, is refused before reading', async () => {
    const device = join(dir, 'zero.png');
    await symlink('/dev/zero', device);
    await assert.rejects(readImageAsDataUrl(device), (e: unknown) => e instanceof AvatarError && /zero\.png is not a regular file/.test(e.message));
    const big = join(dir, 'big.png');
    await writeFile(big, PNG);
    await truncate(big, 60 * 1024 * 1024);
    await assert.rejects(readImageAsDataUrl(big), (e: unknown) => e instanceof AvatarError && /big\.png is 60\.0 MB; the limit is 20 MB/.test(e.message));
    assert.equal(await readRegularFile(big, MAX_IMAGE_BYTES).then(() => 'read', (e: AvatarError) => e.message.replace(big, 'F')), 'The file F is 60.0 MB; the limit is 50 MB.');
  });
});
