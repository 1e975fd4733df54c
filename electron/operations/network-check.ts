/**
 * The video-network check of the staff panel's Diagnostics, without credits: main creates a test session
 * (as the doctor does) and hands its RTC credentials to the renderer, which joins that channel receive-only
 * (no device opened), measures the join and leaves; main then ends the session with type 5, never having
 * sent conn_init (billing starts only at on_live, spec §3). Whatever happens — the renderer reports a
 * failure, never reports (timeout), or a second check starts — the session is ended with type 5 once.
 */
import type { NetworkCheckOutcome, NetworkCheckReport, NetworkCheckTicket } from '../contract.ts';
import { buildCreateRequest } from '../core/avatar-input.ts';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { END_CONFIRM_TIMEOUT_MS, hangupWithoutConnInit, queryUntilEnded } from '../core/remote-hangup.ts';
import type { ServiceClient } from '../core/rest-client.ts';
import type { TransportFactory } from '../core/transport.ts';
import type { KioskConfig } from '../kiosk/config.ts';

/** How long the renderer may take to join and report before main ends the test session itself. */
export const NETWORK_CHECK_TIMEOUT_MS = 30_000;

export interface NetworkCheckOptions {
  clock?: Clock;
  logger?: Logger;
  transportFactory?: TransportFactory;
  timeoutMs?: number;
}

interface Pending {
  checkId: string;
  client: ServiceClient;
  timer: TimerHandle;
  closing: Promise<{ sent: boolean; creditsCost: number | null; billedSeconds: number | null }> | null;
}

export interface NetworkCheck {
  /** Create the test session; its RTC credentials go to the renderer. */
  start(client: ServiceClient | null, config: KioskConfig): Promise<NetworkCheckTicket>;
  /** The renderer's outcome: end the session (type 5) and report. */
  finish(checkId: string, outcome: NetworkCheckOutcome): Promise<NetworkCheckReport>;
  /** End any test session still open (shutdown). */
  dispose(): Promise<void>;
}

export function createNetworkCheck(options: NetworkCheckOptions = {}): NetworkCheck {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const timeoutMs = options.timeoutMs ?? NETWORK_CHECK_TIMEOUT_MS;
  let pending: Pending | null = null;

  function close(p: Pending): NonNullable<Pending['closing']> {
    p.closing ??= (async () => {
      clock.clearTimeout(p.timer);
      const sent = await hangupWithoutConnInit(p.client, p.checkId, { clock, logger, ...(options.transportFactory ? { transportFactory: options.transportFactory } : {}) });
      const final = await queryUntilEnded(p.client, p.checkId, { clock, logger, pollMs: 250, timeoutMs: END_CONFIRM_TIMEOUT_MS }).catch(() => null);
      logger.info('Network check: test session closed with type 5', { liveId: p.checkId, sent });
      return { sent, creditsCost: final?.credits_cost ?? null, billedSeconds: final?.billed_seconds ?? null };
    })();
    return p.closing;
  }

  return {
    async start(client, config) {
      if (!client) throw new AvatarError('invalid_config', 'The avatar service is not configured, so the video network cannot be checked.');
      if (pending) {
        const previous = pending;
        pending = null;
        await close(previous);
      }
      const built = await buildCreateRequest({
        callMode: 'audio',
        avatar: { persona: config.avatar.persona, image: config.avatar.imagePath, name: config.avatar.name, voice: config.avatar.voice },
      });
      const created = await client.createSession(built.request);
      const checkId = created.live.id;
      const p: Pending = {
        checkId,
        client,
        timer: clock.setTimeout(() => {
          logger.warn('Network check: no result from the screen in time; closing the test session', { liveId: checkId });
          if (pending === p) pending = null;
          void close(p);
        }, timeoutMs),
        closing: null,
      };
      pending = p;
      return { checkId, rtc: created.rtc, cloudProxy: config.rtc.cloudProxy };
    },

    async finish(checkId, outcome) {
      const p = pending?.checkId === checkId ? pending : null;
      if (!p) throw new AvatarError('invalid_request', 'That network check is over (it took too long, or another one started). Start it again.');
      pending = null;
      const closed = await close(p);
      const billed = (closed.creditsCost ?? 0) > 0 || (closed.billedSeconds ?? 0) > 0;
      return {
        ...outcome,
        sessionClosed: closed.sent,
        creditsCost: closed.creditsCost,
        ...(billed ? { ok: false, message: `The test session was billed (${closed.billedSeconds} s, ${closed.creditsCost} credits) although it never went live.` } : {}),
      };
    },

    async dispose() {
      const p = pending;
      pending = null;
      if (p) await close(p);
    },
  };
}
