/**
 * `npx tsx test/mutation/equivalents-table.ts`: prints the equivalent-mutant table of docs/proof.md
 * (a per-file count, then one row per entry) from test/mutation/equivalent.ts, the list of record, so the
 * page never drifts from what the score leaves out.
 */
import { EQUIVALENT_MUTANTS, type EquivalentMutant } from './equivalent.ts';

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
/** One line of source, back-quotes made plain quotes (a Markdown code span cannot hold them), cut past 80 characters. */
function cut(text: string, max = 78): string {
  const plain = squash(text).replaceAll('`', "'");
  return plain.length > max + 2 ? `${plain.slice(0, max)}…` : plain;
}
const cell = (text: string) => text.replaceAll('|', '\\|');
const short = (file: string) => file.replace(/^electron\//, '');

function row(e: EquivalentMutant): string {
  return `| \`${short(e.file)}\` | ${e.mutator}: \`${cell(cut(e.original))}\` → \`${cell(cut(e.replacement))}\` (in \`${cell(cut(e.line))}\`) | ${cell(squash(e.reason))} |`;
}

const counts = new Map<string, number>();
for (const e of EQUIVALENT_MUTANTS) counts.set(short(e.file), (counts.get(short(e.file)) ?? 0) + 1);
console.log(`${EQUIVALENT_MUTANTS.length} entries. Per file: ${[...counts].sort(([a], [b]) => a.localeCompare(b)).map(([f, n]) => `\`${f}\` ${n}`).join(', ')}.`);
console.log('\n| file | mutant | why it cannot change behaviour |\n|---|---|---|');
for (const e of EQUIVALENT_MUTANTS) console.log(row(e));
