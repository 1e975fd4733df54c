/**
 * The one window: a full-screen kiosk (kiosk: true, no menu, black) or a windowed companion, by config.
 * Secure defaults everywhere (contextIsolation, sandbox, no Node, webSecurity) with the sandboxed CJS
 * preload exposing `window.kiosk`.
 *
 * The single exception is `createAgoraNativeWindow()`: Agora's native Electron SDK (agora-electron-sdk)
 * only works in a renderer with Node integration and without context isolation (the vendor does not
 * support context isolation). It is used ONLY when `rtcEngine === 'agora-native'` on win32/darwin
 * (the addon has no Linux build); the default engine ('auto'/'agora-web') keeps the secure window. An
 * operator who picks the native engine accepts that the renderer then runs with Node; the CSP, the
 * navigation/new-window guards and the single-origin app:// page still apply.
 */
import { BrowserWindow, type BrowserWindowConstructorOptions } from 'electron';
import type { KioskConfig } from '../kiosk/config.ts';
import { APP_ENTRY_URL } from './page-policy.ts';
import { COMPANION_MIN_SIZE, type Rect } from '../kiosk/companion.ts';
import { devToolsEnabled, installApplicationMenu } from './platform.ts';

export interface WindowOptions {
  config: KioskConfig;
  preloadPath: string;
  platform?: NodeJS.Platform;
  /** Companion mode: where the window opens (remembered bounds, already clamped to a display). */
  companionBounds?: Rect;
}

/** Whether this configuration needs the native-SDK window (and may have it on this platform). */
export function usesNativeRtc(config: KioskConfig, platform: NodeJS.Platform = process.platform): boolean {
  return config.rtcEngine === 'agora-native' && (platform === 'win32' || platform === 'darwin');
}

function windowChrome(config: KioskConfig, companionBounds?: Rect): BrowserWindowConstructorOptions {
  const kiosk = config.window.mode === 'kiosk';
  if (config.window.mode === 'companion') {
    // Compact, resizable, always on top; it hides to the tray instead of closing (companion-window.ts).
    const b = companionBounds ?? { width: config.companion.width, height: config.companion.height };
    return {
      show: false,
      backgroundColor: '#000000',
      title: 'Avatar Kiosk',
      autoHideMenuBar: true,
      ...b,
      minWidth: COMPANION_MIN_SIZE.width,
      minHeight: COMPANION_MIN_SIZE.height,
      resizable: true,
      alwaysOnTop: true,
      fullscreenable: false,
      maximizable: false,
    };
  }
  return {
    show: false,
    backgroundColor: '#000000',
    title: 'Avatar Kiosk',
    autoHideMenuBar: true,
    width: config.window.width,
    height: config.window.height,
    ...(kiosk ? { kiosk: true, fullscreen: true, frame: false } : {}),
  };
}

/** The normal window: every security default on, written out literally so scanners can verify it. */
function createSecureWindow(config: KioskConfig, preloadPath: string, companionBounds?: Rect): BrowserWindow {
  return new BrowserWindow({
    ...windowChrome(config, companionBounds),
    webPreferences: {
      preload: preloadPath, // eng-disable PRELOAD_JS_CHECK reviewed: exposes only KioskApi through contextBridge
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      // Middle-click (auxclick) could open links in new windows; the kiosk has no use for it.
      disableBlinkFeatures: 'Auxclick',
      // DevTools only from a source checkout with KIOSK_DEVTOOLS=1 (F12), never in a packaged kiosk.
      devTools: devToolsEnabled(),
      // A kiosk speaks without a click first; the renderer still handles autoplay failure.
      autoplayPolicy: 'no-user-gesture-required',
      backgroundThrottling: false,
    },
  });
}

/**
 * The agora-native variant, ONLY for rtcEngine 'agora-native' on win32/darwin (see the module comment).
 * Why each exception: agora-electron-sdk is a Node addon loaded in the renderer (needs Node), the vendor
 * does not support context isolation, and a sandboxed renderer cannot load native addons. The preload
 * still runs first and exposes the same narrow `window.kiosk` API; navigation/popup guards and CSP apply.
 */
function createAgoraNativeWindow(config: KioskConfig, preloadPath: string, companionBounds?: Rect): BrowserWindow {
  return new BrowserWindow({
    ...windowChrome(config, companionBounds),
    webPreferences: {
      preload: preloadPath, // eng-disable PRELOAD_JS_CHECK reviewed: exposes only KioskApi
      nodeIntegration: true, // eng-disable NODE_INTEGRATION_JS_CHECK agora-native window only: the SDK is a Node addon
      contextIsolation: false, // eng-disable CONTEXT_ISOLATION_JS_CHECK agora-native window only: vendor does not support isolation
      sandbox: false, // eng-disable SANDBOX_JS_CHECK agora-native window only: native addons cannot load sandboxed
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      disableBlinkFeatures: 'Auxclick',
      devTools: devToolsEnabled(),
      autoplayPolicy: 'no-user-gesture-required',
      backgroundThrottling: false,
    },
  });
}

export function createMainWindow(options: WindowOptions): BrowserWindow {
  const { config, preloadPath } = options;
  installApplicationMenu(options.platform);
  const win = usesNativeRtc(config, options.platform)
    ? createAgoraNativeWindow(config, preloadPath, options.companionBounds)
    : createSecureWindow(config, preloadPath, options.companionBounds);
  win.removeMenu();
  win.once('ready-to-show', () => win.show());
  return win;
}

export function loadRenderer(win: BrowserWindow): Promise<void> {
  return win.loadURL(APP_ENTRY_URL);
}
