/**
 * Edges of the administrator's policy file: where it is looked for when %ProgramData% is blank, what a
 * policy locks (the blocks below and above a key), what a refused or unreadable file still reports
 * (whether it names a staff PIN decides whether setup may open), and reading a real file from disk with
 * the default reader and owner check.
 */
import assert from 'node:assert/strict';
import { chmodSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadPolicy, managedKeys, parsePolicy, policyLocks, policyPath, policyWriteProblem, type OwnerAndMode } from '../../../electron/fleet/managed-config.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-policy-edges-');
const rootOwned = (): OwnerAndMode => ({ uid: 0, mode: 0o100644 });
const AUDIENCE_LOCKED = { audience: undefined, adult: undefined, region: undefined };
// A refused file still holds the audience keys, locked with no value (public): the administrator meant to manage the kiosk.
const ignored = (path: string, problem: string, namesStaffPin = false) => ({
  path,
  found: true,
  policy: { audience: undefined, adult: undefined, region: undefined },
  managedKeys: ['adult', 'audience', 'region'],
  problems: [problem],
  refusedBlocks: [],
  namesStaffPin,
});

describe('where the policy is looked for', () => {
  it('a blank or padded %ProgramData% on Windows is trimmed, and a blank one falls back to C:\\ProgramData', () => {
    assert.equal(policyPath({ ProgramData: '   ' }, 'win32'), 'C:\\ProgramData\\AvatarKiosk\\policy.json');
    assert.equal(policyPath({ ProgramData: ' D:\\Data ' }, 'win32'), 'D:\\Data\\AvatarKiosk\\policy.json');
  });
});

describe('what a policy locks', () => {
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

  it('only the top-level fleet blocks count as one key; a nested setting of the same name is walked into', () => {
    const schedule = { timeZone: 'UTC', weekly: { mon: ['09:00-17:00'] } };
    assert.deepEqual(managedKeys({ schedule, service: { update: { channel: 'beta' } } }), ['schedule', 'service.update.channel']);
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
