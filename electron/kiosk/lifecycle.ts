/**
 * Quit and crash handling, without Electron. Every way the app can go away (the window closing,
 * `before-quit`, SIGINT/SIGTERM) runs one shutdown: hang up a live session exactly once (so nothing is
 * left billing), stop the emulator, then let the app quit. A crashed renderer is not a quit: its call
 * is hung up (the renderer held the media, so the call is dead) and the page is reloaded, which
 * returns the kiosk to its attract screen. `index.ts` wires the real hooks; test/unit/kiosk/quit.test.ts
 * drives each path with fakes.
 */
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { silentLogger, type Logger } from '../core/log.ts';

export interface LifecycleHooks {
  /** Hang up the current session if any (idempotent per session: the call orchestrator guarantees it). */
  hangupSession(why: string): Promise<void>;
  /** Hang up (once) and release everything: the kiosk's `shutdown()`. Idempotent. */
  shutdownService(): Promise<void>;
  /** Ask the app to quit again once shutdown is done (`app.quit()`; before-quit then lets it through). */
  quitApp(): void;
  /** Reload the renderer (back to the attract screen). */
  reloadRenderer(): void;
  logger?: Logger;
  clock?: Clock;
  /** Upper bound on shutdown before quitting anyway (a hung network must not keep a kiosk alive). */
  shutdownTimeoutMs?: number;
  /** `app.relaunch()` then `app.exit(0)`: after a fatal error in main, start again rather than die. */
  relaunchApp?(): void;
  /** How long the renderer may stay unresponsive before it is reloaded. Default 10 000 ms. */
  unresponsiveReloadMs?: number;
}

export type QuitSource = 'window-all-closed' | 'before-quit' | 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'tray' | 'update' | 'other';
export type LifecyclePhase = 'running' | 'shutting-down' | 'done';

export interface Lifecycle {
  readonly phase: LifecyclePhase;
  /** Start the shutdown (once); resolves when the app has been told to quit. */
  requestQuit(source: QuitSource): Promise<void>;
  /** `app.on('before-quit')`: hold the quit until the session is hung up, then let it through. */
  onBeforeQuit(event: { preventDefault(): void }): void;
  onWindowAllClosed(): void;
  /**
   * A kiosk window's `close` event. In kiosk mode the window closes only while the app itself is
   * quitting (staff exit or restart, a signal, an update): Alt+F4 or any other window-manager close
   * would otherwise skip the PIN-guarded "Exit kiosk". Answers whether the close was refused.
   */
  onKioskWindowClose(event: { preventDefault(): void }): boolean;
  /** `autoUpdater.on('before-quit-for-update')`: the updater closes the windows before `before-quit`. */
  onBeforeQuitForUpdate(): void;
  onSignal(signal: NodeJS.Signals): void;
  /** `webContents.on('render-process-gone')`. */
  onRenderProcessGone(details: { reason: string; exitCode?: number }): Promise<void>;
  /** `process.on('uncaughtException' | 'unhandledRejection')`: log, hang up (bounded), relaunch. Once. */
  onFatalError(kind: 'uncaughtException' | 'unhandledRejection', error: unknown): Promise<void>;
  /** `webContents.on('unresponsive')`: reload after `unresponsiveReloadMs` unless it recovers first. */
  onUnresponsive(): void;
  /** `webContents.on('responsive')`. */
  onResponsive(): void;
}

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 8_000;
/** How long the quit waits for the features to stop (the fleet's "stopped" status, /metrics closing). */
export const FEATURE_STOP_TIMEOUT_MS = 3_000;
export const DEFAULT_UNRESPONSIVE_RELOAD_MS = 10_000;

export function createLifecycle(hooks: LifecycleHooks): Lifecycle {
  const logger = hooks.logger ?? silentLogger;
  const clock = hooks.clock ?? systemClock;
  const timeoutMs = hooks.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  let phase: LifecyclePhase = 'running';
  let quitting: Promise<void> | null = null;
  let recovering: Promise<void> | null = null;
  let fatal: Promise<void> | null = null;
  let unresponsiveTimer: ReturnType<Clock['setTimeout']> | null = null;

  /** Run shutdownService, bounded by the timeout. */
  async function boundedShutdown(): Promise<'done' | 'timeout'> {
    let timer: ReturnType<Clock['setTimeout']> | null = null;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = clock.setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([
      hooks.shutdownService().then(
        () => 'done' as const,
        (error: unknown) => {
          logger.error('Shutdown failed', { error: String(error) });
          return 'done' as const;
        },
      ),
      timeout,
    ]);
    if (timer !== null) clock.clearTimeout(timer);
    return outcome;
  }

  function requestQuit(source: QuitSource): Promise<void> {
    if (quitting) {
      logger.info('Already shutting down; ignoring another quit request', { source });
      return quitting;
    }
    phase = 'shutting-down';
    logger.info('Shutting down', { source });
    quitting = (async () => {
      const outcome = await boundedShutdown();
      if (outcome === 'timeout') logger.warn('Shutdown timed out; quitting anyway', { timeoutMs });
      phase = 'done';
      hooks.quitApp();
    })();
    return quitting;
  }

  return {
    get phase() {
      return phase;
    },
    requestQuit,
    onBeforeQuit(event) {
      if (phase === 'done') return; // our own quitApp() after shutdown: let it through
      event.preventDefault();
      void requestQuit('before-quit');
    },
    onWindowAllClosed() {
      void requestQuit('window-all-closed');
    },
    onKioskWindowClose(event) {
      if (phase !== 'running') return false;
      event.preventDefault();
      logger.warn('A window close was refused: the kiosk quits only through the staff panel, a signal or an update');
      return true;
    },
    onBeforeQuitForUpdate() {
      void requestQuit('update');
    },
    onSignal(signal) {
      const source: QuitSource = signal === 'SIGINT' || signal === 'SIGTERM' || signal === 'SIGHUP' ? signal : 'other';
      void requestQuit(source);
    },
    async onRenderProcessGone(details) {
      if (phase !== 'running') return; // quitting anyway: shutdown hangs up
      logger.error('The renderer process is gone; hanging up and reloading', { reason: details.reason, exitCode: details.exitCode });
      if (recovering) return recovering;
      recovering = (async () => {
        try {
          await hooks.hangupSession(`renderer gone: ${details.reason}`);
        } catch (error) {
          logger.warn('Hangup after a renderer crash failed', { error: String(error) });
        }
        if (phase === 'running') hooks.reloadRenderer();
      })().finally(() => {
        recovering = null;
      });
      return recovering;
    },
    onFatalError(kind, error) {
      if (fatal) {
        logger.error('Another fatal error while recovering from one', { kind, error: describeError(error) });
        return fatal;
      }
      logger.error('Fatal error in main: hanging up and relaunching the kiosk', { kind, error: describeError(error) });
      fatal = (async () => {
        if (phase === 'running') {
          phase = 'shutting-down';
          const outcome = await boundedShutdown();
          if (outcome === 'timeout') logger.warn('Hang-up timed out after a fatal error; relaunching anyway', { timeoutMs });
        }
        phase = 'done';
        if (hooks.relaunchApp) hooks.relaunchApp();
        else hooks.quitApp();
      })();
      return fatal;
    },
    onUnresponsive() {
      if (phase !== 'running' || unresponsiveTimer !== null) return;
      const delayMs = hooks.unresponsiveReloadMs ?? DEFAULT_UNRESPONSIVE_RELOAD_MS;
      logger.warn('The renderer is unresponsive', { reloadInMs: delayMs });
      unresponsiveTimer = clock.setTimeout(() => {
        unresponsiveTimer = null;
        if (phase !== 'running') return;
        logger.error('The renderer stayed unresponsive; hanging up and reloading', { afterMs: delayMs });
        void (async () => {
          try {
            await hooks.hangupSession('renderer unresponsive');
          } catch (error) {
            logger.warn('Hangup for an unresponsive renderer failed', { error: String(error) });
          }
          if (phase === 'running') hooks.reloadRenderer();
        })();
      }, delayMs);
    },
    onResponsive() {
      if (unresponsiveTimer === null) return;
      clock.clearTimeout(unresponsiveTimer);
      unresponsiveTimer = null;
      logger.info('The renderer is responsive again');
    },
  };
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}${error.stack ? `\n${error.stack.split('\n').slice(1, 6).join('\n')}` : ''}`;
  return String(error);
}

// Keep the display awake: while live, and on a kiosk screen whenever its window shows.
export interface PowerSaveBlockerLike {
  start(type: 'prevent-display-sleep'): number;
  stop(id: number): void;
}

export interface PowerSaveGuard {
  onEvent(event: { type: string; state?: { phase: string } }): void;
  /** The window was shown (`show`, `restore`) or hidden (`hide`, `minimize`). */
  windowShown(shown: boolean): void;
  readonly active: boolean;
}

/**
 * One `prevent-display-sleep` blocker, held while a call is live (every window mode) and, with
 * `whileShown` (the kiosk window, not the companion on someone's desk), for as long as the window shows:
 * an attract screen that goes dark or locks cannot invite anyone.
 */
export function createPowerSaveGuard(blocker: PowerSaveBlockerLike, logger: Logger = silentLogger, options: { whileShown?: boolean } = {}): PowerSaveGuard {
  let id: number | null = null;
  let inCall = false;
  let shown = false;
  const update = () => {
    const want = inCall || (options.whileShown === true && shown);
    if (want && id === null) {
      id = blocker.start('prevent-display-sleep');
      logger.debug('Display sleep blocked', { inCall, shown });
    } else if (!want && id !== null) {
      blocker.stop(id);
      id = null;
      logger.debug('Display sleep allowed again');
    }
  };
  return {
    onEvent(event) {
      if (event.type !== 'state' || !event.state) return;
      const phase = event.state.phase;
      if (phase === 'live' || phase === 'reconnecting') inCall = true;
      else if (phase === 'ended' || phase === 'failed' || phase === 'idle') inCall = false;
      update();
    },
    windowShown(isShown) {
      shown = isShown;
      update();
    },
    get active() {
      return id !== null;
    },
  };
}

/**
 * Stop everything in `stoppables`, last first (the fleet link before the ledger it forwards), each
 * awaited, all within `timeoutMs`: the quit waits for them (the fleet hears "stopped") but a broker that
 * does not answer cannot keep the app alive. Resolves `'timeout'` when the bound cut it short.
 */
export async function stopInReverse(
  stoppables: readonly { name: string; stop?(): Promise<void> | void }[],
  options: { timeoutMs?: number; clock?: Clock; logger?: Logger } = {},
): Promise<'done' | 'timeout'> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const timeoutMs = options.timeoutMs ?? FEATURE_STOP_TIMEOUT_MS;
  let timer: ReturnType<Clock['setTimeout']> | null = null;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = clock.setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const all = (async () => {
    for (const item of [...stoppables].reverse()) {
      try {
        await item.stop?.();
      } catch (error) {
        logger.warn('A feature did not stop cleanly', { feature: item.name, error: String(error) });
      }
    }
    return 'done' as const;
  })();
  const outcome = await Promise.race([all, timeout]);
  if (timer !== null) clock.clearTimeout(timer);
  if (outcome === 'timeout') logger.warn('The features did not stop in time; quitting anyway', { timeoutMs });
  return outcome;
}
