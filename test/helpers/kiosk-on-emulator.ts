/**
 * A KioskService in demo mode against the real emulator (HTTP + WebSocket on 127.0.0.1:0), both on one
 * FakeClock, for unit tests that need whole calls. The emulator answers with no latency, so fake time
 * only moves when a test advances it: figures timed from the tap are exact.
 */
import assert from 'node:assert/strict';
import { CHANNELS, type KioskEvent, type Result } from '../../electron/contract.ts';
import { FakeClock } from '../../electron/core/clock.ts';
import { createLogger } from '../../electron/core/log.ts';
import { startEmulator, type EmulatorHandle, type EmulatorKnobs } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createKioskService, type KioskService, type KioskServiceOptions } from '../../electron/kiosk/kiosk-service.ts';
import { driveUntilSettled, until } from './until.ts';

export const T0 = 1_700_000_000_000;
export const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export interface KioskOnEmulator {
  clock: FakeClock;
  service: KioskService;
  emu: EmulatorHandle;
  events: KioskEvent[];
  /** Warning lines the service logged (what an operator sees in the log). */
  warnings: string[];
  /** The renderer's view of the session: state phases in order. */
  phases(): string[];
  /** Tap (`session.start`), answered once the session exists; returns its live id. */
  tap(arg?: unknown): Promise<string>;
  /** Until the session shows `phase` (real time, bounded). */
  reach(phase: string): Promise<void>;
  /** Hang up and let the billing read-back finish. */
  hangup(cause?: Parameters<KioskService['hangup']>[0]): Promise<void>;
  /** Type 5 frames the emulator received for `liveId`. */
  hangupsSeen(liveId: string): number;
  close(): Promise<void>;
}

export async function kioskOnEmulator(
  options: { config?: Record<string, unknown>; knobs?: Partial<EmulatorKnobs>; service?: Partial<KioskServiceOptions> } = {},
): Promise<KioskOnEmulator> {
  const clock = new FakeClock(T0);
  const warnings: string[] = [];
  const logger = createLogger({ level: 'warn', sink: (line) => warnings.push(line) });
  const config = resolveConfig({ callMode: 'audio', prewarm: { mode: 'off' }, avatar: { imagePath: TINY_PNG, persona: 'A test persona.' }, ...options.config }, {});
  const service = await createKioskService({
    config,
    apiKey: null,
    apiKeySource: 'none',
    clock,
    logger,
    startEmulator: (o) => startEmulator({ ...o, clock }),
    emulatorKnobs: { latencyMs: 0, endingMs: 0, ...options.knobs },
    ...options.service,
  });
  const emu = service.emulator;
  assert.ok(emu, 'demo mode runs the emulator');
  const events: KioskEvent[] = [];
  service.onEvent((e) => events.push(e));
  const h: KioskOnEmulator = {
    clock,
    service,
    emu,
    events,
    warnings,
    phases: () => events.flatMap((e) => (e.type === 'state' ? [e.state.phase] : [])),
    async tap(arg = {}) {
      const r = (await service.handle(CHANNELS.sessionStart, arg)) as Result<{ liveId: string | null }>;
      assert.ok(r.ok, JSON.stringify(r));
      assert.ok(r.value.liveId, 'the session exists');
      return r.value.liveId;
    },
    async reach(phase) {
      await until(() => service.state.phase === phase, { realTimeoutMs: 5_000, message: `phase ${phase} (now ${service.state.phase})` });
    },
    async hangup(cause) {
      const r = await driveUntilSettled(clock, service.hangup(cause), { stepMs: 10 });
      assert.deepEqual(r, { ok: true, value: undefined });
    },
    hangupsSeen: (liveId) => emu.getSession(liveId)?.clientMessages.filter((m) => m.type === 5).length ?? -1,
    async close() {
      await driveUntilSettled(clock, service.shutdown(), { stepMs: 10 });
      assert.equal(clock.pendingCount, 0, `timers left: ${clock.pendingDelays().join(', ')}`);
    },
  };
  return h;
}
