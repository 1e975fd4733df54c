/**
 * The Electron glue (electron/main/index.ts + security/window/store/ipc/lifecycle) run for real under plain
 * Node, with `electron` replaced by a recording stub (test/electron/stub/). The harness drives it like
 * Electron would and reports what it saw; the real emulator serves the demo sessions. What this cannot
 * show (Chromium enforcing the CSP, real permission prompts, real safeStorage) is covered by
 * test/electron/app.test.ts on a machine with the Electron binary.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CHANNELS } from '../../../electron/contract.ts';
import { runHarness } from '../../helpers/run-main-harness.ts';

const ROOT = join(import.meta.dirname, '../../..');

describe('main process wiring (electron stubbed)', () => {
  let facts: Record<string, any>;
  let output: string;
  before(async () => {
    ({ facts, output } = await runHarness('full'));
  });

  it('takes the single-instance lock and registers app:// as a privileged scheme before ready', () => {
    assert.deepEqual(facts.orderBeforeReady, ['requestSingleInstanceLock', 'registerSchemesAsPrivileged']);
    assert.deepEqual(facts.schemes, [{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true, stream: true } }]);
  });

  it('creates one secure window (windowed by config), no menu, black, loading app://kiosk/index.html', () => {
    const p = facts.webPreferences;
    assert.equal(p.contextIsolation, true);
    assert.equal(p.sandbox, true);
    assert.equal(p.nodeIntegration, false);
    assert.equal(p.webSecurity, true);
    assert.equal(p.webviewTag, false);
    assert.match(p.preload, /preload[\\/]index\.cjs$/);
    assert.equal(facts.windowOptions.backgroundColor, '#000000');
    assert.equal(facts.windowOptions.kiosk, undefined);
    assert.equal(facts.windowOptions.width, 800);
    assert.equal(facts.menuSetTo, null, 'no menu (and so no accelerators) on Linux');
    assert.equal(facts.loadUrl, 'app://kiosk/index.html');
  });

  it('shows no dialog while starting, and nothing waits for staff', () => {
    assert.deepEqual(facts.errorBoxes, []);
    assert.equal(facts.configGet.value.attention, 0);
  });

  it('without KIOSK_DEVTOOLS=1 there are no DevTools and F12 does nothing', () => {
    assert.equal(facts.webPreferences.devTools, false);
    assert.deepEqual([facts.inputListeners, facts.f12Prevented, facts.devToolsToggles], [0, false, 0]);
  });

  it('registers exactly the contract channels; our main frame gets answers, others are refused', () => {
    assert.deepEqual(facts.channels, Object.values(CHANNELS).sort());
    assert.equal(facts.configGet.ok, true);
    assert.equal(facts.configGet.value.mode, 'demo');
    assert.equal(facts.foreignFrame.error.code, 'forbidden');
    assert.equal(facts.subframe.error.code, 'forbidden');
    assert.deepEqual(facts.unknownChannel, { noHandler: true });
  });

  it('grants media to our page only, denies everything else', () => {
    assert.equal(facts.permMedia, true);
    assert.equal(facts.permGeo, false);
    assert.equal(facts.permForeignMedia, false);
    assert.equal(facts.permCheckMedia, true);
  });

  it('sets our CSP on responses (replacing a server one) and serves nothing outside the renderer', () => {
    assert.equal(facts.headers['content-security-policy'], undefined);
    assert.match(facts.headers['Content-Security-Policy'][0], /default-src 'none'/);
    assert.equal(facts.traversalStatus, 404);
    assert.match(facts.traversalCsp, /default-src 'none'/);
  });

  it('blocks navigation, <webview> and new windows', () => {
    assert.equal(facts.navigationPrevented, true);
    assert.equal(facts.webviewPrevented, true);
    assert.deepEqual(facts.windowOpen, { action: 'deny' });
  });

  it('config.json (PIN hash, metrics token, key ciphertext) is 0600 and the user-data folder 0700, even if an older version left them open', () => {
    assert.deepEqual(facts.modesAtStart, { config: '600', userData: '700' });
    assert.equal(facts.configModeAfterWrite, '600');
  });

  it('stores the API key only as safeStorage ciphertext and never echoes it', () => {
    assert.equal(facts.setKey.ok, true);
    assert.equal(facts.setKey.value.hasApiKey, true);
    assert.equal(facts.setKey.value.apiKeySource, 'stored');
    // Linux: Electron does not say which provider its async encryption used, so it is not claimed either way.
    assert.equal(facts.setKey.value.apiKeyWeaklyProtected, 'unknown');
    assert.equal(facts.storedHasCiphertext, true);
    assert.equal(facts.storedHasPlaintext, false);
    assert.equal(facts.clearKey.value.mode, 'demo');
    assert.equal(facts.storedAfterClear.encryptedApiKey, undefined);
    assert.doesNotMatch(JSON.stringify(facts), /sk-harness-SECRET/);
    assert.doesNotMatch(output, /sk-harness-SECRET/, 'not even in the logs');
  });

  it('a renderer crash during a call hangs up and reloads to attract (idle)', () => {
    assert.equal(facts.start1.ok, true);
    assert.deepEqual(facts.loadsAfterCrash, ['app://kiosk/index.html', 'app://kiosk/index.html']);
  });

  it('SIGTERM twice during a call: one hangup, one quit, then the quit is let through', () => {
    assert.equal(facts.start2.ok, true);
    const phases: string[] = facts.secondSessionPhases;
    assert.equal(phases.filter((p) => p === 'ending').length, 1);
    assert.equal(phases.at(-1), 'ended');
    assert.equal(facts.quitCalls, 1);
    assert.equal(facts.quitCallsAfterThirdSignal, 1);
  });
});

describe('main process wiring: an invalid config file', () => {
  it('shows no dialog (an unattended kiosk would wait on it), flags one problem for staff and runs with safe defaults', async () => {
    // As installed: from a checkout the safe default would be a window (not packaged → windowed).
    const { facts, output } = await runHarness('broken-config', { STUB_IS_PACKAGED: '1' });
    assert.deepEqual(facts.errorBoxes, []);
    assert.equal(facts.configGet.value.attention, 1, 'the attract screen marks the staff corner');
    assert.match(output, /Invalid configuration file; running with safe defaults .*The config file `[^`]*config\.json` is not valid JSON\./);
    assert.equal(facts.configFileAfter, '{"callMode": "audio", "window": {"mode": "windowed", "wid', 'not written over');
    // The unreadable file may hold the PIN's hash: no PIN can be chosen over it, and the kiosk says which
    // file to fix (the same sentence its out-of-order screen gives staff).
    assert.equal(facts.setPinAnswer.ok, false);
    assert.equal(facts.setPinAnswer.error.code, 'forbidden');
    assert.match(facts.setPinAnswer.error.message, /^No staff PIN could be read: config\.json in \S+ was not used \(The config file `[^`]*config\.json` is not valid JSON\)\. First-run setup does not open over a settings file that cannot be read: fix config\.json \(or move it away to start afresh\) and restart\.$/);
    assert.equal(facts.configGet.ok, true);
    assert.equal(facts.configGet.value.windowMode, 'kiosk', 'defaults, not the broken file');
    assert.deepEqual(facts.configGet.value.video, { fit: 'contain' }, 'kiosk mode on a landscape display');
    assert.equal(facts.windowOptions.kiosk, true);
  });
});

describe('main process wiring: one bad setting in config.json', () => {
  let facts: Record<string, any>;
  let output: string;
  before(async () => {
    // An installed kiosk (its PIN chosen) whose callMode someone set to a value this version does not know.
    ({ facts, output } = await runHarness('bad-key', { STUB_IS_PACKAGED: '1' }));
  });

  it('drops that setting only: the staff PIN still unlocks and the rest of the file applies', () => {
    assert.deepEqual(facts.errorBoxes, []);
    assert.deepEqual(facts.setPinAnswer, { ok: true, value: { pinSet: true, unlocked: true, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null } });
    assert.equal(facts.configGet.value.callMode, 'video', 'the default in place of the bad value');
    assert.equal(facts.configGet.value.windowMode, 'windowed', 'the file\'s window, not the defaults');
    assert.equal(facts.windowOptions.width, 800);
    assert.equal(facts.configFileAfter.callMode, 'hologram', 'the file is not rewritten behind staff\'s back');
    assert.match(facts.configFileAfter.staffPinHash, /^scrypt/);
  });

  it('names the setting on the PIN pad, on the Status tab and in the log', () => {
    assert.deepEqual(facts.pinState.value.settingsNotUsed, ['config.json: callMode is invalid, using video']);
    assert.deepEqual(
      facts.statusAttention.map((a: { kind: string; code: string }) => [a.kind, a.code]),
      [['config', 'invalid_config']],
    );
    assert.match(facts.statusAttention[0].message, /callMode/);
    assert.match(output, /A setting was not used .*config\.json: callMode is invalid, using video/);
    assert.doesNotMatch(output, /Invalid configuration file/);
  });
});

describe('main process wiring: unattended operation', () => {
  let facts: Record<string, any>;
  let output: string;
  before(async () => {
    ({ facts, output } = await runHarness('full'));
  });

  it('saves the page’s own export (ledger CSV) into Downloads without a dialog, and refuses any other download', () => {
    assert.deepEqual(facts.downloads, { saved: ['ledger-2026-11.csv'], prevented: 1 });
  });

  it('keeps the display awake only while live, and watches for an unresponsive renderer', () => {
    assert.deepEqual(facts.powerSaveWhileLive, ['start:prevent-display-sleep:1']);
    // The crash ended call 1, call 2 went live, SIGTERM ended it.
    assert.deepEqual(facts.powerSave, ['start:prevent-display-sleep:1', 'stop:1', 'start:prevent-display-sleep:2', 'stop:2']);
    assert.deepEqual(facts.unresponsiveListeners, [1, 1]);
  });

  it('staff channels answer through IPC: locked until a PIN is chosen; login items refused on Linux', () => {
    assert.deepEqual(facts.pinState, { ok: true, value: { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null } });
    assert.equal(facts.statusLocked.error.code, 'unauthorized');
    assert.equal(facts.setPin.value.unlocked, true);
    assert.deepEqual(facts.openAtLogin, { ok: false, error: { code: 'invalid_request', message: 'Starting at login is not supported on this system.' } });
  });

  it('logs to a file through electron-log, redacted; renderer errors land there; the panel reads the tail', () => {
    assert.ok(facts.logFileLines > 5);
    assert.equal(facts.logHasRendererError, true);
    assert.equal(facts.logHasSecret, false);
    assert.equal(facts.logTail.ok, true);
    assert.ok(facts.logTail.value.lines.some((l: string) => l.includes('Renderer error')));
    assert.doesNotMatch(output, /sk-harness-SECRET/);
  });

  it('a session left over by a crash is hung up before the attract screen loads, and recorded as recovered', async () => {
    const { facts } = await runHarness('recovery');
    assert.equal(facts.configGet.value.mode, 'direct');
    assert.equal(facts.leftoverStatusAtLoad, 'ended');
    assert.equal(facts.leftoverSession.connInits, 0, 'no conn_init: never billed');
    assert.equal(facts.leftoverSession.billedSeconds, 0);
    assert.equal(facts.journalLeft, false);
    assert.equal(facts.ledger.length, 1);
    assert.deepEqual(
      [facts.ledger[0].kind, facts.ledger[0].live_id, facts.ledger[0].recovered, facts.ledger[0].end_reason, facts.ledger[0].billed_seconds, facts.ledger[0].credits_cost],
      ['session', facts.leftoverSession.id, true, 'app_crash', 0, 0],
    );
  });

  it('an uncaught exception in main during a call hangs up, logs and relaunches', async () => {
    const { facts } = await runHarness('fatal');
    assert.equal(facts.start.ok, true);
    assert.deepEqual(facts.fatalPhases.slice(-2), ['ending', 'ended']);
    assert.equal(facts.relaunchCalls, 1);
    assert.deepEqual(facts.relaunches, [null], 'outside an AppImage: the same executable, no options');
    assert.deepEqual(facts.exitCalls, [0]);
    assert.deepEqual(facts.powerSave, ['start:prevent-display-sleep:1', 'stop:1']);
    assert.equal(facts.logHasFatal, true);
  });
});

describe('main process wiring: the desktop companion (policy-managed), with fleet metrics', () => {
  let facts: Record<string, any>;
  before(async () => {
    ({ facts } = await runHarness('companion'));
  });

  it('the policy wins over the user file block by block; its bad block waits for staff on the Status tab, no dialog', () => {
    assert.equal(facts.configGet.value.windowMode, 'companion', 'policy window.mode over the file');
    assert.equal(facts.configGet.value.callMode, 'audio', 'policy callMode over the file');
    assert.deepEqual(facts.configGet.value.companion, { pushToTalk: true, shortcut: 'Alt+Shift+K' });
    assert.deepEqual(facts.configGet.value.video, { fit: 'cover' }, 'the 420×640 companion is portrait');
    assert.deepEqual(facts.errorBoxes, []);
    assert.equal(facts.configGet.value.attention, 1);
    assert.equal(facts.statusAttention.length, 1);
    assert.deepEqual([facts.statusAttention[0].kind, facts.statusAttention[0].code], ['policy', 'invalid_config']);
    // A bad block is refused whole (never half applied); the other blocks still apply.
    assert.match(facts.statusAttention[0].message, /^Policy block "idle" was refused whole \(at "idle\.promptSeconds": .*\); it stays locked with none of its settings applied\. The other blocks of .*policy\.json apply; ask the administrator to fix the policy file\.$/);
  });

  it('opens a compact, resizable, always-on-top window at the remembered bounds clamped onto the display', () => {
    const w = facts.windowOptions;
    assert.deepEqual([w.x, w.y, w.width, w.height], [1420, 340, 500, 700]);
    assert.deepEqual([w.alwaysOnTop, w.resizable, w.minWidth, w.minHeight, w.kiosk, w.fullscreen], [true, true, 360, 480, undefined, undefined]);
    assert.equal(facts.webPreferences.contextIsolation, true);
    assert.equal(facts.webPreferences.sandbox, true);
  });

  it('puts one tray icon with "Talk to …", "Hang up", "Settings", "Quit", following the call', () => {
    assert.equal(facts.trayCount, 1);
    assert.equal(facts.trayTooltip, 'Avatar Kiosk');
    assert.match(facts.trayImage.path, /resources[\\/]icon\.png$/);
    assert.deepEqual([facts.trayImage.size, facts.trayImage.template], [{ width: 32, height: 32 }, false], 'the app icon scaled down, not 512 px');
    assert.deepEqual(facts.menuIdle, ['Talk to Ava', 'Hang up (off)', '---', 'Settings', 'Quit']);
    assert.deepEqual(facts.menuLive, ['Talk to Ava (off)', 'Hang up', '---', 'Settings', 'Quit']);
    assert.deepEqual(facts.commandsAfterTray, [
      { type: 'command', command: 'hangup' },
      { type: 'command', command: 'open-settings' },
    ]);
  });

  it('the global shortcut shows the window and asks the renderer to toggle the call', () => {
    assert.deepEqual(facts.shortcuts, ['Alt+Shift+K']);
    assert.equal(facts.visibleAtStart, false);
    assert.deepEqual(facts.afterShortcut, { visibility: ['show'], commands: [{ type: 'command', command: 'toggle-call' }] });
  });

  it('closing hides to the tray and remembers the bounds', () => {
    assert.equal(facts.closePrevented, true);
    assert.equal(facts.visibleAfterClose, false);
    assert.deepEqual(facts.savedBounds, { bounds: { x: 100, y: 120, width: 380, height: 520 } });
  });

  it('Quit from the tray (twice) during a call: one hangup, one quit, tray and shortcut removed, metrics closed', () => {
    assert.deepEqual(facts.phasesAfterQuit, ['creating', 'connecting', 'live', 'ending', 'ended']);
    assert.equal(facts.quitCalls, 1);
    assert.equal(facts.trayDestroyed, true);
    assert.deepEqual(facts.unregistered, ['Alt+Shift+K']);
    assert.equal(facts.closePreventedWhileQuitting, false, 'while quitting the window really closes');
    assert.equal(facts.metricsClosed, true);
  });

  it('serves /metrics and /healthz while running (the policy problem counted as an error)', () => {
    assert.deepEqual(facts.metricsLive, [
      'avatar_kiosk_sessions_started_total 1',
      'avatar_kiosk_errors_total{code="invalid_config"} 1',
      'avatar_kiosk_info{version="0.0.0-test",mode="demo"} 1',
      'avatar_kiosk_session_active 1',
    ]);
    assert.deepEqual(facts.healthLive, { up: true, mode: 'demo', sessionPhase: 'live', lastErrorCode: 'invalid_config', version: '0.0.0-test' });
  });
});

describe('main process wiring: real operating systems', () => {
  it('a keyring that never answers: start-up goes on without the stored key after the time limit, and staff are told', async () => {
    const { facts } = await runHarness('keyring-hang');
    assert.deepEqual(facts.errorBoxes, []);
    assert.equal(facts.configGet.value.mode, 'demo');
    assert.equal(facts.statusKeySource, 'none');
    assert.equal(facts.configGet.value.attention, 1);
    assert.deepEqual(facts.statusAttention, [
      {
        kind: 'key',
        code: 'timeout',
        message:
          'The keyring did not answer within 5 s (locked, or waiting for a password), so the kiosk started without the stored API key, in demo mode. Unlock the keyring at login (or set AVATAR_API_KEY) and restart.',
      },
    ]);
    assert.equal(facts.logHasKeyringTimeout, true);
  });

  it('a config.json written by a newer version (a rollback): its unknown settings are reported and kept, the stored key and every known setting still apply', async () => {
    const { facts } = await runHarness('newer-config');
    assert.deepEqual(facts.errorBoxes, []);
    assert.equal(facts.statusKeySource, 'stored', 'the stored key is used, not dropped with the file');
    assert.notEqual(facts.configGet.value.mode, 'demo');
    assert.deepEqual(facts.statusAttention, [
      {
        kind: 'config',
        code: 'invalid_config',
        message: `${facts.configPath} has settings this version does not know: window.hdr, queueMusic (written by a newer version, or misspelt). They are ignored and kept in the file; every other setting applies.`,
      },
    ]);
    // Written by this version (the PIN chosen at start), and the newer version's settings are still there.
    assert.equal(facts.configFileAfter.window.hdr, true);
    assert.deepEqual(facts.configFileAfter.queueMusic, { track: 'calm.ogg' });
    assert.match(facts.configFileAfter.staffPinHash, /^scrypt\$/);
  });

  it('an installed deb with an update feed: the in-app updater stays off (no pkexec prompt) and says the OS package manager updates it', async () => {
    const { facts } = await runHarness('deb-update');
    assert.deepEqual(facts.errorBoxes, []);
    assert.equal(facts.updateLines.length, 2, facts.updateLines.join('\n'));
    assert.match(facts.updateLines[0], /^Updates: the in-app updater is off .*installed as a deb package: updated by the system's package manager/);
    assert.match(facts.updateLines[1], /^Updates: off .*installed as a deb package/);
  });

  it('inside an AppImage, the staff Restart and a fatal error relaunch the AppImage itself with this run\'s arguments', async () => {
    const { facts } = await runHarness('appimage');
    assert.deepEqual(facts.restart, { ok: true });
    const expected = { execPath: '/home/kiosk/Applications/Avatar-Kiosk.AppImage', args: facts.argv };
    assert.deepEqual(facts.relaunches, [expected, expected]);
  });

  it('a renderer that crashes during the first two loads: the load is retried, no exit, and later crashes reload as before', async () => {
    const { facts } = await runHarness('first-load-crash');
    assert.deepEqual(facts.errorBoxes, []);
    assert.deepEqual(facts.exitCalls, []);
    assert.equal(facts.relaunchCalls, 0);
    assert.deepEqual(facts.loads, ['app://kiosk/index.html', 'app://kiosk/index.html', 'app://kiosk/index.html']);
    assert.equal(facts.logHasRetry, true);
    assert.equal(facts.configGet.ok, true);
    assert.equal(facts.loadsAfterLaterCrash, 4);
  });

  it('start-up that fails before the window exists: no dialog, logged, then a relaunch', async () => {
    const { facts } = await runHarness('no-display');
    assert.deepEqual(facts.errorBoxes, []);
    assert.equal(facts.windows, 0);
    assert.equal(facts.logHasStartupError, true);
    assert.deepEqual(facts.relaunches, [null]);
    assert.deepEqual(facts.exitCalls, [1]);
  });

  it('KIOSK_DEVTOOLS=1 from a checkout: F12 (key down only) toggles DevTools', async () => {
    const { facts } = await runHarness('devtools');
    assert.equal(facts.webPreferences.devTools, true);
    assert.deepEqual([facts.inputListeners, facts.f12Prevented, facts.devToolsToggles], [1, true, 1]);
  });

  it('KIOSK_DEVTOOLS=1 in a packaged kiosk: no DevTools, F12 does nothing', async () => {
    const { facts } = await runHarness('devtools-packaged');
    assert.equal(facts.webPreferences.devTools, false);
    assert.deepEqual([facts.inputListeners, facts.f12Prevented, facts.devToolsToggles], [0, false, 0]);
  });

  it('macOS: a template image in the menu bar, and an application menu with the Edit roles only', async () => {
    const { facts } = await runHarness('mac');
    assert.deepEqual(facts.trayImage, { path: join(ROOT, 'resources', 'trayTemplate.png'), size: null, template: true });
    assert.deepEqual(facts.menuSetTo, {
      items: [
        { label: 'Avatar Kiosk', submenu: [{ role: 'about' }] },
        { label: 'Edit', submenu: [{ role: 'undo' }, { role: 'redo' }, { type: 'separator' }, { role: 'cut' }, { role: 'copy' }, { role: 'paste' }, { role: 'selectAll' }] },
      ],
    });
    assert.deepEqual(facts.errorBoxes, []);
  });
});

describe('main process wiring: the kiosk-mode window refuses to close', () => {
  it('Alt+F4 or any window-manager close is refused while the kiosk runs; a signal lets it close', async () => {
    const { facts } = await runHarness('kiosk');
    assert.equal(facts.windowOptions.kiosk, true, 'the scenario runs the kiosk-mode window');
    assert.deepEqual(facts.closeRefused, [true, true]);
    assert.equal(facts.quitCallsAfterClose, 0, 'a refused close does not quit the app');
    assert.equal(facts.closeLogged, true, 'the refusal is logged');
    assert.equal(facts.closeRefusedWhileQuitting, false, 'after SIGTERM the window really closes');
  });

  it('an update (quitAndInstall closes the windows before before-quit) lets the window close', async () => {
    const { facts } = await runHarness('kiosk-update');
    assert.deepEqual(facts.closeRefused, [true, true]);
    assert.equal(facts.closeRefusedWhileQuitting, false);
  });
});
