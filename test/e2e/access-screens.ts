/**
 * Languages and accessibility, every visitor screen in one variant (the file name says which): attract,
 * connecting, live, ended (the figures in), back to attract in the venue's defaults, then the error screen
 * (out of credits). On each: axe-core with the WCAG 2.2 A/AA rules (0 violations), every control ≥ 48 px,
 * at both kiosk orientations (and, in English, the companion sizes); screenshots of each in both
 * orientations (test/artifacts/screens/access-<screen>-<variant>-<orientation>.png).
 */
import assert from 'node:assert/strict';
import { COMPANION_SIZES, eventually, screenIs, screenshotBoth } from './harness.ts';
import { KIOSK_SIZES, ALL_SIZES, checkScreen, pageLang, type AccessSuite } from './access-helpers.ts';

export type ScreensVariant = 'en' | 'de' | 'ar' | 'accessible';

export async function everyScreen(suite: AccessSuite, variant: ScreensVariant): Promise<void> {
  // A long warm-up keeps the connecting screen while it is checked at every size.
  const k = await suite.open('portrait', { knobs: { warmupMs: { audio: 0, video: 12_000 } }, config: { returnToAttractSeconds: 600 } });
  const sizes = variant === 'en' ? ALL_SIZES : KIOSK_SIZES;
  const shot = async (screen: string) => {
    if (variant !== 'en') await screenshotBoth(page, `access-${screen}-${variant}`, 'portrait');
  };
  const { page } = k;
  try {
    if (variant === 'accessible') await page.click('[data-testid=accessibility]');
    else if (variant !== 'en') await page.click(`[data-testid=lang-${variant}]`);
    await shot('attract');
    await checkScreen(page, `attract (${variant})`, sizes);

    await page.click('[data-testid=start]');
    await screenIs(page, 'connecting');
    await shot('connecting');
    await checkScreen(page, `connecting (${variant})`, sizes);

    await screenIs(page, 'live', 30_000);
    await page.locator('[data-testid=live-waiting]').waitFor({ state: 'detached', timeout: 10_000 });
    await shot('live');
    await checkScreen(page, `live (${variant})`, sizes);

    await page.click('[data-testid=hangup]');
    await screenIs(page, 'ended');
    await eventually(async () => (await page.getAttribute('[data-testid=screen-ended] dl', 'aria-busy')) === 'false', 'the figures are in');
    await shot('ended');
    await checkScreen(page, `ended (${variant})`, sizes);
    await page.click('[data-testid=done]');
    await screenIs(page, 'attract');
    // Each visitor leaves the kiosk as the venue set it.
    assert.deepEqual(await pageLang(page), { lang: 'en', dir: 'ltr' }, `back to English after the ${variant} visitor`);
    assert.equal(await page.getAttribute('main.kiosk', 'data-accessible'), 'false');

    // The error screen: the service ends a voice-only call (no warm-up wait) for want of credits.
    if (variant === 'accessible') await page.click('[data-testid=accessibility]');
    else if (variant !== 'en') await page.click(`[data-testid=lang-${variant}]`);
    await page.click('[data-testid=mode-audio]');
    await page.click('[data-testid=start]');
    await screenIs(page, 'live', 30_000);
    const liveId = k.emulator.listSessions().find((s) => s.status !== 'ended')!.id;
    k.emulator.forceHangup(liveId, 'credit_insufficient');
    await screenIs(page, 'error');
    await shot('error');
    await checkScreen(page, `error (${variant})`, variant === 'en' ? [...KIOSK_SIZES, COMPANION_SIZES[0]] : KIOSK_SIZES);
    await page.click('[data-testid=done]');
    await screenIs(page, 'attract');
    assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
  } catch (e) {
    throw k.explain(e);
  } finally {
    await k.close();
  }
}
