// Module hook: `import … from 'electron'` resolves to the in-process stub (electron.ts) so main's wiring
// can run under plain Node. Used only by test/unit/main/ipc-main-wiring.test.ts (through main-harness.ts).
export async function resolve(specifier, context, next) {
  if (specifier === 'electron') return { url: new URL('./electron.ts', import.meta.url).href, shortCircuit: true };
  return next(specifier, context);
}

// STUB_BROKEN_MODULE=<path suffix> (in the environment the process starts with: hooks run on their own
// thread): that module fails to load (it throws while it is evaluated), as a
// module with a bad dependency or a corrupt file in a broken install would.
export async function load(url, context, next) {
  const broken = process.env.STUB_BROKEN_MODULE;
  if (broken && url.startsWith('file:') && new URL(url).pathname.endsWith(broken)) {
    return { format: 'module', source: `throw new Error('Cannot load ${broken} (broken install)');`, shortCircuit: true };
  }
  return next(url, context);
}
