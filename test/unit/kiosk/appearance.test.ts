/**
 * The kiosk's appearance (electron/kiosk/appearance.ts): the page's view of the kiosk (PublicConfig, exactly
 * the contract's fields, no secret), and the attract screen's picture loader (local files as data: URLs,
 * sized before they are read; no remote pictures). No network: a stub emulator answers demo mode.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, openSync, closeSync, ftruncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAppearance, readImageAsDataUrl, type AppearanceOptions } from '../../../electron/kiosk/appearance.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { stubKiosk } from '../../helpers/stub-kiosk.ts';

const cfg = (raw: Record<string, unknown> = {}) => resolveConfig({ avatar: { imagePath: '/nonexistent.png', persona: 'P' }, ...raw }, {});

describe('the page’s view of the kiosk (PublicConfig)', () => {
  it('a missing avatar image gives imageDataUrl null, not an error', async () => {
    const { kiosk } = await stubKiosk({ awaitRendererRtc: false, config: cfg(), loadAvatarImage: undefined });
    const r = await kiosk.appearance.getConfig();
    assert.equal(r.ok && r.value.avatar.imageDataUrl, null);
    await kiosk.shutdown();
  });

  it('has exactly the contract fields', async () => {
    const { kiosk } = await stubKiosk({ awaitRendererRtc: false, config: cfg() });
    const r = await kiosk.appearance.getConfig();
    assert.ok(r.ok);
    assert.deepEqual(Object.keys(r.value).sort(), [
      'allowModeChoice', 'apiKeySource', 'apiKeyWeaklyProtected', 'avatar', 'callMode', 'cast', 'companion', 'countdownWarningSeconds',
      'hasApiKey', 'idle', 'maxCallSeconds', 'mode', 'returnToAttractSeconds', 'rtcEngine', 'video', 'windowMode',
      'prewarm', 'presence', // fast start
      'rtc', // the cloud proxy
      'attention', // start-up problems waiting for staff (a count)
      'opening', // opening hours: open or closed, and the next opening
      'hold', // calls held for a moment (an update being installed)
      'service', // whether the service answers (the out-of-order screen while it does not): a status, no reason
      'demoDevices', // synthetic microphone and camera, demo mode only
      'languages', 'defaultLanguage', 'accessibility', // every visitor: languages and accessibility mode
      'safety', // the audience, the age gate, the venue's privacy notice
      'avatarVolume', // how loud the avatar speaks (staff, the fleet)
    ].sort());
    assert.deepEqual(r.value.safety, { audience: 'public', ageGate: null, privacy: { notice: null, url: null, qr: null } });
    assert.deepEqual([r.value.languages, r.value.defaultLanguage, r.value.accessibility], [['en', 'es', 'fr', 'de', 'zh-Hans', 'ja', 'ar'], 'en', { default: false, reachBandPercent: 50 }]);
    assert.deepEqual([r.value.idle, r.value.maxCallSeconds], [{ promptSeconds: 45, hangupSeconds: 15 }, null]);
    assert.deepEqual(Object.keys(r.value.avatar).sort(), ['imageDataUrl', 'name', 'voice']);
    assert.deepEqual(r.value.service, { status: 'demo', ok: true });
    await kiosk.shutdown();
  });
});

describe('the attract screen’s picture loader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-attract-img-'));

  it('reads png/jpg/webp files as data URLs and passes data: URIs through; URLs and unknown types give null', async () => {
    const png = join(dir, 'a.png');
    writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    assert.equal(await readImageAsDataUrl(png), 'data:image/png;base64,iVBORw==');
    writeFileSync(join(dir, 'b.JPG'), Buffer.from([1]));
    assert.match((await readImageAsDataUrl(join(dir, 'b.JPG')))!, /^data:image\/jpeg;base64,/);
    assert.equal(await readImageAsDataUrl('data:image/webp;base64,AAAA'), 'data:image/webp;base64,AAAA');
    assert.equal(await readImageAsDataUrl('https://cdn.example.com/a.png'), null);
    assert.equal(await readImageAsDataUrl(join(dir, 'c.gif')), null);
  });

  it('names each picture type by its extension, whatever its case', async () => {
    const bytes = Buffer.from([1, 2, 3]);
    for (const [name, mime] of [['a.jpeg', 'image/jpeg'], ['b.JPG', 'image/jpeg'], ['c.webp', 'image/webp'], ['d.PNG', 'image/png']] as const) {
      writeFileSync(join(dir, name), bytes);
      assert.equal(await readImageAsDataUrl(join(dir, name)), `data:${mime};base64,AQID`, name);
    }
  });

  it('remote pictures are not loaded (http and https, any case); a local folder merely named like a URL is read', async () => {
    assert.equal(await readImageAsDataUrl('http://cdn.example.com/a.png'), null);
    assert.equal(await readImageAsDataUrl('HTTPS://cdn.example.com/a.png'), null);
    const odd = join(dir, 'https:', 'e.png');
    mkdirSync(join(dir, 'https:'), { recursive: true });
    writeFileSync(odd, Buffer.from([0xff]));
    assert.equal(await readImageAsDataUrl(odd), 'data:image/png;base64,/w==');
  });

  it('a folder or a picture over 20 MB is refused with an error naming the avatar picture', async () => {
    const folder = join(dir, 'folder.png');
    mkdirSync(folder, { recursive: true });
    await assert.rejects(readImageAsDataUrl(folder), { code: 'invalid_request', message: `The avatar picture ${folder} is a folder, not a file.` });
    const huge = join(dir, 'huge.png');
    const fd = openSync(huge, 'w');
    ftruncateSync(fd, 20 * 1024 * 1024 + 1); // sparse: nothing is written
    closeSync(fd);
    await assert.rejects(readImageAsDataUrl(huge), { code: 'invalid_request', message: `The avatar picture ${huge} is 20.0 MB; the limit is 20 MB.` });
    const limit = join(dir, 'limit.png');
    const fd2 = openSync(limit, 'w');
    ftruncateSync(fd2, 20 * 1024 * 1024);
    closeSync(fd2);
    assert.match((await readImageAsDataUrl(limit))!, /^data:image\/png;base64,AAAA/);
  });
});

describe('what the page is told of the kiosk\'s audience and privacy notice', () => {
  it('an adult kiosk\'s gate, the notice per language, and the URL as a QR code the page draws', async () => {
    const { kiosk } = await stubKiosk({
      awaitRendererRtc: false,
      config: cfg({ audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'], ageCheck: 'staff', minimumAge: 21 }, privacy: { url: 'https://venue.example/privacy', notice: { de: 'Hinweis.' } } }),
    });
    const r = await kiosk.appearance.getConfig();
    assert.ok(r.ok);
    const { audience, ageGate, privacy } = r.value.safety;
    assert.deepEqual([audience, ageGate, privacy.notice, privacy.url], ['adult', { minimumAge: 21, ageCheck: 'staff' }, { de: 'Hinweis.' }, 'https://venue.example/privacy']);
    assert.equal(privacy.qr?.size, 29, 'version 3 (29 modules) at error correction M for 29 bytes');
    assert.match(privacy.qr!.path, /^(M\d+ \d+h1v1h-1z)+$/);
    await kiosk.shutdown();
  });

  it('a refused adult setting is a start-up problem staff see (the Status tab, /metrics count)', async () => {
    const { kiosk } = await stubKiosk({ awaitRendererRtc: false, config: cfg({ audience: 'adult', adult: { allowedRegions: ['DE'] } }) });
    assert.deepEqual(kiosk.appearance.attention, [
      { kind: 'policy', code: 'invalid_config', message: 'Audience "adult" needs the venue\'s region (ISO 3166, e.g. "DE"); none is set, so the kiosk runs as public (moderation strict).' },
    ]);
    await kiosk.shutdown();
  });
});

describe('createAppearance: every field of the page\'s view, from its sources', () => {
  const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  function options(over: Partial<AppearanceOptions> = {}, raw: Record<string, unknown> = {}) {
    const logger = recordingLogger();
    const loads: string[] = [];
    const o: AppearanceOptions = {
      config: resolveConfig({ avatar: { imagePath: '/img/ava.png', persona: 'P', name: 'Ava', voice: 'Tina', gender: 'female' }, ...raw }, {}, { appRoot: '/opt/kiosk' }),
      logger,
      loadAvatarImage: async (path) => (loads.push(path), `data:image/png;base64,${Buffer.from(path).toString('base64')}`),
      key: { present: true, source: 'stored', weaklyProtected: 'unknown' },
      connection: { mode: 'direct' },
      availability: { opening: { open: false, nextOpenAt: '2026-06-02T09:00:00.000Z', timeZone: 'Europe/Berlin' }, hold: 'updating' },
      volume: { percent: 35 },
      ...over,
    };
    return { o, logger, loads };
  }

  it('the settings, the key (whether and where, never what), the service, the opening, the hold and the volume', async () => {
    const { o } = options(
      { health: { current: { status: 'refused_key', ok: false, message: 'secret detail', action: 'x', checkedAtMs: 1, nextCheckAtMs: null } }, portrait: false },
      {
        callMode: 'audio',
        allowModeChoice: false,
        window: { mode: 'windowed', width: 800, height: 1200 },
        rtcEngine: 'agora-web',
        returnToAttractSeconds: 20,
        countdownWarningSeconds: 10,
        idle: { promptSeconds: 60, hangupSeconds: 20 },
        maxCallSeconds: 300,
        companion: { pushToTalk: true, shortcut: 'Alt+K' },
        prewarm: { mode: 'always', prejoin: false },
        rtc: { cloudProxy: 'tcp' },
        presence: { cameraEnabled: false },
        languages: ['de', 'en'],
        defaultLanguage: 'de',
        accessibility: { default: true, reachBandPercent: 40 },
      },
    );
    const appearance = await createAppearance(o);
    const r = await appearance.getConfig();
    assert.ok(r.ok);
    assert.deepEqual(r.value, {
      mode: 'direct',
      hasApiKey: true,
      apiKeySource: 'stored',
      apiKeyWeaklyProtected: 'unknown',
      callMode: 'audio',
      allowModeChoice: false,
      avatar: { name: 'Ava', imageDataUrl: `data:image/png;base64,${Buffer.from('/img/ava.png').toString('base64')}`, voice: 'Tina' },
      windowMode: 'windowed',
      rtcEngine: 'agora-web',
      returnToAttractSeconds: 20,
      countdownWarningSeconds: 10,
      idle: { promptSeconds: 60, hangupSeconds: 20 },
      maxCallSeconds: 300,
      cast: [{ id: 'default', name: 'Ava', imageDataUrl: `data:image/png;base64,${Buffer.from('/img/ava.png').toString('base64')}`, callMode: 'audio', greeting: null, gender: 'female' }],
      video: { fit: 'contain' },
      companion: { pushToTalk: true, shortcut: 'Alt+K' },
      prewarm: { mode: 'always', prejoin: false },
      rtc: { cloudProxy: 'tcp' },
      presence: { cameraEnabled: false },
      attention: 0,
      opening: { open: false, nextOpenAt: '2026-06-02T09:00:00.000Z', timeZone: 'Europe/Berlin' },
      hold: 'updating',
      service: { status: 'refused_key', ok: false },
      languages: ['de', 'en'],
      defaultLanguage: 'de',
      accessibility: { default: true, reachBandPercent: 40 },
      safety: { audience: 'public', ageGate: null, privacy: { notice: null, url: null, qr: null } },
      demoDevices: false,
      avatarVolume: 35,
    });
  });

  it('no health monitor: no service field; the video fit follows the configured window when the screen is not given', async () => {
    const { o } = options({}, { window: { mode: 'windowed', width: 800, height: 1200 } });
    const r = await (await createAppearance(o)).getConfig();
    assert.ok(r.ok);
    assert.equal('service' in r.value, false);
    assert.deepEqual(r.value.video, { fit: 'cover' });
    assert.equal(r.value.maxCallSeconds, null);
  });

  it('the synthetic devices only in demo mode, and only when asked for', async () => {
    const config = async (over: Partial<AppearanceOptions>) => {
      const r = await (await createAppearance(options(over).o)).getConfig();
      return r.ok && r.value.demoDevices;
    };
    assert.equal(await config({ connection: { mode: 'demo' }, demoDevices: true }), true);
    assert.equal(await config({ connection: { mode: 'demo' } }), false);
    assert.equal(await config({ connection: { mode: 'direct' }, demoDevices: true }), false);
  });

  it('each picture is read once per configuration; the cast member showing the avatar block\'s picture reuses it', async () => {
    const ava = join(mkdtempSync(join(tmpdir(), 'kiosk-appearance-')), 'ava.png');
    writeFileSync(ava, Buffer.from(PNG.split(',')[1]!, 'base64'));
    const { o, loads } = options({}, { avatar: { imagePath: ava, persona: 'P' }, avatars: [{ id: 'ava', imagePath: ava, name: 'Ava' }, { id: 'kim', imagePath: PNG, name: 'Kim' }] });
    const appearance = await createAppearance(o);
    await appearance.getConfig();
    const r = await appearance.getConfig();
    assert.deepEqual(loads, [ava, PNG]);
    assert.ok(r.ok);
    assert.deepEqual(r.value.cast.map((m) => m.id), ['ava', 'kim']);
    await appearance.reload();
    await appearance.getConfig();
    assert.deepEqual(loads, [ava, PNG, ava, PNG], 'read anew after a reload');
  });

  it('a picture that cannot be read is a warning and no picture; the page still gets its view', async () => {
    const { o, logger } = options({ loadAvatarImage: async () => Promise.reject(new Error('EACCES')) });
    const r = await (await createAppearance(o)).getConfig();
    assert.ok(r.ok);
    assert.equal(r.value.avatar.imageDataUrl, null);
    assert.deepEqual(r.value.cast.map((m) => m.imageDataUrl), [null]);
    assert.deepEqual(logger.lines, [{ level: 'warn', message: 'Could not load the avatar image for the attract screen', data: { error: 'Error: EACCES' } }]);
  });

  it('a bad cast member: logged, left out, its error kept, listed for staff after the start-up items and the safety refusal', async () => {
    const { o, logger } = options(
      { startupAttention: [{ kind: 'key', code: 'timeout', message: 'Keyring.' }] },
      { audience: 'adult', avatars: [{ id: 'ava', imagePath: PNG, name: 'Ava' }, { id: 'bob', imagePath: '/nowhere/bob.png', name: 'Bob' }] },
    );
    const appearance = await createAppearance(o);
    assert.deepEqual(appearance.cast.map((m) => m.id), ['ava']);
    assert.equal(appearance.castError('ava'), undefined);
    assert.match(appearance.castError('bob')!.message, /^The avatar "Bob" \(avatars\.1, id "bob"\) cannot be used: /);
    assert.deepEqual(appearance.castProblems.map((p) => p.code), ['invalid_config']);
    assert.deepEqual(appearance.attention.map((a) => a.kind), ['key', 'policy', 'cast']);
    assert.deepEqual(logger.lines.map((l) => [l.level, l.message]), [['error', 'An avatar of the cast cannot be used']]);
    assert.equal(logger.lines[0]!.data!.message, appearance.castError('bob')!.message);
    const r = await appearance.getConfig();
    assert.ok(r.ok);
    assert.equal(r.value.attention, 3);
  });

  it('a single avatar block is not checked up front (its call says what is wrong)', async () => {
    const { o } = options({}, { avatar: { imagePath: '/nowhere/ava.png', persona: 'P' } });
    const appearance = await createAppearance(o);
    assert.deepEqual(appearance.castProblems, []);
    assert.deepEqual(appearance.cast.map((m) => m.id), ['default']);
  });
});
