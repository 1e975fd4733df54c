/**
 * The staff panel end to end: the BUILT renderer in Debian's Chromium (fake mic/camera),
 * bridged to the REAL kiosk service with the staff operations attached (PIN hash, settings in a temp
 * config.json, ledger, doctor) on the real emulator.
 *
 * - a kiosk without a PIN starts on the first-run setup screen (no attract screen, calls refused); the
 *   hidden gesture (long-press the top-left corner for 3 s; a short press does nothing) or the setup
 *   screen's button (keyboard) opens the pad to choose + confirm a PIN, which opens the panel; every tab, a settings save with a per-field message, then a good save
 *   whose new name shows on the attract screen and lands in config.json;
 *   a cloned voice becomes the avatar's voice;
 * - wrong PINs say how many tries are left, the fifth locks the pad with the seconds left;
 * - a kiosk that started with problems: a small dot in the staff corner, a line on the PIN pad, the list
 *   on the Status tab (and no dot on a kiosk that started cleanly).
 *
 * Screenshots (both orientations): setup, staff-pin-choose, staff-status, staff-settings, staff-settings-errors,
 * staff-voices, staff-diagnostics, staff-logs, staff-system, staff-pin-wrong, staff-pin-locked,
 * attract-attention, staff-pin-attention, staff-status-attention.
 * Build first: npm run build:renderer.   Run: node --import tsx --test test/e2e/staff.test.ts
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright';
import { eventually, launchChromium, openStaffKiosk, screenIs, screenshotBoth, startStaticServer, type Orientation, type StaffKioskPage } from './harness.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { sandboxProblem } from '../../electron/kiosk/os-integration.ts';

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

/** A kiosk with no staff PIN yet: it starts on the first-run setup screen. */
async function open(orientation: Orientation): Promise<StaffKioskPage> {
  const k = await openStaffKiosk({ browser, baseUrl: server.url, orientation, imageDataUrl: portrait });
  await screenIs(k.page, 'setup');
  return k;
}

/** Hold the pointer on the top-left corner for `ms`. */
async function pressCorner(page: Page, ms: number): Promise<void> {
  await page.mouse.move(30, 30);
  await page.mouse.down();
  await page.waitForTimeout(ms);
  await page.mouse.up();
}

async function typePin(page: Page, pin: string): Promise<void> {
  for (const d of pin) await page.click(`[data-testid=pin-${d}]`);
  await page.click('[data-testid=pin-ok]');
}

const pinMessage = (page: Page) => page.locator('[data-testid=pin-message]').textContent().then((t) => (t ?? '').trim().replace(/\s+/g, ' '));

describe('Staff panel (E2E: built renderer + real kiosk service with staff operations + emulator)', () => {
  it('starts on the setup screen without a PIN; a 3 s corner press sets the PIN, shows every tab, and applies a new name to the attract screen', async () => {
    const k = await open('landscape');
    try {
      const { page } = k;
      // No visitor screen before setup: no start button, and main refuses a call anyway.
      assert.equal(await page.locator('#setup-title').textContent(), 'Set up this kiosk');
      assert.equal(await page.locator('[data-testid=start]').count(), 0, 'no attract screen before a PIN exists');
      const refused = await k.channels.dispatch('kiosk:session:start', {});
      assert.equal(!refused.ok && refused.error.code, 'invalid_request');
      await screenshotBoth(page, 'setup', 'landscape');
      // A short press is not the gesture.
      await pressCorner(page, 1_000);
      await page.waitForTimeout(300);
      assert.equal(await page.locator('[data-testid=pin-pad]').count(), 0, 'a 1 s press does not open the pad');

      await pressCorner(page, 3_300);
      await page.locator('[data-testid=pin-pad][data-step=choose]').waitFor({ timeout: 5_000 });
      assert.equal(await page.locator('#pin-title').textContent(), 'Choose a staff PIN');
      for (const d of '2468') await page.click(`[data-testid=pin-${d}]`);
      await screenshotBoth(page, 'staff-pin-choose', 'landscape');
      for (const d of '13') await page.click(`[data-testid=pin-${d}]`);
      await page.click('[data-testid=pin-ok]');
      await page.locator('[data-testid=pin-pad][data-step=confirm]').waitFor({ timeout: 5_000 });
      await typePin(page, '246813');
      await page.locator('[data-testid=staff-panel][data-tab=status]').waitFor({ timeout: 5_000 });
      assert.match((await k.persistence.read().staffPinHash) as string, /^scrypt\$/, 'only a scrypt hash of the PIN is stored');
      assert.ok(!JSON.stringify(k.persistence.read()).includes('"246813"'), 'the PIN itself is stored nowhere');

      // Status
      await eventually(async () => (await page.locator('[data-testid=status-mode]').textContent()) === 'Demo (built-in emulator)', 'the status tab loaded');
      await screenshotBoth(page, 'staff-status', 'landscape');

      // Settings: a bad value gets main's message next to its field; nothing is saved.
      await page.click('[data-testid=tab-settings]');
      await page.locator('[data-testid=settings-form]').waitFor({ timeout: 5_000 });
      assert.equal(await page.inputValue('[data-testid=set-name]'), 'Ava');
      await screenshotBoth(page, 'staff-settings', 'landscape');
      await page.fill('[data-testid=set-name]', 'Maximilian');
      await page.fill('[data-testid=set-persona]', 'A cheerful museum guide who loves dinosaurs.');
      await page.fill('[data-testid=set-idle-prompt]', '3');
      await page.click('[data-testid=settings-save]');
      const fieldError = page.locator('[data-testid="error-idle.promptSeconds"]');
      await fieldError.waitFor({ timeout: 5_000 });
      const message = (await fieldError.textContent()) ?? '';
      assert.ok(message.length > 5 && !/ZodError|at \w+ \(|\n\s+at /.test(message), `a human message, no stack: ${message}`);
      assert.equal((k.persistence.read().avatar as { name?: string } | undefined)?.name, 'Ava', 'nothing saved');
      await fieldError.scrollIntoViewIfNeeded();
      await screenshotBoth(page, 'staff-settings-errors', 'landscape');

      await page.fill('[data-testid=set-idle-prompt]', '30');
      // The picture as a file: a too-large one is refused with its size; the real one is taken.
      // (The 11 MB file is made inside the page: sending it over CDP takes longer than 30 s on a loaded machine.)
      await page.evaluate(`(() => {
        const input = document.querySelector('[data-testid=set-image-file]');
        const dt = new DataTransfer();
        dt.items.add(new File([new ArrayBuffer(11 * 1024 * 1024)], 'huge.png', { type: 'image/png' }));
        input.files = dt.files;
        input.dispatchEvent(new Event('change', { bubbles: true }));
      })()`);
      await page.locator('[data-testid="error-avatar.imagePath"]').waitFor({ timeout: 5_000 });
      assert.equal(await page.locator('[data-testid="error-avatar.imagePath"]').textContent(), 'That picture is 11.0 MB; pick one under 10.0 MB.');
      await page.setInputFiles('[data-testid=set-image-file]', join(import.meta.dirname, '../../resources/demo-avatar.png'));
      await eventually(async () => /^Picked: demo-avatar\.png \(0\.\d MB\)$/.test((await page.locator('[data-testid=picked-picture]').textContent()) ?? ''), 'the picked file is shown');
      assert.equal(await page.locator('[data-testid="error-avatar.imagePath"]').count(), 0);
      await page.click('[data-testid=settings-save]');
      await eventually(async () => /^Saved\./.test((await page.locator('[data-testid=save-message]').textContent()) ?? ''), 'the settings were saved');
      const file = k.persistence.read() as { avatar: { name: string; persona: string }; idle: { promptSeconds: number } };
      assert.equal(file.avatar.name, 'Maximilian');
      assert.equal(file.avatar.persona, 'A cheerful museum guide who loves dinosaurs.');
      assert.equal(file.idle.promptSeconds, 30);
      assert.equal((file.avatar as { imagePath?: string }).imagePath, join(k.dataDir, 'avatar-image.png'), 'the picked picture is kept as a file, not base64 in config.json');
      assert.equal(k.kiosk.config.avatar.name, 'Maximilian', 'applied without a restart');

      // Voices
      await page.click('[data-testid=tab-voices]');
      await page.locator('[data-testid=voice-current]').waitFor({ timeout: 5_000 });
      assert.equal(await page.locator('[data-testid=voice-current]').textContent(), 'Tina');
      assert.match((await page.locator('[data-testid=clone-cost]').textContent()) ?? '', /899 credits/);
      await screenshotBoth(page, 'staff-voices', 'landscape');
      // Clone a voice (the emulator's first 10 are free), then make it the avatar's voice.
      await page.fill('#clone-url', 'https://example.com/sample.mp3');
      await page.fill('#clone-name', 'Museum Guide');
      await page.click('text=Clone the voice');
      await page.locator('[data-testid="voice-Museum Guide"]').waitFor({ timeout: 10_000 });
      assert.match((await page.locator('[data-testid=clone-message]').textContent()) ?? '', /“Museum Guide” is ready/);
      await page.click('[data-testid="voice-Museum Guide"]');
      await eventually(async () => (await page.locator('[data-testid=voice-current]').textContent()) === 'Museum Guide', 'the new voice is current');
      assert.equal((k.persistence.read().avatar as { voice?: string }).voice, 'Museum Guide');

      // Diagnostics: main's checks (the service check closes its session before conn_init) + devices.
      await page.click('[data-testid=tab-diagnostics]');
      await page.locator('[data-testid=doctor-checks]').waitFor({ timeout: 20_000 });
      for (const id of ['config', 'service', 'microphone', 'camera']) {
        await eventually(async () => (await page.getAttribute(`[data-check=${id}]`, 'data-ok')) === 'true', `the ${id} check passes`);
      }
      await eventually(
        () => page.evaluate(`(() => { const v = document.querySelector('[data-testid=camera-preview]'); return !!v && v.videoWidth > 0; })()`),
        'the camera preview shows frames',
      );
      await page.waitForTimeout(500); // the level meter moves with the fake device's beeps
      await screenshotBoth(page, 'staff-diagnostics', 'landscape');

      // Logs
      await page.click('[data-testid=tab-logs]');
      await page.locator('[data-testid=logs]').waitFor({ timeout: 5_000 });
      assert.match((await page.locator('[data-testid=logs]').textContent()) ?? '', /kiosk started \(e2e\)/);
      await screenshotBoth(page, 'staff-logs', 'landscape');

      // System: restart goes to main's platform hook.
      await page.click('[data-testid=tab-system]');
      await page.locator('[data-testid=system-restart]').waitFor({ timeout: 5_000 });
      await screenshotBoth(page, 'staff-system', 'landscape');
      await page.click('[data-testid=system-restart]');
      await eventually(() => k.platform.calls.includes('restart'), 'restart reached main');

      // Close: the attract screen shows the new name; the device check released the camera and mic.
      await page.click('[data-testid=staff-close]');
      await page.locator('[data-testid=staff]').waitFor({ state: 'detached', timeout: 5_000 });
      await eventually(async () => (await page.locator('#attract-title').textContent()) === 'Maximilian', 'the attract screen shows the new name');
      const tracks = await page.evaluate<{ total: number; live: number }>(`({ total: window.__localTracks.length, live: window.__localTracks.filter((t) => t.readyState === 'live').length })`);
      assert.ok(tracks.total >= 2, 'the diagnostics opened the microphone and camera');
      assert.equal(tracks.live, 0, 'and released them when the tab closed');
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });

  it('start-up problems: a quiet dot in the staff corner, a line on the PIN pad, the list on the Status tab', async () => {
    const k = await openStaffKiosk({
      browser,
      baseUrl: server.url,
      orientation: 'landscape',
      imageDataUrl: portrait,
      // An installed kiosk (its PIN set): start-up problems show on the attract screen's staff corner.
      file: { staffPinHash: await hashPin('246813') },
      startupAttention: [
        {
          kind: 'policy',
          code: 'invalid_config',
          message: 'Policy setting "companion.width" was ignored: Too small: expected number to be >=360. The other settings of /etc/avatar-kiosk/policy.json apply; ask the administrator to fix the policy file.',
        },
        {
          kind: 'key',
          code: 'timeout',
          message:
            'The keyring did not answer within 5 s (locked, or waiting for a password), so the kiosk started without the stored API key, in demo mode. Unlock the keyring at login (or set AVATAR_API_KEY) and restart.',
        },
        // An AppImage started without the sandbox (as main words it).
        { kind: 'sandbox', code: 'invalid_config', message: sandboxProblem({ noSandboxSwitch: true, argv: [], env: { APPIMAGE: '/opt/Avatar.AppImage' } })! },
      ],
    });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.locator('[data-testid=staff-attention-dot]').waitFor({ timeout: 5_000 });
      assert.equal(await page.locator('[data-testid=staff-attention-dot]').textContent(), '', 'no words for visitors');
      await screenshotBoth(page, 'attract-attention', 'landscape');

      await pressCorner(page, 3_300);
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      assert.equal(
        ((await page.locator('[data-testid=pin-attention]').textContent()) ?? '').trim().replace(/\s+/g, ' '),
        'This kiosk needs attention: 3 start-up problems, listed on the Status tab.',
      );
      await screenshotBoth(page, 'staff-pin-attention', 'landscape');
      await typePin(page, '246813');
      await page.locator('[data-testid=staff-panel][data-tab=status]').waitFor({ timeout: 5_000 });
      const items = page.locator('[data-testid=status-attention] li');
      await items.first().waitFor({ timeout: 5_000 });
      assert.deepEqual(
        (await items.allTextContents()).map((t) => t.trim().replace(/\s+/g, ' ')),
        [
          'Administrator policy Policy setting "companion.width" was ignored: Too small: expected number to be >=360. The other settings of /etc/avatar-kiosk/policy.json apply; ask the administrator to fix the policy file.',
          'API key The keyring did not answer within 5 s (locked, or waiting for a password), so the kiosk started without the stored API key, in demo mode. Unlock the keyring at login (or set AVATAR_API_KEY) and restart.',
          "Security sandbox Chromium's security sandbox is OFF: a flaw in the page's engine would reach this computer. The AppImage's launcher started the kiosk with --no-sandbox because this system refuses unprivileged user namespaces. Install the deb (it sets the sandbox up), or allow user namespaces for the AppImage with an AppArmor profile (see the packaging guide), and restart.",
        ],
      );
      assert.equal(await page.locator('[data-testid=status-key]').textContent(), 'Not set');
      await screenshotBoth(page, 'staff-status-attention', 'landscape');
      // A 404 is left out here as in the other tests.
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });

  it('says how many tries are left after a wrong PIN and locks the pad after the fifth, with the seconds left', async () => {
    const k = await open('portrait');
    try {
      const { page } = k;
      // Setup with the keyboard only: the setup screen's button has the focus; Enter opens the pad.
      assert.equal(await page.evaluate('document.activeElement?.dataset.testid'), 'setup-choose');
      await page.keyboard.press('Enter');
      await page.locator('[data-testid=pin-pad][data-step=choose]').waitFor({ timeout: 5_000 });
      await typePin(page, '137946');
      await typePin(page, '137946');
      await page.locator('[data-testid=staff-panel]').waitFor({ timeout: 5_000 });
      await page.click('[data-testid=staff-close]');
      await page.locator('[data-testid=staff]').waitFor({ state: 'detached', timeout: 5_000 });

      await page.keyboard.press('Control+Alt+K');
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      const seen: string[] = [];
      for (let i = 0; i < 4; i++) {
        await typePin(page, '0000');
        await eventually(async () => /Wrong PIN/.test(await pinMessage(page)), 'the wrong PIN is reported');
        seen.push(await pinMessage(page));
        if (i === 0) await screenshotBoth(page, 'staff-pin-wrong', 'portrait');
      }
      assert.deepEqual(seen, ['Wrong PIN. 4 tries left.', 'Wrong PIN. 3 tries left.', 'Wrong PIN. 2 tries left.', 'Wrong PIN. 1 try left.']);
      await typePin(page, '0000');
      await eventually(async () => /Too many wrong tries\. Try again in \d+ seconds\./.test(await pinMessage(page)), 'the lock-out is shown');
      const left = Number(/in (\d+) seconds/.exec(await pinMessage(page))![1]);
      assert.ok(left > 0 && left <= 60, `at most the 60 s lock-out left (${left} s)`);
      assert.equal(await page.isDisabled('[data-testid=pin-1]'), true, 'the keys are disabled while locked');
      await screenshotBoth(page, 'staff-pin-locked', 'portrait');
      // Main refuses even the right PIN while locked.
      const res = await k.channels.dispatch('kiosk:staff:unlock', { pin: '137946' });
      assert.equal(res.ok, false);
      assert.equal(!res.ok && res.error.code, 'locked');
      await page.click('[data-testid=pin-cancel]');
      await page.locator('[data-testid=staff]').waitFor({ state: 'detached', timeout: 5_000 });
      await screenIs(page, 'attract');
    } finally {
      await k.close();
    }
  });
});
