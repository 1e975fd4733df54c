/**
 * What `npm start` does (electron/browser/start.ts), with every check injected: Electron present, missing
 * then installed by its own install step, or missing for good (one line, then the browser mode).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideStart, electronMissingLine, type StartSteps } from '../../../electron/browser/start.ts';
import { findElectronIn, firstErrorLine, type InstallOutcome } from '../../../electron/browser/install-electron.ts';

function steps(options: { electron: Array<string | null>; install?: InstallOutcome }): StartSteps & { log: string[] } {
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
    assert.deepEqual(s.log, ['find → none', 'install', 'find → /e/electron', 'electron /e/electron']);
  });

  it('when the install fails: says so in one short line naming the way out, then starts the browser mode', async () => {
    const s = steps({ electron: [null, null], install: { ok: false, reason: 'getaddrinfo ENOTFOUND github.com' } });
    assert.deepEqual(await decideStart(s), { path: 'browser', exitCode: 0 });
    assert.deepEqual(s.log, ['find → none', 'install', 'find → none', `say: ${electronMissingLine('getaddrinfo ENOTFOUND github.com')}`, 'browser mode']);
    const line = electronMissingLine('getaddrinfo ENOTFOUND github.com');
    assert.match(line, /getaddrinfo ENOTFOUND github\.com/);
    assert.match(line, /browser mode/);
    assert.match(line, /docs\/browser-mode\.md/);
    assert.ok(line.length <= 200, `${line.length} characters`);
  });

  it('when the install step "succeeds" without a binary: says so, then the browser mode', async () => {
    const s = steps({ electron: [null, null], install: { ok: true, reason: '' } });
    assert.deepEqual(await decideStart(s), { path: 'browser', exitCode: 0 });
    assert.equal(s.log[3], `say: ${electronMissingLine('the install step ended without a binary')}`);
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
