/**
 * Ending a session we no longer drive: a leftover after a crash, or the doctor's test session.
 * Opens a control socket that sends NO conn_init (conn_init could start billing, spec §3 waiting →
 * on_live), delivers type 5 `user_end` as its first frame, closes, then polls the query endpoint until
 * the service says `ended` so the final billing can be read.
 */
import type { Clock } from './clock.ts';
import { sleep, systemClock } from './clock.ts';
import { ControlSocket } from './control-socket.ts';
import { toAvatarError } from './errors.ts';
import { silentLogger, type Logger } from './log.ts';
import type { LiveRecord } from './protocol.ts';
import type { ServiceClient } from './rest-client.ts';
import { wsTransportFactory, type TransportFactory } from './transport.ts';

export interface RemoteHangupOptions {
  clock?: Clock;
  logger?: Logger;
  transportFactory?: TransportFactory;
  /** Give up on the socket after this long. Default 5 000 ms. */
  socketTimeoutMs?: number;
}

/** Deliver type 5 (`user_end`) without conn_init. Resolves true when it was sent, false otherwise. */
export async function hangupWithoutConnInit(client: Pick<ServiceClient, 'socketRequest'>, liveId: string, options: RemoteHangupOptions = {}): Promise<boolean> {
  const { url, headers } = client.socketRequest(liveId);
  let sent = false;
  let resolveOutcome!: () => void;
  const outcome = new Promise<void>((resolve) => (resolveOutcome = resolve));
  const socket = new ControlSocket({
    liveId,
    url,
    headers,
    transportFactory: options.transportFactory ?? wsTransportFactory,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? silentLogger,
    sendConnInit: false,
    ackTimeoutMs: options.socketTimeoutMs ?? 5_000,
    onOutcome: (o, s) => {
      if (o.kind === 'open') {
        s.hangup('user_end');
        sent = true;
      } else if (o.kind === 'error' || o.kind === 'dead' || o.kind === 'closed') {
        (options.logger ?? silentLogger).warn('remote hangup: the socket ended before the hangup was sent', { outcome: o.kind });
      }
      resolveOutcome();
    },
  });
  await outcome;
  if (!sent) socket.terminate();
  await socket.closed;
  return sent;
}

/**
 * How long a client waits for a session it ended to reach `ended`, when its billing figures can be read
 * (spec §3). How long `ending` lasts is not shown; a service that takes 20 s must still be read to the end
 * (the fair-readings matrix holds calls against an emulator whose `ending` lasts 0 to 20 s).
 */
export const END_CONFIRM_TIMEOUT_MS = 30_000;

export interface FinalQueryOptions {
  clock?: Clock;
  logger?: Logger;
  /** Poll every this many ms. Default 500. */
  pollMs?: number;
  /** Give up after this long. Default 10 000 ms. */
  timeoutMs?: number;
}

/** Poll the query endpoint until `ended` (billing readable), bounded. Returns the last record read, or
 *  null when none could be read; throws only for not_found/forbidden/unauthorized (nothing to wait for). */
export async function queryUntilEnded(client: ServiceClient, liveId: string, options: FinalQueryOptions = {}): Promise<LiveRecord | null> {
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + (options.timeoutMs ?? 10_000);
  let last: LiveRecord | null = null;
  for (;;) {
    try {
      last = await client.querySession(liveId);
      if (last.status === 'ended') return last;
    } catch (error) {
      const e = toAvatarError(error);
      if (e.code === 'not_found' || e.code === 'forbidden' || e.code === 'unauthorized') throw e;
      (options.logger ?? silentLogger).warn('remote hangup: query failed', { code: e.code });
    }
    if (clock.now() >= deadline) return last;
    await sleep(clock, options.pollMs ?? 500);
  }
}
