/**
 * The staff panel's wire report (Diagnostics): the service check, recorded. Nothing is billed: two free
 * requests show the service's error bodies (core/wire-recorder.ts), a test session is created, its control
 * socket is opened WITHOUT conn_init (billing starts only at its ack, spec §3) and watched for two ping
 * periods while the kiosk's keep-alive answers, then type 5 closes the room and the query confirms `ended`
 * and 0 credits. The report (shapes only, no key, token, id or persona) is returned for the panel and
 * written to wire-report.json in the data folder. What it cannot see without billing — the conn_init ack —
 * `cli probe --wire-report FILE` records (about 3 credits).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WireCheckResult } from '../contract.ts';
import { buildCreateRequest } from '../core/avatar-input.ts';
import { sleep, systemClock, type Clock } from '../core/clock.ts';
import { ControlSocket } from '../core/control-socket.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import type { KeepAlive } from '../core/keep-alive.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { SERVER_PING_INTERVAL_MS } from '../core/protocol.ts';
import { END_CONFIRM_TIMEOUT_MS, hangupWithoutConnInit, queryUntilEnded } from '../core/remote-hangup.ts';
import type { ServiceClient } from '../core/rest-client.ts';
import { wsTransportFactory, type TransportFactory } from '../core/transport.ts';
import { WireRecorder, recordErrorAnswers } from '../core/wire-recorder.ts';
import type { KioskConfig } from '../kiosk/config.ts';

export const WIRE_REPORT_FILE = 'wire-report.json';
/** Two ping periods and a margin: the socket shows at least two pings and their gap. */
export const WIRE_CHECK_WATCH_MS = 2 * SERVER_PING_INTERVAL_MS + 1_000;
export const ACK_NOT_SEEN =
  'conn_init_ack: not seen (the service check never sends conn_init, so nothing is billed); `cli probe --wire-report FILE` records it in one short billed call (about 3 credits)';

export interface WireCheckInput {
  client: ServiceClient | null;
  config: KioskConfig;
  /** The folder wire-report.json goes to; null: not written. */
  dataDir: string | null;
  transportFactory?: TransportFactory;
  /** The keep-alive that works with this service (the kiosk's), so the watch sends what the service takes. */
  keepAlive?: KeepAlive;
  clock?: Clock;
  logger?: Logger;
  watchMs?: number;
}

export async function runWireCheck(input: WireCheckInput): Promise<WireCheckResult> {
  const clock = input.clock ?? systemClock;
  const logger = input.logger ?? silentLogger;
  if (!input.client) throw new AvatarError('invalid_config', 'The avatar service is not configured, so there is nothing to record.');
  const base = input.client;
  const recorder = new WireRecorder({ source: 'service-check', surface: base.target.surface, clock });
  recorder.addSecrets(base.target.surface === 'direct' ? base.target.apiKey : null, input.config.avatar.persona, input.config.avatar.imagePath);
  recorder.note(ACK_NOT_SEEN);
  let outcome: { ok: boolean; message: string };
  try {
    await recordErrorAnswers(base, recorder);
    outcome = await watchTestSession(base, recorder, input, clock, logger);
  } catch (error) {
    const e = toAvatarError(error);
    logger.warn('Wire report: the service check stopped early', { code: e.code });
    outcome = { ok: false, message: `The service check stopped early: ${e.message} The report shows what came until then.` };
  }
  const report = recorder.report();
  let savedTo: string | null = null;
  if (input.dataDir) {
    const path = join(input.dataDir, WIRE_REPORT_FILE);
    try {
      await writeFile(path, JSON.stringify(report, null, 2) + '\n', { mode: 0o600 });
      savedTo = path;
    } catch (error) {
      logger.warn('Wire report: could not write the file', { path, error: String(error) });
    }
  }
  logger.info('Wire report recorded', { ok: outcome.ok, savedTo });
  return { ...outcome, report, savedTo };
}

async function watchTestSession(
  base: ServiceClient,
  recorder: WireRecorder,
  input: WireCheckInput,
  clock: Clock,
  logger: Logger,
): Promise<{ ok: boolean; message: string }> {
  const client = base.derive({ wrapFetch: (inner) => recorder.recordingFetch(inner) });
  const transportFactory = recorder.recordingTransports(input.transportFactory ?? wsTransportFactory);
  const built = await buildCreateRequest({
    callMode: 'audio',
    avatar: { persona: input.config.avatar.persona, image: input.config.avatar.imagePath, name: input.config.avatar.name, voice: input.config.avatar.voice },
  });
  const created = await client.createSession(built.request);
  const liveId = created.live.id;
  const watchMs = input.watchMs ?? WIRE_CHECK_WATCH_MS;

  // The socket holds conn_init (it never sends it) and answers pings with the kiosk's keep-alive.
  let ended: () => void = () => {};
  const socketEnded = new Promise<void>((resolve) => (ended = resolve));
  const { url, headers } = client.socketRequest(liveId);
  const socket = new ControlSocket({
    liveId,
    url,
    headers,
    transportFactory,
    clock,
    logger,
    holdConnInit: true,
    ...(input.keepAlive ? { keepAlive: input.keepAlive } : {}),
    onOutcome: (o) => {
      if (o.kind === 'closed' || o.kind === 'dead' || o.kind === 'error') ended();
    },
  });
  const stopWatching = new AbortController();
  await Promise.race([sleep(clock, watchMs, stopWatching.signal).catch(() => {}), socketEnded]);
  stopWatching.abort();

  let sent: boolean;
  if (socket.isOpen) {
    socket.hangup('user_end');
    sent = true;
    await socket.closed;
  } else {
    socket.terminate();
    recorder.note(`the service closed the control socket before the watch of ${watchMs / 1000} s ended (see socket.closes)`);
    sent = await hangupWithoutConnInit(client, liveId, { clock, logger, transportFactory });
  }
  const final = await queryUntilEnded(client, liveId, { clock, logger, pollMs: 250, timeoutMs: END_CONFIRM_TIMEOUT_MS }).catch(() => null);
  const billed = (final?.billed_seconds ?? 0) > 0 || (final?.credits_cost ?? 0) > 0;
  if (!sent) return { ok: false, message: 'The test session could not be hung up; the service will close it itself. The report shows what came.' };
  if (billed) return { ok: false, message: `The test session was billed (${final?.billed_seconds} s, ${final?.credits_cost} credits) although it never went live.` };
  if (final?.status !== 'ended') return { ok: true, message: 'Recorded. The service did not confirm the test session’s end in time; nothing was billed so far.' };
  return { ok: true, message: 'Recorded: a test session was created, watched without going live, and closed; nothing was billed.' };
}
