import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AvatarError } from '../../../electron/core/errors.ts';
import { LANGUAGE_CODES } from '../../../electron/contract.ts';
import {
  apiKeyFromEnv,
  defaultConfig,
  envFieldSource,
  envOverrides,
  overlay,
  DEFAULT_AVATAR_IMAGE,
  keepUnknownKeys,
  unknownConfigKeys,
  DEFAULT_LANGUAGE_INSTRUCTIONS,
  FALLBACK_PERSONA,
  personaFor,
  resolveConfig,
  type ConfigEnv,
} from '../../../electron/kiosk/config.ts';

const ROOT = '/opt/kiosk';
const opts = { appRoot: ROOT, readText: (p: string) => (p === `${ROOT}/resources/demo-persona.txt` ? ' A demo persona. \n' : null) };
const resolve = (raw: unknown, env: ConfigEnv = {}) => resolveConfig(raw, env, opts);

function invalid(raw: unknown, env: ConfigEnv, field: string): void {
  assert.throws(
    () => resolve(raw, env),
    (e: unknown) => {
      assert.ok(e instanceof AvatarError);
      assert.equal(e.code, 'invalid_config');
      assert.equal(e.details?.field, field);
      assert.ok(e.message.includes(`"${field}"`), e.message);
      return true;
    },
  );
}

describe('resolveConfig', () => {
  describe('with an empty file', () => {
    it('fills every default', () => {
      const c = resolve({});
      assert.deepEqual(c, {
        service: { surface: 'direct' },
        callMode: 'video',
        allowModeChoice: true,
        avatar: { imagePath: `${ROOT}/${DEFAULT_AVATAR_IMAGE}`, persona: 'A demo persona.', name: 'Ava', voice: 'Tina', gender: 'female' },
        window: { mode: 'kiosk', width: 1080, height: 1920 },
        rtcEngine: 'auto',
        returnToAttractSeconds: 15,
        countdownWarningSeconds: 30,
        idle: { promptSeconds: 45, hangupSeconds: 15 },
        companion: { shortcut: 'CommandOrControl+Shift+Space', pushToTalk: false, width: 420, height: 640 },
        metrics: { enabled: false, host: '127.0.0.1', port: 9464 },
        cast: [
          { id: 'default', name: 'Ava', imagePath: `${ROOT}/${DEFAULT_AVATAR_IMAGE}`, persona: 'A demo persona.', voice: 'Tina', callMode: 'video', greeting: null, gender: 'female' },
        ],
        prewarm: { mode: 'on-approach', maxAgeSeconds: 90, maxPerHour: 40, prejoin: true },
        presence: { cameraEnabled: true },
        rtc: { cloudProxy: 'off' },
        languages: ['en', 'es', 'fr', 'de', 'zh-Hans', 'ja', 'ar'],
        defaultLanguage: 'en',
        accessibility: { default: false, reachBandPercent: 50 },
        // Safe by default: public, and every create asks for moderation "strict".
        audience: 'public',
        safety: { audience: 'public', requested: 'public', moderation: 'strict', region: null, refusal: null, ageGate: null },
      });
    });
    it('rtc.cloudProxy takes off, udp or tcp and refuses anything else with the field named', () => {
      for (const mode of ['off', 'udp', 'tcp'] as const) assert.equal(resolve({ rtc: { cloudProxy: mode } }).rtc.cloudProxy, mode);
      assert.throws(() => resolve({ rtc: { cloudProxy: 'socks' } }), /rtc\.cloudProxy/);
      // An unknown key beside it is left out and named, never fatal (config.json from a newer version).
      assert.equal(resolve({ rtc: { cloudProxy: 'udp', extra: 1 } }).rtc.cloudProxy, 'udp');
      assert.deepEqual(unknownConfigKeys({ rtc: { cloudProxy: 'udp', extra: 1 } }), ['rtc.extra']);
    });
    it('treats undefined/null content as empty', () => {
      assert.deepEqual(resolve(undefined), resolve({}));
      assert.deepEqual(resolve(null), resolve({}));
    });
    it('falls back to a built-in persona when the persona file is missing', () => {
      assert.equal(resolveConfig({}, {}, { appRoot: ROOT, readText: () => null }).avatar.persona, FALLBACK_PERSONA);
    });
  });

  describe('with values', () => {
    it('keeps them, resolves a relative image path against the app root and keeps URLs/absolute paths', () => {
      const c = resolve({
        service: { surface: 'gateway', gatewayUrl: 'https://gw.example.com/' },
        callMode: 'audio',
        allowModeChoice: false,
        avatar: { imagePath: 'custom/me.webp', persona: 'P', name: 'Zed', voice: 'Max' },
        moderation: 'strict',
        extraMotion: false,
        window: { mode: 'windowed', width: 800, height: 600 },
        rtcEngine: 'agora-web',
        returnToAttractSeconds: 5,
        countdownWarningSeconds: 0,
        encryptedApiKey: 'AAAA',
      });
      assert.equal(c.service.gatewayUrl, 'https://gw.example.com');
      assert.equal(c.avatar.imagePath, `${ROOT}/custom/me.webp`);
      assert.equal(c.avatar.persona, 'P');
      assert.equal(c.moderation, 'strict');
      assert.equal(c.extraMotion, false);
      assert.equal(c.window.mode, 'windowed');
      assert.equal(c.encryptedApiKey, 'AAAA');
      assert.equal(resolve({ avatar: { imagePath: '/abs/x.png' } }).avatar.imagePath, '/abs/x.png');
      assert.equal(resolve({ avatar: { imagePath: 'https://cdn/x.png' } }).avatar.imagePath, 'https://cdn/x.png');
    });
  });

  describe('languages and accessibility', () => {
    it('keeps the languages in order, a default among them, instructions and the reach band', () => {
      const c = resolve({
        languages: ['de', 'en', 'ar'],
        defaultLanguage: 'ar',
        languageInstructions: { de: 'Antworte immer auf Deutsch.' },
        accessibility: { default: true, reachBandPercent: 40 },
      });
      assert.deepEqual(c.languages, ['de', 'en', 'ar']);
      assert.equal(c.defaultLanguage, 'ar');
      assert.deepEqual(c.accessibility, { default: true, reachBandPercent: 40 });
      assert.equal(personaFor(c, 'P. ', 'de'), 'P.\n\nAntworte immer auf Deutsch.');
      assert.equal(personaFor(c, 'P.', 'ar'), 'P.\n\nAlways answer in Arabic.');
    });
    it('refuses a default language that is not offered, an unknown or repeated language, an empty list, a bad band', () => {
      invalid({ languages: ['en', 'fr'], defaultLanguage: 'de' }, {}, 'defaultLanguage');
      invalid({ languages: ['en', 'xx'] }, {}, 'languages.1');
      invalid({ languages: ['en', 'en'] }, {}, 'languages');
      invalid({ languages: [] }, {}, 'languages');
      invalid({ defaultLanguage: 'zh' }, {}, 'defaultLanguage');
      invalid({ languageInstructions: { xx: 'Speak.' } }, {}, 'languageInstructions.xx');
      invalid({ languageInstructions: { de: '' } }, {}, 'languageInstructions.de');
      invalid({ accessibility: { reachBandPercent: 10 } }, {}, 'accessibility.reachBandPercent');
      invalid({ accessibility: { default: 'yes' } }, {}, 'accessibility.default');
    });
    it('has a default instruction for every language the kiosk has catalogues for', () => {
      assert.deepEqual(Object.keys(DEFAULT_LANGUAGE_INSTRUCTIONS).sort(), [...LANGUAGE_CODES].sort());
    });
  });

  describe('environment overrides', () => {
    it('AVATAR_BASE_URL, AVATAR_GATEWAY_URL, AVATAR_SURFACE and KIOSK_WINDOW_MODE win over the file', () => {
      const c = resolve(
        { service: { surface: 'direct', baseUrl: 'https://file.example.com' }, window: { mode: 'kiosk' } },
        {
          AVATAR_BASE_URL: 'https://env.example.com/',
          AVATAR_GATEWAY_URL: 'https://gw.example.com',
          AVATAR_SURFACE: 'gateway',
          KIOSK_WINDOW_MODE: 'windowed',
        },
      );
      assert.deepEqual(c.service, { surface: 'gateway', baseUrl: 'https://env.example.com', gatewayUrl: 'https://gw.example.com' });
      assert.equal(c.window.mode, 'windowed');
      assert.equal(c.window.width, 1080, 'other window fields keep their defaults');
    });
    it('empty variables are ignored', () => {
      assert.deepEqual(resolve({}, { AVATAR_BASE_URL: '', AVATAR_SURFACE: '  ', KIOSK_WINDOW_MODE: '' }), resolve({}));
    });
    it('never puts AVATAR_API_KEY into the config', () => {
      const c = resolve({}, { AVATAR_API_KEY: 'sk-env-secret-123' });
      assert.doesNotMatch(JSON.stringify(c), /sk-env-secret-123/);
    });
    it('a bad override is named with its variable', () => {
      assert.throws(() => resolve({}, { AVATAR_SURFACE: 'carrier-pigeon' }), /service\.surface.*AVATAR_SURFACE/);
      assert.throws(() => resolve({}, { KIOSK_WINDOW_MODE: 'tiny' }), /window\.mode.*KIOSK_WINDOW_MODE/);
      assert.throws(() => resolve({}, { AVATAR_BASE_URL: 'ftp://x' }), /service\.baseUrl.*AVATAR_BASE_URL/);
    });
  });

  describe('bad values', () => {
    it('throw invalid_config naming the field', () => {
      invalid({ callMode: 'hologram' }, {}, 'callMode');
      invalid({ window: { width: 'wide' } }, {}, 'window.width');
      invalid({ window: { height: 100 } }, {}, 'window.height');
      invalid({ window: { mode: 'fullscreen' } }, {}, 'window.mode');
      invalid({ service: { surface: 'direct', baseUrl: 'not a url' } }, {}, 'service.baseUrl');
      invalid({ service: { surface: 'gateway' } }, {}, 'service.gatewayUrl');
      invalid({ rtcEngine: 'webrtc' }, {}, 'rtcEngine');
      invalid({ returnToAttractSeconds: -1 }, {}, 'returnToAttractSeconds');
      invalid({ countdownWarningSeconds: 1.5 }, {}, 'countdownWarningSeconds');
      invalid({ allowModeChoice: 'yes' }, {}, 'allowModeChoice');
      invalid({ avatar: { persona: '' } }, {}, 'avatar.persona');
      invalid({ moderation: 'lenient' }, {}, 'moderation');
      invalid({ encryptedApiKey: 'not base64!' }, {}, 'encryptedApiKey');
    });
    it('a direct service URL over http:// to another machine is refused (the key would go in clear text), from the file or the environment', () => {
      invalid({ service: { baseUrl: 'http://10.0.0.5:8080' } }, {}, 'service.baseUrl');
      invalid({}, { AVATAR_BASE_URL: 'http://avatar.example.com' }, 'service.baseUrl');
      assert.throws(() => resolve({ service: { baseUrl: 'http://10.0.0.5:8080' } }, {}), /service\.baseUrl": must start with https:\/\/ \(got http:\/\/10\.0\.0\.5:8080\)/);
      assert.equal(resolve({ service: { baseUrl: 'http://127.0.0.1:8080' } }, {}).service.baseUrl, 'http://127.0.0.1:8080');
    });
    it('gateway headers come from the policy file only (config.json, which the staff panel writes, cannot set them)', () => {
      const headers = { 'X-Device-Token': 'dev-kiosk-17' };
      const user = { service: { surface: 'gateway', gatewayUrl: 'https://gw.example.com', gatewayHeaders: { 'X-Device-Token': 'from-the-user-file' } } };
      assert.equal(resolve(user, {}).service.gatewayHeaders, undefined);
      assert.deepEqual(resolveConfig(user, {}, { ...opts, policy: { service: { gatewayHeaders: headers } } }).service.gatewayHeaders, headers);
    });
    it('unknown keys (a newer version\'s, or a typo) are never fatal: left out, named for staff, kept by a write', () => {
      // A file written by a newer version, then a rollback: the known settings and the stored key apply.
      const newer = {
        callMode: 'audio',
        encryptedApiKey: 'AAAA',
        window: { mode: 'windowed', width: 800, height: 600, hdr: true },
        avatars: [{ name: 'Ava', imagePath: 'ava.png', mood: 'calm' }],
        futureFeature: { enabled: true },
      };
      const c = resolve(newer);
      assert.equal(c.callMode, 'audio');
      assert.equal(c.encryptedApiKey, 'AAAA');
      assert.deepEqual(c.window, { mode: 'windowed', width: 800, height: 600 });
      assert.deepEqual(unknownConfigKeys(newer), ['window.hdr', 'avatars.0.mood', 'futureFeature']);
      assert.deepEqual(unknownConfigKeys({ callmode: 'audio' }), ['callmode']);
      assert.deepEqual(unknownConfigKeys({ callMode: 'audio', window: { mode: 'kiosk' } }), []);
      // This version writes its own settings; the unknown ones of the file go back in (known ones win).
      const written = keepUnknownKeys(newer, { callMode: 'video', window: { mode: 'kiosk' }, staffPinHash: 'scrypt$x' });
      assert.deepEqual(written, { callMode: 'video', window: { mode: 'kiosk', hdr: true }, staffPinHash: 'scrypt$x', futureFeature: { enabled: true } });
      // A value of the wrong type is still an error with its field named.
      invalid({ window: { width: 'wide', hdr: true } }, {}, 'window.width');
    });
    it('a non-object file is rejected', () => {
      invalid([], {}, '(root)');
      invalid('text', {}, '(root)');
    });
  });

  it('defaultConfig ignores a bad environment rather than failing', () => {
    const c = defaultConfig({ AVATAR_SURFACE: 'nope' }, opts);
    assert.equal(c.service.surface, 'direct');
  });
});


describe('companion.shortcut: an Electron accelerator, or the config is refused naming it', () => {
  const shortcut = (value: string) => resolve({ companion: { shortcut: value } }).companion.shortcut;

  it('takes modifiers joined by "+" before one key: a letter, a digit, F1 to F24, a named key or a punctuation key', () => {
    const keys = ['A', 'z', '0', '9', 'F1', 'F9', 'F10', 'F19', 'F20', 'F24', 'Space', 'Tab', 'Backspace', 'Delete', 'Insert', 'Return', 'Enter', 'Up', 'Down', 'Left', 'Right', 'Home', 'End', 'PageUp', 'PageDown', 'Escape', 'Esc', 'Plus'];
    const punctuation = ['-', '=', ';', "'", ',', '.', '/', '`', '[', ']', '\\'];
    for (const key of [...keys, ...punctuation]) {
      assert.equal(shortcut(key), key);
      assert.equal(shortcut(`Alt+${key}`), `Alt+${key}`);
    }
    for (const modifier of ['Command', 'Cmd', 'Control', 'Ctrl', 'CommandOrControl', 'CmdOrCtrl', 'Alt', 'Option', 'AltGr', 'Shift', 'Super', 'Meta']) {
      assert.equal(shortcut(`${modifier}+K`), `${modifier}+K`);
    }
    assert.equal(shortcut('CommandOrControl+Alt+Shift+F12'), 'CommandOrControl+Alt+Shift+F12');
  });

  it('refuses a modifier without a key, two keys, an unknown key or F-key, and anything around an accelerator', () => {
    for (const value of ['', 'Ctrl', 'Ctrl+', '+A', 'AB', 'Ctrl+AB', 'A+B', 'F0', 'F25', 'F100', 'Fa', 'Hyper+A', 'ctrl+A', 'Ctrl+Ä', 'Ctrl+@', 'Ctrl+ ', ' Ctrl+A', 'Ctrl+A ', 'xCtrl+A', 'Ctrl+Ax', 'Ctrl+Shift+Space+']) {
      invalid({ companion: { shortcut: value } }, {}, 'companion.shortcut');
    }
    assert.throws(() => resolve({ companion: { shortcut: 'Ctrl+' } }), /companion\.shortcut": must be an accelerator such as "CommandOrControl\+Shift\+Space"/);
  });
});

describe('avatars.N.id: 1-64 letters, digits, "-" or "_", starting with a letter or digit', () => {
  const idOf = (id: string) => resolve({ avatars: [{ id, name: 'Kim', imagePath: 'kim.png' }] }).cast[0]!.id;

  it('takes such ids, in either case', () => {
    for (const id of ['k', 'Z', '7', 'kim_2-b', 'A'.repeat(64), `a${'_-'.repeat(31)}9`]) assert.equal(idOf(id), id);
  });

  it('refuses an empty id, a leading "-" or "_", other characters, or more than 64', () => {
    for (const id of ['', '-kim', '_kim', 'kim kim', 'kim.2', 'kim/2', 'kïm', 'A'.repeat(65), 'kim\n']) {
      invalid({ avatars: [{ id, name: 'Kim', imagePath: 'kim.png' }] }, {}, 'avatars.0.id');
    }
    assert.throws(() => resolve({ avatars: [{ id: '-kim', name: 'Kim', imagePath: 'kim.png' }] }), /avatars\.0\.id": must be 1-64 letters, digits, "-" or "_"/);
  });
});

describe('resolveConfig: settings checked against each other', () => {
  it('metrics off this computer need a token; on loopback, or with one, they are served', () => {
    invalid({ metrics: { enabled: true, host: '0.0.0.0' } }, {}, 'metrics.token');
    assert.throws(() => resolve({ metrics: { enabled: true, host: '10.0.0.2' } }), /"metrics\.token": required when metrics\.host \("10\.0\.0\.2"\) is not a loopback address\./);
    assert.equal(resolve({ metrics: { enabled: true, host: '0.0.0.0', token: 't'.repeat(16) } }).metrics.host, '0.0.0.0');
    assert.equal(resolve({ metrics: { enabled: true, host: '127.0.0.1' } }).metrics.enabled, true);
    assert.equal(resolve({ metrics: { enabled: false, host: '0.0.0.0' } }).metrics.enabled, false, 'not served: no token needed');
  });

  it('the default language must be one of the languages offered, and the message lists them', () => {
    assert.throws(() => resolve({ languages: ['en', 'fr'], defaultLanguage: 'de' }), { message: 'Invalid configuration at "defaultLanguage": "de" is not one of languages (en, fr).' });
  });

  it('castSelection picks and orders the members; an id not in the cast is named with the ones there are', () => {
    const avatars = [{ id: 'ava', imagePath: 'a.png', name: 'Ava' }, { id: 'bob', imagePath: 'b.png', name: 'Bob' }, { id: 'kim', imagePath: 'k.png', name: 'Kim' }];
    assert.deepEqual(resolve({ avatars, castSelection: ['kim', 'ava'] }).cast.map((m) => m.id), ['kim', 'ava']);
    assert.deepEqual(resolve({ avatars }).cast.map((m) => m.id), ['ava', 'bob', 'kim']);
    assert.throws(() => resolve({ avatars, castSelection: ['ava', 'zed'] }), { message: 'Invalid configuration at "castSelection.1": there is no avatar "zed" in the cast (ava, bob, kim).' });
    invalid({ avatars, castSelection: ['zed'] }, {}, 'castSelection.0');
  });

  it('two members with the same id are refused, naming the second; a name makes an id, numbered when taken', () => {
    assert.throws(() => resolve({ avatars: [{ id: 'ava', imagePath: 'a.png', name: 'A' }, { id: 'ava', imagePath: 'b.png', name: 'B' }] }), { message: 'Invalid configuration at "avatars.1.id": "ava" is used by two avatars.' });
    const ids = resolve({ avatars: [{ imagePath: 'a.png', name: '--Ava  Marie--' }, { imagePath: 'b.png', name: '***' }, { imagePath: 'c.png', name: 'Ava Marie' }, { imagePath: 'd.png', name: 'X'.repeat(60) }] }).cast.map((m) => m.id);
    assert.deepEqual(ids, ['ava-marie', 'avatar', 'ava-marie-3', 'x'.repeat(48)]);
  });

  it('an image is a URL, a data: URI or an absolute path as given; anything else is relative to the app', () => {
    const image = (imagePath: string) => resolve({ avatar: { imagePath } }).avatar.imagePath;
    assert.equal(image('HTTPS://cdn.example/a.png'), 'HTTPS://cdn.example/a.png');
    assert.equal(image('http://cdn.example/a.png'), 'http://cdn.example/a.png');
    assert.equal(image('data:image/png;base64,AA'), 'data:image/png;base64,AA');
    assert.equal(image('/srv/a.png'), '/srv/a.png');
    assert.equal(image('img/a.png'), `${ROOT}/img/a.png`);
    assert.equal(image('https-logo.png'), `${ROOT}/https-logo.png`);
    assert.equal(image('mydata:x.png'), `${ROOT}/mydata:x.png`);
  });

  it('a persona file that is blank falls back to the built-in persona', () => {
    assert.equal(resolveConfig({}, {}, { appRoot: ROOT, readText: () => ' \n' }).avatar.persona, FALLBACK_PERSONA);
  });
});

describe('the policy layer over the file', () => {
  it('a block the policy sets takes nothing from the file; other blocks merge key by key', () => {
    const user = { schedule: { timeZone: 'UTC', weekly: { sat: ['10:00-12:00'] }, closedDates: ['2026-12-25'] }, window: { mode: 'windowed', width: 800, height: 600 } };
    const policy = { schedule: { timeZone: 'Europe/Berlin', weekly: { mon: ['09:00-17:00'] } }, window: { width: 1024 } };
    const c = resolveConfig(user, {}, { ...opts, policy });
    assert.deepEqual(c.schedule, { timeZone: 'Europe/Berlin', weekly: { mon: ['09:00-17:00'] } });
    assert.deepEqual(c.window, { mode: 'windowed', width: 1024, height: 600 });
  });

  it('a locked block (present with no value) keeps the file\'s out too', () => {
    const c = resolveConfig({ mqtt: { url: 'mqtts://b.example' } }, {}, { ...opts, policy: { mqtt: undefined } });
    assert.equal(c.mqtt, undefined);
  });

  it('the broker and the updates are whole blocks too; a block the policy does not set is the file\'s', () => {
    const user = { mqtt: { url: 'mqtts://mine.example', group: 'lobby' }, update: { url: 'https://u.example', channel: 'beta' } };
    const c = resolveConfig(user, {}, { ...opts, policy: { mqtt: { url: 'mqtts://fleet.example' }, update: { url: 'https://fleet.example/feed' } } });
    assert.deepEqual([c.mqtt?.url, c.mqtt?.group], ['mqtts://fleet.example', undefined]);
    assert.deepEqual([c.update?.url, c.update?.channel], ['https://fleet.example/feed', 'latest']);
    const own = resolveConfig(user, {}, { ...opts, policy: { callMode: 'audio' } });
    assert.deepEqual([own.mqtt?.group, own.update?.channel], ['lobby', 'beta']);
  });

  it('config.json asking for adult where the policy holds the audience: public, and staff are told why', () => {
    const c = resolveConfig({ audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'] } }, {}, { ...opts, policy: { audience: undefined, adult: undefined, region: undefined } });
    assert.equal(c.safety.audience, 'public');
    assert.equal(c.safety.requested, 'adult');
    assert.equal(c.region, undefined, 'the file\'s region is not used either');
    assert.match(c.safety.refusal!, /^config\.json asks for audience "adult", but an administrator's policy file manages this kiosk/);
    const none = resolveConfig({ audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'] } }, {}, { ...opts, policy: { callMode: 'audio' } });
    assert.equal(none.safety.audience, 'adult', 'a policy that does not hold the audience leaves it to the file');
    const policyAdult = resolveConfig({ audience: 'adult' }, {}, { ...opts, policy: { audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'] } } });
    assert.deepEqual([policyAdult.safety.audience, policyAdult.safety.refusal], ['adult', null]);
  });

  it('a policy that holds any one of the audience keys holds all three', () => {
    const user = { audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'], minimumAge: 21 } };
    for (const policy of [{ audience: 'public' }, { region: 'FR' }, { adult: { allowedRegions: ['FR'] } }]) {
      const c = resolveConfig(user, {}, { ...opts, policy });
      assert.deepEqual([c.safety.audience, c.safety.requested], ['public', 'adult'], JSON.stringify(policy));
      assert.equal(c.adult?.minimumAge === 21, false, 'the file\'s adult block is not used');
    }
  });

  it('the policy\'s values are copies: resolving does not share them with the policy', () => {
    const policy = { languages: ['en', 'de'] };
    const c = resolveConfig({}, {}, { ...opts, policy });
    c.languages.push('fr');
    assert.deepEqual(policy.languages, ['en', 'de']);
  });
});

describe('the environment', () => {
  it('AVATAR_API_KEY trimmed; blank is no key', () => {
    assert.equal(apiKeyFromEnv({ AVATAR_API_KEY: ' sk-1\n' }), 'sk-1');
    assert.equal(apiKeyFromEnv({ AVATAR_API_KEY: '  ' }), null);
    assert.equal(apiKeyFromEnv({}), null);
  });

  it('the overrides set, each trimmed, blank ones left out, each with its variable and key', () => {
    assert.deepEqual(envOverrides({ AVATAR_BASE_URL: ' https://a.example ', AVATAR_GATEWAY_URL: '', AVATAR_SURFACE: ' ', KIOSK_WINDOW_MODE: 'windowed' }), [
      { variable: 'AVATAR_BASE_URL', field: 'service.baseUrl', value: 'https://a.example' },
      { variable: 'KIOSK_WINDOW_MODE', field: 'window.mode', value: 'windowed' },
    ]);
    assert.equal(envFieldSource('service.baseUrl', { AVATAR_BASE_URL: 'https://a.example' }), 'AVATAR_BASE_URL');
    assert.equal(envFieldSource('service.baseUrl', {}), null);
    assert.equal(envFieldSource('window.mode', { AVATAR_BASE_URL: 'https://a.example' }), null);
  });

  it('a window mode from the environment keeps the file\'s window size; a service variable keeps the file\'s other service keys', () => {
    const c = resolve({ window: { width: 800, height: 600 }, service: { surface: 'gateway', gatewayUrl: 'https://gw.example' } }, { KIOSK_WINDOW_MODE: 'companion', AVATAR_BASE_URL: 'https://a.example' });
    assert.deepEqual(c.window, { mode: 'companion', width: 800, height: 600 });
    assert.deepEqual(c.service, { surface: 'gateway', gatewayUrl: 'https://gw.example', baseUrl: 'https://a.example' });
  });
});

describe('overlay', () => {
  it('objects merge key by key; anything else, lists too, replaces; the result shares nothing with the top', () => {
    const top = { a: { b: 2, list: [3] }, c: [1], d: null };
    const out = overlay({ a: { b: 1, keep: true, list: [1, 2] }, c: [0, 0], d: { x: 1 }, e: 'base' }, top);
    assert.deepEqual(out, { a: { b: 2, keep: true, list: [3] }, c: [1], d: null, e: 'base' });
    (out.c as number[]).push(9);
    assert.deepEqual(top.c, [1]);
  });
});

describe('resolveConfig: the smaller rules of the file', () => {
  it('service URLs lose their trailing slashes', () => {
    assert.equal(resolve({ service: { baseUrl: 'https://a.example/api///' } }).service.baseUrl, 'https://a.example/api');
    assert.equal(resolve({ service: { surface: 'gateway', gatewayUrl: 'https://gw.example/' } }).service.gatewayUrl, 'https://gw.example');
    invalid({ service: { surface: 'gateway', gatewayUrl: 'ftp://gw.example' } }, {}, 'service.gatewayUrl');
  });

  it('a greeting per language needs at least one', () => {
    assert.throws(() => resolve({ avatars: [{ imagePath: 'a.png', name: 'A', greeting: {} }] }), /"avatars\.0\.greeting": needs at least one language/);
    assert.deepEqual(resolve({ avatars: [{ imagePath: 'a.png', name: 'A', greeting: { de: 'Hallo' } }] }).cast[0]!.greeting, { de: 'Hallo' });
  });

  it('the policy\'s gateway headers: at most eight', () => {
    const headers = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, 'v']));
    const gateway = { service: { surface: 'gateway', gatewayUrl: 'https://gw.example' } };
    assert.equal(Object.keys(resolveConfig(gateway, {}, { ...opts, policy: { service: { gatewayHeaders: headers(8) } } }).service.gatewayHeaders!).length, 8);
    assert.throws(() => resolveConfig(gateway, {}, { ...opts, policy: { service: { gatewayHeaders: headers(9) } } }), /"service\.gatewayHeaders": at most 8 headers/);
  });

  it('a language listed twice is refused with the reason', () => {
    assert.throws(() => resolve({ languages: ['en', 'de', 'en'] }), /"languages": must not list a language twice/);
  });
});

describe('unknown keys kept by a write', () => {
  it('go back under their known parent, in a list too; not when this version removed the parent', () => {
    const current = { window: { mode: 'kiosk', hdr: true }, avatars: [{ name: 'Ava', imagePath: 'a.png', mood: 'calm' }], futureFeature: { on: true } };
    assert.deepEqual(keepUnknownKeys(current, { avatars: [{ name: 'Ava', imagePath: 'b.png' }] }), {
      avatars: [{ name: 'Ava', imagePath: 'b.png', mood: 'calm' }],
      futureFeature: { on: true },
    });
    assert.deepEqual(keepUnknownKeys(current, { window: null, avatars: [] }), { window: null, avatars: [], futureFeature: { on: true } });
  });

  it('are copies: changing the written file changes nothing read', () => {
    const current = { futureFeature: { on: true } };
    const written = keepUnknownKeys(current, {});
    (written.futureFeature as { on: boolean }).on = false;
    assert.deepEqual(current, { futureFeature: { on: true } });
  });

  it('a file that is not an object has none; keys inside values of unknown shape are not looked into', () => {
    assert.deepEqual(unknownConfigKeys(null), []);
    assert.deepEqual(unknownConfigKeys(['callMode']), []);
    assert.deepEqual(unknownConfigKeys({ idle: { promptSeconds: 45, nap: 1 }, callMode: 'audio' }), ['idle.nap']);
    assert.deepEqual(unknownConfigKeys({ avatars: 'none', window: [1] }), []);
  });
});
