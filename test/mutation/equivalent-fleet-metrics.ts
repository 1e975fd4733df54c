import type { EquivalentMutant } from './equivalent.ts';

/** Equivalent mutants of the fleet's metrics files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_METRICS: EquivalentMutant[] = [];
