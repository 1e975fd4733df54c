/**
 * Every visitor screen in English: axe (WCAG 2.2 A/AA), 48 px targets, screenshots. See access-screens.ts.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access-screens-en.test.ts
 */
import { describe, it } from 'node:test';
import { accessSuite } from './access-helpers.ts';
import { everyScreen } from './access-screens.ts';

const suite = accessSuite();

describe('Every visitor screen in English (E2E)', () => {
  it('passes axe and the 48 px target check on every screen, at the kiosk and companion sizes', async () => {
    await everyScreen(suite, 'en');
  });
});
