/**
 * Vite build of the fleet console's page (its own entry, beside the kiosk's renderer): served by
 * electron/fleet/console/server.ts from out/fleet-console under a strict CSP (script-src 'self',
 * style-src 'self'), so nothing inline is emitted.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [svelte()],
  build: {
    outDir: fileURLToPath(new URL('../../out/fleet-console', import.meta.url)),
    emptyOutDir: true,
    target: 'chrome120',
    modulePreload: { polyfill: false },
    // Inline nothing: a data: URL asset would need img-src data: in the CSP.
    assetsInlineLimit: 0,
  },
  server: { fs: { allow: ['../..'] } },
});
