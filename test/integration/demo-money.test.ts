/**
 * Demo money is kept apart from real money, along the path a new operator takes: a demo call on the
 * built-in emulator first, then the kiosk switched to "the service" (a second emulator reached as the
 * direct surface with its key, through the staff panel's Settings and key), a real call. Afterwards the
 * Status tab's "today", the Ledger tab's totals, `cli ledger` (text and --json) and the kiosk's /metrics
 * count the real call only, and say the demo call apart.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type KioskEvent, type LedgerTotals, type Result, type StaffSettings, type StaffStatus } from '../../electron/contract.ts';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { createKioskMetrics, kioskMetricsSource } from '../../electron/fleet/metrics.ts';
import type { Kiosk } from '../../electron/kiosk/compose.ts';
import { runLedgerCommand } from '../../electron/cli/ops-commands.ts';
import { join } from 'node:path';
import { waitForEvent } from '../helpers/kiosk-events.ts';
import { createStaffKiosk, TINY_PNG } from '../helpers/staff-kiosk.ts';
import { realDelay } from '../helpers/until.ts';

const cleanup: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function oneCall(kiosk: Kiosk, call: (channel: string, arg?: unknown) => Promise<Result<unknown>>): Promise<{ liveId: string }> {
  const live = waitForEvent(kiosk, (e: KioskEvent) => e.type === 'state' && e.state.phase === 'live', 15_000);
  const started = (await call(CHANNELS.sessionStart, {})) as Result<{ liveId: string }>;
  assert.ok(started.ok, JSON.stringify(started));
  await live;
  await realDelay(2_500); // live a little over one billing unit (3 credits per started 2 s)
  const ended = waitForEvent(kiosk, (e: KioskEvent) => e.type === 'state' && e.state.phase === 'ended', 15_000);
  await call(CHANNELS.sessionHangup);
  await ended;
  await realDelay(100); // the ledger's append
  return started.value;
}

describe('demo money apart from real money', () => {
  it('a demo call, then the service: Status, Ledger, cli ledger and /metrics count the real call only and name the demo one apart', async () => {
    const { kiosk, channels, dataDir } = await createStaffKiosk({
      file: { callMode: 'audio', prewarm: { mode: 'off' }, avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } },
      platform: { getOpenAtLogin: () => false, setOpenAtLogin: () => undefined, exitKiosk: () => undefined, restart: () => undefined },
    });
    cleanup.push(() => kiosk.shutdown());
    const call = (channel: string, arg?: unknown) => channels.dispatch(channel as never, arg as never) as Promise<Result<unknown>>;
    const metrics = createKioskMetrics({ version: 't' });
    const off = metrics.observe(kioskMetricsSource(kiosk));
    cleanup.push(async () => off());
    assert.equal((await call(CHANNELS.staffSetPin, { pin: '246813' })).ok, true);

    // 1. The demo, on the built-in emulator.
    assert.equal(kiosk.connection.mode, 'demo');
    const demo = await oneCall(kiosk, call);
    const demoCredits = kiosk.connection.emulator!.getSession(demo.liveId)!.creditsCost;
    assert.ok(demoCredits >= 3, `the demo call cost play money (${demoCredits})`);

    // 2. Switched to the service: its URL in Settings, then its key.
    const service: EmulatorHandle = await startEmulator({ host: '127.0.0.1', port: 0, knobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 20 } });
    cleanup.push(() => service.close());
    const current = (await call(CHANNELS.staffGetSettings)) as Result<StaffSettings>;
    assert.ok(current.ok);
    const saved = await call(CHANNELS.staffSaveSettings, { settings: { ...current.value.settings, service: { ...current.value.settings.service, baseUrl: service.baseUrl } } });
    assert.ok(saved.ok && (saved.value as { saved: boolean }).saved, JSON.stringify(saved));
    assert.equal((await call(CHANNELS.staffSetApiKey, { apiKey: service.apiKey })).ok, true);
    assert.equal(kiosk.connection.mode, 'direct');
    const real = await oneCall(kiosk, call);
    const realCredits = service.getSession(real.liveId)!.creditsCost;
    assert.ok(realCredits >= 3);

    // Status: today is the real call; the demo call is said apart.
    const status = (await call(CHANNELS.staffStatus)) as Result<StaffStatus>;
    assert.ok(status.ok);
    assert.deepEqual(status.value.today, { sessions: 1, credits: realCredits, unknownCredits: 0, demoSessions: 1 });
    // Ledger tab.
    const totals = (await call(CHANNELS.staffLedgerTotals)) as Result<LedgerTotals>;
    assert.ok(totals.ok);
    assert.deepEqual([totals.value.today.sessions, totals.value.today.credits, totals.value.today.demoSessions], [1, realCredits, 1]);
    assert.equal(totals.value.today.billedSeconds, service.getSession(real.liveId)!.billedSeconds);

    // cli ledger, as text and as JSON.
    let out = '';
    const io = { stdout: (s: string) => void (out += s), stderr: () => undefined, env: {} };
    assert.equal(await runLedgerCommand({ csv: false, json: true, file: join(dataDir, 'ledger') }, io as never), 0);
    const json = JSON.parse(out) as { today: { sessions: number; credits: number; demoSessions: number } };
    assert.deepEqual([json.today.sessions, json.today.credits, json.today.demoSessions], [1, realCredits, 1]);
    out = '';
    assert.equal(await runLedgerCommand({ csv: false, json: false, file: join(dataDir, 'ledger') }, io as never), 0);
    const todayLine = out.split('\n').find((l) => l.trimStart().startsWith('today'))!;
    assert.deepEqual(todayLine.trim().split(/\s+/), ['today', '1', String(realCredits), String(service.getSession(real.liveId)!.billedSeconds), '1']);
    assert.match(out, /Demo calls ran on the built-in emulator: nobody paid for them, so they are not in the sessions, credits or billed seconds\./);
    // The CSV labels each row by where it ran.
    out = '';
    assert.equal(await runLedgerCommand({ csv: true, json: false, file: join(dataDir, 'ledger') }, io as never), 0);
    const surfaces = out.trim().split('\r\n').slice(1).map((l) => l.split(',')[5]);
    assert.deepEqual(surfaces, ['demo', 'direct']);

    // /metrics: the credits billed are the service's.
    assert.match(await metrics.render(), new RegExp(`^avatar_kiosk_credits_total ${realCredits}$`, 'm'));
  });
});
