/**
 * The spare's ends where a room could be left open (credits are the venue's money): shutdown before the
 * create was sent, with the create in flight, with a create that never answers; a spare dropped while its
 * create is in flight; a spare whose socket had not opened yet; a tap that waits for a spare that is not
 * ready; and the socket settings the kiosk passes on. Each test asserts what reaches the service (creates
 * sent or aborted, type 5 frames and on which socket) and when shutdown settles, with a fake clock and fake
 * sockets.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { BuiltCreateRequest } from '../../../electron/core/avatar-input.ts';
import type { StartOptions } from '../../../electron/core/session-types.ts';
import type { SpareEvent } from '../../../electron/contract.ts';
import { CREATE_ANSWER_WAIT_MS, SpareManager, TAKE_WAIT_MS, type PrewarmSettings } from '../../../electron/kiosk/spare.ts';
import { ScriptedClient, readySpare, types } from '../../helpers/scripted-spare-client.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';

const AVATAR = { persona: 'A guide.', image: 'data:image/png;base64,AAAA', name: 'Ava', voice: 'Tina' };
const START = (): StartOptions => ({ callMode: 'video', avatar: { ...AVATAR } }) as StartOptions;

function setup(options: { settings?: Partial<PrewarmSettings>; holdBuild?: boolean; keepAliveIntervalMs?: number; deadAfterMs?: number } = {}) {
  const clock = new FakeClock();
  const client = new ScriptedClient({ rejectOnAbort: true });
  const transports = new FakeTransports();
  const events: SpareEvent[] = [];
  const warnings: string[] = [];
  let releaseBuild: () => void = () => undefined;
  const built = (o: StartOptions): BuiltCreateRequest => ({ request: { call_mode: o.callMode, avatar: { persona: o.avatar.persona, image_uri: String(o.avatar.image) } }, warnings: [] });
  const spares = new SpareManager({
    settings: { mode: 'on-approach', maxAgeSeconds: 90, maxPerHour: 40, ...options.settings },
    getClient: () => client,
    startOptions: START,
    emit: (e) => events.push(e),
    clock,
    transportFactory: transports.factory,
    logger: { debug: () => undefined, info: () => undefined, warn: (message: string) => void warnings.push(message), error: () => undefined },
    buildRequest: (o) => (options.holdBuild ? new Promise((ok) => (releaseBuild = () => ok(built(o)))) : Promise.resolve(built(o))),
    ...(options.keepAliveIntervalMs !== undefined ? { keepAliveIntervalMs: options.keepAliveIntervalMs } : {}),
    ...(options.deadAfterMs !== undefined ? { deadAfterMs: options.deadAfterMs } : {}),
  });
  const log = () => events.map((e) => [e.status, e.liveId, e.reason]);
  return { clock, client, transports, spares, log, warnings, releaseBuild: () => releaseBuild() };
}

/** Start `close()` and report whether it has settled. */
function closing(spares: SpareManager) {
  let settled = false;
  const done = spares.close().then(() => void (settled = true));
  return { done, settled: () => settled };
}

describe('spare: ends where a room could be left open', () => {
  it('shutdown before the create was sent: the create is never sent, no socket is opened, and shutdown settles', async () => {
    const h = setup({ holdBuild: true });
    h.spares.report({ showing: true, present: true });
    await flushMicrotasks();
    const c = closing(h.spares);
    h.releaseBuild(); // the request is built after shutdown began
    await flushMicrotasks();
    await c.done;
    assert.equal(h.client.creates.length, 0, 'no create after shutdown');
    assert.equal(h.transports.all.length, 0, 'no socket: there is no room');
    assert.deepEqual(h.log(), [['expired', null, 'shutdown']]);
    assert.equal(h.clock.pendingCount, 0);
  });

  it('shutdown with the create in flight: it waits for the answer, closes that room with type 5 over a hangup-only socket, then settles', async () => {
    const h = setup();
    h.spares.report({ showing: true, present: true });
    await flushMicrotasks();
    assert.equal(h.client.creates.length, 1);
    const c = closing(h.spares);
    await flushMicrotasks();
    assert.equal(c.settled(), false, 'shutdown waits for the create');
    assert.equal(h.client.creates[0]!.signal?.aborted, false, 'the create is not given up before its bound');
    await h.clock.advance(CREATE_ANSWER_WAIT_MS - 1);
    assert.equal(h.client.creates[0]!.signal?.aborted, false, 'not before the bound');
    await h.client.answer(0, 'L1');
    const hangup = h.transports.all.find((t) => t.url.endsWith('live_id=L1'));
    assert.ok(hangup, 'a socket to the room the create made');
    hangup.open();
    await flushMicrotasks();
    assert.deepEqual(types(hangup), [5], 'type 5 and nothing else (no conn_init: never billed)');
    hangup.serverClose(1000, '');
    await c.done;
    assert.equal(h.transports.all.length, 1);
    assert.deepEqual(h.log(), [['expired', null, 'shutdown']], 'one end, recorded at shutdown');
    assert.equal(h.clock.pendingCount, 0, 'the bound was cleared');
  });

  it('shutdown with a create that never answers: given up (aborted) after the bound, with a warning; shutdown settles and no timer is left', async () => {
    const h = setup();
    h.spares.report({ showing: true, present: true });
    await flushMicrotasks();
    const c = closing(h.spares);
    await h.clock.advance(CREATE_ANSWER_WAIT_MS - 1);
    assert.equal(c.settled(), false);
    assert.equal(h.client.creates[0]!.signal?.aborted, false);
    await h.clock.advance(1);
    await flushMicrotasks();
    assert.equal(h.client.creates[0]!.signal?.aborted, true, 'the create is aborted at the bound');
    await c.done;
    assert.deepEqual(h.warnings, ['spare: the create did not answer in time at shutdown; a room it made cannot be closed from here']);
    assert.equal(h.transports.all.length, 0);
    assert.equal(h.clock.pendingCount, 0);
  });

  it('a spare dropped (not shut down) while its create is in flight keeps the create, however slow, and closes the room it made', async () => {
    const h = setup();
    h.spares.report({ showing: true, present: true });
    await flushMicrotasks();
    h.spares.discard('settings_changed');
    await h.clock.advance(CREATE_ANSWER_WAIT_MS + 5_000);
    assert.equal(h.client.creates[0]!.signal?.aborted, false, 'only shutdown bounds the wait');
    await h.client.answer(0, 'L1');
    const hangup = h.transports.all.find((t) => t.url.endsWith('live_id=L1'));
    assert.ok(hangup, 'a hangup-only socket to the room');
    hangup.open();
    await flushMicrotasks();
    assert.deepEqual(types(hangup), [5]);
    assert.deepEqual(h.warnings, []);
  });

  it('a spare dropped before its socket opened: that socket is ended, and type 5 goes over a fresh one', async () => {
    const h = setup();
    h.spares.report({ showing: true, present: true });
    await flushMicrotasks();
    await h.client.answer(0, 'L1');
    const own = h.transports.last;
    assert.equal(own.isOpen, false, 'still opening');
    h.spares.discard('settings_changed');
    assert.deepEqual(own.closeCalls, [{ code: 1000, reason: 'client closing' }], 'the opening socket is closed (its handshake aborted), not left to open');
    assert.deepEqual(own.sent, []);
    const fresh = h.transports.last;
    assert.notEqual(fresh, own);
    assert.ok(fresh.url.endsWith('live_id=L1'));
    fresh.open();
    await flushMicrotasks();
    assert.deepEqual(types(fresh), [5]);
    assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'settings_changed']]);
  });

  it('the keep-alive cadence and dead-socket bound the kiosk sets reach the spare\'s socket', async () => {
    const h = setup({ keepAliveIntervalMs: 1_000, deadAfterMs: 3_000 });
    const t = await readySpare(h);
    await h.clock.advance(1_000);
    assert.deepEqual(types(t), [4], 'a keep-alive after 1 s (the default is 5 s)');
    await h.clock.advance(2_000);
    assert.deepEqual(h.log().at(-1), ['failed', 'L1', 'socket_dead'], 'dead after 3 s of quiet (the default is 15 s)');
  });

  it('a tap that waits for a spare whose create is slow: after 10 s it takes the normal path, the spare ends as not ready, and the room made later is closed with type 5', async () => {
    const h = setup();
    h.spares.report({ showing: true, present: true });
    await flushMicrotasks();
    let taken: unknown = 'pending';
    void h.spares.take('video', START()).then((t) => (taken = t));
    await h.clock.advance(TAKE_WAIT_MS - 1);
    assert.equal(taken, 'pending', 'the tap waits up to 10 s');
    await h.clock.advance(1);
    await flushMicrotasks();
    assert.equal(taken, null, 'then the normal path');
    assert.deepEqual(h.log(), [['expired', null, 'not_ready_at_tap']]);
    await h.client.answer(0, 'L1');
    const hangup = h.transports.all.find((t) => t.url.endsWith('live_id=L1'));
    assert.ok(hangup, 'a hangup-only socket to the room the slow create made');
    hangup.open();
    await flushMicrotasks();
    assert.deepEqual(types(hangup), [5]);
    assert.equal(h.log().length, 1, 'one end only');
  });

  it('a tap that waits for a spare whose socket is refused meanwhile gets the normal path at once, with one end recorded', async () => {
    const h = setup();
    h.spares.report({ showing: true, present: true });
    await flushMicrotasks();
    await h.client.answer(0, 'L1');
    let taken: unknown = 'pending';
    void h.spares.take('video', START()).then((t) => (taken = t));
    await flushMicrotasks();
    assert.equal(taken, 'pending');
    h.transports.last.fail(new AvatarError('not_found', 'refused (HTTP 404)', { status: 404 }));
    await flushMicrotasks();
    assert.equal(taken, null, 'without waiting out the 10 s');
    assert.deepEqual(h.log(), [['created', 'L1', undefined], ['failed', 'L1', 'not_found']]);
    assert.equal(h.clock.pendingDelays().includes(TAKE_WAIT_MS), false, "the tap's wait was cleared");
  });
});
