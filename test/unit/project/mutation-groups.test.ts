/**
 * The mutation groups (test/mutation/groups.ts) decide what `npm run mutate` measures. A source file no
 * group names is silently left out of its folder's score, and a test file that was renamed away makes
 * Stryker stop; both are checked here, against the tree as it is. What the equivalent-mutant lists quote
 * of the source is checked by `npm run mutate` itself (test/mutation/equivalent-places.ts), not here:
 * editing a quoted line must not fail `npm test`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { GROUPS } from '../../mutation/groups.ts';
import { filesOfGroup, packagingTests, sourcesUnder } from '../../mutation/group-files.ts';
import { EQUIVALENT_MUTANTS } from '../../mutation/equivalent.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('mutation groups', () => {
  it('every source file of the measured folders is mutated by exactly one group of its folder', () => {
    for (const folder of [...new Set(GROUPS.map((g) => g.folder))]) {
      const owners = new Map<string, string[]>();
      for (const g of GROUPS.filter((g) => g.folder === folder)) {
        for (const file of filesOfGroup(g, ROOT)) owners.set(file, [...(owners.get(file) ?? []), g.name]);
      }
      for (const file of sourcesUnder(folder, ROOT)) {
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

  it("every unit test of a measured folder's own modules is in one of that folder's groups", () => {
    // test/unit/ mirrors electron/'s rooms: a module's tests left out of its group leave its mutants with no
    // test at all, and the folder's score falls for a reason that is not the code's.
    for (const folder of new Set(GROUPS.map((g) => g.folder))) {
      const room = path.join('test/unit', path.basename(folder));
      const listed = new Set(GROUPS.filter((g) => g.folder === folder).flatMap((g) => g.tests));
      const importsFolder = new RegExp(`from '(\\.\\./)+${folder.replace(/\//g, '\\/')}`);
      const unlisted = readdirSync(path.join(ROOT, room), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => path.join(room, f))
        .filter((f) => importsFolder.test(readFileSync(path.join(ROOT, f), 'utf8')) && !listed.has(f));
      assert.deepEqual(unlisted, [], `${folder}: these tests of its modules are in none of its mutation groups`);
    }
  });

  it('a folder has at most one "rest of folder" group (two would both claim the same files)', () => {
    for (const folder of new Set(GROUPS.map((g) => g.folder))) {
      assert.ok(GROUPS.filter((g) => g.folder === folder && g.mutate === 'rest of folder').length <= 1, folder);
    }
  });

  it('the tests that package the app are picked out of a list, to be run once in the checkout before Stryker copies it', () => {
    const list = ['test/unit/fleet/metrics.test.ts', 'test/packaging/safe-updates.test.ts', 'test/integration/packaging-like.test.ts', 'test/packaging/bound-feeds.test.ts'];
    assert.deepEqual(packagingTests(list), ['test/packaging/safe-updates.test.ts', 'test/packaging/bound-feeds.test.ts']);
    assert.equal(packagingTests(['test/unit/core/log.test.ts']).length, 0);
  });

  it('every equivalent mutant gives its reason', () => {
    for (const e of EQUIVALENT_MUTANTS) assert.ok(e.reason.length > 20, `${e.file}: "${e.line}" needs its reason`);
  });
});
