/**
 * `npm run soak`: the kiosk under faults and time. Not a test: it prints figures.
 *
 * Part 1 (main): the real kiosk's services (electron/kiosk/compose.ts, demo mode with its in-process
 * emulator) runs `--sessions` sessions back to back on each of `--kiosks` kiosks, each session with one
 * random fault: socket drops, server silence (the client's dead detection), NOT_READY storms (some past the
 * warm-up budget), forced hangups with every reason, slow HTTP and WebSocket answers, LIVE_CONN_INIT_FAILED,
 * a low balance, the session limit, a cancel during start-up, a media error from the renderer.
 * To fit hours of kiosk time into minutes, the service and its emulator share a clock that runs
 * `--time-scale` times faster than real time (every protocol timer: backoff, heartbeats, dead detection,
 * grace windows, holds); HTTP request timeouts stay on real time.
 *
 * Part 2 (renderer, bench/soak-renderer.ts): the BUILT renderer (out/renderer) in Chromium through the E2E
 * harness (the real kiosk's services with staff operations + emulator behind the test bridge) for `--browser-sessions`
 * calls, clicking through start, live, faults, hang up and back to the attract screen, in real time, with a
 * visitor's language and accessibility choices and the staff panel now and then; it prints the page's
 * listeners, DOM nodes and JS heap after call 1 and every `--sample-every` calls, and their slope per call
 * after the first `--warmup` calls. `--renderer` is this part alone at 1,000 calls (the page's month).
 *
 * Prints sessions by outcome, sessions the emulator still has not ended (must be 0), protocol checks on the
 * emulator's record of every session (at most one type 5, no conn_init after it), main heap (after GC) and
 * active handles; for the renderer the page's counters (Chrome DevTools Protocol, after GC) as a trend.
 * Exits 1 when a session was left open, a protocol check failed, or the page's listeners or DOM nodes grew
 * by more than a handful after the warm-up.
 *
 * Usage: npm run soak -- [--sessions 1000] [--browser-sessions 200] [--minutes 60] [--kiosks 2]
 *                        [--time-scale 10] [--hold-ms 3000] [--seed N] [--json]
 *                        [--sample-every 100] [--warmup 100] [--staff-every 50] [--no-presence]
 *        npm run soak -- --renderer [--browser-sessions 1000] [--minutes 240]
 * `--minutes` bounds each part's wall time: no new session starts after it (the figures say so).
 * Build the renderer first for part 2 (npm run build:renderer); `--browser-sessions 0` skips it.
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, TimerHandle } from '../electron/core/clock.ts';
import { HANGUP_REASONS } from '../electron/core/protocol.ts';
import type { SessionState } from '../electron/core/session-types.ts';
import type { KioskEvent } from '../electron/contract.ts';
import { DEMO_API_KEY, startEmulator, type EmulatorHandle, type EmulatorKnobs } from '../electron/emulator/index.ts';
import { resolveConfig } from '../electron/kiosk/config.ts';
import { createKiosk, type Kiosk } from '../electron/kiosk/compose.ts';
import { mulberry32 } from '../test/helpers/seeded-random.ts';
import { printRendererReport, soakRenderer, type RendererSoakReport } from './soak-renderer.ts';

const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1000' },
    'browser-sessions': { type: 'string', default: '200' },
    minutes: { type: 'string', default: '60' },
    kiosks: { type: 'string', default: '2' },
    'time-scale': { type: 'string', default: '10' },
    'hold-ms': { type: 'string', default: '3000' },
    seed: { type: 'string', default: '9' },
    json: { type: 'boolean', default: false },
    renderer: { type: 'boolean', default: false },
    'sample-every': { type: 'string', default: '100' },
    warmup: { type: 'string', default: '100' },
    'staff-every': { type: 'string', default: '50' },
    'no-presence': { type: 'boolean', default: false },
  },
});
// The renderer's month: that part alone, 1,000 calls unless told otherwise, and hours of wall time.
const given = (name: string) => process.argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
if (args.renderer) {
  if (!given('sessions')) args.sessions = '0';
  if (!given('browser-sessions')) args['browser-sessions'] = '1000';
  if (!given('minutes')) args.minutes = '240';
}
const SESSIONS = Number(args.sessions);
const BROWSER_SESSIONS = Number(args['browser-sessions']);
const MINUTES = Number(args.minutes);
const KIOSKS = Math.max(1, Number(args.kiosks));
const SCALE = Number(args['time-scale']);
const HOLD_MS = Number(args['hold-ms']);
const SEED = Number(args.seed);
const SAMPLE_EVERY = Math.max(1, Number(args['sample-every']));
const WARMUP = Number(args.warmup);
const STAFF_EVERY = Number(args['staff-every']);
for (const [name, v] of Object.entries({ SESSIONS, BROWSER_SESSIONS, MINUTES, KIOSKS, SCALE, HOLD_MS, SEED, SAMPLE_EVERY, WARMUP, STAFF_EVERY })) {
  if (!Number.isFinite(v) || v < 0) throw new Error(`bad option ${name}: ${v}`);
}
const gc = (globalThis as { gc?: () => void }).gc;
const log = (line: string) => process.stderr.write(`${line}\n`);

// ---------------------------------------------------------------------------------------------------
// Helpers

/** Real time running `scale` times faster: every timer of the service and the emulator. */
class ScaledClock implements Clock {
  readonly #origin = Date.now();
  readonly #t0 = performance.now();
  constructor(readonly scale: number) {}
  now(): number {
    return Math.round(this.#origin + (performance.now() - this.#t0) * this.scale);
  }
  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    return setTimeout(fn, Math.max(0, delayMs) / this.scale);
  }
  clearTimeout(handle: TimerHandle): void {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  }
}

const realSleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function handles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

function mainMemory(): { heapMB: number; rssMB: number; handles: Record<string, number> } {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heapMB: +(m.heapUsed / 1e6).toFixed(1), rssMB: +(m.rss / 1e6).toFixed(1), handles: handles() };
}

function outcomeOf(state: SessionState): string {
  if (state.phase === 'ended') return `ended: ${state.summary.endedBy ?? '?'} ${state.summary.hangupReason ?? ''}`.trim();
  if (state.phase === 'failed') return `failed: ${state.error.code}`;
  return `not finished: ${state.phase}`;
}

function tally(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

/** The emulator's record of a session: at most one type 5, nothing but nothing after it (spec §6 rule 7). */
function protocolProblems(emu: EmulatorHandle, liveId: string): string[] {
  const s = emu.getSession(liveId);
  if (!s) return [];
  const problems: string[] = [];
  const hangups = s.clientMessages.filter((m) => m.type === 5).length;
  if (hangups > 1) problems.push(`${hangups} type-5 frames`);
  const firstHangup = s.clientMessages.findIndex((m) => m.type === 5);
  if (firstHangup >= 0 && s.clientMessages.slice(firstHangup + 1).some((m) => m.type === 1)) problems.push('conn_init after the hangup');
  return problems;
}

// ---------------------------------------------------------------------------------------------------
// Part 1: the kiosk's services under faults

const FAULTS = [
  'clean',
  'drop',
  'silence',
  'not-ready-storm',
  'forced-hangup',
  'slow-http',
  'init-failure',
  'low-balance',
  'session-limit',
  'cancel-early',
  'media-error',
] as const;
type Fault = (typeof FAULTS)[number];
const FAULT_WEIGHTS: Record<Fault, number> = {
  clean: 3,
  drop: 2,
  silence: 1,
  'not-ready-storm': 2,
  'forced-hangup': 2,
  'slow-http': 2,
  'init-failure': 1,
  'low-balance': 1,
  'session-limit': 1,
  'cancel-early': 1,
  'media-error': 1,
};

function pickFault(random: () => number): Fault {
  const total = FAULTS.reduce((n, f) => n + FAULT_WEIGHTS[f], 0);
  let r = random() * total;
  for (const f of FAULTS) {
    r -= FAULT_WEIGHTS[f];
    if (r < 0) return f;
  }
  return 'clean';
}

interface KioskRun {
  kiosk: Kiosk;
  emu: EmulatorHandle;
  clock: ScaledClock;
  events: KioskEvent[];
  waitFor(pred: (state: SessionState) => boolean, realTimeoutMs: number): Promise<SessionState>;
}

const BASE_KNOBS: Partial<EmulatorKnobs> = { warmupMs: { audio: 0, video: 2_500 }, endingMs: 300 };
const PNG = readFileSync(join(import.meta.dirname, '..', 'resources', 'demo-avatar.png'));
const IMAGE = `data:image/png;base64,${PNG.toString('base64')}`;

async function openKiosk(clock: ScaledClock): Promise<KioskRun> {
  const config = resolveConfig({ callMode: 'audio', allowModeChoice: true, avatar: { imagePath: IMAGE, name: 'Ava', persona: 'A soak-test concierge.' } }, {});
  const kiosk = await createKiosk({
    config,
    apiKey: null,
    apiKeySource: 'none',
    clock,
    startEmulator: (options) => startEmulator({ ...options, clock }),
    emulatorKnobs: BASE_KNOBS,
  });
  const emu = kiosk.connection.emulator;
  if (!emu) throw new Error('demo mode runs the emulator');
  const events: KioskEvent[] = [];
  const waiters = new Set<() => void>();
  kiosk.events.onEvent((e) => {
    // The renderer's part of a call (main-only sessions): its RTC side reports ready once it has the credentials.
    if (e.type === 'credentials') void kiosk.calls.rtcReady({ liveId: e.liveId });
    if (events.length < 50) events.push(e);
    for (const w of [...waiters]) w();
  });
  const waitFor = (pred: (state: SessionState) => boolean, realTimeoutMs: number) =>
    new Promise<SessionState>((resolve, reject) => {
      const check = () => {
        if (!pred(kiosk.calls.state)) return;
        cleanup();
        resolve(kiosk.calls.state);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out in ${kiosk.calls.state.phase}`));
      }, realTimeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return { kiosk, emu, clock, events, waitFor };
}

const isTerminal = (s: SessionState) => s.phase === 'ended' || s.phase === 'failed';
const liveIdOf = (s: SessionState) => ('liveId' in s ? s.liveId : null);

interface SessionRecordOut {
  fault: Fault;
  outcome: string;
  liveId: string | null;
  problems: string[];
  realMs: number;
}

async function runOneSession(k: KioskRun, fault: Fault, random: () => number): Promise<SessionRecordOut> {
  const { kiosk, emu, clock } = k;
  const t0 = performance.now();
  const fakeToReal = (fakeMs: number) => fakeMs / clock.scale;
  // Fresh knobs for every session; a fault changes only what it needs.
  Object.assign(emu.knobs, { latencyMs: 0, initFailure: false, silent: false, liveDurationS: 600, warmupMs: { audio: 0, video: 2_500 } });
  emu.setBalance(DEMO_API_KEY, fault === 'low-balance' ? 20 : 1_000);
  let callMode: 'audio' | 'video' = random() < 0.3 ? 'video' : 'audio';
  if (fault === 'not-ready-storm') {
    callMode = 'video';
    // Mostly a long warm-up the client rides out; sometimes past its 60 s budget (it then fails cleanly).
    const warmupMs = random() < 0.8 ? 5_000 + random() * 40_000 : 65_000 + random() * 20_000;
    emu.knobs.warmupMs = { audio: warmupMs, video: warmupMs };
  }
  if (fault === 'slow-http') emu.knobs.latencyMs = 300 + Math.round(random() * 4_000);
  if (fault === 'init-failure') emu.knobs.initFailure = true;
  if (fault === 'session-limit') emu.knobs.liveDurationS = 2 + Math.floor(random() * 4);

  const started = await kiosk.calls.start({ callMode });
  if (!started.ok) throw new Error(`start refused: ${started.error.message}`);
  const liveId = started.value.liveId;
  const budgetMs = 30_000 + fakeToReal(200_000);
  const hold = () => realSleep(fakeToReal(HOLD_MS * (0.5 + random())));

  if (fault === 'cancel-early') {
    await realSleep(fakeToReal(random() * 3_000));
    await kiosk.calls.hangup();
  } else {
    const reached = await k.waitFor((s) => s.phase === 'live' || isTerminal(s), budgetMs);
    if (reached.phase === 'live') {
      const id = reached.liveId;
      switch (fault) {
        case 'drop':
          await hold();
          emu.dropConnection(id);
          await k.waitFor((s) => s.phase === 'reconnecting' || isTerminal(s), budgetMs);
          await k.waitFor((s) => s.phase === 'live' || isTerminal(s), budgetMs);
          break;
        case 'silence':
          emu.knobs.silent = true;
          await k.waitFor((s) => s.phase === 'reconnecting' || isTerminal(s), budgetMs);
          emu.knobs.silent = false;
          await k.waitFor((s) => s.phase === 'live' || isTerminal(s), budgetMs);
          break;
        case 'forced-hangup':
          await hold();
          emu.forceHangup(id, HANGUP_REASONS[Math.floor(random() * HANGUP_REASONS.length)]!);
          // The type 6 is on its way: let it end the call (the visitor does not hang up now).
          await k.waitFor((s) => s.phase !== 'live', budgetMs);
          break;
        case 'media-error':
          await hold();
          await kiosk.calls.reportMediaError({ kind: 'rtc_disconnected', message: 'soak: the RTC link dropped' });
          break;
        case 'session-limit':
          break; // the server ends it at live_duration
        default:
          await hold();
      }
      if (kiosk.calls.state.phase === 'live' && fault !== 'session-limit') await kiosk.calls.hangup();
    }
  }
  const end = await k.waitFor(isTerminal, budgetMs);
  // The emulator's side: the session must reach `ended` (ending lasts endingMs).
  const id = liveIdOf(end) ?? liveId;
  const problems = id ? protocolProblems(emu, id) : [];
  if (id) {
    const deadline = performance.now() + 5_000;
    while (emu.getSession(id) && emu.getSession(id)!.status !== 'ended' && performance.now() < deadline) await realSleep(5);
  }
  return { fault, outcome: outcomeOf(end), liveId: id, problems, realMs: performance.now() - t0 };
}

async function soakMain(): Promise<Record<string, unknown>> {
  const clock = new ScaledClock(SCALE);
  const deadline = performance.now() + MINUTES * 60_000;
  const kiosks = await Promise.all(Array.from({ length: KIOSKS }, () => openKiosk(clock)));
  // Warm up (JIT of every fault path, the image read, connection pools) before the "before" figures.
  const warm = mulberry32(1);
  for (const k of kiosks) for (const fault of FAULTS) await runOneSession(k, fault, warm);
  const before = mainMemory();
  const byOutcome: Record<string, number> = {};
  const byFault: Record<string, Record<string, number>> = {};
  const problems: string[] = [];
  const errors: string[] = [];
  let done = 0;
  let next = 0;
  /** Heap after GC every 100 sessions: the emulators keep their last 500 ended sessions each, so the
   *  heap grows until they are full and must be flat after that if the client keeps nothing. */
  const heapTrendMB: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    kiosks.map(async (k, index) => {
      const random = mulberry32(SEED * 1_000 + index);
      while (next < SESSIONS && performance.now() < deadline) {
        next += 1;
        const fault = pickFault(random);
        try {
          const r = await runOneSession(k, fault, random);
          tally(byOutcome, r.outcome);
          tally((byFault[fault] ??= {}), r.outcome);
          for (const p of r.problems) problems.push(`${r.liveId}: ${p}`);
        } catch (error) {
          errors.push(`${fault}: ${error instanceof Error ? error.message : String(error)} (phase ${k.kiosk.calls.state.phase})`);
          tally(byOutcome, 'soak driver error');
          // Leave the kiosk usable for the next session.
          await k.kiosk.calls.hangup().catch(() => undefined);
          await k.waitFor(isTerminal, 60_000).catch(() => undefined);
        }
        done += 1;
        if (done % 100 === 0) {
          heapTrendMB.push(mainMemory().heapMB);
          log(`main: ${done}/${SESSIONS} sessions, ${((performance.now() - t0) / 1000).toFixed(0)} s, heap ${heapTrendMB.at(-1)} MB`);
        }
      }
    }),
  );
  const realS = (performance.now() - t0) / 1000;
  await realSleep(200);
  const notEnded = kiosks.flatMap((k) => k.emu.listSessions().filter((s) => s.status !== 'ended').map((s) => `${s.id} ${s.status}`));
  const after = mainMemory();
  for (const k of kiosks) await k.kiosk.shutdown();
  kiosks.length = 0; // let the services and their emulators (with their session records) be collected
  await realSleep(50);
  const afterShutdown = mainMemory();
  return {
    sessions: done,
    stoppedByMinutes: done < SESSIONS,
    kiosks: KIOSKS,
    timeScale: SCALE,
    holdMs: HOLD_MS,
    realSeconds: +realS.toFixed(1),
    kioskHoursSimulated: +((realS * SCALE) / 3600).toFixed(2),
    byOutcome,
    byFault,
    notEndedOnEmulator: notEnded,
    protocolProblems: problems,
    driverErrors: errors,
    heapTrendMB,
    before,
    after,
    afterShutdown,
  };
}

// ---------------------------------------------------------------------------------------------------

const report: Record<string, unknown> = { seed: SEED, node: process.version, gcExposed: Boolean(gc) };
if (!gc) log('note: run with --expose-gc (npm run soak does) for heap figures after a full GC');
if (SESSIONS > 0) {
  log(`main: ${SESSIONS} sessions on ${KIOSKS} kiosk(s), time ×${SCALE}, hold ${HOLD_MS} ms, seed ${SEED}`);
  report.main = await soakMain();
}
if (BROWSER_SESSIONS > 0) {
  log(`renderer: ${BROWSER_SESSIONS} calls in Chromium (real time), the page's counters every ${SAMPLE_EVERY} calls`);
  report.renderer = await soakRenderer({
    calls: BROWSER_SESSIONS,
    minutes: MINUTES,
    seed: SEED,
    sampleEvery: SAMPLE_EVERY,
    warmup: WARMUP,
    staffEvery: STAFF_EVERY,
    presence: !args['no-presence'],
    log,
  });
}
if (args.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else printReport(report);

const failedChecks = [
  ...(((report.main as { notEndedOnEmulator?: string[] } | undefined)?.notEndedOnEmulator ?? []) as string[]),
  ...(((report.renderer as { notEndedOnEmulator?: string[] } | undefined)?.notEndedOnEmulator ?? []) as string[]),
  ...(((report.main as { protocolProblems?: string[] } | undefined)?.protocolProblems ?? []) as string[]),
  ...((report.renderer as RendererSoakReport | undefined)?.growing ?? []),
];
process.exitCode = failedChecks.length > 0 ? 1 : 0;

function printReport(r: Record<string, unknown>): void {
  const out = (s = '') => process.stdout.write(`${s}\n`);
  const table = (rows: Record<string, number>) =>
    Object.entries(rows)
      .sort((a, b) => b[1] - a[1])
      .forEach(([k, v]) => out(`    ${String(v).padStart(5)}  ${k}`));
  out(`soak (seed ${r.seed}, node ${r.node})`);
  const main = r.main as Record<string, any> | undefined;
  if (main) {
    out(`\nmain: ${main.sessions} sessions on ${main.kiosks} kiosk(s) in ${main.realSeconds} s real (time ×${main.timeScale}: ${main.kioskHoursSimulated} kiosk-hours)${main.stoppedByMinutes ? ' — stopped by --minutes' : ''}`);
    out('  by outcome:');
    table(main.byOutcome);
    out('  by fault:');
    for (const [fault, rows] of Object.entries(main.byFault as Record<string, Record<string, number>>)) {
      out(`    ${fault}: ${Object.entries(rows).map(([k, v]) => `${v} ${k}`).join(', ')}`);
    }
    out(`  sessions not ended on the emulator: ${main.notEndedOnEmulator.length}${main.notEndedOnEmulator.length ? ` (${main.notEndedOnEmulator.slice(0, 5).join('; ')})` : ''}`);
    out(`  protocol problems (type 5 twice, conn_init after hangup): ${main.protocolProblems.length}`);
    out(`  soak driver errors: ${main.driverErrors.length}${main.driverErrors.length ? ` (${main.driverErrors.slice(0, 5).join('; ')})` : ''}`);
    out(`  main heap after GC: ${main.before.heapMB} MB → ${main.after.heapMB} MB (rss ${main.before.rssMB} → ${main.after.rssMB} MB); after shutdown ${main.afterShutdown.heapMB} MB`);
    out(`  heap every 100 sessions (MB): ${main.heapTrendMB.join(', ')}`);
    out(`  active handles before: ${JSON.stringify(main.before.handles)}`);
    out(`  active handles after:  ${JSON.stringify(main.after.handles)}`);
    out(`  after shutdown:        ${JSON.stringify(main.afterShutdown.handles)}`);
  }
  const ren = r.renderer as RendererSoakReport | undefined;
  if (ren) printRendererReport(ren, out);
}
