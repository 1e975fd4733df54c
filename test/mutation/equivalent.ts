/**
 * Mutants that cannot change behaviour, one by one with the reason. `npm run mutate` reports them apart
 * and leaves them out of the score. Matched by file, mutator, the source text replaced and the
 * replacement (not by line, so an entry survives edits elsewhere in the file); an entry that no longer
 * matches simply stops applying, and the mutant shows up as a survivor again.
 */
export interface EquivalentMutant {
  file: string;
  mutator: string;
  original: string;
  replacement: string;
  reason: string;
}

export const EQUIVALENT_MUTANTS: EquivalentMutant[] = [];
