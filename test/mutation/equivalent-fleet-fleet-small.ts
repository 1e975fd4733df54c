import type { EquivalentMutant } from './equivalent.ts';

/** Equivalent mutants of the fleet's fleet-small files (see equivalent.ts for the rules): each with the reason it cannot change behaviour. */
export const EQUIVALENT_FLEET_FLEET_SMALL: EquivalentMutant[] = [];
