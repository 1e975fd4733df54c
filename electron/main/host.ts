/**
 * The Electron app as a host of the kiosk's features (features/host.ts): Electron's data folders, login
 * items, relaunch, the window (visibility, renderer crashes, the power-save blocker, the companion's tray),
 * a screenshot with the camera preview hidden, electron-updater, and the proxy Chromium resolves.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { app, powerSaveBlocker, type BrowserWindow } from 'electron';
import electronUpdater from 'electron-updater';
import { systemClock } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import type { ProxyResolver } from '../core/proxy.ts';
import type { Kiosk } from '../kiosk/compose.ts';
import { appImagePath } from '../kiosk/os-integration.ts';
import type { Lifecycle } from '../kiosk/lifecycle.ts';
import type { UpdaterLike } from '../fleet/safe-updates.ts';
import { installModel } from '../fleet/update-policy.ts';
import type { HostWindow, KioskHost } from '../features/host.ts';
import type { MainLog } from '../operations/log-file.ts';
import { setupCompanion } from './companion-window.ts';
import { relaunchApp } from './platform.ts';

/** Hides every element the page marks as showing the visitor's camera (the self-view). */
export const HIDE_CAMERA_PREVIEW_CSS = '[data-camera-preview] { visibility: hidden !important; }';

/** The window as PNG, the camera preview hidden for the capture only. */
export async function captureWithoutCamera(win: BrowserWindow): Promise<{ png: Buffer; width: number; height: number }> {
  if (win.isDestroyed()) throw new AvatarError('internal', 'The kiosk window is gone.');
  const key = await win.webContents.insertCSS(HIDE_CAMERA_PREVIEW_CSS); // eng-disable DANGEROUS_FUNCTIONS_JS_CHECK reviewed: a constant style of ours, never remote content
  try {
    // A frame for the style to take effect before the capture.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const image = await win.webContents.capturePage();
    const size = image.getSize();
    return { png: image.toPNG(), width: size.width, height: size.height };
  } finally {
    await win.webContents.removeInsertedCSS(key).catch(() => undefined);
  }
}

/** The `package-type` file electron-builder writes into a deb's (rpm's) resources, or null. */
function packageType(): string | null {
  try {
    return readFileSync(join(process.resourcesPath, 'package-type'), 'utf8').trim().slice(0, 16) || null;
  } catch {
    return null;
  }
}

export function electronHost(options: {
  win: BrowserWindow;
  kiosk: Pick<Kiosk, 'appearance'>;
  lifecycle: Lifecycle;
  proxy: ProxyResolver;
  mainLog: () => MainLog | null;
  logger: Logger;
  reloadPage(): Promise<void>;
}): KioskHost {
  const { win, lifecycle, logger } = options;
  const restart = () => {
    relaunchApp();
    void lifecycle.requestQuit('other');
  };
  const window: HostWindow = {
    isVisible: () => win.isVisible(),
    onVisibility(listener) {
      const shown = () => listener(true);
      const hidden = () => listener(false);
      win.on('show', shown);
      win.on('restore', shown);
      win.on('hide', hidden);
      win.on('minimize', hidden);
      return () => {
        win.removeListener('show', shown);
        win.removeListener('restore', shown);
        win.removeListener('hide', hidden);
        win.removeListener('minimize', hidden);
      };
    },
    onRendererGone: (listener) => win.webContents.on('render-process-gone', (_event, details) => listener(details.reason)),
    powerSaveBlocker,
    companion: (companion) =>
      setupCompanion({
        win,
        ...companion,
        requestQuit: () => lifecycle.requestQuit('tray'),
        isRunning: () => lifecycle.phase === 'running',
        logger,
      }),
  };
  return {
    dataDir: app.getPath('userData'),
    appRoot: app.getAppPath(),
    version: app.getVersion(),
    env: process.env,
    clock: systemClock,
    platform: {
      // Electron supports login items on macOS and Windows only.
      getOpenAtLogin: () => (process.platform === 'darwin' || process.platform === 'win32' ? app.getLoginItemSettings().openAtLogin : null),
      setOpenAtLogin: (enabled) => app.setLoginItemSettings({ openAtLogin: enabled }),
      exitKiosk: () => void lifecycle.requestQuit('other'),
      restart,
    },
    fleetActions: { reload: options.reloadPage, restart, screenshot: () => captureWithoutCamera(win) },
    proxy: options.proxy,
    sandbox: !options.kiosk.appearance.attention.some((item) => item.kind === 'sandbox'),
    logTail: () => options.mainLog()?.tail() ?? [],
    window,
    updater() {
      const model = installModel({ platform: process.platform, isPackaged: app.isPackaged, packageType: packageType(), appImage: appImagePath(process.env) !== null });
      return { model, updater: model.inApp ? (electronUpdater.autoUpdater as unknown as UpdaterLike) : null };
    },
  };
}
