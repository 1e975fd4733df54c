/**
 * `npm run start:browser`: the kiosk in a browser, without Electron (kiosk-host.ts), opened in Chromium
 * or Chrome when one is installed (open-browser.ts), else its address is printed. Ctrl+C, a signal,
 * closing the browser window or the staff panel's Exit stop it; a running call is hung up first.
 *
 * Environment: AVATAR_KIOSK_DATA (the data folder), KIOSK_BROWSER_PORT (default: a free port),
 * KIOSK_BROWSER (a browser's path, or `none`), AVATAR_API_KEY and the app's other overrides.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { addSecret } from '../core/log.ts';
import { createMainLog } from '../operations/log-file.ts';
import { dataDirFrom, startBrowserKiosk, type BrowserKiosk } from './kiosk-host.ts';
import { newSecret } from './server.ts';
import { browserCandidates, findBrowser, openBrowser, type OpenedBrowser } from './open-browser.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** A browser that exits this soon without showing the page could not open a window (no display…). */
const BROWSER_START_GRACE_MS = 15_000;

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const env = process.env;
  const dataDir = dataDirFrom(env);
  const rendererDir = join(ROOT, 'out', 'renderer');
  const mainLog = createMainLog({ dir: join(dataDir, 'logs'), level: env.KIOSK_LOG_LEVEL === 'debug' ? 'debug' : 'info', scope: 'browser', console: false });
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const port = Number.parseInt(env.KIOSK_BROWSER_PORT ?? '0', 10);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    say(`KIOSK_BROWSER_PORT must be a port number (0 to 65535), not "${env.KIOSK_BROWSER_PORT}".`);
    process.exit(2);
  }

  // Never logged; registered anyway, so a log line that ever carried it would be redacted.
  const secret = newSecret();
  addSecret(secret);
  let kiosk: BrowserKiosk | null = null;
  let browser: OpenedBrowser | null = null;
  let everConnected = false;
  let stopping = false;
  const stop = async (why: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    say(why);
    browser?.close();
    await kiosk?.close().catch(() => undefined);
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
    secret,
    logTail: () => mainLog.tail(),
    onPageConnected: () => {
      everConnected = true;
      browser?.forgetLaunchFile();
    },
    onQuit: (why) => void stop(why === 'exit' ? 'Staff exited the kiosk.' : 'Staff asked for a restart: the kiosk stopped; start it again (npm run start:browser).'),
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(`Stopping (${signal}).`));

  say(`Avatar Kiosk in browser mode at ${kiosk.host.origin}/ (${kiosk.service.mode === 'demo' ? 'demo: the embedded emulator' : kiosk.service.mode}; data: ${dataDir}; log: ${mainLog.path}).`);
  if (kiosk.configError) say(`config.json was not used: ${kiosk.configError.message} The kiosk runs on safe defaults.`);
  const path = findBrowser(env, browserCandidates(process.platform, env));
  const printUrl = (why: string) => say(`${why} Open this address in Chromium or Chrome (it holds this launch's secret; keep it private):\n  ${kiosk!.host.pageUrl}`);
  if (!path) {
    printUrl(env.KIOSK_BROWSER?.trim() === 'none' ? 'KIOSK_BROWSER=none.' : 'No Chromium or Chrome found.');
    return;
  }
  const mode = kiosk.config.window.mode;
  browser = openBrowser({ path, pageUrl: kiosk.host.pageUrl, mode, size: { width: kiosk.config.window.width, height: kiosk.config.window.height } });
  const startedAt = Date.now();
  say(`Opening ${path} (${mode === 'kiosk' ? '--kiosk' : '--app'}). Stop with Ctrl+C.`);
  browser.child.once('exit', () => {
    if (everConnected || Date.now() - startedAt > BROWSER_START_GRACE_MS) return void stop('The browser window was closed: the kiosk stops.');
    browser?.close(); // removes its profile folder
    browser = null;
    printUrl(`${path} could not open a window.`);
  });
}

main().catch((error: unknown) => {
  say(`The browser mode could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
