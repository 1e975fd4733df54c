/**
 * Main-process entry: Electron wiring only. Behaviour lives in kiosk-service.ts (what the app does),
 * lifecycle.ts (how it quits and recovers), ipc.ts (who may call), policy.ts/security.ts (what the page
 * may do), store.ts (settings and the key), window.ts (the window).
 */
import { app, dialog, ipcMain, powerSaveBlocker, screen, type BrowserWindow } from 'electron';
import { join } from 'node:path';
import { EVENT_CHANNEL, type KioskEvent } from '../contract.ts';
import { createLogger, type Logger } from '../core/log.ts';
import { createKioskService, type KioskService } from '../kiosk/kiosk-service.ts';
import { createLifecycle, createPowerSaveGuard } from '../kiosk/lifecycle.ts';
import { registerIpc } from './ipc.ts';
import { APP_ORIGIN } from './page-policy.ts';
import { guardWebContents, hardenSession, registerAppScheme, serveRenderer } from './security.ts';
import { loadSettings } from './store.ts';
import { createMainWindow, loadRenderer, usesNativeRtc } from './window.ts';
// --- unattended operation (issue 6) ---
import { systemClock } from '../core/clock.ts';
import { createMainLog, type MainLog } from '../operations/log-file.ts';
import { createStaffOps } from '../operations/staff-ops.ts';
/** Recovery of a crashed run's session must not keep the attract screen away for long. */
const RECOVERY_TIMEOUT_MS = 20_000;
import { startFleetMetrics } from '../fleet/metrics.ts';
import { companionBounds, setupCompanion } from './companion-window.ts';
import { configuredPortrait } from '../kiosk/cast.ts';

const consoleLogger = createLogger({ scope: 'main', level: process.env.KIOSK_LOG_LEVEL === 'debug' ? 'debug' : 'info' });
// --- unattended operation (issue 6): the console until the log file is open (after ready), then electron-log ---
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
    logger.error('Fatal start-up error', { error: error instanceof Error ? error.message : String(error) });
    dialog.showErrorBox('Avatar Kiosk', `The kiosk could not start: ${error instanceof Error ? error.message : String(error)}`);
    app.exit(1);
  });
}

async function main(): Promise<void> {
  await app.whenReady();
  mainLog = createMainLog({ dir: app.getPath('logs'), level: process.env.KIOSK_LOG_LEVEL === 'debug' ? 'debug' : 'info', scope: 'main' });
  activeLogger = mainLog.logger;
  hardenSession(logger);
  serveRenderer(RENDERER_DIR, logger);

  const settings = await loadSettings({ env: process.env, appRoot: app.getAppPath(), logger });
  if (settings.configError) {
    // Clear to the operator, and never a crash: the kiosk runs with safe defaults.
    dialog.showErrorBox(
      'Avatar Kiosk: configuration problem',
      `${settings.configError.message}\n\nThe kiosk is running with safe defaults. Fix the configuration file and restart.`,
    );
  }

  // --- managed configuration (issue 8) ---
  if (settings.policy.problems.length) {
    dialog.showErrorBox(
      'Avatar Kiosk: policy problem',
      `${settings.policy.problems.join('\n')}\n\nThe other settings of ${settings.policy.path} apply. Ask the administrator to fix the policy file.`,
    );
  }

  const service: KioskService = await createKioskService({
    config: settings.config,
    apiKey: settings.apiKey,
    apiKeySource: settings.apiKeySource,
    apiKeyWeaklyProtected: settings.apiKeyWeaklyProtected,
    logger,
    persistApiKey: settings.persistApiKey,
    // --- issue 8: video.fit defaults to cover when the screen is portrait ---
    portrait: configuredPortrait(settings.config, screen.getPrimaryDisplay().size),
  });

  // --- cast of avatars (issue 8): a bad member is left out of the attract screen and named here ---
  if (service.castProblems.length) {
    dialog.showErrorBox('Avatar Kiosk: avatar problem', `${service.castProblems.map((p) => p.message).join('\n\n')}\n\nThe other avatars are available. Fix the configuration and restart.`);
  }

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
      app.relaunch();
      app.exit(0);
    },
  });

  // --- unattended operation (issue 6) ---
  process.on('uncaughtException', (error) => void lifecycle.onFatalError('uncaughtException', error));
  process.on('unhandledRejection', (reason) => void lifecycle.onFatalError('unhandledRejection', reason));
  const powerSave = createPowerSaveGuard(powerSaveBlocker, logger);
  service.onEvent((event) => powerSave.onEvent(event));
  const ops = createStaffOps({
    service,
    dataDir: app.getPath('userData'),
    persistence: settings.persistence,
    env: process.env,
    appRoot: app.getAppPath(),
    clock: systemClock,
    logger,
    version: app.getVersion(),
    configError: settings.configError,
    policy: settings.policy,
    logTail: () => mainLog?.tail() ?? [],
    platform: {
      // Electron supports login items on macOS and Windows only.
      getOpenAtLogin: () => (process.platform === 'darwin' || process.platform === 'win32' ? app.getLoginItemSettings().openAtLogin : null),
      setOpenAtLogin: (enabled) => app.setLoginItemSettings({ openAtLogin: enabled }),
      exitKiosk: () => void lifecycle.requestQuit('other'),
      restart: () => {
        app.relaunch();
        void lifecycle.requestQuit('other');
      },
    },
  });
  // --- end unattended operation ---

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
  win.webContents.on('render-process-gone', (_event, details) => {
    void lifecycle.onRenderProcessGone({ reason: details.reason, exitCode: details.exitCode });
  });
  win.webContents.on('unresponsive', () => lifecycle.onUnresponsive());
  win.webContents.on('responsive', () => lifecycle.onResponsive());
  win.webContents.on('did-fail-load', (_event, code, description, url) => {
    logger.error('The kiosk page failed to load (is out/renderer built?)', { code, description, url: url.slice(0, 200) });
  });
  // --- unattended operation (issue 6): a session left over by a crash is hung up before the attract screen ---
  let recoveryTimer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    ops.recover().catch((e: unknown) => logger.error('Crash recovery failed', { error: String(e) })),
    new Promise<void>((resolve) => (recoveryTimer = setTimeout(() => (logger.warn('Crash recovery is slow; showing the kiosk anyway'), resolve()), RECOVERY_TIMEOUT_MS))),
  ]);
  clearTimeout(recoveryTimer);
  // --- fleet metrics (issue 8): opt-in /metrics and /healthz; a failure to bind never stops the kiosk ---
  const fleet = await startFleetMetrics({
    config: settings.config,
    service,
    version: app.getVersion(),
    launchStatePath: join(app.getPath('userData'), 'metrics-state.json'),
    startupErrors: [
      ...(settings.configError ? [settings.configError.code] : []),
      ...settings.policy.problems.map(() => 'invalid_config' as const),
      ...service.castProblems.map((p) => p.code),
    ],
    logger,
  });
  if (fleet) {
    win.webContents.on('render-process-gone', (_event, details) => fleet.metrics.rendererGone(details.reason));
    app.on('will-quit', () => void fleet.close());
  }
  // --- desktop companion (issue 8): tray, global shortcut, hide on close, remembered bounds ---
  if (companionMode) {
    const publicCast = await service.getConfig();
    const companion = setupCompanion({
      win,
      service,
      config: settings.config,
      cast: publicCast.ok ? publicCast.value.cast : settings.config.cast,
      requestQuit: () => lifecycle.requestQuit('tray'),
      isRunning: () => lifecycle.phase === 'running',
      logger,
    });
    app.on('will-quit', () => companion.dispose());
  }
  await loadRenderer(win);
  logger.info('Kiosk ready', { mode: service.mode, windowMode: settings.config.window.mode });
}
