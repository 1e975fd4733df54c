/**
 * A stand-in for the `electron` module, just enough of it for electron/main/index.ts (and electron-store)
 * to run under plain Node, recording what main asks of Electron. Not a simulation of Chromium: IPC
 * invokes, page loads, permission requests and signals are driven by main-harness.ts.
 */
import { EventEmitter } from 'node:events';
import { join } from 'node:path';

export const record = {
  order: [] as string[],
  schemes: [] as unknown[],
  protocolHandlers: new Map<string, (request: Request) => Promise<Response>>(),
  windows: [] as BrowserWindow[],
  errorBoxes: [] as { title: string; content: string }[],
  quitCalls: 0,
  exitCalls: [] as number[],
  headersHandler: null as null | ((details: { responseHeaders?: Record<string, string[]> }, cb: (r: { responseHeaders: Record<string, string[]> }) => void) => void),
  permissionRequest: null as null | ((wc: unknown, permission: string, cb: (ok: boolean) => void, details: Record<string, unknown>) => void),
  permissionCheck: null as null | ((wc: unknown, permission: string, origin: string, details: Record<string, unknown>) => boolean),
  /** `session.defaultSession.on(event, fn)` listeners (will-download). */
  sessionListeners: new Map<string, (...args: unknown[]) => void>(),
  menuSetTo: undefined as unknown,
  relaunchCalls: 0,
  /** The options of each `app.relaunch(options)` (null: called without options). */
  relaunches: [] as ({ execPath?: string; args?: string[] } | null)[],
  /** `webContents.toggleDevTools()` calls. */
  devToolsToggles: 0,
  powerSave: [] as string[],
  loginItemSettings: [] as unknown[],
  trays: [] as Tray[],
  shortcuts: new Map<string, () => void>(),
  unregistered: [] as string[],
  willQuit: 0,
  /** Called when the process would end (the quit let through, or `app.exit`): a harness that sets it
   *  ends the process there, so anything main had not finished by then is lost, as in Electron. */
  onExit: null as null | ((code: number) => void),
    /** `app.commandLine.appendSwitch` calls, as `--name=value`. */
  switches: [] as string[],
  /** The URLs main asked `session.resolveProxy` about. */
  proxyQueries: [] as string[],
};

class FakeWebContents extends EventEmitter {
  readonly mainFrame = { url: '', detached: false };
  readonly sent: { channel: string; payload: unknown }[] = [];
  toggleDevTools(): void {
    record.devToolsToggles++;
  }
  /** Test helper: a key as Electron reports it to `before-input-event`; answers whether it was prevented. */
  pressKey(input: { type: string; key: string; isAutoRepeat?: boolean }): boolean {
    let prevented = false;
    this.emit('before-input-event', { preventDefault: () => (prevented = true) }, input);
    return prevented;
  }
  windowOpenHandler: ((d: { url: string }) => { action: string }) | null = null;
  send(channel: string, payload: unknown): void {
    this.sent.push({ channel, payload: structuredClone(payload) });
  }
  isDestroyed(): boolean {
    return false;
  }
  getURL(): string {
    return this.mainFrame.url;
  }
  setWindowOpenHandler(h: (d: { url: string }) => { action: string }): void {
    this.windowOpenHandler = h;
  }
}

export class BrowserWindow extends EventEmitter {
  readonly webContents = new FakeWebContents();
  readonly loads: string[] = [];
  constructor(readonly options: Record<string, unknown>) {
    super();
    record.order.push('BrowserWindow');
    record.windows.push(this);
    const n = (k: string) => (typeof options[k] === 'number' ? (options[k] as number) : 0);
    this.bounds = { x: n('x'), y: n('y'), width: n('width'), height: n('height') };
    app.emit('web-contents-created', {}, this.webContents);
  }
  loadURL(url: string): Promise<void> {
    this.loads.push(url);
    this.webContents.mainFrame.url = url;
    // STUB_CRASH_FIRST_LOADS=n: the renderer crashes during each of the first n loads (gone, then the
    // load fails), as a GPU or driver problem at boot can make it.
    if (this.loads.length <= Number(process.env.STUB_CRASH_FIRST_LOADS ?? 0)) {
      setImmediate(() => this.webContents.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 }));
      return new Promise((_resolve, reject) => setTimeout(() => reject(new Error('ERR_FAILED (-2) loading ' + url)), 5));
    }
    // Test helper `failNextLoads`: the next loads fail (did-fail-load: a network or disk error), the
    // renderer stays up with nothing in it.
    if (this.failNextLoads > 0) {
      this.failNextLoads--;
      this.failedLoads++;
      return Promise.reject(new Error('ERR_FILE_NOT_FOUND (-6) loading ' + url));
    }
    return Promise.resolve();
  }
  failNextLoads = 0;
  failedLoads = 0;
  removeMenu(): void {}
  // Visibility and bounds, recorded.
  visible = false;
  readonly visibility: string[] = [];
  bounds = { x: 0, y: 0, width: 0, height: 0 };
  show(): void {
    this.visible = true;
    this.visibility.push('show');
    this.emit('show');
  }
  hide(): void {
    this.visible = false;
    this.visibility.push('hide');
    this.emit('hide');
  }
  /** Test helper: the window is ready to be shown (Electron: after the first paint). */
  readyToShow(): void {
    this.emit('ready-to-show');
  }
  isVisible(): boolean {
    return this.visible;
  }
  getBounds(): { x: number; y: number; width: number; height: number } {
    return { ...this.bounds };
  }
  /** Test helper: the user moved/resized the window. */
  userSetBounds(b: { x: number; y: number; width: number; height: number }): void {
    this.bounds = { ...b };
    this.emit('move');
    this.emit('resize');
  }
  /** Test helper: the user clicked the close button; answers whether it was prevented. */
  userClose(): boolean {
    let prevented = false;
    this.emit('close', { preventDefault: () => (prevented = true) });
    return prevented;
  }
  isDestroyed(): boolean {
    return false;
  }
  isMinimized(): boolean {
    return false;
  }
  restore(): void {}
  focus(): void {}
}

class FakeApp extends EventEmitter {
  /** STUB_IS_PACKAGED=1: run as an installed app (read when asked, so a harness may set it late). */
  get isPackaged(): boolean {
    return process.env.STUB_IS_PACKAGED === '1';
  }
  /** Switches are read from this process's own arguments (`--name=value`). */
  readonly commandLine = {
    getSwitchValue(name: string): string {
      const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
      return arg ? arg.slice(name.length + 3) : '';
    },
    appendSwitch(name: string, value?: string): void {
      record.switches.push(value === undefined ? `--${name}` : `--${name}=${value}`);
    },
    hasSwitch(name: string): boolean {
      return process.argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
    },
  };
  getName(): string {
    return 'Avatar Kiosk';
  }
  #ready!: () => void;
  readonly #readyPromise = new Promise<void>((r) => (this.#ready = r));
  emitReady(): void {
    record.order.push('ready');
    this.#ready();
  }
  whenReady(): Promise<void> {
    return this.#readyPromise;
  }
  requestSingleInstanceLock(): boolean {
    record.order.push('requestSingleInstanceLock');
    return true;
  }
  quit(): void {
    record.quitCalls++;
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) {
      record.order.push('quit-allowed');
      record.willQuit++;
      let held = false;
      this.emit('will-quit', { preventDefault: () => (held = true) });
      // As in Electron: unless a will-quit listener holds it, the process ends here (exit code 0).
      if (!held) record.onExit?.(0);
    }
  }
  exit(code = 0): void {
    record.exitCalls.push(code);
    record.onExit?.(code);
  }
  getPath(name: string): string {
    const userData = process.env.STUB_USER_DATA ?? join(process.cwd(), '.stub-user-data');
    return name === 'logs' ? join(userData, 'logs') : userData;
  }
  relaunch(options?: { execPath?: string; args?: string[] }): void {
    record.relaunchCalls++;
    record.relaunches.push(options ? structuredClone(options) : null);
  }
  getLoginItemSettings(): { openAtLogin: boolean } {
    return { openAtLogin: false };
  }
  setLoginItemSettings(settings: unknown): void {
    record.loginItemSettings.push(settings);
  }
  getVersion(): string {
    return '0.0.0-test';
  }
  getAppPath(): string {
    return process.env.STUB_APP_PATH ?? process.cwd();
  }
}
export const app = new FakeApp();

export const protocol = {
  registerSchemesAsPrivileged(schemes: unknown[]): void {
    record.order.push('registerSchemesAsPrivileged');
    record.schemes.push(...schemes);
  },
  handle(scheme: string, handler: (request: Request) => Promise<Response>): void {
    record.protocolHandlers.set(scheme, handler);
  },
};

export const session = {
  defaultSession: {
    webRequest: {
      onHeadersReceived(fn: NonNullable<typeof record.headersHandler>): void {
        record.headersHandler = fn;
      },
    },
    setPermissionRequestHandler(fn: NonNullable<typeof record.permissionRequest>): void {
      record.permissionRequest = fn;
    },
    setPermissionCheckHandler(fn: NonNullable<typeof record.permissionCheck>): void {
      record.permissionCheck = fn;
    },
    on(event: string, fn: (...args: unknown[]) => void): void {
      record.sessionListeners.set(event, fn);
    },
    /** Chromium's proxy answer for a URL, in PAC syntax: STUB_PAC (default DIRECT), each question recorded. */
    resolveProxy(url: string): Promise<string> {
      record.proxyQueries.push(url);
      return Promise.resolve(process.env.STUB_PAC ?? 'DIRECT');
    },
  },
};

type Handler = (event: { senderFrame: unknown }, ...args: unknown[]) => unknown;
export const ipcMain = {
  handlers: new Map<string, Handler>(),
  handle(channel: string, fn: Handler): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, fn);
  },
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  },
  on(): void {},
};

/** Reversible "encryption" that is visibly not the plaintext. STUB_KEYRING=hang: decrypting never
 *  answers, like a locked keyring waiting for a password nobody types. */
export const safeStorage = {
  isAsyncEncryptionAvailable: async () => true,
  encryptStringAsync: async (s: string) => Buffer.from(`enc:${Buffer.from(s).toString('hex')}`),
  decryptStringAsync: (b: Buffer) =>
    process.env.STUB_KEYRING === 'hang'
      ? new Promise<never>(() => {})
      : Promise.resolve({ result: Buffer.from(b.toString().slice(4), 'hex').toString(), shouldReEncrypt: false }),
  getSelectedStorageBackend: () => 'basic_text' as const,
};

export const dialog = {
  showErrorBox(title: string, content: string): void {
    record.errorBoxes.push({ title, content });
  },
};

// Electron's own handler (lib/browser/init.ts), installed before the app loads: with no other listener,
// an uncaught error in main shows a modal error box (and a main module that fails to load is reported
// as one, see main-harness.ts).
process.on('uncaughtException', (error) => {
  if (process.listenerCount('uncaughtException') > 1) return;
  dialog.showErrorBox('A JavaScript error occurred in the main process', `Uncaught Exception:\n${error.stack ?? error.message}`);
});

export const Menu = {
  setApplicationMenu(menu: unknown): void {
    record.menuSetTo = menu;
  },
  buildFromTemplate(template: MenuItemTemplate[]): { items: MenuItemTemplate[] } {
    return { items: template };
  },
};

// Tray, globalShortcut, screen, nativeImage.
export interface MenuItemTemplate {
  label?: string;
  role?: string;
  submenu?: MenuItemTemplate[];
  type?: string;
  enabled?: boolean;
  click?: () => void;
}

export class Tray extends EventEmitter {
  menu: { items: MenuItemTemplate[] } | null = null;
  menus = 0;
  tooltip = '';
  destroyed = false;
  constructor(readonly image: unknown) {
    super();
    record.trays.push(this);
  }
  setContextMenu(menu: { items: MenuItemTemplate[] }): void {
    this.menu = menu;
    this.menus++;
  }
  setToolTip(text: string): void {
    this.tooltip = text;
  }
  destroy(): void {
    this.destroyed = true;
  }
  /** Test helper: the menu as "label" / "label (off)" / "---". */
  labels(): string[] {
    return (this.menu?.items ?? []).map((i) => (i.type === 'separator' ? '---' : `${i.label}${i.enabled === false ? ' (off)' : ''}`));
  }
  /** Test helper: click the item with this label. */
  clickItem(label: string): void {
    const item = this.menu?.items.find((i) => i.label === label);
    if (!item?.click) throw new Error(`no tray item "${label}"`);
    item.click();
  }
}

export const globalShortcut = {
  register(accelerator: string, fn: () => void): boolean {
    if (record.shortcuts.has(accelerator)) return false;
    record.shortcuts.set(accelerator, fn);
    return true;
  },
  unregister(accelerator: string): void {
    record.unregistered.push(accelerator);
    record.shortcuts.delete(accelerator);
  },
};

const DISPLAY = { id: 1, workArea: { x: 0, y: 0, width: 1920, height: 1040 }, bounds: { x: 0, y: 0, width: 1920, height: 1080 }, size: { width: 1920, height: 1080 } };
export const screen = {
  getPrimaryDisplay: () => {
    // STUB_NO_DISPLAY=1: no display yet (a kiosk booting before its screen is up).
    if (process.env.STUB_NO_DISPLAY === '1') throw new Error('no display');
    return DISPLAY;
  },
  getAllDisplays: () => [DISPLAY],
};

/** An image as main prepared it: its file, whether it is a template, the size it was scaled to. */
class FakeImage {
  template = false;
  constructor(
    readonly path: string,
    readonly size: { width: number; height: number } | null = null,
  ) {}
  setTemplateImage(template: boolean): void {
    this.template = template;
  }
  resize(size: { width: number; height: number }): FakeImage {
    const resized = new FakeImage(this.path, { width: size.width, height: size.height });
    resized.template = this.template;
    return resized;
  }
}
export const nativeImage = {
  createFromPath: (path: string) => new FakeImage(path),
};

let powerSaveId = 0;
export const powerSaveBlocker = {
  start(type: string): number {
    powerSaveId++;
    record.powerSave.push(`start:${type}:${powerSaveId}`);
    return powerSaveId;
  },
  stop(id: number): void {
    record.powerSave.push(`stop:${id}`);
  },
};

/** The updater: the harness emits 'before-quit-for-update' as `quitAndInstall()` would. */
export const autoUpdater = new EventEmitter();
export const shell = {};
export const net = {};

export default { app, autoUpdater, BrowserWindow, protocol, session, ipcMain, safeStorage, dialog, Menu, shell, net, powerSaveBlocker, Tray, globalShortcut, screen, nativeImage };
