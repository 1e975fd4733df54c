/**
 * Every fair reading of what the spec leaves open × both clients (the CLI's probe and the kiosk service):
 * each holds a whole 40 s call — live, kept alive inside the server's 15 s window (the emulator cuts a
 * client that is silent longer, so one socket for the whole call proves it), no needless reconnect, ended,
 * billed exactly as the service says — or fails with a message that names what the service did. The
 * emulator, the REST client and the controller share one FakeClock over real loopback sockets: 40 fake
 * seconds cost well under a real second.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FakeClock } from '../helpers/fake-clock.ts';
import type { EmulatorHandle } from '../../electron/emulator/index.ts';
import {
  ERROR_BODY_READINGS,
  HELD_READINGS,
  HOLD_MS,
  emulatorFor,
  kioskFor,
  newSessionId,
  probe,
  sessionReaches,
  type KioskRun,
  type Reading,
} from '../helpers/fair-readings.ts';
import { tempDirsRemovedAfterEach } from '../helpers/temp-dirs.ts';
import { advanceInSteps, driveUntilSettled, until } from '../helpers/until.ts';

const tempDir = tempDirsRemovedAfterEach('fair-readings-');
let open: { clock: FakeClock; emu: EmulatorHandle; kiosk?: KioskRun } | null = null;

afterEach(async () => {
  const o = open;
  open = null;
  if (!o) return;
  if (o.kiosk) await driveUntilSettled(o.clock, o.kiosk.kiosk.shutdown(), { stepMs: 250 });
  await o.emu.close();
  assert.equal(o.clock.pendingCount, 0, `timers left: ${o.clock.pendingDelays().join(', ')}`);
});

async function setup(reading: Pick<Reading, 'knobs'>) {
  open = await emulatorFor(reading.knobs);
  return open;
}

/** The client frames of a session as `type#seq`, one list per connection (each starts at seq 1). */
function framesPerSocket(emu: EmulatorHandle, liveId: string): string[][] {
  const sockets: string[][] = [];
  for (const m of emu.getSession(liveId)!.clientMessages) {
    if (m.seq_id === 1) sockets.push([]);
    sockets.at(-1)!.push(`${m.type}#${m.seq_id}`);
  }
  return sockets;
}

/**
 * The client probed with WebSocket pings only where the server sent nothing at all: a server that pings,
 * in any format, is heard often enough (its ping frames count as much as its messages).
 */
function assertProbes(emu: EmulatorHandle, liveId: string, reading: Reading): void {
  const probes = emu.getSession(liveId)!.clientControlFrames.ping;
  if (reading.knobs.pingFormat === 'none') assert.ok(probes >= 3, `a silent server was probed every 10 s (${probes})`);
  else assert.equal(probes, 0, 'no probe: the server was heard');
}

/** What the second connection sent, once the first was closed right after our keep-alive (type 4). */
function assertAdapted(emu: EmulatorHandle, liveId: string, reading: Reading): void {
  const [first, second, ...more] = framesPerSocket(emu, liveId);
  assert.deepEqual(more, [], 'two connections');
  assert.deepEqual(first!.map((f) => f.split('#')[0]), ['1', '4'], 'the first connection: conn_init, then our pong message, which the server refused');
  const types = second!.map((f) => f.split('#')[0]);
  assert.equal(types[0], '1', 'the second connection starts with conn_init');
  assert.equal(types.at(-1), '5', 'and ends with our hangup');
  if (reading.adaptsTo === 'ws-pong') {
    assert.deepEqual(types, ['1', '5'], 'no keep-alive message: WebSocket pongs only');
    assert.ok(emu.getSession(liveId)!.clientControlFrames.pong >= 6, 'pong frames kept it alive');
  } else {
    const pingType = reading.knobs.pingFormat === 'json-named' ? 'ping' : '3';
    assert.ok(types.length >= 8, `echoes every 5 s: ${types.join(',')}`);
    assert.deepEqual([...new Set(types.slice(1, -1))], [pingType], 'keep-alives shaped like the server ping');
  }
}

describe('fair readings × the CLI probe: a 40 s call', () => {
  for (const reading of HELD_READINGS) {
    it(`${reading.name}: ${reading.outcome === 'held' ? 'held on one socket' : `held, with one reconnect to ${reading.adaptsTo}`}, ended and billed 40 s`, async () => {
      const { clock, emu } = await setup(reading);
      const run = probe(emu, clock);
      await until(() => run.logMessages().includes('session: connecting → live'), { realTimeoutMs: 5_000, message: 'live' });
      const liveId = newSessionId(emu);
      await advanceInSteps(clock, HOLD_MS, { stepMs: 500 });
      await sessionReaches(emu, liveId, ['ending', 'ended']);
      const code = await driveUntilSettled(clock, run.done, { stepMs: 250, maxFakeMs: 60_000 });
      assert.equal(code, 0, run.stderr());
      const { timings_ms: timings, ...report } = JSON.parse(run.stdout()) as Record<string, unknown>;
      const reconnects = reading.outcome === 'held' ? 0 : 1;
      assert.deepEqual(report, {
        live_id: liveId,
        call_mode: 'audio',
        went_live: true,
        hangup_reason: 'user_end',
        final_status: 'ended',
        billed_seconds: 40,
        credits_cost: 60,
        not_ready_retries: 0,
        reconnects,
      });
      assert.equal((timings as { ended: number }).ended >= HOLD_MS, true);
      const session = emu.getSession(liveId)!;
      assert.deepEqual(
        [session.status, session.hangupReason, session.billedSeconds, session.creditsCost, session.socketsOpened],
        ['ended', 'user_end', 40, 60, 1 + reconnects],
        'the service agrees: one socket (never cut for silence), or two when the first keep-alive was refused',
      );
      if (reading.outcome === 'adapts') assertAdapted(emu, liveId, reading);
      else assert.equal(framesPerSocket(emu, liveId).length, 1);
      assertProbes(emu, liveId, reading);
    });
  }
});

describe('fair readings × the kiosk service: a 40 s call', () => {
  for (const reading of HELD_READINGS) {
    it(`${reading.name}: ${reading.outcome === 'held' ? 'held on one socket' : `held, with one reconnect to ${reading.adaptsTo}`}, ended and billed 40 s`, async () => {
      const { clock, emu } = await setup(reading);
      const kiosk = await kioskFor(emu, clock, tempDir());
      open!.kiosk = kiosk;
      assert.equal((await kiosk.kiosk.calls.start()).ok, true);
      await until(() => kiosk.state().phase === 'live', { realTimeoutMs: 5_000, message: 'live' });
      const liveId = newSessionId(emu);
      await advanceInSteps(clock, HOLD_MS, { stepMs: 500 });
      assert.deepEqual(await driveUntilSettled(clock, kiosk.kiosk.calls.hangup(), { stepMs: 250, maxFakeMs: 60_000 }), { ok: true, value: undefined });
      await until(() => kiosk.state().phase === 'ended', { realTimeoutMs: 5_000, message: 'ended' });
      const adapts = reading.outcome === 'adapts';
      assert.deepEqual(kiosk.phases(), ['creating', 'connecting', 'live', ...(adapts ? ['reconnecting', 'live'] : []), 'ending', 'ended']);
      const state = kiosk.state();
      assert.ok(state.phase === 'ended');
      const { timingsMs: _timings, ...summary } = state.summary;
      assert.deepEqual(summary, {
        liveId,
        callMode: 'audio',
        wentLive: true,
        hangupReason: 'user_end',
        endedBy: 'client',
        finalStatus: 'ended',
        billedSeconds: 40,
        creditsCost: 60,
        notReadyRetries: 0,
        reconnects: adapts ? 1 : 0,
        liveDurationS: 600,
      });
      const session = emu.getSession(liveId)!;
      assert.deepEqual([session.status, session.billedSeconds, session.creditsCost, session.socketsOpened], ['ended', 40, 60, adapts ? 2 : 1]);
      if (adapts) assertAdapted(emu, liveId, reading);
      assertProbes(emu, liveId, reading);
    });
  }
});

describe('a hangup reason the spec does not list', () => {
  const REASON = 'session_migrated';

  it('cli probe: the call ends after 20 s with the reason kept as the service sent it, billed 20 s, exit 1 naming it', async () => {
    const { clock, emu } = await setup({ knobs: {} });
    const run = probe(emu, clock);
    await until(() => run.logMessages().includes('session: connecting → live'), { realTimeoutMs: 5_000 });
    const liveId = newSessionId(emu);
    await advanceInSteps(clock, 20_000, { stepMs: 500 });
    emu.forceHangup(liveId, REASON);
    const code = await driveUntilSettled(clock, run.done, { stepMs: 250 });
    assert.equal(code, 1);
    const { timings_ms: _t, error: _e, ...report } = JSON.parse(run.stdout()) as Record<string, unknown>;
    assert.deepEqual(report, {
      live_id: liveId,
      call_mode: 'audio',
      went_live: true,
      hangup_reason: REASON,
      final_status: 'ended',
      billed_seconds: 20,
      credits_cost: 30,
      not_ready_retries: 0,
      reconnects: 0,
    });
    assert.equal(run.stderr(), `probe: ended by the service for a reason the spec does not list (${REASON}) [internal]\n`);
    assert.equal(emu.getSession(liveId)!.socketsOpened, 1, 'no reconnect after a forced hangup');
  });

  it('kiosk: ended by the server with the reason kept, billed 20 s', async () => {
    const { clock, emu } = await setup({ knobs: {} });
    const kiosk = await kioskFor(emu, clock, tempDir());
    open!.kiosk = kiosk;
    await kiosk.kiosk.calls.start();
    await until(() => kiosk.state().phase === 'live', { realTimeoutMs: 5_000 });
    const liveId = newSessionId(emu);
    await advanceInSteps(clock, 20_000, { stepMs: 500 });
    emu.forceHangup(liveId, REASON);
    await driveUntilSettled(clock, (async () => until(() => kiosk.state().phase === 'ended', { realTimeoutMs: 5_000 }))(), { stepMs: 250 });
    assert.deepEqual(kiosk.phases(), ['creating', 'connecting', 'live', 'ending', 'ended']);
    const state = kiosk.state();
    assert.ok(state.phase === 'ended');
    assert.deepEqual([state.summary.hangupReason, state.summary.endedBy, state.summary.billedSeconds, state.summary.creditsCost], [REASON, 'server', 20, 30]);
  });
});

describe('HTTP error bodies in every shape', () => {
  const said = (shape: string) =>
    shape === 'html' || shape === 'empty' ? '' : ' The service said: "Starting a session needs at least 45 credits; the balance is 0."';
  const creditsMessage = (shape: string) =>
    `The account does not have enough credits to start (at least 45 are needed) (HTTP 402). Top up the account.${said(shape)}`;

  for (const shape of ERROR_BODY_READINGS) {
    it(`${shape}: cli probe names a refused key (401) and a low balance (402), with no session and no report`, async () => {
      const { clock, emu } = await setup({ knobs: { errorBody: shape } });
      const wrongKey = probe(emu, clock, {}, 'wrong-key-000000');
      assert.equal(await driveUntilSettled(clock, wrongKey.done), 1);
      assert.equal(wrongKey.stdout(), '');
      assert.equal(
        wrongKey.stderr(),
        'probe: The API key was rejected by the avatar service (HTTP 401). Check the key you gave (AVATAR_API_KEY, or the file of --api-key-file): it must be the key issued for this service URL. [unauthorized]\n',
      );
      emu.setBalance(emu.apiKey, 0);
      const poor = probe(emu, clock);
      assert.equal(await driveUntilSettled(clock, poor.done), 1);
      assert.equal(poor.stdout(), '');
      assert.equal(poor.stderr(), `probe: ${creditsMessage(shape)} [insufficient_credits]\n`);
      assert.equal(emu.listSessions().length, 0);
    });

    it(`${shape}: the kiosk fails the tap with insufficient_credits and the same message`, async () => {
      const { clock, emu } = await setup({ knobs: { errorBody: shape } });
      emu.setBalance(emu.apiKey, 0);
      const kiosk = await kioskFor(emu, clock, tempDir());
      open!.kiosk = kiosk;
      await kiosk.kiosk.calls.start();
      await until(() => kiosk.state().phase === 'failed', { realTimeoutMs: 5_000 });
      assert.deepEqual(kiosk.phases(), ['creating', 'failed']);
      const state = kiosk.state();
      assert.ok(state.phase === 'failed');
      assert.deepEqual(state.error, { code: 'insufficient_credits', message: creditsMessage(shape) });
    });
  }
});
