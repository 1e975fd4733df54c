/**
 * Crash recovery, without Electron.
 *
 * The journal: as soon as a session is created, `current-session.json` in the user-data folder holds its
 * live_id, surface, service URL and (once live) the time it went live. It is written atomically (temp
 * file + fsync + rename), so a crash leaves the old content or the new, and deleted when the session ends.
 *
 * On the next start, before the attract screen, `recoverLeftover` reads a leftover: it asks the query
 * endpoint whether the session ended; if not, it hangs it up (type 5 without conn_init) and waits for
 * the final billing; either way the ledger gets the session's record marked `recovered: true`.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { z } from 'zod';
import type { KioskEvent } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { toAvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { CALL_MODES } from '../core/protocol.ts';
import { hangupWithoutConnInit, queryUntilEnded } from '../core/remote-hangup.ts';
import type { ServiceClient } from '../core/rest-client.ts';
import type { TransportFactory } from '../core/transport.ts';
import type { Ledger, SessionRecord } from './ledger.ts';
import { writeFileAtomic } from './settings.ts';

export const CURRENT_SESSION_FILE = 'current-session.json';

export const currentSessionSchema = z.object({
  v: z.literal(1),
  liveId: z.string().min(1),
  surface: z.enum(['demo', 'direct', 'gateway']),
  /** base_url or gateway_url the session was created on (null in demo mode). */
  serviceUrl: z.string().nullable(),
  callMode: z.enum(CALL_MODES),
  startAtMs: z.number(),
  liveAtMs: z.number().nullable(),
});
export type CurrentSession = z.infer<typeof currentSessionSchema>;

export interface JournalOptions {
  path: string;
  clock: Clock;
  surface(): CurrentSession['surface'];
  serviceUrl(): string | null;
  logger?: Logger;
}

export interface SessionJournal {
  /** Feed every kiosk event here. */
  onEvent(event: KioskEvent): void;
}

/** Keep `current-session.json` in step with the running session (observes kiosk events). */
export function createSessionJournal(options: JournalOptions): SessionJournal {
  const logger = options.logger ?? silentLogger;
  let startAtMs: number | null = null;
  let current: CurrentSession | null = null;

  const save = (record: CurrentSession | null) => {
    try {
      if (record) writeFileAtomic(options.path, JSON.stringify(record));
      else rmSync(options.path, { force: true });
    } catch (error) {
      logger.error('Could not update the current-session file', { error: String(error) });
    }
  };

  return {
    onEvent(event) {
      if (event.type === 'credentials') {
        current = {
          v: 1,
          liveId: event.liveId,
          surface: options.surface(),
          serviceUrl: options.serviceUrl(),
          callMode: event.callMode,
          startAtMs: startAtMs ?? options.clock.now(),
          liveAtMs: null,
        };
        save(current);
        return;
      }
      if (event.type !== 'state') return;
      const { state } = event;
      if (state.phase === 'creating') startAtMs = options.clock.now();
      if (state.phase === 'live' && current && current.liveAtMs === null) {
        current = { ...current, liveAtMs: state.sinceMs };
        save(current);
      }
      if (state.phase === 'ended' || state.phase === 'failed' || state.phase === 'idle') {
        if (current) save(null);
        current = null;
        startAtMs = null;
      }
    },
  };
}

/** The leftover session of a previous run, or null (no file, or a file we cannot read: removed). */
export function readLeftover(path: string, logger: Logger = silentLogger): CurrentSession | null {
  if (!existsSync(path)) return null;
  try {
    return currentSessionSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch (error) {
    logger.warn('Ignoring an unreadable current-session file', { error: String(error) });
    try {
      rmSync(path, { force: true });
    } catch (removeError) {
      // A folder in its place (a bad copy or restore): never a crash at start-up; the operator reads why.
      logger.warn('Could not remove the unreadable current-session file', { error: String(removeError) });
    }
    return null;
  }
}

export interface RecoverOptions {
  path: string;
  ledger: Ledger;
  /** A client for the leftover's service (null: none can be built, e.g. demo mode, whose emulator died
   *  with the app, or the service settings changed). */
  clientFor(leftover: CurrentSession): ServiceClient | null;
  clock: Clock;
  logger?: Logger;
  transportFactory?: TransportFactory;
  pollMs?: number;
  queryTimeoutMs?: number;
}

export interface RecoveryOutcome {
  liveId: string;
  /** We sent the hangup (the session was still running). */
  hungUp: boolean;
  record: SessionRecord;
}

/** Check, hang up and record a leftover session. Never throws: problems are logged and recorded. */
export async function recoverLeftover(options: RecoverOptions): Promise<RecoveryOutcome | null> {
  const logger = options.logger ?? silentLogger;
  const leftover = readLeftover(options.path, logger);
  if (!leftover) return null;
  logger.warn('A session was left over from the last run; checking it', { liveId: leftover.liveId, surface: leftover.surface });
  const client = options.clientFor(leftover);
  let hungUp = false;
  let live: Awaited<ReturnType<typeof queryUntilEnded>> = null;
  let errorCode: string | undefined;
  if (client) {
    try {
      const first = await client.querySession(leftover.liveId);
      live = first;
      if (first.status !== 'ended') {
        hungUp = await hangupWithoutConnInit(client, leftover.liveId, {
          clock: options.clock,
          logger,
          ...(options.transportFactory ? { transportFactory: options.transportFactory } : {}),
        });
        live = (await queryUntilEnded(client, leftover.liveId, {
          clock: options.clock,
          logger,
          ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
          ...(options.queryTimeoutMs !== undefined ? { timeoutMs: options.queryTimeoutMs } : {}),
        })) ?? first;
      }
    } catch (error) {
      errorCode = toAvatarError(error).code;
      logger.warn('Could not check the leftover session', { liveId: leftover.liveId, code: errorCode });
    }
  } else {
    errorCode = 'unreachable';
    logger.warn('The leftover session cannot be checked (its service is not available now)', { liveId: leftover.liveId, surface: leftover.surface });
  }
  const ended = live?.status === 'ended';
  const record: SessionRecord = {
    kind: 'session',
    v: 1,
    start_at: new Date(leftover.startAtMs).toISOString(),
    live_at: leftover.liveAtMs === null ? null : new Date(leftover.liveAtMs).toISOString(),
    end_at: new Date(options.clock.now()).toISOString(),
    live_id: leftover.liveId,
    surface: leftover.surface,
    call_mode: leftover.callMode,
    time_to_live_ms: leftover.liveAtMs === null ? null : leftover.liveAtMs - leftover.startAtMs,
    not_ready_retries: 0,
    reconnects: 0,
    end_reason: 'app_crash',
    ended_by: hungUp ? 'client' : ended ? 'server' : null,
    billed_seconds: ended ? (live?.billed_seconds ?? null) : null,
    credits_cost: ended && typeof live?.credits_cost === 'number' ? live.credits_cost : 'unknown',
    recovered: true,
    ...(errorCode ? { error_code: errorCode } : {}),
  };
  try {
    await options.ledger.append(record);
  } catch (error) {
    logger.error('Could not record the recovered session', { error: String(error) });
  }
  rmSync(options.path, { force: true });
  logger.info('Leftover session recovered', { liveId: leftover.liveId, hungUp, ended, billedSeconds: record.billed_seconds, creditsCost: record.credits_cost });
  return { liveId: leftover.liveId, hungUp, record };
}
