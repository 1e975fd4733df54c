/**
 * The layout matrix and rendered contrast of the disclosure, the Privacy sheet and the age gate: accessible (see safety-layout.ts).
 * Build first: npm run build.  Run: node --import tsx --test --test-timeout=180000 test/e2e/safety-layout-accessible.test.ts
 */
import { describe, it } from 'node:test';
import { safetyMatrix } from './safety-layout.ts';

describe('The disclosure, the Privacy sheet and the age gate hold on every screen size: accessible (E2E)', () => {
  it('no overlap, nothing clipped, 48 px targets, rendered contrast', async () => {
    await safetyMatrix('accessible');
  });
});
