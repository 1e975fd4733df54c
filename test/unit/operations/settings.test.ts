import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { editableSettingsSchema, type EditableSettings } from '../../../electron/contract.ts';
import { editableFromFile, envManagedKeys, jsonFilePersistence, storePickedImage, validateSettings } from '../../../electron/operations/settings.ts';

const APP_ROOT = '/app';
const opts = { env: {}, appRoot: APP_ROOT, fileExists: (p: string) => p === '/app/resources/demo-avatar.png' || p === '/img/ok.png' };

describe('settings', () => {
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

  it('lists the keys the environment overrides', () => {
    assert.deepEqual(envManagedKeys({ AVATAR_BASE_URL: 'https://x', KIOSK_WINDOW_MODE: 'windowed', AVATAR_SURFACE: ' ' }), ['service.baseUrl', 'window.mode']);
  });

  it('the JSON file store round-trips and writes atomically (no temp files left)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-settings-'));
    const store = jsonFilePersistence(join(dir, 'config.json'));
    assert.deepEqual(store.read(), {});
    await store.write({ callMode: 'audio' });
    assert.deepEqual(store.read(), { callMode: 'audio' });
    assert.deepEqual(readdirSync(dir), ['config.json']);
    writeFileSync(join(dir, 'config.json'), '[1]');
    assert.throws(() => store.read(), /must hold a JSON object/);
  });

  it('a picked image (data: URI) is saved as a file in the data folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-image-'));
    const e = editableFromFile({});
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const out = storePickedImage({ ...e, avatar: { ...e.avatar, imagePath: `data:image/png;base64,${png.toString('base64')}` } }, dir);
    assert.equal(out.avatar.imagePath, join(dir, 'avatar-image.png'));
    assert.deepEqual(readFileSync(out.avatar.imagePath), png);
    assert.equal(storePickedImage(e, dir), e);
  });
});
