/**
 * What `npm run start:browser` prints, from the real entry file (electron/browser/index.ts) in its own
 * process, no browser opened (KIOSK_BROWSER=none): no build needed, the terminal read line by line.
 *  - a service nobody answers: one line, each piece of advice said once;
 *  - two kiosks on one data folder: the second says who holds it and what to do, exits 1, writes nothing;
 *  - a lock a killed kiosk left behind does not keep the next start out.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LOCK_FILE, procStart } from '../../../electron/operations/data-lock.ts';
import { closedPort } from '../../helpers/closed-port.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';
import { until } from '../../helpers/until.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const WAIT_MS = 60_000;
const tempDir = tempDirsRemovedAfterEach('kiosk-start-lines-');

interface Started {
  child: ChildProcess;
  lines(): string[];
  exited: Promise<number | null>;
}
const started: Started[] = [];
after(() => {
  for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

function startBrowserMode(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'electron/browser/index.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', KIOSK_BROWSER: 'none', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  const s = { child, lines: () => out.split('\n').filter(Boolean), exited };
  started.push(s);
  return s;
}

async function running(s: Started): Promise<void> {
  await until(() => s.lines().some((l) => l.startsWith('Stop with Ctrl+C.')) || s.child.exitCode !== null, { realTimeoutMs: WAIT_MS, message: 'the host started' });
  assert.equal(s.child.exitCode, null, s.lines().join('\n'));
}

/** The exit code, or 'still running' after `ms` (the test fails instead of hanging). */
function exitWithin(s: Started, ms: number): Promise<number | null | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((ok) => (timer = setTimeout(() => ok('still running'), ms)));
  return Promise.race([s.exited, late]).finally(() => clearTimeout(timer));
}

async function stop(s: Started): Promise<void> {
  s.child.kill('SIGINT');
  assert.equal(await s.exited, 0);
}

describe('npm run start:browser, as printed', () => {
  it('a service nobody answers: one line, the fact, one piece of advice, and that it is checked again', async () => {
    const port = await closedPort();
    const s = startBrowserMode({ AVATAR_KIOSK_DATA: tempDir(), AVATAR_BASE_URL: `https://127.0.0.1:${port}`, AVATAR_API_KEY: 'x' });
    await until(() => s.lines().some((l) => l.startsWith('Service: NOT CONNECTED')), { realTimeoutMs: WAIT_MS, message: 'the service line' });
    const service = s.lines().filter((l) => l.startsWith('Service:'));
    assert.deepEqual(service, [
      'Service: checking…',
      `Service: NOT CONNECTED. The service at https://127.0.0.1:${port} could not be reached (connection refused). What to do: Check the address, the network and the venue's proxy or firewall. The kiosk checks again by itself.`,
    ]);
    const all = s.lines().join('\n');
    for (const advice of [/Check /g, /network/gi, /again by itself/g]) assert.equal(all.match(advice)?.length, 1, `${advice} once in:\n${all}`);
    await stop(s);
  });

  it('two kiosks on one data folder: the second says who holds it and what to do, exits 1 and writes nothing', async () => {
    const data = tempDir();
    const first = startBrowserMode({ AVATAR_KIOSK_DATA: data });
    await running(first);
    const before = snapshot(data);
    const second = startBrowserMode({ AVATAR_KIOSK_DATA: data });
    assert.equal(await exitWithin(second, WAIT_MS), 1, `the second start kept running:\n${second.lines().join('\n')}`);
    assert.deepEqual(second.lines(), [
      `Another Avatar Kiosk is already running with the data folder ${data} (process ${first.child.pid}): stop it first, or set AVATAR_KIOSK_DATA to another folder to run a second kiosk.`,
    ]);
    assert.deepEqual(snapshot(data), before, 'the second start wrote nothing');
    assert.equal(first.child.exitCode, null, 'the first kiosk runs on');
    await stop(first);
    assert.equal(existsSync(join(data, LOCK_FILE)), false, 'the lock goes with its kiosk');

    // Its folder free again, the next start runs.
    const third = startBrowserMode({ AVATAR_KIOSK_DATA: data });
    await running(third);
    await stop(third);
  });

  it('a lock left by a kiosk that was killed (its pid gone) does not keep the next start out', async () => {
    const data = tempDir();
    const killed = startBrowserMode({ AVATAR_KIOSK_DATA: data });
    await running(killed);
    killed.child.kill('SIGKILL');
    await killed.exited;
    const left = JSON.parse(readFileSync(join(data, LOCK_FILE), 'utf8')) as { pid: number };
    assert.equal(left.pid, killed.child.pid, 'SIGKILL left the lock behind');

    const next = startBrowserMode({ AVATAR_KIOSK_DATA: data });
    await running(next);
    assert.equal((JSON.parse(readFileSync(join(data, LOCK_FILE), 'utf8')) as { pid: number }).pid, next.child.pid);
    await stop(next);
  });

  it('a lock whose pid now belongs to another process (reused after a crash) is stale too', { skip: procStart(process.pid) === null ? 'needs /proc' : false }, async () => {
    const data = tempDir();
    // A live process (this test's own), with another start time than the one written: a reused pid.
    writeFileSync(join(data, LOCK_FILE), JSON.stringify({ pid: process.pid, start: '1' }));
    const next = startBrowserMode({ AVATAR_KIOSK_DATA: data });
    await running(next);
    await stop(next);
  });
});

/** Every file under `dir` with its size and modification time. */
function snapshot(dir: string): string[] {
  const found = spawnSync('find', [dir, '-printf', '%P %s %T@\\n'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort();
  assert.ok(found.length > 0 && readdirSync(dir).length > 0);
  return found;
}
