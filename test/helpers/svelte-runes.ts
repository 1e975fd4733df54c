/**
 * Import this (first) in a node:test file that loads renderer `*.svelte.ts` modules, then load them
 * with a dynamic `await import(...)`: static imports are resolved before this hook is registered.
 */
import { register } from 'node:module';

register('./svelte-runes-hooks.mjs', import.meta.url);
