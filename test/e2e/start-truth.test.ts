/**
 * What a real start says about the service, as a person sees it: the browser mode's entry file
 * (electron/browser/index.ts, `npm run start:browser` without its build step) in its own process with the
 * wrong setting in its environment, the terminal read line by line, the printed address opened in Debian's
 * Chromium, the staff panel's Status tab read after the PIN.
 *  - "connected" is printed only once the service answered with the key accepted (the emulator on loopback);
 *  - a key with no URL, a refused key and a port nobody answers on are each said as such, with what to do;
 *  - while the service cannot be reached the visitor sees the calm "not available right now" screen, staff
 *    read why on the Status tab, and when the service comes up the kiosk says so and the attract screen
 *    comes back by itself.
 * Screenshots: service-down-* and staff-status-service-down-* in test/artifacts/screens/.
 * Build first: npm run build.   Run: node --import tsx --test --test-timeout=180000 test/e2e/start-truth.test.ts
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { closedPort } from '../helpers/closed-port.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright';
import { DEMO_API_KEY, startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { hashPin } from '../../electron/operations/staff-pin.ts';
import { eventually, launchChromium, ROOT, screenIs, screenshotBoth } from './harness.ts';

/** How long a step of the PIN pad may take to show: seconds on a loaded machine (CI beside other jobs). */
const PAD_WAIT_MS = 15_000;

const WAIT_MS = 60_000;
const PIN = '246813';

interface Running {
  child: ChildProcess;
  lines: () => string[];
  exited: Promise<number | null>;
  /** The data folder (AVATAR_KIOSK_DATA). */
  data: string;
}

const running: Running[] = [];
const folders: string[] = [];
const emulators: EmulatorHandle[] = [];
let browser: Browser;

before(async () => {
  browser = await launchChromium();
});
after(async () => {
  for (const r of running) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  for (const e of emulators) await e.close();
  await browser?.close();
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

/** The browser mode's entry with `env` (no browser opened: it prints the address), output line by line. */
async function start(env: Record<string, string>, config: Record<string, unknown> = {}, rawConfig?: string): Promise<Running> {
  const data = mkdtempSync(join(tmpdir(), 'kiosk-start-truth-'));
  folders.push(data);
  writeFileSync(join(data, 'config.json'), JSON.stringify({ staffPinHash: await hashPin(PIN), prewarm: { mode: 'off' }, presence: { cameraEnabled: false }, ...config }));
  if (config.staffPinHash === null) writeFileSync(join(data, 'config.json'), JSON.stringify({ prewarm: { mode: 'off' }, presence: { cameraEnabled: false } }));
  if (rawConfig !== undefined) writeFileSync(join(data, 'config.json'), rawConfig);
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'electron/browser/index.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', AVATAR_KIOSK_DATA: data, KIOSK_BROWSER: 'none', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  const r = { child, lines: () => out.split('\n').filter(Boolean), exited, data };
  running.push(r);
  return r;
}

/** The first "Service:" line that is not "checking…". */
async function serviceLine(r: Running): Promise<string> {
  return eventually(() => r.lines().find((l) => l.startsWith('Service:') && l !== 'Service: checking…'), `a service line in:\n${r.lines().join('\n')}`, WAIT_MS);
}

/** The address the start printed for opening the kiosk. */
function printedAddress(r: Running): Promise<string> {
  return eventually(() => r.lines().find((l) => l.trim().startsWith('http://127.0.0.1:') && l.includes('/launch?code='))?.trim(), 'the printed address');
}

async function stop(r: Running): Promise<void> {
  r.child.kill('SIGINT');
  assert.equal(await r.exited, 0);
}


async function emulator(port = 0): Promise<EmulatorHandle> {
  const emu = await startEmulator({ host: '127.0.0.1', port });
  emulators.push(emu);
  return emu;
}

describe('a real start says the truth about the service (terminal, screen, Status tab)', () => {
  it('connected only when it is: the key accepted by a service that answered', async () => {
    const emu = await emulator();
    const r = await start({ AVATAR_API_KEY: emu.apiKey, AVATAR_BASE_URL: emu.baseUrl });
    assert.equal(await serviceLine(r), `Service: Connected: the service at ${emu.baseUrl} answered and accepted the key.`);
    assert.equal(r.lines()[0], 'Avatar Kiosk is running (the real service).');
    assert.ok(!r.lines().some((l) => /connected to the service \(direct\)/.test(l)));
    await stop(r);
  });

  it('where the voice and picture go, as the visitor reads it: on the service they go to it; in the demo they stay on the device', async () => {
    /** The attract screen's sentence and the Privacy sheet's, in video and in audio. */
    const said = async (r: Running): Promise<string[]> => {
      const address = await printedAddress(r);
      const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
      const page: Page = await context.newPage();
      try {
        await page.goto(address);
        await screenIs(page, 'attract', 20_000);
        const out = [(await page.locator('[data-testid=sends]').innerText()).trim()];
        await page.click('[data-testid=privacy-open]');
        out.push((await page.locator('[data-testid=privacy-sends]').innerText()).trim());
        await page.click('[data-testid=privacy-close]');
        await page.click('[data-testid=mode-audio]');
        out.push((await page.locator('[data-testid=sends]').innerText()).trim());
        return out;
      } finally {
        await context.close();
      }
    };
    // The service (an emulator reached as the service: its URL and key in the environment).
    const emu = await emulator();
    const service = await start({ AVATAR_API_KEY: emu.apiKey, AVATAR_BASE_URL: emu.baseUrl }, { allowModeChoice: true });
    assert.equal(await serviceLine(service), `Service: Connected: the service at ${emu.baseUrl} answered and accepted the key.`);
    assert.deepEqual(await said(service), [
      'Your voice and camera picture go to the avatar service, which makes the conversation.',
      'Your voice and camera picture go to the avatar service, which makes the conversation.',
      'Your voice goes to the avatar service, which makes the conversation.',
    ]);
    await stop(service);
    // The demo (no key: the built-in emulator and the demo engine, nothing leaves the machine).
    const demo = await start({}, { allowModeChoice: true });
    assert.deepEqual(await said(demo), [
      'This is a demo: your voice and camera picture stay on this device.',
      'This is a demo: your voice and camera picture stay on this device.',
      'This is a demo: your voice stays on this device.',
    ]);
    await stop(demo);
  });

  it('a key with no URL: "no service URL", and which variable to set', async () => {
    const r = await start({ AVATAR_API_KEY: 'sk-some-key-1234567890' });
    assert.equal(
      await serviceLine(r),
      'Service: NOT CONNECTED. An API key is set but no service URL, so the kiosk cannot reach the service. What to do: Set AVATAR_BASE_URL (or service.baseUrl in config.json) to the https:// address the service provider gave you.',
    );
    await stop(r);
  });

  it('an http:// AVATAR_BASE_URL: "wrong scheme", blamed on the variable (not config.json), with what to do', async () => {
    const r = await start({ AVATAR_API_KEY: 'sk-some-key-1234567890', AVATAR_BASE_URL: 'http://avatar.example.com' });
    const line = await serviceLine(r);
    assert.match(line, /^Service: NOT CONNECTED\. AVATAR_BASE_URL: Invalid configuration at "service\.baseUrl" \(from AVATAR_BASE_URL\): must start with https:\/\/ \(got http:\/\/avatar\.example\.com\)/);
    assert.match(line, /What to do: Set AVATAR_BASE_URL to the https:\/\/ address; http:\/\/ is only for this computer\.$/);
    assert.ok(r.lines().some((l) => l.startsWith('Setting not used: AVATAR_BASE_URL is invalid, not used.')), r.lines().join('\n'));
    assert.ok(!r.lines().some((l) => l.startsWith('config.json was not used')), 'the variable is not blamed on config.json');
    await stop(r);
  });

  it('one bad key in config.json: only that key is dropped, named in the terminal and on the PIN pad; the PIN still opens the panel', async () => {
    const r = await start({}, { callMode: 'hologram', avatar: { name: 'Nova' }, calMode: 'audio' });
    const address = await printedAddress(r);
    assert.ok(r.lines().includes('Setting not used: config.json: callMode is invalid, using video. Invalid configuration at "callMode": Invalid option: expected one of "audio"|"video".'), r.lines().join('\n'));
    // A misspelt key is named too (it would otherwise do nothing, silently).
    assert.ok(r.lines().includes('Settings this version does not know in config.json (misspelt, or from a newer version): calMode. They are ignored and kept in the file.'), r.lines().join('\n'));
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page: Page = await context.newPage();
    try {
      await page.goto(address);
      await screenIs(page, 'attract', 20_000);
      assert.equal(await page.locator('#attract-title').textContent(), 'Nova', 'the rest of config.json applies');
      await page.keyboard.press('Control+Shift+S');
      await page.locator('[data-testid=pin-pad][data-step=enter]').waitFor({ timeout: 5_000 });
      assert.equal((await page.locator('[data-testid=pin-settings-not-used]').textContent())?.trim(), 'config.json: callMode is invalid, using video');
      await screenshotBoth(page, 'pin-setting-not-used', 'landscape');
      for (const d of PIN) await page.click(`[data-testid=pin-${d}]`);
      await page.click('[data-testid=pin-ok]');
      await page.locator('[data-testid=staff-panel][data-tab=status]').waitFor({ timeout: 10_000 });
      const attention = (await page.locator('[data-testid=status-attention]').innerText()).replace(/\s+/g, ' ');
      assert.match(attention, /config\.json: callMode is invalid, using video\. Invalid configuration at "callMode".* Every other setting applies; fix .*config\.json and restart\./);
    } finally {
      await context.close();
    }
    await stop(r);
  });

  it('a config.json that is not JSON (a trailing comma): out of order, never setup; staff read which file to fix, and nothing is written over it', async () => {
    const raw = `{\n  "staffPinHash": "${await hashPin(PIN)}",\n  "callMode": "audio",\n}\n`;
    const r = await start({}, {}, raw);
    const address = await printedAddress(r);
    const said = r.lines().find((l) => l.includes('was not used')) ?? r.lines().join('\n');
    // (The parser's own words in the middle are Node's, and change with its version.)
    assert.ok(said.startsWith(`config.json (${join(r.data, 'config.json')}) was not used: The configuration file is not valid JSON (`), said);
    assert.ok(said.endsWith('). The kiosk runs on safe defaults and first-run setup stays closed: fix the file (or move it away to start afresh) and restart.'), said);
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page: Page = await context.newPage();
    try {
      await page.goto(address);
      await screenIs(page, 'out-of-order', 20_000);
      const reason = (await page.locator('[data-testid=out-of-order-reason]').textContent()) ?? '';
      assert.match(reason, /^No staff PIN could be read: config\.json in \S+ was not used \(The configuration file is not valid JSON .*\)\. First-run setup does not open over a settings file that cannot be read: fix config\.json \(or move it away to start afresh\) and restart\.$/);
      assert.equal(await page.locator('[data-testid=setup-choose]').count(), 0, 'no setup for whoever stands there');
      await screenshotBoth(page, 'out-of-order-config-not-json', 'landscape');
    } finally {
      await context.close();
    }
    await stop(r);
    assert.equal(readFileSync(join(r.data, 'config.json'), 'utf8'), raw, 'the file is left as it was');
  });

  it('setup refuses a guessable PIN and says why; a PIN with no pattern is taken', async () => {
    const r = await start({}, { staffPinHash: null });
    const address = await printedAddress(r);
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page: Page = await context.newPage();
    const typePin = async (pin: string) => {
      for (const d of pin) await page.click(`[data-testid=pin-${d}]`);
      await page.click('[data-testid=pin-ok]');
    };
    try {
      await page.goto(address);
      await screenIs(page, 'setup', 20_000);
      await page.click('[data-testid=setup-choose]');
      await page.locator('[data-testid=pin-pad][data-step=choose]').waitFor({ timeout: PAD_WAIT_MS });
      await typePin('123456');
      await page.locator('[data-testid=pin-pad][data-step=confirm]').waitFor({ timeout: PAD_WAIT_MS });
      await typePin('123456');
      await page.locator('[data-testid=pin-pad][data-step=choose]').waitFor({ timeout: PAD_WAIT_MS });
      assert.equal((await page.locator('[data-testid=pin-message]').textContent())?.trim(), 'This PIN is easy to guess: it is a run of digits. Choose 6 to 8 digits with no pattern.');
      await screenshotBoth(page, 'pin-guessable', 'landscape');
      await typePin('470258');
      await page.locator('[data-testid=pin-pad][data-step=confirm]').waitFor({ timeout: PAD_WAIT_MS });
      await typePin('470258');
      await page.locator('[data-testid=staff-panel][data-tab=status]').waitFor({ timeout: 10_000 });
    } finally {
      await context.close();
    }
    await stop(r);
  });

  it('a refused key: "refused the API key", and where to put the right one', async () => {
    const emu = await emulator();
    const r = await start({ AVATAR_API_KEY: 'sk-not-an-account-1234567890', AVATAR_BASE_URL: emu.baseUrl });
    assert.equal(
      await serviceLine(r),
      `Service: NOT CONNECTED. The service at ${emu.baseUrl} refused the API key (HTTP 401). What to do: Set AVATAR_API_KEY to the key from the provider's workbench (the one for this service URL) and start again. The kiosk checks again by itself.`,
    );
    assert.equal(emu.listSessions().length, 0, 'the check created nothing');
    await stop(r);
  });

  it('unreachable: the visitor sees "not available right now", staff read why; it clears by itself when the service answers', async () => {
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const r = await start({ AVATAR_API_KEY: DEMO_API_KEY, AVATAR_BASE_URL: baseUrl });
    const line = await serviceLine(r);
    assert.equal(line, `Service: NOT CONNECTED. The service at ${baseUrl} could not be reached (connection refused). What to do: Check the address, the network and the venue's proxy or firewall. The kiosk checks again by itself.`);
    const address = await printedAddress(r);

    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page: Page = await context.newPage();
    try {
      await page.goto(address);
      await screenIs(page, 'service-down', 20_000);
      assert.equal((await page.locator('#service-down-title').textContent())?.trim(), 'Not available right now');
      assert.equal((await page.locator('[data-testid=service-down-lead]').textContent())?.trim(), 'This kiosk can’t start a conversation at the moment. Please come back a little later.');
      assert.equal(await page.locator('[data-testid=start]').count(), 0, 'no button that could only fail');
      const visible = (await page.locator('main.kiosk').innerText()).toLowerCase();
      for (const word of ['attempt', 'credit', 'error', 'http', 'key']) assert.ok(!visible.includes(word), `the visitor's screen says nothing of "${word}"`);
      await screenshotBoth(page, 'service-down', 'landscape');

      // Staff: the Status tab says why and what to do.
      await page.keyboard.press('Control+Shift+S');
      await page.locator('[data-testid=pin-pad]').waitFor({ timeout: 5_000 });
      for (const d of PIN) await page.click(`[data-testid=pin-${d}]`);
      await page.click('[data-testid=pin-ok]');
      await page.locator('[data-testid=staff-panel][data-tab=status]').waitFor({ timeout: 10_000 });
      await page.locator('[data-testid=status-service]').waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('[data-testid=status-service-state]').textContent(), 'Not connected: no answer');
      assert.match((await page.locator('[data-testid=status-service-message]').textContent()) ?? '', new RegExp(`^The service at ${baseUrl.replace(/[.:/]/g, '\\$&')} could not be reached \\(connection refused\\)\\.$`));
      assert.equal(
        (await page.locator('[data-testid=status-service-action]').textContent())?.replace(/\s+/g, ' ').trim(),
        "What to do: Check the address, the network and the venue's proxy or firewall.",
      );
      await screenshotBoth(page, 'staff-status-service-down', 'landscape');
      await page.click('[data-testid=staff-close]');

      // The service comes up on that port: the kiosk says so, and the attract screen comes back by itself.
      await emulator(port);
      await eventually(() => r.lines().includes(`Service: Connected: the service at ${baseUrl} answered and accepted the key.`), `connected by itself:\n${r.lines().join('\n')}`, WAIT_MS);
      await screenIs(page, 'attract', 20_000);
      assert.equal(await page.locator('[data-testid=start]').count() > 0, true);
    } finally {
      await context.close();
    }
    await stop(r);
  });
});
