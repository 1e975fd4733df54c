/**
 * Quit and crash handling, without Electron. Every way the app can go away (the window closing,
 * `before-quit`, SIGINT/SIGTERM) runs one shutdown: hang up a live session exactly once (so nothing is
 * left billing), stop the emulator, then let the app quit. A crashed renderer is not a quit: its call
 * is hung up (the renderer held the media, so the call is dead) and the page is reloaded, which
 * returns the kiosk to its attract screen. `index.ts` wires the real hooks; test/unit/quit.test.ts
 * drives each path with fakes.
 */
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { silentLogger, type Logger } from '../core/log.ts';

export interface LifecycleHooks {
  /** Hang up the current session if any (idempotent per session: KioskService guarantees it). */
  hangupSession(why: string): Promise<void>;
  /** Hang up (once) and release everything: KioskService.shutdown(). Idempotent. */
  shutdownService(): Promise<void>;
  /** Ask the app to quit again once shutdown is done (`app.quit()`; before-quit then lets it through). */
  quitApp(): void;
  /** Reload the renderer (back to the attract screen). */
  reloadRenderer(): void;
  logger?: Logger;
  clock?: Clock;
  /** Upper bound on shutdown before quitting anyway (a hung network must not keep a kiosk alive). */
  shutdownTimeoutMs?: number;
}

export type QuitSource = 'window-all-closed' | 'before-quit' | 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'tray' | 'other';
export type LifecyclePhase = 'running' | 'shutting-down' | 'done';

export interface Lifecycle {
  readonly phase: LifecyclePhase;
  /** Start the shutdown (once); resolves when the app has been told to quit. */
  requestQuit(source: QuitSource): Promise<void>;
  /** `app.on('before-quit')`: hold the quit until the session is hung up, then let it through. */
  onBeforeQuit(event: { preventDefault(): void }): void;
  onWindowAllClosed(): void;
  onSignal(signal: NodeJS.Signals): void;
  /** `webContents.on('render-process-gone')`. */
  onRenderProcessGone(details: { reason: string; exitCode?: number }): Promise<void>;
}

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 8_000;

export function createLifecycle(hooks: LifecycleHooks): Lifecycle {
  const logger = hooks.logger ?? silentLogger;
  const clock = hooks.clock ?? systemClock;
  const timeoutMs = hooks.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  let phase: LifecyclePhase = 'running';
  let quitting: Promise<void> | null = null;
  let recovering: Promise<void> | null = null;

  function requestQuit(source: QuitSource): Promise<void> {
    if (quitting) {
      logger.info('Already shutting down; ignoring another quit request', { source });
      return quitting;
    }
    phase = 'shutting-down';
    logger.info('Shutting down', { source });
    quitting = (async () => {
      let timer: ReturnType<Clock['setTimeout']> | null = null;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = clock.setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const outcome = await Promise.race([
        hooks.shutdownService().then(
          () => 'done' as const,
          (error: unknown) => {
            logger.error('Shutdown failed; quitting anyway', { error: String(error) });
            return 'done' as const;
          },
        ),
        timeout,
      ]);
      if (timer !== null) clock.clearTimeout(timer);
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
  };
}
