/**
 * `npm run bench:fleet`: one Mosquitto and N simulated kiosks on this machine, status and events flowing
 * (each kiosk: one event and one status change every 2 s). Prints, per N, the messages the operator
 * received per second, and the CPU and memory of the broker and of ONE kiosk process running a single
 * link (the others share a swarm process). Stages: FLEET_BENCH_N (default "10,100,500"), each measured
 * for FLEET_BENCH_SECONDS (default 8); FLEET_BENCH_N=0 skips them.
 * Then the fleet console (fleet-console.ts) with each of FLEET_BENCH_CONSOLE_N kiosks (default "1000,10000";
 * 0 skips): its memory, the time its page shows them all, a fleet-wide command's round trip, the /metrics
 * scrape, and the messages the broker dropped meanwhile (its $SYS counter).
 * The broker is the shipped set-up (ops/mosquitto, as test/helpers/mosquitto.ts starts it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connectAsync } from 'mqtt';
import { mosquittoMissing, startBroker } from '../test/helpers/mosquitto.ts';
import { benchConsole } from './fleet-console.ts';

const missing = mosquittoMissing();
if (missing) {
  console.log(`bench:fleet skipped: ${missing}`);
  process.exit(0);
}
const stages = (process.env.FLEET_BENCH_N ?? '10,100,500').split(',').map(Number).filter((n) => n > 0);
/** The console bench's fleet sizes, in one run: 1,000 for comparison with earlier figures, then 10,000. */
const consoleNs = (process.env.FLEET_BENCH_CONSOLE_N ?? '1000,10000').split(',').map(Number).filter((n) => n > 0);
/** In the console bench each kiosk has a call and a status change every 30 s (a busy venue, not a flood). */
const CONSOLE_EVENT_EVERY_MS = 30_000;
const seconds = Number(process.env.FLEET_BENCH_SECONDS ?? 8);
const EVENT_EVERY_MS = 2000;
const TICK = 100; // USER_HZ on Linux

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function swarm(url: string, first: number, count: number, dataRoot: string, eventEveryMs = EVENT_EVERY_MS): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fleet-swarm.ts'), url, String(first), String(count), dataRoot, String(eventEveryMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => {
      const { ready } = JSON.parse(line) as { ready: number };
      if (ready < count) reject(new Error(`only ${ready} of ${count} kiosks connected`));
      else resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`swarm exited ${code}`)));
  });
}

const maxN = Math.max(0, ...consoleNs, ...stages);
const users: Record<string, string> = { operator: 'op-bench', 'fleet-console': 'console-bench' };
for (let i = 0; i < maxN; i++) users[`kiosk-${i}`] = `pw-kiosk-${i}`;
console.log(`Load average before: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (${cpus().length} CPUs)`);
const broker = await startBroker(users);
const dataRoot = mkdtempSync(join(tmpdir(), 'ak-fleet-bench-'));
const op = await connectAsync(broker.url, { username: 'operator', password: 'op-bench', protocolVersion: 5, reconnectPeriod: 0 });
let received = { status: 0, events: 0 };
op.on('message', (topic) => {
  if (topic.endsWith('/status')) received.status++;
  else if (topic.endsWith('/events')) received.events++;
});
let brokerDropped: number | null = null;
op.on('message', (topic, payload) => {
  if (topic === '$SYS/broker/publish/messages/dropped') brokerDropped = Number(payload.toString());
});
/** The broker's drop counter as of its next $SYS round (every 10 s; it says nothing while the count stands still). */
const brokerDrops = async () => {
  const before = brokerDropped;
  const deadline = Date.now() + 12_000;
  while (Date.now() < deadline && brokerDropped === before) await new Promise((r) => setTimeout(r, 200));
  return brokerDropped;
};
await op.subscribeAsync('$SYS/broker/publish/messages/dropped', { qos: 0 });
await op.subscribeAsync('ak/+/status', { qos: 0 });
await op.subscribeAsync('ak/+/events', { qos: 1 });

console.log(`Fleet bench: Mosquitto ${broker.url}, each kiosk 1 event (QoS 1) + 1 status change per ${EVENT_EVERY_MS / 1000} s, ${seconds} s per stage`);
if (stages.length) console.log('| kiosks | events/s | status/s | broker CPU | broker RSS | one kiosk CPU | one kiosk RSS | swarm CPU (N-1 kiosks) |');
if (stages.length) console.log('|---|---|---|---|---|---|---|---|');
const children: ChildProcess[] = [];
let reached = 0;
try {
  for (const n of stages) {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1500));
    const one = await swarm(broker.url, 0, 1, dataRoot);
    children.push(one);
    const rest = n > 1 ? await swarm(broker.url, 1, n - 1, dataRoot) : null;
    if (rest) children.push(rest);
    await new Promise((r) => setTimeout(r, 2 * EVENT_EVERY_MS)); // settle into the steady flow
    const b0 = cpuTicks(broker.pid!);
    const k0 = cpuTicks(one.pid!);
    const s0 = rest ? cpuTicks(rest.pid!) : 0;
    received = { status: 0, events: 0 };
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const pct = (ticks: number) => `${((ticks / TICK / seconds) * 100).toFixed(1)} %`;
    console.log(
      `| ${n} | ${(received.events / seconds).toFixed(0)} | ${(received.status / seconds).toFixed(0)} | ${pct(cpuTicks(broker.pid!) - b0)} | ${rssMb(broker.pid!).toFixed(1)} MB | ${pct(cpuTicks(one.pid!) - k0)} | ${rssMb(one.pid!).toFixed(1)} MB | ${rest ? pct(cpuTicks(rest.pid!) - s0) : '-'} |`,
    );
    reached = n;
  }
  for (const c of children.splice(0)) c.kill('SIGKILL');
  // The console stages measure the console alone on the broker's queues: the stage subscriber leaves.
  await op.unsubscribeAsync(['ak/+/status', 'ak/+/events']);
  for (const consoleN of consoleNs) {
    await new Promise((r) => setTimeout(r, 1500));
    await benchConsole({ broker, n: consoleN, consolePassword: users['fleet-console']!, dataRoot, brokerDrops, swarm: (first, count) => swarm(broker.url, first, count, dataRoot, CONSOLE_EVENT_EVERY_MS) });
  }
} catch (error) {
  console.log(`Stopped: ${error instanceof Error ? error.message : String(error)}`);
  // The stages after it measured nothing: a script running the bench hears it too.
  process.exitCode = 1;
} finally {
  for (const c of children) c.kill('SIGKILL');
  await op.endAsync();
  await broker.dispose();
  rmSync(dataRoot, { recursive: true, force: true });
}
if (stages.length) console.log(`Reached N = ${reached} kiosks (expected events/s = N / ${EVENT_EVERY_MS / 1000}).`);
console.log(`Load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
