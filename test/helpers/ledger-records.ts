/** Ledger records and the session summaries the recorder turns into them, for the ledger's unit tests. */
import type { SessionSummary } from '../../electron/core/session-types.ts';
import type { SessionRecord } from '../../electron/operations/ledger.ts';

/** A local time in ms, months counted from 1 as on a calendar (the ledger files records by local month). */
export const at = (y: number, m: number, d: number, h = 12) => new Date(y, m - 1, d, h).getTime();

/** A video call's record ending at `endMs`: tapped 60 s and live 50 s before, ended by the visitor, billed 50 s. */
export function session(endMs: number, over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    kind: 'session',
    v: 1,
    start_at: new Date(endMs - 60_000).toISOString(),
    live_at: new Date(endMs - 50_000).toISOString(),
    end_at: new Date(endMs).toISOString(),
    live_id: `live-${endMs}`,
    surface: 'direct',
    call_mode: 'video',
    time_to_live_ms: 10_000,
    not_ready_retries: 0,
    reconnects: 0,
    end_reason: 'user_end',
    ended_by: 'client',
    billed_seconds: 50,
    credits_cost: 75,
    recovered: false,
    ...over,
  };
}

/** The summary of an audio call L1 that went live and was hung up by the visitor, billed 46 s. */
export const sessionSummary = (over: Partial<SessionSummary> = {}): SessionSummary => ({
  liveId: 'L1',
  callMode: 'audio',
  wentLive: true,
  hangupReason: 'user_end',
  endedBy: 'client',
  finalStatus: 'ended',
  billedSeconds: 46,
  creditsCost: 69,
  notReadyRetries: 2,
  reconnects: 1,
  liveDurationS: 600,
  timingsMs: { create: 100, socketOpen: 150, live: 6_200, ended: 52_000 },
  ...over,
});
