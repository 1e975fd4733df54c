/**
 * Which browser shows the browser mode's page, and how: Chromium or Google Chrome as an app window
 * (`--app`), full screen with `--kiosk` for a kiosk, on a fresh profile; and the keeper that watches it.
 *
 * The browser opens the host's start page (no secret in it) with its DevTools protocol on a private pipe
 * (`--remote-debugging-pipe`, cdp-pipe.ts says why not a port). Over that pipe the window watcher
 * (window-watch.ts) puts the page's session cookie into the fresh profile, so no secret is ever on the
 * browser's command line (any local user can read a process's arguments) nor in a file; in a kiosk it
 * also closes every other window the browser opens and keeps the page on the kiosk.
 *
 * The keeper (`keepBrowser`): a kiosk's browser is opened again whenever it closes (Alt+F4, a crash) or
 * the watcher loses the kiosk's page, so a visitor never reaches the desktop by closing it; an app
 * window's close ends the host. A browser that dies before the page ever connected is explained in one
 * line from its own stderr (Chromium refuses to run as root without `--no-sandbox`; no display), not just
 * "could not open a window".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import { connectCdpPipe, type CdpConnection } from './cdp-pipe.ts';
import { watchWindows, type SessionCookie, type WindowWatch, type WindowWatchOptions } from './window-watch.ts';

/** Where Debian/Google Chromium and Chrome live, in the order we prefer them. */
export function browserCandidates(platform: NodeJS.Platform, env: Record<string, string | undefined>): string[] {
  if (platform === 'darwin') {
    return ['/Applications/Google Chrome.app/Contents/MacOS/Google Chrome', '/Applications/Chromium.app/Contents/MacOS/Chromium'];
  }
  if (platform === 'win32') {
    const roots = [env.PROGRAMFILES, env['PROGRAMFILES(X86)'], env.LOCALAPPDATA].filter((r): r is string => !!r);
    return roots.map((r) => join(r, 'Google', 'Chrome', 'Application', 'chrome.exe'));
  }
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/snap/bin/chromium'];
}

/** `KIOSK_BROWSER` (a path, or `none` to only print the address) wins; else the first installed candidate. */
export function findBrowser(env: Record<string, string | undefined>, candidates: string[], exists: (path: string) => boolean = existsSync): string | null {
  const chosen = env.KIOSK_BROWSER?.trim();
  if (chosen === 'none') return null;
  if (chosen) return exists(chosen) ? chosen : null;
  return candidates.find((c) => exists(c)) ?? null;
}

export type WindowMode = 'kiosk' | 'windowed' | 'companion';

/** How the browser window is opened: `kiosk` full screen (and kept open), `app` an ordinary app window. */
export type BrowserWindowKind = 'kiosk' | 'app';

/** The kind of window a configured window mode asks for. */
export function windowKindFor(mode: WindowMode): BrowserWindowKind {
  return mode === 'kiosk' ? 'kiosk' : 'app';
}

/** The environment variable that opts in to Chromium without its sandbox (root on a disposable machine). */
export const NO_SANDBOX_ENV = 'KIOSK_BROWSER_NO_SANDBOX';

/** Whether the operator opted in to `--no-sandbox` (exactly `1`). */
export function noSandboxOptIn(env: Record<string, string | undefined>): boolean {
  return env[NO_SANDBOX_ENV]?.trim() === '1';
}

/** The browser's arguments for an app window on `startUrl`, its DevTools protocol on descriptors 3 and 4. */
export function browserArgs(
  startUrl: string,
  profileDir: string,
  kind: BrowserWindowKind,
  size: { width: number; height: number },
  options: { noSandbox?: boolean } = {},
): string[] {
  return [
    `--user-data-dir=${profileDir}`,
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-background-networking',
    // The page is ours and the only one this fresh profile loads: no permission prompt on a kiosk.
    '--auto-accept-camera-and-microphone-capture',
    '--autoplay-policy=no-user-gesture-required',
    '--remote-debugging-pipe',
    ...(options.noSandbox ? ['--no-sandbox'] : []),
    ...(kind === 'kiosk' ? ['--kiosk'] : [`--window-size=${size.width},${size.height}`]),
    `--app=${startUrl}`,
  ];
}

/** The most of a browser's stderr kept (its last lines say why it stopped). */
const STDERR_KEEP_CHARS = 16_000;

export interface OpenedBrowser {
  readonly child: ChildProcess;
  readonly path: string;
  /** The browser's DevTools protocol, over its pipe. */
  readonly cdp: CdpConnection;
  /** What the browser wrote to stderr so far (the last `STDERR_KEEP_CHARS`). */
  stderr(): string;
  /** Close the browser (its helpers too) and remove its profile; settles when that is done. */
  close(): Promise<void>;
}

/** How long a browser asked to close (SIGTERM) has before it and its helpers are killed. */
export const BROWSER_CLOSE_GRACE_MS = 5_000;

export function openBrowser(options: { path: string; startUrl: string; kind: BrowserWindowKind; size: { width: number; height: number }; noSandbox?: boolean; clock?: Clock }): OpenedBrowser {
  const clock = options.clock ?? systemClock;
  // Its profile is private to this user (mkdtemp makes it 0700): it holds this run's session cookie.
  const profileDir = mkdtempSync(join(tmpdir(), 'avatar-kiosk-browser-'));
  const args = browserArgs(options.startUrl, profileDir, options.kind, options.size, { noSandbox: options.noSandbox ?? false });
  // Its own process group (POSIX), so that its helpers can be ended with it: a browser that crashes or is
  // killed leaves its renderer, GPU and network processes behind for a while, still writing its profile.
  const ownGroup = process.platform !== 'win32';
  // Descriptors 3 and 4 are the DevTools pipe: the browser reads commands on 3 and writes on 4.
  const child = spawn(options.path, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: ownGroup });
  const cdp = connectCdpPipe(child.stdio[3] as Writable, child.stdio[4] as Readable, { clock });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-STDERR_KEEP_CHARS)));
  child.on('error', (e) => (stderr += `\n${e.message}`));
  const endHelpers = () => {
    if (!ownGroup || child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // none left (ESRCH)
    }
  };
  // Never thrown from an exit handler: a profile a helper still writes to (ENOTEMPTY) must not stop the
  // host, which has a browser to open again. Retried, then left in the temporary folder.
  const removeProfile = (): Promise<void> => {
    process.removeListener('exit', atExit);
    endHelpers();
    return rm(profileDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => undefined);
  };
  // The last word on an exit that skips close() (process.exit on an error, an uncaught error): the browser
  // and its helpers end, and the profile (it holds this run's session cookie) goes. Synchronous, as an
  // exit handler must be.
  const atExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    endHelpers();
    try {
      rmSync(profileDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch {
      // left in the temporary folder; nothing more can be done while exiting
    }
  };
  process.once('exit', atExit);
  return {
    child,
    path: options.path,
    cdp,
    stderr: () => stderr,
    close() {
      if (child.exitCode !== null || child.signalCode !== null) return removeProfile();
      return new Promise<void>((done) => {
        // A browser that does not close when asked is ended with its helpers.
        const force = clock.setTimeout(endHelpers, BROWSER_CLOSE_GRACE_MS);
        child.once('exit', () => {
          clock.clearTimeout(force);
          void removeProfile().then(done);
        });
        child.kill('SIGTERM');
      });
    },
  };
}

/** One line: why a browser that never showed the page stopped, and what to do, read from its stderr. */
export function explainBrowserExit(stderr: string, env: Record<string, string | undefined>): string {
  if (/Running as root without --no-sandbox is not supported/i.test(stderr)) {
    return `Chromium refuses to run as root without its sandbox, so no window opened. Run npm start as a normal user; only on a disposable machine (a container, a test VM) may you set ${NO_SANDBOX_ENV}=1 to run it without the sandbox (docs/browser-mode.md).`;
  }
  if (/Missing X server or \$DISPLAY|cannot open display|Failed to connect to (the )?(Wayland|X) ?(display|server)/i.test(stderr) || (!env.DISPLAY && !env.WAYLAND_DISPLAY && /ozone|platform/i.test(stderr))) {
    return 'The browser found no display (no desktop session: $DISPLAY and $WAYLAND_DISPLAY are unset). Start the kiosk from a desktop session, or open the address below in a browser on this computer.';
  }
  const line = stderr
    .split('\n')
    .map((l) => l.replace(/^\[[^\]]*\]\s*/, '').trim())
    .filter((l) => l && !/^(Fontconfig|libva|dbus|Warning: )/i.test(l))
    .at(-1);
  return line ? `The browser stopped before it showed the page: ${line.slice(0, 200)}` : 'The browser stopped before it showed the page, and said nothing about why.';
}

/** A browser that exits this soon without the page connecting could not open a window. */
export const BROWSER_START_GRACE_MS = 15_000;
/** Delays before a kiosk's browser is opened again, growing while it keeps closing soon after opening. */
export const REOPEN_DELAYS_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000] as const;
/** A browser that stayed open this long resets the reopen delays. */
export const REOPEN_RESET_AFTER_MS = 60_000;

export interface BrowserKeeperOptions {
  path: string;
  kind: BrowserWindowKind;
  size: { width: number; height: number };
  noSandbox: boolean;
  /** The host's origin (`http://127.0.0.1:<port>`): the only one the kiosk's page may show. */
  origin: string;
  /** What the browser opens first: the host's start page (no secret in it; on to the kiosk with the cookie). */
  startUrl: string;
  /** The page's session cookie, put into each fresh profile over the DevTools pipe. */
  sessionCookie: SessionCookie;
  env: Record<string, string | undefined>;
  clock?: Clock;
  /** Lines for the person at the terminal. */
  say(line: string): void;
  /** The first browser could not show the page (`why` is one line); the caller prints the address instead. */
  onCannotOpen(why: string): void;
  /** An app window was closed by its user: the caller stops the host. */
  onAppWindowClosed(): void;
  /** The browser was opened (again); `count` from 1. */
  onOpened?(count: number): void;
  /** Lines for the host's log: the windows the watcher closed, why it gave a page up. */
  log?(line: string): void;
  /** The window watcher (window-watch.ts); tests of the keeper alone give a stand-in. */
  watch?: (options: WindowWatchOptions) => WindowWatch;
}

export interface BrowserKeeper {
  /** The page of the current browser connected. */
  pageConnected(): void;
  /** How many times a browser was opened. */
  readonly openings: number;
  /** Stop watching, close the browser, remove its profile; settles when that is done. */
  close(): Promise<void>;
}

/** Open the browser and keep it as its kind asks (see the module's comment). */
export function keepBrowser(options: BrowserKeeperOptions): BrowserKeeper {
  const clock = options.clock ?? systemClock;
  let current: OpenedBrowser | null = null;
  let openings = 0;
  let everConnected = false;
  let connectedThisTime = false;
  let closed = false;
  let quickCloses = 0;
  let reopenTimer: TimerHandle | null = null;

  function open(): void {
    if (closed) return;
    openings++;
    connectedThisTime = false;
    const openedAt = clock.now();
    const browser = openBrowser({ path: options.path, startUrl: options.startUrl, kind: options.kind, size: options.size, noSandbox: options.noSandbox, clock });
    current = browser;
    /** Why the watcher gave the page up (the browser is then closed and, in a kiosk, opened again). */
    let lostWhy: string | null = null;
    const watch = (options.watch ?? watchWindows)({
      cdp: browser.cdp,
      origin: options.origin,
      lockDown: options.kind === 'kiosk',
      sessionCookie: options.sessionCookie,
      clock,
      ...(options.log ? { log: options.log } : {}),
      onLost(why, { pipeClosed }) {
        if (closed || current !== browser) return;
        // A pipe that ended is most often a browser that exited (closed, crashed, refused to start): its exit
        // and its stderr say why. Anything else is the watcher's reason to replace it.
        if (!pipeClosed) lostWhy = why;
        options.log?.(`Browser mode: ${why}; the browser is closed`);
        void browser.close();
      },
    });
    options.onOpened?.(openings);
    browser.child.once('exit', () => {
      watch.stop();
      if (closed || current !== browser) return;
      void browser.close(); // its helpers and profile go; the next opening gets a fresh one
      current = null;
      const livedMs = clock.now() - openedAt;
      if (!everConnected && !connectedThisTime && livedMs < BROWSER_START_GRACE_MS) {
        // The first browser never showed the page: it cannot, here. Say why, once.
        closed = true;
        return options.onCannotOpen(lostWhy ? `The browser could not show the kiosk: ${lostWhy}.` : explainBrowserExit(browser.stderr(), options.env));
      }
      if (options.kind === 'app') {
        closed = true;
        return options.onAppWindowClosed();
      }
      quickCloses = livedMs >= REOPEN_RESET_AFTER_MS ? 0 : quickCloses + 1;
      const delayMs = REOPEN_DELAYS_MS[Math.min(Math.max(quickCloses - 1, 0), REOPEN_DELAYS_MS.length - 1)]!;
      options.say(
        lostWhy
          ? `The kiosk's page was lost (${lostWhy}): opening the browser again.`
          : `The kiosk's browser closed: opening it again (a kiosk stays on screen; staff exit it from the staff panel, or stop it with Ctrl+C).`,
      );
      reopenTimer = clock.setTimeout(() => {
        reopenTimer = null;
        open();
      }, delayMs);
    });
  }

  open();
  return {
    pageConnected() {
      everConnected = true;
      connectedThisTime = true;
    },
    get openings() {
      return openings;
    },
    close() {
      closed = true;
      if (reopenTimer !== null) clock.clearTimeout(reopenTimer);
      reopenTimer = null;
      const closing = current?.close() ?? Promise.resolve();
      current = null;
      return closing;
    },
  };
}
