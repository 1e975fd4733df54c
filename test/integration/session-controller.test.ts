/**
 * SessionController against the real emulator: real HTTP and WebSockets on 127.0.0.1 (port 0), one
 * FakeClock shared by the emulator, the REST client and the controller. Fake time moves only when a test
 * advances it; between advances the helpers in test/helpers/until.ts let the real I/O settle.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../helpers/fake-clock.ts';
import { ServiceClient } from '../../electron/core/rest-client.ts';
import { SessionController, type SessionControllerOptions, type TerminalState } from '../../electron/core/session-controller.ts';
import type { SessionEvent, SessionPhase, SessionState, StartOptions } from '../../electron/core/session-types.ts';
import { startEmulator, type EmulatedSession, type EmulatorHandle, type EmulatorKnobs } from '../../electron/emulator/index.ts';
import { handshakeError } from '../../electron/core/transport.ts';
import { FakeTransports } from '../helpers/fake-transport.ts';
import { advanceInSteps, advanceUntil, driveUntilSettled, until } from '../helpers/until.ts';

const T0 = 1_700_000_000_000;
/** A 1×1 PNG. */
const PNG_DATA_URI =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const AUDIO: StartOptions = { callMode: 'audio', avatar: { persona: 'A friendly guide.', image: PNG_DATA_URI, name: 'Guide' } };
const VIDEO: StartOptions = { ...AUDIO, callMode: 'video' };

interface Harness {
  clock: FakeClock;
  emu: EmulatorHandle;
  client: ServiceClient;
  controller: SessionController;
  events: SessionEvent[];
  /** Every state change: [phase, fake ms since T0]. */
  phases: Array<[SessionPhase, number]>;
  phaseNames: () => SessionPhase[];
  session: () => EmulatedSession;
  liveId: () => string;
}

let current: Harness | null = null;

async function setup(
  options: { knobs?: Partial<EmulatorKnobs>; apiKey?: string; controller?: Partial<SessionControllerOptions>; client?: (c: ServiceClient) => SessionControllerOptions['client'] } = {},
): Promise<Harness> {
  const clock = new FakeClock(T0);
  const emu = await startEmulator({ clock, port: 0, ...(options.knobs ? { knobs: options.knobs } : {}) });
  const client = new ServiceClient({ target: { surface: 'direct', baseUrl: emu.baseUrl, apiKey: options.apiKey ?? emu.apiKey }, clock });
  const controller = new SessionController({ client: options.client ? options.client(client) : client, clock, ...options.controller });
  const events: SessionEvent[] = [];
  const phases: Array<[SessionPhase, number]> = [];
  controller.onEvent((e) => {
    events.push(e);
    if (e.type === 'state') phases.push([e.state.phase, clock.now() - T0]);
  });
  const liveId = () => {
    const credentials = events.find((e) => e.type === 'credentials');
    const id = credentials?.type === 'credentials' ? credentials.liveId : emu.listSessions()[0]?.id;
    assert.ok(id, 'a session was created');
    return id;
  };
  const harness: Harness = {
    clock,
    emu,
    client,
    controller,
    events,
    phases,
    phaseNames: () => phases.map(([p]) => p),
    liveId,
    session: () => {
      const s = emu.getSession(liveId());
      assert.ok(s);
      return s;
    },
  };
  current = harness;
  return harness;
}

afterEach(async () => {
  const h = current;
  current = null;
  if (!h) return;
  await h.controller.dispose();
  await h.emu.close();
  // Nothing the controller, the REST client or the emulator made is left on the clock.
  assert.equal(h.clock.pendingCount, 0, `pending timers: ${h.clock.pendingDelays().join(', ')}`);
});

const phaseIs = (h: Harness, phase: SessionPhase) => () => h.controller.state.phase === phase;

/** Hang up and drive fake time until the billing query finishes. */
async function hangUp(h: Harness): Promise<TerminalState | null> {
  const done = h.controller.hangup();
  return driveUntilSettled(h.clock, done);
}

function ended(state: TerminalState | SessionState | null) {
  assert.ok(state && state.phase === 'ended', `expected ended, got ${JSON.stringify(state)}`);
  return state.summary;
}

function failed(state: TerminalState | SessionState | null) {
  assert.ok(state && state.phase === 'failed', `expected failed, got ${JSON.stringify(state)}`);
  return state;
}

/** Client frames of the session as "type#seq". */
const frames = (s: EmulatedSession) => s.clientMessages.map((m) => `${m.type}#${m.seq_id}`);

describe('SessionController (against the emulator)', () => {
  describe('happy path', () => {
    it('audio: creating → connecting → live; held 11 s live it bills 12 s and 18 credits', async () => {
      const h = await setup();
      const result = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      assert.deepEqual(h.phaseNames(), ['creating', 'connecting', 'live']);
      const credentials = h.events.filter((e) => e.type === 'credentials');
      assert.equal(credentials.length, 1);
      const c = credentials[0]!;
      assert.ok(c.type === 'credentials');
      assert.equal(c.callMode, 'audio');
      assert.equal(c.liveDurationS, 600);
      assert.equal(c.rtc.channel_id, `live-audio-${c.liveId}`);
      assert.deepEqual(h.controller.state, { phase: 'live', liveId: c.liveId, sinceMs: T0, endsAtMs: T0 + 600_000 });

      await advanceInSteps(h.clock, 11_000);
      assert.equal(h.controller.state.phase, 'live');
      const terminal = await hangUp(h);
      assert.equal(await result, terminal);
      assert.deepEqual(ended(terminal), {
        liveId: c.liveId,
        callMode: 'audio',
        wentLive: true,
        hangupReason: 'user_end',
        endedBy: 'client',
        finalStatus: 'ended',
        billedSeconds: 12,
        creditsCost: 18,
        notReadyRetries: 0,
        reconnects: 0,
        liveDurationS: 600,
        timingsMs: { create: 0, socketOpen: 0, live: 0, ended: 11_000 },
      });
      assert.deepEqual(h.phaseNames(), ['creating', 'connecting', 'live', 'ending', 'ended']);
      const s = h.session();
      assert.equal(s.status, 'ended');
      assert.equal(s.hangupReason, 'user_end');
      assert.equal(s.socketsOpened, 1);
      assert.equal(h.emu.balance(), 1_000 - 18);
      // conn_init first with seq_id 1, then pongs, then the hangup; seq_id strictly increasing.
      const f = frames(s);
      assert.equal(f[0], '1#1');
      assert.equal(f.at(-1)?.split('#')[0], '5');
      assert.deepEqual(
        s.clientMessages.map((m) => m.seq_id),
        s.clientMessages.map((_, i) => i + 1),
      );
      assert.ok(s.clientMessages.slice(1, -1).every((m) => m.type === 4));
      assert.ok(s.clientMessages.length >= 1 + 2 + 2 + 1, 'keep-alives every 5 s and ping replies');
    });

    it('video: NOT_READY twice, retries after 2 s and 4 s with a fresh conn_init (seq_id 1), then live', async () => {
      const h = await setup(); // video warm-up 2.5 s
      const result = h.controller.start(VIDEO);
      await until(phaseIs(h, 'warming'));
      assert.deepEqual(h.controller.state, { phase: 'warming', liveId: h.liveId(), notReadyRetries: 1, retryInMs: 2_000, retryAtMs: T0 + 2_000 });
      await h.clock.advance(1_999);
      assert.equal(h.controller.state.phase, 'warming');
      await h.clock.advance(1);
      await until(() => h.controller.state.phase === 'warming' && h.controller.state.notReadyRetries === 2);
      assert.deepEqual(h.controller.state, { phase: 'warming', liveId: h.liveId(), notReadyRetries: 2, retryInMs: 4_000, retryAtMs: T0 + 6_000 });
      await h.clock.advance(4_000);
      await until(phaseIs(h, 'live'));
      assert.deepEqual(h.phases, [
        ['creating', 0],
        ['connecting', 0],
        ['warming', 0],
        ['connecting', 2_000],
        ['warming', 2_000],
        ['connecting', 6_000],
        ['live', 6_000],
      ]);
      const s = h.session();
      assert.equal(s.notReadyAnswers, 2);
      assert.equal(s.socketsOpened, 3);
      assert.deepEqual(frames(s), ['1#1', '1#1', '1#1'], 'a new connection numbers from 1 again');

      await advanceInSteps(h.clock, 3_000);
      const summary = ended(await hangUp(h));
      assert.equal(await result, h.controller.state);
      assert.equal(summary.callMode, 'video');
      assert.equal(summary.notReadyRetries, 2);
      assert.equal(summary.billedSeconds, 4);
      assert.equal(summary.creditsCost, 6);
      assert.deepEqual(summary.timingsMs, { create: 0, socketOpen: 0, live: 6_000, ended: 9_000 });
    });

    it('understands the flat ack shape', async () => {
      const h = await setup({ knobs: { ackShape: 'flat' } });
      void h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      assert.equal(ended(await hangUp(h)).wentLive, true);
    });

    it('ignores garbage frames (malformed, binary, unknown type, over 64 KB) and stays live', async () => {
      const h = await setup({ knobs: { garbageFrames: true } });
      void h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      await advanceInSteps(h.clock, 12_000);
      assert.equal(h.controller.state.phase, 'live');
      const summary = ended(await hangUp(h));
      assert.equal(summary.reconnects, 0);
      assert.equal(h.session().socketsOpened, 1);
    });
  });

  describe('when conn_init fails with LIVE_CONN_INIT_FAILED', () => {
    it('fails with init_failed, does not retry, and nothing was billed', async () => {
      const h = await setup({ knobs: { initFailure: true } });
      const state = failed(await h.controller.start(AUDIO));
      assert.equal(state.error.code, 'init_failed');
      assert.equal(state.summary?.wentLive, false);
      assert.deepEqual(h.phaseNames(), ['creating', 'connecting', 'failed']);
      await advanceInSteps(h.clock, 10_000, { stepMs: 1_000 });
      assert.equal(h.session().socketsOpened, 1);
      assert.equal(h.session().billedSeconds, 0);
      assert.equal(h.emu.liveCount(), 0);
      assert.equal(h.emu.balance(), 1_000);
    });
  });

  describe('when NOT_READY outlasts the warm-up budget', () => {
    it('fails with not_ready and no billing', async () => {
      const h = await setup({ knobs: { warmupMs: { audio: 0, video: 600_000 } } });
      const result = h.controller.start(VIDEO);
      const state = failed(await driveUntilSettled(h.clock, result, { stepMs: 500, maxFakeMs: 120_000 }));
      assert.equal(state.error.code, 'not_ready');
      // The policy allows 8 retries in 60 s of fake time (2, 4, then 8 s apart: the last at 54 s). Each round
      // trip on the loopback socket takes real time, while the test moves fake time on in 500 ms steps, so a
      // loaded machine spends up to a few steps of the budget on them: 7 retries then. Every retry was an
      // answered conn_init, and the first answer is no retry.
      const retries = state.summary?.notReadyRetries ?? -1;
      assert.ok(retries === 8 || retries === 7, `retries ${retries}`);
      assert.equal(h.session().notReadyAnswers, retries + 1);
      assert.equal(h.emu.liveCount(), 0);
      assert.equal(h.emu.balance(), 1_000);
      // Never abandoned: type 5 went out, so the room is ended on the service, not left waiting.
      await until(() => h.session().hangupReason !== null);
      assert.equal(h.session().hangupReason, 'user_end');
      assert.notEqual(h.session().status, 'waiting');
      assert.equal(frames(h.session()).at(-1)?.split('#')[0], '5');
    });
  });

  describe('RTC first, then billing (awaitRtcReady)', () => {
    it('holds conn_init until the RTC side is ready, then goes live in one round trip', async () => {
      const h = await setup({ controller: { awaitRtcReady: true } });
      const result = h.controller.start(AUDIO);
      await until(() => h.events.some((e) => e.type === 'credentials'));
      await until(() => h.session().socketsOpened === 1);
      await h.clock.advance(1_000);
      assert.equal(h.controller.state.phase, 'connecting');
      assert.equal(h.session().connInits, 0, 'no conn_init before the RTC side is ready');
      assert.equal(h.session().status, 'waiting');
      assert.equal(h.controller.rtcReady('someone-else'), false);
      assert.equal(h.controller.rtcReady(h.liveId()), true);
      await until(phaseIs(h, 'live'));
      assert.equal(h.session().connInits, 1);
      assert.equal(h.session().socketsOpened, 1, 'conn_init on the socket opened meanwhile');
      assert.equal(ended(await hangUp(h)).wentLive, true);
      await result;
    });

    it('a join failure: type 5, never conn_init, 0 credits, failed with rtc_failed', async () => {
      const h = await setup({ controller: { awaitRtcReady: true } });
      const result = h.controller.start(VIDEO);
      await until(() => h.events.some((e) => e.type === 'credentials'));
      await until(() => h.session().socketsOpened === 1);
      assert.equal(h.controller.rtcFailed(h.liveId(), { code: 'rtc_failed', message: 'The network blocks video calls.' }), true);
      const state = failed(await driveUntilSettled(h.clock, result));
      assert.equal(state.error.code, 'rtc_failed');
      assert.equal(state.summary?.wentLive, false);
      assert.equal(state.summary?.creditsCost, 0);
      const s = h.session();
      assert.equal(s.connInits, 0);
      assert.equal(s.status, 'ended');
      assert.equal(s.hangupReason, 'user_end');
      assert.deepEqual(frames(s).map((f) => f.split('#')[0]).filter((t) => t !== '4'), ['5']);
      assert.equal(h.emu.balance(), 1_000);
    });

    it('no report within the join bound: given up with type 5 at exactly rtcReadyTimeoutMs', async () => {
      const h = await setup({ controller: { awaitRtcReady: true, rtcReadyTimeoutMs: 20_000 } });
      const result = h.controller.start(AUDIO);
      await until(() => h.events.some((e) => e.type === 'credentials'));
      await until(() => h.session().socketsOpened === 1);
      await advanceInSteps(h.clock, 19_000);
      assert.equal(h.controller.state.phase, 'connecting');
      const state = failed(await driveUntilSettled(h.clock, result));
      assert.equal(state.error.code, 'rtc_failed');
      assert.equal(h.session().connInits, 0);
      assert.equal(h.session().hangupReason, 'user_end');
      assert.equal(h.emu.balance(), 1_000);
    });
  });

  describe('when the server hangs up', () => {
    it('audit_violation: ending → ended with that reason, endedBy server, and no further socket', async () => {
      const h = await setup();
      const result = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      await advanceInSteps(h.clock, 3_000);
      h.emu.forceHangup(h.liveId(), 'audit_violation');
      const summary = ended(await driveUntilSettled(h.clock, result));
      assert.equal(summary.hangupReason, 'audit_violation');
      assert.equal(summary.endedBy, 'server');
      assert.equal(summary.billedSeconds, 4);
      assert.deepEqual(h.phaseNames(), ['creating', 'connecting', 'live', 'ending', 'ended']);
      await advanceInSteps(h.clock, 15_000, { stepMs: 1_000 });
      assert.equal(h.session().socketsOpened, 1, 'never reconnects (spec §6 rule 6)');
      assert.ok(!h.session().clientMessages.some((m) => m.type === 5), 'no hangup after a forced one');
    });

    it('credit_insufficient when the balance runs out: ends after 30 s on 45 credits, no reconnect', async () => {
      const h = await setup();
      h.emu.setBalance(h.emu.apiKey, 45);
      const result = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      await advanceUntil(h.clock, phaseIs(h, 'ending'), { stepMs: 500, maxFakeMs: 40_000 });
      const summary = ended(await driveUntilSettled(h.clock, result));
      assert.equal(summary.hangupReason, 'credit_insufficient');
      assert.equal(summary.endedBy, 'server');
      assert.equal(summary.billedSeconds, 30);
      assert.equal(summary.creditsCost, 45);
      assert.equal(summary.timingsMs.ended, 30_000);
      await advanceInSteps(h.clock, 15_000, { stepMs: 1_000 });
      assert.equal(h.session().socketsOpened, 1);
      assert.equal(h.emu.balance(), 0);
    });

    it('timeout at live_duration: ended by the server', async () => {
      const h = await setup({ knobs: { liveDurationS: 5 } });
      const result = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      const summary = ended(await driveUntilSettled(h.clock, result, { stepMs: 250 }));
      assert.equal(summary.hangupReason, 'timeout');
      assert.equal(summary.endedBy, 'server');
      assert.equal(summary.liveDurationS, 5);
      assert.equal(summary.billedSeconds, 6);
      assert.equal(summary.timingsMs.ended, 5_000);
    });
  });

  describe('when the server does not end the call at live_duration', () => {
    it('hangs up itself 2 s later with timeout (endedBy limit)', async () => {
      // The service grants 600 s, but this client is told 3 s: the server will not end it in time.
      const h = await setup({
        client: (real) => ({
          createSession: async (req, opts) => {
            const res = await real.createSession(req, opts);
            return { ...res, live: { ...res.live, live_duration: 3 } };
          },
          querySession: (id, opts) => real.querySession(id, opts),
          socketRequest: (id) => real.socketRequest(id),
        }),
      });
      const result = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      assert.deepEqual(h.controller.state, { phase: 'live', liveId: h.liveId(), sinceMs: T0, endsAtMs: T0 + 3_000 });
      await advanceInSteps(h.clock, 4_900, { stepMs: 100 });
      assert.equal(h.controller.state.phase, 'live');
      const summary = ended(await driveUntilSettled(h.clock, result));
      assert.equal(summary.hangupReason, 'timeout');
      assert.equal(summary.endedBy, 'limit');
      assert.equal(summary.timingsMs.ended, 5_000);
      assert.equal(summary.billedSeconds, 6);
      assert.equal(h.session().hangupReason, 'timeout');
      assert.equal(frames(h.session()).at(-1)?.split('#')[0], '5');
    });
  });

  describe('when the control socket drops while live', () => {
    it('goes reconnecting → live again with a fresh conn_init, and the service session stays live', async () => {
      const h = await setup();
      const result = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      await advanceInSteps(h.clock, 2_000);
      h.emu.dropConnection(h.liveId());
      await until(() => h.phaseNames().at(-1) === 'live' && h.phaseNames().includes('reconnecting'));
      assert.deepEqual(h.phaseNames(), ['creating', 'connecting', 'live', 'reconnecting', 'live']);
      assert.deepEqual(h.controller.state, { phase: 'live', liveId: h.liveId(), sinceMs: T0, endsAtMs: T0 + 600_000 });
      const s = h.session();
      assert.equal(s.status, 'on_live');
      assert.equal(s.socketsOpened, 2);
      assert.equal(s.connInits, 2);
      assert.equal(s.clientMessages.filter((m) => m.type === 1).map((m) => m.seq_id).join(), '1,1');
      await advanceInSteps(h.clock, 2_000);
      const summary = ended(await hangUp(h));
      assert.equal(await result, h.controller.state);
      assert.equal(summary.reconnects, 1);
      assert.equal(summary.billedSeconds, 4, 'billing never stopped and was not doubled');
    });

    it('notices a silent server after 15 s, terminates, reconnects and is live again', async () => {
      const h = await setup();
      void h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      h.emu.knobs.silent = true;
      await advanceUntil(h.clock, () => h.phaseNames().includes('reconnecting'), { stepMs: 500, maxFakeMs: 20_000 });
      assert.deepEqual(h.phases.find(([p]) => p === 'reconnecting'), ['reconnecting', 15_000]);
      h.emu.knobs.silent = false;
      await until(phaseIs(h, 'live'));
      assert.equal(h.session().status, 'on_live');
      assert.equal(h.session().socketsOpened, 2);
      const summary = ended(await hangUp(h));
      assert.equal(summary.reconnects, 1);
    });

    it('gives up after the grace budget: failed connection_lost, with the billing read afterwards', async () => {
      const h = await setup({ knobs: { reconnectGraceMs: 60_000 } });
      const result = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      // Every later handshake is refused at the socket level: make the socket URL point nowhere.
      const realSocketRequest = h.client.socketRequest.bind(h.client);
      let broken = false;
      h.client.socketRequest = (id: string) => {
        const r = realSocketRequest(id);
        return broken ? { ...r, url: r.url.replace(/:\d+\//, ':1/') } : r;
      };
      broken = true;
      h.emu.dropConnection(h.liveId());
      // 10 s of reconnects, then up to END_CONFIRM_TIMEOUT_MS (30 s) reading a session the service keeps on.
      const state = failed(await driveUntilSettled(h.clock, result, { stepMs: 250, maxFakeMs: 50_000 }));
      assert.equal(state.error.code, 'connection_lost');
      assert.equal(state.summary?.endedBy, 'network');
      assert.equal(state.summary?.wentLive, true);
      assert.equal(state.summary?.reconnects, 8);
      assert.ok(state.summary?.finalStatus === 'on_live' || state.summary?.finalStatus === 'ended');
    });
  });

  describe('hangup before the avatar is live', () => {
    it('during creating: lets the create answer, then closes its room with type 5 and never conn_init', async () => {
      const h = await setup({ knobs: { latencyMs: 1_000 } });
      const result = h.controller.start(AUDIO);
      await until(() => h.emu.listSessions().length === 1);
      assert.equal(h.controller.state.phase, 'creating');
      const terminal = await driveUntilSettled(h.clock, h.controller.hangup(), { stepMs: 250, maxFakeMs: 10_000 });
      assert.equal(await result, terminal);
      const state = failed(terminal);
      assert.equal(state.error.code, 'cancelled');
      assert.equal(h.events.filter((e) => e.type === 'credentials').length, 0, 'the renderer never joins a cancelled room');
      const s = h.emu.listSessions()[0]!;
      assert.equal(state.liveId, s.id);
      assert.deepEqual(frames(s), ['5#1'], 'the room is closed with one type 5');
      assert.equal(s.connInits, 0);
      assert.equal(s.hangupReason, 'user_end');
      assert.notEqual(s.status, 'waiting', 'no room is left waiting on the service');
      assert.equal(h.emu.liveCount(), 0);
    });

    it('during creating: dispose (a quit) waits for the answer too, and closes the room', async () => {
      const h = await setup({ knobs: { latencyMs: 1_000 } });
      void h.controller.start(AUDIO);
      await until(() => h.emu.listSessions().length === 1);
      await driveUntilSettled(h.clock, h.controller.dispose(), { stepMs: 250, maxFakeMs: 10_000 });
      const s = h.emu.listSessions()[0]!;
      assert.deepEqual(frames(s), ['5#1']);
      assert.equal(s.connInits, 0);
      assert.notEqual(s.status, 'waiting');
    });

    it('during creating: gives the answer up after createAnswerWaitMs when it never comes', async () => {
      const h = await setup({ knobs: { latencyMs: 60_000 }, controller: { createAnswerWaitMs: 2_000 } });
      const result = h.controller.start(AUDIO);
      await until(() => h.emu.listSessions().length === 1);
      const startedMs = h.clock.now();
      const state = failed(await driveUntilSettled(h.clock, h.controller.hangup(), { stepMs: 250, maxFakeMs: 10_000 }));
      assert.equal(await result, state);
      assert.equal(state.error.code, 'cancelled');
      const waitedMs = h.clock.now() - startedMs;
      assert.ok(waitedMs >= 2_000 && waitedMs <= 2_500, `gave up after ${waitedMs} ms`);
    });

    it('during creating, when the answer arrives anyway: closes the room with a hangup, never conn_init', async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const h = await setup({
        client: (real) => ({
          // A client that ignores cancellation: the answer comes back after the hangup.
          createSession: async (req) => {
            const res = await real.createSession(req);
            await gate;
            return res;
          },
          querySession: (id, opts) => real.querySession(id, opts),
          socketRequest: (id) => real.socketRequest(id),
        }),
      });
      const result = h.controller.start(AUDIO);
      await until(() => h.emu.listSessions().length === 1);
      const hangup = h.controller.hangup();
      release();
      const state = failed(await hangup);
      assert.equal(await result, state);
      assert.equal(state.error.code, 'cancelled');
      assert.equal(h.events.filter((e) => e.type === 'credentials').length, 0);
      const s = h.emu.listSessions()[0]!;
      assert.deepEqual(frames(s), ['5#1']);
      assert.equal(s.connInits, 0);
      assert.equal(s.hangupReason, 'user_end');
      assert.notEqual(s.status, 'on_live');
      assert.equal(h.emu.liveCount(), 0);
    });

    it('during warming: stops retrying, closes the room, and ends without billing', async () => {
      const h = await setup();
      const result = h.controller.start(VIDEO);
      await until(phaseIs(h, 'warming'));
      const summary = ended(await hangUp(h));
      assert.equal(await result, h.controller.state);
      assert.equal(summary.wentLive, false);
      assert.equal(summary.notReadyRetries, 1);
      assert.equal(summary.billedSeconds, 0);
      assert.equal(summary.finalStatus, 'ended');
      await advanceInSteps(h.clock, 10_000, { stepMs: 1_000 });
      const s = h.session();
      assert.equal(s.connInits, 1);
      assert.equal(s.socketsOpened, 2);
      assert.deepEqual(frames(s), ['1#1', '5#1']);
      assert.equal(h.emu.liveCount(), 0);
      assert.equal(h.emu.balance(), 1_000);
    });

    it('through the AbortSignal while live: ends with user_end', async () => {
      const h = await setup();
      const abort = new AbortController();
      const result = h.controller.start(AUDIO, { signal: abort.signal });
      await until(phaseIs(h, 'live'));
      abort.abort();
      const summary = ended(await driveUntilSettled(h.clock, result));
      assert.equal(summary.hangupReason, 'user_end');
      assert.equal(h.session().hangupReason, 'user_end');
    });
  });

  describe('when create fails', () => {
    it('401: failed unauthorized, no socket, no credentials', async () => {
      const h = await setup({ apiKey: 'not-a-real-key-123' });
      const state = failed(await h.controller.start(AUDIO));
      assert.equal(state.error.code, 'unauthorized');
      assert.equal(state.summary, null);
      assert.deepEqual(h.phaseNames(), ['creating', 'failed']);
      assert.equal(h.events.filter((e) => e.type === 'credentials').length, 0);
      assert.equal(h.emu.listSessions().length, 0);
    });

    it('balance under 45 credits: failed insufficient_credits', async () => {
      const h = await setup();
      h.emu.setBalance(h.emu.apiKey, 44);
      const state = failed(await h.controller.start(AUDIO));
      assert.equal(state.error.code, 'insufficient_credits');
      assert.equal(h.emu.listSessions().length, 0);
    });
  });

  describe('lifecycle', () => {
    it('refuses a second start while one runs, and can start again after the end', async () => {
      const h = await setup();
      void h.controller.start(AUDIO);
      await assert.rejects(h.controller.start(AUDIO), { code: 'invalid_request' });
      await until(phaseIs(h, 'live'));
      ended(await hangUp(h));
      const again = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      ended(await hangUp(h));
      assert.equal(await again, h.controller.state);
      assert.equal(h.emu.listSessions().length, 2);
    });

    it('emits input warnings (a name over 20 characters) before the credentials', async () => {
      const h = await setup();
      void h.controller.start({ ...AUDIO, avatar: { ...AUDIO.avatar, name: 'A name well over twenty characters' } });
      await until(phaseIs(h, 'live'));
      const kinds = h.events.map((e) => e.type).filter((t) => t !== 'state');
      assert.deepEqual(kinds, ['warning', 'credentials']);
      ended(await hangUp(h));
    });

    it('hangup with no session resolves null', async () => {
      const h = await setup();
      assert.equal(await h.controller.hangup(), null);
    });

    it('emits state events only on change', async () => {
      const h = await setup();
      void h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      await advanceInSteps(h.clock, 6_000);
      ended(await hangUp(h));
      const states = h.events.filter((e) => e.type === 'state');
      for (let i = 1; i < states.length; i++) {
        assert.notDeepEqual(states[i]!.state, states[i - 1]!.state);
        assert.equal(states[i]!.previous, states[i - 1]!.state.phase);
      }
    });

    it('dispose while live hangs up, leaves no socket and no timer, and is idempotent', async () => {
      const h = await setup();
      const result = h.controller.start(AUDIO);
      await until(phaseIs(h, 'live'));
      await advanceInSteps(h.clock, 2_000);
      await Promise.all([h.controller.dispose(), h.controller.dispose()]);
      const state = await result;
      assert.equal(state.phase, 'ended');
      await until(() => h.session().status !== 'on_live');
      assert.equal(h.session().hangupReason, 'user_end');
      await assert.rejects(h.controller.start(AUDIO), { code: 'invalid_request' });
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// The same controller with a fake client and a fake transport: exact timer and frame sequences.

describe('SessionController (with fakes)', () => {
  const LIVE_ID = 'fake-live-1';
  function fakes() {
    const clock = new FakeClock(T0);
    const transports = new FakeTransports();
    const queries: string[] = [];
    /** What the fake service answers to a query: on_live until a test says otherwise. */
    const server = { status: 'on_live' };
    const client: SessionControllerOptions['client'] = {
      createSession: async (req) => ({
        live: { id: LIVE_ID, status: 'waiting', live_duration: 600, call_mode: req.call_mode },
        rtc: { app_id: 'app', channel_id: 'ch', user_id: 'live-user-c-1', token: 'rtc-token-xyz', token_expire_at: '1' },
      }),
      querySession: async (id) => {
        queries.push(id);
        return { id, status: server.status, billed_seconds: 2, credits_cost: 3, created_at: '1', started_at: undefined, ended_at: undefined };
      },
      socketRequest: (id) => ({ url: `ws://fake/ws?live_id=${id}`, headers: { Authorization: 'Token k' } }),
    };
    const controller = new SessionController({ client, clock, transportFactory: transports.factory });
    const phases: SessionPhase[] = [];
    controller.onEvent((e) => void (e.type === 'state' && phases.push(e.state.phase)));
    return { clock, transports, controller, phases, queries, server };
  }
  const notReady = { type: 2, payload: { conn_init_ack: { success: false, error_code: 'NOT_READY' } } };
  const ackOk = { type: 2, payload: { conn_init_ack: { success: true } } };
  const settle = () => new Promise((r) => setImmediate(r));

  it('on NOT_READY closes the socket and retries after 2000, 4000 and 8000 ms, each with conn_init seq_id 1', async () => {
    const { clock, transports, controller, phases, server } = fakes();
    server.status = 'ended';
    const result = controller.start(VIDEO);
    await settle();
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = transports.last;
      t.open();
      t.receive(notReady);
      assert.equal(t.isClosed, true, 'closed after NOT_READY (spec §6 rule 2)');
      delays.push(...clock.pendingDelays());
      await clock.advance(clock.pendingDelays()[0]!);
    }
    assert.deepEqual(delays, [2_000, 4_000, 8_000]);
    assert.equal(transports.all.length, 4);
    transports.last.open();
    transports.last.receive(ackOk);
    assert.deepEqual(
      transports.all.map((t) => t.frames()[0]),
      transports.all.map(() => ({ type: 1, live_id: LIVE_ID, seq_id: 1, payload: { conn_init: { version: 1 } } })),
    );
    assert.deepEqual(phases, ['creating', 'connecting', 'warming', 'connecting', 'warming', 'connecting', 'warming', 'connecting', 'live']);
    const summary = ended(await driveUntilSettled(clock, controller.hangup()));
    assert.equal(summary.notReadyRetries, 3);
    assert.deepEqual(summary.timingsMs, { create: 0, socketOpen: 0, live: 14_000, ended: 14_000 });
    assert.equal(await result, controller.state);
    assert.deepEqual(transports.last.frames().at(-1), { type: 5, live_id: LIVE_ID, seq_id: 2, payload: { hangup: { hangup_reason: 'user_end' } } });
    await controller.dispose();
    assert.equal(transports.openCount(), 0);
    assert.equal(clock.pendingCount, 0);
  });

  it('ignores news from a socket it already replaced (generation guard)', async () => {
    const { transports, controller, phases } = fakes();
    void controller.start(AUDIO);
    await settle();
    const first = transports.last;
    first.autoCompleteClose = false; // the old socket lingers while closing
    first.open();
    first.receive(notReady);
    first.receive(ackOk); // stale: must not make the session live
    first.serverClose(1006);
    assert.deepEqual(phases, ['creating', 'connecting', 'warming']);
    // dispose while warming closes the room over a hangup-only socket (no conn_init).
    const disposed = controller.dispose();
    await settle();
    assert.equal(transports.all.length, 2);
    transports.last.open();
    await disposed;
    assert.deepEqual(transports.last.frames(), [{ type: 5, live_id: LIVE_ID, seq_id: 1, payload: { hangup: { hangup_reason: 'user_end' } } }]);
    assert.equal(transports.openCount(), 0);
  });

  it('treats a clock jump while live (sleep/resume) as a dead socket and reconnects at once', async () => {
    const { clock, transports, controller, phases, queries } = fakes();
    void controller.start(AUDIO);
    await settle();
    transports.last.open();
    transports.last.receive(ackOk);
    clock.jump(120_000);
    await clock.advance(0);
    assert.equal(transports.all[0]!.terminated, true);
    assert.equal(transports.all.length, 2);
    assert.deepEqual(phases, ['creating', 'connecting', 'live', 'reconnecting']);
    transports.last.open();
    transports.last.receive(ackOk);
    assert.deepEqual(phases.at(-1), 'live');
    assert.deepEqual(queries, [LIVE_ID], 'asked once whether the session was still on');
    await controller.dispose();
    assert.equal(transports.openCount(), 0);
    assert.equal(clock.pendingCount, 0);
  });

  it('fails with unauthorized when the control socket handshake is refused with 401', async () => {
    const { transports, controller } = fakes();
    const result = controller.start(AUDIO);
    await settle();
    transports.last.fail(handshakeError(401));
    const state = failed(await result);
    assert.equal(state.error.code, 'unauthorized');
    assert.equal(transports.all.length, 1);
  });
});
