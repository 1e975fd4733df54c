/**
 * The service connection: which avatar service the kiosk talks to and how it reaches it. The gateway when
 * the config says so, the direct surface with the key when there is one, else the built-in emulator
 * (demo mode: in-process on 127.0.0.1, port 0, with the emulator's own demo key: the real key does not
 * exist in that mode). It owns the REST client, the control sockets' transport, the venue's proxy route,
 * one warm keep-alive connection (kept fresh while the attract screen shows), the keep-alive style the
 * service accepts on its control sockets (shared by its calls and spares), and the emulator's life.
 *
 * It is rebuilt when the key or the settings change (`rebuild`): the client is dropped first, so nothing
 * made in between (a spare) runs on the old key, and `onDropped`/`onReady` let the kiosk's other services
 * follow. Once the kiosk shuts down (`closing`) nothing is built again.
 */
import type { PublicConfig } from '../contract.ts';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { addSecret, type Logger } from '../core/log.ts';
import { proxyAgent, routeFor, type ProxyResolver, type ProxyRoute } from '../core/proxy.ts';
import { KeepAlive } from '../core/keep-alive.ts';
import { ServiceClient } from '../core/rest-client.ts';
import type { ServiceTarget } from '../core/session-types.ts';
import { parseServiceTarget } from '../core/surface.ts';
import { createWsTransportFactory, wsTransportFactory, type TransportFactory } from '../core/transport.ts';
import { nodeFetch, WarmHttp } from '../core/warm-http.ts';
import { startEmulator as defaultStartEmulator, type EmulatorHandle, type EmulatorKnobs } from '../emulator/index.ts';
import type { KioskConfig } from './config.ts';

/** While the attract screen shows, the warm connection is checked (and renewed when stale) this often. */
export const WARM_REFRESH_MS = 20_000;

export type ServiceMode = PublicConfig['mode'];

export interface ServiceConnectionOptions {
  /** The configuration in use (its `service` block is read at each build). */
  config: KioskConfig;
  /** The effective key (kiosk/service-key.ts), read at each build; null: demo mode unless a gateway. */
  key(): string | null;
  /** The kiosk is shutting down: nothing is built or warmed again. */
  closing(): boolean;
  clock?: Clock;
  logger: Logger;
  /** The emulator to start in demo mode (tests inject knobs through `emulatorKnobs`). */
  startEmulator?: typeof defaultStartEmulator;
  emulatorKnobs?: Partial<EmulatorKnobs>;
  /** The control sockets' transport (tests); default: `ws` over the warm keep-alive agent. */
  transportFactory?: TransportFactory;
  /** The venue's proxy (main: Electron's `session.resolveProxy`); asked when the client is built, for the
   *  service's origin. Default: none, every connection is direct. */
  proxy?: ProxyResolver;
  /** The keep-alive that works with a service URL, remembered across restarts (kiosk/keep-alive-store.ts).
   *  Default: each client starts with the default keep-alive and adapts in memory only. */
  keepAliveFor?: (serviceUrl: string) => KeepAlive;
  /** The client was dropped for a rebuild (before anything new is built). */
  onDropped(): void;
  /** A new client is ready (not called when the configuration is invalid). */
  onReady(): void;
}

/** What the rest of the kiosk (and its features) read of the connection. */
export interface ServiceConnectionView {
  /** The client of the current service (null when misconfigured or while it is rebuilt). */
  readonly client: ServiceClient | null;
  /** Why no client could be built (bad service config): a call answers with it. */
  readonly clientError: AvatarError | null;
  readonly mode: ServiceMode;
  /** How the current client reaches the service (`direct` or the proxy's URL; null before it is built). */
  readonly route: ProxyRoute | null;
  /** The in-process emulator while in demo mode (null otherwise); for tests and diagnostics. */
  readonly emulator: EmulatorHandle | null;
  /** Control sockets as the current client opens them (through the venue's proxy when there is one). */
  readonly transportFactory: TransportFactory;
  /** The keep-alive the current service accepts (shared by its calls and spares; read it for each socket). */
  readonly keepAlive: KeepAlive;
  /** A `fetch` for another service URL (a leftover session's), routed like the client (the venue's proxy). */
  readonly fetch: typeof fetch;
}

export interface ServiceConnection extends ServiceConnectionView {
  /** While the attract screen shows, keep one connection to the service open and fresh (DNS, TCP, TLS done). */
  keepWarm(showing: boolean): void;
  /** (Re)build the client for the current key and settings. */
  rebuild(): Promise<void>;
  /** Stop warming, close the warm connection and the emulator. */
  close(): Promise<void>;
}

export function createServiceConnection(options: ServiceConnectionOptions): ServiceConnection {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const startEmulator = options.startEmulator ?? defaultStartEmulator;
  let emulator: EmulatorHandle | null = null;
  let client: ServiceClient | null = null;
  let clientError: AvatarError | null = null;
  let mode: ServiceMode = 'demo';
  let warm: WarmHttp | null = null;
  let route: ProxyRoute | null = null;
  let transportFactory: TransportFactory = options.transportFactory ?? wsTransportFactory;
  let warmTimer: TimerHandle | null = null;
  let keepAlive = new KeepAlive({ logger });

  function keepWarm(showing: boolean): void {
    if (warmTimer !== null) clock.clearTimeout(warmTimer);
    warmTimer = null;
    if (!showing || options.closing() || !warm) return;
    void warm.warm();
    warmTimer = clock.setTimeout(() => {
      warmTimer = null;
      keepWarm(true);
    }, WARM_REFRESH_MS);
  }

  async function closeEmulator(): Promise<void> {
    if (!emulator) return;
    const closing = emulator;
    emulator = null;
    await closing.close().catch((error: unknown) => logger.warn('Emulator did not close cleanly', { error: String(error) }));
  }

  /** Which service, from the current key and settings: gateway by config, direct with a key, else the emulator. */
  async function target(key: string | null): Promise<ServiceTarget> {
    if (mode === 'demo') {
      if (!emulator) {
        emulator = await startEmulator({ host: '127.0.0.1', port: 0, ...(options.emulatorKnobs ? { knobs: options.emulatorKnobs } : {}) });
        logger.info('Demo mode: no API key configured; using the built-in emulator', { baseUrl: emulator.baseUrl });
      }
      return parseServiceTarget({ surface: 'direct', baseUrl: emulator.baseUrl, apiKey: emulator.apiKey });
    }
    if (mode === 'gateway') {
      const gatewayHeaders = config.service.gatewayHeaders ?? {};
      // A device token, not our key: the gateway adds the service credential itself (spec §5).
      if (key && Object.values(gatewayHeaders).some((v) => v.includes(key))) {
        throw new AvatarError('invalid_config', 'A gateway header holds the service API key; the gateway adds the key itself. Use a per-kiosk token.');
      }
      for (const value of Object.values(gatewayHeaders)) addSecret(value);
      return parseServiceTarget({ surface: 'gateway', ...(config.service.gatewayUrl ? { gatewayUrl: config.service.gatewayUrl } : {}), gatewayHeaders });
    }
    return parseServiceTarget({ surface: 'direct', ...(config.service.baseUrl ? { baseUrl: config.service.baseUrl } : {}), apiKey: key! });
  }

  async function rebuild(): Promise<void> {
    // Once shutdown began nothing is built again: an emulator, warm connection or client made now would
    // outlive the shutdown (a key being stored, or settings being applied, when the kiosk started to quit).
    if (options.closing()) return;
    // No client while it is rebuilt, so whatever follows the drop (the spare's re-evaluation) makes no
    // session with the old key (a tap would take it and the visitor's call would run on the old account).
    client = null;
    clientError = null;
    options.onDropped();
    const key = options.key();
    mode = config.service.surface === 'gateway' ? 'gateway' : key ? 'direct' : 'demo';
    if (mode !== 'demo') await closeEmulator();
    let next: ServiceTarget;
    try {
      next = await target(key);
    } catch (error) {
      clientError = toAvatarError(error, 'invalid_config');
      logger.error('The service configuration is invalid; sessions cannot start until it is fixed', { message: clientError.message });
      return;
    }
    // One warm keep-alive connection for the REST calls and socket handshakes.
    warm?.close();
    const origin = next.surface === 'direct' ? next.baseUrl : next.gatewayUrl;
    route = await routeFor(origin, options.proxy, logger);
    warm = new WarmHttp({ baseUrl: origin, logger, route, ...(options.clock ? { clock: options.clock } : {}) });
    transportFactory = options.transportFactory ?? createWsTransportFactory({ agent: warm.agent });
    client = new ServiceClient({ target: next, logger, fetch: warm.fetch });
    keepAlive = options.keepAliveFor?.(origin) ?? new KeepAlive({ logger });
    logger.info('Service client ready', { mode });
    if (!options.closing()) options.onReady();
  }

  return {
    get client() {
      return client;
    },
    get clientError() {
      return clientError;
    },
    get mode() {
      return mode;
    },
    get route() {
      return route;
    },
    get emulator() {
      return emulator;
    },
    get keepAlive() {
      return keepAlive;
    },
    transportFactory: (url, headers, handlers) => transportFactory(url, headers, handlers),
    fetch: async (input, init) => {
      const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
      const agent = proxyAgent(await routeFor(url.href, options.proxy, logger));
      return nodeFetch(input, init, () => agent ?? undefined);
    },
    keepWarm,
    rebuild,
    async close() {
      keepWarm(false);
      warm?.close();
      await closeEmulator();
    },
  };
}
