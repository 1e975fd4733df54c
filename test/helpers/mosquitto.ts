/**
 * A real Mosquitto broker for tests and the fleet bench, started from the fleet's own broker set-up
 * (ops/mosquitto/avatar-kiosk.conf and ops/mosquitto/acl, the files docs/fleet.md installs): on 127.0.0.1,
 * a free port, its own temp folder and password file (mosquitto_passwd). Only the listener, the TLS files,
 * the file paths and the logging are replaced; the queue limits, persistence, the identities and the ACL
 * are the documented ones. `stop()` / `start()` again keep the port and the persistence file (so a test
 * can take the broker away and bring it back).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { accepts, freePort, MOSQUITTO_CANDIDATES as CANDIDATES } from '../../electron/fleet/console/demo-broker.ts';

export { freePort };
const PASSWD_CANDIDATES = ['/usr/bin/mosquitto_passwd', '/usr/local/bin/mosquitto_passwd', '/usr/sbin/mosquitto_passwd'];
export const OPS_MOSQUITTO = join(import.meta.dirname, '..', '..', 'ops', 'mosquitto');
/** The documented configuration and ACL, as shipped. */
export const OPS_CONF = readFileSync(join(OPS_MOSQUITTO, 'avatar-kiosk.conf'), 'utf8');
export const OPS_ACL = readFileSync(join(OPS_MOSQUITTO, 'acl'), 'utf8');
/** The topic prefix the shipped ACL names (the kiosks' default mqtt.topicPrefix). */
const OPS_PREFIX = 'avatar-kiosk';
/** The console's login in the shipped ACL (also its session's client id). */
export const CONSOLE_LOGIN = 'fleet-console';

/** Why the broker tests cannot run here (null when they can). */
export function mosquittoMissing(): string | null {
  if (!CANDIDATES.some(existsSync)) return 'mosquitto is not installed (Debian: apt-get install mosquitto; .ci/run installs it)';
  if (!PASSWD_CANDIDATES.some(existsSync)) return 'mosquitto_passwd is not installed (it comes with the mosquitto package)';
  return null;
}

export const PREFIX = 'ak';

/**
 * The shipped ACL for topics under `prefix`: the console's block copied for each more operator login, and a
 * block per kiosk naming the one group topic it may read.
 */
export function brokerAcl(options: { prefix?: string; groups?: Record<string, string>; operators?: string[] } = {}): string {
  const prefix = options.prefix ?? PREFIX;
  const acl = OPS_ACL.replaceAll(`${OPS_PREFIX}/`, `${prefix}/`);
  const consoleBlock = /^user fleet-console\n((?:topic .*\n)+)/m.exec(acl);
  if (!consoleBlock) throw new Error('ops/mosquitto/acl has no "user fleet-console" block');
  const operators = (options.operators ?? []).map((login) => `user ${login}\n${consoleBlock[1]}`);
  const groups = Object.entries(options.groups ?? {}).map(([kiosk, group]) => `user ${kiosk}\ntopic read ${prefix}/_group/${group}/cmd\n`);
  return [acl, ...operators, ...groups].join('\n');
}

/** Settings a test puts in place of the shipped ones (by name; a list: the setting repeated), or takes out (`null`). */
export type ConfOverrides = Record<string, string | string[] | null>;

/**
 * The shipped configuration with this machine's listener, files and logging: each setting named in
 * `overrides` is replaced where it stands (the listener's settings must follow it) or left out (`null`);
 * settings the file does not have are added at its end.
 */
export function brokerConf(overrides: ConfOverrides): string {
  const left = new Map(Object.entries(overrides));
  const lines: string[] = [];
  for (const line of OPS_CONF.split('\n')) {
    const key = /^([a-z_]+)\s/.exec(line)?.[1];
    if (key === undefined || !left.has(key)) {
      lines.push(line);
      continue;
    }
    const value = left.get(key)!;
    left.delete(key);
    lines.push(...settingLines(key, value));
  }
  for (const [key, value] of left) lines.push(...settingLines(key, value));
  return `${lines.join('\n').trimEnd()}\n`;
}

const settingLines = (key: string, value: string | string[] | null): string[] => (value === null ? [] : [value].flat().map((v) => `${key} ${v}`));

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

export interface BrokerOptions {
  /** The broker's `max_connections`. */
  maxConnections?: number;
  /** The broker's `max_packet_size` (what it takes from any client; default the shipped file's). */
  maxPacketSize?: number;
  /** Each kiosk login's group: the one group command topic its ACL lets it read. */
  groups?: Record<string, string>;
  /** Logins with the console's rights besides `fleet-console` and `operator` (each connection its own). */
  operators?: string[];
  /** More settings in place of the shipped ones, or taken out (`null`): what a test shows one of them stops. */
  conf?: ConfOverrides;
}

/** Users and passwords: `{ 'fleet-console': 'op-secret', 'kiosk-a': 'a-secret' }`. */
export async function startBroker(users: Record<string, string>, options: BrokerOptions = {}): Promise<Broker> {
  const bin = CANDIDATES.find(existsSync)!;
  const passwdBin = PASSWD_CANDIDATES.find(existsSync)!;
  const dir = mkdtempSync(join(tmpdir(), 'ak-mosquitto-'));
  const passwd = join(dir, 'passwd');
  // Plain `user:password` lines, hashed in place in one run (-U).
  writeFileSync(passwd, Object.entries(users).map(([user, password]) => `${user}:${password}\n`).join(''), { mode: 0o600 });
  const r = spawnSync(passwdBin, ['-U', passwd], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mosquitto_passwd failed: ${r.stderr}`);
  writeFileSync(join(dir, 'acl'), brokerAcl({ groups: options.groups, operators: options.operators }), { mode: 0o600 });
  const port = await freePort();
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    brokerConf({
      listener: `${port} 127.0.0.1`,
      certfile: null,
      keyfile: null,
      password_file: passwd,
      acl_file: join(dir, 'acl'),
      persistence_location: `${dir}/`,
      // Started as root (CI), mosquitto drops to the `mosquitto` user, which cannot read our 0600 files.
      ...(process.getuid?.() === 0 ? { user: 'root' } : {}),
      log_dest: 'stderr',
      log_type: ['error', 'warning'],
      ...(options.maxConnections ? { max_connections: String(options.maxConnections) } : {}),
      ...(options.maxPacketSize ? { max_packet_size: String(options.maxPacketSize) } : {}),
      ...options.conf,
    }),
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
