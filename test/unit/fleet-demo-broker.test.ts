/**
 * The demo's own Mosquitto (electron/fleet/console/demo-broker.ts): where it looks for the binary, the
 * configuration it writes (127.0.0.1 only, no logins, nothing kept), a broker that answers anonymous
 * clients until stopped and leaves no folder behind, and the refusals when there is no Mosquitto or it
 * exits at once. A Mosquitto that fails is a stand-in process (spawn replaced for that test only).
 */
import assert from 'node:assert/strict';
import childProcess, { type ChildProcess } from 'node:child_process';
import fs, { readdirSync, readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, it, mock } from 'node:test';
import { connectAsync } from 'mqtt';
import { accepts, findMosquitto, freePort, MOSQUITTO_CANDIDATES, startDemoBroker } from '../../electron/fleet/console/demo-broker.ts';
import { mosquittoMissing } from '../helpers/mosquitto.ts';
import { tempDirsRemovedAfterEach } from '../helpers/temp-dirs.ts';
import { until } from '../helpers/until.ts';

const tempDir = tempDirsRemovedAfterEach('ak-demo-broker-');
const realTmp = process.env.TMPDIR;

/** Replace a node: built-in for the code under test too (its named imports follow the built-in's object). */
function replaceBuiltin<T extends object, K extends keyof T>(object: T, name: K, fake: T[K]): void {
  mock.method(object, name as never, fake as never);
  syncBuiltinESMExports();
}

/** The demo's temp folders go under a folder of the test's own, to be read and checked gone. */
function ownTmp(): string {
  const dir = tempDir();
  process.env.TMPDIR = dir;
  return dir;
}

afterEach(() => {
  mock.restoreAll();
  syncBuiltinESMExports();
  if (realTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = realTmp;
});

describe('demo broker', () => {
  it('looks for Mosquitto where Debian, a local build and Homebrew put it, first found first', () => {
    assert.deepEqual(MOSQUITTO_CANDIDATES, ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto', '/usr/local/bin/mosquitto', '/opt/homebrew/sbin/mosquitto']);
    let installed = (p: string) => p.startsWith('/usr/local/');
    replaceBuiltin(fs, 'existsSync', ((p: string) => installed(p)) as typeof fs.existsSync);
    assert.equal(findMosquitto(), '/usr/local/sbin/mosquitto');
    installed = () => false;
    assert.equal(findMosquitto(), null);
  });

  it('refuses to start without Mosquitto, saying how to get it', async () => {
    replaceBuiltin(fs, 'existsSync', (() => false) as typeof fs.existsSync);
    await assert.rejects(startDemoBroker(), {
      message: 'The demo needs Mosquitto (Debian/Ubuntu: sudo apt-get install mosquitto; macOS: brew install mosquitto), or give --broker.',
    });
  });

  /** Mosquitto replaced by a shell running `script`, with the options the demo gives it; the process is kept. */
  function standIn(script: string): { child: ChildProcess | null } {
    const real = childProcess.spawn;
    const started: { child: ChildProcess | null } = { child: null };
    replaceBuiltin(childProcess, 'spawn', ((_bin: string, _args: string[], options: object) => (started.child = real('/bin/sh', ['-c', script], options as never))) as typeof childProcess.spawn);
    return started;
  }

  it('says so, with what Mosquitto printed, when it exits at once, and leaves no folder', async () => {
    const tmp = ownTmp();
    standIn('echo "Error: Unable to open config file." >&2; exit 3');
    await assert.rejects(startDemoBroker(), { message: 'Mosquitto exited (3): Error: Unable to open config file.' });
    assert.deepEqual(readdirSync(tmp), []);
  });

  it('gives up on a Mosquitto that does not listen within 5 s, and stops it and removes its folder', async () => {
    const tmp = ownTmp();
    const started = standIn('exec sleep 30');
    // Every look at the clock is a second later: the 5 s pass in a few 50 ms rounds.
    let now = Date.now();
    mock.method(Date, 'now', () => (now += 1_000));
    await assert.rejects(startDemoBroker(), /^Error: Mosquitto did not listen on \d+: $/);
    await until(() => started.child!.signalCode !== null, { message: 'the stand-in stopped' });
    assert.equal(started.child!.signalCode, 'SIGKILL');
    assert.deepEqual(readdirSync(tmp), []);
  });

  it('runs a Mosquitto on 127.0.0.1 for anonymous clients, with nothing kept, until stopped', { skip: mosquittoMissing() ?? false }, async () => {
    const tmp = ownTmp();
    const broker = await startDemoBroker();
    try {
      const port = Number(/^mqtt:\/\/127\.0\.0\.1:(\d+)$/.exec(broker.url)?.[1]);
      const [folder] = readdirSync(tmp);
      assert.match(folder!, /^ak-fleet-demo-/);
      assert.equal(
        readFileSync(join(tmp, folder!, 'mosquitto.conf'), 'utf8'),
        [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', ...(process.getuid?.() === 0 ? ['user root'] : []), 'log_dest stderr', 'log_type error', ''].join('\n'),
      );
      const client = await connectAsync(broker.url, { reconnectPeriod: 0, connectTimeout: 5_000 });
      await client.endAsync();
      await broker.stop();
      assert.equal(await accepts(port), false, 'stopped: nothing listens');
      assert.deepEqual(readdirSync(tmp), [], 'its folder is removed');
      await broker.stop();
    } finally {
      await broker.stop();
    }
  });

  it('finds a port free on 127.0.0.1, and tells whether something listens there', async () => {
    const port = await freePort();
    assert.ok(Number.isInteger(port) && port > 0);
    assert.equal(await accepts(port), false);
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      assert.equal(await accepts(port), true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
