/**
 * The quiet build in front of `npm run start:browser` and `npm run fleet` (electron/browser/quiet-build.ts),
 * run as those scripts run it: a real `tsx … quiet-build.ts SCRIPT` child in a package folder whose scripts
 * print as a build does (a line per output file) or fail as one does.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FAILED_BUILD_LINES } from '../../../electron/browser/quiet-build.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const QUIET_BUILD = join(ROOT, 'electron', 'browser', 'quiet-build.ts');

/** A package whose `build` prints 60 lines and succeeds, and whose `build:broken` prints 60 and fails. */
function packageFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-quiet-build-'));
  const lines = (what: string) => `node -e "for (let i = 1; i <= 60; i++) console.log('${what} ' + i)"`;
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'quiet-build-fixture', private: true, scripts: { build: lines('out/file'), 'build:broken': `${lines('vite line')} && node -e "console.error('error: renderer/src/App.svelte:3 Unexpected token'); process.exit(3)"` } }),
  );
  return dir;
}

function run(cwd: string, script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(TSX, [QUIET_BUILD, script], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('quiet-build (the build before start:browser and fleet)', () => {
  it('a build that succeeds: one line said, none of its output, exit 0', async () => {
    const dir = packageFolder();
    try {
      assert.deepEqual(await run(dir, 'build'), { code: 0, stdout: 'Building the app (about a minute the first time)…\n', stderr: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a build that fails: its last lines (the error among them), the sentence, exit 1', async () => {
    const dir = packageFolder();
    try {
      const r = await run(dir, 'build:broken');
      const lines = r.stdout.trimEnd().split('\n');
      assert.equal(r.code, 1);
      assert.equal(lines[0], 'Building (build:broken)…');
      assert.deepEqual(lines.slice(-3), ['error: renderer/src/App.svelte:3 Unexpected token', '', 'The build failed (its last lines are above).']);
      assert.equal(lines.length, 1 + FAILED_BUILD_LINES + 2, 'the tail only, not all 61 lines');
      assert.equal(r.stderr, '');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is what npm run start:browser and npm run fleet build with (npm start has it built in)', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.match(scripts['start:browser']!, /^tsx electron\/browser\/quiet-build\.ts build && /);
    assert.match(scripts.fleet!, /^tsx electron\/browser\/quiet-build\.ts build:fleet-console && /);
  });
});
