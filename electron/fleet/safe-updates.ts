/**
 * Safe updates, carried out with electron-updater (a "generic" feed, read through `SignedFeedProvider`):
 * check on start and every `update.checkEveryMinutes`, download in the background, install only when
 * update-policy.ts says so (never during a call). The updater is injected (main passes electron-updater's
 * `autoUpdater`; the tests a real electron-updater class on a local feed), so this file needs no Electron.
 *
 * From the decision to install until the app quits, new calls are held (`holdCalls`: the kiosk shows a calm
 * "back in a moment" screen): on macOS the update is fetched by Squirrel only inside `quitAndInstall`,
 * tens of seconds in which a visitor could otherwise start a call. If the install fails (the updater
 * reports an error, or the app is still running `INSTALL_TIMEOUT_MS` later) the phase goes to `error`, the
 * hold is lifted, the failure is logged and reported (status), and the next check starts over.
 */
import type { Clock, TimerHandle } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import type { UpdateSettings } from '../kiosk/fleet-config.ts';
import { pinRefusal } from './feed-binding.ts';
import { openFeedMemory } from './feed-memory.ts';
import type { OpeningState } from './opening-hours.ts';
import { SignedFeedProvider, type SignedFeedOptions } from './signed-feed.ts';
import { installDecision, offerAccepted, stagingBucket, updateFeed, type InstallModel, type OfferedUpdate, type UpdateFeed } from './update-policy.ts';

/** The part of electron-updater's AppUpdater used here. */
export interface UpdaterLike {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  allowDowngrade: boolean;
  /** electron-updater's rollout gate (it calls it with the feed's update info). */
  isUserWithinRollout: (info: OfferedUpdate) => boolean | Promise<boolean>;
  setFeedURL(options: SignedFeedOptions & { provider: 'custom'; updateProvider: typeof SignedFeedProvider }): void;
  checkForUpdates(): Promise<{ isUpdateAvailable: boolean; updateInfo: { version: string } } | null>;
  downloadUpdate(): Promise<unknown>;
  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean): void;
  /** electron-updater emits `error` for a failure outside a returned promise (the installer's start included). */
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export type UpdatePhase = 'off' | 'idle' | 'checking' | 'downloading' | 'ready' | 'installing' | 'error';

/** What the fleet status and the Status tab show about updates. */
export interface UpdateStatus {
  phase: UpdatePhase;
  /** How this installation is updated (`os-package-manager`: by apt/MDM, the app does not). */
  model: InstallModel['kind'];
  /** Why updates are off (null when they are on). */
  off: string | null;
  /** The version downloaded and waiting for a safe moment. */
  ready: string | null;
  pinned: string | null;
  /** The lowest version the fleet's signer allows, from the newest feed of the channel read (null: none read
   *  yet). A pin below it is refused. */
  floor: string | null;
  /** Install at the next moment without a call, not waiting for closing time or the idle minutes. */
  installWhenIdle: boolean;
  lastCheckAt: string | null;
  /** The last failure (check, download, a feed refused, a pin refused, install), or null since the last success. */
  lastError: string | null;
}

export interface SafeUpdatesOptions {
  updater: UpdaterLike;
  settings: UpdateSettings | undefined;
  currentVersion: string;
  kioskId: string;
  /** The kiosk's data folder: the newest feed read per channel is kept there (feed-memory.ts). */
  dataDir: string;
  clock: Clock;
  /** How this installation updates (update-policy.ts `installModel`). */
  model: InstallModel;
  logger?: Logger;
  inCall(): boolean;
  /** Null when no opening hours are set. */
  opening(): OpeningState | null;
  /** When a call last started or ended (ms). */
  lastActivityMs(): number;
  /** From the decision to install until the quit: refuse new calls, show "back in a moment". */
  holdCalls?(): void;
  /** The install failed: take calls again. */
  releaseCalls?(): void;
  /** The status changed (for the fleet link). */
  onChange?(status: UpdateStatus): void;
}

export interface SafeUpdates {
  readonly phase: UpdatePhase;
  readonly feed: UpdateFeed | null;
  /** The version downloaded and waiting to be installed. */
  readonly ready: string | null;
  readonly status: UpdateStatus;
  /** Check now (and download what is accepted); resolves when that is done. */
  check(): Promise<void>;
  /** Something changed (a call ended, the kiosk closed): install now if allowed. */
  poke(): void;
  /** Install as soon as no call is under way (an operator's "now, but never mid-call"). */
  installWhenIdle(): void;
  /** Throws `forbidden` (logged, and said in the status) when a pin to `version` is below the signer's floor. */
  assertPinAllowed(version: string | null): void;
  /** Pin a version (null: follow the channel again) until the next start; the host persists it. Throws as
   *  `assertPinAllowed` does. */
  pin(version: string | null): void;
  dispose(): void;
}

/** Longest wait between install attempts (the clock may jump; hours may change). */
const MAX_INSTALL_WAIT_MS = 60_000;
/** An install that has not ended the app by then failed (Squirrel.Mac downloads first: give it time). */
export const INSTALL_TIMEOUT_MS = 5 * 60_000;

export function startSafeUpdates(options: SafeUpdatesOptions): SafeUpdates {
  const { updater, clock } = options;
  const logger = options.logger ?? silentLogger;
  const bucket = stagingBucket(options.kioskId);
  const memory = openFeedMemory(options.dataDir, logger);
  let settings = options.settings;
  let feed: UpdateFeed | null = null;
  let off: string | null = null;
  let phase: UpdatePhase = 'off';
  let ready: string | null = null;
  let whenIdle = false;
  let lastCheckAt: string | null = null;
  let lastError: string | null = memory.problem;
  let checkTimer: TimerHandle | null = null;
  let installTimer: TimerHandle | null = null;
  let installDeadline: TimerHandle | null = null;
  let disposed = false;
  let checking: Promise<void> | null = null;
  let generation = 0;

  const floor = () => memory.newest(settings?.channel ?? 'latest')?.minVersion ?? null;
  const status = (): UpdateStatus => ({ phase, model: options.model.kind, off, ready, pinned: feed?.pinned ?? settings?.pinVersion ?? null, floor: floor(), installWhenIdle: whenIdle, lastCheckAt, lastError });
  const changed = () => {
    if (!disposed) options.onChange?.(status());
  };

  updater.autoDownload = false;
  // The kiosk decides when to install (never on a quit during a call).
  updater.autoInstallOnAppQuit = false;
  updater.isUserWithinRollout = (info) => {
    if (!feed) return false;
    const verdict = offerAccepted(feed, info, bucket);
    logger.info(verdict.accept ? 'Updates: offered version accepted' : 'Updates: offered version not for this kiosk', { version: info.version, reason: verdict.reason });
    return verdict.accept;
  };
  updater.on('error', (error) => {
    if (phase === 'installing') installFailed(error);
  });

  function configure(): void {
    feed = null;
    off = null;
    ready = null;
    generation++;
    // Off as asked (pinned to what runs) is news; off for a missing setting or a refused pin is a warning.
    let asked = false;
    if (!options.model.inApp) off = options.model.why;
    else if (!settings?.url) off = 'no update feed set (update.url)';
    else if (!settings.publicKeys?.length) off = 'no signing key set (update.publicKeys): an unsigned feed is never installed';
    else {
      feed = updateFeed(settings, options.currentVersion);
      asked = !feed;
      if (!feed) off = `pinned to ${options.currentVersion}, which is running`;
      const below = feed?.pinned ? pinRefusal(feed.pinned, floor()) : null;
      if (below) {
        // The policy or an earlier pin asks for what the signer no longer allows: nothing is read.
        feed = null;
        off = `the pin is refused: ${below}`;
      }
    }
    phase = feed ? 'idle' : 'off';
    if (!feed) {
      (asked ? logger.info : logger.warn)('Updates: off', { why: off });
      return;
    }
    updater.allowDowngrade = feed.allowDowngrade;
    updater.setFeedURL({
      provider: 'custom',
      updateProvider: SignedFeedProvider,
      url: feed.url,
      channel: feed.channel,
      publicKeys: settings!.publicKeys!,
      pinned: feed.pinned,
      memory,
      now: () => clock.now(),
    });
    logger.info('Updates: feed set', { url: feed.url, channel: feed.channel, pinned: feed.pinned, model: options.model.kind });
  }

  function scheduleCheck(): void {
    if (disposed) return;
    if (checkTimer !== null) clock.clearTimeout(checkTimer);
    checkTimer = clock.setTimeout(() => {
      checkTimer = null;
      void check().finally(scheduleCheck);
    }, (settings?.checkEveryMinutes ?? 240) * 60_000);
  }

  async function check(): Promise<void> {
    if (!feed || disposed || ready || phase === 'installing') return;
    const gen = generation;
    checking ??= (async () => {
      phase = 'checking';
      changed();
      try {
        const result = await updater.checkForUpdates();
        if (gen !== generation) return;
        lastCheckAt = new Date(clock.now()).toISOString();
        if (!result?.isUpdateAvailable) {
          phase = 'idle';
          lastError = null;
          return;
        }
        phase = 'downloading';
        changed();
        logger.info('Updates: downloading in the background', { version: result.updateInfo.version });
        await updater.downloadUpdate();
        if (gen !== generation) return;
        ready = result.updateInfo.version;
        phase = 'ready';
        lastError = null;
        logger.info('Updates: downloaded; waiting for a safe moment to install', { version: ready });
        poke();
      } catch (error) {
        if (gen !== generation) return;
        phase = 'error';
        lastError = errorText(error);
        const refused = (error as { code?: unknown }).code === 'ERR_UPDATER_FEED_BINDING' || (error as { code?: unknown }).code === 'ERR_UPDATER_FEED_SIGNATURE';
        logger.warn(refused ? 'Updates: the feed was refused; nothing from it is installed' : 'Updates: the check or download failed; trying again later', { error: lastError });
      } finally {
        checking = null;
        changed();
        // The feed changed (a pin) while this ran: its own check found this one out and waited; check it now.
        if (gen !== generation) void check();
      }
    })();
    return checking;
  }

  function poke(): void {
    if (disposed || !ready || phase === 'installing') return;
    if (installTimer !== null) clock.clearTimeout(installTimer);
    installTimer = null;
    const now = clock.now();
    const inCall = options.inCall();
    const decision = whenIdle && !inCall
      ? { install: true, reason: 'an operator asked to install when idle', retryAtMs: null }
      : installDecision({ nowMs: now, inCall, opening: options.opening(), lastActivityMs: options.lastActivityMs(), idleMinutes: settings?.idleMinutes ?? 30 });
    if (decision.install) {
      install(decision.reason);
      return;
    }
    const wait = decision.retryAtMs === null ? MAX_INSTALL_WAIT_MS : Math.min(MAX_INSTALL_WAIT_MS, Math.max(1_000, decision.retryAtMs - now));
    installTimer = clock.setTimeout(() => {
      installTimer = null;
      poke();
    }, wait);
  }

  function install(reason: string): void {
    phase = 'installing';
    // Calls are held first: from here until the quit no new call may start.
    options.holdCalls?.();
    logger.info('Updates: installing', { version: ready, reason });
    changed();
    installDeadline = clock.setTimeout(() => {
      installDeadline = null;
      installFailed(new Error(`the app was still running ${Math.round(INSTALL_TIMEOUT_MS / 1000)} s after the install started`));
    }, INSTALL_TIMEOUT_MS);
    try {
      updater.quitAndInstall(true, true);
    } catch (error) {
      installFailed(error);
    }
  }

  function installFailed(error: unknown): void {
    if (phase !== 'installing' || disposed) return;
    if (installDeadline !== null) clock.clearTimeout(installDeadline);
    installDeadline = null;
    lastError = `install of ${ready ?? 'the update'} failed: ${errorText(error)}`;
    logger.error('Updates: the install failed; taking calls again and trying from the next check', { version: ready, error: errorText(error) });
    phase = 'error';
    ready = null;
    whenIdle = false;
    options.releaseCalls?.();
    changed();
  }

  function assertPinAllowed(version: string | null): void {
    const below = version === null ? null : pinRefusal(version, floor());
    if (!below) return;
    lastError = `update-pin ${version} refused: ${below}`;
    logger.warn('Updates: a pin below the signer\'s floor was refused', { version, floor: floor() });
    changed();
    throw new AvatarError('forbidden', `${below}.`);
  }

  configure();
  if (feed) void check();
  scheduleCheck();

  return {
    get phase() {
      return phase;
    },
    get feed() {
      return feed;
    },
    get ready() {
      return ready;
    },
    get status() {
      return status();
    },
    check,
    poke,
    installWhenIdle() {
      whenIdle = true;
      logger.info('Updates: will install at the next moment without a call', { ready });
      changed();
      if (ready) poke();
      else void check();
    },
    assertPinAllowed,
    pin(version) {
      assertPinAllowed(version);
      if (phase === 'installing') return;
      const next: UpdateSettings = { ...(settings ?? { channel: 'latest', idleMinutes: 30, checkEveryMinutes: 240 }) };
      if (version) next.pinVersion = version;
      else delete next.pinVersion;
      settings = next;
      if (installTimer !== null) clock.clearTimeout(installTimer);
      installTimer = null;
      configure();
      changed();
      void check();
    },
    dispose() {
      disposed = true;
      for (const t of [checkTimer, installTimer, installDeadline]) if (t !== null) clock.clearTimeout(t);
      checkTimer = installTimer = installDeadline = null;
    },
  };
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}
