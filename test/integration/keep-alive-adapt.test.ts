/**
 * The kiosk against a strict server (it closes the socket with 1008 on a message type it does not know, so
 * on our type-4 pong): the call stays up, the second connection uses the keep-alive that works, the kiosk
 * remembers it for that service URL (keep-alive.json in its data folder), and after a restart it uses it
 * from the first connection on. A corrupt file means the default keep-alive, logged. One FakeClock, real
 * loopback sockets.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeClock } from '../helpers/fake-clock.ts';
import type { EmulatorHandle } from '../../electron/emulator/index.ts';
import { KEEP_ALIVE_FILE } from '../../electron/kiosk/keep-alive-store.ts';
import { emulatorFor, kioskFor, newSessionId, type KioskRun } from '../helpers/fair-readings.ts';
import { tempDirsRemovedAfterEach } from '../helpers/temp-dirs.ts';
import { advanceInSteps, advanceUntil, driveUntilSettled, until } from '../helpers/until.ts';

const tempDir = tempDirsRemovedAfterEach('keep-alive-adapt-');
let open: { clock: FakeClock; emu: EmulatorHandle; kiosks: KioskRun[] } | null = null;

afterEach(async () => {
  const o = open;
  open = null;
  if (!o) return;
  for (const k of o.kiosks) await driveUntilSettled(o.clock, k.kiosk.shutdown(), { stepMs: 250 });
  await o.emu.close();
  assert.equal(o.clock.pendingCount, 0, `timers left: ${o.clock.pendingDelays().join(', ')}`);
});

async function strictService(pingFormat: 'json' | 'ws-frames' = 'json') {
  open = { ...(await emulatorFor({ strictCloseCode: 1008, pingFormat })), kiosks: [] };
  return open;
}

async function kiosk(dataDir: string, config: Record<string, unknown> = {}): Promise<KioskRun> {
  const k = await kioskFor(open!.emu, open!.clock, dataDir, config);
  open!.kiosks.push(k);
  return k;
}

/** One 20 s call on `k`: tap, live, hold, hang up. Returns the session's frames per socket (`type#seq`). */
async function call(k: KioskRun): Promise<{ liveId: string; sockets: string[][] }> {
  const { emu, clock } = open!;
  const before = new Set(emu.listSessions().map((s) => s.id));
  assert.equal((await k.kiosk.calls.start()).ok, true);
  await until(() => k.state().phase === 'live', { realTimeoutMs: 5_000, message: 'live' });
  const liveId = newSessionId(emu, before);
  await advanceInSteps(clock, 20_000, { stepMs: 500 });
  await driveUntilSettled(clock, k.kiosk.calls.hangup(), { stepMs: 250 });
  await until(() => k.state().phase === 'ended', { realTimeoutMs: 5_000, message: 'ended' });
  const sockets: string[][] = [];
  for (const m of emu.getSession(liveId)!.clientMessages) {
    if (m.seq_id === 1) sockets.push([]);
    sockets.at(-1)!.push(`${m.type}#${m.seq_id}`);
  }
  return { liveId, sockets };
}

const typesOf = (socket: string[]) => socket.map((f) => f.split('#')[0]);
const fileOf = (dir: string) => JSON.parse(readFileSync(join(dir, KEEP_ALIVE_FILE), 'utf8')) as unknown;

describe('the kiosk adapts its keep-alive to a strict server and remembers it', () => {
  it('the call stays up, the second connection echoes the ping, the next call and a restart start with the echo', async () => {
    const { emu } = await strictService();
    const dir = tempDir();
    const first = await kiosk(dir);

    const one = await call(first);
    assert.equal(one.sockets.length, 2, 'one reconnect, after the refused pong');
    assert.deepEqual(typesOf(one.sockets[0]!), ['1', '4']);
    assert.deepEqual([...new Set(typesOf(one.sockets[1]!).slice(1, -1))], ['3'], 'echoes of the type-3 ping');
    assert.deepEqual(first.phases(), ['creating', 'connecting', 'live', 'reconnecting', 'live', 'ending', 'ended']);
    const state = first.state();
    assert.ok(state.phase === 'ended');
    assert.deepEqual([state.summary.billedSeconds, state.summary.reconnects, emu.getSession(one.liveId)!.billedSeconds], [20, 1, 20], 'billing never stopped');
    assert.deepEqual(fileOf(dir), { version: 1, services: { [emu.baseUrl]: 'ping-echo' } });
    assert.deepEqual(
      first.warnings().map((l) => l.replace(/^\S+ /, '')).filter((l) => l.includes('keep-alive')),
      ['WARN control socket: the service closed the socket (1008) right after our keep-alive; the next connection sends a reply shaped like the server\'s own ping {"from":"pong-message","to":"ping-echo","code":1008}'],
    );

    const two = await call(first);
    assert.equal(two.sockets.length, 1, 'the same kiosk: one socket from the start');

    await driveUntilSettled(open!.clock, first.kiosk.shutdown(), { stepMs: 250 });
    open!.kiosks = [];
    const restarted = await kiosk(dir);
    const three = await call(restarted);
    assert.equal(three.sockets.length, 1, 'after a restart: one socket from the start');
    assert.deepEqual([...new Set(typesOf(three.sockets[0]!).slice(1, -1))], ['3'], 'the echo from the first keep-alive on');
    assert.deepEqual(restarted.phases(), ['creating', 'connecting', 'live', 'ending', 'ended']);
  });

  it('a server that pings with WebSocket frames only: the kiosk moves to pong frames and remembers that', async () => {
    const { emu } = await strictService('ws-frames');
    const dir = tempDir();
    const k = await kiosk(dir);
    const one = await call(k);
    assert.deepEqual(one.sockets.map(typesOf), [['1', '4'], ['1', '5']]);
    assert.deepEqual(fileOf(dir), { version: 1, services: { [emu.baseUrl]: 'ws-pong' } });
    const two = await call(k);
    assert.deepEqual(two.sockets.map(typesOf), [['1', '5']]);
  });

  it('a spare session’s socket, held before conn_init, uses the keep-alive that works too, and the tap goes live on it', async () => {
    const { emu, clock } = await strictService();
    const dir = tempDir();
    await call(await kiosk(dir)); // learns the echo
    await driveUntilSettled(clock, open!.kiosks[0]!.kiosk.shutdown(), { stepMs: 250 });
    open!.kiosks = [];
    const k = await kiosk(dir, { prewarm: { mode: 'always' }, presence: { cameraEnabled: false } });
    const before = new Set(emu.listSessions().map((s) => s.id));
    assert.equal(k.kiosk.availability.report({ showing: true, present: null }).ok, true);
    await advanceUntil(clock, () => k.kiosk.spares.phase === 'ready', { stepMs: 50, message: 'spare ready' });
    const spareId = newSessionId(emu, before);
    await advanceInSteps(clock, 20_000, { stepMs: 500 });
    const held = emu.getSession(spareId)!;
    assert.deepEqual([held.status, held.socketsOpened, held.connInits], ['waiting', 1, 0], 'the held socket was kept 20 s');
    assert.deepEqual([...new Set(held.clientMessages.map((m) => m.type))], [3], 'echoes only, never our pong message');
    assert.equal(k.kiosk.availability.report({ showing: false, present: null }).ok, true);
    assert.equal((await k.kiosk.calls.start()).ok, true);
    await until(() => k.state().phase === 'live', { realTimeoutMs: 5_000, message: 'live on the spare' });
    assert.deepEqual([emu.getSession(spareId)!.status, emu.getSession(spareId)!.socketsOpened], ['on_live', 1], 'the tap took the spare and its socket');
  });

  for (const [what, text, logged] of [
    ['not JSON', '{"version":1,', 'The keep-alive file is not valid JSON; using the default keep-alive (it is replaced on the next change)'],
    ['an unknown style', '{"version":1,"services":{"x":"shout"}}', 'The keep-alive file is not in the expected form; using the default keep-alive (it is replaced on the next change)'],
  ] as const) {
    it(`a keep-alive file with ${what}: the default keep-alive, logged, and the file replaced once the service shows its choice`, async () => {
      const { emu } = await strictService();
      const dir = tempDir();
      writeFileSync(join(dir, KEEP_ALIVE_FILE), text);
      const k = await kiosk(dir);
      assert.equal(k.warnings().filter((l) => l.includes(logged)).length, 1);
      const one = await call(k);
      assert.equal(one.sockets.length, 2, 'started from the default, refused once');
      assert.deepEqual(fileOf(dir), { version: 1, services: { [emu.baseUrl]: 'ping-echo' } });
    });
  }
});
