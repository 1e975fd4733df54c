/**
 * A warm connection to the service: one keep-alive `node:http(s)` Agent per
 * service origin, shared by the REST client (through `fetch`, a small node:http implementation of the
 * subset `ServiceClient` uses) and by the control socket's WebSocket handshake (`ws` takes the agent).
 *
 * - `warm()` opens a connection ahead of need (DNS, TCP and, for https, TLS) and parks it; the next request
 *   to that origin takes it instead of connecting, so the create and the socket handshake on a tap pay no
 *   connection set-up. A parked connection older than `maxParkedMs`, or closed by the server, is dropped.
 * - After a response the connection goes back to the agent's keep-alive pool (LIFO), so the socket
 *   handshake right after a create reuses the create's connection; an upgraded socket leaves the pool.
 * - A pooled connection idle for `maxIdleMs` (or a second less than the server's `Keep-Alive: timeout=`,
 *   when that is shorter) is closed by us. Servers close idle connections too, and a request written as
 *   the server closes arrives on a dead socket (ECONNRESET). The create is never retried (a retry could
 *   open a second room), so it must not go out on a connection the server may be closing: the visitor
 *   would see "The connection was lost" on a tap after a few seconds' pause. Node's agent honours the
 *   server's hint only when it has a timeout of its own, hence `timeout` on the agent.
 * - `close()` destroys every connection (parked, pooled) and stops nothing else: there are no timers.
 *
 * Why not global fetch: it keeps connections alive too, but its pool cannot be pre-connected nor shared with
 * `ws`, and it costs about 1 ms more per request here (docs/benchmarks.md).
 */
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { systemClock, type Clock } from './clock.ts';
import { silentLogger, type Logger } from './log.ts';
import { proxyAgent, type ProxyRoute } from './proxy.ts';

export interface WarmHttpOptions {
  /** The service's origin (its base or gateway URL; only the scheme, host and port are used). */
  baseUrl: string;
  clock?: Clock;
  logger?: Logger;
  /** A parked (never used) connection is replaced after this long. Default 30 000 ms. */
  maxParkedMs?: number;
  /** A pooled connection idle this long is closed (shorter when the server announces a shorter keep-alive).
   *  Default `POOLED_IDLE_MS`. */
  maxIdleMs?: number;
  /** How to reach the origin (core/proxy.ts `routeFor`). Through a proxy, the agent is the proxy's
   *  (tunnels pooled keep-alive) and `warm()` does nothing: a tunnel is opened by the first request. */
  route?: ProxyRoute;
}

/**
 * How long a pooled connection may sit idle before we close it: under the shortest idle timeout common
 * servers use (Node and Apache close after 5 s), so a request never races the server's close. Nothing on
 * the tap's path loses by it: the parked connection (`warm`) serves the next create.
 */
export const POOLED_IDLE_MS = 4_000;

type ParkableSocket = Duplex & { destroyed: boolean; ref?: () => unknown; unref?: () => unknown };

interface Parked {
  socket: ParkableSocket;
  sinceMs: number;
  /** Our own listeners (only ours are removed when it is taken; TLS sockets have internal ones). */
  onClose: () => void;
  onError: () => void;
}

type AgentLike = http.Agent & { createConnection: http.Agent['createConnection'] };

export class WarmHttp {
  readonly agent: http.Agent;
  readonly #origin: URL;
  readonly #secure: boolean;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #maxParkedMs: number;
  #parked: Parked | null = null;
  #warming: Promise<void> | null = null;
  #closed = false;
  readonly #proxied: boolean;
  /** Connections taken from the park, for diagnostics and tests. */
  reused = 0;

  constructor(options: WarmHttpOptions) {
    this.#origin = new URL(options.baseUrl);
    this.#secure = this.#origin.protocol === 'https:' || this.#origin.protocol === 'wss:';
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger ?? silentLogger;
    this.#maxParkedMs = options.maxParkedMs ?? 30_000;
    const maxIdleMs = options.maxIdleMs ?? POOLED_IDLE_MS;
    const viaProxy = options.route ? proxyAgent(options.route, { keepAlive: true, idleMs: maxIdleMs }) : null;
    this.#proxied = viaProxy !== null;
    if (viaProxy) {
      this.agent = viaProxy;
      return;
    }
    // `timeout` closes a pooled connection after `maxIdleMs` idle (a request in flight only gets a 'timeout'
    // event, which nothing here listens to: the REST client and the socket bound their own waits).
    const agentOptions = { keepAlive: true, keepAliveMsecs: 1_000, maxFreeSockets: 4, scheduling: 'lifo' as const, timeout: maxIdleMs };
    const agent = (this.#secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions)) as AgentLike;
    const connect = agent.createConnection.bind(agent);
    // The agent asks for a new connection only when no pooled one is free: hand it the parked one first.
    agent.createConnection = ((opts: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void) => {
      const parked = this.#takeParked(opts);
      if (parked) return parked;
      return connect(opts, callback);
    }) as AgentLike['createConnection'];
    this.agent = agent;
  }

  /** The port requests to the origin use. */
  get #port(): number {
    return Number(this.#origin.port) || (this.#secure ? 443 : 80);
  }

  /** True while a parked connection is ready. */
  get isWarm(): boolean {
    const parked = this.#parked;
    return !!parked && !parked.socket.destroyed && this.#clock.now() - parked.sinceMs < this.#maxParkedMs;
  }

  /** Open one connection now unless a fresh one is parked (resolves when it is ready, or on failure). */
  warm(): Promise<void> {
    if (this.#closed || this.#proxied) return Promise.resolve();
    if (this.isWarm) return Promise.resolve();
    this.#dropParked();
    this.#warming ??= this.#open().finally(() => (this.#warming = null));
    return this.#warming;
  }

  /** A fetch over this agent (requests to other origins get ordinary, unpooled connections). */
  readonly fetch: typeof fetch = (input, init) => nodeFetch(input, init, (url) => (this.#sameOrigin(url) ? this.agent : undefined));

  close(): void {
    this.#closed = true;
    this.#dropParked();
    this.agent.destroy();
  }

  async #open(): Promise<void> {
    const host = this.#origin.hostname;
    const port = this.#port;
    const socket = (this.agent as AgentLike).createConnection.call(this.agent, {
      host,
      port,
      ...(this.#secure ? { servername: host } : {}),
    } as http.ClientRequestArgs) as ParkableSocket | null | undefined;
    if (!socket) return;
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once(this.#secure ? 'secureConnect' : 'connect', () => resolve());
        socket.once('error', reject);
      });
    } catch (error) {
      socket.destroy();
      this.#log.debug('warm-http: could not pre-connect', { host, error: String(error) });
      return;
    }
    if (this.#closed) {
      socket.destroy();
      return;
    }
    const onError = () => {}; // a parked socket the server drops is simply discarded
    const onClose = () => {
      if (this.#parked?.socket === socket) this.#parked = null;
    };
    socket.on('error', onError);
    socket.once('close', onClose);
    socket.unref?.(); // a parked connection never keeps the process alive
    this.#parked = { socket, sinceMs: this.#clock.now(), onClose, onError };
    this.#log.debug('warm-http: connection ready', { host, port });
  }

  #takeParked(opts: http.ClientRequestArgs): Duplex | null {
    const parked = this.#parked;
    if (!parked || parked.socket.destroyed) return null;
    if ((opts.host ?? opts.hostname) !== this.#origin.hostname || Number(opts.port ?? this.#port) !== this.#port) return null;
    if (this.#clock.now() - parked.sinceMs >= this.#maxParkedMs) {
      this.#dropParked();
      return null;
    }
    this.#parked = null;
    parked.socket.removeListener('close', parked.onClose);
    parked.socket.removeListener('error', parked.onError);
    parked.socket.ref?.();
    this.reused += 1;
    return parked.socket;
  }

  #dropParked(): void {
    const parked = this.#parked;
    this.#parked = null;
    parked?.socket.destroy();
  }

  #sameOrigin(url: URL): boolean {
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    return url.hostname === this.#origin.hostname && port === this.#port && (url.protocol === 'https:') === this.#secure;
  }
}

/**
 * The subset of `fetch` the REST client uses, over node:http(s): method, string body, plain-object headers,
 * `signal`; never follows redirects (`redirect: 'manual'` semantics: the 3xx is returned as is).
 */
export function nodeFetch(input: Parameters<typeof fetch>[0], init: RequestInit | undefined, agentFor: (url: URL) => http.Agent | undefined): Promise<Response> {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  const secure = url.protocol === 'https:';
  const body = init?.body === undefined || init.body === null ? undefined : Buffer.from(String(init.body));
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, key) => (headers[key] = value));
  if (body) headers['content-length'] = String(body.byteLength);
  const agent = agentFor(url);
  return new Promise<Response>((resolve, reject) => {
    const request = (secure ? https : http).request(
      url,
      { method: init?.method ?? 'GET', headers, ...(agent ? { agent } : {}), ...(init?.signal ? { signal: init.signal } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('The response was cut off.')));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const out = new Headers();
          for (const [key, value] of Object.entries(res.headers)) {
            if (Array.isArray(value)) for (const v of value) out.append(key, v);
            else if (value !== undefined) out.set(key, value);
          }
          const nullBody = status === 204 || status === 205 || status === 304;
          try {
            resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? '', headers: out }));
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
