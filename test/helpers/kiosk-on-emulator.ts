/**
 * A kiosk service in demo mode against the in-process emulator on 127.0.0.1:0, everything on one FakeClock
 * (the emulator answers after `latencyMs` fake ms), with the renderer's events and the operator's log
 * recorded. For unit tests that follow one tap as the renderer and the service see it.
 */
import assert from 'node:assert/strict';
import { afterEach } from 'node:test';
import type { KioskEvent, Result, SpareEvent } from '../../electron/contract.ts';
import { FakeClock } from '../../electron/core/clock.ts';
import { createLogger } from '../../electron/core/log.ts';
import { startEmulator, type EmulatedSession, type EmulatorHandle, type EmulatorKnobs } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createKioskService, type KioskService, type KioskServiceOptions } from '../../electron/kiosk/kiosk-service.ts';
import { driveUntilSettled } from './until.ts';

export const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export interface KioskOnEmulator {
  clock: FakeClock;
  service: KioskService;
  emu: EmulatorHandle;
  events: KioskEvent[];
  /** The operator's log lines (info and up). */
  lines: string[];
  spareLog(): Array<[SpareEvent['status'], string | null, string | undefined]>;
  /** The renderer's view of the call: state phases, credentials and mute changes, in order. */
  uiLog(): string[];
  session(liveId: string): EmulatedSession;
}

export interface KioskOnEmulatorOptions {
  /** Config file fields over an audio kiosk with a one-pixel avatar. */
  config?: Record<string, unknown>;
  /** Over 50 ms latency, no warm-up, 300 ms ending. */
  knobs?: Partial<EmulatorKnobs>;
  service?: Partial<KioskServiceOptions>;
}

export async function kioskOnEmulator(options: KioskOnEmulatorOptions = {}): Promise<KioskOnEmulator> {
  const clock = new FakeClock(1_700_000_000_000);
  const lines: string[] = [];
  const config = resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' }, ...options.config }, {});
  const service = await createKioskService({
    config,
    apiKey: null,
    apiKeySource: 'none',
    clock,
    logger: createLogger({ level: 'info', sink: (l) => lines.push(l) }),
    persistApiKey: async () => {},
    startEmulator: (o) => startEmulator({ ...o, clock }),
    emulatorKnobs: { latencyMs: 50, warmupMs: { audio: 0, video: 0 }, endingMs: 300, ...options.knobs },
    ...options.service,
  });
  const emu = service.emulator;
  assert.ok(emu);
  const events: KioskEvent[] = [];
  service.onEvent((e) => events.push(e));
  return {
    clock,
    service,
    emu,
    events,
    lines,
    spareLog: () => events.filter((e): e is SpareEvent => e.type === 'spare').map((e) => [e.status, e.liveId, e.reason]),
    uiLog: () =>
      events.flatMap((e) => {
        if (e.type === 'state') return [e.state.phase];
        if (e.type === 'credentials') return [`credentials:${e.liveId}`];
        if (e.type === 'muted') return [`muted:${e.muted}`];
        return [];
      }),
    session: (liveId) => {
      const s = emu.getSession(liveId);
      assert.ok(s, `the emulator knows ${liveId}`);
      return s;
    },
  };
}

export function value<T>(r: Result<T>): T {
  assert.equal(r.ok, true, JSON.stringify(r));
  return (r as { ok: true; value: T }).value;
}

/** Shuts down, after each test, the kiosk that test made last (handed to the returned function). */
export function shutDownAfterEach(): (h: KioskOnEmulator) => KioskOnEmulator {
  let current: KioskOnEmulator | null = null;
  afterEach(async () => {
    const h = current;
    current = null;
    if (h) await driveUntilSettled(h.clock, h.service.shutdown());
  });
  return (h) => (current = h);
}
