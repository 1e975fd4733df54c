/**
 * `npm run mutate [-- <group>…] [--concurrency N] [--force] [--mutate <glob>] [--tests <file>] [--report]`
 *
 * Mutation testing of the proof suite with Stryker: each group (test/mutation/groups.ts) is mutated on its
 * own, with the tests that cover it, through the TAP runner (node:test files under tsx; the dry run records
 * which test file reaches which mutant, so a mutant runs only those files). Incremental: each group keeps
 * its results in reports/mutation/<group>.incremental.json (git-ignored), and a rerun only tests mutants
 * in code or tests that changed. `--force` retests everything. `--report` runs nothing: it prints the
 * tables from the latest reports, with the equivalent mutants as listed now. `--tests <file>` (repeatable)
 * runs only those test files instead of the group's list, for a quick look at what a file's own unit tests
 * leave alive while writing them: its reports go to reports/mutation/<group>.scratch.* and never count
 * towards a group's or a folder's score.
 *
 * Prints, per group, the mutants by outcome and the score: killed (incl. timeouts) over the mutants that
 * can change behaviour. Mutants listed in equivalent.ts (each with its reason) are reported apart and left
 * out of the score; every other survivor is printed with its place. Exits 1 when a group misses its target.
 *
 * Before a run, and with `--report`, every equivalent entry for the files asked about is checked against
 * the code as it is (equivalent-places.ts): an entry that names no line of its file, or several, is
 * printed by name and hides nothing, so its mutant counts as living again. Nothing stops for it: editing a
 * quoted line costs a stale entry here, never a failing `npm test`.
 *
 * Not part of `npm test`: a folder takes minutes to hours of CPU. One Stryker at a time, concurrency 1 by
 * default (the machine is shared).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Stryker } from '@stryker-mutator/core';
import type { PartialStrykerOptions } from '@stryker-mutator/api/core';
import { GROUPS, mutateGlobs, type MutationGroup } from './groups.ts';
import { EQUIVALENT_MUTANTS, type EquivalentMutant } from './equivalent.ts';
import { checkEntries, describeStale } from './equivalent-places.ts';
import { filesOfAllGroups, filesOfGroup, packagingTests } from './group-files.ts';
import { emptyTally, score, tallyReport, type Report, type Tally } from './tally.ts';
import { DEB_CACHE_ENV } from '../helpers/packaging/build.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const REPORT_DIR = 'reports/mutation';

interface Args {
  groups: MutationGroup[];
  concurrency: number;
  force: boolean;
  mutate: string[] | null;
  /** Test files that replace the group's list (a scratch run: reported apart, never scored). */
  tests: string[] | null;
  reportOnly: boolean;
}

function parseArgs(argv: string[]): Args {
  const names: string[] = [];
  let concurrency = 1;
  let force = false;
  let reportOnly = false;
  let mutate: string[] | null = null;
  let tests: string[] | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--concurrency') {
      concurrency = Number(argv[++i]);
      if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency needs a whole number ≥ 1');
    } else if (arg === '--force') {
      force = true;
    } else if (arg === '--report') {
      reportOnly = true;
    } else if (arg === '--mutate') {
      const glob = argv[++i];
      if (!glob) throw new Error('--mutate needs a glob, e.g. electron/core/session-machine.ts');
      (mutate ??= []).push(glob);
    } else if (arg === '--tests') {
      const file = argv[++i];
      if (!file) throw new Error('--tests needs a test file, e.g. test/unit/fleet/call-figures.test.ts');
      (tests ??= []).push(file);
    } else if (arg.startsWith('--')) {
      throw new Error(`Unknown option ${arg}. Use: npm run mutate -- [group…] [--concurrency N] [--force] [--mutate glob] [--tests file] [--report]`);
    } else {
      names.push(arg);
    }
  }
  const groups = names.length === 0 ? GROUPS : names.map(groupNamed);
  if (tests && (groups.length !== 1 || reportOnly)) throw new Error('--tests goes with exactly one group and a run, e.g. npm run mutate -- fleet-other --mutate electron/fleet/call-figures.ts --tests test/unit/fleet/call-figures.test.ts');
  return { groups, concurrency, force, mutate, tests, reportOnly };
}

function groupNamed(name: string): MutationGroup {
  const group = GROUPS.find((g) => g.name === name);
  if (!group) throw new Error(`No mutation group "${name}". Groups: ${GROUPS.map((g) => g.name).join(', ')}`);
  return group;
}

/** The name a run's report and incremental file go under: the group's own, or its scratch name with --tests. */
const reportName = (group: MutationGroup, args: Pick<Args, 'tests'>) => (args.tests ? `${group.name}.scratch` : group.name);

function strykerOptions(group: MutationGroup, args: Args): PartialStrykerOptions {
  const name = reportName(group, args);
  return {
    testRunner: 'tap',
    plugins: ['@stryker-mutator/tap-runner'],
    tap: {
      testFiles: args.tests ?? group.tests,
      // node:test prints TAP when told to; tsx loads the TypeScript; the hook collects per-file coverage.
      nodeArgs: ['--test-reporter=tap', '--import', 'tsx', '-r', '{{hookFile}}', '{{testFile}}'],
      forceBail: true,
    },
    mutate: args.mutate ?? mutateGlobs(group),
    coverageAnalysis: 'perTest',
    concurrency: args.concurrency,
    incremental: true,
    incrementalFile: `${REPORT_DIR}/${name}.incremental.json`,
    force: args.force,
    reporters: ['progress-append-only', 'html', 'json'],
    htmlReporter: { fileName: `${REPORT_DIR}/${name}.html` },
    jsonReporter: { fileName: `${REPORT_DIR}/${name}.json` },
    tempDirName: '.stryker-tmp',
    // tsx strips types and checks none, so nothing in the sandbox needs Stryker's `// @ts-nocheck`; and
    // Stryker would also write it into out/'s JavaScript, which changes the packaged app's inputs there, so
    // the deb cache filled in the checkout would miss and every packaging test would package in the sandbox.
    disableTypeChecks: false,
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

interface GroupResult {
  group: MutationGroup;
  tally: Tally;
  wallS: number;
}

const reportPath = (name: string) => path.join(ROOT, REPORT_DIR, `${name}.json`);

function readReport(group: MutationGroup, name = group.name): Report | null {
  try {
    return JSON.parse(readFileSync(reportPath(name), 'utf8')) as Report;
  } catch {
    return null;
  }
}

/** The files whose text on disk is not what `report` measured (edited or gone since). */
function changedSince(report: Report): string[] {
  return Object.entries(report.files)
    .map(([name, { source }]) => [path.relative(ROOT, path.resolve(ROOT, name)), source] as const)
    .filter(([file, source]) => !existsSync(path.join(ROOT, file)) || readFileSync(path.join(ROOT, file), 'utf8') !== source)
    .map(([file]) => file);
}

/**
 * What a report's tally says beyond its counts: the living mutants, the entries that hide nothing in the
 * source the report recorded (those not already named against the tree), and whether the code changed since.
 */
function printTally(heading: string, report: Report, tally: Tally, staleInTree: ReadonlySet<EquivalentMutant>): void {
  tally.living.sort();
  console.log(`\n${heading}${tally.living.length ? `; living mutants not hidden by an equivalent entry:\n${tally.living.join('\n')}` : ''}`);
  const staleHere = tally.stale.filter((s) => !staleInTree.has(s.entry));
  if (staleHere.length > 0) {
    console.log(`Equivalent entries that hide nothing in this report's copy of the source (their mutants count as living):\n${staleHere.map(describeStale).join('\n')}`);
  }
  const changed = changedSince(report);
  if (changed.length > 0) console.log(`The code changed since this report in ${changed.length} file(s): ${changed.join(', ')} (a run measures it as it is).`);
}

/** A group's latest report as it stands, nothing run (wall time 0). */
function latestOf(group: MutationGroup, staleInTree: ReadonlySet<EquivalentMutant>): GroupResult | null {
  const report = readReport(group);
  if (!report) return null;
  const tally = tallyReport(report, EQUIVALENT_MUTANTS, ROOT);
  printTally(`== ${group.name} (latest report)`, report, tally, staleInTree);
  return { group, tally, wallS: 0 };
}

async function runGroup(group: MutationGroup, args: Args, staleInTree: ReadonlySet<EquivalentMutant>): Promise<GroupResult> {
  console.log(`\n== mutate ${group.name}: ${group.title}${args.tests ? ` (scratch: only ${args.tests.join(' ')}; not scored)` : ''}`);
  const startedMs = Date.now();
  // Mutants never touch out/, so the packaged app is the same for each: package it once per run (the
  // update tests then take 1 s a mutant instead of 25), keyed by what it is made from.
  process.env[DEB_CACHE_ENV] ??= path.join(tmpdir(), 'ak-mutation-deb-cache');
  packageInTree(packagingTests(args.tests ?? group.tests));
  await new Stryker(strykerOptions(group, args)).runMutationTest();
  const wallS = (Date.now() - startedMs) / 1000;
  const name = reportName(group, args);
  const report = readReport(group, name);
  if (!report) throw new Error(`Stryker wrote no report at ${reportPath(name)}`);
  const tally = tallyReport(report, EQUIVALENT_MUTANTS, ROOT);
  printTally(`== ${group.name}: this run`, report, tally, staleInTree);
  return { group, tally, wallS };
}

/**
 * Fill the deb cache from the checkout itself, before Stryker copies it. Left to the dry run, the package
 * would be made inside Stryker's sandbox, where node_modules is a symlink (or missing, when the checkout's
 * own is a symlink): npm then reads every package as a linked project of its own and reports thousands of
 * missing dev dependencies, electron-builder logs each one, and with the other test runner beside it the
 * build outlives its kill timer and the dry run fails. Running the packaging tests once here also shows they
 * pass before any mutant is judged by them.
 */
function packageInTree(files: string[]): void {
  if (files.length === 0) return;
  console.log(`Packaging once in the checkout for the deb cache (${process.env[DEB_CACHE_ENV]}): ${files.join(' ')}`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], { cwd: ROOT, env: process.env, stdio: 'inherit' });
  if (run.status !== 0) {
    throw new Error(`The packaging tests fail in the checkout itself (exit ${run.status ?? run.signal}): fix them (is out/ built? npm run build) before measuring with them.`);
  }
}

/**
 * The equivalent entries checked against the code as it is, for the files of the groups asked for (all
 * entries when every group is: then an entry whose file no group mutates is named too). A stale entry
 * is named and hides nothing; nothing stops.
 */
function checkEquivalents(groups: MutationGroup[]): Set<EquivalentMutant> {
  const everyGroup = groups.length === GROUPS.length;
  const scope = new Set(groups.flatMap((g) => filesOfGroup(g, ROOT)));
  const { placed, stale } = checkEntries(EQUIVALENT_MUTANTS, ROOT, scope, everyGroup ? filesOfAllGroups(ROOT) : undefined);
  const considered = placed.length + stale.length;
  if (stale.length === 0) {
    console.log(`Equivalent mutants: ${considered} entries for these files, each names one line of the code as it is.`);
  } else {
    console.log(
      `Equivalent mutants: ${considered} entries for these files, ${stale.length} of them stale: a stale entry hides nothing (its mutant counts as living until the entry is fixed or deleted, in test/mutation/equivalent*.ts):\n` +
        stale.map(describeStale).join('\n'),
    );
  }
  return new Set(stale.map((s) => s.entry));
}

const HEADER = 'mutants  killed  timeout  survived  no-cov  equivalent  invalid   score  target';
function row(name: string, t: Tally, target: number, extra = ''): string {
  const cells = [
    name.padEnd(22),
    String(t.total).padStart(7),
    String(t.killed).padStart(7),
    String(t.timeout).padStart(8),
    String(t.survived).padStart(9),
    String(t.noCoverage).padStart(7),
    String(t.equivalent).padStart(11),
    String(t.invalid).padStart(8),
    `${score(t).toFixed(1).padStart(5)} %`,
    `${String(target).padStart(4)} %`,
  ];
  return cells.join('  ') + extra + (score(t) < target ? '  BELOW TARGET' : '');
}

function printTables(runs: GroupResult[], args: Args): void {
  console.log(args.reportOnly ? '\nLatest reports (wall: not run now):' : `\nThis run (concurrency ${args.concurrency}${args.mutate ? `, only ${args.mutate.join(' ')}` : ''}):`);
  console.log(`${'group'.padEnd(22)}  ${HEADER}  wall`);
  for (const r of runs) console.log(row(r.group.name, r.tally, r.group.target, `  ${Math.round(r.wallS)} s`));

  // Per folder, from the latest report of each of its groups (this run or an earlier one).
  console.log(`\nPer folder (latest report of each group; a group never run is named):`);
  console.log(`${'folder'.padEnd(22)}  ${HEADER}`);
  for (const folder of [...new Set(GROUPS.map((g) => g.folder))]) {
    const groups = GROUPS.filter((g) => g.folder === folder);
    const tally = emptyTally();
    const missing: string[] = [];
    for (const g of groups) {
      const report = readReport(g);
      if (report) tallyReport(report, EQUIVALENT_MUTANTS, ROOT, tally);
      else missing.push(g.name);
    }
    const target = Math.min(...groups.map((g) => g.target));
    if (missing.length === groups.length) {
      console.log(`${folder.padEnd(22)}  not run yet (groups: ${missing.join(', ')})`);
      continue;
    }
    console.log(row(folder, tally, target, missing.length ? `  (not run: ${missing.join(', ')})` : ''));
  }
  console.log(`Reports: ${REPORT_DIR}/<group>.html`);
}

async function main(): Promise<void> {
  process.chdir(ROOT);
  const args = parseArgs(process.argv.slice(2));
  const staleInTree = checkEquivalents(args.groups);
  const runs: GroupResult[] = [];
  for (const group of args.groups) {
    if (!args.reportOnly) runs.push(await runGroup(group, args, staleInTree));
    else {
      const latest = latestOf(group, staleInTree);
      if (latest) runs.push(latest);
      else console.log(`\n== ${group.name}: no report yet (npm run mutate -- ${group.name})`);
    }
  }
  printTables(runs, args);
  if (runs.some((r) => score(r.tally) < r.group.target)) process.exitCode = 1;
}

await main();
