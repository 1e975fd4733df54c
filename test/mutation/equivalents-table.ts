/**
 * `npx tsx test/mutation/equivalents-table.ts`: prints the equivalent mutants as a Markdown table (a
 * per-file count, then one row per entry with its reason) from test/mutation/equivalent*.ts, the list of
 * record, for reading and review. docs/proof.md points here instead of carrying a copy that would go
 * stale with every edit of a quoted line.
 */
import { EQUIVALENT_MUTANTS, type EquivalentMutant } from './equivalent.ts';
import { squash } from './equivalent-places.ts';
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
