/**
 * Bringing the page back after the first load, without Electron: after a renderer crash, a GPU process
 * crash (Chromium restarts the GPU process, but the page can stay black) or a reload that fails. Each
 * reload waits a little longer while they keep coming (a crash loop must not spin the CPU and flood the
 * log); a page that stays up for `stableMs` resets the count (partysocket's `minUptime`); a reload that
 * fails is tried again, so the window is never left blank; and when reloads do not help, the whole app
 * is relaunched (a fresh GPU process and renderer, as a person would do).
 *
 * The lifecycle (lifecycle.ts) hangs up the call first and then asks here for the reload.
 */
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import { silentLogger, type Logger } from '../core/log.ts';

/** Pause before the 1st, 2nd, … reload of a streak (the last one repeats until the relaunch). */
export const RELOAD_DELAYS_MS: readonly number[] = [0, 2_000, 5_000, 15_000, 30_000];
/** Reloads in one streak before the app is relaunched instead. */
export const MAX_RELOADS_BEFORE_RELAUNCH = 5;
/** A page up this long ends the streak. */
export const STABLE_PAGE_MS = 60_000;

export interface RendererRecoveryOptions {
  /** Load the kiosk page (resolves when it has loaded, rejects when the load failed). */
  load(): Promise<void>;
  /** Relaunch the app (the caller quits through the lifecycle). */
  relaunch(): void;
  clock?: Clock;
  logger?: Logger;
  delaysMs?: readonly number[];
  maxReloads?: number;
  stableMs?: number;
}

export interface RendererRecovery {
  /** The page must come back (after a crash the lifecycle has handled). Coalesced while one is pending. */
  requestReload(reason: string): void;
  /** `render-process-gone` while a reload is under way: that reload failed, whatever the load says. */
  onRendererGone(reason: string): void;
  /** The page has loaded (the first load, a reload): the stability clock starts. */
  noteLoaded(): void;
  /** Reloads in the current streak (0 when the page is stable). */
  readonly streak: number;
  dispose(): void;
}

/** Whether a child process's end leaves the window needing a reload: a GPU process that did not exit
 *  cleanly (Electron's `child-process-gone` with `type: 'GPU'`). */
export function gpuGoneNeedsReload(details: { type: string; reason: string }): boolean {
  return details.type === 'GPU' && details.reason !== 'clean-exit';
}

export function createRendererRecovery(options: RendererRecoveryOptions): RendererRecovery {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const delays = options.delaysMs ?? RELOAD_DELAYS_MS;
  const maxReloads = options.maxReloads ?? MAX_RELOADS_BEFORE_RELAUNCH;
  const stableMs = options.stableMs ?? STABLE_PAGE_MS;
  let streak = 0;
  let stableTimer: TimerHandle | null = null;
  let timer: TimerHandle | null = null;
  let loading = false;
  let gone: ((reason: string) => void) | null = null;
  let finished = false;

  function schedule(reason: string): void {
    if (finished || timer !== null || loading) return;
    streak += 1;
    if (streak > maxReloads) {
      finished = true;
      logger.error('The kiosk page keeps failing; relaunching the app', { reason, reloads: streak - 1 });
      options.relaunch();
      return;
    }
    const delayMs = delays[Math.min(streak - 1, delays.length - 1)] ?? 0;
    logger.warn('Reloading the kiosk page', { reason, attempt: streak, of: maxReloads, inMs: delayMs });
    timer = clock.setTimeout(() => {
      timer = null;
      void attempt();
    }, delayMs);
  }

  async function attempt(): Promise<void> {
    loading = true;
    try {
      await new Promise<void>((resolve, reject) => {
        gone = (why) => reject(new Error(`the renderer process is gone (${why})`));
        options.load().then(resolve, reject);
      });
      loading = false;
      gone = null;
      noteLoaded();
    } catch (error) {
      loading = false;
      gone = null;
      logger.error('The kiosk page did not reload', { error: error instanceof Error ? error.message : String(error) });
      schedule('reload failed');
    }
  }

  /** The page is up: if it stays up (no reload pending or running) for `stableMs`, the streak ends. */
  function noteLoaded(): void {
    if (stableTimer !== null) clock.clearTimeout(stableTimer);
    stableTimer = clock.setTimeout(() => {
      stableTimer = null;
      if (!loading && timer === null) streak = 0;
    }, stableMs);
  }

  return {
    requestReload: schedule,
    onRendererGone(reason) {
      gone?.(reason);
    },
    noteLoaded,
    get streak() {
      return streak;
    },
    dispose() {
      finished = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      if (stableTimer !== null) clock.clearTimeout(stableTimer);
      stableTimer = null;
    },
  };
}
