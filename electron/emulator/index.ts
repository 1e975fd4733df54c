/**
 * A faithful local emulator of the avatar service (../shared/spec/avatar-service.md): both REST
 * surfaces, the control WebSocket, billing and voices, with fault knobs for tests. It is the app's
 * embedded default in demo mode (no API key) and the peer of the integration tests. Plain Node only
 * (no electron, no DOM), so it runs under tests and inside Electron's main process alike.
 *
 * Modules: types.ts (public types, knob defaults), accounts.ts (keys, balances, voices), sessions.ts
 * (state machine and billing), http.ts (REST routes and validation), ws.ts (control socket), timers.ts
 * (every timer on the injected clock, so close() leaves none).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { systemClock } from '../core/clock.ts';
import { silentLogger } from '../core/log.ts';
import { Accounts } from './accounts.ts';
import { createRequestHandler } from './http.ts';
import { SessionStore } from './sessions.ts';
import { TimerSet } from './timers.ts';
import {
  DEFAULT_KNOBS,
  DEMO_API_KEY,
  type EmulatedSession,
  type EmulatorAccount,
  type EmulatorHandle,
  type EmulatorKnobs,
  type EmulatorOptions,
} from './types.ts';
import { ControlSockets } from './ws.ts';

/** The `idleCloseMs` knob's race: the last second before the close, as clients keep a second in hand. */
const IDLE_CLOSE_RACE_MS = 1_000;

/**
 * The `idleCloseMs` knob's server: a request on a keep-alive connection idle for the last second before its
 * close meets a reset, as one crossing the close on the wire does. Idle is real time: connections are the OS's.
 */
function closingIdle(handle: RequestListener, idleCloseMs: number): RequestListener {
  const idleSince = new WeakMap<Socket, number>();
  return (req, res) => {
    const since = idleSince.get(req.socket);
    if (since !== undefined && performance.now() - since >= idleCloseMs - IDLE_CLOSE_RACE_MS) {
      req.socket.resetAndDestroy();
      return;
    }
    res.once('finish', () => idleSince.set(req.socket, performance.now()));
    handle(req, res);
  };
}

export { DEMO_API_KEY, DEFAULT_KNOBS };
export type { EmulatedSession, EmulatorAccount, EmulatorHandle, EmulatorKnobs, EmulatorOptions };

export async function startEmulator(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const knobs: EmulatorKnobs = {
    ...DEFAULT_KNOBS,
    ...options.knobs,
    warmupMs: { ...DEFAULT_KNOBS.warmupMs, ...options.knobs?.warmupMs },
  };
  const timers = new TimerSet(clock, logger);
  const accounts = new Accounts();
  for (const account of options.accounts ?? []) accounts.add(account);
  // The gateway surface injects the demo account, so it always exists.
  if (!accounts.get(DEMO_API_KEY)) accounts.add({ apiKey: DEMO_API_KEY });
  const sessions = new SessionStore({ clock, timers, knobs, logger, accounts });
  const ctx = { clock, timers, knobs, logger, accounts, sessions, demoApiKey: DEMO_API_KEY };
  const sockets = new ControlSockets(ctx);

  const handleRequest = createRequestHandler(ctx);
  const idleCloseMs = knobs.idleCloseMs;
  const server: Server = createServer(idleCloseMs === null ? handleRequest : closingIdle(handleRequest, idleCloseMs));
  if (idleCloseMs !== null) server.keepAliveTimeout = idleCloseMs;
  server.on('upgrade', (req, socket, head) => sockets.handleUpgrade(req, socket, head));
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${hostForUrl}:${address.port}`;
  logger.info('emulator listening', { baseUrl });

  const requireAccount = (apiKey: string) => {
    const account = accounts.get(apiKey);
    if (!account) throw new Error('No emulator account for that key.');
    return account;
  };
  let closing: Promise<void> | null = null;

  const handle: EmulatorHandle = {
    baseUrl,
    gatewayUrl: `${baseUrl}/gateway`,
    apiKey: DEMO_API_KEY,
    knobs,
    forceHangup: (liveId, reason) => sockets.forceHangup(liveId, reason),
    dropConnection: (liveId) => sockets.dropConnection(liveId),
    injectFrame: (liveId, data, frameOptions) => sockets.injectFrame(liveId, data, frameOptions?.binary ?? false),
    getSession: (liveId) => {
      const session = sessions.get(liveId);
      return session ? sessions.snapshot(session) : undefined;
    },
    listSessions: () => sessions.all().map((s) => sessions.snapshot(s)),
    liveCount: () => sessions.liveCount(),
    balance: (apiKey = DEMO_API_KEY) => requireAccount(apiKey).balance,
    setBalance: (apiKey, credits) => {
      requireAccount(apiKey).balance = Math.max(0, credits);
    },
    addAccount: (account) => {
      accounts.add(account);
    },
    close: () => {
      closing ??= (async () => {
        timers.clearAll(); // first: nothing a closing socket triggers may re-arm a timer
        await sockets.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        logger.info('emulator closed');
      })();
      return closing;
    },
  };
  return handle;
}
