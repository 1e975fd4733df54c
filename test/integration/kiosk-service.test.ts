/**
 * The kiosk's services against the real emulator (demo mode runs it in-process on 127.0.0.1:0), through the
 * same channel registry (`dispatch(channel, arg)`) IPC uses. Real time, but fast knobs (no warm-up).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type KioskEvent, type PublicConfig, type Result } from '../../electron/contract.ts';
import type { SessionState } from '../../electron/core/session-types.ts';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { resolveConfig, type KioskConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry, type Dispatch } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk, type KioskOptions } from '../../electron/kiosk/compose.ts';
import { waitForEvent, phaseIs, isTerminal } from '../helpers/kiosk-events.ts';

const REAL_KEY = 'sk-live-REAL-0123456789abcdef';
const FAST = { warmupMs: { audio: 0, video: 0 }, endingMs: 20 };
const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function config(overrides: Record<string, unknown> = {}): KioskConfig {
  return resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' }, ...overrides }, {});
}

interface Harness {
  kiosk: Kiosk;
  dispatch: Dispatch;
  events: KioskEvent[];
  persisted: (string | null)[];
}

const open: Kiosk[] = [];
after(async () => {
  await Promise.all(open.map((s) => s.shutdown()));
});

async function makeService(options: Partial<KioskOptions> = {}): Promise<Harness> {
  const persisted: (string | null)[] = [];
  const channels = createChannelRegistry();
  const kiosk = await createKiosk({ channels, awaitRendererRtc: false,
    config: config(),
    apiKey: null,
    apiKeySource: 'none',
    emulatorKnobs: FAST,
    persistApiKey: async (k) => {
      persisted.push(k);
    },
    ...options,
  });
  open.push(kiosk);
  const events: KioskEvent[] = [];
  kiosk.events.onEvent((e) => events.push(e));
  return { kiosk, dispatch: channels.dispatch, events, persisted };
}

const waitFor = (kiosk: Kiosk, predicate: (e: KioskEvent) => boolean, timeoutMs = 8_000) => waitForEvent(kiosk, predicate, timeoutMs);

function value<T>(r: Result<T>): T {
  assert.equal(r.ok, true, JSON.stringify(r));
  return (r as { ok: true; value: T }).value;
}

async function startLive(h: Harness, arg: unknown = {}): Promise<string> {
  const live = waitFor(h.kiosk, phaseIs('live'));
  const r = (await h.dispatch(CHANNELS.sessionStart, arg)) as Result<{ liveId: string | null }>;
  const { liveId } = value(r);
  assert.ok(liveId, 'start answers with the live id once the session exists');
  await live;
  return liveId;
}

const hangupsSeen = (emulator: EmulatorHandle, liveId: string) =>
  emulator.getSession(liveId)?.clientMessages.filter((m) => m.type === 5).length ?? -1;

describe('the kiosk in demo mode (no API key)', () => {
  it('starts the emulator on 127.0.0.1 and reports mode demo without a key', async () => {
    const h = await makeService();
    assert.ok(h.kiosk.connection.emulator);
    assert.match(h.kiosk.connection.emulator.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const cfg = value((await h.dispatch(CHANNELS.configGet, undefined)) as Result<PublicConfig>);
    assert.equal(cfg.mode, 'demo');
    assert.equal(cfg.hasApiKey, false);
    assert.equal(cfg.apiKeySource, 'none');
    assert.equal(cfg.avatar.imageDataUrl, TINY_PNG);
    assert.equal(cfg.callMode, 'audio');
  });

  it('start → credentials → live → hangup → ended with billing', async () => {
    const h = await makeService();
    const emulator = h.kiosk.connection.emulator!;
    const credentials = waitFor(h.kiosk, (e) => e.type === 'credentials');
    const liveId = await startLive(h);
    const cred = await credentials;
    assert.equal(cred.type === 'credentials' && cred.liveId, liveId);
    assert.ok(cred.type === 'credentials' && cred.rtc.token && cred.rtc.channel_id && cred.rtc.app_id);
    assert.equal(emulator.liveCount(), 1);

    const ended = waitFor(h.kiosk, isTerminal);
    value(await h.dispatch(CHANNELS.sessionHangup, undefined));
    const end = await ended;
    assert.ok(end.type === 'state' && end.state.phase === 'ended', JSON.stringify(end));
    if (end.type === 'state' && end.state.phase === 'ended') {
      assert.equal(end.state.liveId, liveId);
      assert.equal(end.state.summary.wentLive, true);
      assert.equal(typeof end.state.summary.billedSeconds, 'number');
      assert.equal(typeof end.state.summary.creditsCost, 'number');
    }
    assert.equal(emulator.liveCount(), 0);
    assert.equal(hangupsSeen(emulator, liveId), 1);
    const state = value((await h.dispatch(CHANNELS.sessionGetState, undefined)) as Result<SessionState>);
    assert.equal(state.phase, 'ended');
    // the events carry RTC credentials and view models only: no service key anywhere
    assert.doesNotMatch(JSON.stringify(h.events), new RegExp(emulator.apiKey));
  });

  it('a second start while a session runs → invalid_request "A session is already running"', async () => {
    const h = await makeService();
    const liveId = await startLive(h);
    const r = await h.dispatch(CHANNELS.sessionStart, {});
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.error.code, 'invalid_request');
      assert.match(r.error.message, /A session is already running/);
    }
    assert.equal(h.kiosk.connection.emulator!.listSessions().length, 1, 'no second session was created');
    await h.kiosk.calls.hangup();
    assert.equal(hangupsSeen(h.kiosk.connection.emulator!, liveId), 1);
  });

  it('reportMediaError during live → hung up (nothing billing), failed with media_unavailable', async () => {
    const h = await makeService();
    const emulator = h.kiosk.connection.emulator!;
    const liveId = await startLive(h);
    const terminal = waitFor(h.kiosk, isTerminal);
    value(await h.dispatch(CHANNELS.sessionReportMediaError, { kind: 'microphone_denied', message: 'NotAllowedError: Permission denied' }));
    const end = await terminal;
    assert.equal(emulator.liveCount(), 0);
    assert.equal(hangupsSeen(emulator, liveId), 1);
    assert.ok(end.type === 'state' && end.state.phase === 'failed', JSON.stringify(end));
    if (end.type === 'state' && end.state.phase === 'failed') {
      assert.equal(end.state.error.code, 'media_unavailable');
      assert.match(end.state.error.message, /microphone/i);
      assert.ok(end.state.summary, 'the billing summary is kept');
    }
    const terminals = h.events.filter(isTerminal);
    assert.equal(terminals.length, 1, 'the UI sees one terminal state, the failure');
  });

  it('reportMediaError with an RTC kind ends in rtc_failed', async () => {
    const h = await makeService();
    await startLive(h);
    const terminal = waitFor(h.kiosk, isTerminal);
    value(await h.dispatch(CHANNELS.sessionReportMediaError, { kind: 'rtc_join_failed', message: 'join timeout' }));
    const end = await terminal;
    assert.ok(end.type === 'state' && end.state.phase === 'failed' && end.state.error.code === 'rtc_failed');
    assert.equal(h.kiosk.connection.emulator!.liveCount(), 0);
  });

  it('reportMediaError with no session is harmless', async () => {
    const h = await makeService();
    value(await h.dispatch(CHANNELS.sessionReportMediaError, { kind: 'device_missing', message: '' }));
    assert.equal(h.kiosk.calls.state.phase, 'idle');
  });

  it('shutdown during live → exactly one hangup (type 5 once), idempotent, emulator stopped', async () => {
    const h = await makeService();
    const emulator = h.kiosk.connection.emulator!;
    const liveId = await startLive(h);
    await Promise.all([h.kiosk.shutdown(), h.kiosk.shutdown()]);
    await h.kiosk.shutdown();
    assert.equal(hangupsSeen(emulator, liveId), 1);
    assert.equal(emulator.getSession(liveId)?.hangupReason, 'user_end');
    assert.equal(h.kiosk.connection.emulator, null);
    const r = await h.dispatch(CHANNELS.sessionStart, {});
    assert.equal(r.ok, false);
  });

  it('resetToAttract (renderer crashed) during live → one hangup, back to idle, unmuted', async () => {
    const h = await makeService();
    const emulator = h.kiosk.connection.emulator!;
    const liveId = await startLive(h);
    await h.kiosk.calls.setMuted({ muted: true });
    await Promise.all([h.kiosk.calls.resetToAttract(), h.kiosk.calls.resetToAttract()]);
    assert.equal(hangupsSeen(emulator, liveId), 1);
    assert.equal(emulator.liveCount(), 0);
    assert.deepEqual(h.kiosk.calls.state, { phase: 'idle' });
    assert.deepEqual(h.events.at(-1), { type: 'muted', muted: false });
    // and a new session can start
    const again = await startLive(h);
    assert.notEqual(again, liveId);
    await h.kiosk.calls.hangup();
  });

  it('hangup while the session is still being created cancels it; nothing is left live', async () => {
    const h = await makeService({ emulatorKnobs: { ...FAST, latencyMs: 200 } });
    const emulator = h.kiosk.connection.emulator!;
    const start = h.dispatch(CHANNELS.sessionStart, {});
    await new Promise((r) => setTimeout(r, 50));
    value(await h.dispatch(CHANNELS.sessionHangup, undefined));
    await start;
    assert.ok(['ended', 'failed'].includes(h.kiosk.calls.state.phase), h.kiosk.calls.state.phase);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(emulator.liveCount(), 0);
  });

  it('setMuted emits muted events on change only', async () => {
    const h = await makeService();
    value(await h.dispatch(CHANNELS.sessionSetMuted, { muted: true }));
    value(await h.dispatch(CHANNELS.sessionSetMuted, { muted: true }));
    value(await h.dispatch(CHANNELS.sessionSetMuted, { muted: false }));
    assert.deepEqual(
      h.events.filter((e) => e.type === 'muted'),
      [
        { type: 'muted', muted: true },
        { type: 'muted', muted: false },
      ],
    );
  });

  it('call mode from the visitor when allowed, else from config', async () => {
    const h = await makeService({ config: config({ allowModeChoice: false }) });
    const liveId = await startLive(h, { callMode: 'video' });
    assert.equal(h.kiosk.connection.emulator!.getSession(liveId)?.callMode, 'audio');
    await h.kiosk.calls.hangup();
    const h2 = await makeService();
    const liveId2 = await startLive(h2, { callMode: 'video' });
    assert.equal(h2.kiosk.connection.emulator!.getSession(liveId2)?.callMode, 'video');
    await h2.kiosk.calls.hangup();
  });
});

describe('the kiosk\'s channels: validation', () => {
  it('unknown channels and bad arguments → invalid_request, nothing runs', async () => {
    const h = await makeService();
    for (const [channel, arg] of [
      ['kiosk:debug:eval', 'process.exit()'],
      ['kiosk:event', undefined],
      [CHANNELS.sessionStart, { callMode: 'hologram' }],
      [CHANNELS.sessionStart, { callMode: 'audio', apiKey: 'x' }],
      [CHANNELS.sessionSetMuted, { muted: 'yes' }],
      // The key is set only through the staff panel's PIN-gated channel: this one no longer exists.
      ['kiosk:config:set-api-key', { apiKey: REAL_KEY }],
    ] as const) {
      const r = await h.dispatch(channel, arg);
      assert.equal(r.ok, false, channel);
      if (!r.ok) assert.equal(r.error.code, 'invalid_request', channel);
    }
    assert.equal(h.kiosk.connection.emulator!.listSessions().length, 0);
  });
});

describe('the service key', () => {
  it('setApiKey persists the key, switches demo → direct, never echoes the key; null goes back to demo', async () => {
    const real = await startEmulator({ host: '127.0.0.1', port: 0, knobs: FAST, accounts: [{ apiKey: REAL_KEY }] });
    try {
      const h = await makeService({ config: config({ service: { surface: 'direct', baseUrl: real.baseUrl } }) });
      assert.ok(h.kiosk.connection.emulator, 'demo first');
      const r = await h.kiosk.key.set(REAL_KEY);
      assert.doesNotMatch(JSON.stringify(r), new RegExp(REAL_KEY));
      value(r);
      const cfg = value(await h.kiosk.appearance.getConfig());
      assert.equal(cfg.mode, 'direct');
      assert.equal(cfg.hasApiKey, true);
      assert.equal(cfg.apiKeySource, 'stored');
      assert.deepEqual(h.persisted, [REAL_KEY]);
      assert.equal(h.kiosk.connection.emulator, null, 'the demo emulator is stopped in direct mode');

      // a session now runs against the "real" service with the real key
      const liveId = await startLive(h);
      assert.equal(real.getSession(liveId)?.apiKey, REAL_KEY);
      await h.kiosk.calls.hangup();
      assert.equal(real.liveCount(), 0);

      value(await h.kiosk.key.set(null));
      const cleared = value(await h.kiosk.appearance.getConfig());
      assert.equal(cleared.mode, 'demo');
      assert.equal(cleared.hasApiKey, false);
      assert.deepEqual(h.persisted, [REAL_KEY, null]);
      assert.ok(h.kiosk.connection.emulator, 'the emulator runs again');

      // nothing the renderer ever received carries the key
      assert.doesNotMatch(JSON.stringify(h.events), new RegExp(REAL_KEY));
      assert.doesNotMatch(JSON.stringify(await h.kiosk.appearance.getConfig()), new RegExp(REAL_KEY));
    } finally {
      await real.close();
    }
  });

  it('PublicConfig never contains the key (env, stored)', async () => {
    for (const source of ['env', 'stored'] as const) {
      const h = await makeService({
        apiKey: REAL_KEY,
        apiKeySource: source,
        apiKeyWeaklyProtected: true,
        config: config({ service: { surface: 'direct', baseUrl: 'https://avatar.example.com' } }),
      });
      const cfg = value(await h.kiosk.appearance.getConfig());
      assert.doesNotMatch(JSON.stringify(cfg), new RegExp(REAL_KEY));
      assert.equal(cfg.mode, 'direct');
      assert.equal(cfg.apiKeySource, source);
      assert.equal(cfg.apiKeyWeaklyProtected, source === 'stored');
      assert.equal(h.kiosk.connection.emulator, null, 'no emulator when a key exists');
    }
  });

  it('an environment key wins over clearing the stored one', async () => {
    const h = await makeService({ apiKey: REAL_KEY, apiKeySource: 'env', config: config({ service: { baseUrl: 'https://avatar.example.com' } }) });
    value(await h.kiosk.key.set(null));
    const cfg = value(await h.kiosk.appearance.getConfig());
    assert.equal(cfg.mode, 'direct');
    assert.equal(cfg.apiKeySource, 'env');
  });

  it('setApiKey is refused while a session runs, and a failing store is reported', async () => {
    const h = await makeService();
    await startLive(h);
    const r = await h.kiosk.key.set(REAL_KEY);
    assert.equal(r.ok, false);
    await h.kiosk.calls.hangup();
    const broken = await makeService({
      persistApiKey: async () => {
        throw new Error('keyring locked');
      },
    });
    const r2 = await broken.kiosk.key.set(REAL_KEY);
    assert.equal(r2.ok, false);
    if (!r2.ok) assert.match(r2.error.message, /keyring locked/);
    assert.doesNotMatch(JSON.stringify(r2), new RegExp(REAL_KEY));
    assert.equal(broken.kiosk.connection.mode, 'demo');
  });

  it('direct surface without a base URL: config loads, start answers invalid_config', async () => {
    const h = await makeService({ apiKey: REAL_KEY, apiKeySource: 'stored' });
    const r = await h.kiosk.calls.start();
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error.code, 'invalid_config');
  });

  it('gateway surface: no key needed, sessions run through the gateway', async () => {
    const gw = await startEmulator({ host: '127.0.0.1', port: 0, knobs: FAST });
    try {
      const h = await makeService({ config: config({ service: { surface: 'gateway', gatewayUrl: gw.gatewayUrl } }) });
      assert.equal(h.kiosk.connection.mode, 'gateway');
      assert.equal(h.kiosk.connection.emulator, null);
      const liveId = await startLive(h);
      assert.equal(gw.getSession(liveId)?.status, 'on_live');
      await h.kiosk.shutdown();
      assert.equal(gw.liveCount(), 0);
    } finally {
      await gw.close();
    }
  });
});

describe('the kiosk: RTC first, then billing (as with a renderer)', () => {
  /** A service that waits for the renderer's RTC side, and the live id of a session started on it. */
  async function startHeld(options: Partial<KioskOptions> = {}): Promise<{ h: Harness; liveId: string; emulator: EmulatorHandle }> {
    const h = await makeService({ awaitRendererRtc: true, ...options });
    const r = (await h.dispatch(CHANNELS.sessionStart, {})) as Result<{ liveId: string | null }>;
    const liveId = value(r).liveId;
    assert.ok(liveId);
    const emulator = h.kiosk.connection.emulator!;
    // The control socket is open (holding conn_init) before anything else happens.
    const deadline = Date.now() + 5_000;
    while ((emulator.getSession(liveId)?.socketsOpened ?? 0) < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(emulator.getSession(liveId)!.connInits, 0, 'no conn_init before the renderer is ready');
    assert.equal(h.kiosk.calls.state.phase, 'connecting');
    return { h, liveId, emulator };
  }
  const endedWithType5 = async (emulator: EmulatorHandle, liveId: string) => {
    const deadline = Date.now() + 8_000;
    while (emulator.getSession(liveId)?.status !== 'ended' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const s = emulator.getSession(liveId)!;
    assert.equal(s.status, 'ended');
    assert.equal(s.hangupReason, 'user_end');
    assert.equal(hangupsSeen(emulator, liveId), 1, 'exactly one type 5');
    assert.equal(s.connInits, 0, 'never conn_init');
    assert.equal(s.creditsCost, 0);
  };

  it('rtcReady for the running session sends conn_init (one socket), and a wrong live id is refused', async () => {
    const { h, liveId, emulator } = await startHeld();
    assert.deepEqual(await h.dispatch(CHANNELS.sessionRtcReady, { liveId: 'someone-else' }), { ok: true, value: { accepted: false } });
    const live = waitFor(h.kiosk, phaseIs('live'));
    assert.deepEqual(await h.dispatch(CHANNELS.sessionRtcReady, { liveId }), { ok: true, value: { accepted: true } });
    await live;
    assert.equal(emulator.getSession(liveId)!.connInits, 1);
    assert.equal(emulator.getSession(liveId)!.socketsOpened, 1);
    await h.kiosk.calls.hangup();
  });

  it('a join failure reported by the renderer: type 5, no conn_init, 0 credits, failed with the network-blocked message', async () => {
    const { h, liveId, emulator } = await startHeld();
    const failed = waitFor(h.kiosk, (e) => e.type === 'state' && e.state.phase === 'failed');
    await h.dispatch(CHANNELS.sessionReportMediaError, { kind: 'rtc_join_failed', message: 'CAN_NOT_GET_GATEWAY_SERVER' });
    const e = await failed;
    assert.ok(e.type === 'state' && e.state.phase === 'failed');
    assert.equal(e.state.error.code, 'rtc_failed');
    assert.match(e.state.error.message, /block video calls/);
    await endedWithType5(emulator, liveId);
  });

  it('a media error (microphone denied) before ready: type 5, no conn_init', async () => {
    const { h, liveId, emulator } = await startHeld();
    await h.dispatch(CHANNELS.sessionReportMediaError, { kind: 'microphone_denied', message: 'NotAllowedError' });
    await endedWithType5(emulator, liveId);
  });

  it('the visitor cancels before ready: type 5, no conn_init', async () => {
    const { h, liveId, emulator } = await startHeld();
    await h.dispatch(CHANNELS.sessionHangup, undefined);
    await endedWithType5(emulator, liveId);
  });

  it('shutdown before ready: type 5, no conn_init', async () => {
    const { h, liveId, emulator } = await startHeld();
    const emulatorKept = emulator;
    // Shutdown closes the in-process emulator too: read the session before it goes.
    const seen: Array<{ type: number | string }> = [];
    const poll = setInterval(() => {
      const s = emulatorKept.getSession(liveId);
      if (s) seen.splice(0, seen.length, ...s.clientMessages);
    }, 2);
    await h.kiosk.shutdown();
    clearInterval(poll);
    assert.deepEqual(seen.map((m) => m.type).filter((t) => t !== 4), [5]);
  });

  it('the renderer never reports ready: given up with type 5 at the join bound', async () => {
    const { liveId, emulator } = await startHeld({ rtcReadyTimeoutMs: 300 });
    await endedWithType5(emulator, liveId);
  });
});
