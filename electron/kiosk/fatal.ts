/**
 * What happens to an error nobody caught in main. From the first line of the entry until the kiosk's
 * lifecycle exists, an error (a module that fails to load, a throw during start-up) is logged and the
 * app relaunched after a pause: never Electron's modal error box, which nobody may be there to click and
 * which keeps the kiosk from coming back. Once running, the lifecycle takes over (it hangs up a live
 * call first). One handler for the whole run, so there is never a moment with none or with two.
 */
import type { Clock, TimerHandle } from '../core/clock.ts';

/** Pause before relaunching after a start-up failure: a display or keyring not ready yet may be by then,
 *  and a start-up that always fails must not spin. */
export const STARTUP_RELAUNCH_DELAY_MS = 5_000;

export type FatalKind = 'uncaughtException' | 'unhandledRejection' | 'load' | 'startup';

export interface FatalHooks {
  /** Where the error is written (the console and, when it can be opened, the log file). */
  log(message: string, details: Record<string, unknown>): void;
  /** Start the app again (the caller's relaunch, AppImage-aware). */
  relaunch(): void;
  exit(code: number): void;
  clock: Clock;
}

export interface FatalHandler {
  /** An error nobody caught. */
  report(kind: FatalKind, error: unknown): void;
  /** From now on errors go to `handler` (the running kiosk's lifecycle). */
  takeOver(handler: (kind: 'uncaughtException' | 'unhandledRejection', error: unknown) => void): void;
  /** Whether a relaunch is scheduled. */
  readonly relaunching: boolean;
}

export function describeFatal(error: unknown): { message: string; stack?: string } {
  if (error instanceof Error) return { message: error.message, ...(error.stack ? { stack: error.stack.split('\n').slice(0, 8).join('\n') } : {}) };
  return { message: String(error) };
}

export function createFatalHandler(hooks: FatalHooks): FatalHandler {
  let running: ((kind: 'uncaughtException' | 'unhandledRejection', error: unknown) => void) | null = null;
  let timer: TimerHandle | null = null;
  return {
    report(kind, error) {
      if (running && (kind === 'uncaughtException' || kind === 'unhandledRejection')) return running(kind, error);
      if (timer !== null) {
        hooks.log('Another fatal error before the relaunch', { kind, error: describeFatal(error) });
        return;
      }
      hooks.log('Fatal start-up error; relaunching the kiosk', { kind, error: describeFatal(error), relaunchInMs: STARTUP_RELAUNCH_DELAY_MS });
      timer = hooks.clock.setTimeout(() => {
        hooks.relaunch();
        hooks.exit(1);
      }, STARTUP_RELAUNCH_DELAY_MS);
    },
    takeOver(handler) {
      running = handler;
    },
    get relaunching() {
      return timer !== null;
    },
  };
}
