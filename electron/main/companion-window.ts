/**
 * The desktop companion's Electron glue: the tray icon and its menu, the global shortcut, the
 * close button hiding to the tray, and remembering the window's bounds. Behaviour lives in companion.ts;
 * this file only connects it to Tray, Menu, globalShortcut, screen and electron-store.
 */
import { app, globalShortcut, Menu, screen, Tray, type BrowserWindow, type MenuItemConstructorOptions } from 'electron';
import Store from 'electron-store';
import { EVENT_CHANNEL, type CommandEvent, type KioskEvent } from '../contract.ts';
import type { Logger } from '../core/log.ts';
import type { KioskConfig } from '../kiosk/config.ts';
import { createBoundsSaver, createCompanionController, placeCompanion, trayMenu, type Rect } from '../kiosk/companion.ts';
import type { Kiosk } from '../kiosk/compose.ts';
import { trayImage } from './platform.ts';

const BOUNDS_KEY = 'bounds';

/** The remembered bounds store (its own file, `companion-window.json`); null when it cannot be opened. */
function openBoundsStore(logger: Logger): Store<Record<string, unknown>> | null {
  try {
    return new Store<Record<string, unknown>>({ name: 'companion-window', clearInvalidConfig: true });
  } catch (error) {
    logger.warn('The companion window position cannot be remembered', { error: String(error) });
    return null;
  }
}

/** Where the companion window opens (call after app ready, before creating the window). */
export function companionBounds(config: KioskConfig, logger: Logger): Rect {
  const saved = openBoundsStore(logger)?.get(BOUNDS_KEY);
  const primary = screen.getPrimaryDisplay();
  const others = screen.getAllDisplays().filter((d) => d.id !== primary.id);
  return placeCompanion(saved, [primary.workArea, ...others.map((d) => d.workArea)], { width: config.companion.width, height: config.companion.height });
}

export interface CompanionSetup {
  /** Remove the tray and the shortcut (on quit). */
  dispose(): void;
}

export function setupCompanion(options: {
  win: BrowserWindow;
  /** The tray menu follows the call (its state) and hears each change (the events). */
  kiosk: Pick<Kiosk, 'calls' | 'events'>;
  config: KioskConfig;
  cast: ReadonlyArray<{ id: string; name: string }>;
  requestQuit(): Promise<void>;
  isRunning(): boolean;
  logger: Logger;
}): CompanionSetup {
  const { win, kiosk, config, logger } = options;
  const store = openBoundsStore(logger);
  const saver = createBoundsSaver({ save: (b) => store?.set(BOUNDS_KEY, b) });
  const alive = () => !win.isDestroyed();
  const showWindow = () => {
    if (!alive()) return;
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  };
  const controller = createCompanionController({
    showWindow,
    hideWindow() {
      if (alive()) win.hide();
    },
    sendCommand(event: CommandEvent) {
      if (alive() && !win.webContents.isDestroyed()) win.webContents.send(EVENT_CHANNEL, event satisfies KioskEvent);
    },
    requestQuit: options.requestQuit,
    isRunning: options.isRunning,
  });

  win.on('close', (event) => {
    saver.changed(win.getBounds());
    saver.flush();
    controller.onWindowClose(event);
  });
  win.on('resize', () => saver.changed(win.getBounds()));
  win.on('move', () => saver.changed(win.getBounds()));

  const tray = new Tray(trayImage());
  tray.setToolTip('Avatar Kiosk');
  const buildMenu = () => {
    const template: MenuItemConstructorOptions[] = trayMenu(options.cast, kiosk.calls.state.phase).map((item) =>
      item.separator
        ? { type: 'separator' }
        : { label: item.label, enabled: item.enabled, click: () => item.action && controller.onAction(item.action) },
    );
    tray.setContextMenu(Menu.buildFromTemplate(template));
  };
  buildMenu();
  let lastInCall: boolean | null = null;
  const off = kiosk.events.onEvent((event) => {
    if (event.type !== 'state') return;
    const inCall = !['idle', 'ended', 'failed'].includes(event.state.phase);
    if (inCall !== lastInCall) {
      lastInCall = inCall;
      buildMenu();
    }
  });
  // A click on the icon (Windows, Linux) brings the companion up; the menu holds the actions.
  tray.on('click', showWindow);

  const accelerator = config.companion.shortcut;
  let registered = false;
  try {
    registered = globalShortcut.register(accelerator, () => controller.onShortcut());
  } catch (error) {
    logger.warn('The companion shortcut is not valid here', { accelerator, error: String(error) });
  }
  if (!registered) logger.warn('The companion shortcut is taken by another app; use the tray icon instead', { accelerator });

  app.on('second-instance', showWindow);
  app.on('activate', showWindow);

  let disposed = false;
  return {
    dispose() {
      if (disposed) return;
      disposed = true;
      saver.flush();
      off();
      if (registered) globalShortcut.unregister(accelerator);
      tray.destroy();
    },
  };
}
