/**
 * The kiosk's event stream: what the renderer hears (session states, credentials, mute, spares, call
 * figures, opening hours, holds, config changes; `KioskEvent` in the contract) and what observers hang
 * onto (staff operations, metrics, the fleet). Every service of the kiosk emits into one bus, in order.
 */
import type { KioskEvent } from '../contract.ts';
import type { Logger } from '../core/log.ts';

export interface KioskEvents {
  /** Hear every event from now on; returns the unsubscribe function. */
  onEvent(listener: (event: KioskEvent) => void): () => void;
}

export interface EventBus extends KioskEvents {
  /** Tell every listener, in the order they subscribed; one that throws is logged and the rest still hear it. */
  emit(event: KioskEvent): void;
  /** Drop every listener (shutdown: nobody hears anything after it). */
  clear(): void;
}

export function createEventBus(logger: Logger): EventBus {
  const listeners = new Set<(event: KioskEvent) => void>();
  return {
    onEvent(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    emit(event) {
      for (const listener of [...listeners]) {
        try {
          listener(event);
        } catch (error) {
          logger.warn('An event listener threw', { error: String(error) });
        }
      }
    },
    clear() {
      listeners.clear();
    },
  };
}
