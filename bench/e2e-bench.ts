/**
 * End-to-end figures in Chromium (figures, not tests): the BUILT renderer, the real kiosk service and the
 * emulator (demo engine), as the E2E tests run them.
 *  1. Tap → live screen with a demo frame (client overhead): from the click on "Tap to talk" to the first
 *     `requestVideoFrameCallback` on the avatar <video> that runs with the live stage shown. The frame is the
 *     demo engine's canvas (with a pre-joined spare, drawn before the tap): no avatar publish, subscription,
 *     keyframe or decode is in this figure, so it measures the client and the protocol, not the avatar's
 *     first frame (that comes only from real calls: the field figures, docs/network.md). Emulator video
 *     warm-up 2.5 s, 50 ms injected latency, a modelled 400 ms channel join (conn_init only once the
 *     renderer's side is ready): a spare whose channel was pre-joined, a spare with pre-joining off, and no
 *     spare (the approach is reported `warmup` seconds before the tap). Floor it is compared with: one round
 *     trip (the conn_init answer, 50 ms) plus one frame at 25 fps, about 90 ms.
 *  2. CPU of Chromium's processes (renderer, GPU/compositor, browser) on the attract screen (animations
 *     running; at rest with the camera on and nobody there) and live, from /proc, plus the renderer main
 *     thread's busy time (CDP Performance.getMetrics TaskDuration).
 *  3. Presence detection's cost per analysed frame (main thread, from the detector's own counters).
 *
 * Build the renderer first (npm run build:renderer). Run alone: node --import tsx bench/e2e-bench.ts
 * (BENCH_E2E_RUNS=n runs per tap configuration, default 5). `runE2eBench()` is what `npm run bench` calls.
 */
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright';
import { eventually, launchChromium, openKiosk, screenIs, startStaticServer, type KioskPage } from '../test/e2e/harness.ts';
import { emptyScene, writeY4m } from '../test/e2e/fake-camera.ts';

const RUNS = Number(process.env.BENCH_E2E_RUNS ?? 5);
const LATENCY_MS = 50;
const CPU_WINDOW_MS = Number(process.env.BENCH_CPU_WINDOW_MS ?? 8_000);
const CLK_TCK = 100; // Linux USER_HZ
/** Which parts to run: `cpu`, `tap` (default both), e.g. BENCH_E2E_PARTS=cpu. */
const PARTS = new Set((process.env.BENCH_E2E_PARTS ?? 'cpu,tap').split(','));

/** Median of the known values, formatted in ms. */
function med(xs: Array<number | null>): string {
  const known = xs.filter((x): x is number => x !== null);
  return known.length ? `${median(known).toFixed(0)} ms` : 'n/a';
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

// -------------------------------------------------------------------------------------------------
// CPU of our Chromium's processes (descendants of this process), by kind

type ProcKind = 'renderer' | 'gpu' | 'browser' | 'other';

function descendants(root: number): Map<number, ProcKind> {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      // gone
    }
  }
  const out = new Map<number, ProcKind>();
  for (const pid of parent.keys()) {
    let p: number | undefined = pid;
    while (p && p !== root && p !== 1) p = parent.get(p);
    if (p !== root || pid === root) continue;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes('chromium')) continue;
    const kind: ProcKind = cmd.includes('--type=renderer')
      ? 'renderer'
      : cmd.includes('--type=gpu-process')
        ? 'gpu'
        : cmd.includes('--type=')
          ? 'other'
          : 'browser';
    out.set(pid, kind);
  }
  return out;
}

function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime
  } catch {
    return 0;
  }
}

export interface CpuFigure {
  /** % of one core over the window, per process kind. */
  renderer: number;
  gpu: number;
  browser: number;
  other: number;
  /** Renderer main thread busy (CDP Performance TaskDuration), % of one core. */
  mainThread: number;
}

async function measureCpu(page: Page, windowMs = CPU_WINDOW_MS): Promise<CpuFigure> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const task = async () => {
    const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: Array<{ name: string; value: number }> };
    return metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
  };
  const procs = descendants(process.pid);
  const before = new Map([...procs.keys()].map((pid) => [pid, cpuTicks(pid)]));
  const task0 = await task();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, windowMs));
  const elapsedS = (performance.now() - t0) / 1000;
  const task1 = await task();
  const sums: Record<ProcKind, number> = { renderer: 0, gpu: 0, browser: 0, other: 0 };
  for (const [pid, kind] of procs) sums[kind] += cpuTicks(pid) - before.get(pid)!;
  await cdp.detach();
  const pct = (ticks: number) => (ticks / CLK_TCK / elapsedS) * 100;
  return {
    renderer: pct(sums.renderer),
    gpu: pct(sums.gpu),
    browser: pct(sums.browser),
    other: pct(sums.other),
    mainThread: ((task1 - task0) / elapsedS) * 100,
  };
}

function fmtCpu(c: CpuFigure): string {
  return `renderer ${c.renderer.toFixed(1)} %, GPU/compositor ${c.gpu.toFixed(1)} %, browser ${c.browser.toFixed(1)} %, renderer main thread ${c.mainThread.toFixed(1)} %`;
}

// -------------------------------------------------------------------------------------------------
// Tap → first frame

/** Milestones of one tap, ms from the click: what main told the page, and what the page showed. */
interface TapMarks {
  credentials: number | null;
  liveState: number | null;
  picture: number | null;
  firstFrame: number;
  /** The renderer reported its RTC side ready (main then sends conn_init); from the bench's clock. */
  rtcReady?: number | null;
  /** The service (emulator) took the avatar live (its conn_init answer); from the bench's clock. */
  serviceLive?: number | null;
}

/**
 * Clicks "Tap to talk" and resolves with ms from the click to the first avatar frame presented on the
 * visible stage (live screen shown and its "connecting video" poster gone), plus the milestones before it.
 */
async function tapToFirstFrame(page: Page): Promise<TapMarks> {
  await page.evaluate(`(() => {
    const marks = window.__tapMarks = { credentials: null, liveState: null, picture: null, firstFrame: null };
    const tapAt = performance.now();
    const off = window.kiosk.session.onEvent((e) => {
      if (e.type === 'credentials' && marks.credentials === null) marks.credentials = performance.now() - tapAt;
      if (e.type === 'state' && e.state.phase === 'live' && marks.liveState === null) marks.liveState = performance.now() - tapAt;
    });
    const liveShown = () => document.querySelector('main.kiosk[data-screen="live"]') && !document.querySelector('[data-testid=live-waiting]');
    const wait = () => {
      if (liveShown()) marks.picture = performance.now() - tapAt;
      else requestAnimationFrame(wait);
    };
    // Every frame the avatar <video> presents, from the tap on: the first whose callback runs with the live
    // stage shown is the first the visitor sees (a frame can come in the very update that shows the stage,
    // which a callback registered only after the stage was seen would miss).
    const video = document.querySelector('[data-testid=avatar-video]');
    const onFrame = (now) => {
      if (liveShown()) {
        marks.firstFrame = now - tapAt;
        off();
      } else {
        video.requestVideoFrameCallback(onFrame);
      }
    };
    video.requestVideoFrameCallback(onFrame);
    document.querySelector('[data-testid=start]').click();
    requestAnimationFrame(wait);
  })()`);
  try {
    return await eventually(async () => {
      const marks = (await page.evaluate('window.__tapMarks')) as TapMarks & { firstFrame: number | null };
      return marks.firstFrame === null ? null : marks;
    }, 'the first avatar frame', 30_000);
  } catch (error) {
    const screen = await page.evaluate(`document.querySelector('main.kiosk')?.dataset.screen + ' ' + (document.querySelector('.screen')?.textContent ?? '').slice(0, 200)`);
    throw new Error(`${String(error)}; the kiosk shows: ${screen}`);
  }
}

async function backToAttract(k: KioskPage): Promise<void> {
  await k.page.click('[data-testid=hangup]');
  await screenIs(k.page, 'ended', 15_000);
  await k.page.keyboard.press('Escape'); // the ended screen's Done
  await screenIs(k.page, 'attract', 15_000);
  await eventually(() => k.emulator.liveCount() === 0, 'the call ended at the emulator', 15_000);
  // Main finishes the old session (final billing read) before it takes a new tap.
  await eventually(
    async () => {
      const r = await k.channels.dispatch('kiosk:session:get-state', undefined);
      return r.ok && ['idle', 'ended', 'failed'].includes((r.value as { phase: string }).phase);
    },
    'main finished the session',
    15_000,
  );
}

/** The tap configurations: a spare whose channel the renderer joined ahead of the tap, a spare with
 *  pre-joining off (the tap carries the channel join), and no spare at all. */
export type TapCase = 'pre-joined spare' | 'spare, pre-joining off' | 'no spare';
const TAP_CASES: readonly TapCase[] = ['pre-joined spare', 'spare, pre-joining off', 'no spare'];
/** The demo engine's modelled channel join (the emulator's `rtcJoinMs`), as a real join commonly takes. */
const JOIN_MS = 400;
const WARMUP_MS = 2_500;
/** The floor each case is compared with (ms): what the protocol and the modelled join cost at the least. */
const FLOOR_TEXT: Record<TapCase, string> = {
  'pre-joined spare': `≈ ${LATENCY_MS + 40} ms: the conn_init round trip + 1 frame at 25 fps`,
  'spare, pre-joining off': `≈ ${JOIN_MS + LATENCY_MS + 40} ms: the channel join + the conn_init round trip + 1 frame`,
  'no spare': `≈ ${WARMUP_MS} ms+: the create, then the avatar's video warm-up and NOT_READY backoff`,
};

interface TapFigure {
  warmupMs: number;
  tapCase: TapCase;
  prewarm: 'off' | 'on-approach';
  samples: number[];
  marks: TapMarks[];
  spareUsed: number;
}

async function benchTap(browser: Browser, baseUrl: string, imageDataUrl: string, warmupMs: number, tapCase: TapCase): Promise<TapFigure> {
  const prewarm: TapFigure['prewarm'] = tapCase === 'no spare' ? 'off' : 'on-approach';
  const k = await openKiosk({
    browser,
    baseUrl,
    orientation: 'landscape',
    imageDataUrl,
    knobs: { latencyMs: LATENCY_MS, warmupMs: { audio: 0, video: warmupMs }, rtcJoinMs: JOIN_MS },
    // The camera stays off here: the approach is reported by the bench itself, `warmup` seconds before the tap.
    config: { prewarm: { mode: prewarm, prejoin: tapCase === 'pre-joined spare' }, presence: { cameraEnabled: false } },
  });
  const samples: number[] = [];
  const marks: TapMarks[] = [];
  let spareUsed = 0;
  try {
    await screenIs(k.page, 'attract', 15_000);
    for (let i = 0; i < RUNS; i++) {
      if (prewarm === 'on-approach') {
        await k.channels.dispatch('kiosk:attract:report', { showing: true, present: true });
        await new Promise((r) => setTimeout(r, warmupMs + 300));
      } else {
        await new Promise((r) => setTimeout(r, 300));
      }
      const usedBefore = k.bridge.events.filter((e) => e.type === 'spare' && e.status === 'used').length;
      const tapAtMs = Date.now();
      const callsBefore = k.bridge.calls.length;
      const m = await tapToFirstFrame(k.page).catch((error: unknown) => {
        const calls = k.bridge.calls.slice(-6).map((c) => `${c.channel} ${JSON.stringify(c.arg)}`);
        throw new Error(`run ${i + 1}: ${String(error)}\nlast calls: ${calls.join(' | ')}`);
      });
      samples.push(m.firstFrame);
      const ready = k.bridge.calls.slice(callsBefore).find((c) => c.channel === 'kiosk:session:rtc-ready');
      const liveId = k.bridge.events.filter((e) => e.type === 'credentials').at(-1);
      const startedAtMs = liveId?.type === 'credentials' ? k.emulator.getSession(liveId.liveId)?.startedAtMs ?? null : null;
      marks.push({ ...m, rtcReady: ready?.atMs !== undefined ? ready.atMs - tapAtMs : null, serviceLive: startedAtMs === null ? null : startedAtMs - tapAtMs });
      spareUsed += k.bridge.events.filter((e) => e.type === 'spare' && e.status === 'used').length - usedBefore;
      await backToAttract(k);
    }
  } finally {
    await k.close();
  }
  return { warmupMs, tapCase, prewarm, samples, marks, spareUsed };
}

// -------------------------------------------------------------------------------------------------

export interface E2eBenchResult {
  tap: TapFigure[];
  cpu: { attractInviting: CpuFigure; attractAtRest: CpuFigure; live: CpuFigure };
  presenceMsPerFrame: number | null;
}

export async function runE2eBench(log: (line: string) => void = console.log): Promise<E2eBenchResult> {
  const server = await startStaticServer();
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-bench-'));
  const emptyRoom = join(dir, 'empty-room.y4m');
  await writeY4m(emptyRoom, { width: 320, height: 240, fps: 10, durationS: 6, scene: emptyScene });
  const imageDataUrl = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../resources/demo-avatar.png')).toString('base64')}`;
  const browser = await launchChromium({ videoFile: emptyRoom });
  try {
    log('\n## End to end in Chromium (demo engine, built renderer)\n');
    // CPU first, on a quiet browser.
    const cpuOf = async (config: Record<string, unknown>, then: 'inviting' | 'at-rest' | 'live'): Promise<{ cpu: CpuFigure; presence: number | null }> => {
      const k = await openKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl, config: { prewarm: { mode: 'off' }, ...config } });
      try {
        await screenIs(k.page, 'attract', 15_000);
        if (then === 'live') {
          await k.page.click('[data-testid=start]');
          await screenIs(k.page, 'live', 30_000);
        }
        if (then === 'at-rest') await k.page.locator('[data-testid=screen-attract][data-calm=true]').waitFor({ timeout: 30_000 });
        await new Promise((r) => setTimeout(r, 1_500)); // settle: entrance animations, first frames
        // Inviting: measured inside the first invitation (10 s from the screen showing).
        const cpu = await measureCpu(k.page, then === 'inviting' ? Math.min(CPU_WINDOW_MS, 6_000) : CPU_WINDOW_MS);
        const stats = (await k.page.evaluate('window.__presenceStats ?? null')) as { frames: number; totalMs: number } | null;
        return { cpu, presence: stats && stats.frames ? stats.totalMs / stats.frames : null };
      } finally {
        await k.close();
      }
    };
    const none: CpuFigure = { renderer: NaN, gpu: NaN, browser: NaN, other: NaN, mainThread: NaN };
    let off = { cpu: none, presence: null as number | null };
    let nobody = off;
    let live = off;
    if (PARTS.has('cpu')) {
      off = await cpuOf({ presence: { cameraEnabled: false } }, 'inviting');
      log(`attract, animations running:        ${fmtCpu(off.cpu)}`);
      nobody = await cpuOf({ presence: { cameraEnabled: true } }, 'at-rest');
      log(`attract, camera on, nobody (rest):  ${fmtCpu(nobody.cpu)}`);
      live = await cpuOf({ presence: { cameraEnabled: false } }, 'live');
      log(`live video call (demo engine):      ${fmtCpu(live.cpu)}`);
      log(`presence detection: ${nobody.presence === null ? 'n/a' : `${nobody.presence.toFixed(2)} ms`} of main thread per analysed frame (160×120, 5 fps)`);
    }

    const tap: TapFigure[] = [];
    if (PARTS.has('tap')) {
      log(
        `\ntap → live screen with a demo frame, client overhead (not the avatar's first frame: no avatar publish, subscribe or decode) (${RUNS} runs each, ${LATENCY_MS} ms injected latency, warm-up ${(WARMUP_MS / 1000).toFixed(1)} s, ` +
          `modelled ${JOIN_MS} ms channel join, RTC first then conn_init, video mode):`,
      );
      for (const tapCase of TAP_CASES) {
        const f = await benchTap(browser, server.url, imageDataUrl, WARMUP_MS, tapCase);
        tap.push(f);
        const s = [...f.samples].sort((a, b) => a - b);
        log(`tap → live screen with a demo frame, ${tapCase}: median ${median(s).toFixed(0)} ms (floor ${FLOOR_TEXT[tapCase]})`);
        log(
          `    (min ${s[0]!.toFixed(0)}, max ${s.at(-1)!.toFixed(0)}; spare used ${f.spareUsed}/${f.samples.length}; ` +
            `medians: credentials ${med(f.marks.map((m) => m.credentials))}, RTC ready ${med(f.marks.map((m) => m.rtcReady ?? null))}, service live ${med(f.marks.map((m) => m.serviceLive ?? null))}, live state ${med(f.marks.map((m) => m.liveState))}, ` +
            `picture shown ${med(f.marks.map((m) => m.picture))})`,
        );
      }
    }
    return { tap, cpu: { attractInviting: off.cpu, attractAtRest: nobody.cpu, live: live.cpu }, presenceMsPerFrame: nobody.presence };
  } finally {
    await browser.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  runE2eBench().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
