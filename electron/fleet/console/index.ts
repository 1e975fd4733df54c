/**
 * The fleet console, assembled: the fleet's state fed by the broker link, what it remembers on disk
 * (memory.ts) and its audit log (command-log.ts) in its data folder, its accounts and browser sessions,
 * the fleet-wide metrics and the web server. `npm run fleet` (electron/cli/fleet-console.ts) starts it;
 * tests and the benchmark start it in-process the same way.
 */
import { systemClock, type Clock, type TimerHandle } from '../../core/clock.ts';
import { silentLogger, type Logger } from '../../core/log.ts';
import { accountsFromTokens, newToken, type AccountBook } from './accounts.ts';
import { openCommandLog, type CommandLog } from './command-log.ts';
import { createCommander } from './commander.ts';
import { startConsoleLink, type ConsoleLink } from './link.ts';
import { openFleetMemory, type FleetMemory } from './memory.ts';
import { createConsoleMetrics, type ConsoleMetrics } from './metrics.ts';
import { startConsoleServer, type ConsoleServer } from './server.ts';
import { consoleSessions } from './sessions.ts';
import { FleetState } from './state.ts';

export { newToken };

/** While the broker is heard, the memory notes it this often (it bounds "since" after a crash). */
export const ALIVE_EVERY_MS = 10_000;
/** Spend beyond its bounds is dropped this often. */
export const PRUNE_EVERY_MS = 60 * 60_000;

export interface FleetConsoleOptions {
  brokerUrl: string;
  topicPrefix: string;
  /** The persistent session's id: the same on every start, so the broker keeps what arrived meanwhile. */
  clientId: string;
  username?: string;
  password?: string;
  ca?: Buffer;
  pageDir: string;
  /** Where the console keeps what it remembers and its audit log; none: it remembers nothing. */
  dataDir?: string;
  /** Who may come in (accounts.ts). Without it, one operator account "operator" with `token`. */
  accounts?: AccountBook;
  /** The operator account's token when no `accounts` are given (default: a new random one). */
  token?: string;
  host?: string;
  /** More Host header values the server accepts (behind a reverse proxy). */
  allowedHosts?: string[];
  port?: number;
  /** Time (default: the system's); `now` alone is accepted for the state's clock. */
  clock?: Clock;
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
  readonly log: CommandLog;
  readonly memory: FleetMemory | null;
  /** The operator token when the console was given `token` (or made one); null with `accounts`. */
  readonly token: string | null;
  close(): Promise<void>;
}

export async function startFleetConsole(options: FleetConsoleOptions): Promise<FleetConsole> {
  const clock: Clock = options.clock ?? (options.now ? { ...systemClock, now: options.now } : systemClock);
  const now = () => clock.now();
  const logger = options.logger ?? silentLogger;
  const token = options.accounts ? null : (options.token ?? newToken());
  const accounts = options.accounts ?? accountsFromTokens([{ name: 'operator', role: 'operator', token: token! }]);
  const memory = options.dataDir ? openFleetMemory({ dir: options.dataDir, clock, logger }) : null;
  const log = openCommandLog({ ...(options.dataDir ? { dir: options.dataDir } : {}), clock, logger });
  const state = new FleetState({ now, ...(memory ? { memory } : {}) });
  state.onAnswer((answer, kioskId) => log.answer(kioskId, answer));
  const link = startConsoleLink({
    url: options.brokerUrl,
    topicPrefix: options.topicPrefix,
    clientId: options.clientId,
    ...(options.username ? { username: options.username } : {}),
    ...(options.password ? { password: options.password } : {}),
    ...(options.ca ? { ca: options.ca } : {}),
    state,
    now,
    clock,
    logger,
    ...(options.commandTtlS !== undefined ? { commandTtlS: options.commandTtlS } : {}),
    ...(options.reconnectMs !== undefined ? { reconnectMs: options.reconnectMs } : {}),
    ...(memory ? { beforeAck: () => memory.flush() } : {}),
  });
  const commander = createCommander({ link, state, log, now, logger });

  // The memory's heartbeat, its bound, and spend's bounds.
  let aliveTimer: TimerHandle | null = null;
  let lastPruneMs = now();
  const tick = () => {
    if (memory) {
      if (link.connected) memory.alive();
      memory.compactIfLarge(() => state.remembered());
    }
    if (now() - lastPruneMs >= PRUNE_EVERY_MS) {
      lastPruneMs = now();
      state.pruneSpend();
    }
    aliveTimer = clock.setTimeout(tick, ALIVE_EVERY_MS);
  };
  state.pruneSpend();
  const offConnected = link.onConnectionChange((up) => {
    if (up) memory?.alive();
  });
  aliveTimer = clock.setTimeout(tick, ALIVE_EVERY_MS);

  const metrics = createConsoleMetrics(state, () => link.connected, () => link.health(), logger);
  const stopTimers = () => {
    if (aliveTimer !== null) clock.clearTimeout(aliveTimer);
    aliveTimer = null;
    offConnected();
  };
  let server: ConsoleServer;
  try {
    server = await startConsoleServer({
      state,
      link,
      metrics,
      sessions: consoleSessions(accounts, now),
      commander,
      log,
      pageDir: options.pageDir,
      brokerLabel: options.brokerUrl,
      ...(options.host ? { host: options.host } : {}),
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
      now,
      logger,
    });
  } catch (error) {
    stopTimers();
    commander.close();
    await link.close();
    log.close();
    memory?.close(state.remembered());
    throw error;
  }
  return {
    state,
    link,
    metrics,
    server,
    log,
    memory,
    token,
    async close() {
      stopTimers();
      commander.close();
      await server.close();
      if (link.connected) memory?.alive();
      await link.close();
      log.close();
      memory?.close(state.remembered());
    },
  };
}
