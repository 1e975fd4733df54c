/**
 * The browser policy the kiosk ships: the file in resources/ is what the code makes for the documented
 * port, it names the kiosk's origin and nothing else on its allow-list (no temporary folder, no file:// or
 * chrome:// page), and the host's check of an installed policy (none, this kiosk's, another port's).
 * Chromium itself reads the file in test/e2e/browser-lockdown.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installedPolicy, kioskPolicy, managedPolicyDir, POLICY_EXAMPLE_PORT, policyText, policyWarning } from '../../../electron/browser/chromium-policy.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const SHIPPED = join(ROOT, 'resources', 'chromium-policy', 'kiosk.json');

describe('the shipped browser policy', () => {
  it('is, byte for byte, the policy the code makes for the documented port', () => {
    assert.equal(readFileSync(SHIPPED, 'utf8'), policyText(POLICY_EXAMPLE_PORT));
  });

  it('blocks every address, Chromium\'s own pages by name, and allows the kiosk\'s origin only (also for the microphone and camera)', () => {
    const policy = JSON.parse(readFileSync(SHIPPED, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(policy.URLBlocklist, ['*', 'chrome://*', 'chrome-untrusted://*', 'devtools://*', 'view-source:*']);
    for (const list of ['URLAllowlist', 'AudioCaptureAllowedUrls', 'VideoCaptureAllowedUrls']) assert.deepEqual(policy[list], ['http://127.0.0.1:8765'], list);
    assert.deepEqual(kioskPolicy('http://127.0.0.1:41000').URLAllowlist, ['http://127.0.0.1:41000']);
  });

  it('closes incognito, guest and new profiles, DevTools, file dialogs, downloads, printing and history', () => {
    const policy = JSON.parse(readFileSync(SHIPPED, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(
      Object.fromEntries(['IncognitoModeAvailability', 'BrowserGuestModeEnabled', 'BrowserAddPersonEnabled', 'DeveloperToolsAvailability', 'AllowFileSelectionDialogs', 'DownloadRestrictions', 'PrintingEnabled', 'SavingBrowserHistoryDisabled', 'TaskManagerEndProcessEnabled'].map((k) => [k, policy[k]])),
      { IncognitoModeAvailability: 1, BrowserGuestModeEnabled: false, BrowserAddPersonEnabled: false, DeveloperToolsAvailability: 2, AllowFileSelectionDialogs: false, DownloadRestrictions: 3, PrintingEnabled: false, SavingBrowserHistoryDisabled: true, TaskManagerEndProcessEnabled: false },
    );
  });
});

describe('the host\'s look at the installed policy', () => {
  const ORIGIN = 'http://127.0.0.1:8765';
  const folder = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-policy-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };

  it('finds the kiosk locked when a policy blocks every address and allows its origin (in any file of the folder)', () => {
    assert.deepEqual(installedPolicy(folder({ 'kiosk.json': policyText(8765) }), ORIGIN), { state: 'locked' });
    const everything = JSON.stringify({ URLBlocklist: ['*', 'chrome://*', 'chrome-untrusted://*', 'devtools://*', 'view-source:*'] });
    assert.deepEqual(installedPolicy(folder({ 'a.json': everything, 'b.json': '{"URLAllowlist":["http://127.0.0.1:8765/"]}' }), ORIGIN), { state: 'locked' });
  });

  it('finds none in a missing or empty folder, with unreadable files, or without a block of every address (`*` alone leaves chrome:// open)', () => {
    const dir = folder({ 'broken.json': '{', 'list.json': '[1]', 'notes.txt': policyText(8765), 'older.json': '{"URLBlocklist":["*"],"URLAllowlist":["http://127.0.0.1:8765"]}' });
    mkdirSync(join(dir, 'dir.json'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling.json'));
    for (const d of [join(dir, 'missing'), folder({}), dir]) assert.deepEqual(installedPolicy(d, ORIGIN), { state: 'none' }, d);
  });

  it('finds another port\'s policy: it would block this kiosk\'s own page', () => {
    assert.deepEqual(installedPolicy(folder({ 'kiosk.json': policyText(9000) }), ORIGIN), { state: 'other-origin', allowed: ['http://127.0.0.1:9000'] });
  });

  it('says one line for none and for another port\'s, nothing when locked', () => {
    const dir = '/etc/chromium/policies/managed';
    assert.equal(policyWarning({ state: 'locked' }, dir, ORIGIN), null);
    assert.equal(
      policyWarning({ state: 'none' }, dir, ORIGIN),
      "No browser policy in /etc/chromium/policies/managed locks this kiosk: the host closes other windows and stops the browser's shortcuts, but the browser's own lock-down (chrome:// and file:// pages, DevTools, file dialogs) needs resources/chromium-policy/kiosk.json installed there (docs/browser-mode.md).",
    );
    assert.equal(
      policyWarning({ state: 'other-origin', allowed: ['http://127.0.0.1:9000'] }, dir, ORIGIN),
      "The browser policy in /etc/chromium/policies/managed allows http://127.0.0.1:9000 but not this kiosk's http://127.0.0.1:8765, so it blocks the kiosk's own page: set KIOSK_BROWSER_PORT to the port it names, or install the policy for this port (docs/browser-mode.md).",
    );
  });

  it('knows where each browser reads its managed policy on Linux (not a snap\'s: nothing is checked then)', () => {
    assert.deepEqual(
      ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/opt/other/browser'].map(managedPolicyDir),
      ['/etc/chromium/policies/managed', '/etc/chromium-browser/policies/managed', null, '/etc/opt/chrome/policies/managed', '/etc/opt/chrome/policies/managed', null],
    );
  });
});
