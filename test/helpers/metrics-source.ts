/**
 * A scripted MetricsSource for the fleet metrics: the test sets its state, mode and last-call figures and
 * pushes events and hangup causes by hand, and can ask how many listeners are still subscribed (to see that
 * an unsubscribe really let go).
 */
import type { HangupCause, KioskEvent, LastCallQuality } from '../../electron/contract.ts';
import type { SessionState, SessionSummary } from '../../electron/core/session-types.ts';
import type { MetricsSource } from '../../electron/fleet/metrics.ts';

export interface ScriptedMetricsSource extends MetricsSource {
  state: SessionState;
  mode: string;
  lastCallQuality?: LastCallQuality | null;
  /** Sends an event to every subscribed listener. */
  emit(event: KioskEvent): void;
  /** Sets `state` and sends it as a state event. */
  enter(state: SessionState): void;
  /** Sends a renderer hangup cause (only when the source was made with causes). */
  cause(cause: HangupCause): void;
  /** Listeners subscribed now: events, hangup causes. */
  listening(): { events: number; causes: number };
}

export function scriptedMetricsSource(options: { mode?: string; state?: SessionState; withCauses?: boolean } = {}): ScriptedMetricsSource {
  const events = new Set<(event: KioskEvent) => void>();
  const causes = new Set<(cause: HangupCause, liveId: string | null) => void>();
  const source: ScriptedMetricsSource = {
    state: options.state ?? { phase: 'idle' },
    mode: options.mode ?? 'demo',
    onEvent(listener) {
      events.add(listener);
      return () => void events.delete(listener);
    },
    emit(event) {
      for (const l of [...events]) l(event);
    },
    enter(state) {
      const previous = source.state.phase;
      source.state = state;
      source.emit({ type: 'state', state, previous });
    },
    cause(cause) {
      for (const l of [...causes]) l(cause, 'live-1');
    },
    listening: () => ({ events: events.size, causes: causes.size }),
  };
  if (options.withCauses !== false) {
    source.onHangupCause = (listener) => {
      causes.add(listener);
      return () => void causes.delete(listener);
    };
  }
  return source;
}

/** A session's terminal summary: live after 1.5 s, hung up by the visitor, billed 30 s for 2.5 credits. */
export function sessionSummary(over: Partial<SessionSummary> = {}): SessionSummary {
  return {
    liveId: 'live-1',
    callMode: 'audio',
    wentLive: true,
    hangupReason: 'user_end',
    endedBy: 'client',
    finalStatus: 'ended',
    billedSeconds: 30,
    creditsCost: 2.5,
    notReadyRetries: 0,
    reconnects: 0,
    liveDurationS: 300,
    timingsMs: { create: 0, socketOpen: 100, live: 1_500, ended: 31_500 },
    ...over,
  };
}
