/**
 * The browser mode's kiosk, without Electron: the same pieces main starts (the kiosk's services, staff
 * operations, crash recovery, fleet metrics), wired to plain files instead of Electron's store, and the
 * page served by server.ts instead of a BrowserWindow.
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
import { startFleetHost, type FleetHost } from '../fleet/fleet-host.ts';
import { kioskMetricsSource, startFleetMetrics, type FleetMetrics } from '../fleet/metrics.ts';
import { loadPolicy } from '../fleet/managed-config.ts';
import { apiKeyFromEnv, type KioskConfig } from '../kiosk/config.ts';
import { keepConfigFile, type ConfigProblem } from '../kiosk/config-keeping.ts';
import { createChannelRegistry, type ChannelRegistry } from '../kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../kiosk/compose.ts';
import { openAvatarVolume } from '../kiosk/avatar-volume.ts';
import { systemTimeZone } from '../kiosk/visitor-funnel.ts';
import { openVisitorFunnelStore } from '../kiosk/visitor-funnel-store.ts';
import { createKeepAliveStore } from '../kiosk/keep-alive-store.ts';
import { createStaffOps, type StaffOps } from '../operations/staff-ops.ts';
import { jsonFilePersistence } from '../operations/settings.ts';
import { startBrowserHost, type BrowserHost } from './server.ts';
import { userConfigRoot } from '../core/user-folders.ts';

/** The user-data folder's name when the app runs from a checkout (`npm start`, not packaged): the
 *  package's name. The browser mode always runs from a checkout, so it shares that folder. */
export const CHECKOUT_DATA_FOLDER = 'avatar-kiosk';

/** The folder Electron's `app.getPath('userData')` names for this app under `npm start` (docs/operators.md). */
export function userDataDir(platform: NodeJS.Platform, env: Record<string, string | undefined>, home: string): string {
  return join(userConfigRoot(env, platform, home), CHECKOUT_DATA_FOLDER);
}

/** The data folder: AVATAR_KIOSK_DATA, else the app's user-data folder. */
export function dataDirFrom(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform, home: string = homedir()): string {
  return env.AVATAR_KIOSK_DATA?.trim() || userDataDir(platform, env, home);
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
    avatarVolume: openAvatarVolume({ dir: dataDir, logger }),
    // The visitor funnel's counts, kept in the data folder (docs/analytics.md).
    visitorStore: openVisitorFunnelStore({ dir: dataDir, timeZone: systemTimeZone(), clock: clock, logger }),
    // The keep-alive each service accepts, remembered in the data folder (a restart keeps it).
    keepAliveFor: createKeepAliveStore({ dir: dataDir, logger }).keepAliveFor,
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
  const ops = createStaffOps({
    kiosk,
    channels,
    dataDir,
    persistence: configError
      ? {
          read: () => ({}),
          write: async () => {
            throw new AvatarError('invalid_config', 'The configuration file is invalid; fix it (or delete it) before saving settings.');
          },
        }
      : persistence,
    env,
    appRoot: options.appRoot,
    clock,
    logger,
    version: options.version,
    configError,
    settingsNotUsed: configProblems.map((p) => p.line),
    policy: policyLayer,
    logTail: options.logTail ?? (() => []),
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
  });

  await ops.recoverWithin();

  const fleet: FleetMetrics | null = await startFleetMetrics({
    config,
    service: kioskMetricsSource(kiosk),
    version: options.version,
    launchStatePath: join(dataDir, 'metrics-state.json'),
    startupErrors: kiosk.appearance.attention.map((item) => item.code),
    logger,
  });

  // Opening hours and the broker link, as in the app; there is no window to capture or reload here.
  const fleetHost: FleetHost = startFleetHost({
    kiosk,
    ledger: ops.ledger,
    dataDir,
    version: options.version,
    clock,
    logger,
    configFile: persistence,
    env,
    policy: policyLayer.policy,
    appRoot: options.appRoot,
    registry: fleet?.metrics.registry ?? null,
    lastErrorCode: () => fleet?.metrics.health().lastErrorCode ?? null,
    // The fleet hears why the policy was not applied, or why the kiosk is out of order.
    policyError: ops.pin.state().outOfOrder ?? (policyLayer.problems.length ? policyLayer.problems.join(' ') : null),
    // No reload, restart or screenshot: commands needing them are refused, in these words, before
    // anything else (a forced one must not hang up a visitor and then fail).
    actions: { lacks: BROWSER_MODE_LACKS },
  });

  const host = await startBrowserHost({
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

  let closing: Promise<void> | null = null;
  return {
    host,
    kiosk,
    channels,
    ops,
    config,
    configError,
    configProblems,
    unknownConfigKeys: unknownKeys,
    close() {
      closing ??= (async () => {
        await host.close();
        await fleetHost.close().catch(() => undefined);
        ops.dispose();
        await fleet?.close().catch(() => undefined);
        await kiosk.shutdown();
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
