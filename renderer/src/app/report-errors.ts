/**
 * Renderer errors go to main's log through the contract (`app.reportError`), where they
 * are redacted and written with everything else. Nothing is shown on screen. A burst (a render loop
 * throwing every frame) is capped: at most MAX_PER_MINUTE reports a minute, then one line saying how
 * many were dropped.
 */
import type { KioskApi, ReportErrorArgs } from '../../../electron/contract.ts';

export const MAX_PER_MINUTE = 10;

interface ErrorTarget {
  addEventListener(type: 'error' | 'unhandledrejection', listener: (event: Event) => void): void;
  removeEventListener(type: 'error' | 'unhandledrejection', listener: (event: Event) => void): void;
}

export function forwardRendererErrors(app: KioskApi['app'] | null | undefined, target: ErrorTarget, now: () => number = Date.now): () => void {
  if (!app) return () => undefined;
  let windowStartMs = now();
  let sent = 0;
  let dropped = 0;
  const send = (args: ReportErrorArgs): void => {
    const t = now();
    if (t - windowStartMs >= 60_000) {
      if (dropped > 0) void app.reportError({ message: `${dropped} more renderer errors were not reported (rate limit).`, source: 'renderer' });
      windowStartMs = t;
      sent = 0;
      dropped = 0;
    }
    if (sent >= MAX_PER_MINUTE) {
      dropped++;
      return;
    }
    sent++;
    void app.reportError({
      message: args.message.slice(0, 2000) || 'Unknown renderer error',
      ...(args.stack ? { stack: args.stack.slice(0, 8000) } : {}),
      ...(args.source ? { source: args.source.slice(0, 200) } : {}),
    });
  };
  const onError = (event: Event): void => {
    const e = event as ErrorEvent;
    const err = e.error as unknown;
    send({
      message: err instanceof Error ? `${err.name}: ${err.message}` : String(e.message ?? 'error'),
      ...(err instanceof Error && err.stack ? { stack: err.stack } : {}),
      source: e.filename ? `${e.filename}:${e.lineno ?? 0}` : 'window.onerror',
    });
  };
  const onRejection = (event: Event): void => {
    const reason = (event as PromiseRejectionEvent).reason as unknown;
    send({
      message: reason instanceof Error ? `Unhandled rejection: ${reason.name}: ${reason.message}` : `Unhandled rejection: ${String(reason)}`,
      ...(reason instanceof Error && reason.stack ? { stack: reason.stack } : {}),
      source: 'unhandledrejection',
    });
  };
  target.addEventListener('error', onError);
  target.addEventListener('unhandledrejection', onRejection);
  return () => {
    target.removeEventListener('error', onError);
    target.removeEventListener('unhandledrejection', onRejection);
  };
}
