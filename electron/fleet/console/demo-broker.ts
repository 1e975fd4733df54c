/**
 * The demo's own Mosquitto (`npm run fleet` with no --broker): on 127.0.0.1, a free port, a temp folder,
 * no logins (nothing but this computer can reach it). Debian's /usr/sbin/mosquitto or one on PATH.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const MOSQUITTO_CANDIDATES = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto', '/usr/local/bin/mosquitto', '/opt/homebrew/sbin/mosquitto'];

export function findMosquitto(): string | null {
  return MOSQUITTO_CANDIDATES.find(existsSync) ?? null;
}

export interface DemoBroker {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startDemoBroker(): Promise<DemoBroker> {
  const bin = findMosquitto();
  if (!bin) throw new Error('The demo needs Mosquitto (Debian/Ubuntu: sudo apt-get install mosquitto; macOS: brew install mosquitto), or give --broker.');
  const dir = mkdtempSync(join(tmpdir(), 'ak-fleet-demo-'));
  const port = await freePort();
  writeFileSync(join(dir, 'mosquitto.conf'), [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', ...(process.getuid?.() === 0 ? ['user root'] : []), 'log_dest stderr', 'log_type error', ''].join('\n'));
  const child: ChildProcess = spawn(bin, ['-c', join(dir, 'mosquitto.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 5000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`Mosquitto exited (${child.exitCode}): ${stderr.trim()}`);
      if (await accepts(port)) break;
      if (Date.now() > deadline) throw new Error(`Mosquitto did not listen on ${port}: ${stderr.trim()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (error) {
    // Nobody gets a handle to stop it: a Mosquitto that never listened must not outlive the demo, nor its folder.
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  // The last word on any exit that skips stop() (process.exit on a start-up error, an uncaught error):
  // no Mosquitto and no folder of ours outlives the process. Synchronous, as an exit handler must be.
  const atExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', atExit);
  return {
    url: `mqtt://127.0.0.1:${port}`,
    async stop() {
      process.removeListener('exit', atExit);
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:port (a broker that has started). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
