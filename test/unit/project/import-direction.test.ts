/**
 * The layout's rule, read from the code's own imports: each folder of electron/ may import only the
 * folders below it, so behaviour stays testable under plain Node and the Electron glue stays thin.
 *
 *   core  ←  contract.ts, emulator  ←  kiosk  ←  operations, fleet  ←  features  ←  main (Electron glue), browser
 *   cli  →  everything below features
 *   preload → contract.ts only;   renderer → contract.ts and the renderer-safe core modules only
 *   electron/contract/ (the shapes contract.ts re-exports) is the contract's room too, reached through
 *   contract.ts only
 *   the fleet console's page (renderer/fleet-console) → the console's wire types only
 *
 * It also fails on any import circle in electron/ or renderer/src (a circle hides which file owns what).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** The contract's room: contract.ts and its folder of result and event shapes, electron/contract/. */
const CONTRACT = 'electron/contract.ts';

/** Which rooms each room may import (besides itself and npm/node packages). */
const ALLOWED: Record<string, readonly string[]> = {
  'electron/core': [],
  'electron/contract.ts': ['electron/core'],
  'electron/emulator': ['electron/core'],
  'electron/kiosk': ['electron/core', 'electron/contract.ts', 'electron/emulator'],
  'electron/operations': ['electron/core', 'electron/contract.ts', 'electron/kiosk'],
  'electron/fleet': ['electron/core', 'electron/contract.ts', 'electron/kiosk'],
  // The feature list both hosts run, written against the host adapter (features/host.ts).
  'electron/features': ['electron/core', 'electron/contract.ts', 'electron/kiosk', 'electron/operations', 'electron/fleet'],
  'electron/main': ['electron/core', 'electron/contract.ts', 'electron/emulator', 'electron/kiosk', 'electron/operations', 'electron/fleet', 'electron/features'],
  'electron/preload': ['electron/contract.ts'],
  // The browser mode: a host like main, without Electron (it serves the page and carries the contract).
  'electron/browser': ['electron/core', 'electron/contract.ts', 'electron/emulator', 'electron/kiosk', 'electron/operations', 'electron/fleet', 'electron/features'],
  'electron/cli': ['electron/core', 'electron/contract.ts', 'electron/emulator', 'electron/kiosk', 'electron/operations', 'electron/fleet'],
  // The fleet console's page: the plain types it shares with the console's server, nothing that runs.
  'renderer/fleet-console': ['electron/fleet/console/view.ts'],
  'renderer/src': ['electron/contract.ts', 'electron/core/protocol.ts', 'electron/core/protocol-constants.ts', 'electron/core/errors.ts', 'electron/core/session-types.ts', 'electron/core/rtc-ids.ts', 'electron/core/kiosk-api.ts', 'electron/core/languages.ts', 'electron/core/funnel.ts'],
};
/** Packages only the Electron glue may load: everything else must run under plain Node or in Chromium. */
const GLUE_ONLY_PACKAGES = ['electron', 'electron-store'];
const GLUE_ROOMS = ['electron/main', 'electron/preload'];

function roomOf(file: string): string | null {
  const rel = relative(ROOT, file).split('\\').join('/');
  if (rel === CONTRACT || rel.startsWith('electron/contract/')) return CONTRACT;
  const m = /^(electron\/[a-z-]+|renderer\/src|renderer\/fleet-console)\//.exec(rel);
  return m ? m[1]! : null;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|svelte)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => join(ROOT, dir, f));
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'"`;]*?\s+from\s+)?['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!);
}

const FILES = [...sourceFiles('electron'), ...sourceFiles('renderer/src'), ...sourceFiles('renderer/fleet-console/src'), join(ROOT, 'electron/contract.ts')].filter((f, i, all) => all.indexOf(f) === i);

/** file → the files of this tree it imports (relative imports only). */
const GRAPH = new Map(
  FILES.map((file) => [
    file,
    importsOf(file)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => resolve(dirname(file), spec)),
  ]),
);

const show = (f: string) => relative(ROOT, f).split('\\').join('/');

/** The imports of a graph that break the layout (file → target, each as the repository spells it). */
function wrongArrows(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = roomOf(file);
    if (!from || !ALLOWED[from]) {
      wrong.push(`${show(file)}: not in a known room`);
      continue;
    }
    for (const target of targets) {
      const to = roomOf(target);
      if (to === from) continue;
      const rel = show(target);
      // contract.ts re-exports its folder, so it stays the one door the rest of the app reads the contract by.
      if (to === CONTRACT && rel !== CONTRACT) {
        wrong.push(`${show(file)} → ${rel} (through contract.ts only)`);
        continue;
      }
      const allowed = ALLOWED[from]!.some((room) => room === to || room === rel);
      if (!allowed) wrong.push(`${show(file)} → ${rel}`);
    }
  }
  return wrong;
}

describe('import direction', () => {
  it('finds the rooms it checks', () => {
    const rooms = new Set(FILES.map(roomOf));
    for (const room of Object.keys(ALLOWED)) assert.ok(rooms.has(room), `${room} has files`);
    assert.ok(FILES.length > 100, `${FILES.length} files read`);
  });

  it('every import points down the layout', () => {
    assert.deepEqual(wrongArrows(GRAPH), []);
  });

  it('judges electron/contract/ as the contract: an import above core is caught, and others go through contract.ts', () => {
    const at = (f: string) => join(ROOT, f);
    const graph = new Map([
      [at('electron/contract/events.ts'), [at('electron/kiosk/events.ts'), at('electron/core/protocol.ts'), at('electron/contract/call.ts')]],
      [at('electron/kiosk/appearance.ts'), [at('electron/contract/config.ts'), at('electron/contract.ts')]],
      [at('electron/preload/index.ts'), [at('electron/contract.ts')]],
    ]);
    assert.deepEqual(wrongArrows(graph), [
      'electron/contract/events.ts → electron/kiosk/events.ts',
      'electron/kiosk/appearance.ts → electron/contract/config.ts (through contract.ts only)',
    ]);
    // And the real folder is read: contract.ts's imports of it are in the graph.
    assert.ok(GRAPH.get(at('electron/contract.ts'))!.includes(at('electron/contract/staff.ts')));
    assert.ok(GRAPH.has(at('electron/contract/staff.ts')));
  });

  it('only the Electron glue loads electron and electron-store', () => {
    const wrong: string[] = [];
    for (const file of FILES) {
      const room = roomOf(file)!;
      if (GLUE_ROOMS.includes(room)) continue;
      for (const spec of importsOf(file)) {
        if (GLUE_ONLY_PACKAGES.some((p) => spec === p || spec.startsWith(`${p}/`))) wrong.push(`${show(file)} imports ${spec}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('has no import circles', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of GRAPH.get(file) ?? []) {
        if (!GRAPH.has(next)) continue;
        if (state.get(next) === 'open') circles.push(stack.slice(stack.indexOf(next)).concat(next).map(show).join(' → '));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of GRAPH.keys()) if (!state.has(file)) visit(file);
    assert.deepEqual(circles, []);
  });

  it('what the renderer runs from electron/ loads no package (zod and the rest stay out of the bundle)', () => {
    // `import type` is erased by the build; any other import of electron/ is bundled with what it imports.
    const VALUE_IMPORT = /(?:^|[\s;])import\s+(?!type\s)(?:[^'"`;]*?\s+from\s+)?['"]([^'"]+)['"]/g;
    const valueImports = (file: string) => [...readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '').matchAll(VALUE_IMPORT)].map((m) => m[1]!);
    const wrong: string[] = [];
    const seen = new Set<string>();
    const walk = (file: string, via: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of valueImports(file)) {
        if (spec.startsWith('.')) walk(resolve(dirname(file), spec), via);
        else if (!spec.startsWith('node:')) wrong.push(`${show(file)} loads ${spec} (bundled through ${via})`);
        else wrong.push(`${show(file)} loads ${spec}, which a page has not (bundled through ${via})`);
      }
    };
    let checked = 0;
    for (const file of sourceFiles('renderer/src')) {
      for (const spec of valueImports(file)) {
        if (!spec.startsWith('.')) continue;
        const target = resolve(dirname(file), spec);
        if (!show(target).startsWith('electron/')) continue;
        checked += 1;
        walk(target, show(file));
      }
    }
    assert.ok(checked > 5, `${checked} value imports of electron/ read`);
    assert.deepEqual(wrong, []);
  });

  it('reads the imports it judges (a checker that reads nothing would pass everything)', () => {
    // Guard against a checker that reads nothing: the regex must find the imports of a known file.
    const calls = join(ROOT, 'electron/kiosk/call-orchestrator.ts');
    assert.ok(GRAPH.get(calls)!.includes(join(ROOT, 'electron/core/session-controller.ts')));
    assert.ok(importsOf(join(ROOT, 'electron/main/index.ts')).includes('electron'));
  });
});
