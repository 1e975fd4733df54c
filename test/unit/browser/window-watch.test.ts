/**
 * The window watcher's rules, as exact sequences: the pure step (which window is the kiosk's, which are
 * closed, when the kiosk's page is lost, the close deadline on a fake clock), the reading of the
 * browser's events, and the driver against a scripted browser over the real pipe code (the commands it
 * sends, in order; what it does when the browser refuses, stays silent or goes away). The real Chromium
 * and real keys: test/e2e/browser-lockdown.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import {
  CLOSE_DEADLINE_MS,
  describeUrl,
  INITIAL_WATCH_STATE,
  isForeignWindow,
  leftTheKiosk,
  MAX_CLOSING,
  watchEventOf,
  watchStep,
  watchWindows,
  type WatchAction,
  type WatchEvent,
  type WatchRules,
  type WatchState,
} from '../../../electron/browser/window-watch.ts';
import { scriptedBrowser } from '../../helpers/cdp-browser.ts';
import { until } from '../../helpers/until.ts';

const ORIGIN = 'http://127.0.0.1:8765';
const KIOSK: WatchRules = { origin: ORIGIN, lockDown: true };
const APP: WatchRules = { origin: ORIGIN, lockDown: false };

const page = (targetId: string, url: string, type = 'page'): WatchEvent => ({ type: 'target', target: { targetId, type, url } });

/** Run events through the step from the start (`[event, atMs]`); the actions of each, and the last state. */
function run(rules: WatchRules, events: Array<[WatchEvent, number]>, from: WatchState = INITIAL_WATCH_STATE): { actions: WatchAction[][]; state: WatchState } {
  let state = from;
  const actions: WatchAction[][] = [];
  for (const [event, at] of events) {
    const next = watchStep(state, event, at, rules);
    state = next.state;
    actions.push(next.actions);
  }
  return { actions, state };
}

describe('the window watcher: its rules', () => {
  it('takes the first page as the kiosk\'s window and closes every other window or tab the browser opens, once each', () => {
    const { actions, state } = run(KIOSK, [
      [page('K', `${ORIGIN}/start`), 0],
      [page('K', `${ORIGIN}/`), 10],
      [page('N', 'chrome://newtab/'), 20], // Ctrl+N
      [page('N', 'chrome://new-tab-page-third-party/'), 30], // the same window, reported again
      [page('U', 'chrome://omnibox-popup.top-chrome/', 'browser_ui'), 30], // its omnibox: goes with its window
      [page('H', 'chrome://history/'), 40], // Ctrl+H
      [page('D', 'devtools://devtools/bundled/devtools_app.html', 'other'), 50], // F12 in a window that has DevTools
      [page('P', 'chrome://print/'), 60], // print preview
      [page('I', `${ORIGIN}/`), 70], // the kiosk's own page in a second window is still a second window
      [{ type: 'gone', targetId: 'N' }, 80],
    ]);
    assert.deepEqual(actions, [
      [],
      [],
      [{ type: 'close', targetId: 'N', url: 'chrome://newtab/' }],
      [],
      [],
      [{ type: 'close', targetId: 'H', url: 'chrome://history/' }],
      [{ type: 'close', targetId: 'D', url: 'devtools://devtools/bundled/devtools_app.html' }],
      [{ type: 'close', targetId: 'P', url: 'chrome://print/' }],
      [{ type: 'close', targetId: 'I', url: `${ORIGIN}/` }],
      [],
    ]);
    assert.deepEqual(state, {
      kioskTargetId: 'K',
      closing: [
        { targetId: 'H', url: 'chrome://history/', sinceMs: 40 },
        { targetId: 'D', url: 'devtools://devtools/bundled/devtools_app.html', sinceMs: 50 },
        { targetId: 'P', url: 'chrome://print/', sinceMs: 60 },
        { targetId: 'I', url: `${ORIGIN}/`, sinceMs: 70 },
      ],
      lost: false,
    });
  });

  it('leaves alone what is no window: the browser\'s own UI, workers, frames, tabs, the browser, a worker of the kiosk', () => {
    const { actions } = run(KIOSK, [
      [page('K', `${ORIGIN}/start`), 0],
      ...(['browser_ui', 'service_worker', 'shared_worker', 'worker', 'iframe', 'tab', 'browser'] as const).map((type, i): [WatchEvent, number] => [page(`X${i}`, 'chrome://x/', type), i]),
      [page('W', `${ORIGIN}/worker.js`, 'other'), 9],
    ]);
    assert.deepEqual(actions.flat(), []);
  });

  it('loses the kiosk\'s page when it shows another origin (chrome://, file://, an error page), crashes or is closed; then does nothing more', () => {
    for (const [event, why] of [
      [page('K', 'chrome://settings/'), "the kiosk's page showed chrome://settings/"],
      [page('K', 'file:///tmp/avatar-kiosk-browser-x/Default/'), "the kiosk's page showed file:///tmp/avatar-kiosk-browser-x/Default/"],
      [page('K', 'chrome-error://chromewebdata/'), "the kiosk's page showed chrome-error://chromewebdata/"],
      [page('K', 'http://127.0.0.1:8766/'), "the kiosk's page showed http://127.0.0.1:8766/"],
      [page('K', 'not a url'), "the kiosk's page showed not a url"],
      [{ type: 'crashed', targetId: 'K' }, "the kiosk's page crashed"],
      [{ type: 'gone', targetId: 'K' }, "the kiosk's window was closed"],
    ] as Array<[WatchEvent, string]>) {
      const { actions, state } = run(KIOSK, [
        [page('K', `${ORIGIN}/`), 0],
        [event, 5],
        [page('N', 'chrome://newtab/'), 6],
        [{ type: 'tick' }, 10_000],
      ]);
      assert.deepEqual(actions, [[], [{ type: 'lost', why }], [], []], why);
      assert.equal(state.lost, true);
    }
  });

  it('keeps the kiosk\'s page while it shows its origin or nothing yet (blank while a navigation starts)', () => {
    const { actions } = run(KIOSK, [
      [page('K', `${ORIGIN}/start`), 0],
      [page('K', ''), 1],
      [page('K', 'about:blank'), 2],
      [page('K', `${ORIGIN}/launch?code=x`), 3],
      [page('K', `${ORIGIN}/#staff`), 4],
      [{ type: 'crashed', targetId: 'N' }, 5],
      [{ type: 'gone', targetId: 'N' }, 6],
    ]);
    assert.deepEqual(actions.flat(), []);
  });

  it(`loses the kiosk's page when a window it closed is still there ${CLOSE_DEADLINE_MS / 1000} s later (never sooner)`, () => {
    const opened: Array<[WatchEvent, number]> = [
      [page('K', `${ORIGIN}/`), 0],
      [page('N', 'chrome://newtab/?q=secret'), 1_000],
    ];
    assert.deepEqual(run(KIOSK, [...opened, [{ type: 'tick' }, 1_000 + CLOSE_DEADLINE_MS - 1]]).actions.at(-1), []);
    assert.deepEqual(run(KIOSK, [...opened, [{ type: 'tick' }, 1_000 + CLOSE_DEADLINE_MS]]).actions.at(-1), [{ type: 'lost', why: 'a window (chrome://newtab/) did not close within 3 s' }]);
    assert.deepEqual(run(KIOSK, [...opened, [{ type: 'gone', targetId: 'N' }, 1_500], [{ type: 'tick' }, 9_000]]).actions.at(-1), []);
  });

  it(`remembers at most ${MAX_CLOSING} windows being closed`, () => {
    const events: Array<[WatchEvent, number]> = [[page('K', `${ORIGIN}/`), 0]];
    for (let i = 0; i < MAX_CLOSING + 44; i++) events.push([page(`N${i}`, 'chrome://newtab/'), 1]);
    const { state } = run(KIOSK, events);
    assert.equal(state.closing.length, MAX_CLOSING);
    assert.equal(state.closing[0]!.targetId, 'N44');
  });

  it('an app window (not a kiosk): takes its page and closes nothing, loses nothing', () => {
    const { actions, state } = run(APP, [
      [page('K', `${ORIGIN}/start`), 0],
      [page('N', 'chrome://newtab/'), 1],
      [page('D', 'devtools://devtools/bundled/devtools_app.html', 'other'), 2],
      [page('K', 'chrome://settings/'), 3],
      [{ type: 'crashed', targetId: 'K' }, 4],
      [{ type: 'gone', targetId: 'K' }, 5],
      [{ type: 'tick' }, 10_000],
    ]);
    assert.deepEqual(actions.flat(), []);
    assert.deepEqual(state, { kioskTargetId: 'K', closing: [], lost: false });
  });

  it('helpers: what counts as leaving the kiosk, as a foreign window, and a URL for the log without its query', () => {
    assert.deepEqual(
      ['', 'about:blank', `${ORIGIN}/`, `${ORIGIN}`, 'http://127.0.0.1:8765.evil/', 'http://localhost:8765/', 'file:///tmp/', 'chrome://version/', '%%'].map((u) => leftTheKiosk(u, ORIGIN)),
      [false, false, false, false, true, true, true, true, true],
    );
    assert.deepEqual(
      [['page', `${ORIGIN}/`], ['webview', 'x:'], ['app', 'x:'], ['background_page', 'x:'], ['other', 'devtools://devtools/'], ['other', `${ORIGIN}/w.js`], ['browser_ui', 'chrome://x/'], ['service_worker', 'https://e/']].map(([type, url]) => isForeignWindow({ targetId: 't', type: type!, url: url! }, ORIGIN)),
      [true, true, true, true, true, false, false, false],
    );
    assert.equal(describeUrl(`${ORIGIN}/launch?code=SECRET#x`), `${ORIGIN}/launch`);
    assert.equal(describeUrl(`chrome://${'x'.repeat(300)}`).length, 120);
  });

  it('reads the browser\'s target events, and nothing else (a page\'s own events, malformed ones)', () => {
    const info = { targetId: 'T', type: 'page', url: 'chrome://newtab/', title: 'New Tab', attached: false };
    assert.deepEqual(
      [
        { method: 'Target.targetCreated', params: { targetInfo: info } },
        { method: 'Target.targetInfoChanged', params: { targetInfo: info } },
        { method: 'Target.targetDestroyed', params: { targetId: 'T' } },
        { method: 'Target.targetCrashed', params: { targetId: 'T', status: 'crashed', errorCode: 1 } },
        { method: 'Target.targetCreated', params: { targetInfo: info }, sessionId: 'S' },
        { method: 'Target.targetCreated', params: { targetInfo: { targetId: 'T', type: 'page' } } },
        { method: 'Target.targetDestroyed', params: {} },
        { method: 'Page.frameNavigated', params: {} },
      ].map((e) => watchEventOf(e)),
      [
        { type: 'target', target: { targetId: 'T', type: 'page', url: 'chrome://newtab/' } },
        { type: 'target', target: { targetId: 'T', type: 'page', url: 'chrome://newtab/' } },
        { type: 'gone', targetId: 'T' },
        { type: 'crashed', targetId: 'T' },
        null,
        null,
        null,
        null,
      ],
    );
  });
});

describe('the window watcher: driving the browser', () => {
  const COOKIE = { name: 'avatar-kiosk-8765', value: 'session-value' };

  function watch(lockDown: boolean, setUp: (b: ReturnType<typeof scriptedBrowser>) => void = () => undefined) {
    const clock = new FakeClock();
    const browser = scriptedBrowser({ clock });
    setUp(browser);
    const lost: string[] = [];
    const log: string[] = [];
    const watcher = watchWindows({ cdp: browser.cdp, origin: ORIGIN, lockDown, sessionCookie: COOKIE, clock, onLost: (why, { pipeClosed }) => void lost.push(pipeClosed ? `${why} [the pipe]` : why), log: (line) => void log.push(line) });
    const created = (targetId: string, url: string, type = 'page') => browser.emit('Target.targetCreated', { targetInfo: { targetId, type, url, title: '', attached: false } });
    return { clock, browser, lost, log, watcher, created };
  }

  it('kiosk: refuses downloads, puts the session cookie in, discovers targets, then closes what is not the kiosk\'s window', async () => {
    const { browser, lost, log, watcher, created, clock } = watch(true);
    await until(() => browser.sent.length === 3, { message: 'set up' });
    created('K', `${ORIGIN}/start`);
    created('N', 'chrome://newtab/');
    await until(() => browser.sent.length === 4, { message: 'the close' });
    assert.deepEqual(
      browser.sent.map(({ method, params }) => ({ method, params })),
      [
        { method: 'Browser.setDownloadBehavior', params: { behavior: 'deny' } },
        { method: 'Storage.setCookies', params: { cookies: [{ name: 'avatar-kiosk-8765', value: 'session-value', url: `${ORIGIN}/`, httpOnly: true, sameSite: 'Strict' }] } },
        { method: 'Target.setDiscoverTargets', params: { discover: true } },
        { method: 'Target.closeTarget', params: { targetId: 'N' } },
      ],
    );
    assert.deepEqual(log, ["Browser mode: closed a window that is not the kiosk's (chrome://newtab/)"]);
    assert.equal(watcher.kioskTargetId, 'K');
    assert.equal(watcher.closedCount, 1);
    browser.emit('Target.targetDestroyed', { targetId: 'N' });
    await until(() => clock.pendingCount === 1, { message: 'the deadline timer' });
    await clock.advance(CLOSE_DEADLINE_MS);
    assert.deepEqual(lost, [], 'it went in time');
    watcher.stop();
    assert.equal(clock.pendingCount, 0);
  });

  it('kiosk: a window that stays after it was closed loses the page once, at its deadline; nothing is done after', async () => {
    const { browser, lost, created, clock } = watch(true, (b) => b.answer('Target.closeTarget', { error: 'No target with given id found' }));
    await until(() => browser.sent.length === 3, { message: 'set up' });
    created('K', `${ORIGIN}/`);
    created('T', 'chrome://task-manager/');
    await until(() => clock.pendingCount === 1, { message: 'the deadline timer' });
    await clock.advance(CLOSE_DEADLINE_MS - 1);
    assert.deepEqual(lost, []);
    await clock.advance(1);
    assert.deepEqual(lost, ['a window (chrome://task-manager/) did not close within 3 s']);
    created('N', 'chrome://newtab/');
    browser.hangUp();
    await until(() => browser.cdp.closed, { message: 'the pipe closed' });
    assert.deepEqual(lost, ['a window (chrome://task-manager/) did not close within 3 s']);
    assert.equal(browser.sent.filter((c) => c.method === 'Target.closeTarget').length, 1);
  });

  it('kiosk: the kiosk\'s page leaving the origin is lost at once', async () => {
    const { browser, lost, created } = watch(true);
    await until(() => browser.sent.length === 3, { message: 'set up' });
    created('K', `${ORIGIN}/`);
    browser.emit('Target.targetInfoChanged', { targetInfo: { targetId: 'K', type: 'page', url: 'file:///etc/', title: '', attached: false } });
    await until(() => lost.length === 1, { message: 'lost' });
    assert.deepEqual(lost, ["the kiosk's page showed file:///etc/"]);
  });

  it('app window: the cookie and discovery only; other windows stay', async () => {
    const { browser, lost, created } = watch(false);
    await until(() => browser.sent.length === 2, { message: 'set up' });
    created('K', `${ORIGIN}/start`);
    created('N', 'chrome://newtab/');
    await browser.cdp.send('Browser.getVersion'); // answered after the events before it were read
    assert.deepEqual(browser.sent.map((c) => c.method), ['Storage.setCookies', 'Target.setDiscoverTargets', 'Browser.getVersion']);
    assert.deepEqual(lost, []);
  });

  it('a browser that refuses to be watched, or whose pipe closes, loses the page with the reason, once', async () => {
    const refused = watch(true, (b) => b.answer('Target.setDiscoverTargets', { error: 'Not allowed' }));
    await until(() => refused.lost.length === 1, { message: 'lost' });
    assert.deepEqual(refused.lost, ['the browser could not be watched over its DevTools pipe: Target.setDiscoverTargets: Not allowed']);

    const gone = watch(true);
    await until(() => gone.browser.sent.length === 3, { message: 'set up' });
    gone.browser.hangUp();
    await until(() => gone.lost.length === 1, { message: 'lost' });
    assert.deepEqual(gone.lost, ["the browser's DevTools pipe closed (the browser closed it) [the pipe]"]);
  });

  it('stopped, it reads no more events and says nothing', async () => {
    const { browser, lost, watcher, created } = watch(true);
    await until(() => browser.sent.length === 3, { message: 'set up' });
    watcher.stop();
    created('K', `${ORIGIN}/`);
    created('N', 'chrome://newtab/');
    await browser.cdp.send('Browser.getVersion'); // answered after the events before it were read
    browser.hangUp();
    await until(() => browser.cdp.closed, { message: 'the pipe closed' });
    assert.deepEqual(browser.sent.map((c) => c.method).slice(3), ['Browser.getVersion']);
    assert.deepEqual(lost, []);
  });
});
