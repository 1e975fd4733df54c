/**
 * Electron's offline install route (`npm run install:electron`, electron/browser/install-electron.ts) run
 * as a person runs it, with no network at all (an empty network namespace: `unshare -n`): Electron's own
 * install step fails, and what the person reads is one sentence with what to do, never a stack trace.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { electronZipName, failedInstallMemory, installFailedLine } from '../../../electron/browser/install-electron.ts';
import { electronMissingLine, electronTriedLine } from '../../../electron/browser/start.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string }).version;
const noNetwork = spawnSync('unshare', ['-n', 'true']).status === 0;

/** `npm start`'s entry (start.ts) with no network, until the kiosk runs; then Ctrl+C. Its lines. */
async function startUntilRunning(env: Record<string, string>): Promise<string[]> {
  const child = spawn('unshare', ['-n', process.execPath, '--import', 'tsx', join(ROOT, 'electron/browser/start.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  const deadline = Date.now() + 60_000;
  while (!out.includes('Stop with Ctrl+C.') && child.exitCode === null && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 50));
  child.kill('SIGINT');
  assert.equal(await exited, 0, out);
  return out.split('\n').filter(Boolean);
}

describe('npm run install:electron with no network', { skip: noNetwork ? false : 'unshare -n is not available here (needs root or user namespaces)' }, () => {
  it('says in one sentence that the download failed, names the zip to bring and the two ways in, exit 1', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const cache = mkdtempSync(join(tmpdir(), 'kiosk-electron-cache-'));
    try {
      // The script's own command, in a namespace with only a down loopback: nothing leaves the machine.
      const r = spawnSync('unshare', ['-n', 'sh', '-c', scripts['install:electron']!], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, electron_config_cache: cache, XDG_CACHE_HOME: cache },
        timeout: 120_000,
      });
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.equal(r.stderr, '');
      assert.deepEqual(r.stdout.trimEnd().split('\n'), [`Installing Electron ${VERSION}'s binary (about 100 MB)…`, installFailedLine('TypeError: fetch failed', VERSION)]);
      assert.doesNotMatch(r.stdout, /^\s+at /m, 'no stack trace');
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('npm start tries the download once: the next start goes to the browser mode at once and says how to retry; install:electron tries again', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'kiosk-electron-cache-'));
    const data = mkdtempSync(join(tmpdir(), 'kiosk-electron-data-'));
    try {
      // npm start as a person runs it (its build skipped: nothing here is about the build), no browser.
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', XDG_CACHE_HOME: cache, AVATAR_KIOSK_DATA: data, KIOSK_SKIP_BUILD: '1', KIOSK_BROWSER: 'none' };
      const first = await startUntilRunning(env);
      assert.equal(first[0], electronMissingLine('TypeError: fetch failed'));
      const memory = failedInstallMemory(VERSION, env, join(cache, 'avatar-kiosk'));
      assert.equal(memory.recall(), 'TypeError: fetch failed');

      const second = await startUntilRunning(env);
      assert.equal(second[0], electronTriedLine('TypeError: fetch failed'), 'no second download: the memory is read');
      assert.equal(second[1], 'Avatar Kiosk is running (demo mode: the built-in emulator, no key needed).');

      // npm run install:electron always tries (and fails here, saying so).
      const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
      const retry = spawnSync('unshare', ['-n', 'sh', '-c', scripts['install:electron']!], { cwd: ROOT, encoding: 'utf8', env, timeout: 120_000 });
      assert.deepEqual([retry.status, retry.stdout.split('\n')[0]], [1, `Installing Electron ${VERSION}'s binary (about 100 MB)…`]);

      // A new download setting is a new try.
      const mirrored = await startUntilRunning({ ...env, ELECTRON_MIRROR: 'http://127.0.0.1:1/' });
      assert.match(mirrored[0]!, /^Electron's binary could not be downloaded \(/);
    } finally {
      rmSync(cache, { recursive: true, force: true });
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('the sentence names this machine\'s zip and where to read more', () => {
    assert.equal(electronZipName('45.4.1', 'linux', 'x64'), 'electron-v45.4.1-linux-x64.zip');
    assert.equal(
      installFailedLine('TypeError: fetch failed', '45.4.1'),
      `Electron's binary could not be downloaded (TypeError: fetch failed). Without a network: put ${electronZipName('45.4.1')} in a folder and run "electron_config_cache=<that folder> npm run install:electron", or set ELECTRON_MIRROR to a mirror of Electron's releases; until then npm start runs the browser mode (docs/browser-mode.md).`,
    );
  });
});
