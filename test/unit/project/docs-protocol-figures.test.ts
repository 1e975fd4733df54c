/**
 * docs/service-protocol.md's "The figures, by name" table says what electron/core/protocol-constants.ts
 * holds: every constant of that file has its row, every row names a constant of it, and each value
 * cell is the constant's value as a reader would write it (read from the module, never a hand list).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as figures from '../../../electron/core/protocol-constants.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** The value as the table writes it, from the constant's unit suffix. */
function asWritten(name: string, value: number | readonly number[]): string {
  const values = typeof value === 'number' ? [value] : [...value];
  const plain = (v: number) => v.toLocaleString('en-GB');
  if (name.endsWith('_MS')) return `${values.map((v) => plain(v / 1000)).join(', ')} s`;
  if (name.endsWith('_S')) return values.map((v) => (v % 3600 === 0 ? `${v / 3600} h` : `${plain(v)} s`)).join(', ');
  if (name.endsWith('_BYTES')) return values.map((v) => (v >= 2 ** 20 ? `${v / 2 ** 20} MB` : `${v / 1024} KB`)).join(', ');
  if (name.endsWith('_PX')) return `${values.map(plain).join(', ')} px`;
  if (name.endsWith('_FPS')) return `${values.map(plain).join(', ')} fps`;
  return values.map(plain).join(', ');
}

/** The first two cells of each row of the table under "## The figures, by name". */
function tableRows(): Array<[string, string]> {
  const doc = readFileSync(path.join(ROOT, 'docs/service-protocol.md'), 'utf8');
  const start = doc.indexOf('\n## The figures, by name\n');
  assert.ok(start >= 0, 'a "## The figures, by name" section');
  const section = doc.slice(start + 1).split(/\n## /)[0]!;
  return section
    .split('\n')
    .map((line) => /^\| `([A-Z0-9_]+)` \| ([^|]+) \|/.exec(line))
    .filter((m) => m !== null)
    .map((m) => [m[1]!, m[2]!.trim()]);
}

describe('docs/service-protocol.md: the figures, by name', () => {
  const rows = tableRows();
  const constants = Object.entries(figures) as Array<[string, number | readonly number[]]>;

  it('has a row for every constant of protocol-constants.ts, and no other', () => {
    assert.ok(constants.length >= 15, `${constants.length} constants`);
    assert.deepEqual(rows.map(([name]) => name).sort(), constants.map(([name]) => name).sort());
  });

  it("gives each constant's value", () => {
    for (const [name, written] of rows) {
      const value = constants.find(([n]) => n === name)?.[1];
      assert.ok(value !== undefined, name);
      assert.equal(written, asWritten(name, value), name);
    }
  });
});
