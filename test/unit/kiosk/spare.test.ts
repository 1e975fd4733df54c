/**
 * SpareManager on a FakeClock with an in-memory transport and a scripted service client: every create,
 * every frame and every SpareEvent is asserted exactly. The tests play the server. Beyond the ordinary
 * life of a spare: no client or one that cannot open a socket, a forced hangup on the held socket, a
 * discard reason that merely mentions one, a repeated "not busy", the moment of the hand-over (a second
 * tap, a discard in the same instant, the socket's outcomes before the session adopts it, how the tap's
 * session settles), the presence timer across comings and goings, blocking and unblocking, the hourly
 * limit, the settings fingerprint, and the log lines an operator reads to account for every room.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildCreateRequest } from '../../../electron/core/avatar-input.ts';
import { FakeClock, StrictClock, flushMicrotasks } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { KeepAlive } from '../../../electron/core/keep-alive.ts';
import type { Logger } from '../../../electron/core/log.ts';
import type { StartOptions } from '../../../electron/core/session-types.ts';
import type { SpareEvent } from '../../../electron/contract.ts';
import { FAILURE_COOLDOWN_MS, HOUR_MS, NOBODY_CLOSE_MS, SpareManager, type PrewarmSettings, type SpareClient } from '../../../electron/kiosk/spare.ts';
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

type Line = [level: string, message: string, data: Record<string, unknown> | undefined];

interface SetupOptions {
  settings?: Partial<PrewarmSettings>;
  /** Default: the scripted client, always. */
  getClient?: () => SpareClient | null;
  /** Leave out `buildRequest`, so the manager builds the request a tap would. */
  realBuild?: boolean;
  start?: Partial<StartOptions>;
  /** Called with each event as it is emitted (a listener that acts on what it hears). */
  onEvent?: (event: SpareEvent, spares: SpareManager) => void;
  /** Default: a FakeClock. */
  clock?: FakeClock;
  /** The keep-alive the kiosk shares with the service's calls (default: none given). */
  keepAlive?: () => KeepAlive;
  /** What the (injected) request builder warns about, as a tap's builder would. */
  warnings?: string[];
}

/** Like `setup`, with the operator's log recorded and the client, the request builder and a listener chosen by the test. */
function setupLogged(options: SetupOptions = {}) {
  const clock = options.clock ?? new FakeClock();
  const client = new ScriptedClient();
  const transports = new FakeTransports();
  const events: SpareEvent[] = [];
  const lines: Line[] = [];
  const logger: Logger = {
    debug: (m, d) => void lines.push(['debug', m, d]),
    info: (m, d) => void lines.push(['info', m, d]),
    warn: (m, d) => void lines.push(['warn', m, d]),
    error: (m, d) => void lines.push(['error', m, d]),
  };
  const current = { options: { callMode: 'video', avatar: { ...AVATAR }, ...options.start } as StartOptions };
  const spares: SpareManager = new SpareManager({
    settings: { mode: 'on-approach', maxAgeSeconds: 90, maxPerHour: 40, ...options.settings },
    getClient: options.getClient ?? (() => client),
    startOptions: () => current.options,
    emit: (e) => {
      events.push(e);
      options.onEvent?.(e, spares);
    },
    clock,
    logger,
    transportFactory: transports.factory,
    ...(options.keepAlive ? { keepAlive: options.keepAlive } : {}),
    ...(options.realBuild
      ? {}
      : {
          buildRequest: async (o: StartOptions) => ({
            request: { call_mode: o.callMode, avatar: { persona: o.avatar.persona, image_uri: String(o.avatar.image) } },
            warnings: options.warnings ?? [],
          }),
        }),
  });
  return {
    clock,
    client,
    transports,
    events,
    spares,
    current,
    /** [status, liveId, reason?] of every event. */
    log: () => events.map((e) => [e.status, e.liveId, e.reason]),
    /** Log lines whose message is `message`, with their data. */
    logged: (message: string) => lines.filter(([, m]) => m === message).map(([level, , data]) => [level, data]),
    lines,
  };
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
      assert.deepEqual(taken.controller.state, { phase: 'held', liveId: 'L1', socketOpen: true, expiresAtMs: h.clock.now() + 90_000 });
      assert.deepEqual(t.sent, []);
      assert.equal(h.spares.phase, null);
      taken.settle('used');
      taken.settle('failed', 'late'); // once only
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['used', 'L1', undefined]]);
      // The age limit no longer applies once the tap released it (here waiting for an RTC side that never comes).
      assert.ok(taken.controller.release({ awaitRtcReady: true, rtcReadyTimeoutMs: 1_000_000 }));
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

  describe('the service client', () => {
    it('a spare whose request comes with a warning (an avatar name over the recommended length) is made and handed over like any, and nothing is logged as failing', async () => {
      const h = setupLogged({ warnings: ['The avatar name "Ava of the Grand Museum Hall" has 27 characters; 20 or fewer are recommended.'] });
      await readySpare(h);
      assert.equal(h.spares.phase, 'ready');
      assert.equal((await h.spares.take('video', h.current.options))?.liveId, 'L1');
      assert.deepEqual(h.lines.filter(([level]) => level === 'warn' || level === 'error'), []);
    });

    it('without an injected builder, the spare is created with the very request a tap would send', async () => {
      // A real PNG signature: the builder checks the image the way a tap's create does.
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).toString('base64');
      const h = setupLogged({ realBuild: true, start: { avatar: { ...AVATAR, image: `data:image/png;base64,${png}` } } });
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1);
      const expected = await buildCreateRequest(h.current.options);
      assert.deepEqual(h.client.creates[0]!.request, expected.request);
      assert.equal(h.client.creates[0]!.request.call_mode, 'video');
    });

    it('makes no spare while the service is not configured, and one once it is', async () => {
      let client: SpareClient | null = null;
      const h = setupLogged({ getClient: () => client });
      h.spares.report({ showing: true, present: true });
      await h.clock.advance(FAILURE_COOLDOWN_MS * 2);
      assert.equal(h.client.creates.length, 0);
      assert.deepEqual(h.log(), [], 'not configured is not a failure: no event, no cooldown');
      client = h.client;
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1, 'at once, without a cooldown');
    });

    it('a client that goes away as the spare is made: nothing is sent, the spare fails as invalid_config and the next waits 30 s', async () => {
      // The client is re-read for the create itself; the configuration can be cleared in between.
      let calls = 0;
      const h = setupLogged({ getClient: () => (++calls === 2 ? null : h.client) });
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 0, 'no create without a client');
      assert.deepEqual(h.log(), [['failed', null, 'invalid_config']]);
      // Every spare's end is in the operator's log, this one too.
      assert.deepEqual(h.logged('spare: failed'), [['info', { liveId: null, reason: 'invalid_config' }]]);
      await h.clock.advance(FAILURE_COOLDOWN_MS - 1);
      assert.equal(h.client.creates.length, 0);
      await h.clock.advance(1);
      assert.equal(h.client.creates.length, 1);
    });

    it('a room whose socket address cannot be built: the spare fails with that code, and the failed hangup is logged with its room', async () => {
      class NoSocketClient extends ScriptedClient {
        override socketRequest(): { url: string; headers: Record<string, string> } {
          throw new AvatarError('invalid_config', 'The service address is not a valid URL.');
        }
      }
      const client = new NoSocketClient();
      const h = setupLogged({ getClient: () => client });
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      await client.answer(0, 'L1');
      await flushMicrotasks();
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['failed', 'L1', 'invalid_config']]);
      assert.equal(h.transports.all.length, 0, 'no socket could be made');
      // The room may stay open until the service expires it: the operator must be told which one.
      assert.deepEqual(h.logged('session: could not send the hangup'), [
        ['warn', { liveId: 'L1', error: 'AvatarError: The service address is not a valid URL.' }],
      ]);
      await h.clock.advance(FAILURE_COOLDOWN_MS - 1);
      assert.equal(client.creates.length, 1, 'a failed spare: 30 s before the next');
      await h.clock.advance(1);
      assert.equal(client.creates.length, 2);
      assert.equal(h.log().length, 2, 'the failed spare has no max_age end later');
    });

    it('a spare dropped by a listener of its own "created" event: its room is closed once, no socket of its own is opened, nothing is left waiting', async () => {
      const h = setupLogged({
        onEvent: (e, spares) => {
          if (e.status !== 'created') return;
          spares.report({ showing: false, present: true }); // the kiosk closes, say, as the spare is announced
          spares.discard('closed');
        },
      });
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      await h.client.answer(0, 'L1');
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'closed']]);
      assert.equal(h.transports.all.length, 1, 'only the socket that sends the hangup');
      const [hangup] = h.transports.all;
      hangup!.open();
      await flushMicrotasks();
      assert.deepEqual(types(hangup!), [5]);
      await h.spares.close();
      assert.equal(h.clock.pendingCount, 0, 'no max-age timer for the dropped spare');
      await h.clock.advance(60_000);
      assert.deepEqual(h.lines.filter(([level]) => level === 'warn'), []);
      assert.equal(h.client.creates.length, 1);
    });

    it('the room of a spare dropped as the client changes is closed with the client that made it', async () => {
      // The service clears its client while it builds one for a new key; the room belongs to the old key.
      const old = new ScriptedClient({ host: 'old.test' });
      let client: SpareClient | null = old;
      const h = setupLogged({ getClient: () => client });
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      await old.answer(0, 'L1');
      const own = h.transports.last;
      client = null;
      h.spares.discard('settings_changed', { unblock: true });
      assert.deepEqual(own.closeCalls, [{ code: 1000, reason: 'client closing' }], 'its socket, not open yet, is closed (which aborts its handshake)');
      const fresh = h.transports.last;
      assert.notEqual(fresh, own);
      assert.equal(fresh.url, 'ws://old.test/live/ws/live/connect?live_id=L1');
      fresh.open();
      await flushMicrotasks();
      assert.deepEqual(types(fresh), [5]);
      await flushMicrotasks();
      assert.equal(old.creates.length, 1, 'no new spare without a client');
    });
  });

  describe('the held socket', () => {
    it('keeps alive in the style the service accepts (the keep-alive the kiosk shares with its calls): pong frames, no messages', async () => {
      const h = setupLogged({ keepAlive: () => new KeepAlive({ style: 'ws-pong' }) });
      const t = await readySpare(h);
      await h.clock.advance(10_000);
      assert.deepEqual(t.sent, [], 'no type 4 message: this service closes the socket on one');
      assert.equal(t.pongsSent, 2, 'one pong frame every 5 s');
      assert.equal(t.isOpen, true);
      assert.deepEqual(h.log(), [['created', 'L1', undefined]]);
    });

    it('a forced hangup ends the spare as failed with the server\'s reason, without conn_init, and the next waits 30 s', async () => {
      const h = setupLogged();
      const t = await readySpare(h);
      t.receive({ type: 6, payload: { hangup: { hangup_reason: 'server_error' } } });
      await flushMicrotasks();
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['failed', 'L1', 'forced_hangup_server_error']]);
      assert.equal(t.isClosed, true, 'the held socket is closed');
      assert.ok(!types(t).includes(1), 'never conn_init');
      assert.equal(h.transports.all.length, 1, 'no hangup-only socket: the service ended the room itself');
      assert.equal(await h.spares.take('video', h.current.options), null);
      await h.clock.advance(FAILURE_COOLDOWN_MS - 1);
      assert.equal(h.client.creates.length, 1);
      await h.clock.advance(1);
      assert.equal(h.client.creates.length, 2);
    });
  });

  describe('a discard whose reason only mentions a forced hangup', () => {
    it('the room is closed over a fresh socket whatever the reason says: only a type 6 the session heard spares the type 5', async () => {
      for (const [reason, hangupSockets] of [
        ['operator_forced_hangup', 1],
        ['forced_hangup_replayed', 1],
      ] as const) {
        const h = setupLogged();
        h.spares.report({ showing: true, present: true });
        await flushMicrotasks();
        await h.client.answer(0, 'L1');
        const own = h.transports.last; // the spare's socket: its create answered, not open yet
        assert.equal(h.spares.phase, 'opening');
        h.spares.report({ showing: false, present: true }); // no next spare: only this room's close is in flight
        h.spares.discard(reason);
        await flushMicrotasks();
        assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', reason]], reason);
        assert.deepEqual(own.closeCalls, [{ code: 1000, reason: 'client closing' }], reason);
        assert.deepEqual(types(own), [], `${reason}: nothing went out on the spare's own socket`);
        const fresh = h.transports.all.slice(1);
        assert.equal(fresh.length, hangupSockets, `${reason}: hangup-only sockets`);
        for (const t of fresh) {
          assert.equal(t.url, 'ws://service.test/live/ws/live/connect?live_id=L1');
          t.open();
          await flushMicrotasks();
          assert.deepEqual(
            t.frames().map((f) => [f.type, f.live_id, f.seq_id, f.payload]),
            [[5, 'L1', 1, { hangup: { hangup_reason: 'user_end' } }]],
            `${reason}: type 5 alone, no conn_init`,
          );
        }
        await h.spares.close();
      }
    });
  });

  describe('the busy state', () => {
    it('"not busy" while already not busy changes nothing: a client that became available is used at the next report, not before', async () => {
      let client: SpareClient | null = null;
      const h = setupLogged({ getClient: () => client });
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 0, 'no client: no spare');
      client = h.client;
      h.spares.setBusy(false);
      await flushMicrotasks();
      await h.clock.advance(FAILURE_COOLDOWN_MS);
      assert.equal(h.client.creates.length, 0, 'nothing changed: nothing re-evaluated');
      assert.equal(h.spares.phase, null);
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1);
      assert.equal(h.spares.phase, 'creating');
    });
  });

  describe('the hand-over', () => {
    it('the manager lets go of a spare a tap took: its shutdown does not wait for that call, nor end it', async () => {
      const h = setupLogged();
      const t = await readySpare(h);
      h.spares.setBusy(true);
      const taken = await h.spares.take('video', h.current.options);
      assert.ok(taken?.controller.release(), 'the call runs on the spare\'s session');
      let closed = false;
      void h.spares.close().then(() => (closed = true));
      await flushMicrotasks();
      assert.equal(closed, true, 'the kiosk\'s quit is not held up by the visitor\'s call (the call is hung up on its own path)');
      assert.deepEqual(types(t), [1], 'conn_init went out; no type 5 from the manager');
      assert.equal(t.isOpen, true);
      assert.deepEqual(h.log(), [['created', 'L1', undefined]]);
    });

    it('a ready spare is handed over at the tap itself: a discard in the same instant does not close the visitor\'s room', async () => {
      const h = setupLogged();
      const t = await readySpare(h);
      const taking = h.spares.take('video', h.current.options);
      h.spares.discard('settings_changed');
      const taken = await taking;
      assert.equal(taken?.liveId, 'L1');
      assert.equal(taken.controller.state.phase, 'held');
      assert.deepEqual(t.sent, [], 'no type 5 on the room handed to the visitor');
      assert.deepEqual(h.log(), [['created', 'L1', undefined]]);
    });

    it('two taps on a spare still being made: the first gets it, the second the normal path, and the first\'s room stays open', async () => {
      const h = setupLogged();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      const first = h.spares.take('video', h.current.options);
      const second = h.spares.take('video', h.current.options);
      await h.client.answer(0, 'L1');
      const t = h.transports.last;
      t.open();
      assert.equal((await first)?.liveId, 'L1');
      assert.equal(await second, null);
      assert.deepEqual(t.sent, [], 'no type 5 to the room the first tap holds');
      assert.equal(t.isOpen, true);
      assert.deepEqual(h.log(), [['created', 'L1', undefined]]);
      assert.equal(h.clock.pendingDelays().includes(10_000), false, 'neither tap leaves its wait behind');
    });

    it('the socket\'s outcomes between the hand-over and release are the session\'s, not the manager\'s: no failed spare; the held session closes its room and cannot be released', async () => {
      const h = setupLogged();
      const t = await readySpare(h);
      h.spares.setBusy(true);
      const taken = await h.spares.take('video', h.current.options);
      assert.ok(taken);
      t.serverClose(1006, '');
      await flushMicrotasks();
      assert.deepEqual(h.log(), [['created', 'L1', undefined]], 'the manager records nothing: the tap settles it');
      assert.equal(taken.controller.state.phase, 'failed');
      assert.equal(taken.controller.release(), null, 'nothing left to release: the tap takes the normal path');
      const [, hangup] = h.transports.all;
      assert.ok(hangup, 'the held session closes its room itself, over a hangup-only socket');
      hangup.open();
      await flushMicrotasks();
      assert.deepEqual(types(hangup), [5]);
    });

    it('a session whose spare failed at its first conn_init holds the next spare back 30 s', async () => {
      const h = setupLogged();
      await readySpare(h);
      h.spares.setBusy(true);
      const taken = await h.spares.take('video', h.current.options);
      assert.ok(taken);
      taken.settle('failed', 'LIVE_CONN_INIT_FAILED');
      h.spares.setBusy(false);
      await flushMicrotasks();
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['failed', 'L1', 'LIVE_CONN_INIT_FAILED']]);
      assert.equal(h.client.creates.length, 1, 'no spare right after a failed one');
      await h.clock.advance(FAILURE_COOLDOWN_MS - 1);
      assert.equal(h.client.creates.length, 1);
      await h.clock.advance(1);
      assert.equal(h.client.creates.length, 2);
    });

    it('a session that used its spare does not hold the next one back', async () => {
      const h = setupLogged();
      await readySpare(h);
      h.spares.setBusy(true);
      const taken = await h.spares.take('video', h.current.options);
      assert.ok(taken);
      taken.settle('used');
      h.spares.setBusy(false);
      await flushMicrotasks();
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['used', 'L1', undefined]]);
      assert.equal(h.client.creates.length, 2, 'the next spare at once');
    });
  });

  describe('presence', () => {
    it('on approach: closes the spare 20 s after the visitor last left, whatever comings and goings came before', async () => {
      const h = setupLogged();
      const t = await readySpare(h);
      await withPings(h, t, 10_000);
      h.spares.report({ showing: true, present: false });
      await withPings(h, t, 5_000);
      h.spares.report({ showing: true, present: true });
      await withPings(h, t, 3_000);
      h.spares.report({ showing: true, present: false });
      await withPings(h, t, NOBODY_CLOSE_MS - 1);
      assert.equal(t.isOpen, true, 'not before 20 s since they last left');
      assert.deepEqual(types(t), Array(types(t).length).fill(4));
      await h.clock.advance(1);
      assert.equal(types(t).at(-1), 5);
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'nobody_present']]);
    });

    it('on approach: once the spare was closed for nobody, the same "nobody" report again arms no timer (repeats are harmless)', async () => {
      const h = setupLogged();
      const t = await readySpare(h);
      h.spares.report({ showing: true, present: false });
      await withPings(h, t, NOBODY_CLOSE_MS);
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'nobody_present']]);
      await flushMicrotasks();
      const pending = h.clock.pendingDelays();
      h.spares.report({ showing: true, present: false });
      h.spares.report({ showing: false, present: false });
      await flushMicrotasks();
      assert.deepEqual(h.clock.pendingDelays(), pending, 'nothing new waits');
      assert.equal(h.client.creates.length, 1);
    });

    it('always: nobody in front of the kiosk does not close the spare', async () => {
      const h = setupLogged({ settings: { mode: 'always' } });
      const t = await readySpare(h);
      h.spares.report({ showing: true, present: false });
      await withPings(h, t, 60_000);
      assert.equal(t.isOpen, true);
      assert.deepEqual(h.log(), [['created', 'L1', undefined]]);
    });

    it('nothing is made before the attract screen says it shows, whatever else happens', async () => {
      const h = setupLogged();
      h.spares.setBusy(true);
      h.spares.setBusy(false);
      h.spares.noteCreateOutcome(null);
      h.spares.discard('settings_changed');
      await h.clock.advance(60_000);
      assert.equal(h.client.creates.length, 0);
    });
  });

  describe('shutdown leaves nothing behind', () => {
    it('only timers the manager set are cleared (the clock is handed back only its own handles)', async () => {
      const clock = new StrictClock();
      const h = setupLogged({ clock });
      await readySpare(h);
      h.spares.report({ showing: true, present: false });
      h.spares.report({ showing: true, present: true });
      await h.spares.close();
      assert.equal(clock.pendingCount, 0);
      assert.deepEqual(clock.foreignClears, []);
    });

    it('no presence timer survives shutdown, and reports after it start none', async () => {
      const h = setupLogged();
      const t = await readySpare(h);
      h.spares.report({ showing: true, present: false });
      await h.spares.close();
      assert.deepEqual(types(t), [5]);
      assert.equal(h.clock.pendingCount, 0);
      h.spares.report({ showing: true, present: true });
      h.spares.report({ showing: true, present: false });
      await flushMicrotasks();
      assert.equal(h.clock.pendingCount, 0, 'a report after shutdown arms nothing');
      assert.equal(h.client.creates.length, 1);
    });

    it('during a cooldown, repeated reports leave one wake-up, which shutdown clears', async () => {
      const h = setupLogged();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      h.client.creates[0]!.reject(new AvatarError('server', 'HTTP 503', { status: 503 }));
      await flushMicrotasks();
      for (let i = 0; i < 3; i++) {
        h.spares.report({ showing: true, present: i % 2 === 0 ? null : true });
        await flushMicrotasks();
      }
      await h.spares.close();
      assert.equal(h.clock.pendingCount, 0);
      await h.clock.advance(FAILURE_COOLDOWN_MS);
      assert.equal(h.client.creates.length, 1);
    });
  });

  describe('the hourly limit', () => {
    it('tells the operator once each time the limit is reached, however often spares are asked for meanwhile', async () => {
      const h = setupLogged({ settings: { maxPerHour: 1 } });
      await readySpare(h);
      h.spares.discard('settings_changed');
      await flushMicrotasks();
      for (let i = 0; i < 3; i++) {
        h.spares.report({ showing: true, present: i % 2 === 0 ? null : true });
        await flushMicrotasks();
      }
      const message = 'spare: hourly limit reached; taps take the normal path';
      assert.deepEqual(h.logged(message), [['info', { maxPerHour: 1 }]]);
      await h.clock.advance(HOUR_MS);
      assert.equal(h.client.creates.length, 2, 'the window moved on');
      await h.client.answer(1, 'L2');
      h.spares.discard('settings_changed');
      await flushMicrotasks();
      assert.deepEqual(h.logged(message), [['info', { maxPerHour: 1 }], ['info', { maxPerHour: 1 }]], 'reached again: told again');
    });

    it('maxPerHour 0: no spare, nothing scheduled to try again, and the operator is told why once', async () => {
      const h = setupLogged({ settings: { maxPerHour: 0 } });
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      h.spares.report({ showing: true, present: null });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 0);
      assert.equal(h.clock.pendingCount, 0);
      assert.deepEqual(h.logged('spare: hourly limit reached; taps take the normal path'), [['info', { maxPerHour: 0 }]]);
    });
  });

  describe('blocking', () => {
    it('a normal-path failure that is not about the account (503, network) leaves the spare and spares running', async () => {
      const h = setupLogged();
      const t = await readySpare(h);
      h.spares.noteCreateOutcome('server');
      h.spares.noteCreateOutcome('network');
      await flushMicrotasks();
      assert.equal(t.isOpen, true);
      assert.deepEqual(t.sent, []);
      assert.deepEqual(h.log(), [['created', 'L1', undefined]]);
      assert.equal(h.spares.blockedBy, null);
    });

    it('running out of credits with no spare stops spares until a create succeeds', async () => {
      const h = setupLogged();
      h.spares.noteOutOfCredits();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 0);
      h.spares.noteCreateOutcome(null);
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 1);
    });

    it('warns once per cause when spares stop, and says once when they resume', async () => {
      const h = setupLogged();
      h.spares.noteCreateOutcome(null); // not blocked: nothing to resume
      h.spares.noteCreateOutcome('insufficient_credits');
      h.spares.noteCreateOutcome('insufficient_credits');
      h.spares.noteOutOfCredits();
      assert.deepEqual(h.logged('spare: stopped until a create succeeds'), [
        ['warn', { why: 'insufficient_credits' }],
        ['warn', { why: 'credit_insufficient' }],
      ]);
      h.spares.noteCreateOutcome(null);
      h.spares.noteCreateOutcome(null);
      assert.deepEqual(h.logged('spare: a create succeeded; spare sessions resume'), [['info', { wasBlockedBy: 'credit_insufficient' }]]);
    });

    it('a discard keeps a block unless asked to lift it (a new API key)', async () => {
      const h = setupLogged();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      h.client.creates[0]!.reject(new AvatarError('unauthorized', 'HTTP 401', { status: 401 }));
      await flushMicrotasks();
      h.spares.discard('closed');
      await h.clock.advance(FAILURE_COOLDOWN_MS);
      assert.equal(h.client.creates.length, 1, 'still blocked');
      h.spares.discard('settings_changed', { unblock: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 2);
    });

    it('a spare create that succeeds after a block proves the account works: its room is closed and spares resume', async () => {
      const h = setupLogged();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      h.spares.noteCreateOutcome('insufficient_credits'); // a visitor's create got 402 meanwhile
      assert.deepEqual(h.log(), [['expired', null, 'blocked_insufficient_credits']]);
      await h.client.answer(0, 'L1');
      const hangup = h.transports.last;
      assert.ok(hangup.url.endsWith('live_id=L1'));
      hangup.open();
      await flushMicrotasks();
      assert.deepEqual(types(hangup), [5]);
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      assert.equal(h.client.creates.length, 2, 'spares resume');
    });
  });

  describe('the settings a spare was made with', () => {
    it('a different moderation at the tap: the spare is closed and the tap takes the normal path', async () => {
      const h = setupLogged({ start: { moderation: 'strict' } });
      const t = await readySpare(h);
      assert.equal(await h.spares.take('video', { ...h.current.options, moderation: 'disabled' }), null);
      assert.deepEqual(types(t), [5]);
      assert.deepEqual(h.log().at(-1), ['expired', 'L1', 'settings_changed']);
    });

    it('extra motion switched off at the tap: the spare is closed and the tap takes the normal path', async () => {
      const h = setupLogged({ start: { extraMotion: true } });
      const t = await readySpare(h);
      const { extraMotion: _, ...without } = h.current.options;
      assert.equal(await h.spares.take('video', without), null);
      assert.deepEqual(types(t), [5]);
      assert.deepEqual(h.log().at(-1), ['expired', 'L1', 'settings_changed']);
    });

    it('the same moderation and extra motion at the tap: the spare is handed over', async () => {
      const h = setupLogged({ start: { moderation: 'strict', extraMotion: false } });
      await readySpare(h);
      assert.equal((await h.spares.take('video', { ...h.current.options }))?.liveId, 'L1');
    });
  });

  describe('what the operator reads', () => {
    it('a spare\'s session logs its steps as detail (debug) while it is held, and as a call (info) once a tap has taken it', async () => {
      const h = setupLogged();
      await readySpare(h);
      // Held: the manager's own lines account for the room; the session's steps are detail.
      assert.deepEqual(h.logged('session: creating → held'), [['debug', { event: 'created' }]]);
      assert.deepEqual(h.logged('session: opening control socket'), [['debug', { generation: 1 }]]);
      const taken = await h.spares.take('video', h.current.options);
      assert.ok(taken?.controller.release());
      await flushMicrotasks();
      assert.deepEqual(h.logged('session: held → connecting'), [['info', { event: 'release' }]]);
      assert.deepEqual(h.logged('session: released; conn_init on the held control socket'), [['debug', { generation: 1 }]]);
    });

    it('a spare whose create failed: its session\'s end names what the service answered (it is not cancelled after the fact)', async () => {
      const h = setupLogged();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      h.client.creates[0]!.reject(new AvatarError('server', 'HTTP 503', { status: 503 }));
      await flushMicrotasks();
      assert.deepEqual(h.log(), [['failed', null, 'server']]);
      assert.deepEqual(h.logged('session: over'), [['debug', { phase: 'failed', liveId: null, error: 'server' }]]);
      assert.deepEqual(h.logged('session: cancelled while the create is in flight; waiting for its answer to close the room'), []);
    });

    it('a spare whose session ended by itself (its hold ran out) is not asked to hang up again', async () => {
      const h = setupLogged({ settings: { maxAgeSeconds: 30 } });
      const t = await readySpare(h);
      h.spares.report({ showing: false, present: true }); // no next spare: only this one's lines
      await withPings(h, t, 30_000);
      assert.deepEqual(h.log(), [['created', 'L1', undefined], ['expired', 'L1', 'max_age']]);
      assert.deepEqual(types(t), [...Array(types(t).length - 1).fill(4), 5], 'one type 5, from the session itself');
      assert.deepEqual(h.logged('session: event ignored'), []);
    });

    it('each room a spare made is logged when created, taken, ended, or closed after its spare was dropped', async () => {
      const h = setupLogged();
      await readySpare(h, 'L1', 0);
      h.spares.discard('settings_changed');
      await flushMicrotasks();
      h.spares.discard('settings_changed'); // dropped while its create is in flight
      await h.client.answer(1, 'L2');
      await flushMicrotasks();
      await readySpare(h, 'L3', 2);
      await h.spares.take('video', h.current.options);
      const info = h.lines.filter(([level]) => level === 'info').map(([, m, d]) => [m, d]);
      assert.deepEqual(info, [
        ['spare: created', { liveId: 'L1', callMode: 'video' }],
        ['spare: expired', { liveId: 'L1', reason: 'settings_changed' }],
        ['spare: expired', { liveId: null, reason: 'settings_changed' }],
        ['spare: closing a room created after the spare was dropped', { liveId: 'L2' }],
        ['spare: created', { liveId: 'L3', callMode: 'video' }],
        ['spare: taken by a tap', { liveId: 'L3', callMode: 'video' }],
      ]);
    });

    it('a create that fails after its spare was dropped is logged, so the operator knows no room was left', async () => {
      const h = setupLogged();
      h.spares.report({ showing: true, present: true });
      await flushMicrotasks();
      h.spares.discard('settings_changed');
      h.client.creates[0]!.reject(new AvatarError('server', 'HTTP 503', { status: 503 }));
      await flushMicrotasks();
      assert.deepEqual(h.log(), [['expired', null, 'settings_changed']], 'one end: the failure is not a second one');
      assert.deepEqual(h.logged('spare: create ended after the spare was dropped'), [['debug', { code: 'server' }]]);
      assert.equal(h.transports.all.length, 0, 'no room: nothing to close');
    });
  });
});
