/**
 * One session the call orchestrator runs (call-orchestrator.ts): its SessionController, what the renderer
 * has been shown of it, and the promises that tell when it exists (its credentials are out), when it was
 * launched (a tap may first wait for its spare) and when it is over; and its one hangup, shared by every
 * caller (the visitor, a media error, the renderer lost, shutdown).
 */
import type { ErrorInfo } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import type { SessionController } from '../core/session-controller.ts';
import type { SessionEvent } from '../core/session-types.ts';
import type { TakenSpare } from './spare.ts';

export interface CallSession {
  controller: SessionController;
  /** Settles when the controller's start() settles (the session is over). */
  done: Promise<void>;
  hangupPromise: Promise<void> | null;
  /** Set by a media error the renderer reported: the terminal state is reported as this failure. */
  mediaFailure: ErrorInfo | null;
  /** The UI has been told this session's terminal state. */
  sawTerminal: boolean;
  unsubscribe: () => void;
  /** Resolves with the live id once credentials are out (or null when the session ended before). */
  created: Promise<string | null>;
  resolveCreated: (liveId: string | null) => void;
  /** Resolves once the controller was started (a tap may first wait for its spare). */
  launched: Promise<void>;
  resolveLaunched: () => void;
  /** Events held back while an adopted spare's first conn_init answer is due (null: deliver directly). */
  pending: SessionEvent[] | null;
  taken: TakenSpare | null;
  /** Replaced by a fresh session after its spare failed at the tap: its events and end are not the UI's. */
  superseded: boolean;
}

export function newCallSession(controller: SessionController): CallSession {
  let resolveCreated!: (liveId: string | null) => void;
  let resolveLaunched!: () => void;
  return {
    controller,
    done: Promise.resolve(),
    hangupPromise: null,
    mediaFailure: null,
    sawTerminal: false,
    unsubscribe: () => {},
    created: new Promise<string | null>((resolve) => (resolveCreated = resolve)),
    resolveCreated: (liveId) => resolveCreated(liveId),
    launched: new Promise<void>((resolve) => (resolveLaunched = resolve)),
    resolveLaunched: () => resolveLaunched(),
    pending: null,
    taken: null,
    superseded: false,
  };
}

/** Hang the session up once (type 5); later calls share the first, and all wait until it is over. */
export function hangupOnce(session: CallSession, why: string, logger: Logger): Promise<void> {
  session.hangupPromise ??= (async () => {
    logger.info('Hanging up the session', { why });
    await session.launched; // a tap still taking its spare starts first, then hangs up
    try {
      await session.controller.hangup();
    } catch (error) {
      logger.warn('Hangup failed', { error: String(error) });
    }
    await session.done;
  })();
  return session.hangupPromise;
}
