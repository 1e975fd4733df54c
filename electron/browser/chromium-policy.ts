/**
 * The Chromium / Google Chrome enterprise policy a browser-mode kiosk is locked with, and the check the
 * host makes of the one installed. `resources/chromium-policy/kiosk.json` is `kioskPolicy()` for the
 * documented port (`POLICY_EXAMPLE_PORT`), and docs/browser-mode.md shows that file
 * (test/unit/browser/chromium-policy.test.ts and test/unit/project/docs-match-code.test.ts fail when
 * they disagree). For another port:
 * `npx tsx electron/browser/chromium-policy.ts <port>` prints the policy for it.
 *
 * What the policy closes (the names are Chromium's own; test/e2e/browser-lockdown-layers.test.ts has
 * Chromium read the file and report none unknown or refused): every address but the kiosk's origin
 * (`chrome://` pages, `file://`, the web; the host's blank start page is on the origin, so no temporary
 * folder is on the allow-list), incognito and guest windows and extra profiles, DevTools, file dialogs (Ctrl+O,
 * Ctrl+S), downloads, printing, history, the task manager's End process, sign-in, sync, extensions,
 * saved passwords, pop-ups and notifications; the microphone and camera for the kiosk only. (Chromium 156
 * reports the Autofill* policies deprecated, so they are not used.)
 * What no policy closes (Ctrl+N, Ctrl+T and a few keys still open a window) the host closes:
 * input-guard.ts and window-watch.ts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The port the shipped policy file and the docs name (`KIOSK_BROWSER_PORT=8765`). */
export const POLICY_EXAMPLE_PORT = 8765;

/** What the policy blocks: every address. `*` alone leaves Chromium's own pages open (chrome://settings and
 *  chrome://version loaded under it, measured with Chromium 156), so those schemes are named too. */
export const BLOCK_EVERYTHING = ['*', 'chrome://*', 'chrome-untrusted://*', 'devtools://*', 'view-source:*'] as const;

/** The policy for a kiosk served on `origin` (`http://127.0.0.1:<port>`). */
export function kioskPolicy(origin: string): Record<string, unknown> {
  return {
    URLBlocklist: [...BLOCK_EVERYTHING],
    URLAllowlist: [origin],
    IncognitoModeAvailability: 1,
    BrowserGuestModeEnabled: false,
    BrowserAddPersonEnabled: false,
    DeveloperToolsAvailability: 2,
    AllowFileSelectionDialogs: false,
    DownloadRestrictions: 3,
    PrintingEnabled: false,
    SavingBrowserHistoryDisabled: true,
    TaskManagerEndProcessEnabled: false,
    BrowserSignin: 0,
    SyncDisabled: true,
    ExtensionInstallBlocklist: ['*'],
    PasswordManagerEnabled: false,
    DefaultPopupsSetting: 2,
    DefaultNotificationsSetting: 2,
    AudioCaptureAllowedUrls: [origin],
    VideoCaptureAllowedUrls: [origin],
  };
}

/** The policy file's text for `port` (two-space JSON and a final newline, as shipped). */
export function policyText(port: number): string {
  return `${JSON.stringify(kioskPolicy(`http://127.0.0.1:${port}`), null, 2)}\n`;
}

/** Where a browser on Linux reads its managed policy, by the browser's path: Chromium's documented
 *  folder for Chromium builds and for Google Chrome, Ubuntu's own for its `chromium-browser` package; null
 *  where we do not know it (a snap keeps its own), and then nothing is checked. */
export function managedPolicyDir(browserPath: string): string | null {
  if (browserPath.startsWith('/snap/')) return null;
  if (/google-chrome|\/opt\/google\/chrome/.test(browserPath)) return '/etc/opt/chrome/policies/managed';
  if (/chromium-browser/.test(browserPath)) return '/etc/chromium-browser/policies/managed';
  if (/chromium/.test(browserPath)) return '/etc/chromium/policies/managed';
  return null;
}

/** Files read at most, and their largest size, when the installed policy is checked. */
const MAX_POLICY_FILES = 32;
const MAX_POLICY_BYTES = 1024 * 1024;

export type InstalledPolicy =
  /** A policy blocks every address (`BLOCK_EVERYTHING`) and allows this kiosk's origin. */
  | { state: 'locked' }
  /** No policy there blocks every address (an older one with `*` alone leaves chrome:// pages open). */
  | { state: 'none' }
  /** A policy blocks every address but its allow-list does not name this origin: the page is blocked. */
  | { state: 'other-origin'; allowed: string[] };

/** What the managed policy folder `dir` holds for a kiosk on `origin` (unreadable files count as none). */
export function installedPolicy(dir: string, origin: string): InstalledPolicy {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort().slice(0, MAX_POLICY_FILES);
  } catch {
    return { state: 'none' };
  }
  const allowed: string[] = [];
  const blocked = new Set<unknown>();
  for (const name of names) {
    const file = join(dir, name);
    let policy: unknown;
    try {
      if (!statSync(file).isFile() || statSync(file).size > MAX_POLICY_BYTES) continue;
      policy = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    if (!policy || typeof policy !== 'object') continue;
    const { URLBlocklist, URLAllowlist } = policy as { URLBlocklist?: unknown; URLAllowlist?: unknown };
    if (Array.isArray(URLBlocklist)) for (const entry of URLBlocklist) blocked.add(entry);
    if (Array.isArray(URLAllowlist)) allowed.push(...URLAllowlist.filter((u): u is string => typeof u === 'string'));
  }
  if (!BLOCK_EVERYTHING.every((entry) => blocked.has(entry))) return { state: 'none' };
  return allowed.some((u) => u.replace(/\/+$/, '') === origin) ? { state: 'locked' } : { state: 'other-origin', allowed };
}

/** One line for the operator when a kiosk runs without the policy, or with one that blocks its page. */
export function policyWarning(found: InstalledPolicy, dir: string, origin: string): string | null {
  if (found.state === 'locked') return null;
  if (found.state === 'other-origin') {
    return `The browser policy in ${dir} allows ${found.allowed.join(', ') || 'no address'} but not this kiosk's ${origin}, so it blocks the kiosk's own page: set KIOSK_BROWSER_PORT to the port it names, or install the policy for this port (docs/browser-mode.md).`;
  }
  return `No browser policy in ${dir} locks this kiosk: the host closes other windows and stops the browser's shortcuts, but the browser's own lock-down (chrome:// and file:// pages, DevTools, file dialogs) needs resources/chromium-policy/kiosk.json installed there (docs/browser-mode.md).`;
}

const isEntry = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isEntry) {
  const port = Number(process.argv[2] ?? POLICY_EXAMPLE_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    process.stderr.write(`The port must be a number from 1 to 65535, not "${process.argv[2]}".\n`);
    process.exit(2);
  }
  process.stdout.write(policyText(port));
}
