/**
 * KioskService without a network: a stub emulator (demo mode never starts a real server here), an
 * injected store and logger. The behaviour against the real emulator is in
 * test/integration/kiosk-service.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHANNELS, MEDIA_ERROR_KINDS, type PublicConfig, type Result } from '../../../electron/contract.ts';
import { createLogger } from '../../../electron/core/log.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { createKioskService, mediaFailureInfo, readImageAsDataUrl } from '../../../electron/kiosk/kiosk-service.ts';
import { stubEmulator } from '../../helpers/stub-emulator.ts';

const KEY = 'sk-unit-SECRET-9f8e7d6c5b4a';

const cfg = (raw: Record<string, unknown> = {}) => resolveConfig({ avatar: { imagePath: '/nonexistent.png', persona: 'P' }, ...raw }, {});

describe('createKioskService (no network)', () => {
  it('demo ↔ direct: the emulator starts only without a key and stops when one is set', async () => {
    const emu = stubEmulator();
    const persisted: (string | null)[] = [];
    const service = await createKioskService({ awaitRendererRtc: false,
      config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }),
      apiKey: null,
      apiKeySource: 'none',
      startEmulator: emu.start,
      persistApiKey: async (k) => void persisted.push(k),
    });
    assert.equal(service.mode, 'demo');
    assert.equal(emu.calls.started, 1);
    const r = await service.setApiKey({ apiKey: KEY });
    assert.equal(r.ok && r.value.mode, 'direct');
    assert.equal(emu.calls.closed, 1);
    assert.equal(service.emulator, null);
    await service.setApiKey({ apiKey: null });
    assert.equal(emu.calls.started, 2);
    assert.deepEqual(persisted, [KEY, null]);
    await service.shutdown();
    assert.equal(emu.calls.closed, 2);
  });

  it('registers the key for log redaction: a log line containing it is masked', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', sink: (l) => lines.push(l) });
    const service = await createKioskService({ awaitRendererRtc: false,
      config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }),
      apiKey: null,
      apiKeySource: 'none',
      startEmulator: stubEmulator().start,
      persistApiKey: async () => {},
      logger,
    });
    await service.setApiKey({ apiKey: KEY });
    logger.info(`oops ${KEY}`, { key2: KEY });
    assert.ok(lines.length > 0);
    assert.doesNotMatch(lines.join('\n'), new RegExp(KEY));
    await service.shutdown();
  });

  it('a missing avatar image gives imageDataUrl null, not an error', async () => {
    const service = await createKioskService({ awaitRendererRtc: false, config: cfg(), apiKey: null, apiKeySource: 'none', startEmulator: stubEmulator().start });
    const r = await service.getConfig();
    assert.equal(r.ok && r.value.avatar.imageDataUrl, null);
    await service.shutdown();
  });

  it('PublicConfig has exactly the contract fields', async () => {
    const service = await createKioskService({ awaitRendererRtc: false, config: cfg(), apiKey: null, apiKeySource: 'none', startEmulator: stubEmulator().start, loadAvatarImage: async () => null });
    const r = await service.getConfig();
    assert.ok(r.ok);
    assert.deepEqual(Object.keys(r.value).sort(), [
      'allowModeChoice', 'apiKeySource', 'apiKeyWeaklyProtected', 'avatar', 'callMode', 'cast', 'companion', 'countdownWarningSeconds',
      'hasApiKey', 'idle', 'maxCallSeconds', 'mode', 'returnToAttractSeconds', 'rtcEngine', 'video', 'windowMode',
      'prewarm', 'presence', // fast start
      'rtc', // the cloud proxy
      'attention', // start-up problems waiting for staff (a count)
      'opening', // opening hours: open or closed, and the next opening
      'hold', // calls held for a moment (an update being installed)
      'demoDevices', // synthetic microphone and camera, demo mode only
      'languages', 'defaultLanguage', 'accessibility', // every visitor: languages and accessibility mode
      'avatarVolume', // how loud the avatar speaks (staff, the fleet)
    ].sort());
    assert.deepEqual([r.value.languages, r.value.defaultLanguage, r.value.accessibility], [['en', 'es', 'fr', 'de', 'zh-Hans', 'ja', 'ar'], 'en', { default: false, reachBandPercent: 50 }]);
    assert.deepEqual([r.value.idle, r.value.maxCallSeconds], [{ promptSeconds: 45, hangupSeconds: 15 }, null]);
    assert.deepEqual(Object.keys(r.value.avatar).sort(), ['imageDataUrl', 'name', 'voice']);
    await service.shutdown();
  });

  it('after shutdown, start and setApiKey answer cancelled; getState still works', async () => {
    const service = await createKioskService({ awaitRendererRtc: false, config: cfg(), apiKey: null, apiKeySource: 'none', startEmulator: stubEmulator().start });
    await service.shutdown();
    const a = await service.start();
    const b = await service.setApiKey({ apiKey: KEY });
    assert.equal(!a.ok && a.error.code, 'cancelled');
    assert.equal(!b.ok && b.error.code, 'cancelled');
    assert.deepEqual(await service.getState(), { ok: true, value: { phase: 'idle' } });
  });
});

describe('mediaFailureInfo', () => {
  it('maps device problems to media_unavailable and RTC problems to rtc_failed, with a human message', () => {
    for (const kind of MEDIA_ERROR_KINDS) {
      const info = mediaFailureInfo(kind);
      const expected = ['microphone_denied', 'camera_denied', 'device_missing'].includes(kind) ? 'media_unavailable' : 'rtc_failed';
      assert.equal(info.code, expected, kind);
      assert.match(info.message, /(call was ended|ended the call|so it was ended)\. /);
    }
  });
});

describe('readImageAsDataUrl', () => {
  it('reads png/jpg/webp files as data URLs and passes data: URIs through; URLs and unknown types give null', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-img-'));
    const png = join(dir, 'a.png');
    writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    assert.equal(await readImageAsDataUrl(png), 'data:image/png;base64,iVBORw==');
    writeFileSync(join(dir, 'b.JPG'), Buffer.from([1]));
    assert.match((await readImageAsDataUrl(join(dir, 'b.JPG')))!, /^data:image\/jpeg;base64,/);
    assert.equal(await readImageAsDataUrl('data:image/webp;base64,AAAA'), 'data:image/webp;base64,AAAA');
    assert.equal(await readImageAsDataUrl('https://cdn.example.com/a.png'), null);
    assert.equal(await readImageAsDataUrl(join(dir, 'c.gif')), null);
  });
});
