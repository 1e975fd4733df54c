/**
 * electron-vite builds main and preload only. The renderer is built separately by
 * `vite build --config renderer/vite.config.ts` into out/renderer (main serves it on app://kiosk).
 *
 * - main: ESM (package.json "type": "module"), dependencies left external (they ship in node_modules).
 * - preload: ONE CommonJS file, out/preload/index.cjs, whose only `require` is `electron`: a sandboxed
 *   preload cannot load anything else, so everything it imports (the contract, zod) is bundled in.
 *   test/unit/main/ipc-policy.test.ts checks the built file when it exists.
 */
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';

const root = import.meta.dirname;

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      externalizeDeps: true,
      sourcemap: true,
      rollupOptions: {
        // The entry installs the fatal-error handler, then loads the app (index.ts) as its own chunk beside
        // it in out/main (index.ts finds preload/ and renderer/ from its own folder).
        input: { index: resolve(root, 'electron/main/entry.ts') },
        output: { format: 'es', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // Bundle every dependency (zod via the contract): only `electron` may stay a require.
      externalizeDeps: false,
      isolatedEntries: true,
      sourcemap: false,
      rollupOptions: {
        input: { index: resolve(root, 'electron/preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
});
