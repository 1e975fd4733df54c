/**
 * E2E plumbing: a static server for the BUILT renderer (out/renderer) on 127.0.0.1:0, Debian's Chromium
 * with fake media devices, the real kiosk's services (demo mode: the in-process emulator) wired to the page
 * through the test bridge, bounded waits, and screenshots into test/artifacts/screens/.
 */
import { after, before } from 'node:test';
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright';
import type { EmulatorHandle, EmulatorKnobs } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { CONTENT_SECURITY_POLICY } from '../../electron/main/page-policy.ts';
import { createChannelRegistry, type ChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';
import type { VisitorFunnelStore } from '../../electron/kiosk/visitor-funnel-store.ts';
import { openAvatarVolume } from '../../electron/kiosk/avatar-volume.ts';
import { systemTimeZone } from '../../electron/kiosk/visitor-funnel.ts';
import { openVisitorFunnelStore } from '../../electron/kiosk/visitor-funnel-store.ts';
import type { AttentionItem, KioskEvent } from '../../electron/contract.ts';
import { installKioskBridge, type BridgeHandle, type KioskBackend } from './bridge.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { systemClock } from '../../electron/core/clock.ts';
import { createLogger } from '../../electron/core/log.ts';
import { FakeClock } from '../helpers/fake-clock.ts';
import { startFleetHost } from '../../electron/fleet/fleet-host.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { jsonFilePersistence, type SettingsPersistence } from '../../electron/operations/settings.ts';
import { createStaffOps, type StaffOps } from '../../electron/operations/staff-ops.ts';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const RENDERER_DIR = join(ROOT, 'out', 'renderer');
export const SCREENS_DIR = join(ROOT, 'test', 'artifacts', 'screens');

export type Orientation = 'landscape' | 'portrait';
export const VIEWPORTS: Record<Orientation, { width: number; height: number }> = {
  landscape: { width: 1920, height: 1080 },
  portrait: { width: 1080, height: 1920 },
};

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/** The visible text of `[data-testid=…]`, trimmed, with runs of white space as one space. */
export const testIdText = (page: Page, testId: string): Promise<string> =>
  page.locator(`[data-testid=${testId}]`).textContent().then((t) => (t ?? '').trim().replace(/\s+/g, ' '));

/**
 * A file's usual E2E setup, registered as its before/after hooks: the static server for the built
 * renderer, one Chromium, and the demo portrait as a data URL. Read the fields inside tests.
 */
export function useE2eBrowser(): { readonly server: { url: string; close(): Promise<void> }; readonly browser: Browser; readonly portrait: string } {
  const env = {} as { server: { url: string; close(): Promise<void> }; browser: Browser; portrait: string };
  before(async () => {
    env.server = await startStaticServer();
    env.browser = await launchChromium();
    env.portrait = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
  });
  return env;
}

/**
 * Serves out/renderer read-only (anything outside it is a 404), with main's CSP header on every answer,
 * so the page runs under both policies exactly as in the app (the header and index.html's meta).
 */
export async function startStaticServer(dir = RENDERER_DIR): Promise<{ url: string; close(): Promise<void> }> {
  if (!existsSync(join(dir, 'index.html'))) {
    throw new Error(`${dir}/index.html is missing: build the renderer first (npx vite build --config renderer/vite.config.ts)`);
  }
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      const file = normalize(join(dir, path === '/' ? 'index.html' : path));
      if (!file.startsWith(dir + sep) && file !== join(dir, 'index.html')) {
        res.writeHead(404).end();
        return;
      }
      try {
        const body = await readFile(file);
        res.writeHead(200, {
          'content-type': MIME[extname(file)] ?? 'application/octet-stream',
          'cache-control': 'no-store',
          'content-security-policy': CONTENT_SECURITY_POLICY,
        });
        res.end(body);
      } catch {
        res.writeHead(404).end();
      }
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--use-fake-device-for-media-stream',
  '--autoplay-policy=no-user-gesture-required',
];

/**
 * `grantMedia: false` leaves out the fake permission UI: getUserMedia is then denied (NotAllowedError).
 * `videoFile`: the fake camera plays this .y4m (looped) instead of Chromium's test pattern.
 */
/** Errors a page throws and what its console reports as an error or a CSP refusal, collected as they come. */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  return problems;
}

export function launchChromium(options: { grantMedia?: boolean; videoFile?: string } = {}): Promise<Browser> {
  const args = [...CHROMIUM_ARGS, ...(options.grantMedia === false ? [] : ['--use-fake-ui-for-media-stream'])];
  if (options.videoFile) args.push(`--use-file-for-fake-video-capture=${options.videoFile}`);
  return chromium.launch({ executablePath: '/usr/bin/chromium', args, timeout: 30_000 });
}

/**
 * Records every local MediaStreamTrack the page obtains (window.__localTracks), so a test can check that
 * all of them were stopped when the call ended. Wraps getUserMedia without changing its behaviour.
 * `keep: 'live'` (long runs: the soak) lets a track go once it has stopped and only counts it
 * (window.__endedTracks): holding every track of a thousand calls would also hold whatever listens to
 * them, so the page's memory and listener figures would measure this recorder, not the page.
 */
const trackMedia = (keep: 'all' | 'live') => `(() => {
  const md = navigator.mediaDevices;
  if (!md) return;
  const original = md.getUserMedia.bind(md);
  window.__localTracks = [];
  window.__endedTracks = 0;
  window.__gumCalls = 0;
  window.__pruneLocalTracks = ${keep === 'live'}
    ? () => {
        const live = window.__localTracks.filter((t) => t.readyState !== 'ended');
        window.__endedTracks += window.__localTracks.length - live.length;
        window.__localTracks = live;
      }
    : () => {};
  md.getUserMedia = async (constraints) => {
    window.__gumCalls++;
    const stream = await original(constraints);
    window.__pruneLocalTracks();
    for (const t of stream.getTracks()) window.__localTracks.push(t);
    return stream;
  };
})();`;

/** Local tracks the page obtained: how many, and how many are still live. */
export async function localTracks(page: Page): Promise<{ total: number; live: number; gumCalls: number }> {
  return page.evaluate(`(() => {
    window.__pruneLocalTracks();
    return {
      total: window.__endedTracks + window.__localTracks.length,
      live: window.__localTracks.filter((t) => t.readyState === 'live').length,
      gumCalls: window.__gumCalls,
    };
  })()`);
}

/** The live <video>'s playback position and the mean brightness (0..255) of its current frame. */
export async function avatarFrame(page: Page): Promise<{ currentTime: number; width: number; height: number; brightness: number }> {
  return page.evaluate(`(() => {
    const v = document.querySelector('[data-testid=avatar-video]');
    if (!v || !v.videoWidth) return { currentTime: v ? v.currentTime : 0, width: 0, height: 0, brightness: 0 };
    const c = document.createElement('canvas');
    c.width = 96; c.height = 54;
    const ctx = c.getContext('2d');
    ctx.drawImage(v, 0, 0, c.width, c.height);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let sum = 0;
    for (let i = 0; i < d.length; i += 4) sum += 0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2];
    return { currentTime: v.currentTime, width: v.videoWidth, height: v.videoHeight, brightness: sum / (d.length / 4) };
  })()`);
}

export interface KioskPage {
  page: Page;
  context: BrowserContext;
  kiosk: Kiosk;
  /** The page's channels (the kiosk's, and staff operations' on a staff kiosk). */
  channels: ChannelRegistry;
  emulator: EmulatorHandle;
  bridge: BridgeHandle;
  /** Browser console errors and page errors seen so far. */
  problems: string[];
  /** URLs the page requested. */
  requests: string[];
  /** `error` with the last lines of main's log, the kiosk's events and the page's console appended to its
   *  message (oldest first): what main and the page did before a step failed. */
  explain(error: unknown): Error;
  close(): Promise<void>;
}

export interface KioskPageOptions {
  browser: Browser;
  baseUrl: string;
  orientation: Orientation;
  imageDataUrl: string;
  knobs?: Partial<EmulatorKnobs>;
  config?: Record<string, unknown>;
  /** Rewrite events on their way to the page (e.g. credentials that are not the emulator's). */
  mapEvent?: (event: KioskEvent) => KioskEvent;
  /** Shorten the media watchdog (8 s / 20 s in the app) for this page: the test-only page hook
   *  `__kioskTestMediaWatchdog` read by renderer/src/call/MediaWatch.svelte.ts, set before the app loads. */
  mediaWatchdog?: { noticeMs: number; hangupMs: number };
  /** What the page's track recorder keeps (`localTracks`): every track (the default, for tests that
   *  look at stopped ones), or only those not yet stopped (long runs). */
  recordTracks?: 'all' | 'live';
}

/** A page showing the built renderer, bridged to `backend` (the kiosk's channels and events, or a view of
 *  them), with its problems and requests recorded and the page's local media tracked (`localTracks`). */
async function openPage(
  kiosk: Kiosk,
  backend: KioskBackend,
  options: Pick<KioskPageOptions, 'browser' | 'baseUrl' | 'orientation' | 'mediaWatchdog' | 'recordTracks'>,
): Promise<Omit<KioskPage, 'kiosk' | 'channels' | 'close' | 'explain'>> {
  const emulator = kiosk.connection.emulator;
  if (!emulator) throw new Error('demo mode should run the emulator');
  const context = await options.browser.newContext({ viewport: VIEWPORTS[options.orientation], deviceScaleFactor: 1, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  const bridge = await installKioskBridge(page, backend);
  await page.addInitScript({ content: trackMedia(options.recordTracks ?? 'all') });
  if (options.mediaWatchdog) await page.addInitScript({ content: `window.__kioskTestMediaWatchdog = ${JSON.stringify(options.mediaWatchdog)};` });
  await page.goto(options.baseUrl);
  return { page, context, emulator, bridge, problems, requests };
}

/** The E2E kiosk's config.json before a test's own keys. Fast start is off unless a test asks
 *  for it: no spare sessions and no presence camera (they would add sessions the tests do not expect). */
function baseConfig(imageDataUrl: string): Record<string, unknown> {
  return {
    callMode: 'video',
    allowModeChoice: true,
    returnToAttractSeconds: 4,
    countdownWarningSeconds: 30,
    avatar: { imagePath: imageDataUrl, name: 'Ava', persona: 'A warm, concise hotel concierge.' },
    prewarm: { mode: 'off' },
    presence: { cameraEnabled: false },
  };
}

/** The last `TRACE_LINES` things main and the page did, each with its time since the kiosk opened. */
const TRACE_LINES = 80;

interface Trace {
  add(line: string): void;
  /** Add the kiosk's events and the page's console and errors; returns the unsubscribe of the events. */
  follow(kiosk: Kiosk, page: Page): () => void;
  explain(error: unknown): Error;
}

function createTrace(): Trace {
  const lines: string[] = [];
  const t0 = Date.now();
  const add = (line: string): void => {
    lines.push(`+${((Date.now() - t0) / 1000).toFixed(2)} s ${line.slice(0, 300)}`);
    if (lines.length > TRACE_LINES) lines.shift();
  };
  return {
    add,
    follow(kiosk, page) {
      page.on('console', (m) => add(`page ${m.type()}: ${m.text()}`));
      page.on('pageerror', (e) => add(`page error: ${e.message}`));
      return kiosk.events.onEvent((e) => add(`event ${describeEvent(e)}`));
    },
    explain(error) {
      const message = error instanceof Error ? error.message : String(error);
      return new Error(`${message}\n--- what main and the page did last (oldest first) ---\n${lines.join('\n')}`, { cause: error });
    },
  };
}

/** Main's log lines at info and above, into the trace (without their ISO time: the trace has its own). */
const traceLogger = (trace: Trace) => createLogger({ level: 'info', sink: (line) => trace.add(`main ${line.replace(/^\S+ /, '')}`) });

/** An event as one short line: a state change by its phases, other events by their type. */
function describeEvent(e: KioskEvent): string {
  if (e.type === 'state') return `state ${e.previous} -> ${e.state.phase}`;
  return e.type;
}

/** A fresh kiosk (its own emulator) and a page showing the built renderer, bridged to it. */
export async function openKiosk(options: KioskPageOptions): Promise<KioskPage> {
  const config = resolveConfig({ ...baseConfig(options.imageDataUrl), ...options.config }, {});
  const channels = createChannelRegistry();
  const trace = createTrace();
  const kiosk = await createKiosk({
    channels,
    config,
    logger: traceLogger(trace),
    apiKey: null,
    apiKeySource: 'none',
    emulatorKnobs: { warmupMs: { audio: 0, video: 1_500 }, endingMs: 300, ...options.knobs },
  });
  const mapEvent = options.mapEvent;
  const backend: KioskBackend = {
    dispatch: channels.dispatch,
    onEvent: mapEvent ? (listener) => kiosk.events.onEvent((e) => listener(mapEvent(e))) : kiosk.events.onEvent,
  };
  const { page, context, emulator, bridge, problems, requests } = await openPage(kiosk, backend, options);
  const stopEvents = trace.follow(kiosk, page);
  return {
    page,
    context,
    kiosk,
    channels,
    emulator,
    bridge,
    problems,
    requests,
    explain: trace.explain,
    async close() {
      stopEvents();
      bridge.dispose();
      await context.close().catch(() => undefined);
      await kiosk.shutdown();
    },
  };
}

export async function screenshot(page: Page, screen: string, orientation: Orientation): Promise<void> {
  await mkdir(SCREENS_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENS_DIR, `${screen}-${orientation}.png`), animations: 'allow' });
}

/** Screenshot the current state in both orientations (resizing the viewport), then restore it. */
export async function screenshotBoth(page: Page, screen: string, current: Orientation): Promise<void> {
  const other: Orientation = current === 'landscape' ? 'portrait' : 'landscape';
  await page.waitForTimeout(500); // the screens fade in over 450 ms
  await screenshot(page, screen, current);
  await page.setViewportSize(VIEWPORTS[other]);
  await page.waitForTimeout(150); // one layout + a frame
  await screenshot(page, screen, other);
  await page.setViewportSize(VIEWPORTS[current]);
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(fn: () => T | Promise<T>, message: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms: ${message}${last ? ` (last error: ${String(last)})` : ''}`);
}

/**
 * Waits for the kiosk to show `screen`. On a timeout the error names the screen it was on instead and the
 * text a person would read there, so a failure in CI says where the kiosk stopped, not only that it did.
 */
export async function screenIs(page: Page, screen: string, timeoutMs = 10_000): Promise<void> {
  try {
    await page.locator(`main.kiosk[data-screen="${screen}"]`).waitFor({ state: 'attached', timeout: timeoutMs });
  } catch (e) {
    const seen = await page
      .evaluate(() => {
        const main = document.querySelector('main.kiosk');
        const text = (main?.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 400);
        return { screen: main?.getAttribute('data-screen') ?? '(no main.kiosk)', text };
      })
      .catch((err: unknown) => ({ screen: '(page unreadable)', text: String(err) }));
    throw new Error(`waited ${timeoutMs} ms for the ${screen} screen; the kiosk shows ${seen.screen}: "${seen.text}"`, { cause: e });
  }
}

/** From the attract screen, the way staff open the panel: the top-left corner held 3 s, then the PIN. */
export async function unlockStaffPanel(page: Page, pin: string): Promise<void> {
  await screenIs(page, 'attract', 15_000);
  await page.mouse.move(30, 30);
  await page.mouse.down();
  await page.waitForTimeout(3_300);
  await page.mouse.up();
  await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
  for (const d of pin) await page.click(`[data-testid=pin-${d}]`);
  await page.click('[data-testid=pin-ok]');
}

// A kiosk with the staff operations registered beside it (PIN, settings file, ledger, doctor), the way
// electron/main/index.ts wires them, with the settings in a temp JSON file and fake platform hooks.

/** Chromium with extra flags (e.g. `--use-file-for-fake-audio-capture=<wav>` for a silent microphone). */
export function launchChromiumWithArgs(extraArgs: string[]): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: [...CHROMIUM_ARGS, '--use-fake-ui-for-media-stream', ...extraArgs], timeout: 30_000 });
}

/** A mono 16-bit PCM WAV: `sample(t)` in −1..1 for t in seconds. */
export function writeWav(path: string, seconds: number, sample: (t: number) => number, rate = 48_000): string {
  const n = Math.round(seconds * rate);
  const buf = Buffer.alloc(44 + n * 2);
  buf.write('RIFF', 0);
  buf.writeUInt32LE(36 + n * 2, 4);
  buf.write('WAVEfmt ', 8);
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(rate, 24);
  buf.writeUInt32LE(rate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36);
  buf.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) buf.writeInt16LE(Math.round(Math.max(-1, Math.min(1, sample(i / rate))) * 32_767), 44 + i * 2);
  writeFileSync(path, buf);
  return path;
}

export interface StaffKioskPage extends KioskPage {
  ops: StaffOps;
  dataDir: string;
  persistence: SettingsPersistence;
  platform: { calls: string[] };
}

/** Like `openKiosk`, with the staff operations attached and `file` as the initial config.json. */
export async function openStaffKiosk(
  options: Omit<KioskPageOptions, 'config'> & { file?: Record<string, unknown>; startupAttention?: AttentionItem[]; visitorStore?: VisitorFunnelStore },
): Promise<StaffKioskPage> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-e2e-staff-'));
  const persistence = jsonFilePersistence(join(dataDir, 'config.json'));
  await persistence.write({ ...baseConfig(options.imageDataUrl), ...options.file });
  const channels = createChannelRegistry();
  const trace = createTrace();
  const kiosk = await createKiosk({
    channels,
    config: resolveConfig(persistence.read(), {}, { appRoot: ROOT }),
    logger: traceLogger(trace),
    apiKey: null,
    apiKeySource: 'none',
    emulatorKnobs: { warmupMs: { audio: 0, video: 1_500 }, endingMs: 300, ...options.knobs },
    persistApiKey: async () => {},
    // As the hosts keep it: in the data folder.
    avatarVolume: openAvatarVolume({ dir: dataDir }),
    visitorStore: openVisitorFunnelStore({ dir: dataDir, timeZone: systemTimeZone(), clock: systemClock }),
    ...(options.startupAttention ? { startupAttention: options.startupAttention } : {}),
    ...(options.visitorStore ? { visitorStore: options.visitorStore } : {}),
  });
  const platform = { calls: [] as string[] };
  const ops = createStaffOps({
    kiosk,
    channels,
    dataDir,
    persistence,
    env: {},
    appRoot: ROOT,
    clock: systemClock,
    version: '0.1.0-e2e',
    logTail: () => ['12:00:01 info kiosk started (e2e)', '12:00:02 info demo mode: the embedded emulator'],
    platform: {
      getOpenAtLogin: () => false,
      setOpenAtLogin: (v) => void platform.calls.push(`login:${v}`),
      exitKiosk: () => void platform.calls.push('exit'),
      restart: () => void platform.calls.push('restart'),
    },
  });
  const { page, context, emulator, bridge, problems, requests } = await openPage(kiosk, { dispatch: channels.dispatch, onEvent: kiosk.events.onEvent }, options);
  const stopEvents = trace.follow(kiosk, page);
  return {
    page,
    context,
    kiosk,
    channels,
    emulator,
    bridge,
    problems,
    requests,
    explain: trace.explain,
    ops,
    dataDir,
    persistence,
    platform,
    async close() {
      stopEvents();
      bridge.dispose();
      ops.dispose();
      await context.close().catch(() => undefined);
      await kiosk.shutdown();
    },
  };
}

/** Companion window sizes the screens must fit without clipping (the smallest the window allows, its default, and resized wide). */
export const COMPANION_SIZES = [
  { width: 360, height: 480 },
  { width: 420, height: 640 },
  { width: 640, height: 480 },
] as const;

/** Screenshot at an exact viewport size to test/artifacts/screens/<name>.png (the viewport is left at that size). */
export async function screenshotAt(page: Page, name: string, size: { width: number; height: number }): Promise<void> {
  await mkdir(SCREENS_DIR, { recursive: true });
  await page.setViewportSize(size);
  await page.waitForTimeout(200); // layout, a frame, the carousel's and screens' short transitions
  await page.screenshot({ path: join(SCREENS_DIR, `${name}.png`), animations: 'allow' });
}

/**
 * What the current screen shows outside the viewport: every text, button and picture in `.screen`
 * (decorations such as the portrait's halo excepted) must lie inside the window, the screen must not
 * scroll, and none of them may lie under the visitor bar (the language buttons). Returns one line per
 * offender (empty when nothing is clipped or covered).
 */
export async function clippedElements(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const W = window.innerWidth, H = window.innerHeight, out = [];
    const screen = document.querySelector('.screen');
    if (!screen) return ['no .screen'];
    if (screen.scrollHeight > screen.clientHeight + 1 || screen.scrollWidth > screen.clientWidth + 1) {
      out.push('the screen overflows: ' + screen.scrollWidth + 'x' + screen.scrollHeight + ' in ' + W + 'x' + H);
    }
    const sel = 'h1, p, dt, dd, li, button, img, [role=timer], .name';
    for (const el of screen.querySelectorAll(sel)) {
      if (el.closest('[aria-hidden=true], .halo')) continue;
      // Cast neighbours may sit partly outside the carousel by design (they peek in); the selected one may not.
      if (el.closest('.card:not(.selected)')) continue;
      const r = el.getBoundingClientRect();
      const st = getComputedStyle(el);
      if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || st.display === 'none') continue;
      if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5) {
        const label = (el.getAttribute('data-testid') || el.tagName.toLowerCase()) + ' "' + (el.textContent || '').trim().slice(0, 30) + '"';
        out.push(label + ' at ' + [r.left, r.top, r.right, r.bottom].map(Math.round).join(',') + ' in ' + W + 'x' + H);
      }
    }
    // Nothing of the screen's own may lie under the visitor bar (the languages): a line there is unreadable
    // and a tap on it picks a language. Measured on the text's line boxes, not its paragraph's box.
    const bar = screen.querySelector('[data-testid=visitor-bar]');
    if (bar) {
      const b = bar.getBoundingClientRect();
      for (const el of screen.querySelectorAll(sel)) {
        if (bar.contains(el) || el.contains(bar) || el.closest('[aria-hidden=true], .halo, .card:not(.selected)')) continue;
        const range = document.createRange();
        range.selectNodeContents(el);
        const boxes = el.matches('img, button') ? [el.getBoundingClientRect()] : [...range.getClientRects()];
        const under = boxes.find((r) => r.width > 0 && r.height > 0 && r.bottom > b.top + 0.5 && r.top < b.bottom - 0.5 && r.right > b.left + 0.5 && r.left < b.right - 0.5);
        if (under) {
          const label = (el.getAttribute('data-testid') || el.tagName.toLowerCase()) + ' "' + (el.textContent || '').trim().slice(0, 30) + '"';
          out.push(label + ' under the visitor bar: ' + [under.left, under.top, under.right, under.bottom].map(Math.round).join(',') + ' vs bar from y ' + Math.round(b.top) + ' in ' + W + 'x' + H);
        }
      }
    }
    return out;
  })()`);
}

/**
 * A visibly different avatar from a source picture: drawn in the browser through a CSS filter (and a
 * mirror), returned as a JPEG data URL. The test's second and third cast members.
 */
export async function variantImage(browser: Browser, sourceDataUrl: string, options: { filter: string; mirror: boolean }): Promise<string> {
  const page = await browser.newPage();
  try {
    // A string, not a function: tsx decorates functions with helpers that do not exist in the page.
    return await page.evaluate(`(async () => {
      const img = new Image();
      img.src = ${JSON.stringify(sourceDataUrl)};
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.filter = ${JSON.stringify(options.filter)};
      if (${options.mirror}) { ctx.translate(c.width, 0); ctx.scale(-1, 1); }
      ctx.drawImage(img, 0, 0);
      return c.toDataURL('image/jpeg', 0.9);
    })()`);
  } finally {
    await page.close();
  }
}

/**
 * Like `useE2eBrowser`, with a silent fake microphone: nobody is heard, so the idle prompt comes when
 * the configured time runs out (the default fake microphone beeps, which the voice detector hears).
 */
export function useSilentE2eBrowser(): { readonly server: { url: string; close(): Promise<void> }; readonly browser: Browser; readonly portrait: string } {
  const env = {} as { server: { url: string; close(): Promise<void> }; browser: Browser; portrait: string };
  before(async () => {
    env.server = await startStaticServer();
    const wav = writeWav(join(mkdtempSync(join(tmpdir(), 'kiosk-e2e-silent-')), 'silence.wav'), 2, () => 0);
    env.browser = await launchChromiumWithArgs([`--use-file-for-fake-audio-capture=${wav}`]);
    env.portrait = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
  });
  return env;
}

/**
 * A kiosk outside its opening hours, showing the closed screen: the staff kiosk with a Berlin schedule
 * and the fleet host's opening-hours watch on a fake clock at Monday 20:00 (closed until Tuesday 09:00).
 */
export async function openClosedKiosk(options: Omit<KioskPageOptions, 'config'>): Promise<StaffKioskPage> {
  const k = await openStaffKiosk({ ...options, file: { staffPinHash: await hashPin('246813'), schedule: { timeZone: 'Europe/Berlin', weekly: { mon: ['09:00-18:00'], tue: ['09:00-18:00'] } } } });
  const fleet = startFleetHost({
    kiosk: k.kiosk,
    ledger: k.ops.ledger,
    dataDir: k.dataDir,
    version: '0.1.0-e2e',
    clock: new FakeClock(Date.parse('2026-11-23T19:00:00Z')),
    configFile: k.persistence,
    env: {},
    policy: {},
    appRoot: ROOT,
    actions: { reload: () => {}, restart: () => {}, screenshot: async () => ({ png: Buffer.alloc(0), width: 0, height: 0 }) },
  });
  await k.page.reload(); // the page reads the opening state with its config
  await screenIs(k.page, 'closed');
  const close = k.close;
  return Object.assign(k, {
    async close() {
      await fleet.close();
      await close();
    },
  });
}
