/**
 * The core is pure TypeScript for plain Node: it imports neither `electron` nor the DOM (STYLE: a pure
 * core with thin adapters). Its tsconfig has no DOM lib, so DOM types fail to compile; this test also
 * catches runtime globals and `electron` imports, which a type check alone would not.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const CORE_DIR = join(import.meta.dirname, '../../../electron/core');
const EMULATOR_DIR = join(import.meta.dirname, '../../../electron/emulator');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

const ELECTRON_IMPORT = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]electron(?:\/[^'"]*)?['"]/;
const DOM_GLOBAL = /(?<![.\w])(window|document|navigator|localStorage|HTMLElement)\s*[.[(]/;

describe('the core boundary', () => {
  for (const [name, dir] of [['electron/core', CORE_DIR], ['electron/emulator', EMULATOR_DIR]] as const) {
    it(`${name} has source files to check`, () => {
      assert.ok(sourceFiles(dir).length > 0, `${name} has no .ts files`);
    });
    it(`${name} imports neither electron nor DOM globals`, () => {
      const offenders: string[] = [];
      for (const file of sourceFiles(dir)) {
        const lines = readFileSync(file, 'utf8').split('\n');
        lines.forEach((line, i) => {
          if (/^\s*(\*|\/\*)/.test(line)) return; // doc comment lines
          const code = line.replace(/\/\/.*$/, '');
          if (ELECTRON_IMPORT.test(code) || DOM_GLOBAL.test(code)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
      }
      assert.deepEqual(offenders, []);
    });
  }
});
