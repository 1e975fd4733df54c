/**
 * Where each equivalent-mutant entry (equivalent.ts) sits in the source it quotes. An entry hides a
 * mutant only at the one line it names: a line that holds the entry's `line` text and the first line of
 * its `original`, with its `above` text (when given) on one of the 8 lines before it. An entry that
 * names no line (the code moved on) or several (the text now appears twice) is *stale*: it hides
 * nothing, so its mutant counts as living again, and `npm run mutate` names it until the entry is fixed
 * or deleted. This runs with the mutation tool, never in `npm test`: editing a quoted line must not
 * fail the test suite, only show up where the equivalents are used.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { EquivalentMutant } from './equivalent.ts';

/** Whitespace runs made one space: the quotes survive re-indentation and re-wrapping. */
export const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

/** How many lines above its place an entry's `above` text may be. */
const ABOVE_WINDOW = 8;

/** An entry and the 1-based line it hides mutants on. */
export interface PlacedEntry {
  entry: EquivalentMutant;
  line: number;
}

/** An entry that hides nothing, and why. */
export interface StaleEntry {
  entry: EquivalentMutant;
  /** 'lines': it matches no line of its file, or several (listed); the others say why there was nothing to match. */
  problem: 'lines' | 'file missing' | 'no group mutates the file';
  lines: number[];
}

export interface Placement {
  placed: PlacedEntry[];
  stale: StaleEntry[];
}

/** The 1-based lines of `source` an entry matches. */
export function linesMatching(entry: EquivalentMutant, source: string): number[] {
  const lines = source.split('\n');
  const quoted = squash(entry.line);
  const firstOriginal = squash(entry.original.split('\n')[0]!);
  const above = entry.above === undefined ? undefined : squash(entry.above);
  const found: number[] = [];
  lines.forEach((text, i) => {
    const line = squash(text);
    if (!line.includes(quoted) || !line.includes(firstOriginal)) return;
    if (above !== undefined && !lines.slice(Math.max(0, i - ABOVE_WINDOW), i).some((l) => squash(l).includes(above))) return;
    found.push(i + 1);
  });
  return found;
}

/**
 * Places every entry whose file `sourceOf` is asked about. `sourceOf` gives a file's text, or null when
 * the file does not exist; entries for files it answers `undefined` for are outside this placement
 * (another report, another group) and left out of both lists.
 */
export function placeEntries(entries: readonly EquivalentMutant[], sourceOf: (file: string) => string | null | undefined): Placement {
  const placed: PlacedEntry[] = [];
  const stale: StaleEntry[] = [];
  for (const entry of entries) {
    const source = sourceOf(entry.file);
    if (source === undefined) continue;
    if (source === null) {
      stale.push({ entry, problem: 'file missing', lines: [] });
      continue;
    }
    const lines = linesMatching(entry, source);
    if (lines.length === 1) placed.push({ entry, line: lines[0]! });
    else stale.push({ entry, problem: 'lines', lines });
  }
  return { placed, stale };
}

/**
 * The entries checked against the files under `root` as they are now: each entry whose file is in
 * `scope` is placed in that file. With `mutated` (the files every group mutates, when all groups are
 * asked for), an entry whose file is in none is stale as well: it could never hide anything.
 */
export function checkEntries(entries: readonly EquivalentMutant[], root: string, scope: ReadonlySet<string>, mutated?: ReadonlySet<string>): Placement {
  const orphans = mutated ? entries.filter((e) => !mutated.has(e.file)) : [];
  const placement = placeEntries(
    entries.filter((e) => !orphans.includes(e)),
    (file) => (!scope.has(file) ? undefined : existsSync(path.join(root, file)) ? readFileSync(path.join(root, file), 'utf8') : null),
  );
  placement.stale.push(...orphans.map((entry): StaleEntry => ({ entry, problem: 'no group mutates the file', lines: [] })));
  return placement;
}

/** A short name for an entry: its file, the quoted line and the mutant it describes. */
export function entryName(entry: EquivalentMutant): string {
  const cut = (text: string, max: number) => {
    const plain = squash(text);
    return plain.length > max ? `${plain.slice(0, max - 1)}…` : plain;
  };
  return `${entry.file}: "${cut(entry.line, 70)}" (${entry.mutator} ${cut(entry.original, 50)} → ${cut(entry.replacement, 30)})`;
}

/** One line per stale entry: its name and what is wrong with it. */
export function describeStale(stale: StaleEntry): string {
  const why =
    stale.problem === 'file missing'
      ? 'its file does not exist'
      : stale.problem === 'no group mutates the file'
        ? 'no mutation group mutates its file'
        : stale.lines.length === 0
          ? 'matches no line'
          : `matches ${stale.lines.length} lines (${stale.lines.join(', ')}): give it an \`above\` only one of them has`;
  return `  ${entryName(stale.entry)}: ${why}`;
}

/** The entry that hides this mutant, if one is placed on its first line with the same edit. */
export function equivalentAt(
  placed: readonly PlacedEntry[],
  file: string,
  mutant: { mutatorName: string; replacement: string; line: number },
  original: string,
): EquivalentMutant | undefined {
  return placed.find(
    ({ entry, line }) =>
      line === mutant.line &&
      entry.file === file &&
      entry.mutator === mutant.mutatorName &&
      squash(entry.original) === squash(original) &&
      squash(entry.replacement) === squash(mutant.replacement),
  )?.entry;
}
