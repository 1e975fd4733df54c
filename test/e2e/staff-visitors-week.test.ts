/**
 * The Visitors tab on a busy week: the BUILT renderer in Debian's Chromium (a fake camera that sees an
 * empty room), bridged to the REAL kiosk service with the staff operations attached, whose visitor funnel
 * store holds a week of counts. A week of visitors cannot be walked in a test, so the counts go in through
 * the kiosk's own store (`add`, the way its funnel counts); the report, its hours and days, the threshold
 * and everything on screen are the kiosk's and the tab's own. What a real walk counts, exactly, is
 * staff-visitors-walk.test.ts.
 *
 * The week: the last six days, 9:00 to 21:00, busiest at noon and at five; today, all counted in its first
 * hour (the only hour every run of this test has already lived through): 200 noticed, 150 stopped and
 * greeted, 110 taps of which 41 gave up while connecting (37 %), 58 conversations.
 *
 * Screenshots: staff-visitors-week-<en|de|accessible>-<funnel|week>-<w>x<h>.png in test/artifacts/screens/.
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/staff-visitors-week.test.ts
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../electron/core/clock.ts';
import { openVisitorFunnelStore, type VisitorFunnelStore } from '../../electron/kiosk/visitor-funnel-store.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { KIOSK_SIZES, axeViolations } from './access-helpers.ts';
import { emptyScene } from './fake-camera.ts';
import { eventually, openStaffKiosk } from './harness.ts';
import { MATRIX, PIN, conclusions, funnel, layoutAtSizes, showVisitors, useCameraBrowser } from './staff-visitors.ts';


const env = useCameraBrowser(emptyScene, 20);

/** Passers-by per hour of the day (9:00 to 20:00), and how busy each of the six days before today was. */
const HOURLY: Record<number, number> = { 9: 8, 10: 14, 11: 22, 12: 40, 13: 35, 14: 18, 15: 16, 16: 24, 17: 38, 18: 30, 19: 12, 20: 6 };
const DAY_FACTORS = [1, 0.9, 1.1, 1, 1.3, 1.5]; // six days ago … yesterday

function busyWeek(): VisitorFunnelStore {
  const store = openVisitorFunnelStore({ timeZone: 'UTC', clock: systemClock });
  const now = new Date(systemClock.now());
  const [y, m, d] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  DAY_FACTORS.forEach((factor, i) => {
    const daysBack = DAY_FACTORS.length - i;
    for (const [hour, weight] of Object.entries(HOURLY)) {
      const n = Math.round(weight * factor);
      const tapped = Math.round(0.45 * n);
      const gaveUp = Math.round(0.3 * tapped);
      store.add(Date.UTC(y, m, d - daysBack, Number(hour), 30), (c) => {
        c.noticed += n;
        c.approached += Math.round(0.7 * n);
        c.greeted += Math.round(0.7 * n);
        c.tapped += tapped;
        c.gaveUp += gaveUp;
        c.live += tapped - gaveUp;
        c.endedWell += tapped - gaveUp;
        c.callLength.from1to3m += tapped - gaveUp;
      });
    }
  });
  store.add(Date.UTC(y, m, d, 0, 0, 1), (c) => {
    Object.assign(c, { noticed: 200, approached: 150, greeted: 150, tapped: 110, gaveUp: 41, failed: 5, live: 58, endedWell: 52, endedBadly: 6 });
    c.refused.ageGate = 6;
    Object.assign(c.callLength, { under1m: 15, from1to3m: 25, from3to10m: 14, over10m: 4 });
  });
  return store;
}

describe('Staff panel: the Visitors tab on a busy week (E2E: built renderer + real kiosk service + its funnel store)', () => {
  it('the funnel with its conversions, the largest drop and the busiest hours, the heat map; English, German, accessibility mode; axe, the layout matrix', async () => {
    const k = await openStaffKiosk({
      browser: env.browser,
      baseUrl: env.server.url,
      orientation: 'landscape',
      imageDataUrl: env.portrait,
      file: { staffPinHash: await hashPin(PIN), presence: { cameraEnabled: true } },
      visitorStore: busyWeek(),
    });
    try {
      const { page } = k;
      await showVisitors(page, 'en');
      assert.deepEqual(await funnel(page), [
        ['noticed', '200', ''],
        ['approached', '150', '75% of the step before'],
        ['greeted', '150', '100% of the step before'],
        ['tapped', '110', '73% of the step before'],
        ['live', '58', '53% of the step before'],
        ['endedWell', '52', '90% of the step before'],
      ]);
      assert.deepEqual(await conclusions(page), ['37% of taps gave up while connecting.', 'The busiest hours this week, by passers-by: 12:00–13:00, 17:00–18:00, and 13:00–14:00.']);
      // The legend: "fewer than 5", then four ranges on a square scale up to the busiest hour (today's first, 200).
      assert.deepEqual(await page.locator('[data-testid=visitors-legend] li').allTextContents(), ['fewer than 5', '5 to 17', '18 to 53', '54 to 115', '116 to 200']);
      const cells = (testId: string) => page.locator(`[data-testid=${testId}] > *`).allTextContents();
      assert.deepEqual(await cells('lost-gaveUp'), ['Gave up while connecting', '41', '37% of taps']);
      assert.deepEqual(await cells('lost-ageGate'), ['Age check declined', '6', '5% of taps']);
      assert.deepEqual(await cells('lost-failed'), ['Failed before the conversation', '5', '5% of taps']);
      assert.deepEqual(await cells('lost-closed'), ['Closed hours', '0', '0% of taps']);
      assert.deepEqual(await cells('lost-endedBadly'), ['Ended badly', '6', '10% of conversations']);
      assert.deepEqual(await cells('length-over10m'), ['10 minutes or more', 'fewer than 5']);
      for (const size of KIOSK_SIZES) {
        await page.setViewportSize(size);
        assert.deepEqual(await axeViolations(page), [], `axe: a busy week at ${size.width}x${size.height}`);
      }
      assert.deepEqual(await layoutAtSizes(page, 'week-en', MATRIX), []);

      await page.selectOption('[data-testid=visitors-language]', 'de');
      await eventually(async () => (await page.getAttribute('[data-testid=visitors]', 'lang')) === 'de', 'the report reads in German');
      assert.deepEqual(await conclusions(page), ['37\u00a0% der Tipper gaben während des Verbindens auf.', 'Die meistbesuchten Stunden dieser Woche, nach Vorbeigehenden: 12:00–13:00, 17:00–18:00 und 13:00–14:00.']);
      assert.deepEqual(await axeViolations(page), [], 'axe: a busy week in German');
      assert.deepEqual(await layoutAtSizes(page, 'week-de', MATRIX), []);

      // Closed, the panel forgets the report and its language; in accessibility mode it opens again.
      await page.keyboard.press('Escape');
      await page.locator('[data-testid=staff]').waitFor({ state: 'detached', timeout: 5_000 });
      await showVisitors(page, 'accessible');
      assert.equal(await page.getAttribute('[data-testid=visitors]', 'lang'), 'en');
      assert.deepEqual(await conclusions(page), ['37% of taps gave up while connecting.', 'The busiest hours this week, by passers-by: 12:00–13:00, 17:00–18:00, and 13:00–14:00.']);
      for (const size of KIOSK_SIZES) {
        await page.setViewportSize(size);
        assert.deepEqual(await axeViolations(page), [], `axe: a busy week in accessibility mode at ${size.width}x${size.height}`);
      }
      assert.deepEqual(await layoutAtSizes(page, 'week-accessible', MATRIX), []);
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });
});
