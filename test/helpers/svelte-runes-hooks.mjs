/**
 * Node module hooks that compile Svelte 5 rune modules (`*.svelte.ts`) the way the renderer build does,
 * so their logic (state classes with $state/$derived) runs under node:test. Registered by
 * `svelte-runes.ts`; tsx (registered first) has already stripped the TypeScript when this hook runs.
 */
import * as nodeModule from 'node:module';
import { compileModule } from 'svelte/compiler';

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.split('?')[0].endsWith('.svelte.ts')) return result;
  const source = typeof result.source === 'string' ? result.source : Buffer.from(result.source).toString('utf8');
  // On Node 22.18+ tsx hands this hook the TypeScript as written (Node strips types itself, later), so
  // strip them here the way Node does before Svelte reads it; on older Node tsx has already stripped them.
  const js = typeof nodeModule.stripTypeScriptTypes === 'function' ? nodeModule.stripTypeScriptTypes(source, { mode: 'transform' }) : source;
  const compiled = compileModule(js, { filename: new URL(url).pathname, generate: 'client', dev: false });
  return { ...result, format: 'module', source: compiled.js.code, shortCircuit: true };
}
