/**
 * How a transport carries the kiosk's contract, with no dependency at all (no zod, no Node, no DOM), so the
 * renderer can bundle it without pulling the contract's schemas in (the contract itself imports zod, and
 * the bundler keeps every schema a module builds at load time):
 *  - `buildKioskApi`: `window.kiosk` from the contract's shape (electron/contract.ts re-exports it typed
 *    as `KioskApi`; the preload, the E2E bridge and the browser mode's socket all use this one builder);
 *  - the browser mode's socket frames (electron/browser/ validates them with zod; the page only sends them).
 */

/** How the `KioskApi` method takes its argument: none; optional (`whenOmitted` is sent instead, if set);
 *  or required. */
export type ArgMode = 'none' | 'optional' | 'required';

/** What a transport needs to know of each method: the channel and how the argument is passed. */
export type ApiShape = Record<string, Record<string, { channel: string; arg: ArgMode; whenOmitted?: unknown }>>;

/**
 * Build `window.kiosk` from the shape: each method names its channel and sends at most one argument
 * (none for `none`; `whenOmitted` for an omitted optional one). `invoke` must resolve with a Result, never
 * reject. Self-contained on purpose (it uses nothing from outside its body), so the E2E bridge can send
 * its source into a page.
 */
export function buildKioskApi<Api, Event>(
  shape: ApiShape,
  invoke: (channel: string, arg?: unknown) => Promise<unknown>,
  onEvent: (listener: (event: Event) => void) => () => void,
): Api {
  const api: Record<string, Record<string, unknown>> = {};
  for (const group of Object.keys(shape)) {
    const methods: Record<string, unknown> = {};
    const entries = shape[group]!;
    for (const method of Object.keys(entries)) {
      const { channel, arg, whenOmitted } = entries[method]!;
      methods[method] =
        arg === 'none'
          ? () => invoke(channel)
          : (args?: unknown) => {
              const value = args === undefined ? whenOmitted : args;
              return value === undefined ? invoke(channel) : invoke(channel, value);
            };
    }
    if (group === 'session') methods.onEvent = onEvent;
    api[group] = Object.freeze(methods);
  }
  return Object.freeze(api) as unknown as Api;
}

// ---------------------------------------------------------------------------------------------------
// Browser mode: the same contract over one WebSocket on the page's own origin.

/** Where the page opens the socket (same origin as the page). */
export const KIOSK_SOCKET_PATH = '/kiosk-socket';
/**
 * Where a browser trades a one-time launch code for the page's session cookie
 * (`/launch?code=<code>` → the cookie set, and a page of ours that moves on to `/`). The code is good once and for a short while,
 * so a printed or logged address is worthless once used; the cookie is HttpOnly and never printed.
 */
export const LAUNCH_PATH = '/launch';

/** Close codes the host uses (4000–4999 are the application's). */
export const SOCKET_CLOSE = {
  /** Another page is connected: one page at a time. */
  busy: 4409,
  /** A frame that is not JSON or not a frame of this protocol. */
  badFrame: 4400,
  /** The host is shutting down. */
  shutdown: 4000,
} as const;

/** Page → host. The socket is authenticated by its upgrade request (the session cookie), so a page only
 *  ever sends calls. */
export type PageFrame = { type: 'call'; id: number; channel: string; arg?: unknown };

/** Host → page: `welcome` first (sent as soon as the socket opens). `result` carries the contract's Result for call `id`; `event` a KioskEvent. */
export type HostFrame<Event = unknown> =
  | { type: 'welcome'; shape: ApiShape }
  | { type: 'result'; id: number; result: unknown }
  | { type: 'event'; event: Event }
  | { type: 'error'; error: { code: 'invalid_request'; message: string } };
