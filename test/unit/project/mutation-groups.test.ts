/**
 * The mutation groups (test/mutation/groups.ts) decide what `npm run mutate` measures. A source file no
 * group names is silently left out of its folder's score, and a test file that was renamed away makes
 * Stryker stop; both are checked here, against the tree as it is.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { GROUPS, mutateGlobs } from '../../mutation/groups.ts';
import { EQUIVALENT_MUTANTS } from '../../mutation/equivalent.ts';
import { readFileSync } from 'node:fs';

const ROOT = path.resolve(import.meta.dirname, '../../..');

function sourcesUnder(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
    .sort();
}

/** The files one group mutates: its own list, or its folder minus the files the folder's other groups name. */
function filesOf(groupName: string): string[] {
  const group = GROUPS.find((g) => g.name === groupName)!;
  const globs = mutateGlobs(group);
  const excluded = new Set(globs.filter((g) => g.startsWith('!')).map((g) => g.slice(1)));
  if (group.mutate !== 'rest of folder') return [...group.mutate];
  return sourcesUnder(group.folder).filter((f) => !excluded.has(f));
}

describe('mutation groups', () => {
  it('every source file of the measured folders is mutated by exactly one group of its folder', () => {
    for (const folder of [...new Set(GROUPS.map((g) => g.folder))]) {
      const owners = new Map<string, string[]>();
      for (const g of GROUPS.filter((g) => g.folder === folder)) {
        for (const file of filesOf(g.name)) owners.set(file, [...(owners.get(file) ?? []), g.name]);
      }
      for (const file of sourcesUnder(folder)) {
        assert.deepEqual(owners.get(file)?.length, 1, `${file} is mutated by ${JSON.stringify(owners.get(file) ?? [])}`);
      }
      for (const file of owners.keys()) assert.ok(file.startsWith(folder), `${file} is named by a group of ${folder}`);
    }
  });

  it('every file a group names exists, and no group is named twice', () => {
    for (const g of GROUPS) {
      for (const file of [...(g.mutate === 'rest of folder' ? [] : g.mutate), ...g.tests]) {
        assert.ok(existsSync(path.join(ROOT, file)), `${g.name} names ${file}, which does not exist`);
      }
      assert.ok(g.tests.length > 0, `${g.name} has no tests`);
    }
    assert.equal(new Set(GROUPS.map((g) => g.name)).size, GROUPS.length);
  });

  it('a folder has at most one "rest of folder" group (two would both claim the same files)', () => {
    for (const folder of new Set(GROUPS.map((g) => g.folder))) {
      assert.ok(GROUPS.filter((g) => g.folder === folder && g.mutate === 'rest of folder').length <= 1, folder);
    }
  });

  it('every equivalent mutant still names a line of its file, once (an entry that matched nothing, or two places, would hide the wrong mutant)', () => {
    const squash = (t: string) => t.replace(/\s+/g, ' ').trim();
    for (const e of EQUIVALENT_MUTANTS) {
      const lines = readFileSync(path.join(ROOT, e.file), 'utf8').split('\n');
      const firstLine = squash(e.original.split('\n')[0]!);
      const places = lines
        .map((l, i) => ({ text: squash(l), at: i + 1 }))
        .filter(({ text, at }) => text.includes(squash(e.line)) && text.includes(firstLine) &&
          (e.above === undefined || lines.slice(Math.max(0, at - 9), at - 1).some((l) => squash(l).includes(squash(e.above!)))));
      assert.equal(places.length, 1, `${e.file}: "${e.line}" (${e.mutator} ${e.original} → ${e.replacement}) is at lines ${JSON.stringify(places.map((p) => p.at))}`);
      assert.ok(e.reason.length > 20, `${e.file}: "${e.line}" needs its reason`);
    }
  });
});
