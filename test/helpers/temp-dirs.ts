/** Temporary folders for tests that write files, removed after each test so runs leave nothing behind. */
import { afterEach } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Registers (in the calling test file) an `afterEach` that removes every folder made so far, and returns
 * the function that makes one: a fresh folder under the system's temp folder named `prefix…`.
 */
export function tempDirsRemovedAfterEach(prefix: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
