// Module hook: `import … from 'electron'` resolves to the in-process stub (electron.ts) so main's wiring
// can run under plain Node. Used only by test/unit/ipc-main-wiring.test.ts (through main-harness.ts).
export async function resolve(specifier, context, next) {
  if (specifier === 'electron') return { url: new URL('./electron.ts', import.meta.url).href, shortCircuit: true };
  return next(specifier, context);
}
