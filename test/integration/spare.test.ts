/**
 * Fast start end to end in main: the kiosk's spare session against the real emulator
 * (HTTP + WebSocket on 127.0.0.1:0), everything on one FakeClock. The emulator injects 50 ms of latency on
 * every answer, so one protocol round trip is exactly 50 fake ms: a used spare goes live 50 ms after the
 * tap; the normal path needs create + handshake + ack (150 ms, plus NOT_READY backoff in video mode).
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type KioskEvent, type PublicConfig, type Result, type SpareEvent } from '../../electron/contract.ts';
import { FakeClock } from '../helpers/fake-clock.ts';
import { startEmulator, type EmulatedSession, type EmulatorHandle, type EmulatorKnobs } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry, type Dispatch } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';
import { advanceInSteps, advanceUntil, driveUntilSettled, until } from '../helpers/until.ts';

const T0 = 1_700_000_000_000;
const LATENCY_MS = 50;
const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

interface Harness {
  clock: FakeClock;
  kiosk: Kiosk;
  /** One call from the page, through the kiosk's channels. */
  dispatch: Dispatch;
  emu: EmulatorHandle;
  events: KioskEvent[];
  spareLog(): Array<[SpareEvent['status'], string | null, string | undefined]>;
  /** The renderer's view: state phases and credentials, in order. */
  uiLog(): string[];
  session(liveId: string): EmulatedSession;
}

let current: Harness | null = null;

async function setup(options: { config?: Record<string, unknown>; knobs?: Partial<EmulatorKnobs> } = {}): Promise<Harness> {
  const clock = new FakeClock(T0);
  const config = resolveConfig({ callMode: 'video', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' }, ...options.config }, {});
  const channels = createChannelRegistry();
  const kiosk = await createKiosk({ channels, awaitRendererRtc: false,
    config,
    apiKey: null,
    apiKeySource: 'none',
    clock,
    startEmulator: (o) => startEmulator({ ...o, clock }),
    emulatorKnobs: { latencyMs: LATENCY_MS, warmupMs: { audio: 0, video: 2_500 }, endingMs: 300, ...options.knobs },
  });
  const emu = kiosk.connection.emulator;
  assert.ok(emu);
  const events: KioskEvent[] = [];
  kiosk.events.onEvent((e) => events.push(e));
  const h: Harness = {
    clock,
    kiosk,
    dispatch: channels.dispatch,
    emu,
    events,
    spareLog: () => events.filter((e): e is SpareEvent => e.type === 'spare').map((e) => [e.status, e.liveId, e.reason]),
    uiLog: () => events.flatMap((e) => (e.type === 'state' ? [e.state.phase] : e.type === 'credentials' ? [`credentials:${e.liveId}`] : [])),
    session: (liveId) => {
      const s = emu.getSession(liveId);
      assert.ok(s, `the emulator knows ${liveId}`);
      return s;
    },
  };
  current = h;
  return h;
}

afterEach(async () => {
  const h = current;
  current = null;
  if (!h) return;
  await driveUntilSettled(h.clock, h.kiosk.shutdown());
  assert.equal(h.clock.pendingCount, 0, `pending timers: ${h.clock.pendingDelays().join(', ')}`);
});

/** Approach, then let fake time pass (server pings answered) until the spare's socket is open. */
async function approach(h: Harness, present: boolean | null = true): Promise<string> {
  value(await h.dispatch(CHANNELS.attractReport, { showing: true, present }));
  await advanceUntil(h.clock, () => h.kiosk.spares.phase === 'ready', { stepMs: 10, message: 'spare ready' });
  const created = h.spareLog().find(([s]) => s === 'created');
  assert.ok(created?.[1]);
  return created[1];
}

function value<T>(r: Result<T>): T {
  assert.equal(r.ok, true, JSON.stringify(r));
  return (r as { ok: true; value: T }).value;
}

/** Tap: `session.start` (resolves once the session exists), driving fake time meanwhile. */
async function tap(h: Harness, arg: unknown = {}): Promise<string | null> {
  const r = (await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, arg), { stepMs: 10 })) as Result<{ liveId: string | null }>;
  return value(r).liveId;
}

/** The persona a session was created with, as the emulator received it. */
const personaOf = (s: EmulatedSession) => (s.request as { avatar: { persona: string } }).avatar.persona;
const types = (s: EmulatedSession) => s.clientMessages.map((m) => m.type);

describe('spare sessions (fast start) against the emulator', () => {
  it('a spare made on approach is used by the tap: conn_init only then, live one round trip (50 ms) after the tap', async () => {
    const h = await setup();
    const spareId = await approach(h);
    assert.deepEqual(h.spareLog(), [['created', spareId, undefined]]);
    // The visitor walks up: 6 s, longer than the video warm-up (2.5 s) and one ping period (answered).
    await advanceInSteps(h.clock, 6_000, { stepMs: 250 });
    const before = h.session(spareId);
    assert.equal(before.status, 'waiting');
    assert.equal(before.connInits, 0);
    assert.ok(before.clientMessages.length > 0 && types(before).every((t) => t === 4), `only keep-alives so far: ${types(before)}`);
    assert.equal(h.uiLog().length, 0, 'the renderer saw nothing yet');

    value(await h.dispatch(CHANNELS.attractReport, { showing: false, present: true }));
    const tapAtMs = h.clock.now();
    const liveId = await tap(h);
    assert.equal(liveId, spareId, 'the tap took the spare');
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    const live = h.kiosk.calls.state;
    assert.ok(live.phase === 'live');
    assert.equal(live.sinceMs - tapAtMs, LATENCY_MS, 'one round trip: conn_init → ack');

    const s = h.session(spareId);
    assert.equal(s.status, 'on_live');
    assert.equal(s.connInits, 1);
    assert.equal(s.notReadyAnswers, 0);
    assert.equal(s.socketsOpened, 1, 'the socket opened on approach is the one that went live');
    assert.deepEqual(types(s).filter((t) => t !== 4), [1], 'exactly one conn_init, and nothing but keep-alives before it');
    assert.equal(types(s).at(-1), 1);
    assert.deepEqual(s.clientMessages.map((m) => m.seq_id), s.clientMessages.map((_, i) => i + 1));
    assert.equal(h.emu.listSessions().length, 1, 'no second room');
    assert.deepEqual(h.uiLog(), ['creating', 'connecting', `credentials:${spareId}`, 'live']);
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['used', spareId, undefined],
    ]);

    await driveUntilSettled(h.clock, h.kiosk.calls.hangup());
    assert.equal(h.session(spareId).hangupReason, 'user_end');
  });

  it('an unused spare expires after maxAgeSeconds: type 5 before any conn_init, billed 0 credits', async () => {
    const h = await setup({ config: { prewarm: { maxAgeSeconds: 30 } } });
    const spareId = await approach(h);
    const createdAt = h.session(spareId).createdAtMs;
    await advanceUntil(h.clock, () => h.spareLog().length >= 2, { stepMs: 500, maxFakeMs: 40_000 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['expired', spareId, 'max_age'],
    ]);
    await advanceUntil(h.clock, () => h.session(spareId).status !== 'waiting', { stepMs: 10 });
    const s = h.session(spareId);
    assert.ok(h.clock.now() - createdAt >= 30_000);
    assert.equal(s.connInits, 0, 'conn_init was never sent');
    assert.equal(types(s).at(-1), 5);
    assert.deepEqual(types(s).filter((t) => t !== 4), [5]);
    assert.equal(s.hangupReason, 'user_end');
    assert.equal(s.startedAtMs, null, 'never on_live');
    assert.equal(s.billedSeconds, 0);
    assert.equal(s.creditsCost, 0);
    assert.equal(h.emu.balance(), 1000, 'the account was not charged');
    assert.equal(h.uiLog().length, 0);
  });

  it('a spare failing at the tap (LIVE_CONN_INIT_FAILED) is dropped quietly: the tap gets a fresh session', async () => {
    const h = await setup({ knobs: { warmupMs: { audio: 0, video: 0 } } });
    const spareId = await approach(h);
    h.emu.knobs.initFailure = true;
    const starting = h.dispatch(CHANNELS.sessionStart, {});
    // The server decided on the spare's conn_init (its answer leaves 50 ms later); the next one succeeds.
    await until(() => h.session(spareId).connInits === 1, { message: 'conn_init of the spare' });
    h.emu.knobs.initFailure = false;
    const liveId = value((await driveUntilSettled(h.clock, starting, { stepMs: 10 })) as Result<{ liveId: string | null }>).liveId;
    assert.ok(liveId);
    assert.notEqual(liveId, spareId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'init_failed'],
    ]);
    assert.deepEqual(h.uiLog(), ['creating', 'connecting', `credentials:${liveId}`, 'live'], 'the renderer never saw the spare');
    assert.equal(h.session(spareId).billedSeconds, 0);
    assert.equal(h.session(liveId).status, 'on_live');
  });

  it('a spare the service expired (404) fails quietly and the tap takes the normal path', async () => {
    const h = await setup({ knobs: { sessionTtlMs: 20_000, warmupMs: { audio: 0, video: 0 } } });
    const spareId = await approach(h);
    await advanceUntil(h.clock, () => h.spareLog().length >= 2, { stepMs: 500, maxFakeMs: 25_000 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'socket_lost'],
    ]);
    assert.equal(h.emu.getSession(spareId), undefined, 'gone (404)');
    const liveId = await tap(h);
    assert.ok(liveId && liveId !== spareId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.deepEqual(types(h.session(liveId)).slice(0, 1), [1], 'the normal path: conn_init first');
  });

  it('the other call mode takes the normal path and closes the spare unbilled', async () => {
    const h = await setup({ knobs: { warmupMs: { audio: 0, video: 0 } } });
    const spareId = await approach(h);
    const liveId = await tap(h, { callMode: 'audio' });
    assert.ok(liveId && liveId !== spareId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live' && h.session(spareId).status !== 'waiting', { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['expired', spareId, 'other_call_mode'],
    ]);
    assert.equal(h.session(spareId).connInits, 0);
    assert.equal(h.session(spareId).billedSeconds, 0);
    assert.equal(h.session(liveId).callMode, 'audio');
  });

  it('the spare is made for the default language; a tap in it takes the spare, told in its persona', async () => {
    const h = await setup({ config: { defaultLanguage: 'de', languages: ['de', 'en'] }, knobs: { warmupMs: { audio: 0, video: 0 } } });
    const spareId = await approach(h);
    assert.equal(personaOf(h.session(spareId)), 'A test persona.\n\nAlways answer in German.');
    const liveId = await tap(h, { language: 'de' });
    assert.equal(liveId, spareId);
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['used', spareId, undefined],
    ]);
  });

  it('another language takes the normal path (its own instruction) and closes the spare unbilled', async () => {
    const h = await setup({ config: { languageInstructions: { ja: '必ず日本語で答えてください。' } }, knobs: { warmupMs: { audio: 0, video: 0 } } });
    const spareId = await approach(h);
    assert.equal(personaOf(h.session(spareId)), 'A test persona.\n\nAlways answer in English.');
    const liveId = await tap(h, { language: 'ja' });
    assert.ok(liveId && liveId !== spareId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live' && h.session(spareId).status !== 'waiting', { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['expired', spareId, 'settings_changed'],
    ]);
    assert.equal(h.session(spareId).connInits, 0);
    assert.equal(h.session(spareId).billedSeconds, 0);
    assert.equal(personaOf(h.session(liveId)), 'A test persona.\n\n必ず日本語で答えてください。');
  });

  it('a language the kiosk does not offer is refused before anything is created', async () => {
    const h = await setup({ config: { languages: ['en', 'fr'], prewarm: { mode: 'off' } } });
    const r = (await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, { language: 'ar' }), { stepMs: 10 })) as Result<unknown>;
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.code, 'invalid_request');
    assert.equal(!r.ok && r.error.message, 'The language "ar" is not offered on this kiosk.');
    assert.equal(h.emu.listSessions().length, 0);
    const bad = (await h.dispatch(CHANNELS.sessionStart, { language: 'xx' })) as Result<unknown>;
    assert.equal(bad.ok, false, 'an unknown language code fails the argument check');
  });

  it('prewarm off: no spare, and the normal path keeps the NOT_READY backoff (2 s, 4 s)', async () => {
    const h = await setup({ config: { prewarm: { mode: 'off' } }, knobs: { warmupMs: { audio: 0, video: 5_000 } } });
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    await advanceInSteps(h.clock, 5_000, { stepMs: 500 });
    assert.equal(h.emu.listSessions().length, 0);
    const tapAtMs = h.clock.now();
    const liveId = await tap(h);
    assert.ok(liveId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 50, maxFakeMs: 20_000 });
    const s = h.session(liveId);
    assert.equal(s.notReadyAnswers, 2);
    assert.equal(s.connInits, 3);
    const retries = h.events.flatMap((e) => (e.type === 'state' && e.state.phase === 'warming' ? [e.state.retryInMs] : []));
    assert.deepEqual(retries, [2_000, 4_000], 'spec §6 rule 2 backoff, unchanged');
    const live = h.kiosk.calls.state;
    assert.ok(live.phase === 'live');
    // At least: create + handshake + NOT_READY, 2 s, handshake + NOT_READY, 4 s, handshake + ack.
    assert.ok(live.sinceMs - tapAtMs >= 150 + 2_000 + 100 + 4_000 + 100);
    assert.deepEqual(h.spareLog(), []);
  });

  it('shutdown closes an unused spare with type 5 exactly once', async () => {
    const h = await setup();
    const spareId = await approach(h);
    await driveUntilSettled(h.clock, Promise.all([h.kiosk.shutdown(), h.kiosk.shutdown()]));
    current = null;
    const s = h.session(spareId);
    assert.deepEqual(types(s).filter((t) => t !== 4), [5]);
    assert.equal(s.connInits, 0);
    assert.equal(s.billedSeconds, 0);
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['expired', spareId, 'shutdown'],
    ]);
    assert.equal(h.clock.pendingCount, 0, `pending timers: ${h.clock.pendingDelays().join(', ')}`);
  });

  it('shutdown while a spare\'s create is in flight: waits for the answer and closes that room with type 5, never conn_init', async () => {
    const h = await setup({ knobs: { createDelayMs: 1_000 } });
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    await until(() => h.emu.listSessions().length === 1, { message: 'the spare\'s create to reach the service' });
    assert.equal(h.kiosk.spares.phase, 'creating');
    const spareId = h.emu.listSessions()[0]!.id;
    await driveUntilSettled(h.clock, h.kiosk.shutdown(), { stepMs: 50 });
    current = null;
    const s = h.session(spareId);
    assert.deepEqual(types(s), [5], 'the room is closed with one type 5');
    assert.equal(s.connInits, 0);
    assert.notEqual(s.status, 'waiting', 'no room is left waiting');
    assert.equal(h.clock.pendingCount, 0, `pending timers: ${h.clock.pendingDelays().join(', ')}`);
  });

  it('a quit while the tap\'s create is in flight: waits for the answer and closes that room with type 5, never conn_init', async () => {
    const h = await setup({ config: { prewarm: { mode: 'off' } }, knobs: { createDelayMs: 1_000 } });
    const started = h.dispatch(CHANNELS.sessionStart, {});
    await until(() => h.emu.listSessions().length === 1, { message: 'the tap\'s create to reach the service' });
    const roomId = h.emu.listSessions()[0]!.id;
    await driveUntilSettled(h.clock, Promise.all([h.kiosk.shutdown(), started]), { stepMs: 50 });
    current = null;
    const s = h.session(roomId);
    assert.deepEqual(types(s), [5]);
    assert.equal(s.connInits, 0);
    assert.notEqual(s.status, 'waiting');
    assert.ok(!h.uiLog().some((e) => e.startsWith('credentials')), 'the renderer never joined the cancelled room');
  });

  it('no spare while the last create failed with 402 (out of credits); a successful create lifts it', async () => {
    const h = await setup({ knobs: { warmupMs: { audio: 0, video: 0 } } });
    h.emu.setBalance(h.emu.apiKey, 10);
    const r = (await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, {}), { stepMs: 10 })) as Result<{ liveId: string | null }>;
    assert.equal(value(r).liveId, null);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'failed', { stepMs: 10 });
    const failed = h.kiosk.calls.state;
    assert.ok(failed.phase === 'failed' && failed.error.code === 'insufficient_credits');
    assert.equal(h.kiosk.spares.blockedBy, 'insufficient_credits');

    h.emu.setBalance(h.emu.apiKey, 1000);
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    await advanceInSteps(h.clock, 60_000, { stepMs: 5_000 });
    assert.equal(h.emu.listSessions().length, 0, 'blocked: no spare was created');
    assert.deepEqual(h.spareLog(), []);

    // A visitor's own tap succeeds: spares resume once that session is over.
    value(await h.dispatch(CHANNELS.attractReport, { showing: false, present: true }));
    const liveId = await tap(h);
    assert.ok(liveId);
    assert.equal(h.kiosk.spares.blockedBy, null);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    await driveUntilSettled(h.clock, h.kiosk.calls.hangup(), { stepMs: 50 });
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    await advanceUntil(h.clock, () => h.kiosk.spares.phase === 'ready', { stepMs: 10 });
    assert.deepEqual(h.spareLog().map(([s]) => s), ['created']);
  });

  it('PublicConfig tells the renderer the prewarm mode and camera permission; attract.report validates its argument', async () => {
    const h = await setup({ config: { prewarm: { mode: 'always' }, presence: { cameraEnabled: false } } });
    const cfg = value((await h.dispatch(CHANNELS.configGet, undefined)) as Result<PublicConfig>);
    assert.deepEqual(cfg.prewarm, { mode: 'always', prejoin: true });
    assert.deepEqual(cfg.rtc, { cloudProxy: 'off' });
    assert.deepEqual(cfg.presence, { cameraEnabled: false });
    for (const bad of [undefined, { showing: true }, { showing: 'yes', present: null }, { showing: true, present: null, frame: 'data:' }]) {
      const r = await h.dispatch(CHANNELS.attractReport, bad);
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.code, 'invalid_request');
    }
    assert.equal(h.kiosk.spares.phase, null, 'a rejected report changes nothing');
  });
});
