/**
 * What `npm start` does (electron/browser/start.ts), with every check injected: Electron present, missing
 * then installed by its own install step, or missing for good (one line, then the browser mode).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideStart, electronMissingLine, electronTriedLine, type StartSteps } from '../../../electron/browser/start.ts';
import { userCacheDir } from '../../../electron/core/user-folders.ts';
import { failedInstallMemory, findElectronIn, firstErrorLine, type InstallOutcome } from '../../../electron/browser/install-electron.ts';

function steps(options: { electron: Array<string | null>; install?: InstallOutcome; failedBefore?: string }): StartSteps & { log: string[] } {
  const log: string[] = [];
  const answers = [...options.electron];
  return {
    log,
    findElectron: () => {
      const next = answers.shift();
      log.push(`find → ${next ?? 'none'}`);
      return next ?? null;
    },
    installElectron: async () => {
      log.push('install');
      return options.install ?? { ok: false, reason: 'not expected' };
    },
    failedBefore: () => (log.push(`failed before → ${options.failedBefore ?? 'no'}`), options.failedBefore ?? null),
    rememberFailure: (reason) => void log.push(`remember ${reason}`),
    runElectron: async (path) => (log.push(`electron ${path}`), 0),
    runBrowserMode: async () => (log.push('browser mode'), 0),
    say: (line) => void log.push(`say: ${line}`),
  };
}

describe('npm start', () => {
  it('starts Electron at once when its binary is there (no install, nothing said)', async () => {
    const s = steps({ electron: ['/e/electron'] });
    assert.deepEqual(await decideStart(s), { path: 'electron', exitCode: 0 });
    assert.deepEqual(s.log, ['find → /e/electron', 'electron /e/electron']);
  });

  it('runs the install step once when the binary is missing, then starts Electron', async () => {
    const s = steps({ electron: [null, '/e/electron'], install: { ok: true, reason: '' } });
    assert.deepEqual(await decideStart(s), { path: 'electron-after-install', exitCode: 0 });
    assert.deepEqual(s.log, ['find → none', 'failed before → no', 'install', 'find → /e/electron', 'electron /e/electron']);
  });

  it('when the install fails: says so in one short line naming the way out, then starts the browser mode', async () => {
    const s = steps({ electron: [null, null], install: { ok: false, reason: 'getaddrinfo ENOTFOUND github.com' } });
    assert.deepEqual(await decideStart(s), { path: 'browser', exitCode: 0 });
    const line = electronMissingLine('getaddrinfo ENOTFOUND github.com');
    assert.deepEqual(s.log, ['find → none', 'failed before → no', 'install', 'find → none', 'remember getaddrinfo ENOTFOUND github.com', `say: ${line}`, 'browser mode']);
    assert.equal(
      line,
      "Electron's binary could not be downloaded (getaddrinfo ENOTFOUND github.com): using the browser mode. npm start won't try again; to retry: npm run install:electron (offline: docs/browser-mode.md).",
    );
    assert.ok(line.length <= 200, `${line.length} characters`);
  });

  it('when the install step "succeeds" without a binary: says so, then the browser mode', async () => {
    const s = steps({ electron: [null, null], install: { ok: true, reason: '' } });
    assert.deepEqual(await decideStart(s), { path: 'browser', exitCode: 0 });
    assert.deepEqual(s.log.slice(3), ['find → none', 'remember the install step ended without a binary', `say: ${electronMissingLine('the install step ended without a binary')}`, 'browser mode']);
  });

  it('after a failed try: no download, one line saying why and how to retry, then the browser mode', async () => {
    const s = steps({ electron: [null], failedBefore: 'TypeError: fetch failed' });
    assert.deepEqual(await decideStart(s), { path: 'browser', exitCode: 0 });
    const line = electronTriedLine('TypeError: fetch failed');
    assert.deepEqual(s.log, ['find → none', 'failed before → TypeError: fetch failed', `say: ${line}`, 'browser mode']);
    assert.equal(line, "Using the browser mode: Electron's binary is not installed (its download failed before: TypeError: fetch failed). To retry: npm run install:electron (offline: docs/browser-mode.md).");
  });

  it('an Electron installed since the failed try (npm run install:electron) is started, the memory not asked', async () => {
    const s = steps({ electron: ['/e/electron'], failedBefore: 'TypeError: fetch failed' });
    assert.deepEqual(await decideStart(s), { path: 'electron', exitCode: 0 });
    assert.deepEqual(s.log, ['find → /e/electron', 'electron /e/electron']);
  });

  it('remembers a failed try for one electron version and one set of download settings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-electron-memory-'));
    try {
      const memory = failedInstallMemory('45.4.1', {}, dir);
      assert.equal(memory.recall(), null, 'nothing tried yet');
      memory.remember('TypeError: fetch failed');
      assert.equal(failedInstallMemory('45.4.1', {}, dir).recall(), 'TypeError: fetch failed');
      assert.equal(failedInstallMemory('46.0.0', {}, dir).recall(), null, 'a new electron version is tried');
      assert.equal(failedInstallMemory('45.4.1', { ELECTRON_MIRROR: 'https://mirror.example/' }, dir).recall(), null, 'a mirror set since is tried');
      assert.equal(failedInstallMemory('45.4.1', { electron_config_cache: '/media/usb' }, dir).recall(), null, 'a cache folder set since is tried');
      writeFileSync(memory.path, '{torn');
      assert.equal(memory.recall(), null, 'an unreadable memory means: try');
      memory.remember('again');
      memory.forget();
      assert.equal(memory.recall(), null, 'forgotten once installed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the memory in the user\'s cache folder', () => {
    assert.equal(userCacheDir({ XDG_CACHE_HOME: '/c' }, 'linux', '/home/u'), '/c/avatar-kiosk');
    assert.equal(userCacheDir({}, 'linux', '/home/u'), '/home/u/.cache/avatar-kiosk');
    assert.equal(userCacheDir({}, 'darwin', '/Users/u'), '/Users/u/Library/Caches/avatar-kiosk');
    if (process.platform === 'linux') assert.equal(failedInstallMemory('45.0.0', { XDG_CACHE_HOME: '/c' }).path, '/c/avatar-kiosk/electron-download-failed.json');
  });

  it('finds the binary named by path.txt under dist/, or under ELECTRON_OVERRIDE_DIST_PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-electron-pkg-'));
    assert.equal(findElectronIn(dir, {}), null, 'no path.txt');
    writeFileSync(join(dir, 'path.txt'), 'electron');
    assert.equal(findElectronIn(dir, {}), null, 'path.txt but no dist/');
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'dist', 'electron'), '');
    assert.equal(findElectronIn(dir, {}), join(dir, 'dist', 'electron'));
    assert.equal(findElectronIn(dir, { ELECTRON_OVERRIDE_DIST_PATH: '/nowhere' }), null);
    assert.equal(findElectronIn(dir, { ELECTRON_OVERRIDE_DIST_PATH: join(dir, 'dist') }), join(dir, 'dist', 'electron'));
  });

  it('keeps one line of a failed install\'s output, never its stack', () => {
    const output = 'Downloading Electron binary...\nRequestError: getaddrinfo ENOTFOUND github.com\n    at ClientRequest.<anonymous> (/x/got/index.js:1:1)\n    at Socket.emit (node:events:1:1)\n';
    assert.equal(firstErrorLine(output), 'RequestError: getaddrinfo ENOTFOUND github.com');
    assert.equal(firstErrorLine(''), 'no message');
  });
});
