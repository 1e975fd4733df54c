/**
 * The browser keeper's decisions, with a stand-in browser (a tiny script that exits when told, so a test
 * decides when "the window closes") and a fake clock: a kiosk's browser is opened again after 0.5 s, then
 * after longer pauses while it keeps closing at once, back to 0.5 s after one that stayed open; an app
 * window's close stops; a browser that never showed the page is explained once and not retried. The real
 * Chromium runs in test/e2e/browser-start.test.ts.
 * A crashed browser leaves helpers that still write its profile (Chromium's renderer and network
 * processes outlive a killed browser process): the keeper ends them, removes the profile without
 * stopping the host, and opens the browser again.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { BROWSER_CLOSE_GRACE_MS, keepBrowser, REOPEN_DELAYS_MS, REOPEN_RESET_AFTER_MS, type BrowserKeeper } from '../../../electron/browser/open-browser.ts';
import type { WindowWatchOptions } from '../../../electron/browser/window-watch.ts';
import { until } from '../../helpers/until.ts';

/** A "browser" that writes to stderr and waits until the file `quit` appears in the folder it was told about. */
function standInBrowser(): { path: string; quit(): void; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-keeper-'));
  const path = join(dir, 'browser.sh');
  writeFileSync(path, `#!/bin/sh\necho "stand-in browser started" >&2\nwhile [ ! -e "${dir}/quit" ]; do sleep 0.02; done\nrm -f "${dir}/quit"\necho "[1:1:ERROR:x.cc:1] It was closed." >&2\n`);
  chmodSync(path, 0o755);
  return { path, dir, quit: () => writeFileSync(join(dir, 'quit'), '') };
}

function keep(kind: 'kiosk' | 'app', browser: { path: string }, clock: FakeClock) {
  const said: string[] = [];
  const events: string[] = [];
  /** What each opening's watcher was given, and whether it was stopped. */
  const watches: Array<{ options: WindowWatchOptions; stopped: boolean }> = [];
  const keeper: BrowserKeeper = keepBrowser({
    path: browser.path,
    kind,
    size: { width: 800, height: 600 },
    noSandbox: false,
    env: { DISPLAY: ':0' },
    clock,
    origin: 'http://127.0.0.1:1',
    startUrl: 'http://127.0.0.1:1/start',
    sessionCookie: { name: 'avatar-kiosk-1', value: 'session' },
    watch(options) {
      const watch = { options, stopped: false };
      watches.push(watch);
      return { kioskTargetId: null, closedCount: 0, stop: () => void (watch.stopped = true) };
    },
    say: (line) => void said.push(line),
    onCannotOpen: (why) => void events.push(`cannot open: ${why}`),
    onAppWindowClosed: () => void events.push('app window closed'),
    onOpened: (n) => void events.push(`opened ${n}`),
  });
  return { keeper, said, events, watches };
}

describe('the browser keeper', () => {
  it('kiosk: reopens after 0.5 s, with longer pauses while the browser keeps closing at once, and from 0.5 s again after one that stayed open', async () => {
    const clock = new FakeClock();
    const browser = standInBrowser();
    const { keeper, said, events } = keep('kiosk', browser, clock);
    try {
      keeper.pageConnected();
      const delays: number[] = [];
      for (let i = 0; i < 4; i++) {
        browser.quit();
        await until(() => clock.pendingCount === 1, { realTimeoutMs: 10_000, message: `reopen ${i + 1} scheduled` });
        delays.push(...clock.pendingDelays());
        await clock.advance(clock.pendingDelays()[0]!);
        await until(() => events.includes(`opened ${i + 2}`), { realTimeoutMs: 10_000, message: `opened ${i + 2}` });
      }
      assert.deepEqual(delays, REOPEN_DELAYS_MS.slice(0, 4));
      // One that stays open a minute: the next close is met after 0.5 s again.
      await clock.advance(REOPEN_RESET_AFTER_MS);
      browser.quit();
      await until(() => clock.pendingCount === 1, { realTimeoutMs: 10_000, message: 'reopen scheduled' });
      assert.deepEqual(clock.pendingDelays(), [REOPEN_DELAYS_MS[0]]);
      assert.ok(said.every((l) => /^The kiosk's browser closed: opening it again/.test(l)) && said.length === 5);
      assert.equal(events.filter((e) => !e.startsWith('opened')).length, 0, 'never stopped');
    } finally {
      keeper.close();
    }
    assert.equal(clock.pendingCount, 0, 'close leaves no timer');
  });

  it('app window: its close is reported once, and it is not reopened', async () => {
    const clock = new FakeClock();
    const browser = standInBrowser();
    const { keeper, events } = keep('app', browser, clock);
    keeper.pageConnected();
    browser.quit();
    await until(() => events.includes('app window closed'), { realTimeoutMs: 10_000 });
    assert.deepEqual(events, ['opened 1', 'app window closed']);
    assert.equal(clock.pendingCount, 0);
    keeper.close();
  });

  it('a browser that never showed the page: one line from its stderr, and no retry', async () => {
    const clock = new FakeClock();
    const browser = standInBrowser();
    const { keeper, events } = keep('kiosk', browser, clock);
    browser.quit();
    await until(() => events.length === 2, { realTimeoutMs: 10_000 });
    assert.deepEqual(events, ['opened 1', 'cannot open: The browser stopped before it showed the page: It was closed.']);
    assert.equal(clock.pendingCount, 0);
    keeper.close();
  });

  it('kiosk: the watcher losing the page closes the browser and opens a fresh one, saying why; each opening gets its own watcher', async () => {
    const clock = new FakeClock();
    const browser = standInBrowser();
    const { keeper, said, events, watches } = keep('kiosk', browser, clock);
    try {
      assert.deepEqual(
        watches.map((w) => ({ origin: w.options.origin, lockDown: w.options.lockDown, cookie: w.options.sessionCookie })),
        [{ origin: 'http://127.0.0.1:1', lockDown: true, cookie: { name: 'avatar-kiosk-1', value: 'session' } }],
      );
      keeper.pageConnected();
      watches[0]!.options.onLost("the kiosk's window was closed", { pipeClosed: false });
      await until(() => clock.pendingCount >= 1 && watches[0]!.stopped, { realTimeoutMs: 10_000, message: 'the browser closed' });
      assert.deepEqual(said, ["The kiosk's page was lost (the kiosk's window was closed): opening the browser again."]);
      await clock.advance(REOPEN_DELAYS_MS[0]);
      await until(() => events.includes('opened 2'), { realTimeoutMs: 10_000, message: 'opened again' });
      assert.equal(watches.length, 2);
      assert.equal(watches[1]!.stopped, false);
      // A late word from the first watcher changes nothing.
      watches[0]!.options.onLost('late', { pipeClosed: false });
      assert.deepEqual(events, ['opened 1', 'opened 2']);
    } finally {
      await keeper.close();
    }
  });

  it('the watcher losing the page before it ever showed: the reason is the one line, and no retry', async () => {
    const clock = new FakeClock();
    const browser = standInBrowser();
    const { keeper, events, watches } = keep('kiosk', browser, clock);
    watches[0]!.options.onLost("the kiosk's page showed chrome-error://chromewebdata/", { pipeClosed: false });
    await until(() => events.length === 2, { realTimeoutMs: 10_000 });
    assert.deepEqual(events, [
      'opened 1',
      "cannot open: The browser could not show the kiosk: the kiosk's page showed chrome-error://chromewebdata/.",
    ]);
    assert.equal(clock.pendingCount, 0);
    await keeper.close();
  });

  it('a pipe that ended (what a browser that exits does) leaves the reason to the browser\'s own exit', async () => {
    const clock = new FakeClock();
    const browser = standInBrowser();
    const { keeper, said, events, watches } = keep('kiosk', browser, clock);
    try {
      keeper.pageConnected();
      watches[0]!.options.onLost("the browser's DevTools pipe closed (the browser closed it)", { pipeClosed: true });
      await until(() => clock.pendingCount >= 1 && watches[0]!.stopped, { realTimeoutMs: 10_000, message: 'the browser closed' });
      assert.deepEqual(said, ["The kiosk's browser closed: opening it again (a kiosk stays on screen; staff exit it from the staff panel, or stop it with Ctrl+C)."]);
      assert.deepEqual(events, ['opened 1']);
    } finally {
      await keeper.close();
    }
  });

  it('an app window is watched without lock-down (it only gets its cookie)', async () => {
    const clock = new FakeClock();
    const browser = standInBrowser();
    const { keeper, watches } = keep('app', browser, clock);
    assert.equal(watches[0]!.options.lockDown, false);
    await keeper.close();
    assert.equal(watches[0]!.stopped, true);
  });

  it('a killed browser whose helper keeps writing its profile: the helper is ended, the profile goes, the host carries on and opens it again', { skip: existsSync('/proc/self/stat') ? false : 'reads process states from /proc (Linux only)' }, async () => {
    // The stand-in starts a helper that fills <profile>/Cache as fast as it can (as Chromium's renderer and
    // network processes go on for a while after the browser process dies), and says both process ids.
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-keeper-'));
    const path = join(dir, 'browser.sh');
    writeFileSync(
      path,
      `#!/bin/sh
profile=""
for a in "$@"; do case "$a" in --user-data-dir=*) profile="\${a#--user-data-dir=}";; esac; done
mkdir -p "$profile/Cache"
( i=0; while :; do i=$((i+1)); : > "$profile/Cache/f$i"; done ) &
echo "$$ $! $profile" >> "${dir}/pids"
while :; do sleep 1; done
`,
    );
    chmodSync(path, 0o755);
    const clock = new FakeClock();
    const { keeper, events } = keep('kiosk', { path }, clock);
    // Whole lines only: the file may be read between the stand-in creating it and writing its line.
    const started = () =>
      existsSync(join(dir, 'pids'))
        ? readFileSync(join(dir, 'pids'), 'utf8')
            .split('\n')
            .map((l) => l.split(' '))
            .filter((fields) => fields.length === 3)
        : [];
    // Running, not a zombie waiting for whichever init adopted it to reap it.
    const alive = (pid: string) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
      } catch {
        return false;
      }
    };
    try {
      keeper.pageConnected();
      await until(() => started().length === 1, { realTimeoutMs: 10_000, message: 'the stand-in started' });
      const [browserPid, helperPid, profile] = started()[0]!;
      assert.ok(alive(helperPid!), 'the helper runs');
      process.kill(Number(browserPid), 'SIGKILL'); // the browser crashes; its helper goes on
      await until(() => clock.pendingCount === 1, { realTimeoutMs: 10_000, message: 'reopen scheduled' });
      await until(() => !alive(helperPid!), { realTimeoutMs: 10_000, message: 'the helper was ended' });
      await until(() => !existsSync(profile!), { realTimeoutMs: 10_000, message: 'the profile was removed' });
      await clock.advance(clock.pendingDelays()[0]!);
      await until(() => events.includes('opened 2') && started().length === 2, { realTimeoutMs: 10_000, message: 'opened again' });
      assert.deepEqual(events, ['opened 1', 'opened 2']);
    } finally {
      await keeper.close();
    }
    // Once close has settled, the second browser's helper has ended and its profile is gone.
    const [, secondHelper, secondProfile] = started()[1] ?? [];
    try {
      assert.ok(secondHelper && secondProfile);
      await until(() => !alive(secondHelper), { realTimeoutMs: 1_000, message: 'the second helper ended with close' });
      assert.equal(existsSync(secondProfile), false, 'the second profile was removed');
    } finally {
      // Whatever the code under test did, no stand-in outlives the test (it holds this process's pipe).
      for (const [, helper] of started()) if (alive(helper!)) process.kill(Number(helper), 'SIGKILL');
    }
  });

  it('a browser that ignores the request to close is ended with its helpers after the grace time, and close then settles', { skip: existsSync('/proc/self/stat') ? false : 'reads process states from /proc (Linux only)' }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-keeper-'));
    const path = join(dir, 'browser.sh');
    // Ignores SIGTERM, as a hung browser would; says its process id once it has set that up.
    writeFileSync(path, `#!/bin/sh\ntrap '' TERM\necho $$ > "${dir}/pid.tmp" && mv "${dir}/pid.tmp" "${dir}/pid"\nwhile :; do sleep 0.05; done\n`);
    chmodSync(path, 0o755);
    const clock = new FakeClock();
    const { keeper } = keep('kiosk', { path }, clock);
    keeper.pageConnected();
    await until(() => existsSync(join(dir, 'pid')), { realTimeoutMs: 10_000, message: 'the stand-in started' });
    const pid = readFileSync(join(dir, 'pid'), 'utf8').trim();
    let settled = false;
    const closing = keeper.close().then(() => void (settled = true));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(settled, false, 'still waiting: the browser ignored SIGTERM');
    assert.deepEqual(clock.pendingDelays(), [BROWSER_CLOSE_GRACE_MS]);
    await clock.advance(BROWSER_CLOSE_GRACE_MS);
    await closing;
    const running = () => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat[stat.lastIndexOf(')') + 2] !== 'Z';
      } catch {
        return false;
      }
    };
    assert.equal(running(), false, 'the browser was killed');
  });
});
