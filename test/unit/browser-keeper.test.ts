/**
 * The browser keeper's decisions, with a stand-in browser (a tiny script that exits when told, so a test
 * decides when "the window closes") and a fake clock: a kiosk's browser is opened again after 0.5 s, then
 * after longer pauses while it keeps closing at once, back to 0.5 s after one that stayed open; an app
 * window's close stops; a browser that never showed the page is explained once and not retried. The real
 * Chromium runs in test/e2e/browser-start.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../electron/core/clock.ts';
import { keepBrowser, REOPEN_DELAYS_MS, REOPEN_RESET_AFTER_MS, type BrowserKeeper } from '../../electron/browser/open-browser.ts';
import { until } from '../helpers/until.ts';

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
  const keeper: BrowserKeeper = keepBrowser({
    path: browser.path,
    kind,
    size: { width: 800, height: 600 },
    noSandbox: false,
    env: { DISPLAY: ':0' },
    clock,
    launchUrl: () => 'http://127.0.0.1:1/launch?code=x',
    say: (line) => void said.push(line),
    onCannotOpen: (why) => void events.push(`cannot open: ${why}`),
    onAppWindowClosed: () => void events.push('app window closed'),
    onOpened: (n) => void events.push(`opened ${n}`),
  });
  return { keeper, said, events };
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
});
