/**
 * The fleet console, assembled: the fleet's state fed by the broker link, the fleet-wide metrics and
 * the web server. `npm run fleet` (electron/cli/fleet-console.ts) starts it; tests and the benchmark
 * start it in-process the same way.
 */
import { randomBytes } from 'node:crypto';
import { silentLogger, type Logger, addSecret } from '../../core/log.ts';
import { startConsoleLink, type ConsoleLink } from './link.ts';
import { createConsoleMetrics, type ConsoleMetrics } from './metrics.ts';
import { startConsoleServer, type ConsoleServer } from './server.ts';
import { FleetState } from './state.ts';

export interface FleetConsoleOptions {
  brokerUrl: string;
  topicPrefix: string;
  /** The persistent session's id: the same on every start, so the broker keeps what arrived meanwhile. */
  clientId: string;
  username?: string;
  password?: string;
  ca?: Buffer;
  pageDir: string;
  /** Default: a new random token. */
  token?: string;
  host?: string;
  /** More Host header values the server accepts (behind a reverse proxy). */
  allowedHosts?: string[];
  port?: number;
  now?: () => number;
  logger?: Logger;
  commandTtlS?: number;
  reconnectMs?: number;
}

export interface FleetConsole {
  readonly state: FleetState;
  readonly link: ConsoleLink;
  readonly metrics: ConsoleMetrics;
  readonly server: ConsoleServer;
  readonly token: string;
  close(): Promise<void>;
}

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

export async function startFleetConsole(options: FleetConsoleOptions): Promise<FleetConsole> {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const token = options.token ?? newToken();
  addSecret(token);
  const state = new FleetState({ now });
  const link = startConsoleLink({
    url: options.brokerUrl,
    topicPrefix: options.topicPrefix,
    clientId: options.clientId,
    ...(options.username ? { username: options.username } : {}),
    ...(options.password ? { password: options.password } : {}),
    ...(options.ca ? { ca: options.ca } : {}),
    state,
    now,
    logger,
    ...(options.commandTtlS !== undefined ? { commandTtlS: options.commandTtlS } : {}),
    ...(options.reconnectMs !== undefined ? { reconnectMs: options.reconnectMs } : {}),
  });
  const metrics = createConsoleMetrics(state, () => link.connected, () => link.health(), logger);
  let server: ConsoleServer;
  try {
    server = await startConsoleServer({
      state,
      link,
      metrics,
      pageDir: options.pageDir,
      token,
      brokerLabel: options.brokerUrl,
      ...(options.host ? { host: options.host } : {}),
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
      now,
      logger,
    });
  } catch (error) {
    await link.close();
    throw error;
  }
  return {
    state,
    link,
    metrics,
    server,
    token,
    async close() {
      await server.close();
      await link.close();
    },
  };
}
