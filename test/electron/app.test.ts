/**
 * Smoke test of the real app through Playwright's `_electron` (needs the Electron binary and a display).
 * In the offline dev sandbox the binary cannot be downloaded: the test then SKIPS with the reason printed
 * (never passes vacuously). It also skips when the app has not been built (run
 * `npx electron-vite build && npm run build:renderer` first).
 *
 * Note: we never `require('electron')` here to find the binary: that call tries to download it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_SHAPE } from '../../electron/contract.ts';

const ROOT = join(import.meta.dirname, '../..');

/** The Electron executable if it is installed, else why not. */
function findElectron(): { path: string } | { missing: string } {
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  const pathFile = join(ROOT, 'node_modules/electron/path.txt');
  if (!existsSync(join(ROOT, 'node_modules/electron/package.json'))) return { missing: 'the electron package is not installed' };
  if (!override && !existsSync(pathFile)) {
    return { missing: 'the Electron binary was never downloaded (node_modules/electron/path.txt and dist/ are absent; offline sandbox)' };
  }
  const exe = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : 'electron';
  const full = override ? join(override, exe) : join(ROOT, 'node_modules/electron/dist', exe);
  return existsSync(full) ? { path: full } : { missing: `the Electron executable is missing at ${full}` };
}

function missingBuild(): string | null {
  for (const f of ['out/main/index.js', 'out/preload/index.cjs', 'out/renderer/index.html']) {
    if (!existsSync(join(ROOT, f))) return `${f} is not built (run \`npx electron-vite build && npm run build:renderer\`)`;
  }
  return null;
}

describe('Avatar Kiosk (Electron smoke test)', () => {
  it('launches in demo mode with a locked-down renderer and quits cleanly', async (t) => {
    const electron = findElectron();
    if ('missing' in electron) {
      const reason = `SKIPPED: Electron is not runnable here: ${electron.missing}.`;
      console.log(reason);
      t.skip(reason);
      return;
    }
    const build = missingBuild();
    if (build) {
      const reason = `SKIPPED: ${build}.`;
      console.log(reason);
      t.skip(reason);
      return;
    }

    const { _electron } = await import('playwright');
    const args = ['.'];
    if (process.platform === 'linux' && process.getuid?.() === 0) args.unshift('--no-sandbox'); // Chromium refuses root otherwise
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'AVATAR_API_KEY') env[k] = v;
    Object.assign(env, { KIOSK_WINDOW_MODE: 'windowed', NODE_ENV: 'production', ELECTRON_ENABLE_LOGGING: '1' });

    const app = await _electron.launch({ executablePath: electron.path, args, cwd: ROOT, env, timeout: 60_000 });
    try {
      const page = await app.firstWindow();
      await page.waitForLoadState('domcontentloaded');

      // The page runs on our own origin, with no Node and only the narrow API.
      assert.equal(await page.evaluate(() => location.origin === 'app://kiosk' || location.href.startsWith('app://kiosk/')), true);
      const surface = await page.evaluate(() => {
        const w = window as unknown as Record<string, unknown>;
        const kiosk = w.kiosk as Record<string, Record<string, unknown>>;
        return {
          require: typeof w.require,
          process: typeof w.process,
          ipcRenderer: typeof w.ipcRenderer,
          api: Object.fromEntries(Object.keys(kiosk).sort().map((group) => [group, Object.keys(kiosk[group]!).sort()])),
        };
      });
      assert.deepEqual(surface, {
        require: 'undefined',
        process: 'undefined',
        ipcRenderer: 'undefined',
        // Exactly the contract's table (plus the event subscription), nothing else.
        api: Object.fromEntries(
          Object.keys(API_SHAPE)
            .sort()
            .map((group) => [group, [...Object.keys(API_SHAPE[group]!), ...(group === 'session' ? ['onEvent'] : [])].sort()]),
        ),
      });

      // IPC works end to end; demo mode; no key in what the renderer sees.
      const cfg = await page.evaluate(() => (window as unknown as { kiosk: import('../../electron/contract.ts').KioskApi }).kiosk.config.get());
      assert.equal(cfg.ok, true);
      if (cfg.ok) assert.equal(cfg.value.mode, 'demo');
      const bad = await page.evaluate(() =>
        (window as unknown as { kiosk: { session: { setMuted(a: unknown): Promise<unknown> } } }).kiosk.session.setMuted({ muted: 'yes' }),
      );
      assert.deepEqual((bad as { ok: boolean; error: { code: string } }).error.code, 'invalid_request');

      // webPreferences as configured, read in the main process (when this Electron exposes them).
      const prefs = await app.evaluate(({ BrowserWindow }) => {
        const wc = BrowserWindow.getAllWindows()[0]!.webContents as unknown as { getLastWebPreferences?: () => Record<string, unknown> | null };
        const p = typeof wc.getLastWebPreferences === 'function' ? wc.getLastWebPreferences() : null;
        return p ? { contextIsolation: p.contextIsolation, sandbox: p.sandbox, nodeIntegration: p.nodeIntegration, webSecurity: p.webSecurity } : null;
      });
      if (prefs) assert.deepEqual(prefs, { contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true });

      // No popups, no navigation away.
      assert.equal(await page.evaluate(() => window.open('https://example.com') === null), true);
      await page.evaluate(() => {
        location.href = 'https://example.com/';
      });
      await page.waitForTimeout(500);
      assert.match(page.url(), /^app:\/\/kiosk\//);
    } finally {
      await app.close();
    }
  });
});
