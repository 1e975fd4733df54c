/**
 * A build that prints nothing unless it fails (then its last lines and one sentence saying so): what
 * `npm start` does before it starts, shared with `npm run start:browser` and `npm run fleet`, which would
 * otherwise print vite's whole report (dozens of lines of file sizes) in front of the lines that matter.
 *
 * As a command: `tsx electron/browser/quiet-build.ts SCRIPT` says one line, runs `npm run --silent SCRIPT`
 * in the current folder and exits 0, or 1 when the build failed.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** What is kept of a build's output, to show when it fails (its last lines say why). */
const KEEP_CHARS = 20_000;
/** Lines of a failed build shown. */
export const FAILED_BUILD_LINES = 30;

/** Run `npm run --silent <script>` with its output held back; `output` is the tail of what it printed. */
export function buildQuietly(script = 'build', cwd = ROOT): Promise<{ ok: boolean; output: string }> {
  return new Promise((done) => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const child = spawn(npm, ['run', '--silent', script], { cwd, stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
    let output = '';
    const keep = (d: Buffer) => (output = (output + d.toString('utf8')).slice(-KEEP_CHARS));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (e) => done({ ok: false, output: e.message }));
    child.on('exit', (code) => done({ ok: code === 0, output }));
  });
}

/** What a failed build prints: its last lines, then the sentence. */
export function failedBuildText(output: string): string {
  return `${output.trimEnd().split('\n').slice(-FAILED_BUILD_LINES).join('\n')}\n\nThe build failed (its last lines are above).\n`;
}

/** The one line said while a build runs (a minute of silence would look like a hang). */
export function buildingLine(script: string): string {
  if (script === 'build') return 'Building the app (about a minute the first time)…';
  if (script === 'build:fleet-console') return 'Building the fleet console…';
  return `Building (${script})…`;
}

const isEntry = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isEntry) {
  const script = process.argv[2] ?? 'build';
  process.stdout.write(`${buildingLine(script)}\n`);
  // npm runs a script in the package's folder: the build is that package's.
  void buildQuietly(script, process.cwd()).then((build) => {
    if (!build.ok) process.stdout.write(failedBuildText(build.output));
    process.exit(build.ok ? 0 : 1);
  });
}
