/**
 * Main-process entry: Electron wiring only. Behaviour lives outside electron/main: kiosk/ (what the app
 * does, how it quits), operations/ and fleet/ (features hung onto it, started from the list below); here
 * are only ipc.ts (who may call), page-policy.ts/security.ts (what the page may do), store.ts (settings
 * and the key), window.ts (the window) and the features' Electron glue (features/).
 */
import { app, autoUpdater, ipcMain, screen, type BrowserWindow } from 'electron';
import { join } from 'node:path';
import { EVENT_CHANNEL, type KioskEvent } from '../contract.ts';
import { createLogger, type Logger } from '../core/log.ts';
import { startupAttention } from '../kiosk/attention.ts';
import { configuredPortrait } from '../kiosk/cast.ts';
import { createKioskService, type KioskService } from '../kiosk/kiosk-service.ts';
import { createFirstLoad } from '../kiosk/first-load.ts';
import { createLifecycle, STARTUP_RELAUNCH_DELAY_MS } from '../kiosk/lifecycle.ts';
import { createMainLog, type MainLog } from '../operations/log-file.ts';
import { companionBounds } from './companion-window.ts';
import { crashRecovery } from './features/crash-recovery.ts';
import { desktopCompanion } from './features/desktop-companion.ts';
import type { Feature } from './features/feature.ts';
import { fleetLink } from './features/fleet-link.ts';
import { fleetMetrics } from './features/fleet-metrics.ts';
import { keepAwake } from './features/keep-awake.ts';
import { safeUpdates } from './features/safe-updates.ts';
import { staffOperations } from './features/staff-operations.ts';
import { registerIpc } from './ipc.ts';
import { APP_ORIGIN } from './page-policy.ts';
import { relaunchApp, watchDevToolsKey } from './platform.ts';
import { guardWebContents, hardenSession, registerAppScheme, serveRenderer } from './security.ts';
import { loadSettings } from './store.ts';
import { createMainWindow, loadRenderer, usesNativeRtc } from './window.ts';

/** What runs alongside the call service, started in this order before the page loads, stopped in
 *  reverse when the app quits. Adding a feature is one line here. */
function kioskFeatures(): Feature[] {
  const staff = staffOperations();
  const metrics = fleetMetrics();
  const fleet = fleetLink(staff, metrics);
  return [
    keepAwake(),
    staff,
    // After staff operations: recovery records into their ledger.
    crashRecovery(staff),
    metrics,
    // After the ledger and the metrics: it forwards the one and adds the opening gauge to the other.
    fleet,
    safeUpdates(fleet),
    desktopCompanion(),
  ];
}

const consoleLogger = createLogger({ scope: 'main', level: process.env.KIOSK_LOG_LEVEL === 'debug' ? 'debug' : 'info' });
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
  registerAppScheme();
  guardWebContents(logger);
  void main().catch((error: unknown) => {
    // No dialog: nobody may be there to click it, and a modal box would keep the kiosk from coming back.
    // Log, wait a little (a display or keyring that is not ready yet may be by then; a start-up that
    // always fails must not spin), then start again.
    logger.error('Fatal start-up error; relaunching the kiosk', { error: error instanceof Error ? error.message : String(error), relaunchInMs: STARTUP_RELAUNCH_DELAY_MS });
    setTimeout(() => {
      relaunchApp();
      app.exit(1);
    }, STARTUP_RELAUNCH_DELAY_MS);
  });
}

async function main(): Promise<void> {
  await app.whenReady();
  mainLog = createMainLog({ dir: app.getPath('logs'), level: process.env.KIOSK_LOG_LEVEL === 'debug' ? 'debug' : 'info', scope: 'main' });
  activeLogger = mainLog.logger;
  hardenSession(logger);
  serveRenderer(RENDERER_DIR, logger);

  // Config, policy and key problems were logged where they were found; they run on safe defaults and
  // wait for staff on the Status tab (and count in /metrics), never in a blocking dialog.
  const settings = await loadSettings({ env: process.env, appRoot: app.getAppPath(), logger });

  const service: KioskService = await createKioskService({
    config: settings.config,
    apiKey: settings.apiKey,
    apiKeySource: settings.apiKeySource,
    apiKeyWeaklyProtected: settings.apiKeyWeaklyProtected,
    startupAttention: startupAttention({
      configError: settings.configError,
      configPath: settings.configPath,
      policyProblems: settings.policy.problems,
      policyPath: settings.policy.path,
      keyProblem: settings.keyProblem,
      unknownConfigKeys: settings.unknownKeys,
    }),
    logger,
    persistApiKey: settings.persistApiKey,
    // video.fit defaults to cover when the screen is portrait.
    portrait: configuredPortrait(settings.config, screen.getPrimaryDisplay().size),
  });

  // A bad cast member is left out of the attract screen; staff see it with the other start-up problems.
  for (const problem of service.castProblems) logger.error('Avatar problem', { message: problem.message });

  let win: BrowserWindow | null = null;
  const lifecycle = createLifecycle({
    logger,
    hangupSession: () => service.resetToAttract(),
    shutdownService: () => service.shutdown(),
    quitApp: () => app.quit(),
    reloadRenderer: () => {
      if (win && !win.isDestroyed()) void loadRenderer(win).catch((e: unknown) => logger.error('Reload failed', { error: String(e) }));
    },
    relaunchApp: () => {
      relaunchApp();
      app.exit(0);
    },
  });

  process.on('uncaughtException', (error) => void lifecycle.onFatalError('uncaughtException', error));
  process.on('unhandledRejection', (reason) => void lifecycle.onFatalError('unhandledRejection', reason));

  registerIpc(ipcMain, {
    service,
    origin: APP_ORIGIN,
    getMainFrame: () => (win && !win.isDestroyed() ? win.webContents.mainFrame : null),
    logger,
  });
  service.onEvent((event: KioskEvent) => {
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
    void lifecycle.onRenderProcessGone({ reason: details.reason, exitCode: details.exitCode });
  });
  watchDevToolsKey(win);
  win.webContents.on('unresponsive', () => lifecycle.onUnresponsive());
  win.webContents.on('responsive', () => lifecycle.onResponsive());
  win.webContents.on('did-fail-load', (_event, code, description, url) => {
    logger.error('The kiosk page failed to load (is out/renderer built?)', { code, description, url: url.slice(0, 200) });
  });
  const features = kioskFeatures();
  const context = { service, settings, lifecycle, window: win, logger, mainLog };
  for (const feature of features) await feature.start(context);
  app.on('will-quit', () => {
    for (const feature of [...features].reverse()) {
      void Promise.resolve()
        .then(() => feature.stop?.())
        .catch((e: unknown) => logger.warn('A feature did not stop cleanly', { feature: feature.name, error: String(e) }));
    }
  });
  await firstLoad.run();
  logger.info('Kiosk ready', { mode: service.mode, windowMode: settings.config.window.mode });
}
