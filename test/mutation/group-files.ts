/**
 * The files a mutation group mutates, read from the tree as it is: its own list, or, for 'rest of
 * folder', every source file of its folder that the folder's other groups do not name.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { GROUPS, mutateGlobs, type MutationGroup } from './groups.ts';

/** Every `.ts` file under `folder`, relative to `root`, sorted. */
export function sourcesUnder(folder: string, root: string): string[] {
  return readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

export function filesOfGroup(group: MutationGroup, root: string): string[] {
  if (group.mutate !== 'rest of folder') return [...group.mutate];
  const excluded = new Set(mutateGlobs(group).filter((g) => g.startsWith('!')).map((g) => g.slice(1)));
  return sourcesUnder(group.folder, root).filter((f) => !excluded.has(f));
}

/** Every file some group mutates. */
export const filesOfAllGroups = (root: string): Set<string> => new Set(GROUPS.flatMap((g) => filesOfGroup(g, root)));

/** The test files of a list that package the app (they read the deb cache while mutants run). */
export const packagingTests = (tests: readonly string[]): string[] => tests.filter((f) => f.startsWith('test/packaging/'));
