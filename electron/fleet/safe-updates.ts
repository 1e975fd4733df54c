/**
 * Safe updates, carried out with electron-updater (a "generic" feed): check on start and every
 * `update.checkEveryMinutes`, download in the background, install only when update-policy.ts says so
 * (never during a call). The updater is injected (main passes electron-updater's `autoUpdater`; the tests
 * a real electron-updater instance on a local feed), so this file needs no Electron.
 */
import type { Clock, TimerHandle } from '../core/clock.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import type { UpdateSettings } from '../kiosk/fleet-config.ts';
import type { OpeningState } from './opening-hours.ts';
import { installDecision, offerAccepted, stagingBucket, updateFeed, type OfferedUpdate, type UpdateFeed } from './update-policy.ts';

/** The part of electron-updater's AppUpdater used here. */
export interface UpdaterLike {
  autoDownload: boolean;
  autoInstallOnAppQuit: boolean;
  allowDowngrade: boolean;
  /** electron-updater's rollout gate (it calls it with the feed's update info). */
  isUserWithinRollout: (info: OfferedUpdate) => boolean | Promise<boolean>;
  setFeedURL(options: { provider: 'generic'; url: string; channel?: string }): void;
  checkForUpdates(): Promise<{ isUpdateAvailable: boolean; updateInfo: { version: string } } | null>;
  downloadUpdate(): Promise<unknown>;
  quitAndInstall(isSilent?: boolean, isForceRunAfter?: boolean): void;
}

export type UpdatePhase = 'off' | 'idle' | 'checking' | 'downloading' | 'ready' | 'installing' | 'error';

export interface SafeUpdatesOptions {
  updater: UpdaterLike;
  settings: UpdateSettings | undefined;
  currentVersion: string;
  kioskId: string;
  clock: Clock;
  logger?: Logger;
  inCall(): boolean;
  /** Null when no opening hours are set. */
  opening(): OpeningState | null;
  /** When a call last started or ended (ms). */
  lastActivityMs(): number;
}

export interface SafeUpdates {
  readonly phase: UpdatePhase;
  readonly feed: UpdateFeed | null;
  /** The version downloaded and waiting to be installed. */
  readonly ready: string | null;
  /** Check now (and download what is accepted); resolves when that is done. */
  check(): Promise<void>;
  /** Something changed (a call ended, the kiosk closed): install now if allowed. */
  poke(): void;
  dispose(): void;
}

/** Longest wait between install attempts (the clock may jump; hours may change). */
const MAX_INSTALL_WAIT_MS = 60_000;

export function startSafeUpdates(options: SafeUpdatesOptions): SafeUpdates {
  const { updater, clock } = options;
  const logger = options.logger ?? silentLogger;
  const feed = updateFeed(options.settings, options.currentVersion);
  const bucket = stagingBucket(options.kioskId);
  let phase: UpdatePhase = feed ? 'idle' : 'off';
  let ready: string | null = null;
  let checkTimer: TimerHandle | null = null;
  let installTimer: TimerHandle | null = null;
  let disposed = false;
  let checking: Promise<void> | null = null;

  if (!feed) {
    if (options.settings?.url) logger.info('Updates: already on the pinned version', { version: options.currentVersion });
  } else {
    updater.autoDownload = false;
    // The kiosk decides when to install (never on a quit during a call).
    updater.autoInstallOnAppQuit = false;
    updater.allowDowngrade = feed.allowDowngrade;
    updater.isUserWithinRollout = (info) => {
      const verdict = offerAccepted(feed, info, bucket);
      logger.info(verdict.accept ? 'Updates: offered version accepted' : 'Updates: offered version not for this kiosk', { version: info.version, reason: verdict.reason });
      return verdict.accept;
    };
    updater.setFeedURL({ provider: 'generic', url: feed.url, channel: feed.channel });
    logger.info('Updates: feed set', { url: feed.url, channel: feed.channel, pinned: feed.pinned });
  }

  function scheduleCheck(): void {
    if (disposed || !feed) return;
    checkTimer = clock.setTimeout(() => {
      checkTimer = null;
      void check().finally(scheduleCheck);
    }, (options.settings?.checkEveryMinutes ?? 240) * 60_000);
  }

  async function check(): Promise<void> {
    if (!feed || disposed || ready) return;
    checking ??= (async () => {
      phase = 'checking';
      try {
        const result = await updater.checkForUpdates();
        if (!result?.isUpdateAvailable) {
          phase = 'idle';
          return;
        }
        phase = 'downloading';
        logger.info('Updates: downloading in the background', { version: result.updateInfo.version });
        await updater.downloadUpdate();
        ready = result.updateInfo.version;
        phase = 'ready';
        logger.info('Updates: downloaded; waiting for a safe moment to install', { version: ready });
        poke();
      } catch (error) {
        phase = 'error';
        logger.warn('Updates: the check or download failed; trying again later', { error: error instanceof Error ? error.message.slice(0, 300) : String(error) });
      } finally {
        checking = null;
      }
    })();
    return checking;
  }

  function poke(): void {
    if (disposed || !ready || phase === 'installing') return;
    if (installTimer !== null) clock.clearTimeout(installTimer);
    installTimer = null;
    const now = clock.now();
    const decision = installDecision({ nowMs: now, inCall: options.inCall(), opening: options.opening(), lastActivityMs: options.lastActivityMs(), idleMinutes: options.settings?.idleMinutes ?? 30 });
    if (decision.install) {
      phase = 'installing';
      logger.info('Updates: installing', { version: ready, reason: decision.reason });
      updater.quitAndInstall(true, true);
      return;
    }
    const wait = decision.retryAtMs === null ? MAX_INSTALL_WAIT_MS : Math.min(MAX_INSTALL_WAIT_MS, Math.max(1_000, decision.retryAtMs - now));
    installTimer = clock.setTimeout(() => {
      installTimer = null;
      poke();
    }, wait);
  }

  if (feed) {
    void check();
    scheduleCheck();
  }

  return {
    get phase() {
      return phase;
    },
    feed,
    get ready() {
      return ready;
    },
    check,
    poke,
    dispose() {
      disposed = true;
      if (checkTimer !== null) clock.clearTimeout(checkTimer);
      if (installTimer !== null) clock.clearTimeout(installTimer);
      checkTimer = installTimer = null;
    },
  };
}
