/**
 * The disclosure and the Privacy sheet in en, es, fr, de (see safety-languages.ts).
 * Build first: npm run build.  Run: node --import tsx --test --test-timeout=180000 test/e2e/safety-languages-1.test.ts
 */
import { languageTests } from './safety-languages.ts';

languageTests(['en', 'es', 'fr', 'de']);
