/**
 * How `npm run mutate` uses the equivalent-mutant lists, on a fixture source (test/mutation/fixtures/),
 * never on real code: an entry hides a mutant only at the one line it names; an entry that names no
 * line, several lines, a missing file or a file no group mutates is named as stale and hides nothing,
 * so its mutant counts as living again, and nothing throws.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EquivalentMutant } from '../../mutation/equivalent.ts';
import { checkEntries, describeStale, placeEntries } from '../../mutation/equivalent-places.ts';
import { score, tallyReport, type Report, type ReportedMutant } from '../../mutation/tally.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../mutation/fixtures');
const FILE = 'sample-source.ts';
const SOURCE = readFileSync(path.join(FIXTURES, FILE), 'utf8');

const entry = (line: string, original: string, extra: Partial<EquivalentMutant> = {}): EquivalentMutant => ({
  file: FILE,
  mutator: 'ConditionalExpression',
  line,
  original,
  replacement: 'true',
  reason: 'Clearing no timer does nothing on either clock.',
  ...extra,
});

const SINGLE = entry('if (timer !== null) clear(timer);', 'timer !== null');
const TWICE = entry('if (handle !== null) clear(handle);', 'handle !== null');
const SECOND_COPY = entry('if (handle !== null) clear(handle);', 'handle !== null', { above: '// the second copy' });
const GONE = entry('if (timer != null) clear(timer);', 'timer != null');

/** A mutant of `original` on 1-based `line` of the fixture, located as Stryker's report does (1-based columns). */
function mutant(line: number, original: string, status: string, replacement = 'true', mutatorName = 'ConditionalExpression'): ReportedMutant {
  const column = SOURCE.split('\n')[line - 1]!.indexOf(original) + 1;
  assert.ok(column > 0, `"${original}" is on line ${line} of the fixture`);
  return { mutatorName, replacement, status, location: { start: { line, column }, end: { line, column: column + original.length } } };
}

const report = (mutants: ReportedMutant[]): Report => ({ files: { [FILE]: { source: SOURCE, mutants } } });

describe('equivalent entries placed in the source', () => {
  it('an entry names the one line holding its quote and its original text', () => {
    const { placed, stale } = placeEntries([SINGLE, SECOND_COPY], () => SOURCE);
    assert.deepEqual(placed.map((p) => [p.entry, p.line]), [[SINGLE, 4], [SECOND_COPY, 11]]);
    assert.deepEqual(stale, []);
  });

  it('names by file, quote and mutant each entry that matches no line, several lines, a missing file or no group, and says why', () => {
    const missing = { ...SINGLE, file: 'gone.ts' };
    const unmutated = { ...SINGLE, file: 'elsewhere.ts' };
    const { placed, stale } = checkEntries([SINGLE, GONE, TWICE, missing, unmutated], FIXTURES, new Set([FILE, 'gone.ts']), new Set([FILE, 'gone.ts']));
    assert.deepEqual(placed.map((p) => p.line), [4]);
    assert.deepEqual(stale.map(describeStale), [
      '  sample-source.ts: "if (timer != null) clear(timer);" (ConditionalExpression timer != null → true): matches no line',
      '  sample-source.ts: "if (handle !== null) clear(handle);" (ConditionalExpression handle !== null → true): matches 2 lines (9, 11): give it an `above` only one of them has',
      '  gone.ts: "if (timer !== null) clear(timer);" (ConditionalExpression timer !== null → true): its file does not exist',
      '  elsewhere.ts: "if (timer !== null) clear(timer);" (ConditionalExpression timer !== null → true): no mutation group mutates its file',
    ]);
  });

  it('leaves out the entries of files outside the run (another group), without reading them', () => {
    const { placed, stale } = checkEntries([SINGLE, { ...GONE, file: 'not-asked.ts' }], FIXTURES, new Set([FILE]));
    assert.deepEqual(placed.map((p) => p.entry), [SINGLE]);
    assert.deepEqual(stale, []);
  });
});

describe('a report tallied with the equivalent entries', () => {
  it('a placed entry hides its mutant: counted apart and out of the score', () => {
    const tally = tallyReport(report([mutant(4, 'timer !== null', 'Survived'), mutant(4, 'timer !== null', 'Killed', 'false')]), [SINGLE], FIXTURES);
    assert.deepEqual([tally.total, tally.killed, tally.survived, tally.equivalent, tally.living, tally.stale], [2, 1, 0, 1, [], []]);
    assert.equal(score(tally), 100);
  });

  it('hides only the same edit at that place: another replacement or mutator on the line stays living', () => {
    const tally = tallyReport(report([mutant(4, 'timer !== null', 'Survived', 'false'), mutant(4, 'timer !== null', 'NoCoverage', 'timer === null', 'EqualityOperator')]), [SINGLE], FIXTURES);
    assert.deepEqual([tally.equivalent, tally.survived, tally.noCoverage], [0, 1, 1]);
  });

  it('a stale entry hides nothing: an entry matching two lines leaves both mutants living, and is named', () => {
    const tally = tallyReport(report([mutant(9, 'handle !== null', 'Survived'), mutant(11, 'handle !== null', 'Survived')]), [TWICE], FIXTURES);
    assert.equal(tally.equivalent, 0);
    assert.deepEqual(tally.living, [
      '  survived  sample-source.ts:9:7  ConditionalExpression: handle !== null  →  true',
      '  survived  sample-source.ts:11:7  ConditionalExpression: handle !== null  →  true',
    ]);
    assert.deepEqual(tally.stale.map((s) => [s.entry, s.lines]), [[TWICE, [9, 11]]]);
    assert.equal(score(tally), 0);
  });

  it('with an `above` only one copy has, the entry hides the mutant at that copy and not at the other', () => {
    const tally = tallyReport(report([mutant(9, 'handle !== null', 'Survived'), mutant(11, 'handle !== null', 'Survived')]), [SECOND_COPY], FIXTURES);
    assert.equal(tally.equivalent, 1);
    assert.deepEqual(tally.living, ['  survived  sample-source.ts:9:7  ConditionalExpression: handle !== null  →  true']);
  });

  it("an entry whose line the code no longer has hides nothing in the report's source", () => {
    const tally = tallyReport(report([mutant(4, 'timer !== null', 'Survived')]), [GONE], FIXTURES);
    assert.deepEqual([tally.equivalent, tally.survived], [0, 1]);
    assert.deepEqual(tally.stale.map(describeStale), ['  sample-source.ts: "if (timer != null) clear(timer);" (ConditionalExpression timer != null → true): matches no line']);
  });
});
