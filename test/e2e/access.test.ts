/**
 * Every visitor: languages and accessibility, end to end (the built renderer in Debian's Chromium, the
 * real kiosk service and emulator behind the test bridge).
 *
 * - axe-core (WCAG 2.2 A/AA tags) on every screen, both kiosk orientations and the companion sizes, in
 *   English, German, Arabic and accessibility mode: any violation fails, listed with its nodes.
 * - Touch targets: every visible control of every screen is at least 48 × 48 px.
 * - Keyboard only: attract → German → call → mute → end → attract, and the staff panel (open, move
 *   between tabs, close with Escape), with a visible focus ring on every stop.
 * - The language reaches the avatar (the persona's instruction at create) and resets after the visitor.
 * - Accessibility mode: every visitor control in the configured low-reach band, idle timings doubled.
 * - Screenshots of every visitor screen in Arabic, German and accessibility mode, both orientations
 *   (test/artifacts/screens/access-*.png).
 *
 * Build first: npm run build.  Run: node --import tsx --test test/e2e/access.test.ts
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright';
import { AxeBuilder } from '@axe-core/playwright';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import {
  COMPANION_SIZES,
  VIEWPORTS,
  clippedElements,
  eventually,
  launchChromium,
  launchChromiumWithArgs,
  writeWav,
  openKiosk,
  openStaffKiosk,
  screenIs,
  screenshotAt,
  screenshotBoth,
  startStaticServer,
  type KioskPage,
  type Orientation,
} from './harness.ts';

const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const MIN_TARGET_PX = 48;

let server: Awaited<ReturnType<typeof startStaticServer>>;
let browser: Browser;
let portrait: string;

before(async () => {
  server = await startStaticServer();
  browser = await launchChromium();
  portrait = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(orientation: Orientation, extra: Partial<Parameters<typeof openKiosk>[0]> = {}): Promise<KioskPage> {
  const k = await openKiosk({ browser, baseUrl: server.url, orientation, imageDataUrl: portrait, ...extra });
  await screenIs(k.page, 'attract');
  return k;
}

/** axe with the WCAG 2.2 A/AA rules over the whole page: the violations, one line per node. */
async function axeViolations(page: Page): Promise<string[]> {
  await page.waitForTimeout(500); // the screens fade in over 450 ms: axe would measure half-faded contrast
  const result = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
  return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')} — ${n.failureSummary?.split('\n').slice(1, 2).join(' ').trim()}`));
}

/** Every visible control smaller than 48 × 48 px (WCAG 2.5.8 asks 24; a public touch screen wants 48). */
async function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const out = [];
    for (const el of document.querySelectorAll('button, select, input, a[href], [role=button], [role=radio], [role=tab]')) {
      const st = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || st.display === 'none') continue;
      if (el.closest('[hidden], [aria-hidden=true]')) continue;
      // A checkbox's target is its whole label.
      const box = el.type === 'checkbox' && el.closest('label') ? el.closest('label').getBoundingClientRect() : r;
      if (box.width < ${MIN_TARGET_PX} - 0.5 || box.height < ${MIN_TARGET_PX} - 0.5) {
        out.push((el.getAttribute('data-testid') || el.tagName.toLowerCase() + ' "' + (el.textContent || '').trim().slice(0, 24) + '"') + ' ' + Math.round(box.width) + 'x' + Math.round(box.height));
      }
    }
    return out;
  })()`);
}

/** The checks every screen gets, at every size given. */
async function checkScreen(page: Page, label: string, sizes: { width: number; height: number }[]): Promise<void> {
  const original = page.viewportSize()!;
  try {
    for (const size of sizes) {
      await page.setViewportSize(size);
      const where = `${label} at ${size.width}x${size.height}`;
      assert.deepEqual(await axeViolations(page), [], `axe: ${where}`);
      assert.deepEqual(await smallTargets(page), [], `touch targets: ${where}`);
    }
  } finally {
    await page.setViewportSize(original);
  }
}

const KIOSK_SIZES = [VIEWPORTS.portrait, VIEWPORTS.landscape];
const ALL_SIZES = [...KIOSK_SIZES, ...COMPANION_SIZES];

/** Visible visitor controls whose top edge is above the low-reach band (the lower `percent` of the screen). */
async function controlsAboveBand(page: Page, percent: number): Promise<string[]> {
  return page.evaluate(`(() => {
    const H = window.innerHeight, limit = H * (1 - ${percent} / 100), out = [];
    for (const el of document.querySelectorAll('.screen button, .screen select, .still-there button')) {
      const st = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || st.display === 'none') continue;
      if (r.top < limit - 0.5) out.push((el.getAttribute('data-testid') || el.textContent.trim().slice(0, 20)) + ' top ' + Math.round(r.top) + ' < ' + Math.round(limit));
    }
    return out;
  })()`);
}

async function focusedTestId(page: Page): Promise<string | null> {
  return page.evaluate('document.activeElement?.getAttribute("data-testid") ?? null');
}

/** Tab (forwards) until the element with this test id has the focus; fails after `max` presses. */
async function tabTo(page: Page, testId: string, max = 30): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if ((await focusedTestId(page)) === testId) {
      // The focus is visible: an outline at least 3 px wide that is not "none".
      const ring = await page.evaluate(`(() => { const s = getComputedStyle(document.activeElement); return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) }; })()`);
      const ok = (ring as { style: string; width: number }).style !== 'none' && (ring as { style: string; width: number }).width >= 3;
      assert.ok(ok, `${testId} shows a focus ring (${JSON.stringify(ring)})`);
      return;
    }
  }
  assert.fail(`${testId} was not reached with Tab in ${max} presses (focus on ${await focusedTestId(page)})`);
}

/** The persona the (only) session was created with, as the emulator received it. */
function personaOf(k: KioskPage): string {
  const sessions = k.emulator.listSessions();
  assert.equal(sessions.length, 1);
  return (sessions[0]!.request as { avatar: { persona: string } }).avatar.persona;
}

async function pageLang(page: Page): Promise<{ lang: string; dir: string }> {
  return page.evaluate('({ lang: document.documentElement.lang, dir: document.documentElement.dir })') as Promise<{ lang: string; dir: string }>;
}

async function announced(page: Page): Promise<string> {
  return ((await page.locator('[data-testid=announcer]').textContent()) ?? '').trim();
}

describe('Languages and accessibility (E2E)', () => {
  it('every visitor screen passes axe (WCAG 2.2 A/AA) and has 48 px targets, in English, German, Arabic and accessibility mode', async () => {
    // A long warm-up: the connecting screen stays while it is checked at every size.
    const k = await open('portrait', { knobs: { warmupMs: { audio: 0, video: 12_000 } }, config: { returnToAttractSeconds: 600 } });
    try {
      const { page } = k;
      const variants: { name: string; setup: () => Promise<void> }[] = [
        { name: 'en', setup: async () => {} },
        { name: 'de', setup: () => page.click('[data-testid=lang-de]') },
        { name: 'ar', setup: () => page.click('[data-testid=lang-ar]') },
        {
          name: 'accessible',
          setup: async () => {
            await page.click('[data-testid=accessibility]');
          },
        },
      ];
      for (const variant of variants) {
        await screenIs(page, 'attract');
        await variant.setup();
        await checkScreen(page, `attract (${variant.name})`, variant.name === 'en' ? ALL_SIZES : KIOSK_SIZES);
        if (variant.name !== 'en') await screenshotBoth(page, `access-attract-${variant.name}`, 'portrait');

        await page.click('[data-testid=start]');
        await screenIs(page, 'connecting');
        if (variant.name !== 'en') await screenshotBoth(page, `access-connecting-${variant.name}`, 'portrait');
        await checkScreen(page, `connecting (${variant.name})`, variant.name === 'en' ? ALL_SIZES : KIOSK_SIZES);

        await screenIs(page, 'live', 30_000);
        await page.locator('[data-testid=live-waiting]').waitFor({ state: 'detached', timeout: 10_000 });
        await checkScreen(page, `live (${variant.name})`, variant.name === 'en' ? ALL_SIZES : KIOSK_SIZES);
        if (variant.name !== 'en') await screenshotBoth(page, `access-live-${variant.name}`, 'portrait');

        await page.click('[data-testid=hangup]');
        await screenIs(page, 'ended');
        await eventually(async () => (await page.getAttribute('[data-testid=screen-ended] dl', 'aria-busy')) === 'false', 'the figures are in');
        await checkScreen(page, `ended (${variant.name})`, variant.name === 'en' ? ALL_SIZES : KIOSK_SIZES);
        if (variant.name !== 'en') await screenshotBoth(page, `access-ended-${variant.name}`, 'portrait');
        await page.click('[data-testid=done]');
        await screenIs(page, 'attract');
        // Each visitor leaves the kiosk as the venue set it.
        assert.deepEqual(await pageLang(page), { lang: 'en', dir: 'ltr' }, `back to English after the ${variant.name} visitor`);
        assert.equal(await page.getAttribute('main.kiosk', 'data-accessible'), 'false');
      }

      // The error screen (the service ends the call: out of credits) in Arabic and in accessibility mode.
      for (const variant of ['ar', 'de', 'accessible'] as const) {
        if (variant === 'accessible') await page.click('[data-testid=accessibility]');
        else await page.click(`[data-testid=lang-${variant}]`);
        await page.click('[data-testid=mode-audio]'); // voice only: no warm-up wait before the error
        await page.click('[data-testid=start]');
        await screenIs(page, 'live', 30_000);
        const liveId = k.emulator.listSessions().find((s) => s.status !== 'ended')!.id;
        k.emulator.forceHangup(liveId, 'credit_insufficient');
        await screenIs(page, 'error');
        await checkScreen(page, `error (${variant})`, KIOSK_SIZES);
        await screenshotBoth(page, `access-error-${variant}`, 'portrait');
        await page.click('[data-testid=done]');
        await screenIs(page, 'attract');
      }
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });

  it('the idle prompt passes axe and keeps its controls in reach; accessibility mode doubles the idle timings', async () => {
    // A silent microphone (the default fake one beeps, which the voice detector hears as someone talking).
    const wavDir = mkdtempSync(join(tmpdir(), 'kiosk-e2e-access-'));
    const silent = await launchChromiumWithArgs([`--use-file-for-fake-audio-capture=${writeWav(join(wavDir, 'silence.wav'), 2, () => 0)}`]);
    const k = await openKiosk({ browser: silent, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, config: { idle: { promptSeconds: 10, hangupSeconds: 30 } } });
    try {
      await screenIs(k.page, 'attract');
      const { page } = k;
      await page.click('[data-testid=lang-ar]');
      await page.click('[data-testid=accessibility]');
      const startMs = Date.now();
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 30_000);
      // Nobody talks, nobody is seen (the presence camera is off): the watch prompts.
      await page.locator('[data-testid=idle-prompt]').waitFor({ timeout: 40_000 });
      const promptAfterS = (Date.now() - startMs) / 1000;
      assert.ok(promptAfterS >= 19, `the prompt came after ${promptAfterS.toFixed(1)} s: twice the configured 10 s`);
      // The countdown starts from twice the configured 30 s.
      const first = Number(await page.evaluate(`document.querySelector('[data-testid=idle-prompt] .num').textContent.replace(/[٠-٩]/g, (d) => '٠١٢٣٤٥٦٧٨٩'.indexOf(d))`));
      assert.ok(first > 30 && first <= 60, `the countdown starts at ${first} s, from 60`);
      await screenshotBoth(page, 'access-idle-ar-accessible', 'landscape');
      await checkScreen(page, 'idle prompt (ar, accessible)', KIOSK_SIZES);
      assert.deepEqual(await controlsAboveBand(page, 50), [], 'the idle prompt buttons are in reach');
      await page.click('[data-testid=idle-keep]');
      await page.locator('[data-testid=idle-prompt]').waitFor({ state: 'detached', timeout: 5_000 });
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
    } finally {
      await k.close();
      await silent.close();
    }
  });

  it('keyboard only: attract → German → call → mute → end → attract, spoken through the live region; the avatar is told the language', async () => {
    const k = await open('landscape', { config: { languageInstructions: { de: 'Antworte immer auf Deutsch.' } } });
    try {
      const { page } = k;
      await tabTo(page, 'lang-de');
      await page.keyboard.press('Enter');
      assert.deepEqual(await pageLang(page), { lang: 'de', dir: 'ltr' });
      assert.equal(await page.getAttribute('[data-testid=lang-de]', 'aria-pressed'), 'true');
      assert.equal((await page.locator('[data-testid=start]').textContent())?.trim(), 'Zum Sprechen tippen');

      // Back up to the start button (it comes before the bar in the reading order).
      for (let i = 0; i < 30 && (await focusedTestId(page)) !== 'start'; i++) await page.keyboard.press('Shift+Tab');
      assert.equal(await focusedTestId(page), 'start');
      await page.keyboard.press('Enter');
      await screenIs(page, 'connecting');
      await eventually(async () => (await announced(page)) === 'Verbindung zu Ava…', 'connecting is announced');
      await screenIs(page, 'live', 30_000);
      await eventually(async () => (await announced(page)) === 'Ava ist bereit. Sprechen Sie einfach los.', 'ready is announced');

      assert.equal(personaOf(k), 'A warm, concise hotel concierge.\n\nAntworte immer auf Deutsch.');

      await tabTo(page, 'mute');
      await page.keyboard.press('Space');
      await eventually(async () => (await page.getAttribute('[data-testid=mute]', 'aria-pressed')) === 'true', 'muted by Space');
      assert.equal((await page.locator('[data-testid=mute]').textContent())?.trim(), 'Stumm an');
      await eventually(async () => (await announced(page)) === 'Stumm an', 'muted is announced');
      await page.keyboard.press('Space');
      await eventually(async () => (await announced(page)) === 'Ich höre zu.', 'listening is announced');

      await tabTo(page, 'hangup');
      await page.keyboard.press('Enter');
      await screenIs(page, 'ended');
      await eventually(async () => (await announced(page)) === 'Das Gespräch ist beendet.', 'the end is announced');
      assert.match((await page.locator('[data-testid=return-countdown]').textContent()) ?? '', /Zurück zum Start in \d s/);
      await page.keyboard.press('Escape');
      await screenIs(page, 'attract');
      assert.deepEqual(await pageLang(page), { lang: 'en', dir: 'ltr' }, 'the next visitor starts in English');
      assert.equal((await page.locator('[data-testid=start]').textContent())?.trim(), 'Tap to talk');
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });

  it('a configured default language and accessibility mode: the call is made in it, Arabic mirrors, controls stay in the band', async () => {
    const k = await open('portrait', {
      config: { languages: ['ar', 'en', 'de'], defaultLanguage: 'ar', accessibility: { default: true, reachBandPercent: 45 } },
    });
    try {
      const { page } = k;
      assert.deepEqual(await pageLang(page), { lang: 'ar', dir: 'rtl' });
      assert.equal(await page.getAttribute('main.kiosk', 'data-accessible'), 'true');
      assert.deepEqual(
        await page.locator('[data-testid=languages] button').evaluateAll((els) => els.map((e) => `${e.getAttribute('lang')}:${e.textContent?.trim()}`)),
        ['ar:العربية', 'en:English', 'de:Deutsch'],
      );
      // Mirrored: in a right-to-left page the first language sits to the right of the last.
      const first = await page.locator('[data-testid=lang-ar]').boundingBox();
      const last = await page.locator('[data-testid=lang-de]').boundingBox();
      assert.ok(first!.x > last!.x, 'Arabic (first) is on the right');
      await screenshotBoth(page, 'access-attract-ar-accessible', 'portrait');
      for (const orientation of ['portrait', 'landscape'] as const) {
        await page.setViewportSize(VIEWPORTS[orientation]);
        await page.waitForTimeout(150);
        assert.deepEqual(await controlsAboveBand(page, 45), [], `attract controls in the lower 45 % (${orientation})`);
      }
      await page.setViewportSize(VIEWPORTS.portrait);
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 30_000);
      assert.deepEqual(await controlsAboveBand(page, 45), [], 'live controls in the band');
      assert.match(personaOf(k), /\n\nAlways answer in Arabic\.$/);
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended');
      assert.deepEqual(await controlsAboveBand(page, 45), [], 'ended controls in the band');
    } finally {
      await k.close();
    }
  });

  it('the staff panel by keyboard: shortcut, PIN, tabs, the audio output for headphones, Escape; axe and targets pass', async () => {
    const k = await openStaffKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, file: { staffPinHash: await hashPin('137946') } });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.keyboard.press('Control+Alt+K');
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      await checkScreen(page, 'staff PIN pad', ALL_SIZES);
      for (const d of '137946') await page.keyboard.press(d);
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=staff-panel]').waitFor({ timeout: 5_000 });
      // Every tab by keyboard (Tab to it, Enter), each checked with axe and for target sizes.
      for (const tab of ['status', 'settings', 'voices', 'diagnostics', 'ledger', 'logs', 'system']) {
        await tabTo(page, `tab-${tab}`);
        await page.keyboard.press('Enter');
        await eventually(async () => (await page.getAttribute('[data-testid=staff-panel]', 'data-tab')) === tab, `the ${tab} tab opens`);
        await page.waitForTimeout(300);
        await checkScreen(page, `staff ${tab}`, KIOSK_SIZES);
      }
      // Private listening: the output list is there for staff (Chromium's fake devices may list none).
      await page.locator('[data-testid=audio-output]').waitFor({ timeout: 5_000 });
      await screenshotBoth(page, 'access-staff-system', 'landscape');
      await page.keyboard.press('Escape');
      await page.locator('[data-testid=staff]').waitFor({ state: 'detached', timeout: 5_000 });
      await screenIs(page, 'attract');
    } finally {
      await k.close();
    }
  });

  it('the first-start setup screen passes axe and has 48 px targets', async () => {
    const k = await openStaffKiosk({ browser, baseUrl: server.url, orientation: 'portrait', imageDataUrl: portrait });
    try {
      await screenIs(k.page, 'setup');
      await checkScreen(k.page, 'setup', ALL_SIZES);
    } finally {
      await k.close();
    }
  });

  it('companion sizes: the attract screen fits and keeps 48 px targets in every language (a compact language list)', async () => {
    const k = await open('portrait');
    try {
      const { page } = k;
      for (const lang of ['de', 'ar', 'ja'] as const) {
        await page.setViewportSize(COMPANION_SIZES[0]);
        await page.selectOption('[data-testid=lang-select]', lang);
        assert.equal((await pageLang(page)).lang, lang);
        for (const size of COMPANION_SIZES) {
          await screenshotAt(page, `access-companion-${lang}-${size.width}x${size.height}`, size);
          assert.deepEqual(await smallTargets(page), [], `targets ${lang} ${size.width}x${size.height}`);
          assert.deepEqual(await clippedElements(page), [], `nothing clipped ${lang} ${size.width}x${size.height}`);
        }
        await page.selectOption('[data-testid=lang-select]', 'en');
      }
    } finally {
      await k.close();
    }
  });
});
