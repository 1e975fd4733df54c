/**
 * The browser mode: the kiosk in a browser, without Electron (kiosk-host.ts), shown in Chromium or Chrome
 * when one is installed (open-browser.ts), else a one-time address is printed.
 *
 * Two ways in: `npm run start:browser` (this file run directly) honours `window.mode`: `kiosk` opens the
 * browser full screen and opens it again whenever it closes, so only staff (the panel's Exit), a signal or
 * Ctrl+C stop it; other modes open an app window whose close stops the host. `npm start`'s fallback
 * (start.ts calls `runBrowserMode({ fallback: true })`) always opens an app window and says it is not a
 * locked kiosk: a developer trying the app must not get a full-screen window they cannot leave.
 *
 * Options: `--demo-devices` (or KIOSK_DEMO_DEVICES=1): demo mode only, the page gets a synthetic
 * microphone and camera. Environment: AVATAR_KIOSK_DATA (the data folder), KIOSK_BROWSER_PORT (default: a
 * free port), KIOSK_BROWSER (a browser's path, or `none`), KIOSK_BROWSER_NO_SANDBOX=1 (root on a
 * disposable machine), KIOSK_LOG_LEVEL=debug, AVATAR_API_KEY and the app's other overrides.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { logLevelFromEnv } from '../core/log.ts';
import { DEMO_DEVICES_FLAG, demoDevicesAsked } from '../kiosk/demo-devices.ts';
import { healthLine } from '../kiosk/service-health.ts';
import { dataLockedLine, lockDataFolder } from '../operations/data-lock.ts';
import { createMainLog } from '../operations/log-file.ts';
import { installedPolicy, managedPolicyDir, policyWarning } from './chromium-policy.ts';
import { dataDirFrom, startBrowserKiosk, type BrowserKiosk } from './kiosk-host.ts';
import { browserCandidates, findBrowser, keepBrowser, noSandboxOptIn, NO_SANDBOX_ENV, windowKindFor, type BrowserKeeper } from './open-browser.ts';
import { LAUNCH_CODE_TTL_MS } from './server.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

export interface BrowserModeOptions {
  /** Started by `npm start` because Electron is missing: an app window, never a locked kiosk. */
  fallback?: boolean;
  argv?: string[];
  env?: Record<string, string | undefined>;
  say?: (line: string) => void;
}

/** Run the browser mode until staff, a signal or (app window) its close stops it; exits the process. */
export async function runBrowserMode(options: BrowserModeOptions = {}): Promise<void> {
  const env = options.env ?? process.env;
  const argv = options.argv ?? process.argv.slice(2);
  const say = options.say ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const dataDir = dataDirFrom(env);
  // Before anything is written there (the log included): a second kiosk on this folder stops here.
  const lock = lockDataFolder(dataDir);
  if (!lock.ok) {
    say(dataLockedLine(dataDir, lock.holder));
    process.exit(1);
  }
  const rendererDir = join(ROOT, 'out', 'renderer');
  const mainLog = createMainLog({ dir: join(dataDir, 'logs'), level: logLevelFromEnv(env), scope: 'browser', console: false });
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const port = Number.parseInt(env.KIOSK_BROWSER_PORT ?? '0', 10);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    say(`KIOSK_BROWSER_PORT must be a port number (0 to 65535), not "${env.KIOSK_BROWSER_PORT}".`);
    process.exit(2);
  }
  const demoDevices = demoDevicesAsked(argv, env);

  let kiosk: BrowserKiosk | null = null;
  let keeper: BrowserKeeper | null = null;
  let stopping = false;
  const stop = async (why: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    say(why);
    // The browser closes while the kiosk ends its sessions; both are waited for, so no window and no
    // temporary profile (it holds this run's session cookie) outlives the host.
    const browserClosed = keeper?.close();
    await kiosk?.close().catch(() => undefined);
    await browserClosed;
    process.exit(code);
  };

  kiosk = await startBrowserKiosk({
    dataDir,
    env,
    appRoot: ROOT,
    rendererDir,
    logger: mainLog.logger,
    version,
    port,
    demoDevices,
    logTail: () => mainLog.tail(),
    onPageConnected: () => keeper?.pageConnected(),
    onQuit: () => void stop('Staff exited the kiosk.'),
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop('Stopped.'));
  const { connection, events } = kiosk.kiosk;

  if (demoDevices && connection.mode !== 'demo') {
    await stop(`${DEMO_DEVICES_FLAG} is for demo mode only, and a service key or gateway is configured: a real call always uses real devices. Start without ${DEMO_DEVICES_FLAG}.`, 2);
    return;
  }
  // Not "connected" before the service has answered: the check (nothing created, nothing billed) says it,
  // and every later change is said too (it went away, it came back).
  const what =
    connection.mode === 'demo'
      ? `demo mode: the built-in emulator, no key needed${demoDevices ? '; a synthetic microphone and camera' : ''}`
      : connection.mode === 'gateway'
        ? 'the service through a gateway'
        : 'the real service';
  say(`Avatar Kiosk is running (${what}).`);
  let lastService = '';
  const sayService = (line: string) => {
    if (line === lastService || connection.mode === 'demo') return;
    lastService = line;
    say(line);
  };
  events.onEvent((event) => {
    if (event.type === 'service') sayService(healthLine(event.service));
  });
  sayService(healthLine(kiosk.kiosk.health.current));
  if (kiosk.configError) {
    say(`config.json (${join(dataDir, 'config.json')}) was not used: ${kiosk.configError.message} The kiosk runs on safe defaults and first-run setup stays closed: fix the file (or move it away to start afresh) and restart.`);
  }
  if (kiosk.unknownConfigKeys.length) {
    say(`Settings this version does not know in config.json (misspelt, or from a newer version): ${kiosk.unknownConfigKeys.slice(0, 10).join(', ')}. They are ignored and kept in the file.`);
  }
  // One line per setting not used, named where it came from (config.json or the variable): the rest applies.
  for (const problem of kiosk.configProblems) say(`Setting not used: ${problem.line}. ${problem.message}`);

  // A machine without a microphone or camera (a VM, a remote desktop): say how to see a call anyway.
  let hinted = false;
  events.onEvent((event) => {
    if (hinted || demoDevices || connection.mode !== 'demo' || event.type !== 'state') return;
    if (event.state.phase === 'failed' && event.state.error.code === 'media_unavailable') {
      hinted = true;
      say(`The demo call found no usable microphone or camera. To see a whole call without them, stop (Ctrl+C) and run: npm start -- ${DEMO_DEVICES_FLAG}`);
    }
  });

  // A printed address is good once and for a minute (a journal or a terminal's scroll-back keeps it): a
  // person at a terminal asks for a new one with Enter.
  const askable = process.stdin.isTTY === true;
  const newAddressLine = () =>
    `Open this address in Chromium or Chrome on this computer (it works once, within ${LAUNCH_CODE_TTL_MS / 1000} seconds; keep it private${askable ? '; press Enter here for a new one' : ''}):\n  ${kiosk!.host.launchUrl()}`;
  let listening = false;
  const printAddress = (why: string) => {
    say(`${why}\n${newAddressLine()}`);
    if (!askable || listening) return;
    listening = true;
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (text: string) => {
      if (text.includes('\n') && !stopping) say(newAddressLine());
    });
  };
  const path = findBrowser(env, browserCandidates(process.platform, env));
  if (!path) {
    printAddress(env.KIOSK_BROWSER?.trim() === 'none' ? 'KIOSK_BROWSER=none: no browser is opened.' : 'No Chromium or Chrome was found (set KIOSK_BROWSER to a browser\'s path).');
    say(`Stop with Ctrl+C. Log: ${mainLog.path}`);
    return;
  }
  const kind = options.fallback ? 'app' : windowKindFor(kiosk.config.window.mode);
  const noSandbox = noSandboxOptIn(env);
  if (noSandbox) say(`${NO_SANDBOX_ENV}=1: the browser runs WITHOUT its sandbox. Only on a disposable machine.`);
  if (kind === 'kiosk') {
    say(`Opening ${path} full screen (--kiosk); if it closes it is opened again. Staff exit from the staff panel.`);
    // The browser's own lock-down is its managed policy: say when it is missing, or blocks this kiosk.
    const policyDir = process.platform === 'linux' ? managedPolicyDir(path) : null;
    const warning = policyDir ? policyWarning(installedPolicy(policyDir, kiosk.host.origin), policyDir, kiosk.host.origin) : null;
    if (warning) {
      say(warning);
      mainLog.logger.warn('Browser mode: the browser policy', { message: warning });
    }
  }
  else {
    say(
      options.fallback
        ? `Opening ${path} in an app window. This is NOT a locked kiosk (for one, see docs/browser-mode.md).`
        : `Opening ${path} in an app window (window.mode is ${kiosk.config.window.mode}); closing it stops the kiosk.`,
    );
  }
  keeper = keepBrowser({
    path,
    kind,
    size: { width: kiosk.config.window.width, height: kiosk.config.window.height },
    noSandbox,
    env,
    origin: kiosk.host.origin,
    startUrl: kiosk.host.startUrl,
    sessionCookie: kiosk.host.sessionCookie,
    say,
    log: (line) => mainLog.logger.warn(line),
    onCannotOpen: (why) => printAddress(why),
    onAppWindowClosed: () => void stop('The window was closed: the kiosk stopped.'),
  });
  say(`Stop with Ctrl+C. Log: ${mainLog.path}`);
}

const isEntry = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isEntry) {
  runBrowserMode().catch((error: unknown) => {
    process.stdout.write(`The browser mode could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
