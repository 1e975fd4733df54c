/**
 * The disclosure and the Privacy sheet in zh-Hans, ja, ar (see safety-languages.ts).
 * Build first: npm run build.  Run: node --import tsx --test --test-timeout=180000 test/e2e/safety-languages-2.test.ts
 */
import { languageTests } from './safety-languages.ts';

languageTests(['zh-Hans', 'ja', 'ar']);
