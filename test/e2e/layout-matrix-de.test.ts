/**
 * The layout matrix in German: every visitor screen at every kiosk and companion size (see layout-matrix.ts).
 * Contact sheets: test/artifacts/layout-de-*.png.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/layout-matrix-de.test.ts
 */
import { describe, it } from 'node:test';
import { runLayoutMatrix } from './layout-matrix.ts';

describe('The layout holds on every screen size: German (E2E)', () => {
  it('no overlapping controls, nothing outside the viewport or clipped, 48 px targets, on every visitor screen', async () => {
    await runLayoutMatrix('de');
  });
});
