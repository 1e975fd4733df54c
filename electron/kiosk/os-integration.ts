/**
 * What the kiosk asks of the operating system, decided without Electron: how to relaunch (inside an
 * AppImage or not), whether DevTools may open and which key opens them, which tray image to use, and the
 * application menu. main/ passes the answers to Electron unchanged; test/unit/kiosk/os-integration.test.ts
 * checks each decision for every platform, the fake `electron` checks that main uses them.
 */

/** Options for `app.relaunch()`; `undefined` means "relaunch as this process was started". */
export interface RelaunchOptions {
  execPath: string;
  args: string[];
}

/** The AppImage this app runs from (the runtime's `APPIMAGE`), or null: the one reading of that variable. */
export function appImagePath(env: Readonly<Record<string, string | undefined>>): string | null {
  return env.APPIMAGE?.trim() || null;
}

/**
 * Inside an AppImage `process.execPath` lives in the image's temporary mount, which is gone once this
 * process exits, so a plain relaunch starts nothing. The AppImage runtime sets `APPIMAGE` to the image's
 * own path: relaunch that, with this run's arguments (`argv[0]` is the mounted binary, the rest are ours).
 */
export function relaunchOptions(env: Readonly<Record<string, string | undefined>>, argv: readonly string[]): RelaunchOptions | undefined {
  const appImage = appImagePath(env);
  if (!appImage) return undefined;
  return { execPath: appImage, args: argv.slice(1) };
}

/** The exit code with which a supervised kiosk asks its supervisor to start it again (EX_TEMPFAIL). */
export const SUPERVISED_RESTART_EXIT_CODE = 75;

/** How to start again: ourselves (`app.relaunch`), or by exiting with a code the supervisor restarts on. */
export type RelaunchPlan = { kind: 'self'; options: RelaunchOptions | undefined } | { kind: 'supervisor'; exitCode: number };

/**
 * Under a supervisor that restarts the app (the shipped systemd user unit and launchd agent set
 * `AVATAR_KIOSK_SUPERVISED=1`), a process the app starts itself would be ended with the job when the
 * app exits (systemd's control group, launchd's process group): exit with
 * `SUPERVISED_RESTART_EXIT_CODE` instead and let the supervisor start it.
 */
export function relaunchPlan(env: Readonly<Record<string, string | undefined>>, argv: readonly string[]): RelaunchPlan {
  if (env.AVATAR_KIOSK_SUPERVISED === '1') return { kind: 'supervisor', exitCode: SUPERVISED_RESTART_EXIT_CODE };
  return { kind: 'self', options: relaunchOptions(env, argv) };
}

/**
 * Whether Chromium's sandbox is on. electron-builder's AppImage launcher (AppRun) adds `--no-sandbox` when
 * the system refuses unprivileged user namespaces (Ubuntu 23.10+/24.04 without an AppArmor profile for
 * the image): the app then runs without the sandbox, silently. Null when it is on; else what staff read.
 */
export function sandboxProblem(options: { noSandboxSwitch: boolean; argv: readonly string[]; env: Readonly<Record<string, string | undefined>> }): string | null {
  if (!options.noSandboxSwitch && !options.argv.includes('--no-sandbox')) return null;
  const why = appImagePath(options.env)
    ? 'The AppImage\'s launcher started the kiosk with --no-sandbox because this system refuses unprivileged user namespaces.'
    : 'The kiosk was started with --no-sandbox.';
  return `Chromium's security sandbox is OFF: a flaw in the page's engine would reach this computer. ${why} Install the deb (it sets the sandbox up), or allow user namespaces for the AppImage with an AppArmor profile (see the packaging guide), and restart.`;
}

/**
 * From a source checkout (`npm start`, not packaged) the window is `windowed` unless the config file sets
 * a mode (the environment and the policy still override it): a developer must not be locked in a
 * full-screen kiosk (on macOS kiosk mode also hides the Dock and turns off app switching). An installed
 * app keeps the `kiosk` default. Takes and returns the config file's raw content.
 */
export function unpackagedWindowDefault(raw: Record<string, unknown>, isPackaged: boolean): Record<string, unknown> {
  if (isPackaged) return raw;
  const win = raw.window;
  if (win !== undefined && (typeof win !== 'object' || win === null || Array.isArray(win))) return raw; // the schema reports it
  if (win && (win as Record<string, unknown>).mode !== undefined) return raw;
  return { ...raw, window: { ...(win as Record<string, unknown> | undefined), mode: 'windowed' } };
}

/**
 * Chromium features main turns on before ready. Linux: `GlobalShortcutsPortal`, so the companion's global
 * shortcut works on Wayland through the desktop portal (Electron leaves it off by default); the portal
 * knows the app by its reverse-DNS app id (package.json `desktopName`).
 */
export function chromiumFeatures(platform: NodeJS.Platform): string[] {
  return platform === 'linux' ? ['GlobalShortcutsPortal'] : [];
}

/**
 * DevTools are a developer's tool: only from a source checkout (`npm start`, not packaged) and only when
 * asked for with `KIOSK_DEVTOOLS=1`. A packaged kiosk never opens them, whatever its environment says:
 * anyone at the kiosk's keyboard could otherwise read the page and call the staff API.
 */
export function devToolsAllowed(options: { isPackaged: boolean; env: Readonly<Record<string, string | undefined>> }): boolean {
  return !options.isPackaged && options.env.KIOSK_DEVTOOLS === '1';
}

/** The part of Electron's `before-input-event` input that decides the shortcut. */
export interface KeyInput {
  type: string;
  key: string;
  isAutoRepeat?: boolean;
}

/** F12 pressed (not held, not released): toggle DevTools. */
export function isDevToolsToggle(input: KeyInput): boolean {
  return input.type === 'keyDown' && input.key === 'F12' && !input.isAutoRepeat;
}

/** The tray image: a file under resources/ and what to do with it. */
export interface TrayIconSpec {
  file: string;
  /** macOS: a template image (black + alpha) that the menu bar tints for light and dark mode. */
  template: boolean;
  /** Resize to this many pixels square (device-independent); null: as the file is. */
  sizePx: number | null;
}

/**
 * macOS draws a 16 pt template image in the menu bar (trayTemplate.png, with trayTemplate@2x.png beside
 * it for Retina, picked up by name). Elsewhere the app icon, scaled down: Windows shows 16 px at 100 %
 * and more at higher scaling, Linux panels 22–24 px; a 32 px image is scaled down cleanly by both.
 */
export function trayIcon(platform: NodeJS.Platform): TrayIconSpec {
  if (platform === 'darwin') return { file: 'trayTemplate.png', template: true, sizePx: null };
  return { file: 'icon.png', template: false, sizePx: 32 };
}

/** The subset of Electron's MenuItemConstructorOptions the application menu uses. */
export interface MenuTemplateItem {
  label?: string;
  role?: 'about' | 'undo' | 'redo' | 'cut' | 'copy' | 'paste' | 'selectAll';
  type?: 'separator';
  submenu?: MenuTemplateItem[];
}

/**
 * The application menu: none on Windows and Linux (a kiosk shows no menu bar, and no menu means no
 * accelerators). On macOS the clipboard shortcuts (⌘C, ⌘V, …) reach a text field only through Edit-menu
 * roles, so the staff panel's fields need them even where the menu bar is hidden (kiosk mode). Nothing
 * that leaves the kiosk (Quit, Hide, Close window) is on it: those accelerators would be a way out.
 */
export function applicationMenu(platform: NodeJS.Platform, appName: string): MenuTemplateItem[] | null {
  if (platform !== 'darwin') return null;
  return [
    // macOS makes the first item the app menu, whatever its label.
    { label: appName, submenu: [{ role: 'about' }] },
    {
      label: 'Edit',
      submenu: [{ role: 'undo' }, { role: 'redo' }, { type: 'separator' }, { role: 'cut' }, { role: 'copy' }, { role: 'paste' }, { role: 'selectAll' }],
    },
  ];
}
