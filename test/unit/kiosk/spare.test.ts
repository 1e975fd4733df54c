/**
 * SpareManager on a FakeClock with an in-memory transport and a scripted service
 * client: every create, every frame and every SpareEvent is asserted exactly. The tests play the server.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import type { StartOptions } from '../../../electron/core/session-types.ts';
import type { SpareEvent } from '../../../electron/contract.ts';
import { FAILURE_COOLDOWN_MS, NOBODY_CLOSE_MS, SpareManager, type PrewarmSettings } from '../../../electron/kiosk/spare.ts';
import { PING, ScriptedClient, readySpare, types, withPings } from '../../helpers/scripted-spare-client.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';

const AVATAR = { persona: 'A guide.', image: 'data:image/png;base64,AAAA', name: 'Ava', voice: 'Tina' };

interface Harness {
  clock: FakeClock;
  client: ScriptedClient;
  transports: FakeTransports;
  events: SpareEvent[];
  spares: SpareManager;
  options: { current: StartOptions };
  /** [status, liveId, reason?] of every event. */
  log(): Array<[string, string | null, string | undefined]>;
}

function setup(settings: Partial<PrewarmSettings> = {}, callMode: 'audio' | 'video' = 'video'): Harness {
  const clock = new FakeClock();
  const client = new ScriptedClient();
  const transports = new FakeTransports();
  const events: SpareEvent[] = [];
  const options = { current: { callMode, avatar: { ...AVATAR } } as StartOptions };
  const spares = new SpareManager({
    settings: { mode: 'on-approach', maxAgeSeconds: 90, maxPerHour: 40, ...settings },
    getClient: () => client,
    startOptions: () => options.current,
    emit: (e) => events.push(e),
    clock,
    transportFactory: transports.factory,
    buildRequest: async (o) => ({ request: { call_mode: o.callMode, avatar: { persona: o.avatar.persona, image_uri: String(o.avatar.image) } }, warnings: [] }),
  });
  return { clock, client, transports, events, spares, options, log: () => events.map((e) => [e.status, e.liveId, e.reason]) };
}

describe('SpareManager', () => {
  describe('on approach (prewarm.mode on-approach)', () => {
    it('creates nothing while nobody is there, and one spare when someone approaches', async () => {
      const h = setup();
      h.spares.report({ showing: true, present: false });
      await h.clock.advance(60_000);
      assert.equal(h.client.creates.length, 0);
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1);
      assert.equal(h.client.creates[0]!.request.call_mode, 'video', 'the configured default mode');
      h.spares.report({ showing: true, present: true }); // repeats are harmless
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1);
      await h.client.answer(0, 'L1');
      assert.deepEqual(h.log(), [['created', 'L1', undefined]]);
      assert.equal(h.spares.phase, 'opening');
      h.transports.last.open();
      assert.equal(h.spares.phase, 'ready');
      assert.deepEqual(h.transports.last.sent, [], 'nothing on open: conn_init is held');
    });

    it('with presence unknown (no camera), behaves like always while the attract screen shows', async () => {
      const h = setup();
      h.spares.report({ showing: false, present: null });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 0);
      h.spares.report({ showing: true, present: null });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1);
    });

    it('keeps the held socket alive: answers pings and sends keep-alives, never conn_init', async () => {
      const h = setup();
      const t = await readySpare(h);
      for (let i = 0; i < 12; i++) {
        await h.clock.advance(5_000);
        t.receive(PING);
      }
      // 60 s: one keep-alive per 5 s plus one answer per ping, seq_id from 1, and no type 1 anywhere.
      assert.deepEqual(types(t), Array(24).fill(4));
      assert.deepEqual(t.frames().map((f) => f.seq_id), Array.from({ length: 24 }, (_, i) => i + 1));
      assert.equal(t.isOpen, true);
      assert.deepEqual(h.log(), [['created', 'L1', undefined]]);
    });
  });

  describe('the tap', () => {
    it('hands over the created room and its open socket, still without conn_init', async () => {
      const h = setup();
      const t = await readySpare(h);
      const taken = await h.spares.take('video', h.options.current);
      assert.ok(taken);
      assert.equal(taken.liveId, 'L1');
      assert.equal(taken.adopt.created.live.id, 'L1');
      assert.equal(taken.adopt.socket?.isOpen, true);
      assert.equal(taken.adopt.socket?.connInitSent, false);
      assert.deepEqual(t.sent, []);
      assert.equal(h.spares.phase, null);
      taken.settle('used');
      taken.settle('failed', 'late'); // once only
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['used', 'L1', undefined]]);
      // The age timer no longer applies to a taken spare.
      await withPings(h, t, 200_000);
      assert.deepEqual(types(t), Array(80).fill(4), 'keep-alives and ping answers only (the adopter owns it now)');
      assert.equal(h.log().length, 2);
    });

    it('waits for a spare still being created, then hands it over', async () => {
      const h = setup();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      const taking = h.spares.take('video', h.options.current);
      await h.client.answer(0, 'L1');
      h.transports.last.open();
      const taken = await taking;
      assert.equal(taken?.liveId, 'L1');
    });

    it('takes the normal path when the visitor picks the other call mode, and closes the spare with type 5', async () => {
      const h = setup();
      const t = await readySpare(h);
      assert.equal(await h.spares.take('audio', { ...h.options.current, callMode: 'audio' }), null);
      assert.deepEqual(types(t), [5]);
      assert.deepEqual(t.frames()[0]!.payload, { hangup: { hangup_reason: 'user_end' } });
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'other_call_mode']]);
    });

    it('returns null when there is no spare', async () => {
      const h = setup({ mode: 'off' });
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 0);
      assert.equal(await h.spares.take('video', h.options.current), null);
    });
  });

  describe('expiry (never billed: type 5 before any conn_init)', () => {
    it('closes an unused spare after maxAgeSeconds with type 5, then makes the next one', async () => {
      const h = setup({ maxAgeSeconds: 90 });
      const t = await readySpare(h);
      await withPings(h, t, 89_999);
      assert.equal(t.isOpen, true);
      await h.clock.advance(1);
      assert.equal(types(t).at(-1), 5);
      assert.ok(!types(t).includes(1), 'no conn_init ever');
      assert.equal(t.isClosed, true);
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'max_age']]);
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 2, 'someone is still there: the next spare');
    });

    it('closes the spare after 20 s with nobody present (and not if they come back)', async () => {
      const h = setup();
      const t = await readySpare(h);
      h.spares.report({ showing: true, present: false });
      await withPings(h, t, NOBODY_CLOSE_MS - 1);
      h.spares.report({ showing: true, present: true });
      await withPings(h, t, 10_000);
      assert.equal(t.isOpen, true, 'they came back within 20 s');
      h.spares.report({ showing: true, present: false });
      await withPings(h, t, NOBODY_CLOSE_MS);
      assert.equal(types(t).at(-1), 5);
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'nobody_present']]);
      await h.clock.advance(60_000);
      assert.equal(h.client.creates.length, 1, 'nobody there: no new spare');
    });

    it('discards the spare when the settings change (avatar, voice, mode)', async () => {
      const h = setup();
      const t = await readySpare(h);
      h.spares.discard('settings_changed');
      assert.deepEqual(types(t), [5]);
      assert.deepEqual(h.log().at(-1), ['expired', 'L1', 'settings_changed']);
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 2, 'a new spare with the new settings');
    });

    it('discards a spare whose settings no longer match at the tap', async () => {
      const h = setup();
      const t = await readySpare(h);
      h.options.current = { ...h.options.current, avatar: { ...AVATAR, voice: 'Other' } };
      assert.equal(await h.spares.take('video', h.options.current), null);
      assert.deepEqual(types(t), [5]);
      assert.deepEqual(h.log().at(-1), ['expired', 'L1', 'settings_changed']);
    });

    it('closes a room whose create answers after the spare was dropped, without an event of its own', async () => {
      const h = setup();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      h.spares.discard('settings_changed');
      assert.deepEqual(h.log(), [['expired', null, 'settings_changed']]);
      await h.client.answer(0, 'L1');
      const hangupSocket = h.transports.all.find((t) => t.url.endsWith('live_id=L1'));
      assert.ok(hangupSocket, 'a hangup-only socket to the room');
      hangupSocket.open();
      assert.deepEqual(types(hangupSocket), [5]);
      assert.equal(h.log().length, 1);
    });

    it('shutdown closes the spare with type 5 exactly once and leaves no timer', async () => {
      const h = setup();
      const t = await readySpare(h);
      await Promise.all([h.spares.close(), h.spares.close()]);
      await h.spares.close();
      assert.deepEqual(types(t), [5]);
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'shutdown']]);
      assert.equal(h.clock.pendingCount, 0);
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1, 'nothing after shutdown');
    });
  });

  describe('churn limits', () => {
    it('creates at most maxPerHour spares in any rolling hour', async () => {
      const h = setup({ maxPerHour: 3, maxAgeSeconds: 60 });
      h.spares.report({ showing: true, present: true });
      for (let i = 0; i < 3; i++) {
        await flushMicrotasks();
        await h.client.answer(i, `L${i + 1}`);
        const t = h.transports.last;
        t.open();
        await withPings(h, t, 60_000); // expires, the next is made at once
      }
      assert.equal(h.client.creates.length, 3, 'the limit holds at 3');
      assert.deepEqual(h.log().filter(([s]) => s === 'expired').length, 3);
      await h.clock.advance(3_600_000 - 180_000 - 1);
      assert.equal(h.client.creates.length, 3);
      await h.clock.advance(1); // the first create leaves the window
      assert.equal(h.client.creates.length, 4);
    });

    for (const [status, code] of [
      [401, 'unauthorized'],
      [402, 'insufficient_credits'],
      [403, 'forbidden'],
    ] as const) {
      it(`makes no spares after a create failed with ${status} until a create succeeds`, async () => {
        const h = setup();
        h.spares.report({ showing: true, present: true });
        await flushMicrotasks();
        h.client.creates[0]!.reject(new AvatarError(code, `HTTP ${status}`, { status }));
        await flushMicrotasks();
        assert.deepEqual(h.log(), [['failed', null, code]]);
        assert.equal(h.spares.blockedBy, code);
        await h.clock.advance(3_600_000);
        h.spares.report({ showing: true, present: false });
        h.spares.report({ showing: true, present: true });
        await flushMicrotasks();
        assert.equal(h.client.creates.length, 1, 'blocked');
        h.spares.noteCreateOutcome(null); // a visitor's own create succeeded
        await flushMicrotasks();
        assert.equal(h.client.creates.length, 2);
      });
    }

    it('a normal-path 402 stops spares and closes the current one; out of credits too', async () => {
      const h = setup();
      const t = await readySpare(h);
      h.spares.noteCreateOutcome('insufficient_credits');
      assert.deepEqual(types(t), [5]);
      assert.deepEqual(h.log().at(-1), ['expired', 'L1', 'blocked_insufficient_credits']);
      h.spares.noteCreateOutcome(null);
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 2);
      await h.client.answer(1, 'L2');
      h.spares.noteOutOfCredits();
      assert.deepEqual(h.log().at(-1), ['expired', 'L2', 'blocked_credit_insufficient']);
      await h.clock.advance(60_000);
      assert.equal(h.client.creates.length, 2);
    });

    it('waits 30 s after a failed spare before the next', async () => {
      const h = setup();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      h.client.creates[0]!.reject(new AvatarError('server', 'HTTP 503', { status: 503 }));
      await flushMicrotasks();
      assert.deepEqual(h.log(), [['failed', null, 'server']]);
      await h.clock.advance(FAILURE_COOLDOWN_MS - 1);
      assert.equal(h.client.creates.length, 1);
      await h.clock.advance(1);
      assert.equal(h.client.creates.length, 2);
    });

    it('makes no spare while a session runs, and one when it is over', async () => {
      const h = setup({ mode: 'always' });
      h.spares.setBusy(true);
      h.spares.report({ showing: true, present: false });
      await h.clock.advance(10_000);
      assert.equal(h.client.creates.length, 0);
      h.spares.setBusy(false);
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1, 'always: presence does not matter');
    });
  });

  describe('failures (dropped quietly)', () => {
    it('a socket lost or refused with 404 (expired) ends the spare as failed; the tap gets null', async () => {
      const h = setup();
      const t = await readySpare(h);
      t.serverClose(1000, 'session expired');
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['failed', 'L1', 'socket_lost']]);
      assert.equal(await h.spares.take('video', h.options.current), null);
      // The room may still exist: a hangup-only socket delivers type 5 (it never sends conn_init).
      const hangup = h.transports.last;
      assert.notEqual(hangup, t);
      hangup.fail(new AvatarError('not_found', 'HTTP 404', { status: 404 }));
      assert.deepEqual(hangup.sent, []);

      const h2 = setup();
      h2.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      await h2.client.answer(0, 'L9');
      h2.transports.last.fail(new AvatarError('not_found', 'refused (HTTP 404)', { status: 404 }));
      assert.deepEqual(h2.log(), [['created', 'L9', undefined], ['failed', 'L9', 'not_found']]);
      assert.equal(h2.transports.all.length, 1, 'no hangup to a room that is gone');
    });

    it('a spare whose socket went quiet is presumed dead and dropped', async () => {
      const h = setup();
      const t = await readySpare(h);
      await h.clock.advance(15_000);
      assert.equal(t.terminated, true);
      assert.deepEqual(h.log().at(-1), ['failed', 'L1', 'socket_dead']);
    });
  });
});
