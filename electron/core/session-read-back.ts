/**
 * What the controller reads back from the service and from its sockets, as machine inputs: the status
 * query while reconnecting, the billing read-back after the end (spec §3 ending → ended, §4.2), and the
 * error a lost control socket stands for. Pure functions over a narrow client; the controller dispatches
 * what they return.
 */
import { sleep, type Clock } from './clock.ts';
import type { ControlSocketOutcome } from './control-socket.ts';
import { toAvatarError, type ErrorInfo } from './errors.ts';
import { describeRefusal } from './keep-alive.ts';
import type { Logger } from './log.ts';
import type { LiveRecord } from './protocol.ts';
import type { ServiceClient } from './rest-client.ts';
import type { FinalRecord } from './session-machine.ts';
import type { SessionState } from './session-types.ts';

export interface ReadBackDeps {
  client: Pick<ServiceClient, 'querySession'>;
  clock: Clock;
  log: Logger;
}

/** Whether the session is still on (asked while reconnecting); null when the query failed (logged). */
export async function queryStatus(deps: ReadBackDeps, liveId: string, signal: AbortSignal): Promise<FinalRecord | null> {
  try {
    return toFinal(await deps.client.querySession(liveId, { signal }));
  } catch (error) {
    deps.log.debug('session: status query failed', { code: toAvatarError(error).code });
    return null;
  }
}

/**
 * Poll until the service says `ended` (spec §3: the billing figures are readable then), bounded by
 * `timeoutMs`. Returns the last record read, or null when none could be read.
 */
export async function pollFinalRecord(
  deps: ReadBackDeps,
  liveId: string,
  signal: AbortSignal,
  bounds: { timeoutMs: number; intervalMs: number },
): Promise<FinalRecord | null> {
  const { client, clock, log } = deps;
  const deadlineMs = clock.now() + bounds.timeoutMs;
  let last: FinalRecord | null = null;
  while (!signal.aborted) {
    try {
      last = toFinal(await client.querySession(liveId, { signal }));
      if (last.status === 'ended') break;
    } catch (error) {
      const code = toAvatarError(error).code;
      // Our own cut-off (a shutdown that would not wait longer) is no failure of the service, and the
      // cut-off itself was already warned about.
      if (signal.aborted) {
        log.debug('session: final query cut off', { code });
        break;
      }
      log.warn('session: final query failed', { code });
      if (code === 'cancelled' || code === 'not_found' || code === 'forbidden' || code === 'unauthorized') break;
    }
    const leftMs = deadlineMs - clock.now();
    if (leftMs <= 0) break;
    try {
      await sleep(clock, Math.min(bounds.intervalMs, leftMs), signal);
    } catch {
      break; // cancelled
    }
  }
  return last;
}

export function toFinal(record: LiveRecord): FinalRecord {
  const reason = (record as { hangup_reason?: unknown }).hangup_reason;
  return {
    status: record.status,
    billedSeconds: record.billed_seconds ?? null,
    creditsCost: record.credits_cost ?? null,
    ...(typeof reason === 'string' && reason ? { hangupReason: reason } : {}),
  };
}

/** The error a lost control socket stands for; its `code` decides retry vs fatal (reconnect-policy.ts). */
export function lossError(outcome: Extract<ControlSocketOutcome, { kind: 'closed' | 'dead' | 'error' }>): ErrorInfo {
  switch (outcome.kind) {
    case 'error':
      return outcome.error.toInfo();
    case 'dead':
      return outcome.cause === 'silence'
        ? { code: 'timeout', message: 'No message from the service for too long; the connection is presumed dead.' }
        : { code: 'timeout', message: 'The computer slept; the connection is presumed dead.' };
    case 'closed': {
      const closed = `The control socket closed (code ${outcome.code}${outcome.reason ? `: ${outcome.reason}` : ''})`;
      const refused = outcome.keepAliveRefused;
      return { code: 'network', message: refused ? `${closed} ${describeRefusal(refused.style, refused.next)}.` : `${closed}.` };
    }
  }
}

/** States are small plain objects: compare field by field (one level). */
export function sameState(a: SessionState, b: SessionState): boolean {
  if (a === b) return true;
  const ka = Object.keys(a) as (keyof SessionState)[];
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => a[k] === b[k]);
}
