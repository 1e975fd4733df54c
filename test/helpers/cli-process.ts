/**
 * The CLI as an installer runs it: a child process of Node itself (as `npm run cli` runs it), with a HOME
 * and settings folder of the test's own and no API key from the environment unless given, killed after 60 s.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';

export const ROOT = join(import.meta.dirname, '../..');
const CLI = join(ROOT, 'electron/cli/index.ts');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A runner whose every run has `home` as HOME (a fresh temporary folder unless given). */
export function cliRunner(home = mkdtempSync(join(tmpdir(), 'kiosk-cli-home-'))) {
  return function cli(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliRun> {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, AVATAR_API_KEY: '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    return new Promise((resolve) => child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))));
  };
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
