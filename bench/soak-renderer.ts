/**
 * The renderer half of `npm run soak`: the BUILT renderer (out/renderer) in Debian's Chromium through the
 * E2E harness (test/e2e/harness.ts: the real kiosk's services with its staff operations and emulator behind
 * the test bridge), clicked through call after call in real time, as a visitor and now and then staff
 * would: tap, live, a fault or a hang-up, the end screen, "Done", back to attract.
 *
 * What it is for: a kiosk takes about 3,000 calls a month without a reload, so the page must be the same
 * after the thousandth call as after the hundredth. After call 1 and every `sampleEvery` calls, back on the
 * attract screen and after a forced GC, it reads the page's own counters over the DevTools protocol
 * (`Memory.getDOMCounters`: event listeners, DOM nodes, documents; `Runtime.getHeapUsage`: the JS heap) and
 * the listeners per kind of target (`Runtime.queryObjects` over `EventTarget.prototype`, then the console's
 * `getEventListeners` on each), and prints the trend with its slope per call, the first `warmup` calls
 * left out (code compiled and caches filled on first use are not growth).
 *
 * The mix, seeded: audio and video calls hung up by the visitor, a dropped control socket (reconnect), a
 * forced hang-up from the service, video through NOT_READY, LIVE_CONN_INIT_FAILED (the error screen);
 * before a call the visitor may pick a language or accessibility mode; every `staffEvery` calls staff
 * open the panel with the PIN and visit every tab (the diagnostics tab opens the microphone and camera).
 * With `presence`, the attract screen watches a generated room (test/e2e/fake-camera.ts) where someone
 * walks up 1.5 s after the camera opens; a third of the visitors wait there before they tap, so the
 * greeting shows and a spare session is pre-warmed and pre-joined on the approach, as on a kiosk with its
 * default settings.
 *
 * Not measured: the Electron shell (the bridge stands in for IPC), the Agora engines (the demo engine
 * draws the avatar; no real RTC), GPU memory and the renderer process's native memory outside the JS heap
 * and the DOM (media pipelines, canvases' backing stores), and days of uptime (timers that fire hourly).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CDPSession, Page } from 'playwright';
import type { SessionState } from '../electron/core/session-types.ts';
import { DEMO_API_KEY } from '../electron/emulator/index.ts';
import { hashPin } from '../electron/operations/staff-pin.ts';
import { mulberry32 } from '../test/helpers/seeded-random.ts';

export interface RendererSoakOptions {
  calls: number;
  /** Wall-clock bound: no new call starts after it. */
  minutes: number;
  seed: number;
  /** Read the page's counters after call 1 and every this many calls (and after the last). */
  sampleEvery: number;
  /** Calls left out of the slope: the first ones compile code and fill caches. */
  warmup: number;
  /** Staff open the panel and visit every tab every this many calls (0: never). */
  staffEvery: number;
  /** The attract screen's camera presence and spare sessions (pre-warmed, pre-joined) on the approach. */
  presence: boolean;
  log: (line: string) => void;
}

/** The page's counters at one moment (after a forced GC, on the attract screen). */
export interface PageSample {
  call: number;
  listeners: number;
  domNodes: number;
  documents: number;
  jsHeapMB: number;
  /** Local microphone/camera tracks still live (the presence camera is one while attract watches). */
  liveTracks: number;
  /** Listeners by "<target class> <event type>". */
  listenersByTarget: Record<string, number>;
}

/** How one counter moved after the warm-up: least-squares slope per call, first/last, range. */
export interface Trend {
  slopePerCall: number;
  first: number;
  last: number;
  min: number;
  max: number;
  /** Samples the slope is fitted on (those at or after the warm-up). */
  samples: number;
}

/** Least-squares slope of `value` over `call` for the samples at or after `warmup` (null: under 2 samples). */
export function trendOf(samples: readonly PageSample[], warmup: number, value: (s: PageSample) => number): Trend | null {
  const used = samples.filter((s) => s.call >= warmup);
  if (used.length < 2) return null;
  const xs = used.map((s) => s.call);
  const ys = used.map(value);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return { slopePerCall: den === 0 ? 0 : num / den, first: ys[0]!, last: ys.at(-1)!, min: Math.min(...ys), max: Math.max(...ys), samples: used.length };
}

/** "A handful": listeners or DOM nodes that move by more than this after the warm-up are growth. */
export const HANDFUL = 5;

/** Flat: neither the fitted line nor the last sample is more than a handful above the first after warm-up. */
export function isFlat(t: Trend | null, spanCalls: number): boolean {
  if (!t) return true;
  return t.last - t.first <= HANDFUL && t.slopePerCall * spanCalls <= HANDFUL;
}

export interface RendererSoakReport {
  calls: number;
  stoppedByMinutes: boolean;
  realSeconds: number;
  secondsPerCall: number;
  presence: boolean;
  staffVisits: number;
  /** Spare sessions by what became of them (`spare` events: created, used, expired, failed). */
  spares: Record<string, number>;
  /** Attract-screen reports that someone had walked up (`present: true`). */
  approaches: number;
  byOutcome: Record<string, number>;
  notEndedOnEmulator: string[];
  pageProblems: string[];
  driverErrors: string[];
  samples: PageSample[];
  warmup: number;
  trends: { listeners: Trend | null; domNodes: Trend | null; jsHeapMB: Trend | null };
  /** Listeners or DOM nodes grew after the warm-up (more than a handful). */
  growing: string[];
  /** What grew most in a heap snapshot from the first sample after the warm-up to the last (null: no such pair). */
  heapGrowth: { fromCall: number; toCall: number; rows: Array<{ key: string; count: number; bytes: number }> } | null;
}

const KINDS = ['audio', 'video', 'drop', 'forced-hangup', 'video-not-ready', 'init-failure'] as const;
type Kind = (typeof KINDS)[number];
const KIND_WEIGHTS: Record<Kind, number> = { audio: 3, video: 2, drop: 1, 'forced-hangup': 1, 'video-not-ready': 1, 'init-failure': 1 };
const STAFF_PIN = '482916';
const STAFF_TABS = ['status', 'settings', 'voices', 'diagnostics', 'ledger', 'logs', 'system'] as const;

const realSleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isTerminal = (s: SessionState) => s.phase === 'ended' || s.phase === 'failed';

function pick<T extends string>(random: () => number, weights: Record<T, number>): T {
  const entries = Object.entries(weights) as Array<[T, number]>;
  let r = random() * entries.reduce((n, [, w]) => n + w, 0);
  for (const [k, w] of entries) {
    r -= w;
    if (r < 0) return k;
  }
  return entries[0]![0];
}

function outcomeOf(state: SessionState): string {
  if (state.phase === 'ended') return `ended: ${state.summary.endedBy ?? '?'} ${state.summary.hangupReason ?? ''}`.trim();
  if (state.phase === 'failed') return `failed: ${state.error.code}`;
  return `not finished: ${state.phase}`;
}

/** Listeners on every EventTarget the page holds, by target class and event type (the DevTools console's
 *  `getEventListeners`, which the protocol's `Runtime.evaluate` offers with `includeCommandLineAPI`). */
async function listenersByTarget(cdp: CDPSession): Promise<Record<string, number>> {
  const proto = await cdp.send('Runtime.evaluate', { expression: 'EventTarget.prototype', objectGroup: 'soak' });
  if (!proto.result.objectId) return {};
  const found = await cdp.send('Runtime.queryObjects', { prototypeObjectId: proto.result.objectId, objectGroup: 'soak' });
  try {
    await cdp.send('Runtime.callFunctionOn', { objectId: found.objects.objectId!, functionDeclaration: 'function () { globalThis.__soakTargets = this; }' });
    const counted = await cdp.send('Runtime.evaluate', {
      includeCommandLineAPI: true,
      returnByValue: true,
      expression: `(() => {
        const out = {};
        for (const target of globalThis.__soakTargets) {
          const name = Object.prototype.toString.call(target).slice(8, -1);
          for (const [type, list] of Object.entries(getEventListeners(target))) out[name + ' ' + type] = (out[name + ' ' + type] ?? 0) + list.length;
        }
        delete globalThis.__soakTargets;
        return out;
      })()`,
    });
    return (counted.result.value ?? {}) as Record<string, number>;
  } finally {
    await cdp.send('Runtime.releaseObjectGroup', { objectGroup: 'soak' });
  }
}

/** A heap snapshot (the page's JS objects and Blink's native ones) summed by "<node type>: <class or kind>". */
export type HeapSummary = Record<string, { count: number; bytes: number }>;

async function heapSummary(cdp: CDPSession): Promise<HeapSummary> {
  const chunks: string[] = [];
  const onChunk = (p: { chunk: string }) => void chunks.push(p.chunk);
  cdp.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  try {
    await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  } finally {
    cdp.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
  }
  const snap = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [width, typeAt, nameAt, sizeAt] = [fields.length, fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const out: HeapSummary = {};
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!] ?? '?';
    // A string's "name" is its text, a closure's its function: keep the class of objects and native
    // objects, and only the kind for everything else.
    const name = type === 'object' || type === 'native' ? (snap.strings[snap.nodes[i + nameAt]!] ?? '').slice(0, 60) : '';
    const key = name ? `${type}: ${name}` : type;
    const e = (out[key] ??= { count: 0, bytes: 0 });
    e.count += 1;
    e.bytes += snap.nodes[i + sizeAt]!;
  }
  return out;
}

/** What grew most between two heap summaries, by bytes. */
export function heapGrowth(before: HeapSummary, after: HeapSummary, top: number): Array<{ key: string; count: number; bytes: number }> {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys]
    .map((key) => ({ key, count: (after[key]?.count ?? 0) - (before[key]?.count ?? 0), bytes: (after[key]?.bytes ?? 0) - (before[key]?.bytes ?? 0) }))
    .filter((row) => row.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

export async function soakRenderer(o: RendererSoakOptions): Promise<RendererSoakReport> {
  const { launchChromium, localTracks, openStaffKiosk, screenIs, startStaticServer } = await import('../test/e2e/harness.ts');
  const image = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '..', 'resources', 'demo-avatar.png')).toString('base64')}`;
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-soak-'));
  const server = await startStaticServer();
  let videoFile: string | undefined;
  if (o.presence) {
    // The file plays from its start each time the camera opens (each attract screen): an empty room for
    // 1.5 s, then someone walks up and stays. A visitor who lingers sees the greeting, and main a spare.
    const { approachScene, writeY4m } = await import('../test/e2e/fake-camera.ts');
    videoFile = join(dir, 'room.y4m');
    await writeY4m(videoFile, { width: 320, height: 240, fps: 10, durationS: 30, scene: approachScene(1.5) });
  }
  const browser = await launchChromium(videoFile ? { videoFile } : {});
  const k = await openStaffKiosk({
    browser,
    baseUrl: server.url,
    orientation: 'landscape',
    imageDataUrl: image,
    recordTracks: 'live',
    file: {
      callMode: 'audio',
      returnToAttractSeconds: 600,
      staffPinHash: await hashPin(STAFF_PIN),
      ...(o.presence ? { presence: { cameraEnabled: true }, prewarm: { mode: 'on-approach', maxPerHour: 120 } } : {}),
    },
    knobs: { warmupMs: { audio: 0, video: 1_000 } },
  });
  const page: Page = k.page;
  const cdp = await page.context().newCDPSession(page);
  const emu = k.emulator;
  const random = mulberry32(o.seed * 7_919);
  const byOutcome: Record<string, number> = {};
  const errors: string[] = [];
  const samples: PageSample[] = [];
  let staffVisits = 0;
  let heapAtWarmup: { call: number; summary: HeapSummary } | null = null;

  const sample = async (call: number): Promise<PageSample> => {
    await screenIs(page, 'attract', 15_000);
    await page.waitForTimeout(600); // the last screen's fade-out (450 ms) has ended and its nodes are gone
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('HeapProfiler.collectGarbage');
    const dom = await cdp.send('Memory.getDOMCounters');
    const heap = await cdp.send('Runtime.getHeapUsage');
    const s: PageSample = {
      call,
      listeners: dom.jsEventListeners,
      domNodes: dom.nodes,
      documents: dom.documents,
      jsHeapMB: +(heap.usedSize / 1e6).toFixed(3),
      liveTracks: (await localTracks(page)).live,
      listenersByTarget: await listenersByTarget(cdp),
    };
    o.log(`renderer: call ${call}: ${s.listeners} listeners, ${s.domNodes} DOM nodes, JS heap ${s.jsHeapMB.toFixed(2)} MB, ${s.liveTracks} live track(s)`);
    return s;
  };

  const visitor = async (): Promise<void> => {
    if (random() < 0.3) {
      const langs = page.locator('.languages [data-testid^="lang-"]');
      const n = await langs.count();
      if (n > 0) await langs.nth(Math.floor(random() * n)).click();
    }
    if (random() < 0.15) await page.click('[data-testid=accessibility]');
  };

  const staffPanel = async (): Promise<void> => {
    await page.keyboard.press('Control+Shift+S');
    await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 10_000 });
    for (const d of STAFF_PIN) await page.click(`[data-testid=pin-${d}]`);
    await page.click('[data-testid=pin-ok]');
    await page.locator('[data-testid=staff-panel]').waitFor({ timeout: 10_000 });
    for (const tab of STAFF_TABS) {
      await page.click(`[data-testid=tab-${tab}]`);
      await page.locator(`[data-testid=staff-panel][data-tab=${tab}]`).waitFor({ timeout: 10_000 });
      await page.waitForTimeout(tab === 'diagnostics' ? 800 : 150); // the device check opens the microphone and camera
    }
    await page.click('[data-testid=staff-close]');
    await page.locator('[data-testid=staff-panel]').waitFor({ state: 'detached', timeout: 10_000 });
    staffVisits += 1;
  };

  const one = async (kind: Kind): Promise<void> => {
    Object.assign(emu.knobs, { initFailure: kind === 'init-failure' });
    emu.setBalance(DEMO_API_KEY, 1_000);
    await screenIs(page, 'attract', 15_000);
    // With the camera: a third of the visitors walk up and stop before they tap (the approach, the
    // greeting, a spare session pre-warmed and its channel pre-joined); the others tap at once.
    if (o.presence && random() < 1 / 3) await page.waitForTimeout(5_000);
    await visitor();
    const video = kind === 'video' || kind === 'video-not-ready';
    await page.click(video ? '[data-testid=mode-video]' : '[data-testid=mode-audio]');
    await page.click('[data-testid=start]');
    if (kind === 'init-failure') {
      await screenIs(page, 'error', 20_000);
    } else {
      await screenIs(page, 'live', 20_000);
      const state = k.kiosk.calls.state;
      const liveId = ('liveId' in state ? state.liveId : null) ?? '';
      await page.waitForTimeout(200 + random() * 400);
      if (kind === 'drop') {
        emu.dropConnection(liveId);
        await page.waitForTimeout(300);
        await screenIs(page, 'live', 10_000);
      }
      if (kind === 'forced-hangup') emu.forceHangup(liveId, 'provider_closed');
      else await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended', 20_000);
    }
    // The screen shows the end while the service may still read the final billing: wait for its end.
    const t = performance.now();
    while (!isTerminal(k.kiosk.calls.state) && performance.now() - t < 15_000) await realSleep(10);
    byOutcome[outcomeOf(k.kiosk.calls.state)] = (byOutcome[outcomeOf(k.kiosk.calls.state)] ?? 0) + 1;
    await page.click('[data-testid=done]');
    await screenIs(page, 'attract', 15_000);
  };

  const deadline = performance.now() + o.minutes * 60_000;
  const t0 = performance.now();
  let done = 0;
  for (let call = 1; call <= o.calls && performance.now() < deadline; call++) {
    const kind = pick(random, KIND_WEIGHTS);
    try {
      await one(kind);
      if (o.staffEvery > 0 && call % o.staffEvery === 0) await staffPanel();
    } catch (error) {
      errors.push(`call ${call} (${kind}): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      byOutcome['soak driver error'] = (byOutcome['soak driver error'] ?? 0) + 1;
      await k.kiosk.calls.hangup().catch(() => undefined);
      await page.keyboard.press('Escape').catch(() => undefined);
      await page.click('[data-testid=staff-close]', { timeout: 2_000 }).catch(() => undefined);
      await page.click('[data-testid=done]', { timeout: 5_000 }).catch(() => undefined);
    }
    done = call;
    if (call % 25 === 0) o.log(`renderer: ${call}/${o.calls} calls, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    if (call === 1 || call % o.sampleEvery === 0) samples.push(await sample(call));
    if (!heapAtWarmup && call >= o.warmup && samples.at(-1)?.call === call) heapAtWarmup = { call, summary: await heapSummary(cdp) };
  }
  if (samples.at(-1)?.call !== done && done > 0) samples.push(await sample(done));
  const heapAtEnd = heapAtWarmup && heapAtWarmup.call !== done ? await heapSummary(cdp) : null;
  const realS = (performance.now() - t0) / 1000;
  await realSleep(300);
  // A spare still waiting for a visitor is not a session left behind: it closes with the kiosk.
  const spareStatus = new Map<string, string>();
  const spares: Record<string, number> = {};
  for (const e of k.bridge.events) {
    if (e.type !== 'spare') continue;
    spares[e.status] = (spares[e.status] ?? 0) + 1;
    if (e.liveId) spareStatus.set(e.liveId, e.status);
  }
  const approaches = k.bridge.calls.filter((c) => c.channel === 'kiosk:attract:report' && (c.arg as { present?: unknown }).present === true).length;
  const notEnded = emu
    .listSessions()
    .filter((s) => s.status !== 'ended' && spareStatus.get(s.id) !== 'created')
    .map((s) => `${s.id} ${s.status}`);
  const pageProblems = k.problems.filter((p) => !/Failed to load resource.*404/.test(p));
  await k.close();
  await browser.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });

  const span = Math.max(0, done - o.warmup);
  const trends = {
    listeners: trendOf(samples, o.warmup, (s) => s.listeners),
    domNodes: trendOf(samples, o.warmup, (s) => s.domNodes),
    jsHeapMB: trendOf(samples, o.warmup, (s) => s.jsHeapMB),
  };
  const growing = [
    ...(isFlat(trends.listeners, span) ? [] : ['listeners']),
    ...(isFlat(trends.domNodes, span) ? [] : ['DOM nodes']),
  ];
  return {
    calls: done,
    stoppedByMinutes: done < o.calls,
    realSeconds: +realS.toFixed(1),
    secondsPerCall: done ? +(realS / done).toFixed(2) : 0,
    presence: o.presence,
    staffVisits,
    spares,
    approaches,
    byOutcome,
    notEndedOnEmulator: notEnded,
    pageProblems,
    driverErrors: errors,
    samples,
    warmup: o.warmup,
    trends,
    growing,
    heapGrowth: heapAtWarmup && heapAtEnd ? { fromCall: heapAtWarmup.call, toCall: done, rows: heapGrowth(heapAtWarmup.summary, heapAtEnd, 12) } : null,
  };
}

export function printRendererReport(r: RendererSoakReport, out: (line?: string) => void): void {
  out(`\nrenderer: ${r.calls} calls in Chromium in ${r.realSeconds} s (${r.secondsPerCall} s a call)${r.stoppedByMinutes ? ' — stopped by --minutes' : ''}; presence and spares ${r.presence ? 'on' : 'off'}; staff panel opened ${r.staffVisits} times`);
  if (r.presence) {
    const spares = Object.entries(r.spares).map(([status, n]) => `${n} ${status}`).join(', ') || 'none';
    out(`  the attract screen saw someone walk up ${r.approaches} times; spare sessions: ${spares}`);
  }
  out('  by outcome:');
  for (const [k, v] of Object.entries(r.byOutcome).sort((a, b) => b[1] - a[1])) out(`    ${String(v).padStart(5)}  ${k}`);
  out(`  sessions not ended on the emulator: ${r.notEndedOnEmulator.length}${r.notEndedOnEmulator.length ? ` (${r.notEndedOnEmulator.slice(0, 5).join('; ')})` : ''}`);
  out(`  page errors: ${r.pageProblems.length}${r.pageProblems.length ? ` (${r.pageProblems.slice(0, 3).join('; ')})` : ''}`);
  out(`  soak driver errors: ${r.driverErrors.length}${r.driverErrors.length ? ` (${r.driverErrors.slice(0, 3).join('; ')})` : ''}`);
  out('  the page after a forced GC, on the attract screen:');
  out('     call  listeners  DOM nodes  documents  JS heap MB  live tracks');
  for (const s of r.samples) {
    out(`    ${String(s.call).padStart(5)}  ${String(s.listeners).padStart(9)}  ${String(s.domNodes).padStart(9)}  ${String(s.documents).padStart(9)}  ${s.jsHeapMB.toFixed(2).padStart(10)}  ${String(s.liveTracks).padStart(11)}`);
  }
  const line = (name: string, t: Trend | null, unit: (v: number) => string, slope: (v: number) => string) =>
    t
      ? `    ${name}: ${unit(t.first)} → ${unit(t.last)} (range ${unit(t.min)}–${unit(t.max)}), slope ${slope(t.slopePerCall)} a call`
      : `    ${name}: too few samples after the warm-up`;
  out(`  from call ${r.warmup} on (the first ${r.warmup} are warm-up), least-squares over ${r.trends.listeners?.samples ?? 0} samples:`);
  const sign = (v: number, digits: number) => `${v >= 0 ? '+' : ''}${v.toFixed(digits)}`;
  out(line('listeners', r.trends.listeners, String, (v) => sign(v, 4)));
  out(line('DOM nodes', r.trends.domNodes, String, (v) => sign(v, 4)));
  out(line('JS heap', r.trends.jsHeapMB, (v) => `${v.toFixed(2)} MB`, (v) => `${sign(v * 1e3, 2)} KB`));
  out(`  verdict: ${r.growing.length ? `GROWING (${r.growing.join(', ')}: more than ${HANDFUL} after the warm-up)` : `listeners and DOM nodes flat (within ${HANDFUL} after the warm-up)`}`);
  const first = r.samples.find((s) => s.call >= r.warmup) ?? r.samples[0];
  const last = r.samples.at(-1);
  if (first && last && first !== last) {
    const keys = [...new Set([...Object.keys(first.listenersByTarget), ...Object.keys(last.listenersByTarget)])].sort();
    const changed = keys.filter((key) => (first.listenersByTarget[key] ?? 0) !== (last.listenersByTarget[key] ?? 0));
    out(`  listeners by target, call ${first.call} → ${last.call}: ${changed.length === 0 ? 'no change' : ''}`);
    for (const key of changed) out(`    ${key}: ${first.listenersByTarget[key] ?? 0} → ${last.listenersByTarget[key] ?? 0}`);
  }
  if (r.heapGrowth) {
    out(`  what grew in the heap snapshot, call ${r.heapGrowth.fromCall} → ${r.heapGrowth.toCall} (V8's objects and code, Blink's native objects; top ${r.heapGrowth.rows.length} by bytes):`);
    for (const row of r.heapGrowth.rows) out(`    ${`+${(row.bytes / 1e3).toFixed(1)} KB`.padStart(11)}  ${`${row.count >= 0 ? '+' : ''}${row.count}`.padStart(6)}  ${row.key}`);
  }
}
