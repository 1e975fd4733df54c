/**
 * The fair readings of what the service's spec leaves open, as emulator knobs, and the two clients that
 * must hold a call through each: the CLI's probe (`runProbe`, in-process so it can share the fake clock)
 * and the kiosk service (direct surface, the emulator as its service, a keep-alive file in a temp folder).
 * Everything runs on one FakeClock over real loopback HTTP and WebSockets (test/helpers/until.ts).
 */
import assert from 'node:assert/strict';
import type { KioskEvent } from '../../electron/contract.ts';
import { FakeClock } from './fake-clock.ts';
import { createLogger } from '../../electron/core/log.ts';
import type { SessionState } from '../../electron/core/session-types.ts';
import { runProbe, type CliIo, type ProbeOptions } from '../../electron/cli/probe.ts';
import { startEmulator, type EmulatorHandle, type EmulatorKnobs } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createKeepAliveStore } from '../../electron/kiosk/keep-alive-store.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';
import { recordingLogger } from './recording-logger.ts';
import { until } from './until.ts';

export const T0 = 1_700_000_000_000;
export const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
/** A persona no report may ever show. */
export const PERSONA = 'Persona-canary: Ada the museum guide, who loves tide tables.';
/** Every reading's call is held this long (the length over which a ping-frames server made the client reconnect twice). */
export const HOLD_MS = 40_000;

/** What the client does over the held call in a reading. */
export type Outcome =
  /** live, kept alive, never reconnects, ended by us, billed 40 s. */
  | 'held'
  /** The first connection is closed right after our keep-alive; one reconnect, then held with a keep-alive the server takes. */
  | 'adapts';

export interface Reading {
  name: string;
  knobs: Partial<EmulatorKnobs>;
  outcome: Outcome;
  /** `adapts`: the keep-alive the second connection uses. */
  adaptsTo?: 'ping-echo' | 'ws-pong';
}

/** The readings a whole call must survive (the spec's "not shown" items the wire can differ on). */
export const HELD_READINGS: readonly Reading[] = [
  { name: 'ping as JSON type 3 (our assumption)', knobs: {}, outcome: 'held' },
  { name: 'ping as JSON of another type, named heartbeat in its payload', knobs: { pingFormat: 'json-other-type' }, outcome: 'held' },
  { name: 'ping as JSON with a named type', knobs: { pingFormat: 'json-named' }, outcome: 'held' },
  { name: 'ping as WebSocket ping frames only', knobs: { pingFormat: 'ws-frames' }, outcome: 'held' },
  { name: 'no ping at all', knobs: { pingFormat: 'none' }, outcome: 'held' },
  { name: 'ack typed by name', knobs: { ackType: 'conn_init_ack' }, outcome: 'held' },
  { name: 'ack of type 7 with a flat payload', knobs: { ackType: 7, ackShape: 'flat' }, outcome: 'held' },
  { name: 'ack nested under conn_init', knobs: { ackShape: 'echo' }, outcome: 'held' },
  { name: 'ack at the top level', knobs: { ackShape: 'top' }, outcome: 'held' },
  { name: 'create answers 201', knobs: { createStatus: 201 }, outcome: 'held' },
  { name: 'ending lasts 0 s', knobs: { endingMs: 0 }, outcome: 'held' },
  { name: 'ending lasts 20 s', knobs: { endingMs: 20_000 }, outcome: 'held' },
  { name: 'unknown extra fields everywhere', knobs: { extraFields: true }, outcome: 'held' },
  { name: 'timestamps as numbers', knobs: { timestamps: 'number' }, outcome: 'held' },
  { name: 'a strict server closing with 1003 on an unknown type', knobs: { strictCloseCode: 1003 }, outcome: 'adapts', adaptsTo: 'ping-echo' },
  { name: 'a strict server closing with 1008 on an unknown type', knobs: { strictCloseCode: 1008 }, outcome: 'adapts', adaptsTo: 'ping-echo' },
  { name: 'a strict server closing with 4400, pinging with a named type', knobs: { strictCloseCode: 4400, pingFormat: 'json-named' }, outcome: 'adapts', adaptsTo: 'ping-echo' },
  { name: 'a strict server closing with 1008, pinging with WebSocket frames only', knobs: { strictCloseCode: 1008, pingFormat: 'ws-frames' }, outcome: 'adapts', adaptsTo: 'ws-pong' },
];

export const ERROR_BODY_READINGS = ['nested', 'flat', 'detail', 'html', 'empty'] as const satisfies ReadonlyArray<EmulatorKnobs['errorBody']>;

/** An emulator on a fake clock: no latency, no warm-up, `ending` over at once unless the reading says. */
export async function emulatorFor(knobs: Partial<EmulatorKnobs>, clock = new FakeClock(T0)): Promise<{ clock: FakeClock; emu: EmulatorHandle }> {
  const emu = await startEmulator({ clock, knobs: { latencyMs: 0, warmupMs: { audio: 0, video: 0 }, endingMs: 0, ...knobs } });
  return { clock, emu };
}

export interface ProbeRun {
  done: Promise<number>;
  stdout: () => string;
  stderr: () => string;
  /** The controller's log messages (its state changes among them). */
  logMessages: () => string[];
}

/** `cli probe` in this process against `emu` (direct surface), on `clock`. */
export function probe(emu: EmulatorHandle, clock: FakeClock, options: Partial<ProbeOptions> = {}, apiKey = emu.apiKey): ProbeRun {
  let stdout = '';
  let stderr = '';
  const logger = recordingLogger();
  const io: CliIo = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: {},
    onSignal: () => () => {},
    logger,
    clock,
  };
  const done = runProbe(
    { baseUrl: emu.baseUrl, apiKey, mode: 'audio', image: TINY_PNG, persona: PERSONA, name: 'Ada', holdSeconds: HOLD_MS / 1000, json: true, ...options },
    io,
  );
  return { done, stdout: () => stdout, stderr: () => stderr, logMessages: () => logger.lines.map((l) => l.message) };
}

export interface KioskRun {
  kiosk: Kiosk;
  /** State phases the renderer was sent, in order. */
  phases: () => string[];
  state: () => SessionState;
  /** Warning and error lines of the kiosk's log. */
  warnings: () => string[];
}

/**
 * A kiosk whose service is `emu` (direct surface, the emulator's key), with its keep-alive file in
 * `dataDir`, no spares (unless `config` asks) and no renderer (conn_init goes out without waiting for an RTC join).
 */
export async function kioskFor(emu: EmulatorHandle, clock: FakeClock, dataDir: string, config: Record<string, unknown> = {}): Promise<KioskRun> {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', sink: (line) => lines.push(line) });
  const kiosk = await createKiosk({
    config: resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: PERSONA, name: 'Ada' }, prewarm: { mode: 'off' }, service: { baseUrl: emu.baseUrl }, ...config }, {}),
    apiKey: emu.apiKey,
    apiKeySource: 'env',
    clock,
    logger,
    awaitRendererRtc: false,
    keepAliveFor: createKeepAliveStore({ dir: dataDir, logger }).keepAliveFor,
  });
  const events: KioskEvent[] = [];
  kiosk.events.onEvent((e) => events.push(e));
  return {
    kiosk,
    phases: () => events.flatMap((e) => (e.type === 'state' ? [e.state.phase] : [])),
    state: () => kiosk.calls.state,
    warnings: () => lines.filter((l) => / (WARN|ERROR) /.test(l)),
  };
}

/** The one session the emulator knows that is not in `before`. */
export function newSessionId(emu: EmulatorHandle, before: ReadonlySet<string> = new Set()): string {
  const ids = emu.listSessions().map((s) => s.id).filter((id) => !before.has(id));
  assert.equal(ids.length, 1, `one new session, got ${ids.length}`);
  return ids[0]!;
}

/** Waits (real time, fake time standing still) until the emulator has the session in `status`. */
export async function sessionReaches(emu: EmulatorHandle, liveId: string, statuses: readonly string[]): Promise<void> {
  await until(() => statuses.includes(emu.getSession(liveId)?.status ?? ''), { realTimeoutMs: 5_000, message: `session ${liveId} to reach ${statuses.join('/')}` });
}
