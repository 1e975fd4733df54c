/**
 * Electron's offline install route (`npm run install:electron`, electron/browser/install-electron.ts) run
 * as a person runs it, with no network at all (an empty network namespace: `unshare -n`): Electron's own
 * install step fails, and what the person reads is one sentence with what to do, never a stack trace.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { electronZipName, installFailedLine } from '../../../electron/browser/install-electron.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string }).version;
const noNetwork = spawnSync('unshare', ['-n', 'true']).status === 0;

describe('npm run install:electron with no network', { skip: noNetwork ? false : 'unshare -n is not available here (needs root or user namespaces)' }, () => {
  it('says in one sentence that the download failed, names the zip to bring and the two ways in, exit 1', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const cache = mkdtempSync(join(tmpdir(), 'kiosk-electron-cache-'));
    try {
      // The script's own command, in a namespace with only a down loopback: nothing leaves the machine.
      const r = spawnSync('unshare', ['-n', 'sh', '-c', scripts['install:electron']!], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, electron_config_cache: cache },
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

  it('the sentence names this machine\'s zip and where to read more', () => {
    assert.equal(electronZipName('45.4.1', 'linux', 'x64'), 'electron-v45.4.1-linux-x64.zip');
    assert.equal(
      installFailedLine('TypeError: fetch failed', '45.4.1'),
      `Electron's binary could not be downloaded (TypeError: fetch failed). Without a network: put ${electronZipName('45.4.1')} in a folder and run "electron_config_cache=<that folder> npm run install:electron", or set ELECTRON_MIRROR to a mirror of Electron's releases; until then npm start runs the browser mode (docs/browser-mode.md).`,
    );
  });
});
