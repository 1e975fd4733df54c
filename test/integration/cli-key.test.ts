/**
 * What the CLI says about its API key, as an installer meets it: a child process against a standalone
 * emulator started here. Where a key goes for the CLI (the environment, `--api-key-file`, `--api-key` with a
 * warning), a refused key (401) with advice that fits the CLI, and a key file other users can read.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliRunner, standaloneEmulator } from '../helpers/cli-process.ts';

const cli = cliRunner();

const emulator = standaloneEmulator();

describe('cli API key options', () => {
  const keyFile = (content: string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'kiosk-cli-key-')), 'key');
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };

  it('--api-key-file reads the key from a file (out of ps and the shell history)', async () => {
    const r = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key-file', keyFile(`${emulator.apiKey}\n`), '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).checks.find((c: { id: string }) => c.id === 'key').ok, true);
    assert.ok(!r.stderr.includes('warning'));
  });

  it('--api-key works but warns; both at once, an empty file or a folder are refused', async () => {
    const warned = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key', emulator.apiKey, '--json']);
    assert.equal(warned.code, 0);
    assert.match(warned.stderr, /--api-key shows the key in the process list and shell history; prefer AVATAR_API_KEY or --api-key-file/);
    const both = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key', 'k', '--api-key-file', keyFile('k')]);
    assert.deepEqual([both.code, both.stderr.trim()], [2, 'cli: Give either --api-key or --api-key-file, not both.']);
    const empty = keyFile('  \n');
    assert.deepEqual((await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key-file', empty])).stderr.trim(), `cli: The API key file ${empty} is empty.`);
    assert.equal((await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key-file', tmpdir()])).code, 2);
  });

  it('refuses an http:// direct URL to another machine (probe and doctor): the key would cross the network in clear', async () => {
    for (const command of ['probe', 'doctor']) {
      const r = await cli([command, '--base-url', 'http://192.0.2.10', '--api-key-file', keyFile('sk-test-1234567890')]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^(cli|probe): The service URL must start with https:\/\/ \(got http:\/\/192\.0\.2\.10\): with http:\/\/ the API key would cross the network unencrypted/);
    }
  });
});

// What the CLI says about its API key: where a key goes for the CLI (the environment, or a key file), a
// refused key (401) with advice that fits the CLI, and a key file other users can read.
const ownKeyFile = (content: string, mode: number) => {
  const path = join(mkdtempSync(join(tmpdir(), 'kiosk-cli-keyfile-')), 'key');
  writeFileSync(path, content, { mode });
  return path;
};

describe('cli: the API key', () => {
  it('with none, says to set AVATAR_API_KEY or give a key file (never to put the key on the command line)', async () => {
    for (const args of [['probe', '--base-url', emulator.baseUrl], ['voices', 'list', '--base-url', emulator.baseUrl], ['doctor', '--base-url', emulator.baseUrl]]) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /set AVATAR_API_KEY in the environment, or give --api-key-file PATH \(a file readable by you only, e\.g\. chmod 600\)/, args.join(' '));
      assert.doesNotMatch(r.stderr, /--api-key KEY/);
    }
  });

  it('reads AVATAR_API_KEY as the kiosk does: a blank value is no key (and says what to set), a stray space is not part of the key', async () => {
    // An environment file written by hand can leave `AVATAR_API_KEY= ` blank; the kiosk reads that as no key,
    // so the CLI must not send spaces to the service as a key and report it refused.
    for (const args of [['voices', 'list', '--base-url', emulator.baseUrl], ['probe', '--base-url', emulator.baseUrl]]) {
      const blank = await cli(args, { AVATAR_API_KEY: '   ' });
      assert.equal(blank.code, 2, `${args.join(' ')}: ${blank.stderr}`);
      assert.match(blank.stderr, /The direct surface needs an API key: set AVATAR_API_KEY in the environment/);
      assert.doesNotMatch(blank.stderr, /rejected/);
      const spaced = await cli(args, { AVATAR_API_KEY: ` ${emulator.apiKey}\t` });
      assert.equal(spaced.code, 0, `${args.join(' ')}: ${spaced.stderr}`);
    }
  });

  it('a refused key (401) gets advice for the CLI, not the kiosk\'s settings', async () => {
    const r = await cli(['voices', 'list', '--base-url', emulator.baseUrl], { AVATAR_API_KEY: 'sk-wrong-000000000000' });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /The API key was rejected by the avatar service \(HTTP 401\)\. Check the key you gave \(AVATAR_API_KEY, or the file of --api-key-file\)/);
    assert.doesNotMatch(r.stderr + r.stdout, /settings/);
    const probe = await cli(['probe', '--base-url', emulator.baseUrl, '--api-key-file', ownKeyFile('sk-wrong-000000000000\n', 0o600)]);
    assert.equal(probe.code, 1, probe.stderr);
    assert.match(probe.stderr, /Check the key you gave \(AVATAR_API_KEY, or the file of --api-key-file\)/);
    // The log lines above it quote the service client as it logged it; the line the person reads is the last.
    assert.doesNotMatch(probe.stderr.trim().split('\n').at(-1)!, /settings/);
  });

  it('refuses a key file every user can read, before using it; warns on a group-readable one', async () => {
    const open = ownKeyFile(`${emulator.apiKey}\n`, 0o644);
    const refused = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key-file', open, '--json']);
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr.trim(), `cli: The API key file ${open} can be read by every user of this computer (mode 644); make it yours only (chmod 600 ${open}) and run again.`);
    assert.equal(refused.stdout, '', 'nothing ran');
    const group = ownKeyFile(`${emulator.apiKey}\n`, 0o640);
    const warned = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key-file', group, '--json']);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, new RegExp(`cli: warning: the API key file ${group.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} can be read by its group \\(mode 640\\)`));
  });
});
