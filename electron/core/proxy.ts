/**
 * The venue's proxy for the connections main makes itself (REST, the control socket, the MQTT link).
 * Chromium knows the proxy (system settings, PAC file, WPAD) and answers per URL in PAC syntax; main
 * hands that answer in through `ProxyResolver` (Electron's `session.resolveProxy`), so this module stays
 * free of Electron. It owns: parsing a PAC answer, the loopback rule, and which agent carries a
 * connection through the chosen proxy (well-kept agents: https-proxy-agent for `PROXY`/`HTTPS`, which
 * tunnels with CONNECT, socks-proxy-agent for `SOCKS*`).
 *
 * The key and the proxy: every connection through an HTTP proxy is a CONNECT tunnel (even to an http://
 * origin), so the proxy sees only `CONNECT host:port` and, for https/wss, TLS bytes. The API key may
 * travel over http:// only to this computer (core/surface.ts), and loopback never goes through a proxy
 * (as Chromium does it), so the key never crosses a proxy in clear text.
 */
import type http from 'node:http';
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { silentLogger, type Logger } from './log.ts';
import { isLoopbackHost } from './surface.ts';

/** Answers, for a URL, which proxy Chromium would use, in PAC syntax (`"PROXY host:port; DIRECT"`). */
export interface ProxyResolver {
  resolve(url: string): Promise<string>;
}

/** One way to reach a URL: directly, or through a proxy (`url` as an agent takes it: `http://h:p`,
 *  `https://h:p`, `socks5://h:p`, `socks4://h:p`). */
export type ProxyRoute = { kind: 'direct' } | { kind: 'http' | 'https' | 'socks'; url: string };

/** How long the resolver may take (a PAC download or script) before main connects directly. */
export const RESOLVE_TIMEOUT_MS = 5_000;

export const DIRECT: ProxyRoute = Object.freeze({ kind: 'direct' });

const SCHEMES: Record<string, { kind: 'http' | 'https' | 'socks'; scheme: string; port: number }> = {
  PROXY: { kind: 'http', scheme: 'http', port: 80 },
  HTTP: { kind: 'http', scheme: 'http', port: 80 },
  HTTPS: { kind: 'https', scheme: 'https', port: 443 },
  SOCKS: { kind: 'socks', scheme: 'socks4', port: 1080 },
  SOCKS4: { kind: 'socks', scheme: 'socks4', port: 1080 },
  SOCKS5: { kind: 'socks', scheme: 'socks5', port: 1080 },
};

/**
 * The routes of a PAC answer, in order (`"PROXY a:3128; DIRECT"` → http proxy, then direct). Entries we
 * cannot use (QUIC, malformed) are left out; an empty or unusable answer means direct, as in Chromium.
 */
export function parsePacAnswer(answer: string): ProxyRoute[] {
  const routes: ProxyRoute[] = [];
  for (const raw of answer.split(';')) {
    const [type = '', hostPort, ...rest] = raw.trim().split(/\s+/);
    const upper = type.toUpperCase();
    if (upper === '') continue;
    if (upper === 'DIRECT') {
      routes.push(DIRECT);
      continue;
    }
    const scheme = SCHEMES[upper];
    if (!scheme || !hostPort || rest.length > 0) continue;
    let url: URL;
    try {
      url = new URL(`${scheme.scheme}://${hostPort}`);
    } catch {
      continue;
    }
    if ((url.pathname !== '/' && url.pathname !== '') || url.username || !url.hostname) continue;
    routes.push({ kind: scheme.kind, url: `${scheme.scheme}://${url.hostname}:${url.port || scheme.port}` });
  }
  return routes.length > 0 ? routes : [DIRECT];
}

/**
 * How main reaches `url`: loopback directly (Chromium never proxies it either, and it is the only place an
 * http:// origin may receive the key); otherwise the first route of the resolver's answer. A resolver that
 * fails (no session yet, a broken PAC script) means direct, logged: the kiosk tries rather than stops.
 */
export async function routeFor(url: string, resolver: ProxyResolver | null | undefined, logger: Logger = silentLogger, clock: Clock = systemClock): Promise<ProxyRoute> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return DIRECT;
  }
  if (!resolver || isLoopbackHost(host)) return DIRECT;
  let answer: string;
  try {
    // A PAC script that never answers must not hold the kiosk (or its fleet link) back.
    let timer: TimerHandle | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = clock.setTimeout(() => reject(new Error(`no answer within ${RESOLVE_TIMEOUT_MS} ms`)), RESOLVE_TIMEOUT_MS);
    });
    answer = await Promise.race([resolver.resolve(proxyQueryUrl(url)), timeout]).finally(() => clock.clearTimeout(timer!));
  } catch (error) {
    logger.warn('Could not ask for the proxy; connecting directly', { origin: originOf(url), error: String(error) });
    return DIRECT;
  }
  const route = parsePacAnswer(answer)[0] ?? DIRECT;
  logger.info('Network route', { origin: originOf(url), route: describeRoute(route) });
  return route;
}

/** Chromium's resolver takes http(s) URLs; sockets and brokers are asked as the https/http URL of the same
 *  host and port (a PAC script sees the scheme, so ws:/mqtt: would fall to its default). */
export function proxyQueryUrl(url: string): string {
  const u = new URL(url);
  const secure = u.protocol === 'https:' || u.protocol === 'wss:' || u.protocol === 'mqtts:';
  const port = u.port ? `:${u.port}` : '';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return `${secure ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}${port}/`;
}

/** For logs and the status: `direct`, or the proxy's scheme, host and port (no credentials). */
export function describeRoute(route: ProxyRoute): string {
  return route.kind === 'direct' ? 'direct' : route.url;
}

function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(invalid url)';
  }
}

/**
 * The agent that carries connections over `route` (null: direct, use your own). `keepAlive` pools the
 * tunnels like a normal keep-alive agent (agent-base pools them per origin); `idleMs` closes a pooled
 * tunnel idle that long (warm-http.ts says why).
 */
export function proxyAgent(route: ProxyRoute, options: { keepAlive?: boolean; idleMs?: number } = {}): http.Agent | null {
  if (route.kind === 'direct') return null;
  const agentOptions = { keepAlive: options.keepAlive ?? false };
  const agent = route.kind === 'socks' ? new SocksProxyAgent(route.url, agentOptions) : new HttpsProxyAgent(route.url, agentOptions);
  // Set after construction: HttpsProxyAgent replaces the `options` its base class kept, and Node's agent
  // reads the idle bound (and honours the server's keep-alive hint) from `options.timeout` (none: unbounded).
  (agent as http.Agent & { options: { timeout?: number | undefined } }).options.timeout = options.idleMs;
  return agent;
}

/**
 * A raw TCP (or, with `tls`, TLS) stream to `host:port` through `route`, usable at once: bytes written
 * before the tunnel is up are held and sent after it. For protocols that take a stream, not an agent (the
 * MQTT link over mqtt:// or mqtts://). The tunnel is the agent's own (its CONNECT or SOCKS handshake).
 */
export function tunnelStream(route: Exclude<ProxyRoute, { kind: 'direct' }>, target: { host: string; port: number; tls?: import('node:tls').ConnectionOptions | false }): Duplex {
  const agent = proxyAgent(route) as (http.Agent & { connect(req: EventEmitter, opts: Record<string, unknown>): Promise<Duplex> }) | null;
  const stream = new LazyStream();
  // agent-base agents open their tunnel in `connect(req, opts)`; the request is only used for events.
  const request = Object.assign(new EventEmitter(), { destroy: () => undefined });
  const opts = { host: target.host, port: target.port, secureEndpoint: Boolean(target.tls), servername: target.host, ...(target.tls || {}) };
  agent!
    .connect(request, opts)
    .then((socket) => {
      // Attach first: when the proxy refuses the tunnel, the agent replays its answer on 'socket' into a
      // stand-in socket and asserts that someone is listening for the data.
      stream.attach(socket);
      request.emit('socket', socket);
    })
    .catch((error: unknown) => stream.destroy(error instanceof Error ? error : new Error(String(error))));
  return stream;
}

/** A duplex that forwards to a socket it receives later; writes wait (corked) until then. */
class LazyStream extends Duplex {
  #socket: Duplex | null = null;
  #wantsData = false;

  constructor() {
    super({ autoDestroy: false });
    this.cork();
  }

  attach(socket: Duplex): void {
    if (this.destroyed) {
      socket.destroy();
      return;
    }
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('error', (error) => this.destroy(error));
    socket.on('close', () => this.destroy());
    if (!this.#wantsData) socket.pause();
    this.emit('connect');
    this.uncork();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    // `end()` uncorks the stream, so a write can reach here before the tunnel is up: hold it until then.
    if (!this.#socket) {
      this.once('connect', () => this.#socket!.write(chunk, encoding, callback));
      return;
    }
    this.#socket.write(chunk, encoding, callback);
  }

  override _read(): void {
    this.#wantsData = true;
    this.#socket?.resume();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.#socket) this.#socket.end(callback);
    else this.once('connect', () => this.#socket!.end(callback));
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#socket?.destroy();
    callback(error);
  }
}
