/**
 * Which browser shows the browser mode's page, and how: Chromium or Google Chrome as an app window
 * (`--app`), full screen with `--kiosk` when the kiosk's window mode is `kiosk`, on a fresh profile.
 *
 * The page's URL carries the per-launch secret, so it is not put on the browser's command line (any
 * local user can read a process's arguments): the browser opens a small file in its own profile folder
 * (mode 0600 in a 0700 folder), which sends it on to the page; the file is removed once the page is
 * connected.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

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

/** The browser's arguments for an app window on `startUrl`. */
export function browserArgs(startUrl: string, profileDir: string, mode: WindowMode, size: { width: number; height: number }): string[] {
  return [
    `--user-data-dir=${profileDir}`,
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-background-networking',
    // The page is ours and the only one this fresh profile loads: no permission prompt on a kiosk.
    '--auto-accept-camera-and-microphone-capture',
    '--autoplay-policy=no-user-gesture-required',
    ...(mode === 'kiosk' ? ['--kiosk'] : [`--window-size=${size.width},${size.height}`]),
    `--app=${startUrl}`,
  ];
}

/** A page that sends the browser on to `pageUrl` (HTML-escaped; the URL is ours). */
export function launchPage(pageUrl: string): string {
  const escaped = pageUrl.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${escaped}"><title>Avatar Kiosk</title>\n`;
}

export interface OpenedBrowser {
  readonly child: ChildProcess;
  readonly path: string;
  /** Remove the launch file (once the page is connected). */
  forgetLaunchFile(): void;
  /** Close the browser and remove its profile. */
  close(): void;
}

export function openBrowser(options: { path: string; pageUrl: string; mode: WindowMode; size: { width: number; height: number } }): OpenedBrowser {
  const profileDir = mkdtempSync(join(tmpdir(), 'avatar-kiosk-browser-'));
  const launchFile = join(profileDir, 'launch.html');
  writeFileSync(launchFile, launchPage(options.pageUrl), { mode: 0o600 });
  const child = spawn(options.path, browserArgs(pathToFileURL(launchFile).href, profileDir, options.mode, options.size), { stdio: 'ignore' });
  child.on('error', () => undefined);
  const forget = () => rmSync(launchFile, { force: true });
  return {
    child,
    path: options.path,
    forgetLaunchFile: forget,
    close() {
      forget();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      child.once('exit', () => rmSync(profileDir, { recursive: true, force: true }));
      if (child.exitCode !== null || child.signalCode !== null) rmSync(profileDir, { recursive: true, force: true });
    },
  };
}
