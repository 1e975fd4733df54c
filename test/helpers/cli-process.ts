/**
 * The CLI as an installer runs it: a child process of Node itself (as `npm run cli` runs it), with a HOME
 * and settings folder of the test's own and no API key from the environment unless given, killed after 60 s.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';

export const ROOT = join(import.meta.dirname, '../..');
const CLI = join(ROOT, 'electron/cli/index.ts');

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts the CLI with `args`: no API key from the environment unless `env` gives one; with `home`, that
 * folder as HOME and its settings folder. Node itself, as `npm run cli` runs it: behind tsx's own parent
 * process a signal is relayed, and on a loaded machine that parent SIGKILLs the CLI when it has not
 * confirmed within 30 ms (no hang-up sent).
 */
export function startCli(args: string[], env: Record<string, string> = {}, options: { home?: string; input?: string } = {}): { child: ChildProcess; done: Promise<CliRun>; output: () => string } {
  const { home, input } = options;
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, AVATAR_API_KEY: '', ...(home ? { HOME: home, XDG_CONFIG_HOME: join(home, '.config') } : {}), ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin!.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<CliRun>((resolve) => child.on('close', (code, signal) => (clearTimeout(timer), resolve({ code, signal, stdout, stderr }))));
  return { child, done, output: () => stdout + stderr };
}

/** A runner whose every run has `home` as HOME (a fresh temporary folder unless given). */
export function cliRunner(home = mkdtempSync(join(tmpdir(), 'kiosk-cli-home-'))) {
  return (args: string[], env: Record<string, string> = {}, input?: string): Promise<CliRun> => startCli(args, env, { home, ...(input !== undefined ? { input } : {}) }).done;
}

/** A standalone emulator (direct surface) for a test file's CLI runs: started before its tests, closed after. */
export function standaloneEmulator(): Pick<EmulatorHandle, 'baseUrl' | 'apiKey' | 'getSession'> {
  let handle: EmulatorHandle | undefined;
  before(async () => {
    handle = await startEmulator({ host: '127.0.0.1', port: 0, knobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 20 } });
  });
  after(async () => {
    await handle?.close();
  });
  const started = () => handle ?? assert.fail('the emulator is started before the tests');
  return {
    get baseUrl() {
      return started().baseUrl;
    },
    get apiKey() {
      return started().apiKey;
    },
    getSession: (id) => started().getSession(id),
  };
}
