/**
 * The staff panel's settings (settings.ts): the editable view of config.json (never the key ciphertext or
 * the PIN hash), the exact sentence staff read for each kind of bad input and which field it is put under,
 * what a save keeps or drops and when it needs a restart, the checks on the avatar picture, the picked
 * picture's size and type, the keys the environment locks, and the JSON file store.
 */
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { editableSettingsSchema, type EditableSettings } from '../../../electron/contract.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import {
  editableFromFile,
  envManagedKeys,
  humanIssue,
  jsonFilePersistence,
  storePickedImage,
  validateSettings,
  writeFileAtomic,
  type ValidateOptions,
} from '../../../electron/operations/settings.ts';

const APP_ROOT = '/app';
const DEMO_IMAGE = '/app/resources/demo-avatar.png';
const defaults = editableFromFile({});
/** The demo picture and /img/ok.png exist; no other file does. */
const opts: ValidateOptions = { env: {}, appRoot: APP_ROOT, fileExists: (p) => p === DEMO_IMAGE || p === '/img/ok.png' };

/** What the panel would send with the form filled in by hand (values the IPC shape check lets through or not). */
function withFields(fields: Record<string, unknown>): EditableSettings {
  return { ...defaults, ...fields } as EditableSettings;
}

function firstIssue(result: { success: boolean; error?: { issues: z.core.$ZodIssue[] } }): z.core.$ZodIssue {
  assert.equal(result.success, false);
  return result.error!.issues[0]!;
}

describe('settings', () => {
  describe('the editable view', () => {
    it('the editable view of an empty file is every key with its default, and passes the IPC schema', () => {
      const e = editableFromFile({});
      assert.deepEqual(e, {
        service: { surface: 'direct' },
        callMode: 'video',
        allowModeChoice: true,
        avatar: { imagePath: 'resources/demo-avatar.png', name: 'Ava', voice: 'Tina' },
        audience: 'public',
        window: { mode: 'kiosk', width: 1080, height: 1920 },
        rtcEngine: 'auto',
        returnToAttractSeconds: 15,
        countdownWarningSeconds: 30,
        idle: { promptSeconds: 45, hangupSeconds: 15 },
      });
      assert.equal(editableSettingsSchema.safeParse(e).success, true);
    });
    it('the editable view shows every optional setting the file has, a false switch included', () => {
      const file = {
        service: { surface: 'gateway', baseUrl: 'https://api.example.com', gatewayUrl: 'https://gw.example.com' },
        avatar: { imagePath: '/img/ok.png', persona: 'Be brief.', name: 'Nova', voice: 'Tina' },
        moderation: 'strict',
        extraMotion: false,
        maxCallSeconds: 300,
        audience: 'adult',
        region: 'AT',
        adult: { allowedRegions: ['AT'] },
      };
      assert.deepEqual(editableFromFile(file), {
        service: { surface: 'gateway', baseUrl: 'https://api.example.com', gatewayUrl: 'https://gw.example.com' },
        callMode: 'video',
        allowModeChoice: true,
        avatar: { imagePath: '/img/ok.png', persona: 'Be brief.', name: 'Nova', voice: 'Tina' },
        moderation: 'strict',
        extraMotion: false,
        audience: 'adult',
        region: 'AT',
        adult: { allowedRegions: ['AT'], minimumAge: 18, ageCheck: 'self' },
        window: { mode: 'kiosk', width: 1080, height: 1920 },
        rtcEngine: 'auto',
        returnToAttractSeconds: 15,
        countdownWarningSeconds: 30,
        idle: { promptSeconds: 45, hangupSeconds: 15 },
        maxCallSeconds: 300,
      });
    });
    it('never shows the key ciphertext or the PIN hash, and keeps them when saving', () => {
      const current = { encryptedApiKey: 'QUJDRA==', staffPinHash: 'scrypt$x', avatar: { name: 'Zed' } };
      const e = editableFromFile(current);
      assert.ok(!JSON.stringify(e).includes('QUJDRA'));
      assert.ok(!JSON.stringify(e).includes('scrypt'));
      const v = validateSettings(current, { ...e, avatar: { ...e.avatar, name: 'Nova' } }, opts);
      assert.equal(v.ok, true);
      if (v.ok) {
        assert.equal(v.file.encryptedApiKey, 'QUJDRA==');
        assert.equal(v.file.staffPinHash, 'scrypt$x');
        assert.equal(v.config.avatar.name, 'Nova');
        assert.equal(v.restartRequired, false);
      }
    });
  });

  describe('the words staff read for each bad value', () => {
    it('answers one human message per bad field', () => {
      const e = editableFromFile({});
      const bad: EditableSettings = {
        ...e,
        service: { surface: 'direct', baseUrl: 'ftp://example.com' },
        avatar: { ...e.avatar, name: '' },
        window: { mode: 'kiosk', width: 100.5, height: 100 },
        idle: { promptSeconds: 5, hangupSeconds: 500 },
        maxCallSeconds: 600,
      };
      const v = validateSettings({}, bad, opts);
      assert.deepEqual(v, {
        ok: false,
        fieldErrors: {
          'service.baseUrl': 'Service URL must be an http:// or https:// address.',
          'avatar.name': 'Avatar name cannot be empty.',
          'window.width': 'Window width must be a whole number.',
          'window.height': 'Window height must be at least 320.',
          'idle.promptSeconds': 'Seconds of silence before "Are you still there?" must be at least 10.',
          'idle.hangupSeconds': 'Seconds the prompt waits before hanging up must be at most 120.',
          maxCallSeconds: 'Maximum call length (seconds) must be at most 599.',
        },
      });
    });
    it('names every field by its label, with one sentence per kind of problem', () => {
      const v = validateSettings(
        {},
        withFields({
          service: { surface: 'cloud', gatewayUrl: 'nope' },
          callMode: 'chat',
          allowModeChoice: 'yes',
          avatar: { imagePath: '', name: 5, voice: '' },
          moderation: 'lenient',
          extraMotion: 'no',
          window: { mode: 'kiosk', width: '1080', height: 1920 },
          returnToAttractSeconds: 0,
        }),
        opts,
      );
      assert.deepEqual(v, {
        ok: false,
        fieldErrors: {
          'service.surface': 'Service surface must be one of: direct, gateway.',
          'service.gatewayUrl': 'Gateway URL must be an http:// or https:// address.',
          callMode: 'Call mode must be one of: audio, video.',
          allowModeChoice: 'Let visitors choose video or voice must be on or off.',
          'avatar.imagePath': 'Avatar image cannot be empty.',
          'avatar.name': 'Avatar name must be text.',
          'avatar.voice': 'Voice cannot be empty.',
          moderation: 'Moderation must be one of: strict, disabled.',
          extraMotion: 'Extra motion must be on or off.',
          'window.width': 'Window width must be a number.',
          returnToAttractSeconds: 'Seconds before returning to the welcome screen must be at least 1.',
        },
      });
    });
    it('says what is too long, what is not a setting, what has no shape, and passes a rule\'s own reason on', () => {
      const v = validateSettings(
        {},
        withFields({
          service: { surface: 'direct', baseUrl: 'http://example.com', region: 'eu' },
          avatar: { ...defaults.avatar, name: 'x'.repeat(65), persona: 5 },
          window: { mode: 'fullscreen', width: 1080, height: 1920 },
          idle: null,
          surprise: 1,
        }),
        opts,
      );
      assert.deepEqual(v, {
        ok: false,
        fieldErrors: {
          // The cleartext rule explains itself; the label goes in front of its reason.
          'service.baseUrl':
            'Service URL: must start with https:// (got http://example.com): with http:// the API key would cross the network unencrypted; http:// is only for this computer (localhost, 127.0.0.1, ::1).',
          // A key the kiosk does not know is named by its own dotted path, nested or at the top.
          'service.region': 'service.region is not a setting this kiosk knows.',
          surprise: 'surprise is not a setting this kiosk knows.',
          'avatar.persona': 'Persona must be text.',
          'avatar.name': 'Avatar name must be at most 64 characters.',
          'window.mode': 'Window mode must be one of: kiosk, windowed, companion.',
          idle: 'idle is missing or has the wrong type.',
        },
      });
    });
    it('cross-field rules: a gateway needs its URL; the image must exist; the warning fits in the call', () => {
      const e = editableFromFile({});
      assert.deepEqual(validateSettings({}, { ...e, service: { surface: 'gateway', gatewayUrl: '  ' } }, opts), {
        ok: false,
        fieldErrors: { 'service.gatewayUrl': 'Gateway URL is required when the surface is "gateway".' },
      });
      assert.deepEqual(validateSettings({}, { ...e, avatar: { ...e.avatar, imagePath: '/img/missing.png' } }, opts), {
        ok: false,
        fieldErrors: { 'avatar.imagePath': 'Avatar image: no file at /img/missing.png.' },
      });
      assert.deepEqual(validateSettings({}, { ...e, avatar: { ...e.avatar, imagePath: '/img/doc.pdf' } }, opts), {
        ok: false,
        fieldErrors: { 'avatar.imagePath': 'Avatar image must be a PNG, JPEG or WEBP file.' },
      });
      assert.deepEqual(validateSettings({}, { ...e, maxCallSeconds: 60, countdownWarningSeconds: 60 }, opts), {
        ok: false,
        fieldErrors: { countdownWarningSeconds: 'Countdown warning (seconds before the end) must be shorter than the call (60 s).' },
      });
    });
    it('a damaged key ciphertext kept from the file is named with its key and "wrong format", not as an address', () => {
      assert.deepEqual(validateSettings({ encryptedApiKey: 'not base64!' }, defaults, opts), {
        ok: false,
        fieldErrors: { encryptedApiKey: 'encryptedApiKey has the wrong format.' },
      });
    });
    it('words the issues the form cannot produce today the same way (longer minimums, the engine\'s label)', () => {
      const short = firstIssue(z.string().min(16).safeParse('short'));
      assert.equal(humanIssue('metrics.token', short), 'metrics.token must be at least 16 characters.');
      const engine = firstIssue(z.enum(['auto', 'agora-web', 'agora-native']).safeParse('fast'));
      assert.equal(humanIssue('rtcEngine', engine), 'Audio/video engine must be one of: auto, agora-web, agora-native.');
      const notText = firstIssue(z.string().safeParse(7));
      assert.equal(humanIssue('avatar.voice', notText), 'Voice must be text.');
      const big = firstIssue(z.number().max(10).safeParse(11));
      assert.equal(humanIssue('maxCallSeconds', big), 'Maximum call length (seconds) must be at most 10.');
    });
  });

  describe('what a save keeps', () => {
    it('the file to write is the form plus only the hidden keys the current file has', () => {
      const next = { ...defaults, callMode: 'audio' as const };
      const plain = validateSettings({}, next, opts);
      assert.ok(plain.ok);
      // No hidden key appears (not even as undefined) when the file had none.
      assert.deepEqual(plain.file, next);

      const cast = [{ imagePath: '/img/ok.png', name: 'Kim' }];
      const kept = validateSettings({ staffPinHash: 'scrypt$x', avatars: cast }, next, opts);
      assert.ok(kept.ok);
      assert.deepEqual(kept.file, { ...next, staffPinHash: 'scrypt$x', avatars: cast });
    });
    it('a form without the audience keys (an older panel) keeps the file\'s audience, adult rules and region; the privacy notice is always kept', () => {
      const { audience: _audience, ...next } = { ...defaults, callMode: 'audio' as const };
      const safety = {
        audience: 'adult',
        region: 'DE',
        adult: { allowedRegions: ['DE'], ageCheck: 'staff' },
        privacy: { url: 'https://venue.example/privacy', notice: { en: 'The venue is responsible.' } },
      };
      const kept = validateSettings(safety, next, opts);
      assert.ok(kept.ok);
      assert.deepEqual(kept.file, { ...next, ...safety });
      assert.equal(kept.config.safety.audience, 'adult');
      assert.deepEqual(kept.config.privacy, safety.privacy);
    });
    it('staff make a kiosk adult from the form where no policy file exists; under a policy file the policy\'s audience wins and staff are told why', () => {
      const form = { ...defaults, audience: 'adult' as const, region: 'AT', adult: { allowedRegions: ['AT', 'DE'], minimumAge: 18, ageCheck: 'staff' as const } };
      const free = validateSettings({}, form, opts);
      assert.ok(free.ok);
      assert.deepEqual([free.file.audience, free.file.region, free.file.adult], ['adult', 'AT', { allowedRegions: ['AT', 'DE'], minimumAge: 18, ageCheck: 'staff' }]);
      assert.deepEqual(free.config.safety.ageGate, { minimumAge: 18, ageCheck: 'staff' });
      const managed = validateSettings({}, form, { ...opts, policy: { audience: undefined, adult: undefined, region: undefined } });
      assert.ok(managed.ok);
      assert.equal(managed.config.safety.audience, 'public');
      assert.match(managed.config.safety.refusal ?? '', /^config\.json asks for audience "adult", but an administrator's policy file manages this kiosk/);
      // An emptied region box is "not set", not an invalid code.
      const empty = validateSettings({}, { ...form, region: ' ' }, opts);
      assert.ok(empty.ok);
      assert.equal('region' in empty.file, false);
    });
    it('says a restart is needed only for the window', () => {
      const e = editableFromFile({});
      const apply = (next: EditableSettings) => {
        const v = validateSettings({}, next, opts);
        assert.equal(v.ok, true, JSON.stringify(v));
        return v.ok && v.restartRequired;
      };
      assert.equal(apply({ ...e, callMode: 'audio', idle: { promptSeconds: 30, hangupSeconds: 10 }, maxCallSeconds: 120 }), false);
      assert.equal(apply({ ...e, window: { ...e.window, mode: 'windowed' } }), true);
    });
    it('never switches the audio/video engine (the native one gives the page Node.js): config.json or the policy only', () => {
      const e = editableFromFile({});
      for (const rtcEngine of ['agora-native', 'agora-web'] as const) {
        assert.deepEqual(validateSettings({}, { ...e, rtcEngine }, opts), {
          ok: false,
          fieldErrors: { rtcEngine: 'The audio/video engine can only be changed in config.json or the policy file (the native engine gives the kiosk page Node.js).' },
        });
      }
      // The engine config.json already names is kept as it is.
      const native = editableFromFile({ rtcEngine: 'agora-native' });
      assert.equal(native.rtcEngine, 'agora-native');
      const v = validateSettings({ rtcEngine: 'agora-native' }, { ...native, callMode: 'audio' }, opts);
      assert.ok(v.ok && v.file.rtcEngine === 'agora-native');
    });
    it('an empty persona or URL box means "not set"', () => {
      const e = editableFromFile({});
      const v = validateSettings({}, { ...e, service: { surface: 'direct', baseUrl: '' }, avatar: { ...e.avatar, persona: '   ' } }, opts);
      assert.equal(v.ok, true);
      if (v.ok) {
        assert.deepEqual(v.file.service, { surface: 'direct' });
        assert.equal((v.file.avatar as Record<string, unknown>).persona, undefined);
      }
    });
    it('a persona with words is saved and used, not dropped as an empty box', () => {
      const v = validateSettings({}, { ...defaults, avatar: { ...defaults.avatar, persona: 'Be brief.' } }, opts);
      assert.ok(v.ok);
      assert.deepEqual(v.file.avatar, { ...defaults.avatar, persona: 'Be brief.' });
      assert.equal(v.config.avatar.persona, 'Be brief.');
    });
    it('resolves relative paths against the app folder and lets the policy win over the form', () => {
      const v = validateSettings({}, defaults, { ...opts, policy: { callMode: 'audio' } });
      assert.ok(v.ok);
      assert.equal(v.config.avatar.imagePath, DEMO_IMAGE);
      assert.equal(v.config.callMode, 'audio');
      // The policy is not written into the file staff save.
      assert.equal(v.file.callMode, 'video');
    });
    it('a policy the saved form cannot live with is refused under the field the policy check names', () => {
      assert.deepEqual(validateSettings({}, defaults, { ...opts, policy: { service: { surface: 'gateway' } } }), {
        ok: false,
        fieldErrors: { 'service.gatewayUrl': 'Invalid configuration at "service.gatewayUrl": required when service.surface is "gateway".' },
      });
    });
    it('an unexpected failure while resolving is still answered, under "(settings)"', () => {
      // A value that cannot be copied makes the resolver fail with a plain error that names no field.
      const v = validateSettings({}, defaults, { ...opts, policy: { callMode: Symbol('audio') } });
      assert.equal(v.ok, false);
      if (!v.ok) {
        assert.deepEqual(Object.keys(v.fieldErrors), ['(settings)']);
        assert.match(v.fieldErrors['(settings)']!, /could not be cloned/);
      }
    });
    it('a form without the window block (an older panel) saves with the window defaults', () => {
      const { window: _window, ...withoutWindow } = defaults;
      const v = validateSettings({}, withoutWindow as EditableSettings, opts);
      assert.ok(v.ok);
      assert.deepEqual(v.config.window, { mode: 'kiosk', width: 1080, height: 1920 });
    });
  });

  describe('the avatar picture', () => {
    function verdict(imagePath: string, fileExists: (p: string) => boolean = () => false) {
      const v = validateSettings({}, { ...defaults, avatar: { ...defaults.avatar, imagePath } }, { ...opts, fileExists });
      return v.ok ? 'ok' : v.fieldErrors;
    }
    const anyFile = () => true;

    it('takes a data: URI or an http(s) address without looking for a file', () => {
      const looked: string[] = [];
      const record = (p: string) => (looked.push(p), false);
      assert.equal(verdict('data:image/png;base64,iVBORw0KGgo=', record), 'ok');
      assert.equal(verdict('https://cdn.example.com/ava.png', record), 'ok');
      assert.equal(verdict('http://cdn.example.com/ava.png', record), 'ok');
      assert.deepEqual(looked, []);
    });

    it('refuses an http(s) address that is not a URL', () => {
      assert.deepEqual(verdict('https://'), { 'avatar.imagePath': 'Avatar image: the address is not a valid URL.' });
    });

    it('refuses another scheme, whatever its length', () => {
      const message = { 'avatar.imagePath': 'Avatar image must be a file, an http(s) address or a data: URI.' };
      assert.deepEqual(verdict('ftp://example.com/ava.png', anyFile), message);
      assert.deepEqual(verdict('x:ava.png', anyFile), message);
    });

    it('a scheme-looking text inside a path is just part of a file name', () => {
      assert.equal(verdict('images/ava:1.png', (p) => p === '/app/images/ava:1.png'), 'ok');
      assert.deepEqual(verdict('photos/http://cdn/ava.png'), { 'avatar.imagePath': 'Avatar image: no file at /app/photos/http:/cdn/ava.png.' });
      assert.deepEqual(verdict('photos/data:image/png;base64,AAAA'), { 'avatar.imagePath': 'Avatar image must be a PNG, JPEG or WEBP file.' });
    });

    it('a Windows drive path is a file, not a scheme', () => {
      assert.equal(verdict('C:/Kiosk/ava.png', anyFile), 'ok');
      assert.equal(verdict('D:\\Kiosk\\ava.png', anyFile), 'ok');
    });

    it('takes PNG, JPEG and WEBP files in any letter case, and nothing else', () => {
      for (const path of ['/img/a.png', '/img/b.jpg', '/img/c.jpeg', '/img/d.webp', '/img/e.JPEG', '/img/f.PNG']) {
        assert.equal(verdict(path, anyFile), 'ok', path);
      }
      for (const path of ['/img/g.gif', '/img/jpg']) {
        assert.deepEqual(verdict(path, anyFile), { 'avatar.imagePath': 'Avatar image must be a PNG, JPEG or WEBP file.' }, path);
      }
    });
  });

  describe('the keys the environment locks', () => {
    it('lists the keys the environment overrides', () => {
      assert.deepEqual(envManagedKeys({ AVATAR_BASE_URL: 'https://x', KIOSK_WINDOW_MODE: 'windowed', AVATAR_SURFACE: ' ' }), ['service.baseUrl', 'window.mode']);
    });
    it('lists each variable that has a value, in form order', () => {
      assert.deepEqual(envManagedKeys({}), []);
      assert.deepEqual(envManagedKeys({ AVATAR_BASE_URL: '  ', AVATAR_GATEWAY_URL: ' ', AVATAR_SURFACE: '\t', KIOSK_WINDOW_MODE: ' ' }), []);
      assert.deepEqual(envManagedKeys({ AVATAR_BASE_URL: 'https://a', AVATAR_GATEWAY_URL: 'https://g', AVATAR_SURFACE: 'gateway', KIOSK_WINDOW_MODE: 'windowed' }), [
        'service.baseUrl',
        'service.gatewayUrl',
        'service.surface',
        'window.mode',
      ]);
      assert.deepEqual(envManagedKeys({ AVATAR_GATEWAY_URL: 'https://g' }), ['service.gatewayUrl']);
      assert.deepEqual(envManagedKeys({ AVATAR_SURFACE: 'direct' }), ['service.surface']);
    });
  });

  describe('files', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'kiosk-settings-'));
    });
    afterEach(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    function picked(type: string, bytes: Buffer): EditableSettings {
      return { ...defaults, avatar: { ...defaults.avatar, imagePath: `data:image/${type};base64,${bytes.toString('base64')}` } };
    }
    function refusal(fn: () => unknown): { code: string; message: string } {
      try {
        fn();
      } catch (error) {
        assert.ok(error instanceof AvatarError);
        return { code: error.code, message: error.message };
      }
      assert.fail('expected a refusal');
    }

    it('a picked image (data: URI) is saved as a file in the data folder', () => {
      const e = editableFromFile({});
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
      const out = storePickedImage({ ...e, avatar: { ...e.avatar, imagePath: `data:image/png;base64,${png.toString('base64')}` } }, dir);
      assert.equal(out.avatar.imagePath, join(dir, 'avatar-image.png'));
      assert.deepEqual(readFileSync(out.avatar.imagePath), png);
      assert.equal(storePickedImage(e, dir), e);
    });
    it('a picked JPEG is saved as .jpg, whatever the case of its type; WEBP as .webp', () => {
      const bytes = Buffer.from([0xff, 0xd8, 0xff, 1, 2]);
      assert.equal(storePickedImage(picked('jpeg', bytes), dir).avatar.imagePath, join(dir, 'avatar-image.jpg'));
      assert.equal(storePickedImage(picked('JPG', bytes), dir).avatar.imagePath, join(dir, 'avatar-image.jpg'));
      assert.equal(storePickedImage(picked('WebP', bytes), dir).avatar.imagePath, join(dir, 'avatar-image.webp'));
      assert.deepEqual(readdirSync(dir).sort(), ['avatar-image.jpg', 'avatar-image.webp']);
      assert.deepEqual(readFileSync(join(dir, 'avatar-image.webp')), bytes);
    });
    it('an address that only contains a data: URI is left as it is', () => {
      const next = { ...defaults, avatar: { ...defaults.avatar, imagePath: 'https://cdn.example/data:image/png;base64,iVBORw0K' } };
      assert.equal(storePickedImage(next, dir), next);
      assert.deepEqual(readdirSync(dir), []);
    });
    it('refuses an empty picture and one of 20 MB or more, and writes nothing', () => {
      assert.deepEqual(refusal(() => storePickedImage(picked('png', Buffer.alloc(0)), dir)), { code: 'invalid_request', message: 'The picked image is empty.' });
      const limit = 20 * 1024 * 1024;
      assert.deepEqual(refusal(() => storePickedImage(picked('png', Buffer.alloc(limit)), dir)), {
        code: 'invalid_request',
        message: 'The picked image must be under 20 MB.',
      });
      assert.deepEqual(readdirSync(dir), []);
    });
    it('keeps a picture well within the limit whole (1 MB)', () => {
      const bytes = Buffer.alloc(1024 * 1024, 7);
      const out = storePickedImage(picked('png', bytes), dir);
      assert.equal(out.avatar.imagePath, join(dir, 'avatar-image.png'));
      assert.equal(readFileSync(out.avatar.imagePath).byteLength, bytes.byteLength);
    });
    it('the JSON file store round-trips and writes atomically (no temp files left)', async () => {
      const store = jsonFilePersistence(join(dir, 'config.json'));
      assert.deepEqual(store.read(), {});
      await store.write({ callMode: 'audio' });
      assert.deepEqual(store.read(), { callMode: 'audio' });
      assert.deepEqual(readdirSync(dir), ['config.json']);
      writeFileSync(join(dir, 'config.json'), '[1]');
      assert.throws(() => store.read(), /must hold a JSON object/);
    });
    it('the JSON store refuses a file that holds no object', () => {
      const path = join(dir, 'config.json');
      const store = jsonFilePersistence(path);
      for (const text of ['42', 'null', '"text"']) {
        writeFileSync(path, text);
        assert.deepEqual(refusal(() => store.read()), { code: 'invalid_config', message: `${path} must hold a JSON object.` }, text);
      }
    });
    it('a save keeps the settings a newer version wrote, and ends the file with a newline', async () => {
      const path = join(dir, 'config.json');
      writeFileSync(path, JSON.stringify({ callMode: 'video', futureKey: { on: true } }));
      await jsonFilePersistence(path).write({ callMode: 'audio' });
      assert.equal(readFileSync(path, 'utf8'), '{\n  "callMode": "audio",\n  "futureKey": {\n    "on": true\n  }\n}\n');
    });
    it('a save over an unreadable file replaces it', async () => {
      const path = join(dir, 'config.json');
      writeFileSync(path, '{ not json');
      await jsonFilePersistence(path).write({ callMode: 'audio' });
      assert.deepEqual(jsonFilePersistence(path).read(), { callMode: 'audio' });
    });
    it('an atomic write leaves no file descriptor open', { skip: !existsSync('/proc/self/fd') && 'needs /proc' }, () => {
      const before = readdirSync('/proc/self/fd').length;
      for (let i = 0; i < 5; i++) writeFileAtomic(join(dir, 'nested', 'file.txt'), `round ${i}`);
      assert.equal(readdirSync('/proc/self/fd').length, before);
      assert.equal(readFileSync(join(dir, 'nested', 'file.txt'), 'utf8'), 'round 4');
    });
  });
});
