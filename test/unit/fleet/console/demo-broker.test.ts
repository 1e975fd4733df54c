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
import net, { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, it, mock } from 'node:test';
import { connectAsync } from 'mqtt';
import { accepts, findMosquitto, freePort, MOSQUITTO_CANDIDATES, startDemoBroker } from '../../../../electron/fleet/console/demo-broker.ts';
import { mosquittoMissing } from '../../../helpers/mosquitto.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';
import { until } from '../../../helpers/until.ts';

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

  /** Mosquitto replaced by a shell running `script` (its arguments: "-c" and the configuration file), with
   *  the options the demo gives it; the process is kept. */
  function standIn(script: string): { child: ChildProcess | null } {
    const real = childProcess.spawn;
    const started: { child: ChildProcess | null } = { child: null };
    replaceBuiltin(childProcess, 'spawn', ((_bin: string, args: string[], options: object) => (started.child = real('/bin/sh', ['-c', script, 'mosquitto', ...args], options as never))) as typeof childProcess.spawn);
    return started;
  }

  it('says so, with what Mosquitto printed, when it exits at once, and leaves no folder', async () => {
    const tmp = ownTmp();
    standIn('echo "Error: Unable to open config file." >&2; sleep 0.2; exit 3');
    await assert.rejects(startDemoBroker(), { message: 'Mosquitto exited (3): Error: Unable to open config file.' });
    assert.deepEqual(readdirSync(tmp), []);
  });

  it('gives up on a Mosquitto that does not listen within 5 s, and stops it and removes its folder', async () => {
    const tmp = ownTmp();
    const printed = join(tmp, 'printed');
    const started = standIn(`echo "Opening ipv4 listen socket" >&2; touch ${printed}; exec sleep 30`);
    // Once it has printed, every look at the clock is a second later: the 5 s pass in a few 50 ms rounds.
    const realNow = Date.now.bind(Date);
    let now = realNow();
    const clock = mock.method(Date, 'now', () => (fs.existsSync(printed) ? (now += 1_000) : (now = realNow())));
    await assert.rejects(startDemoBroker(), /^Error: Mosquitto did not listen on \d+: Opening ipv4 listen socket$/);
    clock.mock.restore();
    await until(() => started.child!.signalCode !== null, { message: 'the stand-in stopped' });
    assert.equal(started.child!.signalCode, 'SIGKILL');
    assert.deepEqual(readdirSync(tmp).filter((f) => f !== 'printed'), []);
  });

  it('waits for it to listen while the clock has not passed the 5 s, up to the last millisecond', async () => {
    ownTmp();
    const listen = `require('node:net').createServer().listen(Number(process.argv[1]), '127.0.0.1')`;
    standIn(`port=$(sed -n 's/^listener \\([0-9]*\\) .*/\\1/p' "$2"); exec "${process.execPath}" -e "${listen}" "$port"`);
    const start = Date.now();
    let looks = 0;
    mock.method(Date, 'now', () => (looks++ === 0 ? start : start + 5_000));
    const broker = await startDemoBroker();
    await broker.stop();
  });

  it('writes no "user root" line when not run as root, nor where there are no user ids (Windows)', async () => {
    const conf = (withUser: boolean) =>
      new RegExp(`^Error: Mosquitto exited \\(1\\): listener \\d+ 127\\.0\\.0\\.1\nallow_anonymous true\npersistence false\n${withUser ? 'user root\n' : ''}log_dest stderr\nlog_type error$`);
    ownTmp();
    standIn('cat "$2" >&2; sleep 0.2; exit 1');
    mock.method(process as { getuid(): number }, 'getuid', () => 1000);
    await assert.rejects(startDemoBroker(), conf(false));
    mock.method(process as { getuid(): number }, 'getuid', () => 0);
    await assert.rejects(startDemoBroker(), conf(true));
    const getuid = process.getuid;
    (process as { getuid?: unknown }).getuid = undefined;
    try {
      await assert.rejects(startDemoBroker(), conf(false));
    } finally {
      process.getuid = getuid;
    }
  });

  it('does not let what Mosquitto writes to its standard output hold it up', async () => {
    ownTmp();
    standIn('head -c 2000000 /dev/zero; exit 4');
    await assert.rejects(startDemoBroker(), { message: 'Mosquitto exited (4): ' });
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

  it('passes on the error when no port can be had on 127.0.0.1', async () => {
    const real = net.createServer;
    replaceBuiltin(net, 'createServer', (() => {
      const server = real();
      server.listen = (() => {
        process.nextTick(() => server.emit('error', Object.assign(new Error('listen EADDRNOTAVAIL: address not available 127.0.0.1'), { code: 'EADDRNOTAVAIL' })));
        return server;
      }) as typeof server.listen;
      return server;
    }) as typeof net.createServer);
    await assert.rejects(freePort(), { code: 'EADDRNOTAVAIL', message: 'listen EADDRNOTAVAIL: address not available 127.0.0.1' });
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
