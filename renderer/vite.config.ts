/**
 * Vite build of the renderer (the one window's UI). `base: './'` because the built files are loaded from
 * disk (file://) by Electron and from a static server by the E2E tests. No inline scripts are emitted,
 * so the strict CSP in index.html (script-src 'self') holds.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  plugins: [svelte()],
  build: {
    outDir: fileURLToPath(new URL('../out/renderer', import.meta.url)),
    emptyOutDir: true,
    target: 'chrome130',
    // The polyfill would be bundled anyway, but Electron's Chromium has native modulepreload.
    modulePreload: { polyfill: false },
    // agora-rtc-sdk-ng is ~1.5 MB minified and loaded lazily; don't warn about it.
    chunkSizeWarningLimit: 2_000,
  },
  server: { fs: { allow: ['..'] } },
});
