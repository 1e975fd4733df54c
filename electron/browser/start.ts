/**
 * `npm start`: the desktop app when Electron's binary is there; otherwise one try of the electron
 * package's own install step, and if the binary is still missing, two lines saying what happened and what
 * to do, then the browser mode (index.ts). Never a stack trace.
 *
 * The decision (`decideStart`) takes its checks injected, so it is tested without Electron or a network.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
const ELECTRON_DIR = join(ROOT, 'node_modules', 'electron');
/** The install step downloads about 100 MB; past this it is given up. */
export const INSTALL_TIMEOUT_MS = 180_000;

export interface InstallOutcome {
  ok: boolean;
  /** One line: why it failed (the error's first line, or the timeout). */
  reason: string;
}

export interface StartSteps {
  /** The Electron executable's path when it is installed, else null. */
  findElectron(): string | null;
  /** Run the electron package's install step once (bounded). */
  installElectron(): Promise<InstallOutcome>;
  runElectron(path: string): Promise<number>;
  runBrowserMode(): Promise<number>;
  say(line: string): void;
}

export type StartPath = 'electron' | 'electron-after-install' | 'browser';

/** What `npm start` says when Electron cannot be installed: what happened, then what to do. */
export function electronMissingLines(reason: string, version: string): [string, string] {
  return [
    `Electron's binary is not installed, and its download failed: ${reason}`,
    `To run the desktop app, set ELECTRON_MIRROR (a mirror of Electron's releases; ELECTRON_CUSTOM_DIR if its folders are not v${version}) or electron_config_cache (a folder holding Electron's zip) and run \`node node_modules/electron/install.js\`, or run \`npm ci\` on a connected machine.`,
  ];
}

export async function decideStart(steps: StartSteps, version: string): Promise<{ path: StartPath; exitCode: number }> {
  const present = steps.findElectron();
  if (present) return { path: 'electron', exitCode: await steps.runElectron(present) };
  steps.say('Electron\'s binary is missing: trying its install step once…');
  const install = await steps.installElectron();
  const installed = steps.findElectron();
  if (installed) return { path: 'electron-after-install', exitCode: await steps.runElectron(installed) };
  for (const line of electronMissingLines(install.ok ? 'the install step ended without a binary.' : install.reason, version)) steps.say(line);
  steps.say('Starting the browser mode instead (the same kiosk in Chromium or Chrome; see docs/browser-mode.md).');
  return { path: 'browser', exitCode: await steps.runBrowserMode() };
}

// ---------------------------------------------------------------------------------------------------
// The real steps

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

/** The first line of what a failed install printed, without a stack. */
export function firstErrorLine(output: string): string {
  const line = output
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('at ') && !/^Downloading/i.test(l));
  return (line ?? 'no message').slice(0, 200);
}

function installElectron(): Promise<InstallOutcome> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(ELECTRON_DIR, 'install.js')], { cwd: ELECTRON_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
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

function run(command: string, args: string[]): Promise<number> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit' });
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
    child.on('error', (e) => {
      process.stdout.write(`Could not start ${command}: ${e.message}\n`);
      done(1);
    });
    child.on('exit', (code) => done(code ?? 1));
  });
}

const isEntry = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isEntry) {
  let version = 'VERSION';
  try {
    version = (JSON.parse(readFileSync(join(ELECTRON_DIR, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    // No electron package at all (npm ci not run): the install step below says so in its one line.
  }
  const steps: StartSteps = {
    findElectron: () => findElectronIn(ELECTRON_DIR, process.env),
    installElectron,
    runElectron: (path) => run(path, ['.']),
    runBrowserMode: async () => {
      await import('./index.ts');
      return new Promise<number>(() => undefined); // the browser mode exits the process itself
    },
    say: (line) => process.stdout.write(`${line}\n`),
  };
  decideStart(steps, version).then(
    ({ exitCode }) => process.exit(exitCode),
    (error: unknown) => {
      process.stdout.write(`npm start failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
