/**
 * A spare handed to a tap, as the call orchestrator adopts it, what every session teaches the spare
 * manager, and how a spare's own held session ended. Pure decisions over a session's events; the
 * orchestrator and the spare manager run them.
 *
 * The tap makes the spare's held controller the call's and releases it (`SessionController.release`).
 * An adopted spare's states are held from the renderer until its first conn_init is answered: answered
 * (live, ending — the visitor hung up first, before any conn_init — or warming after a NOT_READY) it was
 * used, and the held states are played in order; anything else (LIVE_CONN_INIT_FAILED, the socket lost,
 * a 404 expiry) it failed, and the tap falls back to a fresh session without the renderer ever seeing it.
 * The orchestrator settles the `TakenSpare` as the verdict says.
 */
import type { Logger } from '../core/log.ts';
import type { TerminalState } from '../core/session-controller.ts';
import type { SessionEvent, SessionState } from '../core/session-types.ts';
import type { ErrorCode } from '../core/errors.ts';

/** What a held session's state means for its adopted spare. */
export type AdoptionVerdict =
  /** Still waiting for the first answer: keep holding. */
  | { kind: 'wait' }
  /** Answered (used), or ended by the visitor: settle it and play the held events. */
  | { kind: 'settled'; status: 'used' }
  /** Its first conn_init failed: settle it as failed and start a fresh session for the tap. */
  | { kind: 'failed'; reason: string };

export function adoptionVerdict(next: SessionState): AdoptionVerdict {
  if (next.phase === 'creating' || next.phase === 'connecting') return { kind: 'wait' };
  const answered = next.phase === 'live' || next.phase === 'ending' || (next.phase === 'warming' && next.notReadyRetries > 0);
  if (answered) return { kind: 'settled', status: 'used' };
  // No `cancelled` verdict: the machine fails a session as cancelled only for a hangup while its create is in
  // flight, and a released spare's create answered long ago (the `creating` a tap shows is the orchestrator's).
  return { kind: 'failed', reason: next.phase === 'failed' ? next.error.code : 'socket_lost' };
}

/** A released spare's first state came from `held`, which the renderer never sees: to it, the tap was creating. */
export function asTapEvent(event: SessionEvent): SessionEvent {
  return event.type === 'state' && event.previous === 'held' ? { ...event, previous: 'creating' } : event;
}

/** The end of a spare that was lost between the hand-over and its release (its session had closed it). */
export const LOST_AT_TAP: TerminalState = {
  phase: 'failed',
  liveId: null,
  error: { code: 'network', message: 'The spare session was lost at the tap.' },
  summary: null,
};

/** What the spare manager learns from a session's event: a fresh create's outcome (401/402/403 stop
 *  spares; an adopted spare made no create of its own), and an account out of credits. */
/** What `teachSpares` tells the spare manager (spare.ts imports this file, so it is named by shape here). */
export interface SpareLearner {
  noteCreateOutcome(error: ErrorCode | null): void;
  noteOutOfCredits(): void;
}

export function teachSpares(spares: SpareLearner, adopted: boolean, event: SessionEvent): void {
  if (event.type === 'credentials' && !adopted) spares.noteCreateOutcome(null);
  if (event.type !== 'state') return;
  const st = event.state;
  if (st.phase === 'failed') {
    if (st.liveId === null && !adopted) spares.noteCreateOutcome(st.error.code);
    else if (st.error.code === 'insufficient_credits') spares.noteOutOfCredits(); // ran out during the call
  }
  if ((st.phase === 'ended' || st.phase === 'failed') && st.summary?.hangupReason === 'credit_insufficient') spares.noteOutOfCredits();
}

/**
 * How a held session that ended by itself ends its spare: expired at `maxAgeSeconds` (the machine's hold
 * expiry), failed when the service ended it (type 6) or its socket was lost, found dead or refused (404:
 * the service expired it).
 */
export function spareEnd(state: TerminalState, loss: 'closed' | 'dead' | 'error' | null): ['expired' | 'failed', string] {
  if (state.phase === 'ended') {
    if (state.summary.endedBy === 'limit') return ['expired', 'max_age'];
    return ['failed', `forced_hangup_${state.summary.hangupReason ?? 'unknown'}`];
  }
  if (loss === 'closed') return ['failed', 'socket_lost'];
  if (loss === 'dead') return ['failed', 'socket_dead'];
  return ['failed', state.error.code];
}

/**
 * The logger of a spare's session: its steps while held are the spare manager's business (the manager's
 * own lines tell the operator what happened to each room), so they go to debug; once a tap has taken it
 * (`isCall`), it is a call and logs as one.
 */
export function heldSessionLogger(log: Logger, isCall: () => boolean): Logger {
  return {
    debug: (m, d) => log.debug(m, d),
    info: (m, d) => (isCall() ? log.info(m, d) : log.debug(m, d)),
    warn: (m, d) => log.warn(m, d),
    error: (m, d) => log.error(m, d),
  };
}
