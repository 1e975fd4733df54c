/**
 * The age gate's counts, and nothing else: how many visitors were asked, confirmed, declined. No time of
 * day, no visitor, no call id is kept with them (a count is all a venue needs to see the gate at work, and
 * all the kiosk may keep about who stood in front of it). Staff read them on the Status tab, the kiosk's
 * /metrics serves them as counters, the fleet status carries them. A visitor who walked away from the gate
 * is asked − confirmed − declined. Electron-free, no I/O: the counts start at zero with each start.
 */

export const AGE_GATE_OUTCOMES = ['asked', 'confirmed', 'declined'] as const;
export type AgeGateOutcome = (typeof AGE_GATE_OUTCOMES)[number];
export type AgeGateCounts = Readonly<Record<AgeGateOutcome, number>>;

export interface AgeGateCounter {
  /** One more visitor at the gate (`asked`), or its answer (`confirmed`, `declined`). */
  count(outcome: AgeGateOutcome): void;
  /** The counts since the kiosk started (a copy). */
  snapshot(): AgeGateCounts;
}

export function createAgeGateCounter(): AgeGateCounter {
  const counts: Record<AgeGateOutcome, number> = { asked: 0, confirmed: 0, declined: 0 };
  return {
    count(outcome) {
      counts[outcome] += 1;
    },
    snapshot: () => ({ ...counts }),
  };
}
