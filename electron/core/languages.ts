/**
 * The visitor languages the kiosk has catalogues for (BCP 47 codes). Dependency-free, so the renderer can
 * bundle it without the contract's schemas (electron/contract.ts re-exports it and builds its zod enum).
 * Adding one: docs/accessibility.md.
 */
export const LANGUAGE_CODES = ['en', 'es', 'fr', 'de', 'zh-Hans', 'ja', 'ar'] as const;
export type LanguageCode = (typeof LANGUAGE_CODES)[number];
