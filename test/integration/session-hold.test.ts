/**
 * SessionController holding a spare (`hold`) and releasing it at the tap, against the real emulator on a
 * FakeClock. These tests pin what the service sees: one create, one socket that carries nothing but
 * keep-alives while held, conn_init on that socket at the release (live one round trip later), and a
 * held session given up or expired ends with type 5 and no conn_init, unbilled.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../helpers/fake-clock.ts';
import { ServiceClient } from '../../electron/core/rest-client.ts';
import { SessionController } from '../../electron/core/session-controller.ts';
import type { SessionPhase, StartOptions } from '../../electron/core/session-types.ts';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { advanceUntil, driveUntilSettled, until } from '../helpers/until.ts';

const T0 = 1_700_000_000_000;
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const AUDIO: StartOptions = { callMode: 'audio', avatar: { persona: 'A friendly guide.', image: PNG, name: 'Guide' } };

interface Harness {
  clock: FakeClock;
  emu: EmulatorHandle;
  client: ServiceClient;
  controller: SessionController;
  phases: SessionPhase[];
  creates: number;
}

let current: Harness | null = null;

afterEach(async () => {
  const h = current;
  current = null;
  if (!h) return;
  await h.controller.dispose();
  await h.emu.close();
  assert.equal(h.clock.pendingCount, 0, `pending timers: ${h.clock.pendingDelays().join(', ')}`);
});

async function setup(): Promise<Harness> {
  const clock = new FakeClock(T0);
  const emu = await startEmulator({ clock, port: 0, knobs: { latencyMs: 50, endingMs: 100 } });
  const client = new ServiceClient({ target: { surface: 'direct', baseUrl: emu.baseUrl, apiKey: emu.apiKey }, clock });
  const h: Harness = { clock, emu, client, controller: null as unknown as SessionController, phases: [], creates: 0 };
  const counting = {
    createSession: (...args: Parameters<ServiceClient['createSession']>) => {
      h.creates += 1;
      return client.createSession(...args);
    },
    querySession: (...args: Parameters<ServiceClient['querySession']>) => client.querySession(...args),
    socketRequest: (liveId: string) => client.socketRequest(liveId),
  };
  h.controller = new SessionController({ client: counting, clock });
  h.controller.onEvent((e) => {
    if (e.type === 'state') h.phases.push(e.state.phase);
  });
  current = h;
  return h;
}

/** Hold a spare (as the spare keeper does) until its socket is open and holding conn_init. */
async function held(h: Harness, holdForMs = 90_000): Promise<{ liveId: string; result: Promise<unknown> }> {
  const result = h.controller.hold(AUDIO, { holdForMs });
  await advanceUntil(h.clock, () => h.controller.state.phase === 'held' && h.controller.state.socketOpen, { stepMs: 10 });
  const state = h.controller.state;
  assert.ok(state.phase === 'held');
  h.phases.length = 0;
  return { liveId: state.liveId, result };
}

const frames = (h: Harness, liveId: string) => h.emu.getSession(liveId)!.clientMessages.map((m) => m.type);

describe('SessionController holding a spare, against the emulator', () => {
  it('release sends conn_init on the held socket (no second create, no new socket) and goes live one round trip later', async () => {
    const h = await setup();
    const { liveId, result } = await held(h);
    assert.equal(h.emu.getSession(liveId)!.status, 'waiting', 'held: never billed');
    assert.deepEqual(frames(h, liveId), [], 'nothing but keep-alives so far');
    const tapAtMs = h.clock.now();
    const released = h.controller.release();
    assert.equal(released, result);
    await advanceUntil(h.clock, () => h.controller.state.phase === 'live', { stepMs: 10 });
    const state = h.controller.state;
    assert.ok(state.phase === 'live');
    assert.equal(state.sinceMs - tapAtMs, 50);
    assert.deepEqual(h.phases, ['connecting', 'live']);
    assert.equal(h.creates, 1);
    assert.equal(h.emu.listSessions().length, 1);
    assert.equal(h.emu.getSession(liveId)!.socketsOpened, 1);
    assert.deepEqual(frames(h, liveId), [1]);
    const terminal = await driveUntilSettled(h.clock, h.controller.hangup(), { stepMs: 50 });
    assert.equal(await released, terminal);
    assert.ok(terminal?.phase === 'ended');
    assert.deepEqual(frames(h, liveId), [1, 5]);
    assert.equal(terminal.summary.timingsMs.create, 0, 'timings count from the tap');
  });

  it('a hangup while held goes out as type 5 on its socket, never conn_init, never billed', async () => {
    const h = await setup();
    const { liveId, result } = await held(h);
    const terminal = await driveUntilSettled(h.clock, h.controller.hangup(), { stepMs: 10 });
    assert.equal(await result, terminal);
    assert.ok(terminal?.phase === 'ended');
    assert.equal(terminal.summary.wentLive, false);
    await until(() => h.emu.getSession(liveId)!.status !== 'waiting');
    assert.deepEqual(frames(h, liveId), [5]);
    assert.equal(h.emu.getSession(liveId)!.billedSeconds, 0);
    assert.equal(h.emu.getSession(liveId)!.socketsOpened, 1);
  });

  it('expires unused after holdForMs: type 5 on its socket, never conn_init, never billed', async () => {
    const h = await setup();
    const { liveId, result } = await held(h, 20_000);
    const terminal = await driveUntilSettled(h.clock, result, { stepMs: 1_000 });
    assert.ok((terminal as { phase: string }).phase === 'ended');
    await until(() => h.emu.getSession(liveId)!.status !== 'waiting');
    assert.deepEqual(frames(h, liveId).filter((t) => t !== 4), [5]);
    assert.equal(h.emu.getSession(liveId)!.billedSeconds, 0);
  });
});
