/**
 * The visitor funnel over a simulated year of busy days (docs/analytics.md): every event through the real
 * counter and store (an injected clock, a real file in a temporary folder), then the store file's size,
 * the time to read it back (a restart) and the time to build the staff report (what the Visitors tab and
 * `cli visitors` ask for). Run alone: `node --expose-gc --import tsx bench/visitor-funnel-bench.ts`;
 * `npm run bench` runs it too.
 *
 * Left out: rendering the Visitors tab in the page (the panel's side), the Electron IPC hop, the disk's
 * fsync latency (the write is a rename, timed here on tmpfs or whatever /tmp is), and /metrics (counters
 * since start: constant size).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { KioskEvent } from '../electron/contract.ts';
import type { Clock } from '../electron/core/clock.ts';
import { createVisitorFunnel } from '../electron/kiosk/visitor-funnel.ts';
import { VISITOR_FUNNEL_FILE, openVisitorFunnelStore, type VisitorFunnelStore } from '../electron/kiosk/visitor-funnel-store.ts';
import { systemClock } from '../electron/core/clock.ts';
import { hashPin } from '../electron/operations/staff-pin.ts';
import { RENDERER_DIR, launchChromium, openStaffKiosk, startStaticServer } from '../test/e2e/harness.ts';
import { PIN, showVisitors } from '../test/e2e/staff-visitors.ts';

/** A clock the bench moves by hand; timers never fire (the store is closed, and so written, at the end). */
function handClock(startMs: number): Clock & { jump(ms: number): void } {
  let now = startMs;
  return { now: () => now, setTimeout: () => ({ __timer: true }) as const, clearTimeout: () => {}, jump: (ms) => (now += ms) };
}

const gc = (globalThis as { gc?: () => void }).gc;
const LANGUAGES = ['en', 'de', 'fr', 'es', 'ja', 'zh-Hans', 'ar'];
const AVATARS = ['kim', 'lea', 'max'];
const MODES = ['audio', 'video'];

export async function runVisitorFunnelBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'funnel-bench-'));
  try {
    const days = 366;
    // A busy day: open 09–22, each hour 60 passers-by noticed, 30 who stop, 12 taps (1 refused), 10 calls
    // created (1 given up, 1 failed, 8 live: 6 ended well, 2 badly), every language, avatar and mode used.
    // The year ends yesterday (UTC midnights), so the tab's last 7 days are busy ones.
    const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const clock = handClock(today - days * 86_400_000);
    const store = openVisitorFunnelStore({ dir, timeZone: 'Europe/Berlin', clock });
    const funnel = createVisitorFunnel({ store, clock, presence: () => true });
    const state = (s: unknown) => funnel.onEvent({ type: 'state', state: s, previous: 'idle' } as KioskEvent);
    let events = 0;
    let n = 0;
    const t0 = performance.now();
    for (let d = 0; d < days; d++) {
      const dayStart = clock.now();
      clock.jump(9 * 3_600_000);
      for (let h = 0; h < 13; h++) {
        const hourStart = clock.now();
        for (let i = 0; i < 60; i++) {
          clock.jump(1_000);
          funnel.step('noticed');
          funnel.step('greeted');
          if (i % 2 === 0) funnel.step('approached');
          events += i % 2 === 0 ? 3 : 2;
        }
        funnel.refused('closed');
        events += 1;
        for (let c = 0; c < 11; c++) {
          n += 1;
          funnel.tap({ language: LANGUAGES[n % LANGUAGES.length]!, avatarId: AVATARS[n % AVATARS.length]!, callMode: MODES[n % MODES.length]! });
          state({ phase: 'connecting', liveId: `L${n}`, attempt: 1 });
          if (c === 0) funnel.noteCause('visitor', null);
          if (c <= 1) state({ phase: 'failed', liveId: `L${n}`, error: { code: 'network', message: 'x' }, summary: null });
          else {
            state({ phase: 'live', liveId: `L${n}`, sinceMs: clock.now(), endsAtMs: clock.now() + 600_000 });
            clock.jump(((n * 37) % 400) * 1_000);
            funnel.noteCause(c < 8 ? 'visitor' : 'media_stalled', null);
            state({ phase: 'ended', liveId: `L${n}`, summary: null });
          }
          events += 3;
        }
        clock.jump(hourStart + 3_600_000 - clock.now());
      }
      clock.jump(dayStart + 86_400_000 - clock.now());
    }
    const countMs = performance.now() - t0;
    const tw = performance.now();
    store.close();
    const writeMs = performance.now() - tw;
    const bytes = statSync(join(dir, VISITOR_FUNNEL_FILE)).size;

    gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const tr = performance.now();
    const again = openVisitorFunnelStore({ dir, timeZone: 'Europe/Berlin', clock });
    const readMs = performance.now() - tr;
    gc?.();
    const heapMb = (process.memoryUsage().heapUsed - heap0) / 1048576;
    const reader = createVisitorFunnel({ store: again, clock, presence: () => true });
    const samples: number[] = [];
    let report = reader.report();
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      report = reader.report();
      samples.push(performance.now() - t);
    }
    samples.sort((a, b) => a - b);
    console.log(`visitor funnel, a simulated year of busy days (${days} days, 13 open hours, ${events.toLocaleString('en')} events through the counter):`);
    console.log(`  counting            ${((countMs * 1000) / events).toFixed(2)} µs per event (the store in memory; writes are batched)`);
    console.log(`  store file          ${(bytes / 1024).toFixed(0)} KiB (${again.hours.size} hour buckets, ${again.days.size} day buckets; zeros left out)`);
    console.log(`  write (temp+rename) ${writeMs.toFixed(1)} ms`);
    console.log(`  read back (restart) ${readMs.toFixed(1)} ms, heap held ≈ ${heapMb.toFixed(1)} MB${gc ? '' : ' [no --expose-gc: figure includes garbage]'}`);
    console.log(`  staff report        median ${samples[10]!.toFixed(1)} ms, max ${samples[samples.length - 1]!.toFixed(1)} ms (${report.hours.length} hours, ${report.days.length} days)`);
    if (process.env.BENCH_SKIP_E2E === '1' || !existsSync(join(RENDERER_DIR, 'index.html'))) {
      console.log('  Visitors tab        not measured (BENCH_SKIP_E2E=1, or the renderer is not built: npm run build)');
    } else {
      const tab = await timeTheTab(dir);
      console.log(`  Visitors tab        median ${tab.median.toFixed(0)} ms, max ${tab.max.toFixed(0)} ms from the tab's click to its heat map drawn (Chromium, the built page, ${tab.runs} runs),`);
      console.log(`                      of which the report's hop ≈ ${tab.hopMs.toFixed(0)} ms for ${tab.hopKb.toFixed(0)} KB over the test bridge (not Electron's IPC or browser mode's socket)`);
    }
    console.log('  (left out: fsync on a real disk; the tab on a slower kiosk than this machine)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Visitors tab over the year's store: the staff panel open on another tab, then a click on Visitors
 *  until its heat map is in the page, in Debian's Chromium on the built renderer and the real kiosk service. */
async function timeTheTab(dir: string): Promise<{ median: number; max: number; runs: number; hopMs: number; hopKb: number }> {
  const runs = 7;
  const store: VisitorFunnelStore = openVisitorFunnelStore({ dir, timeZone: 'Europe/Berlin', clock: systemClock });
  const server = await startStaticServer();
  const browser = await launchChromium();
  try {
    const imageDataUrl = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../resources/demo-avatar.png')).toString('base64')}`;
    const k = await openStaffKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl, file: { staffPinHash: await hashPin(PIN) }, visitorStore: store });
    try {
      await showVisitors(k.page, 'en');
      const samples: number[] = [];
      for (let i = 0; i < runs; i++) {
        await k.page.click('[data-testid=tab-status]');
        await k.page.locator('[data-testid=visitors-heatmap]').waitFor({ state: 'detached' });
        const t = performance.now();
        await k.page.click('[data-testid=tab-visitors]');
        await k.page.locator('[data-testid=visitors-heatmap]').waitFor();
        samples.push(performance.now() - t);
      }
      samples.sort((a, b) => a - b);
      // The report alone, fetched by the page as the tab does: over the E2E harness's bridge (Playwright's
      // exposed function), slower than Electron's IPC or browser mode's socket for the same bytes.
      const hop = await k.page.evaluate(async () => {
        const t = performance.now();
        const r = await (window as unknown as { kiosk: { staff: { visitors(): Promise<unknown> } } }).kiosk.staff.visitors();
        return { ms: performance.now() - t, bytes: JSON.stringify(r).length };
      });
      return { median: samples[Math.floor(runs / 2)]!, max: samples[runs - 1]!, runs, hopMs: hop.ms, hopKb: hop.bytes / 1024 };
    } finally {
      await k.close();
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) await runVisitorFunnelBench();
