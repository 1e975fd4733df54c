/**
 * `npm start`: builds the app quietly (its output only when the build fails), then the desktop app when
 * Electron's binary is there; otherwise one try of the electron package's own install step, and if the
 * binary is still missing, one line saying so, then the browser mode (index.ts) in an app window. Never a
 * stack trace. Arguments after `--` (`npm start -- --demo-devices`) go to whichever starts.
 *
 * The decision (`decideStart`) takes its checks injected, so it is tested without Electron or a network.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { buildQuietly, failedBuildText } from './quiet-build.ts';
import { ELECTRON_DIR, findElectronIn, installElectron, type InstallOutcome } from './install-electron.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
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

/** What `npm start` says when Electron cannot be installed: what happened and where the way out is
 *  (the mirror variables are in docs/browser-mode.md; a newcomer needs none of them to see the demo). */
export function electronMissingLine(reason: string): string {
  return `The desktop app's Electron binary could not be downloaded (${reason.slice(0, 80)}): using the browser mode instead (to install Electron offline: docs/browser-mode.md).`;
}

export async function decideStart(steps: StartSteps): Promise<{ path: StartPath; exitCode: number }> {
  const present = steps.findElectron();
  if (present) return { path: 'electron', exitCode: await steps.runElectron(present) };
  const install = await steps.installElectron();
  const installed = steps.findElectron();
  if (installed) return { path: 'electron-after-install', exitCode: await steps.runElectron(installed) };
  steps.say(electronMissingLine(install.ok ? 'the install step ended without a binary' : install.reason));
  return { path: 'browser', exitCode: await steps.runBrowserMode() };
}

// ---------------------------------------------------------------------------------------------------
// The real steps


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
  const args = process.argv.slice(2);
  const say = (line: string) => void process.stdout.write(`${line}\n`);
  const steps: StartSteps = {
    findElectron: () => findElectronIn(ELECTRON_DIR, process.env),
    installElectron: () => installElectron(),
    runElectron: (path) => run(path, ['.', ...args]),
    runBrowserMode: async () => {
      const { runBrowserMode } = await import('./index.ts');
      await runBrowserMode({ fallback: true, argv: args });
      return new Promise<number>(() => undefined); // the browser mode exits the process itself
    },
    say,
  };
  const skipBuild = process.env.KIOSK_SKIP_BUILD === '1';
  if (!skipBuild) say('Building the app (about a minute the first time)…');
  (skipBuild ? Promise.resolve({ ok: true, output: '' }) : buildQuietly())
    .then((build) => {
      if (!build.ok) {
        process.stdout.write(failedBuildText(build.output));
        process.exit(1);
      }
      return decideStart(steps);
    })
    .then(
      ({ exitCode }) => process.exit(exitCode),
      (error: unknown) => {
        say(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
}
