/**
 * Main-process entry: Electron wiring only. Behaviour lives outside electron/main: kiosk/ (what the app
 * does, how it quits), operations/ and fleet/ (features hung onto it, started from the one list both hosts
 * run, features/index.ts); here are only ipc.ts (who may call), page-policy.ts/security.ts (what the page
 * may do), store.ts (settings and the key), window.ts (the window) and host.ts (what the app can do for
 * the features: the window, relaunch, login items, the updater).
 */
import { app, autoUpdater, ipcMain, screen, session, type BrowserWindow } from 'electron';
import { join } from 'node:path';
import { EVENT_CHANNEL, type KioskEvent } from '../contract.ts';
import { createLogger, logLevelFromEnv, type Logger } from '../core/log.ts';
import type { ProxyResolver } from '../core/proxy.ts';
import { startupAttention } from '../kiosk/attention.ts';
import { configuredPortrait } from '../kiosk/cast.ts';
import { createChannelRegistry } from '../kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../kiosk/compose.ts';
import { demoDevicesAsked } from '../kiosk/demo-devices.ts';
import { createFirstLoad } from '../kiosk/first-load.ts';
import { createRendererRecovery, gpuGoneNeedsReload } from '../kiosk/renderer-recovery.ts';
import { createLifecycle, stopInReverse } from '../kiosk/lifecycle.ts';
import { createMainLog, type MainLog } from '../operations/log-file.ts';
import { companionBounds } from './companion-window.ts';
import { exitCode, fatal, logFatalTo } from './fatal.ts';
import { kioskFeatures, type Feature } from '../features/index.ts';
import { electronHost } from './host.ts';
import { registerIpc } from './ipc.ts';
import { APP_ORIGIN } from './page-policy.ts';
import { appImagePath, chromiumFeatures, sandboxProblem } from '../kiosk/os-integration.ts';
import { relaunchApp, watchDevToolsKey } from './platform.ts';
import { guardWebContents, hardenSession, registerAppScheme, serveRenderer } from './security.ts';
import { loadSettings } from './store.ts';
import { createMainWindow, loadRenderer, usesNativeRtc } from './window.ts';

const consoleLogger = createLogger({ scope: 'main', level: logLevelFromEnv(process.env) });
// The console until the log file is open (after ready), then electron-log.
let activeLogger: Logger = consoleLogger;
let mainLog: MainLog | null = null;
const logger: Logger = {
  debug: (m, d) => activeLogger.debug(m, d),
  info: (m, d) => activeLogger.info(m, d),
  warn: (m, d) => activeLogger.warn(m, d),
  error: (m, d) => activeLogger.error(m, d),
};

// out/main/index.js → out/preload/index.cjs and out/renderer/ (built by renderer/vite.config.ts).
const OUT_DIR = join(import.meta.dirname, '..');
const PRELOAD_PATH = join(OUT_DIR, 'preload', 'index.cjs');
const RENDERER_DIR = join(OUT_DIR, 'renderer');

if (!app.requestSingleInstanceLock()) {
  // Another kiosk instance owns the screen (and maybe a live, billing session): leave it alone.
  app.quit();
} else {
  const chromium = chromiumFeatures(process.platform);
  if (chromium.length > 0) app.commandLine.appendSwitch('enable-features', chromium.join(','));
  registerAppScheme();
  guardWebContents(logger);
  // No dialog (fatal.ts): logged, then the kiosk starts again after a pause.
  void main().catch((error: unknown) => fatal.report('startup', error));
}

async function main(): Promise<void> {
  await app.whenReady();
  mainLog = createMainLog({ dir: app.getPath('logs'), level: logLevelFromEnv(process.env), scope: 'main' });
  activeLogger = mainLog.logger;
  logFatalTo((message, details) => logger.error(message, details));
  hardenSession(logger);
  serveRenderer(RENDERER_DIR, logger);

  // Config, policy and key problems were logged where they were found; they run on safe defaults and
  // wait for staff on the Status tab (and count in /metrics), never in a blocking dialog.
  const settings = await loadSettings({ env: process.env, appRoot: app.getAppPath(), logger, isPackaged: app.isPackaged });
  const sandboxOff = sandboxProblem({ noSandboxSwitch: app.commandLine.hasSwitch('no-sandbox'), argv: process.argv, env: process.env });
  if (sandboxOff) logger.error('Running without the Chromium sandbox', { appImage: appImagePath(process.env) !== null, message: sandboxOff });

  // Main's own connections go where Chromium's would: the venue's proxy (system settings, PAC, WPAD).
  const proxy: ProxyResolver = { resolve: (url) => session.defaultSession.resolveProxy(url) };
  // Every channel the page calls: the kiosk registers its own here, staff operations theirs (and the gate).
  const channels = createChannelRegistry({ logger });
  const kiosk: Kiosk = await createKiosk({
    channels,
    proxy,
    config: settings.config,
    apiKey: settings.apiKey,
    apiKeySource: settings.apiKeySource,
    apiKeyWeaklyProtected: settings.apiKeyWeaklyProtected,
    droppedSettings: settings.configProblems,
    // Honoured in demo mode only (the kiosk turns it off with a real key).
    demoDevices: demoDevicesAsked(process.argv, process.env),
    startupAttention: startupAttention({
      configError: settings.configError,
      configProblems: settings.configProblems,
      configPath: settings.configPath,
      policyProblems: settings.policy.problems,
      policyPath: settings.policy.path,
      keyProblem: settings.keyProblem,
      sandboxProblem: sandboxOff,
      unknownConfigKeys: settings.unknownKeys,
    }),
    logger,
    persistApiKey: settings.persistApiKey,
    // The avatar's volume, the visitor funnel's counts and the keep-alive each service accepts are kept here.
    dataDir: app.getPath('userData'),
    // video.fit defaults to cover when the screen is portrait.
    portrait: configuredPortrait(settings.config, screen.getPrimaryDisplay().size),
  });

  // A bad cast member is left out of the attract screen; staff see it with the other start-up problems.
  for (const problem of kiosk.appearance.castProblems) logger.error('Avatar problem', { message: problem.message });

  let win: BrowserWindow | null = null;
  let features: Feature[] = [];
  const recovery = createRendererRecovery({
    load: () => (win && !win.isDestroyed() ? loadRenderer(win) : Promise.reject(new Error('the kiosk window is gone'))),
    relaunch: () => {
      relaunchApp();
      void lifecycle.requestQuit('other');
    },
    logger,
  });
  const lifecycle = createLifecycle({
    logger,
    hangupSession: () => kiosk.calls.resetToAttract(),
    // Every quit (staff, signal, tray, update, a relaunch) hangs up first, then stops the features, last
    // started first and bounded, so the fleet hears "stopped" before the app exits.
    shutdownService: async () => {
      await kiosk.shutdown();
      await stopInReverse(features, { logger });
    },
    // Under a supervisor a relaunch is an exit code (fatal.ts); otherwise an ordinary quit (whose 'quit'
    // event the updater's install-on-quit listens for).
    quitApp: () => {
      const code = exitCode(0);
      if (code !== 0) app.exit(code);
      else app.quit();
    },
    // With backoff, retried until it loads, the app relaunched when reloads do not help (renderer-recovery.ts).
    reloadRenderer: () => recovery.requestReload('renderer lost'),
    relaunchApp: () => {
      relaunchApp();
      app.exit(exitCode(0));
    },
  });

  // From here a fatal error hangs up a live call before the relaunch.
  fatal.takeOver((kind, error) => void lifecycle.onFatalError(kind, error));

  registerIpc(ipcMain, {
    channels,
    origin: APP_ORIGIN,
    getMainFrame: () => (win && !win.isDestroyed() ? win.webContents.mainFrame : null),
    logger,
  });
  kiosk.events.onEvent((event: KioskEvent) => {
    if (win && !win.isDestroyed() && !win.webContents.isDestroyed()) win.webContents.send(EVENT_CHANNEL, event);
  });

  app.on('before-quit', (event) => lifecycle.onBeforeQuit(event));
  app.on('window-all-closed', () => lifecycle.onWindowAllClosed());
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => lifecycle.onSignal(signal));
  app.on('second-instance', () => {
    if (win && !win.isDestroyed()) {
      if (win.isMinimized()) win.restore();
      win.focus();
    }
  });

  if (usesNativeRtc(settings.config)) {
    logger.warn('rtcEngine "agora-native": the renderer runs with Node integration and without context isolation (vendor requirement).');
  }
  const companionMode = settings.config.window.mode === 'companion';
  win = createMainWindow({ config: settings.config, preloadPath: PRELOAD_PATH, ...(companionMode ? { companionBounds: companionBounds(settings.config, logger) } : {}) });
  const firstLoad = createFirstLoad({ load: () => loadRenderer(win!), logger });
  if (settings.config.window.mode === 'kiosk') {
    win.on('close', (event) => lifecycle.onKioskWindowClose(event));
  }
  // The updater closes every window before 'before-quit': start the shutdown first, so the kiosk
  // window's close guard lets it through.
  autoUpdater.on('before-quit-for-update', () => lifecycle.onBeforeQuitForUpdate());
  win.webContents.on('render-process-gone', (_event, details) => {
    // Until the page has loaded once there is no attract screen to go back to: the first load retries.
    if (!firstLoad.done) return firstLoad.onRendererGone(details.reason);
    recovery.onRendererGone(details.reason);
    void lifecycle.onRenderProcessGone({ reason: details.reason, exitCode: details.exitCode });
  });
  // Chromium restarts a crashed GPU process, but the page can stay black: hang up and reload it too.
  app.on('child-process-gone', (_event, details) => {
    if (!gpuGoneNeedsReload(details)) return;
    logger.error('The GPU process is gone', { reason: details.reason, exitCode: details.exitCode });
    if (firstLoad.done) void lifecycle.onRenderProcessGone({ reason: `gpu-${details.reason}`, exitCode: details.exitCode });
  });
  watchDevToolsKey(win);
  win.webContents.on('unresponsive', () => lifecycle.onUnresponsive());
  win.webContents.on('responsive', () => lifecycle.onResponsive());
  win.webContents.on('did-fail-load', (_event, code, description, url) => {
    logger.error('The kiosk page failed to load (is out/renderer built?)', { code, description, url: url.slice(0, 200) });
  });
  // The features both hosts run (features/index.ts), on what the app can do (main/host.ts).
  features = [...kioskFeatures().list];
  const reloadPage = () =>
    loadRenderer(win!).then(
      () => recovery.noteLoaded(),
      (error: unknown) => {
        recovery.requestReload('reload failed');
        throw error;
      },
    );
  const host = electronHost({ win, kiosk, lifecycle, proxy, mainLog: () => mainLog, logger, reloadPage });
  const context = { kiosk, channels, settings, host, logger };
  for (const feature of features) await feature.start(context);
  await firstLoad.run();
  recovery.noteLoaded();
  logger.info('Kiosk ready', { mode: kiosk.connection.mode, windowMode: settings.config.window.mode });
}
