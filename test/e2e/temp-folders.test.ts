/**
 * No temporary folder outlives the browser mode or the fleet demo, however they end: the command each npm
 * script runs (read from package.json), started in its own process group as a terminal starts it, stopped
 * by a real signal (Ctrl+C is SIGINT to the whole group; a service manager sends SIGTERM to the process)
 * or ended by a start-up error. Each run gets its own TMPDIR, so what is left is exactly what it left.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './harness.ts';
import { CHROMIUM, dataDir, hasXvfb, isRoot, pageConnections, startXvfb } from './browser-processes.ts';

const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => existsSync(p));

/** The command an npm script runs after its build (`… && <this>`), as package.json says today. */
function scriptCommand(name: string): string {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return scripts[name]!.split(' && ').at(-1)!;
}

/** Ours in a TMPDIR: the folders the two hosts make (Chromium's and tsx's own are not ours). */
const ours = (dir: string) => readdirSync(dir).filter((n) => /^(ak-fleet-demo-|avatar-kiosk-browser-)/.test(n)).sort();

function start(command: string, env: Record<string, string>, args: string[] = []) {
  const tmp = mkdtempSync(join(tmpdir(), 'kiosk-tmpdir-'));
  // A shell, as npm runs a script; its own group, as a terminal's foreground job is.
  const child = spawn('sh', ['-c', `exec ${command} ${args.join(' ')}`], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, TMPDIR: tmp },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return { child, tmp, out: () => out, exited };
}

async function until(what: string, pred: () => boolean, timeoutMs = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Mosquitto processes started with a config under `dir`. */
function mosquittosUnder(dir: string): string[] {
  const r = spawnSync('pgrep', ['-af', `mosquitto -c ${dir}`], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean);
}

describe('npm run fleet (the demo): its temporary folders and Mosquitto go on every exit', { skip: MOSQUITTO ? false : 'no mosquitto' }, () => {
  for (const [how, signal, toGroup] of [
    ['Ctrl+C (SIGINT to the group)', 'SIGINT', true],
    ['SIGTERM to the process', 'SIGTERM', false],
  ] as const) {
    it(`${how}: its three folders (broker, console's memory, kiosks) removed, Mosquitto ended, exit 0`, async () => {
      const run = start(scriptCommand('fleet'), {}, ['--port', '0', '--demo-kiosks', '2']);
      try {
        await until('the console to run', () => run.out().includes('Stop with Ctrl+C.') || run.child.exitCode !== null);
        assert.deepEqual(ours(run.tmp).map((n) => n.replace(/-[^-]+$/, '')).sort(), ['ak-fleet-demo', 'ak-fleet-demo-console', 'ak-fleet-demo-kiosks'], run.out());
        if (toGroup) process.kill(-run.child.pid!, signal);
        else run.child.kill(signal);
        assert.equal(await run.exited, 0, run.out());
        assert.deepEqual(ours(run.tmp), []);
        assert.deepEqual(mosquittosUnder(run.tmp), []);
      } finally {
        if (run.child.exitCode === null) process.kill(-run.child.pid!, 'SIGKILL');
        rmSync(run.tmp, { recursive: true, force: true });
      }
    });
  }

  it('a console that cannot start (its port is taken): the sentence, exit 1, nothing left', async () => {
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const port = (busy.address() as { port: number }).port;
    const run = start(scriptCommand('fleet'), {}, ['--port', String(port), '--demo-kiosks', '2']);
    try {
      assert.equal(await run.exited, 1);
      assert.equal(run.out().trim(), `The fleet console could not start: listen EADDRINUSE: address already in use 127.0.0.1:${port}`);
      assert.deepEqual(ours(run.tmp), []);
      assert.deepEqual(mosquittosUnder(run.tmp), []);
    } finally {
      busy.close();
      rmSync(run.tmp, { recursive: true, force: true });
    }
  });
});

describe('npm run start:browser: the browser\'s profile goes on every exit', { skip: !hasXvfb ? 'no Xvfb' : !existsSync(CHROMIUM) ? `no ${CHROMIUM}` : false }, () => {
  for (const [how, signal, toGroup] of [
    ['Ctrl+C (SIGINT to the group)', 'SIGINT', true],
    ['SIGTERM to the process', 'SIGTERM', false],
  ] as const) {
    it(`${how}: the profile removed, exit 0`, async () => {
      const display = await startXvfb();
      const data = await dataDir({ window: { mode: 'windowed' } });
      const run = start(scriptCommand('start:browser'), {
        DISPLAY: display.display,
        AVATAR_KIOSK_DATA: data,
        KIOSK_BROWSER: CHROMIUM,
        ...(isRoot ? { KIOSK_BROWSER_NO_SANDBOX: '1' } : {}),
      });
      try {
        await until('the page to connect', () => pageConnections(data) >= 1 || run.child.exitCode !== null);
        assert.equal(ours(run.tmp).length, 1, run.out());
        if (toGroup) process.kill(-run.child.pid!, signal);
        else run.child.kill(signal);
        assert.equal(await run.exited, 0, run.out());
        assert.deepEqual(ours(run.tmp), []);
      } finally {
        if (run.child.exitCode === null) process.kill(-run.child.pid!, 'SIGKILL');
        display.stop();
        rmSync(run.tmp, { recursive: true, force: true });
      }
    });
  }
});
