/**
 * Runs electron/main/index.ts under plain Node against the electron stub (test/electron/stub/main-harness.ts)
 * in a child process, for one scenario, and returns the harness's one-line JSON report.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');

export interface HarnessRun {
  facts: Record<string, any>;
  output: string;
  code: number | null;
}

export function runHarness(scenario: string, env: Record<string, string> = {}): Promise<HarnessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './test/electron/stub/register.mjs', 'test/electron/stub/main-harness.ts', scenario],
      { cwd: ROOT, env: { ...process.env, AVATAR_API_KEY: '', KIOSK_WINDOW_MODE: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // Separate buffers: a log line on stderr must not land inside the JSON report on stdout.
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const output = `${stdout}\n${stderr}`;
      const line = stdout.split('\n').find((l) => l.startsWith('HARNESS '));
      if (!line) return reject(new Error(`harness (${scenario}) printed no report, exit ${code}:\n${output.slice(-3000)}`));
      try {
        resolve({ facts: JSON.parse(line.slice('HARNESS '.length)), output, code });
      } catch (error) {
        reject(error);
      }
    });
  });
}
