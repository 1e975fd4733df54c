/**
 * The remote screenshot leaves the visitor's camera preview out: main hides every `[data-camera-preview]`
 * element (the renderer marks the self-view with it) for the capture only. Runs main's glue under the
 * electron stub (test/electron/stub/screenshot-harness.ts), and checks the page marks its self-view.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '../../..');

describe('fleet screenshot', () => {
  it('hides the camera preview while capturing and shows it again after', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--import', './test/electron/stub/register.mjs', 'test/electron/stub/screenshot-harness.ts'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const line = run.stdout.split('\n').find((l) => l.startsWith('HARNESS '));
    assert.ok(line, `no report: ${run.stdout}\n${run.stderr}`);
    const facts = JSON.parse(line.slice('HARNESS '.length)) as { calls: string[]; css: string; result: unknown };
    assert.equal(facts.css, '[data-camera-preview] { visibility: hidden !important; }');
    assert.deepEqual(facts.calls, [`insertCSS ${facts.css}`, 'capturePage (camera preview hidden: true)', 'removeInsertedCSS key-1']);
    assert.deepEqual(facts.result, { png: 'PNGDATA', width: 1080, height: 1920 });
  });

  it('the self-view is the element marked as the camera preview', () => {
    const stage = readFileSync(join(ROOT, 'renderer/src/call/Stage.svelte'), 'utf8');
    assert.match(stage, /<div class="self-host"[^>]*data-camera-preview>\s*<video bind:this=\{selfVideo\} class="self-video"/);
  });
});
