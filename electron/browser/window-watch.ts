/**
 * The window watcher: over the DevTools protocol (cdp-pipe.ts), the host sees every window and tab of
 * the browser it opened and keeps the kiosk's page the only one.
 *
 *  - It puts the page's session cookie into the browser's fresh profile (the host's start page moves on
 *    to the kiosk once it has it): the secret goes over the private pipe, never on a command line, in a
 *    file or through a launch code.
 *  - The first page of the fresh browser is the kiosk's window (opened with `--app` on the start page).
 *  - In a kiosk (`lockDown`), any other window or tab (Ctrl+N, Ctrl+T, history, downloads, incognito, a
 *    DevTools window, print preview, a page opened by the kiosk's page) is closed as soon as the browser
 *    announces it, and downloads are refused (the save-page dialog never opens). A window still there
 *    `CLOSE_DEADLINE_MS` after it was closed, or a kiosk's page that shows anything but the kiosk's origin
 *    (a `chrome://` or `file://` page, an error page), crashes or is closed: the page is lost, and the
 *    keeper (open-browser.ts) closes the browser and opens a fresh one.
 *  - An app window (`lockDown` off: `npm start`'s window, not a kiosk) only gets its cookie.
 *
 * Only browser-wide commands are used (target discovery, closing a target, cookies, downloads): the
 * kiosk's policy turns DevTools off (`DeveloperToolsAvailability` 2), and Chromium then refuses to attach
 * to any page, the host's pipe included (measured with Chromium 156).
 *
 * The decisions are a pure step function (`watchStep`) on the injected clock's time, so every rule is
 * tested with exact sequences (test/unit/browser/window-watch.test.ts); `watchWindows` runs its actions.
 */
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import type { CdpConnection, CdpEvent } from './cdp-pipe.ts';

/** Windows being closed remembered at most (until the browser says they are gone). */
export const MAX_CLOSING = 256;
/** A window asked to close that is still there after this long: the browser is closed and opened again.
 *  (A window opened and closed over the pipe was gone 0.8 to 2 s after it was asked for, on two loaded
 *  cores here; a kiosk PC may be slower still.) */
export const CLOSE_DEADLINE_MS = 3_000;

/** What the browser says about one of its targets (`Target.TargetInfo`, the fields used here). */
export interface TargetInfo {
  targetId: string;
  /** `page`, `other` (a DevTools window), `browser_ui`, `service_worker`, `iframe`, … */
  type: string;
  url: string;
}

export type WatchEvent =
  | { type: 'target'; target: TargetInfo }
  | { type: 'gone'; targetId: string }
  | { type: 'crashed'; targetId: string }
  /** Time passed (the driver ticks `CLOSE_DEADLINE_MS` after each close). */
  | { type: 'tick' };

export type WatchAction =
  /** A window that is not the kiosk's: close it. `url` is what it showed. */
  | { type: 'close'; targetId: string; url: string }
  /** The kiosk's page is lost: the browser is to be closed and opened again. */
  | { type: 'lost'; why: string };

export interface WatchState {
  /** The kiosk's window, once the browser announced it. */
  readonly kioskTargetId: string | null;
  /** Windows asked to close that the browser has not yet reported gone, and since when (oldest first). */
  readonly closing: ReadonlyArray<{ readonly targetId: string; readonly url: string; readonly sinceMs: number }>;
  readonly lost: boolean;
}

export interface WatchRules {
  /** The kiosk's origin, `http://127.0.0.1:<port>`. */
  origin: string;
  /** A kiosk: close other windows, keep the page on the origin. Off for an app window. */
  lockDown: boolean;
}

export const INITIAL_WATCH_STATE: WatchState = { kioskTargetId: null, closing: [], lost: false };

/** Target types that are windows or tabs a visitor could see. */
const WINDOW_TYPES = new Set(['page', 'webview', 'app', 'background_page']);

/** Whether the kiosk's page shows something that is not the kiosk. Blank is nothing yet (a navigation
 *  starting), not a way out. */
export function leftTheKiosk(url: string, origin: string): boolean {
  if (url === '' || url === 'about:blank') return false;
  try {
    return new URL(url).origin !== origin;
  } catch {
    return true;
  }
}

/** Whether a target other than the kiosk's page is a window to close. A DevTools window is type `other`. */
export function isForeignWindow(target: TargetInfo, origin: string): boolean {
  if (WINDOW_TYPES.has(target.type)) return true;
  return target.type === 'other' && leftTheKiosk(target.url, origin);
}

/** One event at `nowMs` (the injected clock's) → the next state and what to do (pure). */
export function watchStep(state: WatchState, event: WatchEvent, nowMs: number, rules: WatchRules): { state: WatchState; actions: WatchAction[] } {
  const none = { state, actions: [] };
  if (state.lost) return none;
  const kiosk = state.kioskTargetId;
  const lose = (why: string) => ({ state: { ...state, lost: true }, actions: [{ type: 'lost', why } as const] });
  const isClosing = (targetId: string) => state.closing.some((c) => c.targetId === targetId);
  switch (event.type) {
    case 'target': {
      const { target } = event;
      if (target.targetId === kiosk) return rules.lockDown && leftTheKiosk(target.url, rules.origin) ? lose(`the kiosk's page showed ${describeUrl(target.url)}`) : none;
      if (kiosk === null && target.type === 'page') return { state: { ...state, kioskTargetId: target.targetId }, actions: [] };
      if (!rules.lockDown || isClosing(target.targetId) || !isForeignWindow(target, rules.origin)) return none;
      const closing = [...state.closing, { targetId: target.targetId, url: target.url, sinceMs: nowMs }].slice(-MAX_CLOSING);
      return { state: { ...state, closing }, actions: [{ type: 'close', targetId: target.targetId, url: target.url }] };
    }
    case 'gone':
      if (event.targetId === kiosk) return rules.lockDown ? lose("the kiosk's window was closed") : none;
      return isClosing(event.targetId) ? { state: { ...state, closing: state.closing.filter((c) => c.targetId !== event.targetId) }, actions: [] } : none;
    case 'crashed':
      return event.targetId === kiosk && rules.lockDown ? lose("the kiosk's page crashed") : none;
    case 'tick': {
      const stuck = state.closing.find((c) => nowMs - c.sinceMs >= CLOSE_DEADLINE_MS);
      return stuck ? lose(`a window (${describeUrl(stuck.url)}) did not close within ${CLOSE_DEADLINE_MS / 1000} s`) : none;
    }
  }
}

/** A URL for a log line: without its query or fragment (a launch code is one), at most 120 characters. */
export function describeUrl(url: string): string {
  return url.split(/[?#]/)[0]!.slice(0, 120);
}

/** The event, if it is one the watcher reads (`Target.targetCreated`, …); else null. */
export function watchEventOf(event: CdpEvent): WatchEvent | null {
  if (event.sessionId) return null; // events of an attached page, not the browser's
  const info = event.params.targetInfo as Partial<TargetInfo> | undefined;
  switch (event.method) {
    case 'Target.targetCreated':
    case 'Target.targetInfoChanged':
      if (!info || typeof info.targetId !== 'string' || typeof info.type !== 'string' || typeof info.url !== 'string') return null;
      return { type: 'target', target: { targetId: info.targetId, type: info.type, url: info.url } };
    case 'Target.targetDestroyed':
      return typeof event.params.targetId === 'string' ? { type: 'gone', targetId: event.params.targetId } : null;
    case 'Target.targetCrashed':
      return typeof event.params.targetId === 'string' ? { type: 'crashed', targetId: event.params.targetId } : null;
    default:
      return null;
  }
}

/** The page's session cookie, as the host sets it (server.ts). */
export interface SessionCookie {
  name: string;
  value: string;
}

export interface WindowWatchOptions extends WatchRules {
  cdp: CdpConnection;
  clock?: Clock;
  /** The cookie that lets the kiosk's page in. */
  sessionCookie: SessionCookie;
  /** The kiosk's page is lost, or the browser cannot be watched: close the browser (and open it again).
   *  `pipeClosed`: the pipe ended, which is what a browser that exits does too (its own exit then says why). */
  onLost(why: string, detail: { pipeClosed: boolean }): void;
  /** A line for the host's log (what was closed). */
  log?(line: string): void;
}

export interface WindowWatch {
  /** The kiosk's window, once the browser announced it. */
  readonly kioskTargetId: string | null;
  /** Windows closed so far. */
  readonly closedCount: number;
  stop(): void;
}

/** Watch the browser behind `cdp` (see the module's comment). */
export function watchWindows(options: WindowWatchOptions): WindowWatch {
  const { cdp, clock = systemClock, log = () => undefined } = options;
  const rules: WatchRules = { origin: options.origin, lockDown: options.lockDown };
  let state = INITIAL_WATCH_STATE;
  let closedCount = 0;
  let stopped = false;
  const ticks = new Set<TimerHandle>();

  function stop(): void {
    stopped = true;
    unsubscribe();
    for (const tick of ticks) clock.clearTimeout(tick);
    ticks.clear();
  }
  function step(event: WatchEvent): void {
    const next = watchStep(state, event, clock.now(), rules);
    state = next.state;
    for (const action of next.actions) run(action);
  }
  const lose = (why: string, pipeClosed = false) => {
    if (stopped) return;
    stop();
    options.onLost(why, { pipeClosed });
  };

  function run(action: WatchAction): void {
    if (action.type === 'lost') return lose(action.why);
    closedCount++;
    log(`Browser mode: closed a window that is not the kiosk's (${describeUrl(action.url)})`);
    // It may be gone already (closed with its window): nothing to do then. Whether it went is looked at
    // once its deadline is up.
    void cdp.send('Target.closeTarget', { targetId: action.targetId }).catch(() => undefined);
    const tick = clock.setTimeout(() => {
      ticks.delete(tick);
      if (!stopped) step({ type: 'tick' });
    }, CLOSE_DEADLINE_MS);
    ticks.add(tick);
  }

  const unsubscribe = cdp.onEvent((cdpEvent) => {
    const event = stopped ? null : watchEventOf(cdpEvent);
    if (event) step(event);
  });
  cdp.onClose((why) => lose(`the browser's DevTools pipe closed (${why})`, true));

  // Downloads refused first (Ctrl+S must find them so), the cookie, then the targets: the browser announces
  // the ones it has, then every new one.
  void (async () => {
    if (rules.lockDown) await cdp.send('Browser.setDownloadBehavior', { behavior: 'deny' });
    const { name, value } = options.sessionCookie;
    await cdp.send('Storage.setCookies', { cookies: [{ name, value, url: `${rules.origin}/`, httpOnly: true, sameSite: 'Strict' }] });
    await cdp.send('Target.setDiscoverTargets', { discover: true });
  })().catch((error: unknown) => lose(`the browser could not be watched over its DevTools pipe: ${error instanceof Error ? error.message : String(error)}`));

  return {
    get kioskTargetId() {
      return state.kioskTargetId;
    },
    get closedCount() {
      return closedCount;
    },
    stop,
  };
}
