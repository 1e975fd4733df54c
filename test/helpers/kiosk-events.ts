/**
 * Waiting on a kiosk's event stream in integration tests (real time, bounded), and the usual
 * predicates over its state events.
 */
import type { KioskEvent, SessionState } from '../../electron/contract.ts';
import type { Kiosk } from '../../electron/kiosk/compose.ts';

/** The first event matching `predicate`; rejects after `timeoutMs` with the call's state. */
export function waitForEvent(kiosk: Pick<Kiosk, 'events' | 'calls'>, predicate: (e: KioskEvent) => boolean, timeoutMs: number): Promise<KioskEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for an event (state: ${JSON.stringify(kiosk.calls.state)})`));
    }, timeoutMs);
    const off = kiosk.events.onEvent((e) => {
      if (predicate(e)) {
        clearTimeout(timer);
        off();
        resolve(e);
      }
    });
  });
}

export const phaseIs = (phase: SessionState['phase']) => (e: KioskEvent) => e.type === 'state' && e.state.phase === phase;
export const isTerminal = (e: KioskEvent) => e.type === 'state' && (e.state.phase === 'ended' || e.state.phase === 'failed');
