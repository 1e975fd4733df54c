import type { EquivalentMutant } from './equivalent.ts';

/** Equivalent mutants of the fleet's host-updates files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_HOST_UPDATES: EquivalentMutant[] = [];
