/**
 * What a host gives the kiosk's features: the Electron app (main/host.ts) and the browser mode
 * (browser/kiosk-host.ts) each build one, and both start the same feature list (features/index.ts) with it.
 * A host leaves out what it cannot do; each feature then does without it and says so where staff or
 * operators look (a fleet command needing it is refused in the host's own words).
 */
import type { Clock } from '../core/clock.ts';
import type { AvatarError } from '../core/errors.ts';
import type { ProxyResolver } from '../core/proxy.ts';
import type { KioskConfig } from '../kiosk/config.ts';
import type { ConfigProblem } from '../kiosk/config-keeping.ts';
import type { PowerSaveBlockerLike } from '../kiosk/lifecycle.ts';
import type { Kiosk } from '../kiosk/compose.ts';
import type { PolicyLayer } from '../fleet/managed-config.ts';
import type { FleetControl } from '../fleet/command-table.ts';
import type { UpdaterLike } from '../fleet/safe-updates.ts';
import type { InstallModel } from '../fleet/update-policy.ts';
import type { PlatformHooks } from '../operations/staff-ops.ts';
import type { SettingsPersistence } from '../operations/settings.ts';

/** The settings as the host read them at start-up. */
export interface HostSettings {
  readonly config: KioskConfig;
  /** Why the config file was not used at all (null when it could be read). */
  readonly configError: AvatarError | null;
  /** Each setting not used; the rest applies. */
  readonly configProblems: readonly ConfigProblem[];
  /** The config file (reads {} and refuses writes when it could not be read: never written over). */
  readonly persistence: SettingsPersistence;
  /** The administrator's policy: its path, accepted settings, managed keys and problems. */
  readonly policy: PolicyLayer;
}

/** The kiosk's own window, where the host has one (the app; the browser mode's page is in a browser not ours). */
export interface HostWindow {
  isVisible(): boolean;
  /** `shown` true when the window is shown or restored, false when hidden or minimised; returns the unsubscribe. */
  onVisibility(listener: (shown: boolean) => void): () => void;
  /** The page's renderer process ended (crash, kill, out of memory). */
  onRendererGone(listener: (reason: string) => void): void;
  /** Keeps the display awake. */
  readonly powerSaveBlocker: PowerSaveBlockerLike;
  /** The desktop companion's tray and shortcut on this window (window mode `companion`). */
  companion(options: CompanionOptions): { dispose(): void };
}

export interface CompanionOptions {
  kiosk: Pick<Kiosk, 'calls' | 'events'>;
  config: KioskConfig;
  cast: ReadonlyArray<{ id: string; name: string }>;
}

/** The in-app updater and how this installation is updated (where the host has one). */
export interface HostUpdater {
  readonly model: InstallModel;
  /** Null where the model says the in-app updater stays off (a deb: the package manager updates it). */
  readonly updater: UpdaterLike | null;
}

export interface KioskHost {
  /** The data folder: the ledger, the metrics' launch state, the fleet's memory, the update state. */
  readonly dataDir: string;
  readonly appRoot: string;
  readonly version: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  /** Start at login, quit, restart, and where the key cannot be stored (staff operations). */
  readonly platform: PlatformHooks;
  /** What only some hosts can do for the fleet (reload, restart, screenshot), and why the rest is missing.
   *  Its reload also shows new settings after an `apply` (without one the page picks them up when it next
   *  connects). */
  readonly fleetActions: Pick<FleetControl, 'reload' | 'restart' | 'screenshot' | 'lacks'>;
  /** The venue's proxy for connections the host opens itself (absent: direct). */
  readonly proxy?: ProxyResolver;
  /** Whether the page runs in Chromium's sandbox, for the fleet status (absent: not reported). */
  readonly sandbox?: boolean;
  /** The last lines of the host's log, for the staff panel. */
  logTail(): string[];
  readonly window?: HostWindow;
  /** Absent where the host has no in-app updater (the browser mode runs from a checkout). */
  updater?(): HostUpdater;
}
