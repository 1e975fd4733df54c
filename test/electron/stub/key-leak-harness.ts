/**
 * The key-leak check's driver, run by test/integration/key-leak.test.ts. It runs the real
 * electron/main/index.ts under plain Node against the electron stub (see hooks.mjs), with a temp user-data
 * folder and the direct surface pointed at an emulator on 127.0.0.1, and puts a known API key through
 * sessions and failures: a bad key (401 on create), forced hangups (credit_insufficient, audit_violation),
 * a dropped socket and its reconnect, NOT_READY, LIVE_CONN_INIT_FAILED, a low balance, a media error,
 * rejected IPC arguments, the service URL moved to another origin (a server that records what it gets),
 * then SIGTERM.
 *
 * Main's log lines go to stderr (debug level). Everything sent to the renderer (every IPC answer and every
 * `webContents.send` payload) is printed on stdout as one `LEAKCHECK <json>` line. The test scans both, and
 * every file under the user-data folder.
 *
 * Run: node --import tsx --import ./test/electron/stub/register.mjs test/electron/stub/key-leak-harness.ts <scenario>
 * Env: LEAK_KEY (the known key), LEAK_USER_DATA (the temp user-data folder). Scenarios: `stored` (the key is
 * set over IPC and kept by safeStorage), `env` (AVATAR_API_KEY).
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { CHANNELS, type KioskEvent } from '../../../electron/contract.ts';
import { DEMO_API_KEY, startEmulator } from '../../../electron/emulator/index.ts';
import { hashPin } from '../../../electron/operations/staff-pin.ts';
import { app, ipcMain, record, type BrowserWindow } from './electron.ts';
import { stubRendererRtc } from './renderer-rtc.ts';

const scenario = process.argv[2] ?? 'stored';
const KEY = process.env.LEAK_KEY ?? '';
const userData = process.env.LEAK_USER_DATA ?? '';
if (KEY.length < 16 || !userData) throw new Error('LEAK_KEY (≥ 16 characters) and LEAK_USER_DATA are required');
delete process.env.LEAK_KEY; // nothing below may find it lying around
process.env.STUB_USER_DATA = userData;
process.env.STUB_APP_PATH = join(import.meta.dirname, '../../..');
process.env.KIOSK_LOG_LEVEL = 'debug';
if (scenario === 'env') process.env.AVATAR_API_KEY = KEY;
else delete process.env.AVATAR_API_KEY;

// The service: an emulator that does not know the key yet (the first session is refused with 401).
const emu = await startEmulator({ port: 0, knobs: { warmupMs: { audio: 0, video: 1_200 }, endingMs: 50 } });
const STAFF_PIN = '246813';
writeFileSync(
  join(userData, 'config.json'),
  JSON.stringify({
    callMode: 'audio',
    allowModeChoice: true,
    service: { surface: 'direct', baseUrl: emu.baseUrl },
    window: { mode: 'windowed', width: 800, height: 600 },
    // `stored` chooses its PIN on the first-run setup; `env` is an installed kiosk with one.
    ...(scenario === 'env' ? { staffPinHash: await hashPin(STAFF_PIN) } : {}),
  }),
);
// Another origin, which records every request it receives: the key must never reach it.
const thiefSaw: string[] = [];
const thief = createServer((req, res) => {
  thiefSaw.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
  req.resume();
  res.writeHead(500).end();
});
await new Promise<void>((ok) => thief.listen(0, '127.0.0.1', ok));
const thiefUrl = `http://127.0.0.1:${(thief.address() as { port: number }).port}`;

const toRenderer: unknown[] = [];
const steps: string[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, pred: () => boolean, timeoutMs = 15_000): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

await import('../../../electron/main/index.ts');
app.emitReady();
await until('the window to load', () => (record.windows[0]?.loads.length ?? 0) >= 1);
const win = record.windows[0] as BrowserWindow;
const wc = win.webContents;
const events = () => wc.sent.filter((s) => s.channel === 'kiosk:event').map((s) => s.payload as KioskEvent);
const phaseEvents = () => events().filter((e): e is Extract<KioskEvent, { type: 'state' }> => e.type === 'state');
/** An IPC call from the page; its answer is what the renderer receives. */
const invoke = async (channel: string, arg?: unknown) => {
  const h = ipcMain.handlers.get(channel);
  if (!h) throw new Error(`no handler for ${channel}`);
  const answer = await (arg === undefined ? h({ senderFrame: wc.mainFrame }) : h({ senderFrame: wc.mainFrame }, arg));
  toRenderer.push({ channel, answer });
  return answer as { ok: boolean; value?: any; error?: { code: string; message: string } };
};

// The renderer's part of a call: it reports its RTC side ready once it has the credentials.
stubRendererRtc(events, invoke);

/** Start a session and wait for one of `phases` after it; returns the phase reached and the live id. */
async function session(label: string, callMode: 'audio' | 'video', untilPhases: string[]): Promise<{ phase: string; liveId: string | null }> {
  const before = phaseEvents().length;
  const started = await invoke(CHANNELS.sessionStart, { callMode });
  await until(`${label}: ${untilPhases.join('/')}`, () => phaseEvents().slice(before).some((e) => untilPhases.includes(e.state.phase)));
  const reached = phaseEvents().slice(before).find((e) => untilPhases.includes(e.state.phase))!.state;
  steps.push(`${label}: start ${started.ok ? 'ok' : started.error?.code} → ${reached.phase}${reached.phase === 'failed' ? ` (${reached.error.code})` : ''}`);
  return { phase: reached.phase, liveId: 'liveId' in reached ? reached.liveId : null };
}
async function ended(label: string): Promise<string> {
  await until(`${label}: the end`, () => ['ended', 'failed', 'idle'].includes(phaseEvents().at(-1)?.state.phase ?? ''));
  const last = phaseEvents().at(-1)!.state;
  steps.push(`${label}: → ${last.phase}${last.phase === 'failed' ? ` (${last.error.code})` : ''}`);
  await sleep(30); // the service clears its session just after the last state event
  return last.phase;
}

await invoke(CHANNELS.configGet);
if (scenario === 'stored') {
  // The key is entered in the staff panel: the PIN first (chosen on first use), then the key.
  await invoke(CHANNELS.staffSetPin, { pin: STAFF_PIN });
  await invoke(CHANNELS.staffSetApiKey, { apiKey: KEY });
  // Rejected arguments carrying the key: their error messages go back to the renderer.
  await invoke(CHANNELS.staffSetApiKey, { apiKey: KEY, also: KEY });
  await invoke(CHANNELS.staffSetApiKey, { apiKey: KEY.repeat(40) });
  await invoke(CHANNELS.sessionStart, { callMode: KEY });
  await invoke(CHANNELS.sessionReportMediaError, { kind: KEY, message: KEY });
}
await invoke(CHANNELS.configGet);

// 1. A bad key on the direct surface: the service answers 401.
await session('bad key', 'audio', ['failed', 'ended']);
await ended('bad key');

// 2. The key is known from now on.
emu.addAccount({ apiKey: KEY, balance: 10_000 });
let s = await session('forced credit_insufficient', 'audio', ['live', 'failed']);
if (s.liveId) emu.forceHangup(s.liveId, 'credit_insufficient');
await ended('forced credit_insufficient');

s = await session('drop and reconnect', 'audio', ['live', 'failed']);
if (s.liveId) {
  const before = phaseEvents().length;
  emu.dropConnection(s.liveId);
  await until('reconnected', () => phaseEvents().slice(before).some((e) => e.state.phase === 'live'));
  await invoke(CHANNELS.sessionGetState);
  await invoke(CHANNELS.sessionSetMuted, { muted: true });
  await invoke(CHANNELS.sessionHangup);
}
await ended('drop and reconnect');

if (scenario === 'stored') {
  s = await session('NOT_READY then audit_violation', 'video', ['live', 'failed']);
  if (s.liveId) emu.forceHangup(s.liveId, 'audit_violation');
  await ended('NOT_READY then audit_violation');

  emu.knobs.initFailure = true;
  await session('LIVE_CONN_INIT_FAILED', 'audio', ['failed', 'ended']);
  await ended('LIVE_CONN_INIT_FAILED');
  emu.knobs.initFailure = false;

  emu.setBalance(KEY, 10);
  await session('low balance', 'audio', ['failed', 'ended']);
  await ended('low balance');
  emu.setBalance(KEY, 10_000);

  s = await session('media error', 'audio', ['live', 'failed']);
  if (s.liveId) await invoke(CHANNELS.sessionReportMediaError, { kind: 'rtc_join_failed', message: `join failed for ${KEY}` });
  await ended('media error');

  // A renderer crash while live, then the key is cleared (back to demo mode).
  s = await session('renderer crash', 'audio', ['live', 'failed']);
  wc.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 });
  await until('back to idle', () => phaseEvents().at(-1)?.state.phase === 'idle');
  await invoke(CHANNELS.staffUnlock, { pin: STAFF_PIN }); // the panel locks itself after 60 s idle
  await invoke(CHANNELS.staffSetApiKey, { apiKey: null });
  await invoke(CHANNELS.staffSetApiKey, { apiKey: KEY });
}

// Whoever has the PIN points the service URL at another origin: a stored key is dropped first, a key from
// the environment keeps the URL where it is. Then the diagnostics run against whatever is configured.
await invoke(CHANNELS.staffUnlock, { pin: STAFF_PIN });
const current = await invoke(CHANNELS.staffGetSettings);
const moved = await invoke(CHANNELS.staffSaveSettings, { settings: { ...current.value.settings, service: { surface: 'direct', baseUrl: thiefUrl } } });
await invoke(CHANNELS.staffRunDoctor);
steps.push(`moved to another origin: ${moved.value?.saved ? `saved, key ${moved.value.apiKeyCleared ? 'dropped' : 'kept'}` : 'refused'}`);
if (moved.value?.saved) {
  // Back to the service, and the key entered again.
  await invoke(CHANNELS.staffSaveSettings, { settings: { ...current.value.settings, service: { surface: 'direct', baseUrl: emu.baseUrl } } });
  await invoke(CHANNELS.staffSetApiKey, { apiKey: KEY });
}

// Quit with a live session.
s = await session('quit while live', 'audio', ['live', 'failed']);
process.emit('SIGTERM', 'SIGTERM');
await until('the quit', () => record.order.includes('quit-allowed'), 20_000);
steps.push('quit');
await emu.close();
thief.close();

const report = {
  scenario,
  steps,
  toRenderer: [...toRenderer, ...wc.sent],
  errorBoxes: record.errorBoxes,
  thiefSaw,
  demoKeyIsNotTheKey: DEMO_API_KEY !== KEY,
};
const text = JSON.stringify(report, (key, value) => (key === 'imageDataUrl' && typeof value === 'string' ? `${value.slice(0, 30)}…(${value.length})` : value));
process.stdout.write(`LEAKCHECK ${text}\n`, () => process.exit(0));
