/**
 * Managed configuration (managed-config.ts): where the policy file is (a blank %ProgramData% too), its
 * precedence over the user's file and the environment, key-by-key rejection of bad settings (never a
 * crash), the managed (locked) keys and what a policy locks (the blocks below and above a key), what a
 * refused or unreadable file still reports (whether it names a staff PIN decides whether setup may open),
 * the owner check, and reading a real file from disk with the default reader and owner check.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultConfig, resolveConfig } from '../../../electron/kiosk/config.ts';
import { loadPolicy, managedKeys, parsePolicy, policyLocks, policyPath, policyWriteProblem, type OwnerAndMode } from '../../../electron/fleet/managed-config.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const opts = { appRoot: '/opt/kiosk', readText: () => 'A persona.' };
const tempDir = tempDirsRemovedAfterEach('ak-policy-');
const rootOwned = (): OwnerAndMode => ({ uid: 0, mode: 0o100644 });

/** What a policy file that exists holds even when it says nothing of the audience (safety-config.ts). */
const AUDIENCE_LOCKED = { audience: undefined, adult: undefined, region: undefined };
const AUDIENCE_KEYS = ['adult', 'audience', 'region'];
// A refused file still holds the audience keys, locked with no value (public): the administrator meant to manage the kiosk.
const ignored = (path: string, problem: string, namesStaffPin = false) => ({
  path,
  found: true,
  policy: AUDIENCE_LOCKED,
  managedKeys: AUDIENCE_KEYS,
  problems: [problem],
  refusedBlocks: [],
  namesStaffPin,
});

describe('policyPath', () => {
  it('AVATAR_KIOSK_POLICY wins; else the per-OS system location', () => {
    assert.equal(policyPath({ AVATAR_KIOSK_POLICY: ' /srv/p.json ' }, 'linux'), '/srv/p.json');
    assert.equal(policyPath({}, 'linux'), '/etc/avatar-kiosk/policy.json');
    assert.equal(policyPath({}, 'darwin'), '/Library/Application Support/AvatarKiosk/policy.json');
    assert.equal(policyPath({ ProgramData: 'D:\\Data' }, 'win32'), 'D:\\Data\\AvatarKiosk\\policy.json');
    assert.equal(policyPath({}, 'win32'), 'C:\\ProgramData\\AvatarKiosk\\policy.json');
  });

  it('a blank or padded %ProgramData% on Windows is trimmed, and a blank one falls back to C:\\ProgramData', () => {
    assert.equal(policyPath({ ProgramData: '   ' }, 'win32'), 'C:\\ProgramData\\AvatarKiosk\\policy.json');
    assert.equal(policyPath({ ProgramData: ' D:\\Data ' }, 'win32'), 'D:\\Data\\AvatarKiosk\\policy.json');
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

  it('only the top-level fleet blocks count as one key; a nested setting of the same name is walked into', () => {
    const schedule = { timeZone: 'UTC', weekly: { mon: ['09:00-17:00'] } };
    assert.deepEqual(managedKeys({ schedule, service: { update: { channel: 'beta' } } }), ['schedule', 'service.update.channel']);
  });
});

describe('policyLocks', () => {
  it('a refused block locks every setting inside it, not only its name', () => {
    const { policy } = parsePolicy({ avatar: { name: 'Max', colour: 'red' } });
    assert.deepEqual(policy, { avatar: undefined });
    assert.equal(policyLocks(policy, 'avatar.name'), true);
    assert.equal(policyLocks(policy, 'avatar.persona'), true);
  });

  it('a block is locked when the policy sets any one setting inside it (a remote "apply" of the block is refused)', () => {
    const { policy } = parsePolicy({ avatar: { persona: 'P' } });
    assert.equal(policyLocks(policy, 'avatar'), true);
    assert.equal(policyLocks(policy, 'idle'), false);
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

describe('what a refused policy still says', () => {
  it('a policy that is no JSON object, read without a path, is named "policy" and locks nothing (parsePolicy alone; loadPolicy adds the audience locks)', () => {
    for (const raw of [[1, 2], null, 'text']) {
      assert.deepEqual(parsePolicy(raw), { ...ignored('policy', 'The policy file policy must hold a JSON object; it was ignored.'), policy: {}, managedKeys: [] }, JSON.stringify(raw));
    }
  });

  it('a policy naming a staff PIN says so', () => {
    assert.equal(parsePolicy({ staffPinHash: 'scrypt$abc' }).namesStaffPin, true);
    assert.equal(parsePolicy({ callMode: 'audio' }).namesStaffPin, false);
  });

  it('a file others could write still says whether it names a staff PIN, so setup does not open in its place', () => {
    const writable = (): OwnerAndMode => ({ uid: 0, mode: 0o100666 });
    const layer = loadPolicy({ path: '/p/policy.json', readText: () => '{"staffPinHash":"scrypt$abc"}', statOf: writable, platform: 'linux' });
    assert.deepEqual(layer, ignored('/p/policy.json', 'The policy file /p/policy.json can be written by other users (mode 666); it was ignored. Remove their write access (chmod go-w).', true));
  });

  it('a file that cannot be read, or is not JSON, names no staff PIN', () => {
    const unreadable = () => {
      throw new Error('no code given');
    };
    assert.deepEqual(loadPolicy({ path: '/p/policy.json', readText: unreadable }), ignored('/p/policy.json', 'The policy file /p/policy.json could not be read (error); it was ignored.'));
    assert.deepEqual(
      loadPolicy({ path: '/p/policy.json', readText: () => '{"staffPinHash": "scrypt$abc",' }),
      ignored('/p/policy.json', 'The policy file /p/policy.json is not valid JSON; it was ignored.'),
    );
  });

  it('a file holding JSON null is reported as not an object (not a crash)', () => {
    assert.deepEqual(loadPolicy({ path: '/p/policy.json', readText: () => 'null' }), ignored('/p/policy.json', 'The policy file /p/policy.json must hold a JSON object; it was ignored.'));
  });

  it('only a byte order mark at the very start is dropped; one inside a value is kept', () => {
    const layer = loadPolicy({ path: '/p/policy.json', readText: () => '{"avatar":{"name":"Max\uFEFF"}}' });
    assert.deepEqual(layer.policy, { avatar: { name: 'Max\uFEFF' }, ...AUDIENCE_LOCKED });
  });
});

describe('the owner check when a status cannot be read', () => {
  it('a file or folder whose status cannot be read is not refused for it (reading the file reports its own failure)', () => {
    const folderUnreadable = (p: string): OwnerAndMode => {
      if (p === '/p') throw Object.assign(new Error('denied'), { code: 'EACCES' });
      return rootOwned();
    };
    assert.equal(policyWriteProblem('/p/policy.json', folderUnreadable, 'linux'), null);
    assert.deepEqual(loadPolicy({ path: '/p/policy.json', readText: () => '{"callMode":"audio"}', statOf: folderUnreadable, platform: 'linux' }).policy, { callMode: 'audio', ...AUDIENCE_LOCKED });
  });
});

describe('reading a real policy file', () => {
  it('the default reader reads the file as UTF-8 text', () => {
    const path = join(tempDir(), 'policy.json');
    writeFileSync(path, '{"avatar":{"name":"Zoë"}}');
    assert.deepEqual(loadPolicy({ path, statOf: rootOwned, platform: 'linux' }).policy, { avatar: { name: 'Zoë' }, ...AUDIENCE_LOCKED });
  });

  it('the default owner check reads the file\'s real owner and mode', { skip: process.platform === 'win32' ? 'POSIX owners' : false }, () => {
    const dir = tempDir();
    chmodSync(dir, 0o755);
    const path = join(dir, 'policy.json');
    writeFileSync(path, '{"callMode":"audio"}');
    chmodSync(path, 0o644);
    const { uid } = statSync(path);
    const layer = loadPolicy({ path });
    if (uid === 0) assert.deepEqual(layer.policy, { callMode: 'audio', ...AUDIENCE_LOCKED }, 'root owns it, only root may write it');
    else assert.deepEqual(layer.problems, [`The policy file ${path} belongs to user id ${uid}, not root, so a non-administrator could change it; it was ignored. Make it root's (chown root).`]);
  });

  it('a path through a file (ENOTDIR) is no policy, like a missing one', () => {
    const file = join(tempDir(), 'plain-file');
    writeFileSync(file, 'x');
    const path = join(file, 'policy.json');
    assert.deepEqual(loadPolicy({ path }), { path, found: false, policy: {}, managedKeys: [], problems: [], refusedBlocks: [], namesStaffPin: false });
  });

  it('a dangling symbolic link at the path, or for its folder, is a policy that could not be read, not "no policy" (setup stays shut, the audience stays public)', () => {
    const dir = tempDir();
    const path = join(dir, 'policy.json');
    symlinkSync(join(dir, 'moved.json'), path);
    assert.deepEqual(loadPolicy({ path }), {
      path, found: true, policy: { adult: undefined, audience: undefined, region: undefined }, managedKeys: ['adult', 'audience', 'region'], refusedBlocks: [], namesStaffPin: false,
      problems: [`The policy file ${path} could not be read: ${path} is a symbolic link to ${join(dir, 'moved.json')}, which does not exist; it was ignored. Restore the file the link points to, or remove the link.`],
    });
    const folder = join(dir, 'avatar-kiosk');
    symlinkSync(join(dir, 'gone'), folder);
    const inFolder = join(folder, 'policy.json');
    assert.deepEqual(loadPolicy({ path: inFolder }).found, true);
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
