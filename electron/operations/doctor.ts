/**
 * Diagnostics ("doctor"), shared by the staff panel and `cli doctor`, without Electron:
 *  - config:  the configuration file is valid;
 *  - key:     the service accepts the API key (direct surface; demo and gateway have none to check);
 *  - service: the service is reachable: create a session, hang it up with type 5 BEFORE any conn_init
 *             (billing starts only at on_live, spec §3), read it back and confirm nothing was billed.
 * Microphone and camera are the renderer's to check (`ok: null` here).
 */
import type { DoctorCheck, DoctorReport } from '../contract.ts';
import { buildCreateRequest } from '../core/avatar-input.ts';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { toAvatarError, type AvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { MIN_BALANCE_TO_START } from '../core/protocol.ts';
import { END_CONFIRM_TIMEOUT_MS, hangupWithoutConnInit, queryUntilEnded } from '../core/remote-hangup.ts';
import type { ServiceClient } from '../core/rest-client.ts';
import type { TransportFactory } from '../core/transport.ts';
import type { KioskConfig } from '../kiosk/config.ts';

export interface DoctorInput {
  mode: 'demo' | 'direct' | 'gateway';
  config: KioskConfig;
  /** Why the config file was not used (null when it was fine). */
  configError: AvatarError | null;
  /** The service client, or null with `clientError` saying why none could be built. */
  client: ServiceClient | null;
  clientError?: AvatarError | null;
  clock?: Clock;
  logger?: Logger;
  transportFactory?: TransportFactory;
}

export interface DoctorResult extends DoctorReport {
  /** The test session's id and what the service says it cost (0 expected). */
  probe: { liveId: string; billedSeconds: number | null; creditsCost: number | null; elapsedMs: number } | null;
}

export async function runDoctor(input: DoctorInput): Promise<DoctorResult> {
  const clock = input.clock ?? systemClock;
  const logger = input.logger ?? silentLogger;
  const checks: DoctorCheck[] = [];
  checks.push(
    input.configError
      ? { id: 'config', ok: false, message: `${input.configError.message} The kiosk runs on safe defaults until it is fixed.` }
      : { id: 'config', ok: true, message: 'The configuration is valid.' },
  );

  let key: DoctorCheck;
  let service: DoctorCheck;
  let probe: DoctorResult['probe'] = null;
  if (!input.client) {
    const why = input.clientError?.message ?? 'The avatar service is not configured.';
    key = { id: 'key', ok: null, message: 'Not checked: the service is not configured.' };
    service = { id: 'service', ok: false, message: why };
  } else {
    const started = clock.now();
    try {
      const built = await buildCreateRequest({
        callMode: 'audio',
        avatar: { persona: input.config.avatar.persona, image: input.config.avatar.imagePath, name: input.config.avatar.name, voice: input.config.avatar.voice },
      });
      const created = await input.client.createSession(built.request);
      const liveId = created.live.id;
      const sent = await hangupWithoutConnInit(input.client, liveId, { clock, logger, ...(input.transportFactory ? { transportFactory: input.transportFactory } : {}) });
      const final = await queryUntilEnded(input.client, liveId, { clock, logger, pollMs: 250, timeoutMs: END_CONFIRM_TIMEOUT_MS });
      const billed = final?.billed_seconds ?? null;
      const cost = final?.credits_cost ?? null;
      probe = { liveId, billedSeconds: billed, creditsCost: cost, elapsedMs: clock.now() - started };
      key = keyOk(input.mode);
      if (!sent) service = { id: 'service', ok: false, message: `A test session was created (${liveId}) but the hang-up could not be delivered; the service will close it itself.` };
      else if (final?.status !== 'ended') service = { id: 'service', ok: false, message: `The test session ${liveId} was hung up but the service did not confirm its end in time.` };
      else if ((billed ?? 0) > 0 || (cost ?? 0) > 0) service = { id: 'service', ok: false, message: `The test session was billed (${billed} s, ${cost} credits) although it never went live.` };
      else service = { id: 'service', ok: true, message: `The service is reachable: a test session was created and closed in ${probe.elapsedMs} ms, nothing billed.` };
    } catch (error) {
      const e = toAvatarError(error);
      logger.warn('Doctor: the test session failed', { code: e.code, message: e.message });
      if (e.code === 'unauthorized') {
        key = { id: 'key', ok: false, message: 'The service refused the API key (HTTP 401). Enter the key again in Settings.' };
        service = { id: 'service', ok: true, message: 'The service is reachable (it answered, refusing the key).' };
      } else if (e.code === 'insufficient_credits') {
        key = keyOk(input.mode);
        service = { id: 'service', ok: false, message: `The service is reachable but the balance is under ${MIN_BALANCE_TO_START} credits: calls cannot start. Top up the account.` };
      } else if (e.code === 'invalid_request' && typeof e.details?.field === 'string' && e.details.field.startsWith('avatar')) {
        key = { id: 'key', ok: null, message: 'Not checked: the avatar settings are invalid.' };
        service = { id: 'service', ok: false, message: `The avatar settings are invalid: ${e.message}` };
      } else {
        key = { id: 'key', ok: null, message: 'Not checked: the service could not be reached.' };
        service = { id: 'service', ok: false, message: `The service could not be reached: ${e.message}` };
      }
    }
  }
  checks.push(key, service);
  checks.push({ id: 'microphone', ok: null, message: 'Checked on the kiosk screen (Diagnostics).' });
  checks.push({ id: 'camera', ok: null, message: 'Checked on the kiosk screen (Diagnostics).' });
  return { ok: checks.every((c) => c.ok !== false), checks, probe };
}

function keyOk(mode: DoctorInput['mode']): DoctorCheck {
  if (mode === 'demo') return { id: 'key', ok: null, message: 'No API key: demo mode, on the built-in emulator.' };
  if (mode === 'gateway') return { id: 'key', ok: null, message: 'Gateway surface: the gateway holds the key.' };
  return { id: 'key', ok: true, message: 'The service accepted the API key.' };
}
