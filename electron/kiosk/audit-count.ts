/**
 * Calls the service's content review ended (`audit_violation`, spec §6): counted once per session, for
 * the kiosk's /metrics, the fleet status and the console row. A rising count on a public kiosk means its
 * visitors (or the persona) run into the service's moderation: staff should look (docs/safety.md).
 */
import type { KioskEvent } from '../contract.ts';
import type { SessionState } from '../core/session-types.ts';

/** Whether a terminal state is a call the content review ended. */
export function endedByContentReview(state: SessionState): boolean {
  if (state.phase !== 'ended' && state.phase !== 'failed') return false;
  return state.summary?.hangupReason === 'audit_violation' || (state.phase === 'failed' && state.error.code === 'content_blocked');
}

export interface AuditCount {
  readonly count: number;
  /** Feed it the kiosk's events (a terminal state is counted once per live id). */
  observe(event: KioskEvent): void;
}

export function createAuditCount(): AuditCount {
  let count = 0;
  let lastCounted: string | null = null;
  return {
    get count() {
      return count;
    },
    observe(event) {
      if (event.type !== 'state' || !endedByContentReview(event.state)) return;
      const id = ('liveId' in event.state ? event.state.liveId : null) ?? `no-id-${count}`;
      if (id === lastCounted) return; // the same end told again (a rewritten terminal state)
      lastCounted = id;
      count += 1;
    },
  };
}
