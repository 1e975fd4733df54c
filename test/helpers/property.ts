/**
 * Seeds and run counts for the property and fuzz tests (fast-check). Every run is seeded so a failure can
 * be replayed exactly:
 *
 *   PROPERTY_SEED=<n>   replay with this seed (the failing seed is printed in the failure message, with
 *                       the shrunk counterexample and the `path` fast-check needs to jump straight to it)
 *   PROPERTY_SEED=random  a fresh seed per run (printed)
 *   PROPERTY_RUNS_SCALE=<x>  multiply every run count (e.g. 10 for a long local hunt, 0.1 for a quick look)
 *
 * Without them the seed is fixed, so `npm test` is deterministic and CI never flakes on a new sequence.
 */
import fc from 'fast-check';

export const DEFAULT_PROPERTY_SEED = 20_261_123;

export function propertySeed(): number {
  const raw = process.env.PROPERTY_SEED;
  if (raw === undefined || raw === '') return DEFAULT_PROPERTY_SEED;
  if (raw === 'random') return (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`PROPERTY_SEED must be an integer or "random" (got ${raw})`);
  return seed;
}

export function scaledRuns(runs: number): number {
  const scale = Number(process.env.PROPERTY_RUNS_SCALE ?? 1);
  return Math.max(1, Math.round(runs * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}

/**
 * fast-check parameters for one property. `log` receives one line naming the seed (node:test's
 * `t.diagnostic`, so it shows in the report). On failure fast-check's own message carries the seed, the
 * path and the shrunk counterexample; `reporter` adds the replay command on top.
 */
export function propertyParams<T>(name: string, runs: number, log: (line: string) => void): fc.Parameters<T> {
  const seed = propertySeed();
  const numRuns = scaledRuns(runs);
  log(`${name}: ${numRuns} runs, seed ${seed} (replay: PROPERTY_SEED=${seed})`);
  return {
    seed,
    numRuns,
    reporter: (details) => {
      if (!details.failed) return;
      throw new Error(
        `${name} failed. Replay with PROPERTY_SEED=${details.seed} (path ${details.counterexamplePath ?? '?'}).\n` +
          fc.defaultReportMessage(details) +
          `\nError on the shrunk counterexample: ${errorText(details.errorInstance)}`,
      );
    },
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
