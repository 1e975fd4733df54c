/**
 * The operating system's side of the app, Electron glue only: relaunching (also from inside an
 * AppImage), the application menu (macOS Edit roles), the DevTools key and the tray image. Each decision
 * is kiosk/os-integration.ts; this file hands it to Electron.
 */
import { app, Menu, nativeImage, type BrowserWindow, type NativeImage } from 'electron';
import { join } from 'node:path';
import { applicationMenu, devToolsAllowed, isDevToolsToggle, trayIcon } from '../kiosk/os-integration.ts';

/** `app.relaunch()` as the platform needs it; the caller then quits or exits. */
export { relaunch as relaunchApp } from './fatal.ts';

/** Whether this run may have DevTools (webPreferences.devTools and the F12 key agree). */
export function devToolsEnabled(): boolean {
  return devToolsAllowed({ isPackaged: app.isPackaged, env: process.env });
}

/** No menu on Windows and Linux; on macOS only the app menu and the Edit roles (clipboard keys). */
export function installApplicationMenu(platform: NodeJS.Platform = process.platform): void {
  const template = applicationMenu(platform, app.getName());
  Menu.setApplicationMenu(template ? Menu.buildFromTemplate(template) : null);
}

/** F12 toggles DevTools, only where they are allowed (never in a packaged kiosk). */
export function watchDevToolsKey(win: BrowserWindow): void {
  if (!devToolsEnabled()) return;
  win.webContents.on('before-input-event', (event, input) => {
    if (!isDevToolsToggle(input)) return;
    event.preventDefault();
    win.webContents.toggleDevTools();
  });
}

/** The tray image for this platform (a template image on macOS). */
export function trayImage(platform: NodeJS.Platform = process.platform): NativeImage {
  const spec = trayIcon(platform);
  const image = nativeImage.createFromPath(join(app.getAppPath(), 'resources', spec.file));
  if (spec.template) image.setTemplateImage(true);
  return spec.sizePx === null ? image : image.resize({ width: spec.sizePx, height: spec.sizePx });
}
