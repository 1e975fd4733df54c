/**
 * `npm run bench`: figures, not tests. Against the emulator on 127.0.0.1:
 *  1. create → live with 50 ms injected latency, minus the protocol floor (3 round trips × 50 ms:
 *     the create answer, the socket handshake, the conn_init ack): the client's own overhead. Goal < 10 ms.
 *  2. heap and handle growth over 300 back-to-back sessions through the SessionController. Goal: flat
 *     (< 5 MB heap growth, no leaked sockets or timers).
 * Run with `npm run bench` (it passes --expose-gc so heap figures are taken after a full GC).
 */
import { performance } from 'node:perf_hooks';
import { ServiceClient } from '../electron/core/rest-client.ts';
import { SessionController } from '../electron/core/session-controller.ts';
import { parseServiceTarget } from '../electron/core/surface.ts';
import { startEmulator, type EmulatorHandle } from '../electron/emulator/index.ts';
import { loadDemoAvatar } from '../electron/cli/defaults.ts';
import type { StartOptions } from '../electron/core/session-types.ts';

const LATENCY_MS = 50;
const FLOOR_ROUND_TRIPS = 3;
const OVERHEAD_RUNS = Number(process.env.BENCH_OVERHEAD_RUNS ?? 30);
const SOAK_SESSIONS = Number(process.env.BENCH_SOAK_SESSIONS ?? 300);

const gc = (globalThis as { gc?: () => void }).gc;

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

function controllerFor(emulator: EmulatorHandle): SessionController {
  const client = new ServiceClient({ target: parseServiceTarget({ surface: 'direct', baseUrl: emulator.baseUrl, apiKey: emulator.apiKey }) });
  return new SessionController({ client });
}

/** One session: start, hang up the moment it is live, wait for the end. Returns ms from start to live. */
async function oneSession(emulator: EmulatorHandle, options: StartOptions): Promise<number> {
  const controller = controllerFor(emulator);
  const t0 = performance.now();
  let liveAt = NaN;
  const off = controller.onEvent((e) => {
    if (e.type === 'state' && e.state.phase === 'live' && Number.isNaN(liveAt)) {
      liveAt = performance.now();
      void controller.hangup('user_end');
    }
  });
  const terminal = await controller.start(options);
  off();
  await controller.dispose();
  if (terminal.phase !== 'ended' || Number.isNaN(liveAt)) {
    throw new Error(`bench session did not go live and end cleanly: ${JSON.stringify(terminal)}`);
  }
  return liveAt - t0;
}

async function benchOverhead(options: StartOptions): Promise<void> {
  const emulator = await startEmulator({ knobs: { latencyMs: LATENCY_MS, warmupMs: { audio: 0, video: 0 }, endingMs: 0 } });
  try {
    await oneSession(emulator, options); // warm-up (JIT, keep-alive connection)
    const samples: number[] = [];
    for (let i = 0; i < OVERHEAD_RUNS; i++) samples.push(await oneSession(emulator, options));
    const overhead = samples.map((ms) => ms - FLOOR_ROUND_TRIPS * LATENCY_MS).sort((a, b) => a - b);
    console.log(`create → live, ${OVERHEAD_RUNS} sessions, ${LATENCY_MS} ms injected latency, floor ${FLOOR_ROUND_TRIPS} × ${LATENCY_MS} ms:`);
    console.log(`  client overhead  median ${percentile(overhead, 50).toFixed(2)} ms  p95 ${percentile(overhead, 95).toFixed(2)} ms  max ${overhead.at(-1)!.toFixed(2)} ms  (goal < 10 ms)`);
  } finally {
    await emulator.close();
  }
}

function handleSummary(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

async function benchSoak(options: StartOptions): Promise<void> {
  const emulator = await startEmulator({ knobs: { latencyMs: 0, warmupMs: { audio: 0, video: 0 }, endingMs: 0 } });
  try {
    const warm = 20;
    for (let i = 0; i < warm; i++) await oneSession(emulator, options);
    gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const handlesBefore = handleSummary();
    const t0 = performance.now();
    for (let i = 0; i < SOAK_SESSIONS; i++) await oneSession(emulator, options);
    const elapsed = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 100)); // let closing sockets finish
    gc?.();
    const heapAfter = process.memoryUsage().heapUsed;
    const handlesAfter = handleSummary();
    const growthMb = (heapAfter - heapBefore) / (1024 * 1024);
    console.log(`${SOAK_SESSIONS} back-to-back sessions through the controller (${(elapsed / SOAK_SESSIONS).toFixed(1)} ms each):`);
    console.log(`  heap ${(heapBefore / 1048576).toFixed(1)} MB → ${(heapAfter / 1048576).toFixed(1)} MB  growth ${growthMb.toFixed(2)} MB  (goal < 5 MB)${gc ? '' : '  [no --expose-gc: figures include garbage]'}`);
    console.log(`  active handles before ${JSON.stringify(handlesBefore)}  after ${JSON.stringify(handlesAfter)}`);
    console.log(`  emulator sessions still live: ${emulator.liveCount()}`);
  } finally {
    await emulator.close();
  }
}

const demo = loadDemoAvatar();
const options: StartOptions = { callMode: 'audio', avatar: { persona: demo.persona, image: demo.image, name: demo.name, voice: demo.voice } };
await benchOverhead(options);
await benchSoak(options);
