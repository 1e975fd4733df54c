/**
 * A Stryker JSON report counted the way `npm run mutate` scores it: killed (incl. timeouts) over the
 * mutants that can change behaviour. A mutant an equivalent-mutant entry hides is counted apart; the
 * entries are placed in the source as the report recorded it (equivalent-places.ts), so an entry that
 * no longer names exactly one line of that source hides nothing and its mutant is counted as living.
 */
import path from 'node:path';
import type { EquivalentMutant } from './equivalent.ts';
import { equivalentAt, placeEntries, squash, type StaleEntry } from './equivalent-places.ts';

/** One mutant as Stryker's JSON report (mutation-testing-report-schema) records it: 1-based lines and columns. */
export interface ReportedMutant {
  mutatorName: string;
  replacement: string;
  status: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}
export interface Report {
  files: Record<string, { source: string; mutants: ReportedMutant[] }>;
}

export interface Tally {
  total: number;
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  equivalent: number;
  invalid: number;
  /** One line per living mutant not hidden by an equivalent entry. */
  living: string[];
  /** Entries for files in the report that hide nothing there (no line, or several, of the recorded source). */
  stale: StaleEntry[];
}

export const emptyTally = (): Tally => ({ total: 0, killed: 0, timeout: 0, survived: 0, noCoverage: 0, equivalent: 0, invalid: 0, living: [], stale: [] });

/** The source text a mutant replaced. */
export function originalText(m: ReportedMutant, lines: string[]): string {
  const { start, end } = m.location;
  if (start.line === end.line) return lines[start.line - 1]!.slice(start.column - 1, end.column - 1);
  const parts = [lines[start.line - 1]!.slice(start.column - 1), ...lines.slice(start.line, end.line - 1), lines[end.line - 1]!.slice(0, end.column - 1)];
  return parts.join('\n');
}

/** Adds `report` to `into`; file names in the report are made relative to `root`, as the entries name them. */
export function tallyReport(report: Report, entries: readonly EquivalentMutant[], root: string, into: Tally = emptyTally()): Tally {
  const sources = new Map(Object.entries(report.files).map(([name, f]) => [path.relative(root, path.resolve(root, name)), f.source]));
  const { placed, stale } = placeEntries(entries, (file) => sources.get(file));
  into.stale.push(...stale);
  for (const [fileName, { source, mutants }] of Object.entries(report.files)) {
    const file = path.relative(root, path.resolve(root, fileName));
    const lines = source.split('\n');
    for (const m of mutants) {
      into.total++;
      if (m.status === 'Killed') into.killed++;
      else if (m.status === 'Timeout') into.timeout++;
      else if (m.status === 'Survived' || m.status === 'NoCoverage') {
        const original = originalText(m, lines);
        if (equivalentAt(placed, file, { mutatorName: m.mutatorName, replacement: m.replacement, line: m.location.start.line }, original)) {
          into.equivalent++;
          continue;
        }
        if (m.status === 'Survived') into.survived++;
        else into.noCoverage++;
        const where = `${file}:${m.location.start.line}:${m.location.start.column}`;
        into.living.push(`  ${m.status === 'NoCoverage' ? 'no coverage' : 'survived'}  ${where}  ${m.mutatorName}: ${squash(original).slice(0, 100)}  →  ${squash(m.replacement).slice(0, 100)}`);
      } else into.invalid++; // RuntimeError (the module throws on import), CompileError, Ignored: left out, as Stryker does
    }
  }
  return into;
}

/** Killed (incl. timeouts) over the mutants that can change behaviour. */
export function score(t: Tally): number {
  const detected = t.killed + t.timeout;
  const valid = detected + t.survived + t.noCoverage;
  return valid === 0 ? 100 : (100 * detected) / valid;
}
