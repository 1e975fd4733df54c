/**
 * Managed configuration: where the policy file is, its precedence over the user's file and
 * the environment, key-by-key rejection of bad settings (never a crash), and the managed (locked) keys.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultConfig, resolveConfig } from '../../../electron/kiosk/config.ts';
import { loadPolicy, managedKeys, parsePolicy, policyLocks, policyPath } from '../../../electron/fleet/managed-config.ts';

const opts = { appRoot: '/opt/kiosk', readText: () => 'A persona.' };

describe('policyPath', () => {
  it('AVATAR_KIOSK_POLICY wins; else the per-OS system location', () => {
    assert.equal(policyPath({ AVATAR_KIOSK_POLICY: ' /srv/p.json ' }, 'linux'), '/srv/p.json');
    assert.equal(policyPath({}, 'linux'), '/etc/avatar-kiosk/policy.json');
    assert.equal(policyPath({}, 'darwin'), '/Library/Application Support/AvatarKiosk/policy.json');
    assert.equal(policyPath({ ProgramData: 'D:\\Data' }, 'win32'), 'D:\\Data\\AvatarKiosk\\policy.json');
    assert.equal(policyPath({}, 'win32'), 'C:\\ProgramData\\AvatarKiosk\\policy.json');
  });
});

describe('managedKeys', () => {
  it('lists dotted leaf keys, sorted; a list is one key', () => {
    assert.deepEqual(managedKeys({ window: { mode: 'kiosk', width: 800 }, callMode: 'audio', avatars: [{ name: 'A', imagePath: 'a.png' }], video: {} }), [
      'avatars',
      'callMode',
      'video',
      'window.mode',
      'window.width',
    ]);
    assert.deepEqual(managedKeys({}), []);
  });
});

describe('parsePolicy: languages and accessibility', () => {
  it('accepts the language settings and the reach band; a bad block is refused whole and stays locked', () => {
    const layer = parsePolicy({
      languages: ['en', 'de'],
      defaultLanguage: 'de',
      accessibility: { default: true, reachBandPercent: 5 },
      languageInstructions: { de: 'Antworte immer auf Deutsch.', xx: 'no' },
    });
    assert.deepEqual(layer.policy, { languages: ['en', 'de'], defaultLanguage: 'de', accessibility: undefined, languageInstructions: undefined });
    assert.deepEqual(layer.managedKeys, ['accessibility', 'defaultLanguage', 'languageInstructions', 'languages']);
    assert.deepEqual(layer.refusedBlocks, ['accessibility', 'languageInstructions']);
    assert.equal(layer.problems.length, 2);
    assert.match(layer.problems[0]!, /^Policy block "accessibility" was refused whole \(at "accessibility.reachBandPercent": /);
    assert.match(layer.problems[1]!, /^Policy block "languageInstructions" was refused whole \(at "languageInstructions.xx": /);
  });
});

describe('parsePolicy: block by block', () => {
  it('keeps the good blocks and refuses each bad one whole, naming the setting at fault', () => {
    const layer = parsePolicy(
      {
        callMode: 'audio',
        window: { mode: 'fullscreen', width: 900 },
        metrics: { enabled: true, port: 70000 },
        avatar: { name: 'Max', colour: 'red' },
        idle: { promptSeconds: 60 },
        encryptedApiKey: 'c2VjcmV0',
        nonsense: 1,
      },
      '/etc/avatar-kiosk/policy.json',
    );
    assert.deepEqual(layer.policy, { avatar: undefined, callMode: 'audio', idle: { promptSeconds: 60 }, metrics: undefined, window: undefined });
    assert.deepEqual(layer.managedKeys, ['avatar', 'callMode', 'idle.promptSeconds', 'metrics', 'window']);
    assert.deepEqual(layer.problems, [
      'Policy block "avatar" was refused whole (at "avatar.colour": unknown setting); it stays locked with none of its settings applied.',
      'Policy setting "encryptedApiKey" was ignored: a policy cannot hold an API key (use AVATAR_API_KEY).',
      'Policy block "metrics" was refused whole (at "metrics.port": Too big: expected number to be <=65535); it stays locked with none of its settings applied.',
      'Policy setting "nonsense" was ignored: unknown setting.',
      'Policy block "window" was refused whole (at "window.mode": Invalid option: expected one of "kiosk"|"windowed"|"companion"); it stays locked with none of its settings applied.',
    ]);
  });

  it('an mqtt or schedule block applies whole, and the user\'s file adds nothing to it; a refused one locks the user\'s out', () => {
    const mqtt = { url: 'mqtts://broker.example', kioskId: 'lobby-1', username: 'lobby-1', password: 'pw', caFile: '/etc/ca.pem', topicPrefix: 'venue', queueLimit: 50 };
    const schedule = { timeZone: 'Europe/Berlin', weekly: { mon: ['09:00-17:00'] } };
    const layer = parsePolicy({ mqtt, schedule });
    assert.deepEqual(layer.problems, []);
    assert.deepEqual(layer.managedKeys, ['mqtt', 'schedule']);
    const user = { mqtt: { url: 'mqtts://other.example', clientId: 'sneaky' }, schedule: { timeZone: 'UTC', weekly: { sat: ['00:00-24:00'] } } };
    const c = resolveConfig(user, {}, { ...opts, policy: layer.policy });
    assert.deepEqual(c.mqtt, mqtt);
    assert.deepEqual(c.schedule, schedule);

    const refused = parsePolicy({ schedule: { timeZone: 'Mars/Olympus', weekly: {} } });
    assert.deepEqual(refused.refusedBlocks, ['schedule']);
    assert.equal(resolveConfig(user, {}, { ...opts, policy: refused.policy }).schedule, undefined);
    assert.equal(policyLocks(refused.policy, 'schedule'), true);
    assert.equal(policyLocks(layer.policy, 'avatar.name'), false);
    assert.equal(policyLocks(parsePolicy({ avatar: { persona: 'P' } }).policy, 'avatar.persona'), true);
    assert.equal(policyLocks(parsePolicy({ avatar: { persona: 'P' } }).policy, 'avatar.name'), false);
  });

  it('a non-object policy is ignored as a whole; __proto__ keys never reach any prototype', () => {
    assert.deepEqual(parsePolicy([1, 2], 'p.json').problems, ['The policy file p.json must hold a JSON object; it was ignored.']);
    const layer = parsePolicy(JSON.parse('{"__proto__": {"polluted": true}, "callMode": "audio"}'));
    assert.deepEqual(layer.managedKeys, ['callMode']);
    assert.deepEqual(layer.problems, ['Policy setting "__proto__" was ignored: unknown setting.']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

/** What a policy file that exists holds even when it says nothing of the audience (safety-config.ts). */
const AUDIENCE_LOCKED = { audience: undefined, adult: undefined, region: undefined };
const AUDIENCE_KEYS = ['adult', 'audience', 'region'];

describe('loadPolicy', () => {
  const files: Record<string, string> = { '/p/good.json': '\uFEFF{"callMode":"audio"}', '/p/bad.json': '{"callMode": ' };
  const readText = (path: string) => {
    if (path in files) return files[path]!;
    if (path === '/p/locked.json') throw Object.assign(new Error('denied'), { code: 'EACCES' });
    throw Object.assign(new Error('missing'), { code: 'ENOENT' });
  };
  it('no file: no policy, no problem; a file: parsed (BOM tolerated); bad JSON or unreadable: reported and ignored', () => {
    assert.deepEqual(loadPolicy({ path: '/p/none.json', readText }), { path: '/p/none.json', found: false, policy: {}, managedKeys: [], problems: [], refusedBlocks: [], namesStaffPin: false });
    assert.deepEqual(loadPolicy({ env: { AVATAR_KIOSK_POLICY: '/p/good.json' }, readText }).policy, { callMode: 'audio', ...AUDIENCE_LOCKED });
    assert.deepEqual(loadPolicy({ path: '/p/bad.json', readText }).problems, ['The policy file /p/bad.json is not valid JSON; it was ignored.']);
    assert.deepEqual(loadPolicy({ path: '/p/locked.json', readText }).problems, ['The policy file /p/locked.json could not be read (EACCES); it was ignored.']);
  });

  it('a policy file non-administrators could write is refused whole, saying why (POSIX: root owns the file and its folder, no group/other write)', () => {
    // A standard user who could write the policy would set the PIN hash and the service URL.
    const stats = (file: { uid: number; mode: number }, folder = { uid: 0, mode: 0o40755 }) => (p: string) => (p === '/p/good.json' ? file : folder);
    const load = (statOf: (p: string) => { uid: number; mode: number }, platform: NodeJS.Platform = 'linux') => loadPolicy({ path: '/p/good.json', readText, statOf, platform });
    assert.deepEqual(load(stats({ uid: 0, mode: 0o100644 })).policy, { callMode: 'audio', ...AUDIENCE_LOCKED }, 'root, 0644: applied');
    assert.deepEqual(load(stats({ uid: 1000, mode: 0o100644 })), {
      path: '/p/good.json',
      found: true,
      // Refused whole, it still holds the audience: the administrator meant to manage this kiosk.
      policy: AUDIENCE_LOCKED,
      managedKeys: AUDIENCE_KEYS,
      problems: ['The policy file /p/good.json belongs to user id 1000, not root, so a non-administrator could change it; it was ignored. Make it root\'s (chown root).'],
      refusedBlocks: [],
      namesStaffPin: false,
    });
    assert.deepEqual(load(stats({ uid: 0, mode: 0o100666 })).problems, ['The policy file /p/good.json can be written by other users (mode 666); it was ignored. Remove their write access (chmod go-w).']);
    assert.deepEqual(load(stats({ uid: 0, mode: 0o100644 }, { uid: 0, mode: 0o41777 })).problems, ['The policy folder /p can be written by other users (mode 777); it was ignored. Remove their write access (chmod go-w).']);
    assert.deepEqual(load(stats({ uid: 0, mode: 0o100644 }, { uid: 501, mode: 0o40755 })).problems, ['The policy folder /p belongs to user id 501, not root, so a non-administrator could change it; it was ignored. Make it root\'s (chown root).']);
    // Windows ACLs are the installer's to set (docs/security.md); they are not read here.
    assert.deepEqual(load(stats({ uid: 1000, mode: 0o100666 }), 'win32').policy, { callMode: 'audio', ...AUDIENCE_LOCKED });
  });

  it('a policy file that exists holds the audience: the keys it does not set are locked (public), the ones it sets are its own', () => {
    const layer = loadPolicy({ path: '/p/good.json', readText });
    assert.deepEqual(layer.managedKeys, ['adult', 'audience', 'callMode', 'region']);
    files['/p/adult.json'] = '{"audience":"adult","region":"DE","adult":{"allowedRegions":["DE"]}}';
    const adult = loadPolicy({ path: '/p/adult.json', readText });
    assert.deepEqual(adult.policy, { audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'] } });
    // The adult block is the policy's as a whole: config.json cannot lower minimumAge under it.
    assert.deepEqual(adult.managedKeys, ['adult', 'audience', 'region']);
    const user = { audience: 'adult', region: 'DE', adult: { allowedRegions: ['DE'], minimumAge: 13 } };
    assert.deepEqual(resolveConfig(user, {}, { ...opts, policy: adult.policy }).safety.ageGate, { minimumAge: 18, ageCheck: 'self' });
    assert.equal(resolveConfig(user, {}, { ...opts, policy: layer.policy }).safety.audience, 'public');
  });
});

describe('resolveConfig with a policy layer', () => {
  it('policy > environment > user file, key by key (unmanaged keys keep the user value)', () => {
    const user = { callMode: 'video', window: { mode: 'windowed', width: 800, height: 600 }, returnToAttractSeconds: 40, service: { baseUrl: 'https://user.example.com' } };
    const { policy } = parsePolicy({ callMode: 'audio', window: { mode: 'kiosk' }, service: { baseUrl: 'https://managed.example.com' } });
    const c = resolveConfig(user, { KIOSK_WINDOW_MODE: 'companion', AVATAR_BASE_URL: 'https://env.example.com' }, { ...opts, policy });
    assert.equal(c.callMode, 'audio');
    assert.deepEqual(c.window, { mode: 'kiosk', width: 800, height: 600 });
    assert.equal(c.service.baseUrl, 'https://managed.example.com');
    assert.equal(c.returnToAttractSeconds, 40);
    // without the policy, the environment wins over the file as before
    const plain = resolveConfig(user, { KIOSK_WINDOW_MODE: 'companion' }, opts);
    assert.equal(plain.window.mode, 'companion');
  });

  it('a managed list replaces the user list whole', () => {
    const user = { avatars: [{ id: 'u1', name: 'U1', imagePath: '/a.png' }, { id: 'u2', name: 'U2', imagePath: '/b.png' }] };
    const { policy } = parsePolicy({ avatars: [{ id: 'm', name: 'M', imagePath: '/m.png' }] });
    assert.deepEqual(resolveConfig(user, {}, { ...opts, policy }).cast.map((m) => m.id), ['m']);
  });

  it('the safe defaults keep the policy, and drop it only when its own settings conflict', () => {
    assert.equal(defaultConfig({}, { ...opts, policy: parsePolicy({ callMode: 'audio' }).policy }).callMode, 'audio');
    // gateway without a gatewayUrl: each key is fine alone, together they cannot run
    const conflicting = parsePolicy({ service: { surface: 'gateway' }, callMode: 'audio' });
    assert.deepEqual(conflicting.problems, []);
    const fallback = defaultConfig({}, { ...opts, policy: conflicting.policy });
    assert.equal(fallback.service.surface, 'direct');
  });
});
