/**
 * A real Mosquitto broker for tests and the fleet bench: on 127.0.0.1, a free port, its own temp folder,
 * a password file (mosquitto_passwd) and the per-kiosk ACL from docs/fleet.md. `stop()` / `start()` again
 * keep the port and the persistence file (so a test can take the broker away and bring it back).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { accepts, freePort, MOSQUITTO_CANDIDATES as CANDIDATES } from '../../electron/fleet/console/demo-broker.ts';

export { freePort };
const PASSWD_CANDIDATES = ['/usr/bin/mosquitto_passwd', '/usr/local/bin/mosquitto_passwd', '/usr/sbin/mosquitto_passwd'];

/** Why the broker tests cannot run here (null when they can). */
export function mosquittoMissing(): string | null {
  if (!CANDIDATES.some(existsSync)) return 'mosquitto is not installed (Debian: apt-get install mosquitto; .ci/run installs it)';
  if (!PASSWD_CANDIDATES.some(existsSync)) return 'mosquitto_passwd is not installed (it comes with the mosquitto package)';
  return null;
}

export const PREFIX = 'ak';
/** The ACL of docs/fleet.md: each kiosk (user = its id) its own topics; the operator reads all and commands all. */
export const ACL = `# Kiosks: user name = kiosk id
pattern write ${PREFIX}/%u/status
pattern write ${PREFIX}/%u/events
pattern write ${PREFIX}/%u/cmd/result
pattern read ${PREFIX}/%u/cmd
# Every kiosk reads the fleet-wide and group commands (a kiosk id never starts with "_" in practice).
pattern read ${PREFIX}/_fleet/cmd
pattern read ${PREFIX}/_group/+/cmd

user operator
topic read ${PREFIX}/#
topic write ${PREFIX}/+/cmd
topic write ${PREFIX}/_group/+/cmd
`;

export interface Broker {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly pid: number | null;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stop and remove the folder. */
  dispose(): Promise<void>;
}

/** Users and passwords: `{ operator: 'op-secret', 'kiosk-a': 'a-secret' }`. */
/** `maxPacketSize`: the broker's `max_packet_size` (what it takes from any client). */
export async function startBroker(users: Record<string, string>, options: { maxConnections?: number; maxPacketSize?: number } = {}): Promise<Broker> {
  const bin = CANDIDATES.find(existsSync)!;
  const passwdBin = PASSWD_CANDIDATES.find(existsSync)!;
  const dir = mkdtempSync(join(tmpdir(), 'ak-mosquitto-'));
  const passwd = join(dir, 'passwd');
  // Plain `user:password` lines, hashed in place in one run (-U).
  writeFileSync(passwd, Object.entries(users).map(([user, password]) => `${user}:${password}\n`).join(''), { mode: 0o600 });
  const r = spawnSync(passwdBin, ['-U', passwd], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mosquitto_passwd failed: ${r.stderr}`);
  writeFileSync(join(dir, 'acl'), ACL, { mode: 0o600 });
  const port = await freePort();
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${passwd}`,
      `acl_file ${join(dir, 'acl')}`,
      'persistence true',
      `persistence_location ${dir}/`,
      // Started as root (CI), mosquitto drops to the `mosquitto` user, which cannot read our 0600 files.
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      ...(options.maxConnections ? [`max_connections ${options.maxConnections}`] : []),
      ...(options.maxPacketSize ? [`max_packet_size ${options.maxPacketSize}`] : []),
      '',
    ].join('\n'),
  );
  let child: ChildProcess | null = null;
  const broker: Broker = {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    dir,
    get pid() {
      return child?.pid ?? null;
    },
    async start() {
      if (child) return;
      const proc = spawn(bin, ['-c', join(dir, 'mosquitto.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
      child = proc;
      let stderr = '';
      proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      // Ready once the port accepts connections (bounded).
      const deadline = Date.now() + 5_000;
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`mosquitto exited (${proc.exitCode}): ${stderr}`);
        if (await accepts(port)) break;
        if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${port}: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      const proc = child;
      child = null;
      if (!proc || proc.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      });
    },
    async dispose() {
      await broker.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await broker.start();
  return broker;
}
/** A message an operator client saw: its topic, its JSON body (or what could not be parsed), its retain flag. */
export interface SeenMessage {
  topic: string;
  body: Record<string, unknown>;
  retain: boolean;
}

/** Record every message `client` receives into `seen` (the operator side of the broker tests). */
export function recordMessages(client: MqttClient, seen: SeenMessage[]): void {
  client.on('message', (topic, payload, packet) => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(payload.toString()) as Record<string, unknown>;
    } catch {
      body = { unparsed: payload.length > 200 ? `${payload.length} bytes` : payload.toString() };
    }
    seen.push({ topic, body, retain: packet.retain });
  });
}
