/**
 * The page's first load, retried, without Electron. Before the first load has finished there is no
 * attract screen to go back to: a renderer that crashes (or a load that fails) then used to end start-up
 * and the app. Instead the load is tried again after a short, growing pause, a bounded number of times;
 * only when every try failed does start-up fail (and main relaunches the app, without a dialog).
 *
 * After the first load, crashes are the lifecycle's (kiosk/lifecycle.ts: hang up, reload).
 */
import type { Clock } from '../core/clock.ts';
import { sleep, systemClock } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';

/** Pauses before the 2nd, 3rd, … try: five retries over about 15 s. */
export const FIRST_LOAD_RETRY_DELAYS_MS: readonly number[] = [500, 1_000, 2_000, 4_000, 8_000];

export interface FirstLoad {
  /** Load until one try succeeds; rejects (code `internal`) when the last retry failed too. */
  run(): Promise<void>;
  /** `render-process-gone` while the first load is under way: that try failed, whatever the load says. */
  onRendererGone(reason: string): void;
  /** Whether the first load has finished (from then on crashes are not this module's). */
  readonly done: boolean;
}

export function createFirstLoad(options: { load(): Promise<void>; clock?: Clock; retryDelaysMs?: readonly number[]; logger?: Logger }): FirstLoad {
  const clock = options.clock ?? systemClock;
  const delays = options.retryDelaysMs ?? FIRST_LOAD_RETRY_DELAYS_MS;
  const logger = options.logger ?? silentLogger;
  let done = false;
  let gone: ((reason: string) => void) | null = null;

  /** One try: the load, unless the renderer goes away first. */
  function attempt(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      gone = (reason) => reject(new Error(`the renderer process is gone (${reason})`));
      options.load().then(resolve, reject);
    }).finally(() => {
      gone = null;
    });
  }

  return {
    get done() {
      return done;
    },
    onRendererGone(reason) {
      gone?.(reason);
    },
    async run() {
      for (let retry = 0; ; retry++) {
        try {
          await attempt();
          done = true;
          if (retry > 0) logger.info('The kiosk page loaded after retrying', { retries: retry });
          return;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          const delayMs = delays[retry];
          if (delayMs === undefined) {
            throw new AvatarError('internal', `The kiosk page did not load after ${retry + 1} tries: ${message}`, { cause: error });
          }
          logger.error('The kiosk page failed to load; trying again', { error: message, retryInMs: delayMs, retry: retry + 1, of: delays.length });
          await sleep(clock, delayMs);
        }
      }
    },
  };
}
