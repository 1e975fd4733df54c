/**
 * The staff panel's Visitors tab end to end: the BUILT renderer in Debian's Chromium, bridged to the REAL
 * kiosk service with the staff operations attached (openStaffKiosk), on the real emulator.
 *
 * - a new kiosk: the tab says honestly that there is too little to say, every count reads 0,
 *   noticed and approached read "not counted" while presence detection is off; by keyboard; axe and 48 px
 *   targets in English, in German (the report's own language choice) and in accessibility mode; at every
 *   size of the layout matrix nothing of the tab spills sideways.
 *
 * Screenshots: staff-visitors-new-<en|de|accessible>-<funnel|week>-<w>x<h>.png in test/artifacts/screens/.
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/staff-visitors.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KIOSK_SIZES, accessSuite, axeViolations } from './access-helpers.ts';
import { testIdText } from './harness.ts';
import { MATRIX, conclusions, funnel, layoutAtSizes, openVisitors } from './staff-visitors.ts';

const suite = accessSuite();

describe('Staff panel: the Visitors tab (E2E: built renderer + real kiosk service + staff operations)', () => {
  for (const variant of ['en', 'de', 'accessible'] as const) {
    it(`a new kiosk (${variant}): too few to say, every count 0, presence not counted; keyboard, axe, 48 px targets; the layout holds at every size`, async () => {
      const k = await openVisitors(suite, variant);
      try {
        const { page } = k;
        if (variant === 'de') {
          assert.deepEqual(await funnel(page), [
            ['noticed', 'nicht gezählt', ''],
            ['approached', 'nicht gezählt', ''],
            ['greeted', '0', ''],
            ['tapped', '0', ''],
            ['live', '0', ''],
            ['endedWell', '0', ''],
          ]);
          assert.deepEqual(await conclusions(page), [
            'Heute zu wenige Besucher, um zu sagen, wo sie aufgeben: Ein Anteil wird genannt, sobald beide Zahlen 5 erreichen.',
            'Diese Woche zu wenige Tipper, um die meistbesuchten Stunden zu nennen.',
            'Die Anwesenheitserkennung ist aus: Wer vorbeigeht oder vor dem Kiosk stehen bleibt, wird nicht gezählt.',
          ]);
        } else {
          assert.deepEqual(await funnel(page), [
            ['noticed', 'not counted', ''],
            ['approached', 'not counted', ''],
            ['greeted', '0', ''],
            ['tapped', '0', ''],
            ['live', '0', ''],
            ['endedWell', '0', ''],
          ]);
          assert.deepEqual(await conclusions(page), [
            'Too few visitors today to say where people give up: a share is named once both of its counts reach 5.',
            'Too few taps this week to name the busiest hours.',
            'Presence detection is off: people passing by and stopping in front of the kiosk are not counted.',
          ]);
          assert.equal(await testIdText(page, 'visitors-presence-off'), 'Presence detection is off: people passing by and stopping in front of the kiosk are not counted.');
          assert.deepEqual(await page.locator('[data-testid=visitors-legend] li').allTextContents(), ['fewer than 5']);
        }
        // The heat map's text alternative: 7 days × 24 hours, a header row of hours.
        assert.equal(await page.locator('[data-testid=visitors-week-table] tbody tr').count(), 7);
        assert.equal(await page.locator('[data-testid=visitors-week-table] tbody tr:first-child td').count(), 24);
        for (const size of KIOSK_SIZES) {
          await page.setViewportSize(size);
          assert.deepEqual(await axeViolations(page), [], `axe: Visitors (${variant}) at ${size.width}x${size.height}`);
        }
        assert.deepEqual(await layoutAtSizes(page, `new-${variant}`, MATRIX), [], `the Visitors tab's layout (${variant})`);
        assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
      } finally {
        await k.close();
      }
    });
  }
});
