/**
 * Electron's own install step (node_modules/electron/install.js, which downloads the binary), run so that
 * it ends in one true sentence instead of a stack trace: `npm run install:electron`. `npm start` runs the
 * same step once before it falls back to the browser mode.
 *
 * We cannot change Electron's script; we run it as a child, keep its output, and when it fails say what
 * failed (its first line) and what to do without a network.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { userCacheDir } from '../core/user-folders.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
export const ELECTRON_DIR = join(ROOT, 'node_modules', 'electron');
/** The install step downloads about 100 MB; past this it is given up. */
export const INSTALL_TIMEOUT_MS = 180_000;

export interface InstallOutcome {
  ok: boolean;
  /** One line: why it failed (the error's first line, or the timeout). */
  reason: string;
}

/** The first line of what a failed install printed, without a stack. */
export function firstErrorLine(output: string): string {
  const line = output
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('at ') && !/^Downloading/i.test(l));
  return (line ?? 'no message').slice(0, 200);
}

/** Run the electron package's install step once (bounded), its output held back. */
export function installElectron(env: NodeJS.ProcessEnv = process.env, dir = ELECTRON_DIR): Promise<InstallOutcome> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(dir, 'install.js')], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output = (output + d.toString('utf8')).slice(-8_000)));
    child.stderr.on('data', (d: Buffer) => (output = (output + d.toString('utf8')).slice(-8_000)));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      done({ ok: false, reason: `no answer within ${INSTALL_TIMEOUT_MS / 1000} s.` });
    }, INSTALL_TIMEOUT_MS);
    child.on('error', (e) => (clearTimeout(timer), done({ ok: false, reason: e.message })));
    child.on('exit', (code) => {
      clearTimeout(timer);
      done(code === 0 ? { ok: true, reason: '' } : { ok: false, reason: firstErrorLine(output) });
    });
  });
}

/** The version of the installed electron package. */
export function electronVersion(dir = ELECTRON_DIR): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The executable named by the electron package's path.txt, when it exists (ELECTRON_OVERRIDE_DIST_PATH honoured). */
export function findElectronIn(dir: string, env: Record<string, string | undefined>, exists: (p: string) => boolean = existsSync): string | null {
  const pathFile = join(dir, 'path.txt');
  const relativePath = exists(pathFile) ? readFileSync(pathFile, 'utf8').trim() : null;
  if (env.ELECTRON_OVERRIDE_DIST_PATH) {
    const p = join(env.ELECTRON_OVERRIDE_DIST_PATH, relativePath || 'electron');
    return exists(p) ? p : null;
  }
  if (!relativePath) return null;
  const p = join(dir, 'dist', relativePath);
  return exists(p) ? p : null;
}

// ---------------------------------------------------------------------------------------------------
// A failed try, remembered: `npm start` tries the download once, not on every start (each failed try costs
// from a fraction of a second offline to INSTALL_TIMEOUT_MS behind a firewall that drops packets). The
// memory names the electron version and the download settings, so a new electron version, a mirror or a
// cache folder set since, or `npm run install:electron` (which always tries) gets a fresh try.

/** The variables of Electron's own installer that change where it downloads from. */
const DOWNLOAD_VARS = ['ELECTRON_MIRROR', 'ELECTRON_CUSTOM_DIR', 'electron_config_cache', 'ELECTRON_GET_USE_PROXY'] as const;

export interface FailedInstallMemory {
  /** Where the failed try is written (a small JSON file). */
  readonly path: string;
  /** The earlier failure's reason, when it was for this version and these download settings; else null. */
  recall(): string | null;
  remember(reason: string): void;
  forget(): void;
}

/** The failed try is remembered in the user's cache folder for this app (XDG_CACHE_HOME on Linux) unless `dir` is given. */
export function failedInstallMemory(version: string, env: Record<string, string | undefined>, dir: string = userCacheDir(env, process.platform, homedir())): FailedInstallMemory {
  const path = join(dir, 'electron-download-failed.json');
  const settings = Object.fromEntries(DOWNLOAD_VARS.map((name) => [name, env[name] ?? null]));
  const key = JSON.stringify({ version, settings });
  return {
    path,
    recall() {
      try {
        const saved = JSON.parse(readFileSync(path, 'utf8')) as { key?: unknown; reason?: unknown };
        return saved.key === key && typeof saved.reason === 'string' ? saved.reason : null;
      } catch {
        return null; // none, or unreadable: try again
      }
    },
    remember(reason) {
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path, `${JSON.stringify({ key, reason, at: new Date().toISOString() })}\n`);
      } catch {
        // A cache that cannot be written costs a try per start, nothing more.
      }
    },
    forget() {
      rmSync(path, { force: true });
    },
  };
}

/** The zip Electron's install step looks for in its cache (electron_config_cache), for this machine. */
export function electronZipName(version: string, platform: string = process.platform, arch: string = process.arch): string {
  return `electron-v${version}-${platform}-${arch}.zip`;
}

/** What a failed install says: what failed, and the two ways to install without GitHub. */
export function installFailedLine(reason: string, version: string): string {
  return (
    `Electron's binary could not be downloaded (${reason.slice(0, 120)}). Without a network: put ${electronZipName(version)} in a folder and run ` +
    `"electron_config_cache=<that folder> npm run install:electron", or set ELECTRON_MIRROR to a mirror of Electron's releases; ` +
    `until then npm start runs the browser mode (docs/browser-mode.md).`
  );
}

const isEntry = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isEntry) {
  const say = (line: string) => void process.stdout.write(`${line}\n`);
  const version = electronVersion();
  const memory = failedInstallMemory(version, process.env);
  say(`Installing Electron ${version}'s binary (about 100 MB)…`);
  void installElectron().then((outcome) => {
    const installed = findElectronIn(ELECTRON_DIR, process.env);
    if (outcome.ok && installed) {
      memory.forget();
      say(`Electron is installed (${installed}): npm start opens the desktop app.`);
      process.exit(0);
    }
    const reason = outcome.ok ? 'the install step ended without a binary' : outcome.reason;
    memory.remember(reason);
    say(installFailedLine(reason, version));
    process.exit(1);
  });
}
