/**
 * Idle / abandonment hang-up end to end: the BUILT renderer in Debian's Chromium whose fake
 * microphone plays a SILENT WAV (--use-file-for-fake-audio-capture), bridged to the REAL kiosk service
 * with the staff operations (ledger) attached, on the real emulator. Idle is set through config.json to
 * a short wait (prompt after 10 s, hang up 25 s later).
 *
 * 1. a silent call shows "Are you still there?" with a countdown; "Keep talking" cancels it;
 * 2. with a talking visitor (a speech-like WAV: voiced syllables with short pauses) no prompt appears:
 *    the voice activity detector hears the local, echo-cancelled microphone in real Chromium WebAudio;
 * 3. left alone, the prompt runs out: the call is hung up with cause `idle` (type 5 `user_end` on the
 *    wire), the ended screen says why, and the ledger records `idle`; its CSV export downloads from the
 *    staff panel (opened with the keyboard shortcut, which does nothing during the call).
 *
 * Screenshots: idle-prompt-*, idle-ended-*, staff-ledger-* in test/artifacts/screens/.
 * Build first: npm run build:renderer.   Run: node --import tsx --test test/e2e/idle.test.ts
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { eventually, launchChromiumWithArgs, openStaffKiosk, screenIs, screenshotBoth, startStaticServer, writeWav, type StaffKioskPage } from './harness.ts';

let server: Awaited<ReturnType<typeof startStaticServer>>;
let browser: Browser;
let portrait: string;
let wavDir: string;
/** An installed kiosk has a staff PIN (without one it shows the first-run setup, not the attract screen). */
let staffPinHash: string;

before(async () => {
  server = await startStaticServer();
  staffPinHash = await hashPin('246813');
  wavDir = mkdtempSync(join(tmpdir(), 'kiosk-e2e-wav-'));
  const silence = writeWav(join(wavDir, 'silence.wav'), 2, () => 0);
  browser = await launchChromiumWithArgs([`--use-file-for-fake-audio-capture=${silence}`]);
  portrait = `data:image/png;base64,${readFileSync(join(import.meta.dirname, '../../resources/demo-avatar.png')).toString('base64')}`;
});
after(async () => {
  await browser?.close();
  await server?.close();
});

// The schema's minimum wait (10 s), and a countdown long enough to take both screenshots of the prompt
// and still press "Keep talking" on a loaded machine (screenshots have taken over 12 s under `npm test`).
const IDLE = { promptSeconds: 10, hangupSeconds: 25 };

describe('Idle hang-up (E2E: silent microphone, real kiosk service + staff operations + emulator)', () => {
  it('asks "Are you still there?" in a silent call, keeps the call on "Keep talking", then hangs up by itself and says why', async () => {
    const k: StaffKioskPage = await openStaffKiosk({ browser, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, file: { idle: IDLE, returnToAttractSeconds: 30, staffPinHash } }); // the ended screen stays for its screenshots
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 20_000);
      const liveId = k.emulator.listSessions()[0]!.id;

      // The staff shortcut does nothing during a call.
      await page.keyboard.press('Control+Shift+S');
      await page.waitForTimeout(300);
      assert.equal(await page.locator('[data-testid=staff]').count(), 0, 'the staff panel never opens during a live call');

      const prompt = page.locator('[data-testid=idle-prompt]');
      await prompt.waitFor({ timeout: 25_000 });
      assert.equal(await page.getAttribute('[data-testid=idle-watch]', 'data-active'), 'false', 'the silent microphone is not heard as speech');
      assert.match((await page.locator('[data-testid=idle-countdown]').textContent()) ?? '', /The conversation will end in \d+ seconds? unless you tap or speak\./);
      assert.equal(await page.locator('#idle-title').textContent(), 'Are you still there?');
      await screenshotBoth(page, 'idle-prompt', 'landscape');

      // "Keep talking": the prompt goes, the call stays live, and the wait starts over.
      await page.click('[data-testid=idle-keep]');
      await prompt.waitFor({ state: 'detached', timeout: 5_000 });
      assert.equal(k.emulator.liveCount(), 1, 'the call is still live');
      assert.equal(
        k.bridge.calls.filter((c) => c.channel === 'kiosk:session:hangup').length,
        0,
        'nothing hung up while the visitor answered the prompt',
      );

      // Left alone again: prompt, countdown, hang-up with cause idle, ended screen with the reason.
      await prompt.waitFor({ timeout: 25_000 });
      await screenIs(page, 'ended', 40_000);
      await page.locator('[data-testid=ended-idle]').waitFor({ timeout: 5_000 });
      assert.equal(await page.locator('[data-testid=ended-idle]').textContent(), 'The call ended because nobody was talking.');
      const hangups = k.bridge.calls.filter((c) => c.channel === 'kiosk:session:hangup');
      assert.deepEqual(hangups.map((c) => c.arg), [{ cause: 'idle' }]);
      await eventually(() => k.emulator.getSession(liveId)?.status === 'ended', 'the emulator ended the session');
      await eventually(async () => /second|min/.test((await page.locator('[data-testid=ended-duration]').textContent()) ?? ''), 'the ended screen shows the billed time');
      await screenshotBoth(page, 'idle-ended', 'landscape');

      // The ledger recorded the end reason `idle`.
      const record = await eventually(() => k.ops.ledger.read().records.find((r) => r.kind === 'session' && r.live_id === liveId), 'the ledger has the session');
      assert.equal(record.kind === 'session' && record.end_reason, 'idle');

      // Staff: the shortcut opens the PIN pad on the ended screen (the kiosk's PIN was set at install); Ledger → CSV.
      await page.keyboard.press('Control+Alt+K');
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      for (const d of '246813') await page.click(`[data-testid=pin-${d}]`);
      await page.click('[data-testid=pin-ok]');
      await page.locator('[data-testid=staff-panel]').waitFor({ timeout: 5_000 });
      await page.click('[data-testid=tab-ledger]');
      // A demo call (the built-in emulator): in its own column, never in the sessions or credits.
      const today = page.locator('[data-testid=ledger-today-demo]');
      await eventually(async () => (await today.textContent()) === '1', 'today counts the idle session as a demo call');
      assert.equal(await page.locator('[data-testid=ledger-today] td').first().textContent(), '0');
      await screenshotBoth(page, 'staff-ledger', 'landscape');
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 10_000 }), page.click('[data-testid=ledger-export]')]);
      assert.match(download.suggestedFilename(), /\.csv$/);
      const csv = readFileSync((await download.path())!, 'utf8');
      const [header, ...rows] = csv.trim().split(/\r?\n/);
      assert.match(header!, /^kind,start_at,live_at,end_at,live_id,/);
      const row = rows.find((r) => r.includes(liveId));
      assert.ok(row, `the CSV has the session ${liveId}: ${csv}`);
      assert.match(row!, /,idle,/);
      assert.deepEqual(k.problems.filter((p) => !/Failed to load resource.*404/.test(p)), []);
    } finally {
      await k.close();
    }
  });

  it('never asks while the visitor keeps talking (voice activity on the local microphone)', async () => {
    // Voiced words: 140 Hz with ten harmonics, 250 ms of voice then a 100 ms gap, and a 400 ms breath
    // every 2 s (gaps and breaths shorter than the detector's 900 ms stop hold; voiced stretches longer
    // than its 150 ms start hold, as real words are: 100 ms bursts passed only when a loaded machine
    // made the analyser's readings coarse).
    const speech = writeWav(join(wavDir, 'speech.wav'), 4, (t) => {
      const inBreath = t % 2 > 1.6;
      const inGap = t % 0.35 > 0.25;
      if (inBreath || inGap) return 0;
      let v = 0;
      for (let h = 1; h <= 10; h++) v += Math.sin(2 * Math.PI * 140 * h * t) / h;
      return 0.35 * v * Math.sin((Math.PI * (t % 0.35)) / 0.25);
    });
    const talking = await launchChromiumWithArgs([`--use-file-for-fake-audio-capture=${speech}`]);
    const k = await openStaffKiosk({ browser: talking, baseUrl: server.url, orientation: 'landscape', imageDataUrl: portrait, file: { idle: IDLE, callMode: 'audio', staffPinHash } });
    try {
      const { page } = k;
      await screenIs(page, 'attract');
      await page.click('[data-testid=mode-audio]');
      await page.click('[data-testid=start]');
      await screenIs(page, 'live', 20_000);
      await page.evaluate(`(() => {
        window.__idlePromptSeen = false;
        window.__voiceHeard = false;
        new MutationObserver(() => {
          if (document.querySelector('[data-testid=idle-prompt]')) window.__idlePromptSeen = true;
          if (document.querySelector('[data-testid=idle-watch][data-phase=watching][data-active=true]')) window.__voiceHeard = true;
        }).observe(document.body, { childList: true, subtree: true, attributes: true });
      })()`);
      await page.waitForTimeout(IDLE.promptSeconds * 1000 + 6_000);
      assert.equal(await page.evaluate('window.__voiceHeard'), true, 'the watch ran and heard the visitor');
      assert.equal(await page.evaluate('window.__idlePromptSeen'), false, 'no "still there?" while the visitor talks');
      assert.equal(k.emulator.liveCount(), 1, 'the call is still live');
      assert.equal(k.bridge.calls.filter((c) => c.channel === 'kiosk:session:hangup').length, 0);
      await page.click('[data-testid=hangup]');
      await screenIs(page, 'ended', 15_000);
      assert.equal(await page.locator('[data-testid=ended-idle]').count(), 0, 'a visitor hang-up does not blame silence');
    } finally {
      await k.close();
      await talking.close();
    }
  });
});
