/**
 * `npm run mutate [-- <group>…] [--concurrency N] [--force] [--mutate <glob>]`
 *
 * Mutation testing of the proof suite with Stryker: each group (test/mutation/groups.ts) is mutated on its
 * own, with the tests that cover it, through the TAP runner (node:test files under tsx; the dry run records
 * which test file reaches which mutant, so a mutant runs only those files). Incremental: each group keeps
 * its results in reports/mutation/<group>.incremental.json (git-ignored), and a rerun only tests mutants
 * in code or tests that changed. `--force` retests everything.
 *
 * Prints, per group, the mutants by outcome and the score: killed (incl. timeouts) over the mutants that
 * can change behaviour. Mutants listed in equivalent.ts (each with its reason) are reported apart and left
 * out of the score; every other survivor is printed with its place. Exits 1 when a group misses its target.
 *
 * Not part of `npm test`: a folder takes minutes to hours of CPU. One Stryker at a time, concurrency 1 by
 * default (the machine is shared).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Stryker } from '@stryker-mutator/core';
import type { MutantResult, PartialStrykerOptions } from '@stryker-mutator/api/core';
import { GROUPS, type MutationGroup } from './groups.ts';
import { EQUIVALENT_MUTANTS, type EquivalentMutant } from './equivalent.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const REPORT_DIR = 'reports/mutation';

interface Args {
  groups: MutationGroup[];
  concurrency: number;
  force: boolean;
  mutate: string[] | null;
}

function parseArgs(argv: string[]): Args {
  const names: string[] = [];
  let concurrency = 1;
  let force = false;
  let mutate: string[] | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--concurrency') {
      concurrency = Number(argv[++i]);
      if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency needs a whole number ≥ 1');
    } else if (arg === '--force') {
      force = true;
    } else if (arg === '--mutate') {
      const glob = argv[++i];
      if (!glob) throw new Error('--mutate needs a glob, e.g. electron/core/session-machine.ts');
      (mutate ??= []).push(glob);
    } else if (arg.startsWith('--')) {
      throw new Error(`Unknown option ${arg}. Use: npm run mutate -- [group…] [--concurrency N] [--force] [--mutate glob]`);
    } else {
      names.push(arg);
    }
  }
  const groups = names.length === 0 ? GROUPS.filter((g) => g.byDefault) : names.map(groupNamed);
  return { groups, concurrency, force, mutate };
}

function groupNamed(name: string): MutationGroup {
  const group = GROUPS.find((g) => g.name === name);
  if (!group) throw new Error(`No mutation group "${name}". Groups: ${GROUPS.map((g) => g.name).join(', ')}`);
  return group;
}

function strykerOptions(group: MutationGroup, args: Args): PartialStrykerOptions {
  return {
    testRunner: 'tap',
    plugins: ['@stryker-mutator/tap-runner'],
    tap: {
      testFiles: group.tests,
      // node:test prints TAP when told to; tsx loads the TypeScript; the hook collects per-file coverage.
      nodeArgs: ['--test-reporter=tap', '--import', 'tsx', '-r', '{{hookFile}}', '{{testFile}}'],
      forceBail: true,
    },
    mutate: args.mutate ?? group.mutate,
    coverageAnalysis: 'perTest',
    concurrency: args.concurrency,
    incremental: true,
    incrementalFile: `${REPORT_DIR}/${group.name}.incremental.json`,
    force: args.force,
    reporters: ['progress-append-only', 'html', 'json'],
    htmlReporter: { fileName: `${REPORT_DIR}/${group.name}.html` },
    jsonReporter: { fileName: `${REPORT_DIR}/${group.name}.json` },
    tempDirName: '.stryker-tmp',
    ignorePatterns: ['reports', 'release', 'dist', 'test-results', 'test/artifacts'],
    // A mutant that makes a loop spin is a kill by timeout; the slowest covering file sets the pace.
    timeoutMS: 10_000,
    timeoutFactor: 2,
    thresholds: { high: group.target, low: group.target - 5, break: null },
    cleanTempDir: true,
    // Stryker types these as a const enum, which a type-stripping loader cannot import: same strings.
    logLevel: 'info' as PartialStrykerOptions['logLevel'],
    fileLogLevel: 'off' as PartialStrykerOptions['fileLogLevel'],
  };
}

/** The source text a mutant replaced (locations are 1-based lines, 0-based columns in Stryker's results). */
function originalText(mutant: MutantResult, sources: Map<string, string[]>): string {
  let lines = sources.get(mutant.fileName);
  if (!lines) {
    lines = readFileSync(path.resolve(ROOT, mutant.fileName), 'utf8').split('\n');
    sources.set(mutant.fileName, lines);
  }
  const { start, end } = mutant.location;
  if (start.line === end.line) return lines[start.line - 1]!.slice(start.column - 1, end.column - 1);
  const parts = [lines[start.line - 1]!.slice(start.column - 1), ...lines.slice(start.line, end.line - 1), lines[end.line - 1]!.slice(0, end.column - 1)];
  return parts.join('\n');
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

function equivalentFor(mutant: MutantResult, original: string, sources: Map<string, string[]>): EquivalentMutant | undefined {
  const file = path.relative(ROOT, path.resolve(ROOT, mutant.fileName));
  const line = squash(sources.get(mutant.fileName)?.[mutant.location.start.line - 1] ?? '');
  return EQUIVALENT_MUTANTS.find(
    (e) =>
      e.file === file &&
      e.mutator === mutant.mutatorName &&
      line.includes(squash(e.line)) &&
      squash(e.original) === squash(original) &&
      squash(e.replacement) === squash(mutant.replacement),
  );
}

interface GroupResult {
  group: MutationGroup;
  wallS: number;
  total: number;
  killed: number;
  timeout: number;
  survived: MutantResult[];
  noCoverage: MutantResult[];
  equivalent: number;
  invalid: number;
  score: number;
}

async function runGroup(group: MutationGroup, args: Args): Promise<GroupResult> {
  console.log(`\n== mutate ${group.name}: ${group.title}`);
  const startedMs = Date.now();
  const results = await new Stryker(strykerOptions(group, args)).runMutationTest();
  const wallS = (Date.now() - startedMs) / 1000;
  const sources = new Map<string, string[]>();
  const counted = { killed: 0, timeout: 0, equivalent: 0, invalid: 0 };
  const survived: MutantResult[] = [];
  const noCoverage: MutantResult[] = [];
  const lines: string[] = [];
  for (const m of results) {
    switch (m.status) {
      case 'Killed':
        counted.killed++;
        continue;
      case 'Timeout':
        counted.timeout++;
        continue;
      case 'CompileError':
      case 'RuntimeError':
      case 'Ignored':
        counted.invalid++;
        continue;
      default: {
        const original = originalText(m, sources);
        if (equivalentFor(m, original, sources)) {
          counted.equivalent++;
          continue;
        }
        (m.status === 'NoCoverage' ? noCoverage : survived).push(m);
        const where = `${path.relative(ROOT, path.resolve(ROOT, m.fileName))}:${m.location.start.line}:${m.location.start.column}`;
        lines.push(`  ${m.status === 'NoCoverage' ? 'no coverage' : 'survived'}  ${where}  ${m.mutatorName}: ${squash(original).slice(0, 100)}  →  ${squash(m.replacement).slice(0, 100)}`);
      }
    }
  }
  lines.sort();
  if (lines.length > 0) console.log(`\nLiving mutants in ${group.name} (not listed as equivalent):\n${lines.join('\n')}`);
  const detected = counted.killed + counted.timeout;
  const valid = detected + survived.length + noCoverage.length;
  return {
    group,
    wallS,
    total: results.length,
    ...counted,
    survived,
    noCoverage,
    score: valid === 0 ? 100 : (100 * detected) / valid,
  };
}

function printTable(results: GroupResult[], args: Args): void {
  console.log(`\nMutation scores (concurrency ${args.concurrency}${args.mutate ? `, only ${args.mutate.join(' ')}` : ''}):`);
  console.log('group            mutants  killed  timeout  survived  no-cov  equivalent  invalid  score    target  wall');
  for (const r of results) {
    const cells = [
      r.group.name.padEnd(15),
      String(r.total).padStart(7),
      String(r.killed).padStart(7),
      String(r.timeout).padStart(8),
      String(r.survived.length).padStart(9),
      String(r.noCoverage.length).padStart(7),
      String(r.equivalent).padStart(11),
      String(r.invalid).padStart(8),
      `${r.score.toFixed(1).padStart(6)} %`,
      `${String(r.group.target).padStart(4)} %`,
      `${Math.round(r.wallS)} s`,
    ];
    console.log(cells.join('  ') + (r.score < r.group.target ? '  BELOW TARGET' : ''));
  }
  console.log(`Reports: ${REPORT_DIR}/<group>.html`);
}

async function main(): Promise<void> {
  process.chdir(ROOT);
  const args = parseArgs(process.argv.slice(2));
  const results: GroupResult[] = [];
  for (const group of args.groups) results.push(await runGroup(group, args));
  printTable(results, args);
  if (results.some((r) => r.score < r.group.target)) process.exitCode = 1;
}

await main();
