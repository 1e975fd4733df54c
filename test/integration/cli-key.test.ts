/**
 * What the CLI says about its API key, as a person at a terminal meets it: a child process, a standalone
 * emulator on 127.0.0.1 as the service.
 *  - no key: where a key goes for the CLI (the environment, or a key file), not `--api-key KEY`;
 *  - a refused key (401): advice that fits the CLI (the variable or the key file), not "the settings";
 *  - a key file every local user can read is refused before it is read; a group-readable one is warned about.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';

const ROOT = join(import.meta.dirname, '../..');
const CLI = join(ROOT, 'electron/cli/index.ts');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const HOME = mkdtempSync(join(tmpdir(), 'kiosk-cli-key-home-'));

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(TSX, [CLI, ...args], { cwd: ROOT, env: { ...process.env, AVATAR_API_KEY: '', HOME, XDG_CONFIG_HOME: join(HOME, '.config'), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))));
}

const keyFile = (content: string, mode: number) => {
  const path = join(mkdtempSync(join(tmpdir(), 'kiosk-cli-keyfile-')), 'key');
  writeFileSync(path, content, { mode });
  return path;
};

let emulator: EmulatorHandle;
before(async () => {
  emulator = await startEmulator({ host: '127.0.0.1', port: 0, knobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 20 } });
});
after(async () => {
  await emulator.close();
});

describe('cli: the API key', () => {
  it('with none, says to set AVATAR_API_KEY or give a key file (never to put the key on the command line)', async () => {
    for (const args of [['probe', '--base-url', emulator.baseUrl], ['voices', 'list', '--base-url', emulator.baseUrl], ['doctor', '--base-url', emulator.baseUrl]]) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /set AVATAR_API_KEY in the environment, or give --api-key-file PATH \(a file readable by you only, e\.g\. chmod 600\)/, args.join(' '));
      assert.doesNotMatch(r.stderr, /--api-key KEY/);
    }
  });

  it('a refused key (401) gets advice for the CLI, not the kiosk\'s settings', async () => {
    const r = await cli(['voices', 'list', '--base-url', emulator.baseUrl], { AVATAR_API_KEY: 'sk-wrong-000000000000' });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /The API key was rejected by the avatar service \(HTTP 401\)\. Check the key you gave \(AVATAR_API_KEY, or the file of --api-key-file\)/);
    assert.doesNotMatch(r.stderr + r.stdout, /settings/);
    const probe = await cli(['probe', '--base-url', emulator.baseUrl, '--api-key-file', keyFile('sk-wrong-000000000000\n', 0o600)]);
    assert.equal(probe.code, 1, probe.stderr);
    assert.match(probe.stderr, /Check the key you gave \(AVATAR_API_KEY, or the file of --api-key-file\)/);
    // The log lines above it quote the service client as it logged it; the line the person reads is the last.
    assert.doesNotMatch(probe.stderr.trim().split('\n').at(-1)!, /settings/);
  });

  it('refuses a key file every user can read, before using it; warns on a group-readable one', async () => {
    const open = keyFile(`${emulator.apiKey}\n`, 0o644);
    const refused = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key-file', open, '--json']);
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr.trim(), `cli: The API key file ${open} can be read by every user of this computer (mode 644); make it yours only (chmod 600 ${open}) and run again.`);
    assert.equal(refused.stdout, '', 'nothing ran');
    const group = keyFile(`${emulator.apiKey}\n`, 0o640);
    const warned = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key-file', group, '--json']);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, new RegExp(`cli: warning: the API key file ${group.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} can be read by its group \\(mode 640\\)`));
  });
});
