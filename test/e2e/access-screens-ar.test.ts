/**
 * Every visitor screen in Arabic (right to left): axe (WCAG 2.2 A/AA), 48 px targets, screenshots. See access-screens.ts.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-screens-ar.test.ts
 */
import { describe, it } from 'node:test';
import { accessSuite } from './access-helpers.ts';
import { everyScreen } from './access-screens.ts';

const suite = accessSuite();

describe('Every visitor screen in Arabic (right to left) (E2E)', () => {
  it('passes axe and the 48 px target check on every screen in both orientations', async () => {
    await everyScreen(suite, 'ar');
  });
});
