/**
 * The E2E stand-in for the preload: installs `window.kiosk` (the contract's `KioskApi`) in the page and
 * forwards every call to a backend in the test process — the REAL kiosk's services
 * (electron/kiosk/compose.ts) driving the real SessionController against the real emulator over
 * HTTP and WebSocket. Only the Electron IPC hop is replaced:
 *   - calls:  page → `exposeBinding('__kioskInvoke')` → `backend.dispatch(channel, arg)` (the channel
 *     registry main's ipcMain handlers dispatch through, so arguments are validated by the contract's schemas);
 *   - events: `backend.onEvent` → `page.evaluate(window.__kioskEmit)`, in order.
 * Argument conventions are the preload's: both build the API with the contract's `buildKioskApi`.
 */
import type { Page } from 'playwright';
import { API_SHAPE, buildKioskApi, type KioskEvent, type Result } from '../../electron/contract.ts';

/**
 * Runs in the page before any of its scripts: defines the frozen `window.kiosk` with the contract's own
 * `buildKioskApi` (its source is sent into the page), so the bridge derives every method from the same
 * table as the preload. Plain JS on purpose: tsx/esbuild decorate functions with a `__name(...)` helper
 * that does not exist in the page, so the page gets a no-op one.
 */
const PAGE_SIDE = `function (shape, buildKioskApi) {
  const listeners = new Set();
  const invoke = async (channel, arg) => {
    try {
      return await (arg === undefined ? window.__kioskInvoke(channel) : window.__kioskInvoke(channel, arg));
    } catch (error) {
      return { ok: false, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
    }
  };
  Object.defineProperty(window, '__kioskEmit', {
    value: (event) => {
      for (const l of [...listeners]) {
        try { l(event); } catch (e) { console.error(e); }
      }
    },
  });
  const onEvent = (listener) => {
    if (typeof listener !== 'function') return () => {};
    listeners.add(listener);
    return () => { listeners.delete(listener); };
  };
  Object.defineProperty(window, 'kiosk', { value: buildKioskApi(shape, invoke, onEvent) });
}`;

export interface KioskBackend {
  dispatch(channel: string, rawArg: unknown): Promise<Result<unknown>>;
  onEvent(listener: (event: KioskEvent) => void): () => void;
}

export interface BridgeHandle {
  /** Every call the page made, in order (channel and argument). */
  /** Every call from the page, with when it reached the bridge (Date.now()). */
  readonly calls: Array<{ channel: string; arg: unknown; atMs?: number }>;
  /** Every event forwarded to the page, in order. */
  readonly events: KioskEvent[];
  /** Wait until all forwarded events have been delivered to the page. */
  flush(): Promise<void>;
  dispose(): void;
}

export async function installKioskBridge(page: Page, backend: KioskBackend): Promise<BridgeHandle> {
  const calls: BridgeHandle['calls'] = [];
  const events: KioskEvent[] = [];
  await page.exposeBinding('__kioskInvoke', async (_source, channel: string, arg: unknown) => {
    calls.push({ channel, arg, atMs: Date.now() });
    return backend.dispatch(channel, arg);
  });
  // A string, not a function: tsx/esbuild decorate functions with `__name(...)` helpers that do not
  // exist in the page.
  await page.addInitScript({ content: `{ const __name = (f) => f; (${PAGE_SIDE})(${JSON.stringify(API_SHAPE)}, ${buildKioskApi.toString()}); }` });

  let chain: Promise<void> = Promise.resolve();
  let disposed = false;
  // Events waiting for the page, delivered in order. Whatever queued up while the previous delivery was in
  // flight goes in ONE evaluate: Electron's IPC delivers an event in microseconds, a Playwright round trip on
  // a loaded machine takes far longer, and a burst (a spare's held states) must not queue up behind it.
  let queued: KioskEvent[] = [];
  const off = backend.onEvent((event) => {
    events.push(event);
    if (disposed) return;
    queued.push(event);
    if (queued.length > 1) return; // a delivery is already scheduled; it takes this one too
    chain = chain.then(async () => {
      const batch = queued;
      queued = [];
      try {
        await page.evaluate(`for (const e of ${JSON.stringify(batch)}) window.__kioskEmit?.(e)`);
      } catch {
        // The page is navigating or closed: the events are lost, as they would be for a reloading renderer.
      }
    });
  });
  return {
    calls,
    events,
    flush: () => chain,
    dispose() {
      disposed = true;
      off();
    },
  };
}
