/**
 * Runs electron/main/index.ts under plain Node against the electron stub (see hooks.mjs) and drives it
 * like Electron would: ready, IPC invokes from the page's main frame (and a foreign one), permission
 * requests, navigation attempts, a renderer crash, SIGTERM twice. Prints one JSON line of observations
 * for test/unit/main/ipc-main-wiring.test.ts to assert on.
 *
 * Run: node --import tsx --import ./test/electron/stub/register.mjs test/electron/stub/main-harness.ts <scenario>
 * Scenarios: `full` (default), `broken-config`, `recovery` (a leftover session from a "crashed" run),
 * `fatal` (an uncaught exception in main during a call), `companion` (tray, shortcut, bounds,
 * policy, metrics), `keyring-hang` (the stored key's decrypt never answers), `appimage` (staff restart
 * and a fatal error inside an AppImage), `first-load-crash` (the renderer crashes during the first two
 * loads), `no-display` (start-up fails before the window exists), `devtools` and `devtools-packaged`
 * (F12 with KIOSK_DEVTOOLS=1, from a checkout and installed), `mac` (the companion on macOS: tray
 * template image, application menu), `deb-update` (an installed deb with an update feed), `newer-config` (config.json written by a newer version, then a rollback).
 */
import { chmodSync, writeSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHANNELS, EVENT_CHANNEL, type KioskEvent } from '../../../electron/contract.ts';
import { app, autoUpdater, ipcMain, record, type BrowserWindow } from './electron.ts';
import { stubRendererRtc } from './renderer-rtc.ts';
import { ServiceClient } from '../../../electron/core/rest-client.ts';
import { hashPin } from '../../../electron/operations/staff-pin.ts';
import { startEmulator, type EmulatorHandle } from '../../../electron/emulator/index.ts';
import { createServer, type AddressInfo } from 'node:net';

const scenario = process.argv[2] ?? 'full';
const userData = mkdtempSync(join(tmpdir(), 'kiosk-stub-'));
process.env.STUB_USER_DATA = userData;
process.env.STUB_APP_PATH = join(import.meta.dirname, '../../..');
delete process.env.AVATAR_API_KEY;
const configFile = join(userData, 'config.json');
writeFileSync(
  configFile,
  // `broken-config`: a file cut short (as a full disk leaves it), which no reader can use;
  // `bad-key`: one invalid value in a good file, which costs that value only.
  scenario === 'broken-config'
    ? '{"callMode": "audio", "window": {"mode": "windowed", "wid'
    : JSON.stringify({ callMode: scenario === 'bad-key' ? 'hologram' : 'audio', window: { mode: 'windowed', width: 800, height: 600 } }),
);
// `default-window`: nothing sets the window mode (run with STUB_IS_PACKAGED=1 for an installed app).
if (scenario === 'default-window') writeFileSync(configFile, JSON.stringify({ callMode: 'audio' }));
if (scenario === 'kiosk' || scenario === 'kiosk-update') writeFileSync(configFile, JSON.stringify({ callMode: 'audio', window: { mode: 'kiosk' } }));
// As an older version left them: readable by every local user.
chmodSync(configFile, 0o644);
chmodSync(userData, 0o755);
// No system policy leaks in; the companion scenario brings its own policy, bounds and metrics port.
process.env.AVATAR_KIOSK_POLICY = join(userData, 'policy.json');
// What the operating system would set, per scenario (read by main, or by the stub, when used).
if (scenario === 'keyring-hang') {
  process.env.STUB_KEYRING = 'hang';
  const cipher = Buffer.from(`enc:${Buffer.from('sk-stored-key-0123456789').toString('hex')}`).toString('base64'); // the stub's safeStorage
  writeFileSync(configFile, JSON.stringify({ callMode: 'audio', service: { baseUrl: 'https://avatar.example.com' }, encryptedApiKey: cipher, window: { mode: 'windowed', width: 800, height: 600 } }));
}
if (scenario === 'supervised') process.env.AVATAR_KIOSK_SUPERVISED = '1';
else delete process.env.AVATAR_KIOSK_SUPERVISED;
if (scenario === 'no-sandbox') {
  // An AppImage whose launcher (AppRun) added --no-sandbox: user namespaces are refused on this system.
  process.env.APPIMAGE = '/home/kiosk/Applications/Avatar-Kiosk.AppImage';
  process.argv.push('--no-sandbox');
}
// `no-sandbox` and `fleet-reload`: a fleet broker the test started (HARNESS_MQTT: the mqtt settings).
if (scenario === 'no-sandbox' || scenario === 'fleet-reload') {
  writeFileSync(configFile, JSON.stringify({ callMode: 'audio', window: { mode: 'windowed', width: 800, height: 600 }, mqtt: JSON.parse(process.env.HARNESS_MQTT ?? '{}') }));
}
if (scenario === 'newer-config') {
  // What a newer version left behind before a rollback: settings this version does not know, beside the
  // stored key and the service this kiosk uses.
  const cipher = Buffer.from(`enc:${Buffer.from('sk-stored-key-0123456789').toString('hex')}`).toString('base64'); // the stub's safeStorage
  writeFileSync(
    configFile,
    JSON.stringify({ callMode: 'audio', service: { baseUrl: 'https://avatar.example.com' }, encryptedApiKey: cipher, window: { mode: 'windowed', width: 800, height: 600, hdr: true }, queueMusic: { track: 'calm.ogg' } }),
  );
}
if (scenario === 'deb-update') {
  // An installed deb: electron-builder wrote package-type beside app.asar; the policy names a signed feed.
  process.env.STUB_IS_PACKAGED = '1';
  const resources = join(userData, 'resources');
  mkdirSync(resources);
  writeFileSync(join(resources, 'package-type'), 'deb');
  Object.defineProperty(process, 'resourcesPath', { value: resources, configurable: true });
  writeFileSync(
    configFile,
    JSON.stringify({ callMode: 'audio', window: { mode: 'windowed', width: 800, height: 600 }, update: { url: 'https://updates.example.com/kiosk', publicKeys: ['MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE='] } }),
  );
}
if (scenario === 'appimage') process.env.APPIMAGE = '/home/kiosk/Applications/Avatar-Kiosk.AppImage';
if (scenario === 'first-load-crash') process.env.STUB_CRASH_FIRST_LOADS = '2';
if (scenario === 'no-display') process.env.STUB_NO_DISPLAY = '1';
if (scenario === 'devtools' || scenario === 'devtools-packaged') process.env.KIOSK_DEVTOOLS = '1';
else delete process.env.KIOSK_DEVTOOLS;
if (scenario === 'devtools-packaged') process.env.STUB_IS_PACKAGED = '1';
if (scenario === 'mac') {
  Object.defineProperty(process, 'platform', { value: 'darwin' });
  writeFileSync(configFile, JSON.stringify({ callMode: 'audio', window: { mode: 'companion' } }));
}
let metricsPort = 0;
if (scenario === 'companion') {
  metricsPort = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  writeFileSync(
    configFile,
    JSON.stringify({ callMode: 'video', window: { mode: 'windowed' }, companion: { shortcut: 'Alt+Shift+K' }, metrics: { enabled: true, port: metricsPort } }),
  );
  // The administrator manages the window mode, the call mode and push-to-talk; one setting is bad.
  writeFileSync(join(userData, 'policy.json'), JSON.stringify({ window: { mode: 'companion' }, callMode: 'audio', companion: { pushToTalk: true }, idle: { promptSeconds: 1 } }));
  // Remembered from last time, partly off the 1920×1040 work area: clamped back onto it.
  writeFileSync(join(userData, 'companion-window.json'), JSON.stringify({ bounds: { x: 1800, y: 900, width: 500, height: 700 } }));
}

// `proxy`: the venue's network, set up by the test (test/integration/proxy.test.ts): the config (a
// service and a broker only reachable through the proxy), the key (stored as an installed kiosk has it)
// and Chromium's proxy answer.
if (scenario === 'proxy') {
  const config = JSON.parse(process.env.HARNESS_CONFIG ?? '{}') as Record<string, unknown>;
  const cipher = Buffer.from(`enc:${Buffer.from(process.env.HARNESS_API_KEY ?? '').toString('hex')}`).toString('base64'); // the stub's safeStorage
  writeFileSync(configFile, JSON.stringify({ ...config, encryptedApiKey: cipher }));
}

const facts: Record<string, unknown> = { scenario };

// A leftover session from a run that "crashed".
let leftoverEmulator: EmulatorHandle | null = null;
let leftoverId = '';
if (scenario !== 'full' && scenario !== 'broken-config') {
  // An installed kiosk: it has a staff PIN (without one it serves no visitor until setup).
  const file = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
  writeFileSync(configFile, JSON.stringify({ ...file, staffPinHash: await hashPin('246813') }));
}
if (scenario === 'recovery') {
  leftoverEmulator = await startEmulator({ host: '127.0.0.1', port: 0, knobs: { endingMs: 20 } });
  const client = new ServiceClient({ target: { surface: 'direct', baseUrl: leftoverEmulator.baseUrl, apiKey: leftoverEmulator.apiKey } });
  const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  leftoverId = (await client.createSession({ call_mode: 'audio', avatar: { persona: 'P', image_uri: TINY_PNG } })).live.id;
  const cipher = Buffer.from(`enc:${Buffer.from(leftoverEmulator.apiKey).toString('hex')}`).toString('base64'); // the stub's safeStorage
  writeFileSync(configFile, JSON.stringify({ callMode: 'audio', service: { baseUrl: leftoverEmulator.baseUrl }, encryptedApiKey: cipher, window: { mode: 'windowed', width: 800, height: 600 } }));
  writeFileSync(
    join(userData, 'current-session.json'),
    JSON.stringify({ v: 1, liveId: leftoverId, surface: 'direct', serviceUrl: leftoverEmulator.baseUrl, callMode: 'audio', startAtMs: Date.now() - 5_000, liveAtMs: null }),
  );
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, pred: () => boolean, timeoutMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

// As Electron loads an app (lib/browser/init.ts): a module that fails to load becomes an uncaughtException.
await import('../../../electron/main/entry.ts').catch((error: unknown) => process.emit('uncaughtException', error as Error));
facts.orderBeforeReady = [...record.order];
facts.switchesBeforeReady = [...record.switches];
app.emitReady();
if (scenario === 'no-display' || scenario === 'broken-module') {
  // Start-up fails before any window (broken-module: before main's code even runs): no dialog, a log line, then a relaunch after a pause.
  // Reported either way: without a relaunch the test shows what happened instead (an error box?).
  await until('the relaunch', () => record.relaunchCalls >= 1 && record.exitCalls.length >= 1, 20_000).catch(() => (facts.noRelaunch = true));
  facts.errorBoxes = record.errorBoxes;
  facts.windows = record.windows.length;
  facts.relaunches = record.relaunches;
  facts.exitCalls = record.exitCalls;
  const log = existsSync(join(userData, 'logs', 'main.log')) ? readFileSync(join(userData, 'logs', 'main.log'), 'utf8') : '';
  facts.logHasStartupError = log.includes('Fatal start-up error; relaunching the kiosk');
  facts.logText = log.slice(-4000);
  process.stdout.write(`HARNESS ${JSON.stringify(facts)}\n`, () => process.exit(0));
  await new Promise(() => {}); // the write's callback exits
}
// The first load waits for the keyring's time limit in `keyring-hang` and for retries in `first-load-crash`.
await until('the window to load', () => (record.windows[0]?.loads.length ?? 0) >= (scenario === 'first-load-crash' ? 3 : 1), 20_000);
const win = record.windows[0] as BrowserWindow;
const wc = win.webContents;
// The fleet's reload (sent by the test) fails once: the page must come back anyway.
if (scenario === 'fleet-reload') win.failNextLoads = 1;
const events = () => wc.sent.filter((s) => s.channel === EVENT_CHANNEL).map((s) => s.payload as KioskEvent);
const invoke = async (channel: string, arg?: unknown, frame: unknown = wc.mainFrame) => {
  const h = ipcMain.handlers.get(channel);
  if (!h) return { noHandler: true };
  return arg === undefined ? h({ senderFrame: frame }) : h({ senderFrame: frame }, arg);
};

// The renderer's part of a call: it reports its RTC side ready once it has the credentials.
stubRendererRtc(events, invoke);

facts.errorBoxes = record.errorBoxes;
facts.windowOptions = { ...win.options, webPreferences: undefined };
facts.webPreferences = win.options.webPreferences;
facts.menuSetTo = record.menuSetTo;
facts.loadUrl = win.loads[0];
facts.schemes = record.schemes;
facts.channels = [...ipcMain.handlers.keys()].sort();
facts.configGet = await invoke(CHANNELS.configGet);
facts.configPath = configFile;
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
facts.modesAtStart = { config: modeOf(configFile), userData: modeOf(userData) };

if (scenario === 'full') {
  facts.foreignFrame = await invoke(CHANNELS.configGet, undefined, { url: 'https://evil.example.com/' });
  facts.subframe = await invoke(CHANNELS.configGet, undefined, { url: 'app://kiosk/index.html' });
  facts.unknownChannel = await invoke('kiosk:debug:eval', 'x');

  // permissions
  const perm = (permission: string, details: Record<string, unknown>) =>
    new Promise<boolean>((resolve) => record.permissionRequest!(wc, permission, resolve, details));
  facts.permMedia = await perm('media', { requestingUrl: 'app://kiosk/index.html', mediaTypes: ['audio', 'video'] });
  facts.permGeo = await perm('geolocation', { requestingUrl: 'app://kiosk/index.html' });
  facts.permForeignMedia = await perm('media', { requestingUrl: 'https://evil.example.com/', mediaTypes: ['audio'] });
  facts.permCheckMedia = record.permissionCheck!(wc, 'media', 'app://kiosk', { mediaType: 'audio' });

  // headers and the app:// protocol
  facts.headers = await new Promise((resolve) => record.headersHandler!({ responseHeaders: { 'content-security-policy': ["default-src *"] } }, (r) => resolve(r.responseHeaders)));
  const serve = record.protocolHandlers.get('app')!;
  const traversal = await serve(new Request('app://kiosk/..%2F..%2Fpackage.json'));
  facts.traversalStatus = traversal.status;
  facts.traversalCsp = traversal.headers.get('content-security-policy');

  // navigation guards
  let navPrevented = false;
  wc.emit('will-navigate', { preventDefault: () => (navPrevented = true) }, 'https://evil.example.com/');
  facts.navigationPrevented = navPrevented;
  let webviewPrevented = false;
  wc.emit('will-attach-webview', { preventDefault: () => (webviewPrevented = true) });
  facts.webviewPrevented = webviewPrevented;
  facts.windowOpen = wc.windowOpenHandler?.({ url: 'https://evil.example.com/' });

  // the staff panel: locked until a PIN is chosen
  facts.pinState = await invoke(CHANNELS.staffPinState);
  facts.statusLocked = await invoke(CHANNELS.staffStatus);
  facts.setPin = await invoke(CHANNELS.staffSetPin, { pin: '246813' });

  // the API key: stored encrypted, never echoed
  const KEY = 'sk-harness-SECRET-123456789';
  // (through the staff panel: the PIN was chosen above, which unlocked it)
  const setKey = (await invoke(CHANNELS.staffSetApiKey, { apiKey: KEY })) as { ok: boolean };
  facts.setKey = setKey.ok ? await invoke(CHANNELS.configGet) : setKey;
  const stored = readFileSync(configFile, 'utf8');
  facts.configModeAfterWrite = modeOf(configFile);
  facts.storedHasCiphertext = /"encryptedApiKey"/.test(stored);
  facts.storedHasPlaintext = stored.includes(KEY);
  const clearKey = (await invoke(CHANNELS.staffSetApiKey, { apiKey: null })) as { ok: boolean };
  facts.clearKey = clearKey.ok ? await invoke(CHANNELS.configGet) : clearKey;
  facts.storedAfterClear = JSON.parse(readFileSync(configFile, 'utf8'));
  // A renderer error that quotes the key (known since it was set) is logged redacted.
  facts.openAtLogin = await invoke(CHANNELS.staffSetOpenAtLogin, { enabled: true });
  facts.reportError = await invoke(CHANNELS.appReportError, { message: 'ReferenceError: sk-harness-SECRET-123456789 is not defined', source: 'window.onerror' });
  facts.logTail = await invoke(CHANNELS.staffLogTail);

  // a session, then the renderer crashes
  facts.start1 = await invoke(CHANNELS.sessionStart, { callMode: 'audio' });
  await until('live', () => events().some((e) => e.type === 'state' && e.state.phase === 'live'));
  facts.powerSaveWhileLive = [...record.powerSave];
  wc.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 });
  await until('the reload', () => win.loads.length >= 2);
  await until('idle', () => events().at(-1)?.type === 'state' && (events().at(-1) as { state: { phase: string } }).state.phase === 'idle');
  facts.loadsAfterCrash = win.loads;

  // a second session, then SIGTERM twice
  const before = events().length;
  facts.start2 = await invoke(CHANNELS.sessionStart, {});
  await until('live again', () => events().slice(before).some((e) => e.type === 'state' && e.state.phase === 'live'));
  process.emit('SIGTERM', 'SIGTERM');
  process.emit('SIGTERM', 'SIGTERM');
  await until('the quit to be let through', () => record.order.includes('quit-allowed'), 15_000);
  const second = events().slice(before);
  facts.secondSessionPhases = second.filter((e) => e.type === 'state').map((e) => (e as { state: { phase: string } }).state.phase);
  facts.quitCalls = record.quitCalls;
  process.emit('SIGTERM', 'SIGTERM');
  await sleep(50);
  facts.quitCallsAfterThirdSignal = record.quitCalls;
}

function reportJson(): string {
  return JSON.stringify(facts, (key, value) => (key === 'imageDataUrl' && typeof value === 'string' ? `${value.slice(0, 22)}…(${value.length})` : value));
}

/** From now on the harness ends when the app would (the stub's `onExit`), reporting the exit code. */
function endWithTheApp(): void {
  record.onExit = (code) => {
    facts.exitCode = code;
    facts.relaunches = record.relaunches;
    facts.order = record.order;
    // Synchronously: nothing main still has in flight may run after this point.
    const bytes = Buffer.from(`HARNESS ${reportJson()}\n`);
    for (let at = 0; at < bytes.length; ) {
      try {
        at += writeSync(1, bytes, at);
      } catch (error) {
        if ((error as { code?: string }).code !== 'EAGAIN') throw error;
      }
    }
    process.exit(0);
  };
}
const readLog = () => (existsSync(join(userData, 'logs', 'main.log')) ? readFileSync(join(userData, 'logs', 'main.log'), 'utf8') : '');
if (scenario === 'full') {
  // Downloads: the page's own blob (the ledger CSV) is saved into Downloads without a dialog; others are refused.
  const willDownload = record.sessionListeners.get('will-download')!;
  const saved: string[] = [];
  let prevented = 0;
  const item = (url: string, name: string) => ({ getURL: () => url, getFilename: () => name, setSavePath: (p: string) => void saved.push(p) });
  willDownload({ preventDefault: () => void prevented++ }, item('blob:app://kiosk/5f1c2e8a', 'ledger-2026-11.csv'));
  willDownload({ preventDefault: () => void prevented++ }, item('https://evil.example.com/setup.exe', 'setup.exe'));
  facts.downloads = { saved: saved.map((p) => p.slice(app.getPath('downloads').length + 1)), prevented };
  facts.unresponsiveListeners = [wc.listenerCount('unresponsive'), wc.listenerCount('responsive')];
  facts.powerSave = [...record.powerSave];
  const log = readLog();
  facts.logFileLines = log.split('\n').filter(Boolean).length;
  facts.logHasRendererError = log.includes('Renderer error');
  facts.logHasSecret = log.includes('sk-harness-SECRET');
}
if (scenario === 'recovery') {
  facts.leftoverStatusAtLoad = leftoverEmulator!.getSession(leftoverId)?.status;
  facts.leftoverSession = leftoverEmulator!.getSession(leftoverId);
  facts.journalLeft = existsSync(join(userData, 'current-session.json'));
  const ledgerDir = join(userData, 'ledger');
  facts.ledger = existsSync(ledgerDir)
    ? (await import('node:fs')).readdirSync(ledgerDir).flatMap((f) => readFileSync(join(ledgerDir, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l)))
    : [];
  await leftoverEmulator!.close();
}
if (scenario === 'fatal') {
  facts.start = await invoke(CHANNELS.sessionStart, { callMode: 'audio' });
  await until('live', () => events().some((e) => e.type === 'state' && e.state.phase === 'live'));
  (process.emit as (event: string, ...args: unknown[]) => boolean)('uncaughtException', new Error('boom in main'), 'uncaughtException');
  await until('the relaunch', () => record.relaunchCalls >= 1 && record.exitCalls.length >= 1, 15_000);
  facts.fatalPhases = events().filter((e) => e.type === 'state').map((e) => (e as { state: { phase: string } }).state.phase);
  facts.relaunchCalls = record.relaunchCalls;
  facts.relaunches = record.relaunches;
  facts.exitCalls = record.exitCalls;
  facts.powerSave = [...record.powerSave];
  facts.logHasFatal = readLog().includes('Fatal error in main: hanging up and relaunching the kiosk');
}
if (scenario === 'no-sandbox') await until('the fleet link', () => readLog().includes('Fleet link: connected'), 15_000);
if (scenario === 'broken-config' || scenario === 'companion' || scenario === 'keyring-hang' || scenario === 'no-sandbox' || scenario === 'newer-config' || scenario === 'bad-key') {
  // What staff see: the PIN pad (before unlocking), then the Status tab (an installed kiosk has its PIN; a
  // broken config.json cannot store one, which the answer says). The PIN was set above, which wrote config.json.
  facts.pinState = await invoke(CHANNELS.staffPinState);
  facts.setPinAnswer = await invoke(scenario === 'broken-config' ? CHANNELS.staffSetPin : CHANNELS.staffUnlock, { pin: '246813' });
  const fileAfter = readFileSync(configFile, 'utf8');
  facts.configFileAfter = scenario === 'broken-config' ? fileAfter : JSON.parse(fileAfter);
  const status = (await invoke(CHANNELS.staffStatus)) as { ok: boolean; value?: { attention: unknown; mode: string; apiKeySource: string } };
  facts.statusAttention = status.value?.attention ?? null;
  facts.statusMode = status.value?.mode ?? null;
  facts.statusKeySource = status.value?.apiKeySource ?? null;
  facts.logHasKeyringTimeout = readLog().includes('The keyring did not answer within 5 s');
  facts.logHasNoSandbox = readLog().includes('Running without the Chromium sandbox');
}
if (scenario === 'deb-update') {
  await until('the updates feature to start', () => readLog().includes('Updates: off'), 15_000);
  const log = readLog();
  facts.updateLines = log.split('\n').filter((l) => l.includes('Updates:')).map((l) => l.replace(/^.*?Updates:/, 'Updates:'));
}
if (scenario === 'appimage') {
  // Staff press Restart, then (while it quits) main throws: both relaunch the AppImage itself.
  await invoke(CHANNELS.staffUnlock, { pin: '246813' });
  facts.restart = await invoke(CHANNELS.staffRestart);
  await until('the quit', () => record.order.includes('quit-allowed'), 15_000);
  (process.emit as (event: string, ...args: unknown[]) => boolean)('uncaughtException', new Error('boom in main'), 'uncaughtException');
  await until('the second relaunch', () => record.relaunches.length >= 2, 15_000);
  facts.relaunches = record.relaunches;
  facts.argv = process.argv.slice(1);
}
if (scenario === 'first-load-crash') {
  await until('the kiosk to be ready', () => readLog().includes('Kiosk ready'), 15_000);
  facts.loads = [...win.loads];
  facts.exitCalls = record.exitCalls;
  facts.relaunchCalls = record.relaunchCalls;
  facts.logHasRetry = readLog().includes('The kiosk page failed to load; trying again');
  // After the first load a crash is the lifecycle's again: one reload.
  wc.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 });
  await until('the reload', () => win.loads.length >= 4);
  facts.loadsAfterLaterCrash = win.loads.length;
}
if (scenario === 'devtools' || scenario === 'devtools-packaged' || scenario === 'full') {
  facts.inputListeners = wc.listenerCount('before-input-event');
  facts.f12Prevented = wc.pressKey({ type: 'keyDown', key: 'F12' });
  wc.pressKey({ type: 'keyUp', key: 'F12' });
  wc.pressKey({ type: 'keyDown', key: 'F11' });
  facts.devToolsToggles = record.devToolsToggles;
}
if (scenario === 'mac') {
  const tray = record.trays[0]!;
  facts.trayImage = tray.image;
}
if (scenario === 'companion') {
  const tray = record.trays[0]!;
  const commands = () => events().filter((e) => e.type === 'command');
  const httpGet = async (path: string) => (await fetch(`http://127.0.0.1:${metricsPort}${path}`)).text();
  facts.trayCount = record.trays.length;
  facts.trayTooltip = tray.tooltip;
  facts.trayImage = tray.image;
  facts.menuIdle = tray.labels();
  facts.shortcuts = [...record.shortcuts.keys()];
  facts.visibleAtStart = win.visible;

  record.shortcuts.get('Alt+Shift+K')!();
  facts.afterShortcut = { visibility: [...win.visibility], commands: commands() };

  // the renderer answers the command by starting the call (it owns the media)
  facts.start = await invoke(CHANNELS.sessionStart, {});
  await until('live', () => events().some((e) => e.type === 'state' && e.state.phase === 'live'));
  facts.menuLive = tray.labels();
  facts.metricsLive = (await httpGet('/metrics')).split('\n').filter((l) => /^avatar_kiosk_(sessions_started_total|session_active|info|errors_total)/.test(l));
  facts.healthLive = JSON.parse(await httpGet('/healthz'));
  tray.clickItem('Hang up');
  tray.clickItem('Settings');
  facts.commandsAfterTray = commands().slice(1);

  win.userSetBounds({ x: 100, y: 120, width: 380, height: 520 });
  facts.closePrevented = win.userClose();
  facts.visibleAfterClose = win.visible;
  facts.savedBounds = JSON.parse(readFileSync(join(userData, 'companion-window.json'), 'utf8'));

  // Quit from the tray during the call: one hangup through the lifecycle, then the quit goes through.
  tray.clickItem('Quit');
  tray.clickItem('Quit');
  await until('the quit to be let through', () => record.order.includes('quit-allowed'), 15_000);
  facts.phasesAfterQuit = events().filter((e) => e.type === 'state').map((e) => (e as { state: { phase: string } }).state.phase);
  facts.quitCalls = record.quitCalls;
  facts.trayDestroyed = tray.destroyed;
  facts.unregistered = record.unregistered;
  facts.closePreventedWhileQuitting = win.userClose();
  await sleep(50);
  facts.metricsClosed = await fetch(`http://127.0.0.1:${metricsPort}/healthz`).then(() => false, () => true);
}

if (scenario === 'proxy') {
  // A call (REST create, the control socket, the renderer's RTC side stubbed), then a hangup (type 5).
  facts.start = await invoke(CHANNELS.sessionStart, { callMode: 'audio' });
  await until('live', () => events().some((e) => e.type === 'state' && e.state.phase === 'live'), 15_000);
  facts.hangup = await invoke(CHANNELS.sessionHangup);
  await until('the end', () => events().some((e) => e.type === 'state' && (e.state.phase === 'ended' || e.state.phase === 'failed')), 15_000);
  facts.phases = events().filter((e) => e.type === 'state').map((e) => (e as { state: { phase: string } }).state.phase);
  // The fleet link says online (the test's subscriber sees it on the broker), then the app quits: the
  // process really ends where Electron's would, so only what main finished before that reaches the broker.
  await until('the fleet link', () => readLog().includes('Fleet link: connected'), 15_000);
  facts.proxyQueries = record.proxyQueries;
  endWithTheApp();
  process.emit('SIGTERM', 'SIGTERM');
  await new Promise(() => {});
}
if (scenario === 'supervised') {
  // Under the shipped systemd unit / launchd agent: staff press Restart.
  await invoke(CHANNELS.staffUnlock, { pin: '246813' });
  endWithTheApp();
  facts.restart = await invoke(CHANNELS.staffRestart);
  await new Promise(() => {});
}

if (scenario === 'fleet-reload') {
  await until('the page back after the failed reload', () => win.loads.length >= 3, 20_000).catch(() => (facts.timedOut = true));
  facts.loads = win.loads.length;
  facts.failedLoads = win.failedLoads;
  facts.logHasRecovery = readLog().includes('Reloading the kiosk page');
}
if (scenario === 'renderer-recovery') {
  const phases = () => events().filter((e) => e.type === 'state').map((e) => (e as { state: { phase: string } }).state.phase);
  // A GPU process that exits cleanly needs nothing; one that crashes during a call: hang up, reload.
  app.emit('child-process-gone', {}, { type: 'GPU', reason: 'clean-exit', exitCode: 0 });
  app.emit('child-process-gone', {}, { type: 'Utility', reason: 'crashed', exitCode: 1 });
  await sleep(50);
  facts.loadsAfterCleanGpuExit = win.loads.length;
  facts.start = await invoke(CHANNELS.sessionStart, { callMode: 'audio' });
  await until('live', () => phases().includes('live'));
  app.emit('child-process-gone', {}, { type: 'GPU', reason: 'crashed', exitCode: 139 });
  await until('the reload after the GPU crash', () => win.loads.length >= 2);
  await until('idle', () => phases().at(-1) === 'idle');
  facts.phasesAfterGpuCrash = phases();
  // The renderer crashes and the reload fails: the window is not left blank, the reload is tried again.
  win.failNextLoads = 1;
  wc.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 });
  await until('the second reload', () => win.loads.length >= 4, 15_000);
  facts.loads = win.loads.length;
  facts.failedLoads = win.failedLoads;
  facts.logHasRetry = readLog().includes('The kiosk page did not reload');
  facts.logHasGpu = readLog().includes('The GPU process is gone');
  facts.relaunchCalls = record.relaunchCalls;
}

if (scenario === 'kiosk') {
  // The attract screen on a kiosk: the display is kept awake from the moment the window shows, not only
  // during calls; minimised (which a kiosk never is, but an administrator might) it may sleep.
  facts.powerSaveBeforeShow = [...record.powerSave];
  win.readyToShow();
  facts.powerSaveShown = [...record.powerSave];
  win.emit('minimize');
  win.emit('restore');
  facts.powerSaveMinimizedRestored = [...record.powerSave];
}
if (scenario === 'kiosk' || scenario === 'kiosk-update') {
  // Alt+F4 / the window manager's close, twice, while the kiosk runs: refused, nothing quits.
  facts.closeRefused = [win.userClose(), win.userClose()];
  await sleep(50);
  facts.quitCallsAfterClose = record.quitCalls;
  facts.closeLogged = readLog().includes('A window close was refused');
  if (scenario === 'kiosk') process.emit('SIGTERM', 'SIGTERM');
  else autoUpdater.emit('before-quit-for-update');
  // While the app quits (a signal, an update), the window really closes.
  facts.closeRefusedWhileQuitting = win.userClose();
  await until('the quit to be let through', () => record.order.includes('quit-allowed'), 15_000);
}

// Keep the report small (the avatar image is a large data URL) and flush it before exiting: stdout to a
// pipe is asynchronous, and process.exit() would cut it short.
process.stdout.write(`HARNESS ${reportJson()}\n`, () => process.exit(0));
