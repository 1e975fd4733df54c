/**
 * The browser mode's kiosk, without Electron: the kiosk's services and the same feature list as the app
 * (features/index.ts: staff operations, crash recovery, fleet metrics, the fleet link, ...), on a host
 * made of plain files instead of Electron's store, and the page served by server.ts instead of a
 * BrowserWindow.
 *
 * Differences from the app, on purpose:
 *  - the API key comes from AVATAR_API_KEY only: there is no safeStorage here, so the staff panel cannot
 *    store one (it says to set the variable);
 *  - config.json is read from the data folder (AVATAR_KIOSK_DATA, else the app's own user-data folder);
 *  - "start at login" is not offered; "exit" stops the host; "restart" stops it with a line saying so.
 * As in the app, the data folder is private to this user (0700) and config.json (the PIN hash) 0600, also
 * when an operator wrote them by hand; the log is 0600 (operations/log-file.ts).
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { systemClock, type Clock } from '../core/clock.ts';
import { startupAttention } from '../kiosk/attention.ts';
import { AvatarError } from '../core/errors.ts';
import { addSecret, type Logger } from '../core/log.ts';
import type { EmulatorKnobs } from '../emulator/index.ts';
import type { HostCapability } from '../fleet/command-table.ts';
import { loadPolicy } from '../fleet/managed-config.ts';
import { kioskFeatures, type Feature, type HostSettings, type KioskHost } from '../features/index.ts';
import { apiKeyFromEnv, type KioskConfig } from '../kiosk/config.ts';
import { keepConfigFile, type ConfigProblem } from '../kiosk/config-keeping.ts';
import { createChannelRegistry, type ChannelRegistry } from '../kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../kiosk/compose.ts';
import { stopInReverse } from '../kiosk/lifecycle.ts';
import type { StaffOps } from '../operations/staff-ops.ts';
import { jsonFilePersistence } from '../operations/settings.ts';
import { startBrowserHost, type BrowserHost } from './server.ts';
import { dataDirFromEnv, userConfigRoot } from '../core/user-folders.ts';

/** The user-data folder's name when the app runs from a checkout (`npm start`, not packaged): the
 *  package's name. The browser mode always runs from a checkout, so it shares that folder. */
export const CHECKOUT_DATA_FOLDER = 'avatar-kiosk';

/** The folder Electron's `app.getPath('userData')` names for this app under `npm start` (docs/operators.md). */
export function userDataDir(platform: NodeJS.Platform, env: Record<string, string | undefined>, home: string): string {
  return join(userConfigRoot(env, platform, home), CHECKOUT_DATA_FOLDER);
}

/** The data folder: AVATAR_KIOSK_DATA, else the app's user-data folder. */
export function dataDirFrom(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform, home: string = homedir()): string {
  return dataDirFromEnv(env) ?? userDataDir(platform, env, home);
}

/** What the browser mode cannot do for the fleet's commands, and why (the answer to each command that needs it). */
export const BROWSER_MODE_LACKS = {
  reload: 'The browser mode cannot reload its page from afar (the browser is not ours to drive); staff can reload it, and it reloads itself when it reconnects.',
  screenshot: 'The browser mode has no kiosk window to capture (the app has).',
  // Quitting would stop it for good: nothing here starts it again (the app relaunches itself).
  restart: 'The browser mode cannot restart itself: it would stop for good. Restart the service that runs it (systemd, a scheduled task), or use the app.',
} as const satisfies Partial<Record<HostCapability, string>>;

/** What the staff panel shows in place of the key field, and says when a key is sent anyway. */
export const BROWSER_KEY_HINT =
  'The browser mode stores no API key (it has no secure storage). Set AVATAR_API_KEY in the environment that starts it (as a service: its environment file, e.g. /etc/avatar-kiosk/env) and start it again.';

export interface BrowserKioskOptions {
  dataDir: string;
  env: Record<string, string | undefined>;
  appRoot: string;
  rendererDir: string;
  logger: Logger;
  version: string;
  /** 0: a free port. */
  port?: number;
  /** Demo mode only: the page gets a synthetic microphone and camera (PublicConfig.demoDevices). */
  demoDevices?: boolean;
  clock?: Clock;
  logTail?: () => string[];
  emulatorKnobs?: Partial<EmulatorKnobs>;
  onPageConnected?: () => void;
  /** Staff asked to exit (the caller stops the host). */
  onQuit?: (why: 'exit') => void;
}

export interface BrowserKiosk {
  readonly host: BrowserHost;
  readonly kiosk: Kiosk;
  /** The page's channels (the kiosk's and staff operations'), as the host dispatches them. */
  readonly channels: ChannelRegistry;
  readonly ops: StaffOps;
  readonly config: KioskConfig;
  /** Why config.json could not be read at all (null when it could). */
  readonly configError: AvatarError | null;
  /** Settings not used, one by one (the rest applies). */
  readonly configProblems: readonly ConfigProblem[];
  /** Keys of config.json this version does not know (misspelt, or from a newer version): ignored, kept in the file. */
  readonly unknownConfigKeys: readonly string[];
  close(): Promise<void>;
}

export async function startBrowserKiosk(options: BrowserKioskOptions): Promise<BrowserKiosk> {
  const { dataDir, env, logger, clock = systemClock } = options;
  makePrivate(dataDir);
  const policyLayer = loadPolicy({ env });
  for (const problem of policyLayer.problems) logger.error('Policy problem', { message: problem });
  const persistence = jsonFilePersistence(join(dataDir, 'config.json'));
  // A file that cannot be read at all is not used (nor written over); a bad setting in a readable file
  // drops that setting only, so the staff PIN's hash and everything else in the file still apply.
  const { config, configError, problems: configProblems, unknownKeys } = keepConfigFile(() => persistence.read(), env, { appRoot: options.appRoot, policy: policyLayer.policy });
  if (configError) logger.error('Invalid configuration file; running with safe defaults', { message: configError.message, path: join(dataDir, 'config.json') });
  for (const problem of configProblems) logger.error('A setting was not used', { line: problem.line, message: problem.message });

  const envKey = apiKeyFromEnv(env);
  addSecret(envKey);
  const channels = createChannelRegistry({ logger });
  const kiosk = await createKiosk({
    channels,
    config,
    apiKey: envKey,
    apiKeySource: envKey ? 'env' : 'none',
    droppedSettings: configProblems,
    // The same start-up problems list as the app: staff see it on the Status tab, /metrics counts it.
    startupAttention: startupAttention({
      configError,
      configProblems,
      configPath: join(dataDir, 'config.json'),
      policyProblems: policyLayer.problems,
      policyPath: policyLayer.path,
      keyProblem: null,
      unknownConfigKeys: unknownKeys,
    }),
    logger,
    clock,
    ...(options.emulatorKnobs ? { emulatorKnobs: options.emulatorKnobs } : {}),
    demoDevices: options.demoDevices ?? false,
    // The avatar's volume, the visitor funnel's counts and the keep-alive each service accepts are kept here.
    dataDir,
    persistApiKey: async () => {
      throw new AvatarError('invalid_request', BROWSER_KEY_HINT);
    },
  });
  for (const problem of kiosk.appearance.castProblems) logger.error('Avatar problem', { message: problem.message });

  let quitting = false;
  const quit = (why: 'exit') => {
    if (quitting) return;
    quitting = true;
    options.onQuit?.(why);
  };
  const settings: HostSettings = {
    config,
    configError,
    configProblems,
    // As in the app: a file that could not be read is never written over (by staff or by the fleet).
    persistence: configError
      ? {
          read: () => ({}),
          write: async () => {
            throw new AvatarError('invalid_config', 'The configuration file is invalid; fix it (or delete it) before saving settings.');
          },
        }
      : persistence,
    policy: policyLayer,
  };
  const host: KioskHost = {
    dataDir,
    appRoot: options.appRoot,
    version: options.version,
    env,
    clock,
    platform: {
      getOpenAtLogin: () => null,
      setOpenAtLogin: () => {
        throw new AvatarError('invalid_request', 'Start at login is not available in the browser mode.');
      },
      exitKiosk: () => quit('exit'),
      // No restart: this process cannot start itself again under the terminal or service manager that
      // started it, and stopping instead left the page on "The kiosk is shutting down" for good.
      noKeyStorage: BROWSER_KEY_HINT,
    },
    // No reload, restart or screenshot: commands needing them are refused, in these words, before
    // anything else (a forced one must not hang up a visitor and then fail).
    fleetActions: { lacks: BROWSER_MODE_LACKS },
    logTail: options.logTail ?? (() => []),
  };

  // The same features as the app (features/index.ts), in the same order; those needing a window of our
  // own (keeping the display awake, the companion's tray) or an in-app updater do nothing here.
  const features = kioskFeatures();
  const started: Feature[] = [];
  const stopAll = async () => {
    // As in the app: the kiosk hangs up first, then the features stop, last started first and bounded.
    await kiosk.shutdown();
    await stopInReverse(started, { logger, clock });
  };
  try {
    for (const feature of features.list) {
      started.push(feature);
      await feature.start({ kiosk, channels, settings, host, logger });
    }
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }
  const ops = features.staff.ops!;

  let page: BrowserHost;
  try {
    page = await startBrowserHost({
      channels,
      events: kiosk.events,
      rendererDir: options.rendererDir,
      ...(options.port !== undefined ? { port: options.port } : {}),
      clock,
      logger,
      ...(options.onPageConnected ? { onPageConnected: options.onPageConnected } : {}),
      // As when Electron's renderer is lost: any call is hung up (it would go on billing), the panel locks.
      onPageGone: () => {
        void channels.dispatch('kiosk:staff:lock', undefined);
        void kiosk.calls.resetToAttract();
      },
    });
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }

  let closing: Promise<void> | null = null;
  return {
    host: page,
    kiosk,
    channels,
    ops,
    config,
    configError,
    configProblems,
    unknownConfigKeys: unknownKeys,
    close() {
      closing ??= (async () => {
        await page.close();
        await stopAll();
      })();
      return closing;
    },
  };
}

/** The data folder at 0700 and config.json at 0600 (POSIX; Windows keeps its per-user ACLs). */
export function makePrivate(dataDir: string, platform: NodeJS.Platform = process.platform): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (platform === 'win32') return;
  chmodSync(dataDir, 0o700);
  const configPath = join(dataDir, 'config.json');
  if (existsSync(configPath)) chmodSync(configPath, 0o600);
}
