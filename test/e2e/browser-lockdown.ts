/**
 * No way out of the browser-mode kiosk, tried as a visitor with a keyboard would (used by
 * browser-lockdown-keys.test.ts and browser-lockdown-keys-policy.test.ts, one run each: a file must end
 * within the E2E step's per-file time). The real host (`npm run start:browser`, window.mode kiosk) with
 * Debian's Chromium on a virtual display, keys sent through the X Test extension (xdotool), the screen's
 * windows read while each key is watched: a window may show for a moment (the input guard stops most keys
 * in the page; one that reaches the browser first, say while the page takes the focus, opens a window the
 * watcher closes), none may stay past the watcher's deadline. With the policy, the shipped file
 * (resources/chromium-policy/kiosk.json) is given to the host's process tree alone (a private mount
 * namespace: no other test's browser sees it).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { CLOSE_DEADLINE_MS } from '../../electron/browser/window-watch.ts';
import { freePort } from '../helpers/mosquitto.ts';
import { until } from '../helpers/until.ts';
import {
  browserChildren,
  CHROMIUM,
  dataDir,
  hostLog,
  isRoot,
  pageConnections,
  pressKeys,
  runEntry,
  shippedPolicy,
  startXvfb,
  typeText,
  visibleWindows,
  withChromiumPolicy,
  type Running,
} from './browser-processes.ts';

export const WAIT_MS = 90_000;
/** A key is watched until nothing new has shown for this long… */
const QUIET_MS = 800;
/** …and at most this long: a window still there then stayed (the watcher's own deadline, and a second). */
const MAX_WATCH_MS = CLOSE_DEADLINE_MS + 1_000;
/** The sampling step while watching. */
const SAMPLE_MS = 100;

/** Every key the review used, and the others Chromium binds to a window, a dialog or its menu. */
export const WAYS_OUT = [
  'ctrl+n', 'ctrl+t', 'ctrl+h', 'ctrl+o', 'ctrl+s', 'ctrl+shift+n', 'ctrl+j', 'alt+f', 'F10', 'F12', 'ctrl+shift+i', 'ctrl+p',
  'shift+Escape', 'ctrl+shift+p', 'ctrl+u', 'F7', 'F1', 'ctrl+shift+Delete', 'ctrl+shift+o', 'ctrl+shift+j', 'alt+Home', 'alt+Left',
  'ctrl+w', 'ctrl+shift+w', 'alt+F4', 'ctrl+q',
];

/** What one key left on screen: windows that appeared, how long each stayed, and any still there. */
export interface KeyOutcome {
  key: string;
  appeared: Array<{ name: string; lastedMs: number }>;
  stayed: string[];
}

/** Press `keys` in the kiosk's window (then type `text` and Return) and watch the screen until it has
 *  been as before for `QUIET_MS`, or `MAX_WATCH_MS` have passed. */
export async function tryKeys(display: string, kioskWindow: string, baseline: Set<string>, keys: string[], text?: string): Promise<KeyOutcome> {
  pressKeys(display, keys, kioskWindow);
  if (text !== undefined) {
    typeText(display, text);
    pressKeys(display, ['Return']);
  }
  const seen = new Map<string, { name: string; firstMs: number; lastMs: number }>();
  const start = Date.now();
  let extra = new Map<string, string>();
  let quietSinceMs = 0;
  for (let now = 0; now < MAX_WATCH_MS && now - quietSinceMs < QUIET_MS; now = Date.now() - start) {
    extra = visibleWindows(display, baseline);
    for (const [id, name] of extra) seen.set(id, { name, firstMs: seen.get(id)?.firstMs ?? now, lastMs: now });
    if (extra.size) quietSinceMs = now + SAMPLE_MS;
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
  }
  return {
    key: [...keys, ...(text !== undefined ? [`"${text}"`, 'Return'] : [])].join(' '),
    appeared: [...seen.values()].map((w) => ({ name: w.name, lastedMs: w.lastMs - w.firstMs + SAMPLE_MS })),
    stayed: [...extra.values()],
  };
}

/** The run: the host started (with the policy or without), every way out pressed, the screen read. */
export function describeKeysRun(withPolicy: boolean, skip: string | false): void {
  describe(`the browser-mode kiosk under real keys, ${withPolicy ? 'with the shipped browser policy' : 'without a browser policy'}`, { skip }, () => {
    let x: { display: string; stop(): void };
    let run: Running;
    let data: string;
    let port: number;
    let kioskWindow: string;
    let baseline: Set<string>;
    let browserPid: number;

    before(async () => {
      x = await startXvfb();
      port = await freePort();
      data = await dataDir({ window: { mode: 'kiosk' } });
      const env: Record<string, string> = { AVATAR_KIOSK_DATA: data, KIOSK_BROWSER: CHROMIUM, KIOSK_BROWSER_PORT: String(port), DISPLAY: x.display, ...(isRoot || withPolicy ? { KIOSK_BROWSER_NO_SANDBOX: '1' } : {}) };
      run = runEntry('electron/browser/index.ts', env, [], withPolicy ? withChromiumPolicy(shippedPolicy(port)) : []);
      await until(() => pageConnections(data) === 1 || run.child.exitCode !== null, { realTimeoutMs: WAIT_MS, message: 'the kiosk page connected' });
      assert.equal(run.child.exitCode, null, run.out());
      // The kiosk's window: the one window on screen with a name (the page's title).
      await until(() => [...visibleWindows(x.display).values()].some((n) => n !== '(no name)'), { realTimeoutMs: WAIT_MS, message: 'the kiosk window' });
      const windows = visibleWindows(x.display);
      kioskWindow = [...windows].find(([, name]) => name !== '(no name)')![0];
      baseline = new Set(windows.keys());
      browserPid = browserChildren(run.child.pid!)[0]!.pid;
    });
    after(async () => {
      if (run && run.child.exitCode === null) {
        run.child.kill('SIGTERM');
        await Promise.race([run.exited, new Promise((r) => setTimeout(r, 15_000))]);
        if (run.child.exitCode === null) run.child.kill('SIGKILL');
      }
      x?.stop();
    });

    it(withPolicy ? 'finds the policy installed: no warning' : 'says the kiosk runs without the browser policy, and where to install it', () => {
      const warning = /^No browser policy in \/etc\/chromium\/policies\/managed locks this kiosk: .* needs resources\/chromium-policy\/kiosk\.json installed there \(docs\/browser-mode\.md\)\.$/m;
      if (withPolicy) assert.doesNotMatch(run.out(), /browser policy/);
      else assert.match(run.out(), warning);
    });

    it('every key that opened a window, a dialog or the menu leaves the kiosk\'s page the only window on screen, the same page, never reloaded', async () => {
      const outcomes: KeyOutcome[] = [];
      for (const key of WAYS_OUT) outcomes.push(await tryKeys(x.display, kioskWindow, baseline, [key]));
      const transient = outcomes.filter((o) => o.appeared.length).map((o) => `${o.key}: ${o.appeared.map((w) => `${w.name} (${w.lastedMs} ms)`).join(', ')}`);
      console.log(`${withPolicy ? 'with' : 'without'} the policy, windows that appeared and went: ${transient.length ? transient.join('; ') : 'none'}`);
      assert.deepEqual(
        outcomes.filter((o) => o.stayed.length).map((o) => `${o.key}: ${o.stayed.join(', ')}`),
        [],
        'windows still on screen after a key',
      );
      assert.ok(visibleWindows(x.display).has(kioskWindow), 'the kiosk window is still there');
      assert.equal(run.child.exitCode, null, 'the host runs');
      assert.equal(pageConnections(data), 1, 'the page never left, reloaded or reconnected');
      assert.deepEqual(browserChildren(run.child.pid!).map((b) => b.pid), [browserPid], 'the same browser');
    });

    it('an address typed in a new window as fast as a key injector types (chrome://settings, chrome://version, chrome://inspect, file:///tmp/) reaches nothing', async () => {
      const outcomes: KeyOutcome[] = [];
      for (const [keys, address] of [
        [['ctrl+n', 'ctrl+l'], 'chrome://settings'],
        [['ctrl+t', 'ctrl+l'], 'chrome://version'],
        [['ctrl+shift+n', 'ctrl+l'], 'chrome://inspect'],
        [['ctrl+n', 'ctrl+l'], `file://${tmpdir()}/`],
      ] as const) {
        outcomes.push(await tryKeys(x.display, kioskWindow, baseline, [...keys], address));
      }
      assert.deepEqual(outcomes.filter((o) => o.stayed.length).map((o) => `${o.key}: ${o.stayed.join(', ')}`), []);
      assert.equal(pageConnections(data), 1, 'the page never left');
      assert.deepEqual(browserChildren(run.child.pid!).map((b) => b.pid), [browserPid], 'the same browser');
      assert.doesNotMatch(hostLog(data).join('\n'), /the kiosk's page (showed|crashed)|was closed/);
    });
  });
}
