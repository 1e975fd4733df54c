/**
 * The layout matrix in Arabic (right to left): every visitor screen at every kiosk and companion size (see layout-matrix.ts).
 * Contact sheets: test/artifacts/layout-ar-*.png.
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/layout-matrix-ar.test.ts
 */
import { describe, it } from 'node:test';
import { runLayoutMatrix } from './layout-matrix.ts';

describe('The layout holds on every screen size: Arabic (right to left) (E2E)', () => {
  it('no overlapping controls, nothing outside the viewport or clipped, 48 px targets, on every visitor screen', async () => {
    await runLayoutMatrix('ar');
  });
});
