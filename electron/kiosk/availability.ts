/**
 * Availability: whether the kiosk takes a new call now, and what it keeps ready for one. Opening hours
 * (fleet/opening-hours.ts decides; while closed, calls are refused) and the hold (an update is about to
 * quit the app: "back in a moment"); a call already running goes on through either. What the attract
 * screen reports is allowed through only while the kiosk is open and not held: the warm connection is
 * kept fresh while it shows, and spare sessions are made for the next visitor. The renderer hears an
 * `opening` or `hold` event on each change.
 */
import { ok, type AttractReportArgs, type HoldReason, type KioskEvent, type OpeningInfo, type Result } from '../contract.ts';
import type { Logger } from '../core/log.ts';
import type { SpareManager } from './spare.ts';

export interface AvailabilityOptions {
  logger: Logger;
  emit(event: KioskEvent): void;
  /** The kiosk is shutting down: nothing is warmed or made, and changes tell nobody. */
  closing(): boolean;
  /** The connection's keep-warm (kiosk/service-connection.ts). */
  keepWarm(showing: boolean): void;
  spares: Pick<SpareManager, 'report' | 'discard'>;
}

export interface Availability {
  readonly opening: OpeningInfo;
  /** Open or close (a change is logged and told; closing drops the spare). */
  setOpening(opening: OpeningInfo): void;
  readonly hold: HoldReason | null;
  /** Hold new calls or take them again (null). */
  setHold(hold: HoldReason | null): void;
  /** Why a new call is refused now (the kiosk is closed or held), or null. */
  refusal(): string | null;
  /** The attract screen's report (`attract:report`): warm connection and spares, when allowed. */
  report(args: AttractReportArgs): Result<void>;
  /** Tell the warm connection and the spares again what the attract screen last reported (a new client). */
  replay(): void;
}

export function createAvailability(options: AvailabilityOptions): Availability {
  const { logger, spares } = options;
  let opening: OpeningInfo = { open: true, nextOpenAt: null, timeZone: null };
  let hold: HoldReason | null = null;
  /** What the attract screen last reported (replayed to the spare manager when the kiosk opens). */
  let lastAttract: AttractReportArgs = { showing: false, present: null };

  function report(args: AttractReportArgs): Result<void> {
    logger.debug('Attract report', { showing: args.showing, present: args.present });
    lastAttract = args;
    if (!options.closing()) {
      options.keepWarm(args.showing && opening.open && !hold);
      // Closed or held: no spare sessions (nobody can take them).
      spares.report(opening.open && !hold ? args : { showing: false, present: args.present });
    }
    return ok(undefined);
  }

  return {
    get opening() {
      return { ...opening };
    },
    setOpening(next) {
      const changed = next.open !== opening.open || next.nextOpenAt !== opening.nextOpenAt || next.timeZone !== opening.timeZone;
      opening = { ...next };
      if (!changed || options.closing()) return;
      logger.info(opening.open ? 'Opening hours: open' : 'Opening hours: closed', { nextOpenAt: opening.nextOpenAt });
      // The spare manager hears "not showing" first: dropping the spare while it still thinks a visitor
      // is in front would have it make a new one at once, while the kiosk is closed.
      report(lastAttract);
      if (!opening.open) spares.discard('closed');
      options.emit({ type: 'opening', opening: { ...opening } });
    },
    get hold() {
      return hold;
    },
    setHold(next) {
      if (next === hold || options.closing()) return;
      hold = next;
      logger.info(hold ? 'New calls held' : 'New calls taken again', { reason: hold });
      // As for closing: "not showing" first, so dropping the spare does not make a new one during the hold.
      report(lastAttract);
      if (hold) spares.discard('held');
      options.emit({ type: 'hold', hold });
    },
    refusal() {
      if (!opening.open) return 'The kiosk is closed (outside its opening hours).';
      if (hold) return 'The kiosk is updating; back in a moment.';
      return null;
    },
    report,
    replay() {
      report(lastAttract);
    },
  };
}
