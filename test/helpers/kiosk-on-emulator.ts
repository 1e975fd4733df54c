/**
 * A kiosk (kiosk/compose.ts) in demo mode against the real emulator (HTTP + WebSocket on 127.0.0.1:0), both
 * on one FakeClock, its channels in a registry as a host's, with the renderer's events and the operator's
 * log recorded, for unit tests that follow whole calls. `kioskOnEmulator` answers with no latency, so fake time only moves when a test advances it (figures
 * timed from the tap are exact) and makes no spares unless asked; `kioskOnSlowEmulator` answers after 50
 * fake ms, ends calls in 300 and keeps the kiosk's own spare settings, for following a tap step by step.
 */
import assert from 'node:assert/strict';
import { afterEach } from 'node:test';
import { CHANNELS, type KioskEvent, type Result, type SpareEvent } from '../../electron/contract.ts';
import { FakeClock } from './fake-clock.ts';
import { createLogger } from '../../electron/core/log.ts';
import { startEmulator, type EmulatedSession, type EmulatorHandle, type EmulatorKnobs } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry, type ChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk, type KioskOptions } from '../../electron/kiosk/compose.ts';
import { advanceUntil, driveUntilSettled, until } from './until.ts';

export const T0 = 1_700_000_000_000;
export const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export interface KioskOnEmulator {
  clock: FakeClock;
  kiosk: Kiosk;
  /** The kiosk's channels, as the host's glue dispatches the page's calls. */
  channels: ChannelRegistry;
  /** One call from the page (`channels.dispatch`). */
  dispatch: ChannelRegistry['dispatch'];
  emu: EmulatorHandle;
  events: KioskEvent[];
  /** The operator's log lines, info and up. */
  lines: string[];
  /** Warning and error lines (what an operator is alerted by). */
  warnings: string[];
  /** The renderer's view of the session: state phases in order. */
  phases(): string[];
  /** The renderer's view of the call: state phases, credentials and mute changes, in order. */
  uiLog(): string[];
  spareLog(): Array<[SpareEvent['status'], string | null, string | undefined]>;
  /** The emulator's record of a session (asserted to exist). */
  session(liveId: string): EmulatedSession;
  /** Tap (`session.start`), answered once the session exists; returns its live id. */
  tap(arg?: unknown): Promise<string>;
  /** Until the session shows `phase` (real time, bounded). */
  reach(phase: string): Promise<void>;
  /** Hang up and let the billing read-back finish. */
  hangup(cause?: Parameters<Kiosk['calls']['hangup']>[0]): Promise<void>;
  /** Type 5 frames the emulator received for `liveId`. */
  hangupsSeen(liveId: string): number;
  /** Shut down, and check no timer is left behind. */
  close(): Promise<void>;
}

export interface KioskOnEmulatorOptions {
  /** Config file fields over an audio kiosk with a one-pixel avatar. */
  config?: Record<string, unknown>;
  knobs?: Partial<EmulatorKnobs>;
  /** The kiosk's options (createKiosk) over the helper's. */
  kiosk?: Partial<KioskOptions>;
}

/** No latency, no ending time, no spares (unless `config.prewarm` asks). */
export function kioskOnEmulator(options: KioskOnEmulatorOptions = {}): Promise<KioskOnEmulator> {
  return build({ prewarm: { mode: 'off' }, ...options.config }, { latencyMs: 0, endingMs: 0, ...options.knobs }, options.kiosk);
}

/** 50 ms latency, no warm-up, 300 ms ending, the kiosk's default spare settings, a key store that accepts. */
export function kioskOnSlowEmulator(options: KioskOnEmulatorOptions = {}): Promise<KioskOnEmulator> {
  return build(
    options.config ?? {},
    { latencyMs: 50, warmupMs: { audio: 0, video: 0 }, endingMs: 300, ...options.knobs },
    { persistApiKey: async () => {}, ...options.kiosk },
  );
}

async function build(configFields: Record<string, unknown>, knobs: Partial<EmulatorKnobs>, kioskOptions: Partial<KioskOptions> = {}): Promise<KioskOnEmulator> {
  const clock = new FakeClock(T0);
  const lines: string[] = [];
  const config = resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' }, ...configFields }, {});
  const channels = createChannelRegistry();
  const kiosk = await createKiosk({
    channels,
    config,
    apiKey: null,
    apiKeySource: 'none',
    clock,
    logger: createLogger({ level: 'info', sink: (line) => lines.push(line) }),
    startEmulator: (o) => startEmulator({ ...o, clock }),
    emulatorKnobs: knobs,
    ...kioskOptions,
  });
  const emu = kiosk.connection.emulator;
  assert.ok(emu, 'demo mode runs the emulator');
  const events: KioskEvent[] = [];
  kiosk.events.onEvent((e) => events.push(e));
  const h: KioskOnEmulator = {
    clock,
    kiosk,
    channels,
    dispatch: channels.dispatch,
    emu,
    events,
    lines,
    get warnings() {
      return lines.filter((l) => / (WARN|ERROR) /.test(l));
    },
    phases: () => events.flatMap((e) => (e.type === 'state' ? [e.state.phase] : [])),
    uiLog: () =>
      events.flatMap((e) => {
        if (e.type === 'state') return [e.state.phase];
        if (e.type === 'credentials') return [`credentials:${e.liveId}`];
        if (e.type === 'muted') return [`muted:${e.muted}`];
        return [];
      }),
    spareLog: () => events.filter((e): e is SpareEvent => e.type === 'spare').map((e) => [e.status, e.liveId, e.reason]),
    session(liveId) {
      const s = emu.getSession(liveId);
      assert.ok(s, `the emulator knows ${liveId}`);
      return s;
    },
    async tap(arg = {}) {
      const r = (await channels.dispatch(CHANNELS.sessionStart, arg)) as Result<{ liveId: string | null }>;
      assert.ok(r.ok, JSON.stringify(r));
      assert.ok(r.value.liveId, 'the session exists');
      return r.value.liveId;
    },
    async reach(phase) {
      await until(() => kiosk.calls.state.phase === phase, { realTimeoutMs: 5_000, message: `phase ${phase} (now ${kiosk.calls.state.phase})` });
    },
    async hangup(cause) {
      const r = await driveUntilSettled(clock, kiosk.calls.hangup(cause), { stepMs: 10 });
      assert.deepEqual(r, { ok: true, value: undefined });
    },
    hangupsSeen: (liveId) => emu.getSession(liveId)?.clientMessages.filter((m) => m.type === 5).length ?? -1,
    async close() {
      await driveUntilSettled(clock, kiosk.shutdown(), { stepMs: 10 });
      assert.equal(clock.pendingCount, 0, `timers left: ${clock.pendingDelays().join(', ')}`);
    },
  };
  return h;
}

export function value<T>(r: Result<T>): T {
  assert.equal(r.ok, true, JSON.stringify(r));
  return (r as { ok: true; value: T }).value;
}

/** A visitor approaches the attract screen; fake time passes until the spare's socket is open. Returns the spare's room. */
export async function approachSpare(h: KioskOnEmulator): Promise<string> {
  value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
  await advanceUntil(h.clock, () => h.kiosk.spares.phase === 'ready', { stepMs: 10, message: 'spare ready' });
  const created = h.spareLog().find(([s]) => s === 'created');
  assert.ok(created?.[1]);
  return created[1];
}

/**
 * One kiosk on the emulator per test. Registers (in the calling test file) an `afterEach` that closes the
 * kiosk the test made last (`close()`: shut down with no timers left, so a test that leaves one running
 * fails). `setup` makes a kiosk as `kioskOnEmulator` does; `closeNow` closes it before the test ends, for a
 * test that goes on after shutdown or must close it before other resources, and leaves afterEach nothing
 * to close.
 */
export function kioskOnEmulatorPerTest(): {
  setup: (...args: Parameters<typeof kioskOnEmulator>) => Promise<KioskOnEmulator>;
  closeNow: () => Promise<void>;
} {
  let current: KioskOnEmulator | null = null;
  afterEach(async () => {
    const h = current;
    current = null;
    await h?.close();
  });
  return {
    async setup(...args) {
      current = await kioskOnEmulator(...args);
      return current;
    },
    async closeNow() {
      await current?.close();
      current = null;
    },
  };
}

/** Shuts down, after each test, the kiosk that test made last (handed to the returned function). */
export function shutDownAfterEach(): (h: KioskOnEmulator) => KioskOnEmulator {
  let current: KioskOnEmulator | null = null;
  afterEach(async () => {
    const h = current;
    current = null;
    if (h) await driveUntilSettled(h.clock, h.kiosk.shutdown());
  });
  return (h) => (current = h);
}
