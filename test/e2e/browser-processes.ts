/**
 * The browser mode as processes, for the tests that run it as a person or a kiosk does: an entry file in
 * its own process, a data folder with an installed kiosk, a virtual display (Xvfb) with its windows read
 * and keys sent through the X Test extension (xdotool), Chromium's browser processes, and a Chromium
 * policy given to one process tree only (a private mount namespace: the machine's /etc is never written,
 * so other tests' browsers never see it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { ROOT } from './harness.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const isRoot = process.getuid?.() === 0;
export const hasXvfb = existsSync('/usr/bin/Xvfb');
export const hasXdotool = existsSync('/usr/bin/xdotool');

/** Folders made by `tempDir`, removed when the test process exits; hosts and displays still running then
 *  (a test that timed out skips its `after`) are asked to stop, so no window or browser outlives the run. */
const made: string[] = [];
const running: ChildProcess[] = [];
process.once('exit', () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under the system's temporary folder, named `prefix…`, removed when the tests end. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export interface Running {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

/** Run an entry file with tsx, its stdout and stderr collected; `prefix` runs it through another command
 *  (`unshare …`, which ends by exec-ing node, so the child's pid is node's). */
export function runEntry(file: string, env: Record<string, string>, args: string[] = [], prefix: string[] = []): Running {
  const command = [...prefix, process.execPath, '--import', 'tsx', join(ROOT, file), ...args];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  running.push(child);
  return { child, out: () => out, exited };
}

/** A data folder with an installed kiosk (a staff PIN) and `config`. */
export async function dataDir(config: Record<string, unknown>): Promise<string> {
  const dir = tempDir('kiosk-start-');
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ staffPinHash: await hashPin('246813'), prewarm: { mode: 'off' }, presence: { cameraEnabled: false }, ...config }));
  return dir;
}

/** Chromium's browser processes (not its zygotes/renderers) whose parent is `pid`. */
export function browserChildren(pid: number): Array<{ pid: number; args: string[] }> {
  const found: Array<{ pid: number; args: string[] }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (args.some((a) => a.includes('chromium')) && !args.some((a) => a.startsWith('--type='))) found.push({ pid: Number(entry), args });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** The host's log lines (empty before it wrote one). */
export function hostLog(data: string): string[] {
  const log = join(data, 'logs', 'main.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n') : [];
}

/** Count of "the page is connected" lines in the host's log. */
export function pageConnections(data: string): number {
  return hostLog(data).filter((l) => l.includes('Browser mode: the page is connected')).length;
}

/** A virtual display for Chromium (Xvfb picks a free display number itself). */
export async function startXvfb(): Promise<{ display: string; stop(): void }> {
  const xvfb = spawn('/usr/bin/Xvfb', ['-displayfd', '1', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], { stdio: ['ignore', 'pipe', 'ignore'] });
  running.push(xvfb);
  const number = await new Promise<string>((ok, fail) => {
    let text = '';
    xvfb.stdout!.on('data', (d: Buffer) => {
      text += d.toString('utf8');
      if (text.includes('\n')) ok(text.trim());
    });
    xvfb.once('exit', () => fail(new Error('Xvfb stopped')));
    setTimeout(() => fail(new Error('Xvfb gave no display number')), 10_000).unref();
  });
  return { display: `:${number}`, stop: () => void xvfb.kill('SIGTERM') };
}

/** The windows mapped on `display`'s screen, menus and popups included (xdotool; id → name), leaving out
 *  those in `known` (their names are not asked for: one process per sample while nothing new shows). */
export function visibleWindows(display: string, known: ReadonlySet<string> = new Set()): Map<string, string> {
  const run = (args: string[]) => spawnSync('/usr/bin/xdotool', args, { env: { ...process.env, DISPLAY: display }, encoding: 'utf8', timeout: 5_000 });
  const ids = run(['search', '--onlyvisible', '--maxdepth', '1', '--name', '']).stdout.split('\n').filter((id) => id && !known.has(id));
  return new Map(ids.map((id) => [id, run(['getwindowname', id]).stdout.trim() || '(no name)']));
}

/** Keys as a person presses them (XTest), in `window` when given (it gets the focus first). */
export function pressKeys(display: string, keys: string[], window?: string): void {
  const env = { ...process.env, DISPLAY: display };
  if (window) spawnSync('/usr/bin/xdotool', ['windowfocus', '--sync', window], { env, timeout: 5_000 });
  spawnSync('/usr/bin/xdotool', ['key', '--clearmodifiers', '--delay', '30', ...keys], { env, timeout: 10_000 });
}

/** Text typed as a key injector types it (10 ms a key). */
export function typeText(display: string, text: string): void {
  spawnSync('/usr/bin/xdotool', ['type', '--delay', '10', text], { env: { ...process.env, DISPLAY: display }, timeout: 10_000 });
}

/** Why a Chromium policy cannot be given to one process tree here, or null. Root gets a private mount
 *  namespace; another user needs user namespaces (and Chromium then runs without its sandbox, as root of
 *  that namespace). */
export function policyIsolationMissing(): string | null {
  if (!existsSync('/etc/chromium')) return 'no /etc/chromium to lay a policy over (Debian\'s chromium package makes it)';
  const probe = spawnSync('unshare', [...unshareFlags(), 'true'], { timeout: 10_000 });
  return probe.status === 0 ? null : `unshare cannot make a private mount namespace here (${String(probe.stderr ?? '').trim() || `exit ${probe.status}`}): run as root, as CI does`;
}

function unshareFlags(): string[] {
  return [...(isRoot ? [] : ['--map-root-user']), '--mount', '--propagation', 'private'];
}

/** A command prefix under which /etc/chromium holds `policy` as its only managed policy (a copy of the
 *  machine's folder with policies/managed/kiosk.json; bind-mounted in a private mount namespace). */
export function withChromiumPolicy(policy: string): string[] {
  const etc = tempDir('kiosk-etc-chromium-');
  cpSync('/etc/chromium', etc, { recursive: true });
  mkdirSync(join(etc, 'policies', 'managed'), { recursive: true });
  writeFileSync(join(etc, 'policies', 'managed', 'kiosk.json'), policy);
  return ['unshare', ...unshareFlags(), 'sh', '-c', 'mount --bind "$0" /etc/chromium && exec "$@"', etc];
}

/** The shipped policy file, for the kiosk on `port` (the file names the documented port). */
export function shippedPolicy(port: number, change: (policy: Record<string, unknown>) => void = () => undefined): string {
  const text = readFileSync(join(ROOT, 'resources', 'chromium-policy', 'kiosk.json'), 'utf8').replaceAll('http://127.0.0.1:8765', `http://127.0.0.1:${port}`);
  const policy = JSON.parse(text) as Record<string, unknown>;
  change(policy);
  return JSON.stringify(policy, null, 2);
}
