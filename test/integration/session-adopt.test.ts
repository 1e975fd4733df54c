/**
 * SessionController adopting a created session and its pre-opened control socket,
 * against the real emulator on a FakeClock. The machine runs as for a fresh session; these tests pin what
 * changes on the wire: no create request, conn_init on the socket opened earlier, and a hangup before that
 * point goes out on the same socket without conn_init.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../helpers/fake-clock.ts';
import { ControlSocket } from '../../electron/core/control-socket.ts';
import type { CreateSessionResponse } from '../../electron/core/protocol.ts';
import { ServiceClient } from '../../electron/core/rest-client.ts';
import { SessionController, type AdoptedSession } from '../../electron/core/session-controller.ts';
import type { SessionPhase, StartOptions } from '../../electron/core/session-types.ts';
import { wsTransportFactory } from '../../electron/core/transport.ts';
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

/** A spare made by hand: created over REST, its socket open and holding conn_init. */
async function spare(h: Harness): Promise<AdoptedSession & { created: CreateSessionResponse; socket: ControlSocket }> {
  const created = await driveUntilSettled(h.clock, h.client.createSession({ call_mode: 'audio', avatar: { persona: 'A friendly guide.', image_uri: PNG, name: 'Guide' } }), { stepMs: 10 });
  const { url, headers } = h.client.socketRequest(created.live.id);
  let open = false;
  const socket = new ControlSocket({
    liveId: created.live.id,
    url,
    headers,
    transportFactory: wsTransportFactory,
    clock: h.clock,
    holdConnInit: true,
    onOutcome: (o) => {
      if (o.kind === 'open') open = true;
    },
  });
  await advanceUntil(h.clock, () => open, { stepMs: 10 });
  return { created, socket };
}

const frames = (h: Harness, liveId: string) => h.emu.getSession(liveId)!.clientMessages.map((m) => m.type);

describe('SessionController adopting a spare', () => {
  it('sends conn_init on the adopted socket (no create, no new socket) and goes live one round trip later', async () => {
    const h = await setup();
    const adopt = await spare(h);
    const liveId = adopt.created.live.id;
    const tapAtMs = h.clock.now();
    const result = h.controller.start(AUDIO, { adopt });
    await advanceUntil(h.clock, () => h.controller.state.phase === 'live', { stepMs: 10 });
    const state = h.controller.state;
    assert.ok(state.phase === 'live');
    assert.equal(state.sinceMs - tapAtMs, 50);
    assert.deepEqual(h.phases, ['creating', 'connecting', 'live']);
    assert.equal(h.creates, 0);
    assert.equal(h.emu.listSessions().length, 1);
    assert.equal(h.emu.getSession(liveId)!.socketsOpened, 1);
    assert.deepEqual(frames(h, liveId), [1]);
    const terminal = await driveUntilSettled(h.clock, h.controller.hangup(), { stepMs: 50 });
    assert.equal(await result, terminal);
    assert.ok(terminal?.phase === 'ended');
    assert.deepEqual(frames(h, liveId), [1, 5]);
    assert.equal(terminal.summary.timingsMs.create, 0, 'no create on the tap');
  });

  it('a hangup before the first open-socket goes out as type 5 on the adopted socket, never conn_init', async () => {
    const h = await setup();
    const adopt = await spare(h);
    const liveId = adopt.created.live.id;
    const result = h.controller.start(AUDIO, { adopt });
    const terminal = await driveUntilSettled(h.clock, h.controller.hangup(), { stepMs: 10 });
    assert.equal(await result, terminal);
    assert.ok(terminal?.phase === 'failed');
    assert.equal(terminal.error.code, 'cancelled');
    await until(() => h.emu.getSession(liveId)!.status !== 'waiting');
    assert.deepEqual(frames(h, liveId), [5]);
    assert.equal(h.emu.getSession(liveId)!.billedSeconds, 0);
    assert.equal(h.emu.getSession(liveId)!.socketsOpened, 1);
  });

  it('opens a fresh socket when the adopted one closed meanwhile', async () => {
    const h = await setup();
    const adopt = await spare(h);
    const liveId = adopt.created.live.id;
    adopt.socket.close();
    await adopt.socket.closed;
    h.controller.start(AUDIO, { adopt });
    await advanceUntil(h.clock, () => h.controller.state.phase === 'live', { stepMs: 10 });
    assert.equal(h.emu.getSession(liveId)!.socketsOpened, 2);
    assert.deepEqual(frames(h, liveId), [1]);
    assert.equal(h.creates, 0);
  });
});
