/** Counting this process's open file descriptors, for tests that a file is closed after use. */
import type { TestContext } from 'node:test';
import { readdirSync, statSync } from 'node:fs';

/**
 * A function that counts the open descriptors (the entries of /proc/self/fd). Where there is no /proc the
 * count cannot be taken: the test is marked skipped and null returned, and the test should return.
 */
export function openFilesCounterOrSkip(t: TestContext): (() => number) | null {
  const fdDir = '/proc/self/fd';
  try {
    statSync(fdDir);
  } catch {
    t.skip('no /proc on this system');
    return null;
  }
  return () => readdirSync(fdDir).length;
}
