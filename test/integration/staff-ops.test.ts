/**
 * Staff operations through the channel registry the hosts dispatch through (`dispatch`), on the kiosk's
 * services against the real emulator (demo mode, in-process), with the settings in a temp JSON file and the
 * ledger in a temp folder.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHANNELS, type KioskEvent, type PublicConfig, type Result } from '../../electron/contract.ts';
import type { Kiosk } from '../../electron/kiosk/compose.ts';
import type { SessionRecord } from '../../electron/operations/ledger.ts';
import { FleetState } from '../../electron/fleet/console/state.ts';
import { waitForEvent } from '../helpers/kiosk-events.ts';
import { createStaffKiosk, TINY_PNG } from '../helpers/staff-kiosk.ts';


const open: Kiosk[] = [];
after(async () => {
  await Promise.all(open.map((s) => s.shutdown()));
});

async function setup(file: Record<string, unknown> = {}, policy?: { policy: Record<string, unknown>; managedKeys: string[] }, storedApiKey?: string) {
  const platform = { calls: [] as string[], openAtLogin: false as boolean | null };
  const { kiosk, channels, ops, dataDir, persistence } = await createStaffKiosk({
    file: { callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' }, ...file },
    version: '9.9.9-test',
    ...(policy ? { policy } : {}),
    ...(storedApiKey ? { storedApiKey } : {}),
    logTail: () => Array.from({ length: 250 }, (_, i) => `line ${i}`),
    platform: {
      getOpenAtLogin: () => platform.openAtLogin,
      setOpenAtLogin: (v) => {
        platform.calls.push(`login:${v}`);
        platform.openAtLogin = v;
      },
      exitKiosk: () => void platform.calls.push('exit'),
      restart: () => void platform.calls.push('restart'),
    },
  });
  open.push(kiosk);
  const call = async <T>(channel: string, arg?: unknown) => (await channels.dispatch(channel, arg)) as Result<T>;
  return { kiosk, ops, dataDir, persistence, platform, call };
}

const waitFor = (kiosk: Kiosk, predicate: (e: KioskEvent) => boolean, timeoutMs = 10_000) => waitForEvent(kiosk, predicate, timeoutMs);

describe('staff operations (the kiosk\'s services + emulator)', () => {
  it('everything but the PIN pad is refused until unlocked; first use sets the PIN', async () => {
    const { call } = await setup();
    assert.deepEqual(await call(CHANNELS.staffPinState), { ok: true, value: { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null } });
    for (const ch of [CHANNELS.staffStatus, CHANNELS.staffGetSettings, CHANNELS.staffLedgerTotals, CHANNELS.staffVisitors, CHANNELS.staffLogTail, CHANNELS.staffRunDoctor, CHANNELS.staffExitKiosk]) {
      assert.deepEqual(await call(ch), { ok: false, error: { code: 'unauthorized', message: 'The staff panel is locked. Enter the PIN.' } }, ch);
    }
    assert.deepEqual(await call(CHANNELS.staffSetPin, { pin: '246813' }), { ok: true, value: { pinSet: true, unlocked: true, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null } });
    const tail = await call<{ lines: string[] }>(CHANNELS.staffLogTail);
    assert.ok(tail.ok);
    assert.equal(tail.value.lines.length, 200);
    assert.equal(tail.value.lines[199], 'line 249');
    assert.deepEqual(await call(CHANNELS.staffLock), { ok: true, value: undefined });
    assert.deepEqual(await call(CHANNELS.staffUnlock, { pin: '1111' }), { ok: false, error: { code: 'unauthorized', message: 'Wrong PIN. 4 tries left.' } });
    assert.equal(((await call(CHANNELS.staffUnlock, { pin: '246813' })) as Result<{ unlocked: boolean }>).ok, true);
  });

  it('a kiosk without a PIN serves no visitor: calls are refused until setup chose one', async () => {
    const { call, kiosk } = await setup();
    const refused = { ok: false, error: { code: 'invalid_request', message: 'This kiosk is not set up yet: an installer must choose the staff PIN first.' } };
    assert.deepEqual(await call(CHANNELS.sessionStart, {}), refused);
    assert.deepEqual(await call(CHANNELS.attractReport, { showing: true, present: true }), refused);
    assert.equal(kiosk.calls.running, false);
    assert.equal((await call(CHANNELS.staffSetPin, { pin: '246813' })).ok, true);
    const started = await call<{ liveId: string }>(CHANNELS.sessionStart, {});
    assert.equal(started.ok, true, JSON.stringify(started));
    await kiosk.calls.hangup();
  });

  it('a 4-digit PIN from an older version still opens the panel, and Status says to change it', async () => {
    const { scryptSync } = await import('node:crypto');
    const salt = Buffer.from('0123456789abcdef');
    const legacy = ['scrypt', 16384, 8, 1, salt.toString('base64'), scryptSync('4321', salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64')].join('$');
    const { call } = await setup({ staffPinHash: legacy });
    assert.equal(((await call<{ unlocked: boolean }>(CHANNELS.staffUnlock, { pin: '4321' })) as Result<{ unlocked: boolean }>).ok, true);
    const status = (await call<{ pinTooShort?: boolean }>(CHANNELS.staffStatus)) as Result<{ pinTooShort?: boolean }>;
    assert.ok(status.ok);
    assert.equal(status.value.pinTooShort, true);
  });

  it("the policy file's staffPinHash wins over config.json's, and the panel cannot change it", async () => {
    const { hashPin } = await import('../../electron/operations/staff-pin.ts');
    const policyHash = await hashPin('975312');
    const { call, persistence } = await setup({ staffPinHash: await hashPin('111111') }, { policy: { staffPinHash: policyHash }, managedKeys: ['staffPinHash'] });
    assert.equal(((await call<{ pinSet: boolean }>(CHANNELS.staffPinState)) as Result<{ pinSet: boolean }>).ok, true);
    assert.deepEqual(await call(CHANNELS.staffUnlock, { pin: '111111' }), { ok: false, error: { code: 'unauthorized', message: 'Wrong PIN. 4 tries left.' } });
    const unlocked = (await call<{ unlocked: boolean }>(CHANNELS.staffUnlock, { pin: '975312' })) as Result<{ unlocked: boolean }>;
    assert.ok(unlocked.ok && unlocked.value.unlocked);
    assert.deepEqual(await call(CHANNELS.staffSetPin, { pin: '864200' }), {
      ok: false,
      error: { code: 'forbidden', message: "The staff PIN is set by the administrator's policy file; change it there." },
    });
    assert.notEqual(persistence.read().staffPinHash, policyHash, 'config.json is left as it was');
  });

  it('the panel refuses an http:// service URL to another machine, with a message next to the field', async () => {
    const { call, persistence } = await setup();
    await call(CHANNELS.staffSetPin, { pin: '246813' });
    const got = await call<{ settings: Record<string, unknown> }>(CHANNELS.staffGetSettings);
    assert.ok(got.ok);
    const res = await call(CHANNELS.staffSaveSettings, { settings: { ...got.value.settings, service: { surface: 'direct', baseUrl: 'http://10.0.0.5:8080' } } });
    assert.deepEqual(res, {
      ok: true,
      value: {
        saved: false,
        fieldErrors: {
          'service.baseUrl':
            'Service URL: must start with https:// (got http://10.0.0.5:8080): with http:// the API key would cross the network unencrypted; http:// is only for this computer (localhost, 127.0.0.1, ::1).',
        },
      },
    });
    assert.equal((persistence.read().service as { baseUrl?: string } | undefined)?.baseUrl, undefined);
  });

  it('moving the service URL to another origin drops the stored key (it must be entered again); the same origin keeps it', async () => {
    const { startEmulator } = await import('../../electron/emulator/index.ts');
    const real = await startEmulator({ host: '127.0.0.1', port: 0 });
    // Whoever has the PIN points the kiosk at their own server: it must never receive the key.
    const seen: string[] = [];
    const { createServer } = await import('node:http');
    const thief = createServer((req, res) => (seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`), res.writeHead(500).end()));
    await new Promise<void>((ok) => thief.listen(0, '127.0.0.1', ok));
    const thiefUrl = `http://127.0.0.1:${(thief.address() as { port: number }).port}`;
    try {
      const { call, persistence, kiosk } = await setup({ service: { surface: 'direct', baseUrl: real.baseUrl } }, undefined, real.apiKey);
      assert.equal(kiosk.connection.mode, 'direct');
      await call(CHANNELS.staffSetPin, { pin: '246813' });
      const got = await call<{ settings: { service: Record<string, unknown> } & Record<string, unknown> }>(CHANNELS.staffGetSettings);
      assert.ok(got.ok);
      // Same origin, another path: the key stays.
      const samePlace = await call<{ saved: boolean; apiKeyCleared?: boolean }>(CHANNELS.staffSaveSettings, { settings: { ...got.value.settings, service: { surface: 'direct', baseUrl: `${real.baseUrl}/` } } });
      assert.deepEqual(samePlace.ok && [samePlace.value.saved, samePlace.value.apiKeyCleared], [true, undefined]);
      assert.equal(kiosk.connection.mode, 'direct');
      // Another origin: the key is dropped before the new URL is used.
      const moved = await call<{ saved: boolean; apiKeyCleared?: boolean; settings: { hasApiKey: boolean; apiKeySource: string } }>(CHANNELS.staffSaveSettings, {
        settings: { ...got.value.settings, service: { surface: 'direct', baseUrl: thiefUrl } },
      });
      assert.ok(moved.ok && moved.value.saved, JSON.stringify(moved));
      assert.equal(moved.value.apiKeyCleared, true);
      assert.deepEqual([moved.value.settings.hasApiKey, moved.value.settings.apiKeySource], [false, 'none']);
      assert.equal(persistence.read().encryptedApiKey, undefined, 'the stored ciphertext is gone');
      assert.equal((persistence.read().service as { baseUrl: string }).baseUrl, thiefUrl);
      assert.equal(kiosk.connection.mode, 'demo', 'no key: the kiosk falls back to the emulator');
      await call(CHANNELS.staffRunDoctor);
      assert.ok(!seen.some((line) => line.includes(real.apiKey)), `the new origin never saw the key: ${JSON.stringify(seen)}`);
    } finally {
      thief.close();
      await real.close();
    }
  });

  it('saving settings validates per field, persists, and the attract screen sees the change without a restart', async () => {
    const { call, persistence, kiosk } = await setup({ staffPinHash: undefined });
    await call(CHANNELS.staffSetPin, { pin: '246813' });
    const got = await call<{ settings: Record<string, unknown> }>(CHANNELS.staffGetSettings);
    assert.ok(got.ok);
    const settings = got.value.settings as never as { avatar: Record<string, unknown>; idle: Record<string, number> } & Record<string, unknown>;
    const bad = await call(CHANNELS.staffSaveSettings, { settings: { ...settings, idle: { promptSeconds: 3, hangupSeconds: 15 } } });
    assert.deepEqual(bad, { ok: true, value: { saved: false, fieldErrors: { 'idle.promptSeconds': 'Seconds of silence before "Are you still there?" must be at least 10.' } } });
    const good = await call<{ saved: boolean; restartRequired: boolean }>(CHANNELS.staffSaveSettings, {
      settings: { ...settings, avatar: { ...settings.avatar, name: 'Nova', persona: 'A cheerful guide.' }, maxCallSeconds: 120, idle: { promptSeconds: 30, hangupSeconds: 10 } },
    });
    assert.ok(good.ok && good.value.saved, JSON.stringify(good));
    assert.equal(good.value.restartRequired, false);
    const file = persistence.read();
    assert.equal((file.avatar as Record<string, unknown>).name, 'Nova');
    assert.equal(typeof file.staffPinHash, 'string', 'the PIN hash is kept');
    const pub = (await call<PublicConfig>(CHANNELS.configGet)) as Result<PublicConfig>;
    assert.ok(pub.ok);
    assert.equal(pub.value.avatar.name, 'Nova');
    assert.deepEqual(pub.value.idle, { promptSeconds: 30, hangupSeconds: 10 });
    assert.equal(pub.value.maxCallSeconds, 120);
    assert.equal(kiosk.config.avatar.persona, 'A cheerful guide.');
    // The next call uses the new settings: the live countdown ends at maxCallSeconds, not live_duration.
    const live = waitFor(kiosk, (e) => e.type === 'state' && e.state.phase === 'live');
    await call(CHANNELS.sessionStart, {});
    const e = (await live) as Extract<KioskEvent, { type: 'state' }>;
    assert.ok(e.state.phase === 'live');
    assert.equal(e.state.endsAtMs - e.state.sinceMs, 120_000);
    const ended = waitFor(kiosk, (ev) => ev.type === 'state' && ev.state.phase === 'ended');
    await call(CHANNELS.sessionHangup);
    await ended;
    // A restart-only key is saved for the next start but the running kiosk keeps its window settings.
    const again = await call<{ saved: boolean; restartRequired: boolean }>(CHANNELS.staffSaveSettings, { settings: { ...settings, window: { mode: 'windowed', width: 800, height: 600 } } });
    assert.ok(again.ok && again.value.saved);
    assert.equal(again.value.restartRequired, true);
    assert.deepEqual(persistence.read().window, { mode: 'windowed', width: 800, height: 600 });
    const pub2 = (await call<PublicConfig>(CHANNELS.configGet)) as Result<PublicConfig>;
    assert.ok(pub2.ok);
    assert.equal(pub2.value.windowMode, 'kiosk');
  });

  it('doctor: config valid, service reachable through a session closed before conn_init, 0 billed on the emulator', async () => {
    const { call, kiosk } = await setup();
    await call(CHANNELS.staffSetPin, { pin: '246813' });
    const r = await call<{ ok: boolean; checks: Array<{ id: string; ok: boolean | null; message: string }> }>(CHANNELS.staffRunDoctor);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.value.ok, true);
    assert.deepEqual(r.value.checks.map((c) => [c.id, c.ok]), [
      ['config', true],
      ['key', null],
      ['service', true],
      ['microphone', null],
      ['camera', null],
    ]);
    const sessions = kiosk.connection.emulator!.listSessions();
    assert.equal(sessions.length, 1);
    assert.deepEqual([sessions[0]!.status, sessions[0]!.connInits, sessions[0]!.billedSeconds, sessions[0]!.creditsCost, sessions[0]!.hangupReason], ['ended', 0, 0, 0, 'user_end']);
  });

  it("ledger: a call names the cast member the visitor chose, and the fleet console's spend is per that avatar", async () => {
    const { call, kiosk, ops } = await setup({
      avatars: [
        { id: 'ava', imagePath: TINY_PNG, name: 'Ava' },
        { id: 'kim', imagePath: TINY_PNG, name: 'Kim' },
      ],
    });
    await call(CHANNELS.staffSetPin, { pin: '246813' });
    await call(CHANNELS.staffLock);
    const live = waitFor(kiosk, (e) => e.type === 'state' && e.state.phase === 'live');
    const started = await call<{ liveId: string }>(CHANNELS.sessionStart, { avatarId: 'kim' });
    assert.ok(started.ok, JSON.stringify(started));
    await live;
    const ended = waitFor(kiosk, (e) => e.type === 'state' && e.state.phase === 'ended');
    await call(CHANNELS.sessionHangup, {});
    await ended;
    await ops.recorder.flush();
    const records = ops.ledger.read().records as SessionRecord[];
    assert.deepEqual(records.map((r) => [r.live_id, r.avatar]), [[started.value.liveId, 'kim']]);
    // The record as the fleet link publishes it on the events topic, read by the console.
    const fleet = new FleetState({ now: () => Date.parse(records[0]!.end_at) });
    fleet.onEvent('lobby-1', JSON.stringify({ id: '1-1', kioskId: 'lobby-1', at: records[0]!.end_at, record: records[0] }));
    assert.deepEqual(fleet.spendRows().map((r) => [r.kioskId, r.avatar, r.sessions]), [['lobby-1', 'kim', 1]]);
  });

  it('ledger: a call hung up by the idle prompt is recorded with its billing; totals and CSV agree', async () => {
    const { call, kiosk, ops } = await setup();
    await call(CHANNELS.staffSetPin, { pin: '246813' });
    await call(CHANNELS.staffLock);
    const live = waitFor(kiosk, (e) => e.type === 'state' && e.state.phase === 'live');
    const started = await call<{ liveId: string }>(CHANNELS.sessionStart, {});
    assert.ok(started.ok);
    await live;
    // The journal holds the running session for crash recovery.
    const journal = JSON.parse(readFileSync(join(ops.ledger.dir, '..', 'current-session.json'), 'utf8'));
    assert.equal(journal.liveId, started.value.liveId);
    assert.equal(typeof journal.liveAtMs, 'number');
    const unlockDuringCall = await call(CHANNELS.staffUnlock, { pin: '246813' });
    assert.deepEqual(unlockDuringCall, { ok: false, error: { code: 'invalid_request', message: 'The staff panel cannot open during a call. Wait until the call has ended.' } });
    const ended = waitFor(kiosk, (e) => e.type === 'state' && e.state.phase === 'ended');
    await call(CHANNELS.sessionHangup, { cause: 'idle' });
    await ended;
    await ops.recorder.flush();
    assert.equal(existsSync(join(ops.ledger.dir, '..', 'current-session.json')), false, 'cleared when the session ends');
    const emu = kiosk.connection.emulator!.getSession(started.value.liveId)!;
    const records = ops.ledger.read().records as SessionRecord[];
    assert.equal(records.length, 1);
    const rec = records[0]!;
    assert.deepEqual(
      [rec.live_id, rec.surface, rec.call_mode, rec.end_reason, rec.ended_by, rec.billed_seconds, rec.credits_cost, rec.recovered],
      [started.value.liveId, 'demo', 'audio', 'idle', 'client', emu.billedSeconds, emu.creditsCost, false],
    );
    assert.ok(rec.live_at !== null && rec.time_to_live_ms !== null);
    await call(CHANNELS.staffUnlock, { pin: '246813' });
    const totals = await call<{ today: { sessions: number; credits: number } }>(CHANNELS.staffLedgerTotals);
    assert.ok(totals.ok);
    // A demo call (the built-in emulator): counted apart, never as real money.
    assert.ok((emu.creditsCost ?? 0) > 0);
    assert.deepEqual(totals.value.today, { sessions: 0, credits: 0, billedSeconds: 0, unknownCredits: 0, demoSessions: 1 });
    const csv = await call<{ fileName: string; csv: string }>(CHANNELS.staffLedgerCsv, {});
    assert.ok(csv.ok);
    assert.match(csv.value.fileName, /^avatar-kiosk-ledger-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = csv.value.csv.trim().split('\r\n');
    assert.equal(lines.length, 2);
    assert.ok(lines[1]!.startsWith('session,') && lines[1]!.includes(`,${started.value.liveId},demo,audio,`) && lines[1]!.includes(',idle,client,'));
  });

  it('voices: the built-in default plus the account\'s clones; status and platform hooks', async () => {
    const { call, platform } = await setup();
    await call(CHANNELS.staffSetPin, { pin: '246813' });
    assert.deepEqual(await call(CHANNELS.staffListVoices), { ok: true, value: { builtIn: ['Tina'], custom: [], current: 'Tina' } });
    assert.deepEqual(await call(CHANNELS.staffCloneVoice, { audioUrl: 'https://example.com/sample.mp3', voice: 'Maya', language: 'en' }), { ok: true, value: { voice: 'Maya' } });
    assert.deepEqual(await call(CHANNELS.staffListVoices), { ok: true, value: { builtIn: ['Tina'], custom: ['Maya'], current: 'Tina' } });
    const st = await call<Record<string, unknown>>(CHANNELS.staffStatus);
    assert.ok(st.ok);
    assert.deepEqual({ ...st.value, uptimeS: 0, service: { ...(st.value.service as object), checkedAtMs: 0 } }, {
      mode: 'demo',
      service: { status: 'demo', ok: true, message: 'Demo mode: the built-in emulator, no key needed.', action: null, checkedAtMs: 0, nextCheckAtMs: null },
      serviceUrl: null,
      hasApiKey: false,
      apiKeySource: 'none',
      apiKeyWeaklyProtected: false,
      attention: [],
      errors: [],
      version: '9.9.9-test',
      uptimeS: 0,
      today: { sessions: 0, credits: 0, unknownCredits: 0, demoSessions: 0 },
      openAtLogin: false,
      canRestart: true,
      avatarVolume: 100,
      // Public by default: moderation strict, no age gate, nothing ended by the content review yet.
      safety: { audience: 'public', moderation: 'strict', region: null, refusal: null, ageGate: null, auditViolations: 0 },
    });
    await call(CHANNELS.staffSetOpenAtLogin, { enabled: true });
    assert.deepEqual(await call(CHANNELS.appReportError, { message: 'TypeError: x is undefined', source: 'window.onerror' }), { ok: true, value: undefined });
    const st2 = await call<{ errors: Array<{ code: string; message: string }>; openAtLogin: boolean }>(CHANNELS.staffStatus);
    assert.ok(st2.ok);
    assert.deepEqual(st2.value.errors.map((e) => [e.code, e.message]), [['renderer', 'TypeError: x is undefined']]);
    assert.equal(st2.value.openAtLogin, true);
    await call(CHANNELS.staffRestart);
    assert.deepEqual(platform.calls, ['login:true', 'restart']);
    assert.equal((await call(CHANNELS.staffStatus)).ok, false, 'restart locks the panel');
  });
});
