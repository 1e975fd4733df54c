/**
 * The fatal-error handler, installed by the entry before anything else is loaded (kiosk/fatal.ts decides).
 * Imports only `electron`, Node and modules with no imports of their own, so nothing here can fail to
 * load. Until the log file is open, the error goes to the console and as a JSON line into main.log.
 */
import { app } from 'electron';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../core/clock.ts';
import { createFatalHandler, type FatalHandler } from '../kiosk/fatal.ts';
import { relaunchPlan, SUPERVISED_RESTART_EXIT_CODE } from '../kiosk/os-integration.ts';

let restartByExit = false;

/** Start the app again as the platform needs it (an AppImage relaunches its own file; under a supervisor
 *  the exit code asks for it, see `exitCode`). The caller then quits or exits. */
export function relaunch(): void {
  const plan = relaunchPlan(process.env, process.argv);
  if (plan.kind === 'supervisor') restartByExit = true;
  else if (plan.options) app.relaunch(plan.options);
  else app.relaunch();
}

/** The code to exit with: `normal`, or the supervisor's restart code once a relaunch was asked for. */
export function exitCode(normal: number): number {
  return restartByExit ? SUPERVISED_RESTART_EXIT_CODE : normal;
}

/** Console, and main.log when its folder can be found (getPath may fail this early on some systems). */
function earlyLog(message: string, details: Record<string, unknown>): void {
  const line = JSON.stringify({ at: new Date().toISOString(), level: 'error', scope: 'main', message, ...details });
  console.error(line);
  try {
    const dir = app.getPath('logs');
    mkdirSync(dir, { recursive: true });
    appendFileSync(join(dir, 'main.log'), `${line}\n`);
  } catch {
    // The console line is all there is.
  }
}

let logTo: (message: string, details: Record<string, unknown>) => void = earlyLog;

export const fatal: FatalHandler = createFatalHandler({
  log: (message, details) => logTo(message, details),
  relaunch,
  exit: (code) => app.exit(exitCode(code)),
  clock: systemClock,
});

/** Once the log file is open, fatal errors are written there (redacted) like everything else. */
export function logFatalTo(log: (message: string, details: Record<string, unknown>) => void): void {
  logTo = log;
}

// A listener of our own on each: Electron shows its modal box only when nobody else listens.
process.on('uncaughtException', (error) => fatal.report('uncaughtException', error));
process.on('unhandledRejection', (reason) => fatal.report('unhandledRejection', reason));
