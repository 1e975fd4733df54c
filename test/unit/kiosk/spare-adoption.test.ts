/**
 * A spare adopted at the tap (electron/kiosk/spare-adoption.ts, run by the call orchestrator), with the
 * renderer joining RTC first (the default): its credentials reach the renderer at once, its states only
 * once the spare's first conn_init is answered; a spare that fails at the tap gives way to a fresh session
 * (but not once the kiosk shuts down), and what each call teaches the spare manager (only a create's
 * refusal stops spares). The kiosk against the in-process emulator on 127.0.0.1:0, on one FakeClock.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type Result } from '../../../electron/contract.ts';
import type { EmulatedSession } from '../../../electron/emulator/index.ts';
import { wsTransportFactory, type TransportFactory } from '../../../electron/core/transport.ts';
import { approachSpare as approach, kioskOnEmulatorPerTest, kioskOnSlowEmulator, shutDownAfterEach, value, type KioskOnEmulator, type KioskOnEmulatorOptions } from '../../helpers/kiosk-on-emulator.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { advanceInSteps, advanceUntil, driveUntilSettled, until } from '../../helpers/until.ts';

type Harness = KioskOnEmulator;
const track = shutDownAfterEach();
/** A kiosk per test, closed after it (no spare unless its config asks). */
const perTest = kioskOnEmulatorPerTest();

/** Spares on approach (the default); `awaitRendererRtc` as the kiosk's default unless given. */
async function setup(options: KioskOnEmulatorOptions & { awaitRendererRtc?: boolean } = {}): Promise<Harness> {
  const { awaitRendererRtc, ...rest } = options;
  return track(await kioskOnSlowEmulator({ ...rest, kiosk: awaitRendererRtc === undefined ? {} : { awaitRendererRtc } }));
}

/** The visitor taps: the attract screen goes away (unless its report is late), then `session.start`
 *  (resolves once the session exists). */
async function tap(h: Harness, arg: unknown = {}, leaveAttract = true): Promise<string> {
  if (leaveAttract) value(await h.dispatch(CHANNELS.attractReport, { showing: false, present: true }));
  const r = (await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, arg), { stepMs: 10, realTimeoutMs: 3_000 })) as Result<{ liveId: string | null }>;
  const liveId = value(r).liveId;
  assert.ok(liveId, 'the tap answers with a room');
  return liveId;
}

const nonKeepAlive = (s: EmulatedSession) => s.clientMessages.map((m) => m.type).filter((t) => t !== 4);

describe('a tap on a spare, the renderer joining RTC first', () => {
  it('the credentials reach the renderer at once, milestones count, and conn_init waits for the renderer', async () => {
    const h = await setup();
    const spareId = await approach(h);
    const liveId = await tap(h);
    assert.equal(liveId, spareId, 'the tap took the spare');
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`], 'the spare\'s states are held until its first answer');
    assert.deepEqual(value(await h.dispatch(CHANNELS.sessionReportMilestone, { liveId, milestone: 'joined', durationMs: 80 })), { accepted: true });
    await h.clock.advance(500);
    assert.equal(h.session(spareId).connInits, 0);
    value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId }));
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`, 'creating', 'connecting', 'live']);
    assert.deepEqual(h.events.map((e) => e.type), ['spare', 'credentials', 'spare', 'state', 'state', 'state'], 'nothing else reaches the renderer');
    // A tap on a spare looks like any tap to the renderer: it never hears of the spare's own `held` phase.
    assert.deepEqual(
      h.events.flatMap((e) => (e.type === 'state' ? [[e.previous, e.state.phase]] : [])),
      [
        ['idle', 'creating'],
        ['creating', 'connecting'],
        ['connecting', 'live'],
      ],
    );
    assert.deepEqual(Object.keys(h.events.find((e) => e.type === 'credentials')!).sort(), ['callMode', 'liveDurationS', 'liveId', 'rtc', 'type']);
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['used', spareId, undefined],
    ]);
    assert.equal(h.emu.listSessions().length, 1, 'no second room');
    // Spare sessions cost credits: the operator's log names each one and what became of it.
    assert.deepEqual(
      h.lines.filter((l) => l.includes(' INFO Spare session ')).map((l) => [/Spare session (\w+)/.exec(l)?.[1], l.includes(spareId)]),
      [['created', true], ['used', true]],
    );
    await driveUntilSettled(h.clock, h.kiosk.calls.hangup(), { stepMs: 50 });
    const figures = h.kiosk.telemetry.lastCallFigures;
    assert.ok(figures);
    assert.deepEqual([figures.liveId, figures.joinMs], [spareId, 80]);
  });

  it('a hangup before the renderer joined ends the spare (type 5 once); no other room is made', async () => {
    const h = await setup();
    const spareId = await approach(h);
    await tap(h);
    await driveUntilSettled(h.clock, h.kiosk.calls.hangup(), { stepMs: 50 });
    await h.clock.advance(1_000);
    assert.deepEqual(nonKeepAlive(h.session(spareId)), [5]);
    assert.equal(h.emu.listSessions().length, 1, 'the visitor\'s hangup made no new room');
    assert.equal(h.session(spareId).billedSeconds, 0);
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['used', spareId, undefined],
    ]);
    assert.equal(h.kiosk.calls.state.phase, 'ended');
  });

  it('a video spare still warming (NOT_READY) is the call: it goes live on its own room after the retry', async () => {
    const h = await setup({ config: { callMode: 'video' }, knobs: { warmupMs: { audio: 0, video: 1_000 } } });
    const spareId = await approach(h);
    const liveId = await tap(h);
    value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId }));
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 50, maxFakeMs: 10_000 });
    assert.equal(h.session(spareId).notReadyAnswers, 1);
    assert.equal(h.emu.listSessions().length, 1, 'no second room');
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['used', spareId, undefined],
    ]);
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`, 'creating', 'connecting', 'warming', 'connecting', 'live']);
  });

  it('a spare failing at its first conn_init: a fresh room for the tap, and no new spare while that call runs', async () => {
    const h = await setup({ config: { callMode: 'audio' } });
    const spareId = await approach(h);
    h.emu.knobs.initFailure = true;
    // The attract screen's "gone" report has not arrived: only the running call keeps spares away.
    const liveId = await tap(h, {}, false);
    assert.equal(liveId, spareId);
    value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId }));
    await until(() => h.session(spareId).connInits === 1, { message: 'conn_init of the spare' });
    h.emu.knobs.initFailure = false;
    await advanceUntil(h.clock, () => h.emu.listSessions().length === 2, { stepMs: 10, message: 'a fresh room' });
    const fresh = h.emu.listSessions().find((s) => s.id !== spareId)!.id;
    await advanceUntil(h.clock, () => h.events.some((e) => e.type === 'credentials' && e.liveId === fresh), { stepMs: 10 });
    value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId: fresh }));
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'init_failed'],
    ]);
    assert.ok(h.lines.some((l) => l.includes('The spare session failed at the tap; creating a new session') && l.includes('init_failed')), h.lines.join('\n'));
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`, 'creating', 'connecting', `credentials:${fresh}`, 'live'], 'none of the failed spare\'s states');
    // The visitor is in a call: 30 s of someone in front of the screen make no spare.
    await advanceInSteps(h.clock, 30_000, { stepMs: 1_000 });
    assert.equal(h.emu.listSessions().length, 2);
    assert.equal(h.kiosk.calls.state.phase, 'live');
  });
});

describe('a tap on a spare with no renderer to join RTC', () => {
  it('the credentials are held with the states until the first answer, in order, and nothing fails on the way', async () => {
    const h = await setup({ awaitRendererRtc: false });
    const spareId = await approach(h);
    assert.equal(await tap(h), spareId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.deepEqual(h.uiLog(), ['creating', 'connecting', `credentials:${spareId}`, 'live']);
    assert.deepEqual(h.lines.filter((l) => / ERROR /.test(l)), [], 'no error for the operator');
  });
});

describe('a spare lost at the tap', () => {
  it('its socket dropped before the first answer: failed (socket_lost), the tap gets a fresh room', async () => {
    const h = await setup();
    const spareId = await approach(h);
    await tap(h);
    h.emu.dropConnection(spareId);
    await advanceUntil(h.clock, () => h.emu.listSessions().length === 2, { stepMs: 10, message: 'a fresh room' });
    const fresh = h.emu.listSessions().find((s) => s.id !== spareId)!.id;
    await advanceUntil(h.clock, () => h.events.some((e) => e.type === 'credentials' && e.liveId === fresh), { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'socket_lost'],
    ]);
    value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId: fresh }));
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.equal(h.session(spareId).connInits, 0, 'the lost spare was never billed');
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`, 'creating', 'connecting', `credentials:${fresh}`, 'live'], 'none of the lost spare\'s states');
  });
});

describe('the out-of-credits stop', () => {
  it('is lifted by a created room, not by a tap abandoned before its room was answered', async () => {
    const h = await setup({ knobs: { createDelayMs: 1_000 } });
    h.emu.setBalance(h.emu.apiKey, 10);
    value((await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, {}), { stepMs: 50 })) as Result<unknown>);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'failed', { stepMs: 50 });
    assert.equal(h.kiosk.spares.blockedBy, 'insufficient_credits');
    h.emu.setBalance(h.emu.apiKey, 1000);
    // A visitor taps and walks away while the create is still out: the room is closed unused.
    const started = h.dispatch(CHANNELS.sessionStart, {});
    await until(() => h.emu.listSessions().length === 1, { message: 'the create reached the service' });
    await driveUntilSettled(h.clock, Promise.all([h.kiosk.calls.hangup(), started]), { stepMs: 50 });
    assert.equal(h.kiosk.spares.blockedBy, 'insufficient_credits', 'no room was handed over: still stopped');
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    await advanceInSteps(h.clock, 5_000, { stepMs: 500 });
    assert.equal(h.emu.listSessions().length, 1, 'no spare');
    assert.deepEqual(h.spareLog(), []);
  });
});

describe('spares and the service client', () => {
  it('a new key drops the spare (type 5, settings_changed) and forgets an out-of-credits stop', async () => {
    const h = await setup();
    h.emu.setBalance(h.emu.apiKey, 10);
    const r = (await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, {}), { stepMs: 10 })) as Result<{ liveId: string | null }>;
    assert.equal(value(r).liveId, null);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'failed', { stepMs: 10 });
    assert.equal(h.kiosk.spares.blockedBy, 'insufficient_credits');
    h.emu.setBalance(h.emu.apiKey, 1000);
    value(await h.kiosk.key.set(null));
    assert.equal(h.kiosk.spares.blockedBy, null, 'a changed key may have credits');
    const spareId = await approach(h);
    value(await h.kiosk.key.set(null));
    await advanceUntil(h.clock, () => h.session(spareId).status !== 'waiting', { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['expired', spareId, 'settings_changed'],
    ]);
    assert.deepEqual(nonKeepAlive(h.session(spareId)), [5]);
  });

  it('opening after a closed spell makes no spare unless the attract screen said it shows', async () => {
    const h = await setup({ config: { prewarm: { mode: 'always' } } });
    h.kiosk.availability.setOpening({ open: false, nextOpenAt: null, timeZone: null });
    h.kiosk.availability.setOpening({ open: true, nextOpenAt: null, timeZone: null });
    await advanceInSteps(h.clock, 2_000, { stepMs: 100 });
    assert.equal(h.emu.listSessions().length, 0);
    assert.deepEqual(h.spareLog(), []);
  });
});

describe('spares after a call that failed once its room existed', () => {
  it('a control socket refused (401) after a successful create does not stop spares: only a create’s refusal does', async () => {
    let refuse = true;
    // The service refuses the call's socket: the handshake goes out without its credentials.
    const factory: TransportFactory = (url, headers, handlers) =>
      wsTransportFactory(url, refuse ? Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization')) : headers, handlers);
    const h = await perTest.setup({ config: { prewarm: { mode: 'on-approach' } }, kiosk: { transportFactory: factory } });
    const liveId = await h.tap();
    await h.reach('failed');
    const end = h.kiosk.calls.state;
    assert.ok(end.phase === 'failed');
    assert.deepEqual([end.liveId, end.error.code], [liveId, 'unauthorized']);
    await until(() => !h.kiosk.calls.running);
    refuse = false;
    assert.equal(h.kiosk.spares.blockedBy, null);
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    assert.equal(h.kiosk.spares.phase, 'creating', 'a spare is made for the next visitor');
    await until(() => h.kiosk.spares.phase === 'ready', { message: 'spare ready' });
    assert.deepEqual(h.spareLog().map(([status]) => status), ['created']);
    assert.equal(h.warnings.some((l) => l.includes('spare: stopped until a create succeeds')), false);
  });
});

describe('a call the service ended for lack of credits', () => {
  it('whose socket then fails to close, so that the call ends as failed: spares stop all the same (the account is out of credits)', async () => {
    let throwOnClose = false;
    // The call's socket throws as the kiosk closes it after the service's type 6: the session fails there.
    const factory: TransportFactory = (url, headers, handlers) => {
      const inner = wsTransportFactory(url, headers, handlers);
      return {
        send: (text) => inner.send(text),
        close(code, reason) {
          inner.close(code, reason);
          if (throwOnClose) throw new Error('close failed');
        },
        terminate: () => inner.terminate(),
        get isOpen() {
          return inner.isOpen;
        },
      };
    };
    const h = await perTest.setup({ config: { prewarm: { mode: 'on-approach' } }, kiosk: { transportFactory: factory, awaitRendererRtc: false } });
    const liveId = await h.tap();
    await h.reach('live');
    throwOnClose = true;
    h.emu.forceHangup(liveId, 'credit_insufficient');
    await h.reach('failed');
    const end = h.kiosk.calls.state;
    assert.ok(end.phase === 'failed');
    assert.deepEqual([end.liveId, end.summary?.hangupReason], [liveId, 'credit_insufficient']);
    await until(() => !h.kiosk.calls.running);
    assert.equal(h.kiosk.spares.blockedBy, 'credit_insufficient');
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    assert.equal(h.kiosk.spares.phase, null, 'no spare for the next visitor');
    assert.equal(h.emu.listSessions().length, 1);
    assert.ok(h.warnings.some((l) => l.includes('spare: stopped until a create succeeds')), h.warnings.join('\n'));
  });
});

describe('a spare that cannot be closed cleanly at the tap', () => {
  it('its socket throws as it is closed for the other call mode: one error naming the error (its session’s hangup effect), and the tap takes the normal path', async () => {
    let made = 0;
    // The first socket made is the spare's: it closes (the service hears it) and then throws.
    const factory: TransportFactory = (url, headers, handlers) => {
      const inner = wsTransportFactory(url, headers, handlers);
      if (++made > 1) return inner;
      return {
        send: (text) => inner.send(text),
        close(code, reason) {
          inner.close(code, reason);
          throw new Error('close failed');
        },
        terminate() {
          inner.terminate();
          throw new Error('terminate failed');
        },
        get isOpen() {
          return inner.isOpen;
        },
      };
    };
    const logger = recordingLogger();
    const h = await perTest.setup({ config: { prewarm: { mode: 'always' }, allowModeChoice: true }, kiosk: { transportFactory: factory, logger } });
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    await until(() => h.kiosk.spares.phase === 'ready', { message: 'spare ready' });
    const spareId = h.spareLog().find(([status]) => status === 'created')?.[1];
    assert.ok(spareId);
    value(await h.dispatch(CHANNELS.attractReport, { showing: false, present: true }));
    const liveId = await h.tap({ callMode: 'video' });
    assert.notEqual(liveId, spareId, 'a fresh room for the tap');
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'warn' || l.level === 'error'),
      // The spare's session sends its type 5 and closes; the throw is caught there, and the tap is not held up.
      [{ level: 'error', message: 'session: effect failed', data: { effect: 'send-hangup', error: 'Error: close failed' } }],
    );
    assert.deepEqual(
      h.emu.listSessions().map((s) => [s.id, (s.request as { call_mode: string }).call_mode]),
      [
        [spareId, 'audio'],
        [liveId, 'video'],
      ],
      'one create for the tap, in the mode it asked for',
    );
    await until(() => h.hangupsSeen(spareId) === 1, { message: 'the spare closed with type 5' });
    assert.equal(h.session(spareId).connInits, 0, 'the spare never went live');
  });
});

/** The real `ws` transport with everything it reports held back while `hold` is on, then played in order. */
function gatedTransports() {
  let holding = false;
  const held: Array<{ kind: string; text: string; play: () => void }> = [];
  const pass = (kind: string, text: string, play: () => void) => (holding ? held.push({ kind, text, play }) : play());
  const factory: TransportFactory = (url, headers, handlers) =>
    wsTransportFactory(url, headers, {
      onOpen: () => pass('open', '', () => handlers.onOpen()),
      onMessage: (data, isBinary) => pass('message', typeof data === 'string' ? data : '', () => handlers.onMessage(data, isBinary)),
      onClose: (code, reason) => pass('close', reason, () => handlers.onClose(code, reason)),
      onError: (error) => pass('error', error.message, () => handlers.onError(error)),
    });
  return {
    factory,
    held,
    hold: () => void (holding = true),
    release() {
      holding = false;
      for (const h of held.splice(0)) h.play();
    },
  };
}

describe('a spare failing at the tap as the kiosk shuts down', () => {
  it('no fresh room is made for the tap: the failed spare is the last call, and the service holds only its room', async () => {
    const gate = gatedTransports();
    const h = track(await kioskOnSlowEmulator({ kiosk: { transportFactory: gate.factory } }));
    value(await h.dispatch(CHANNELS.attractReport, { showing: true, present: true }));
    await advanceUntil(h.clock, () => h.kiosk.spares.phase === 'ready', { stepMs: 10, message: 'spare ready' });
    value(await h.dispatch(CHANNELS.attractReport, { showing: false, present: true }));
    h.emu.knobs.initFailure = true; // the spare's first conn_init is refused (LIVE_CONN_INIT_FAILED)
    const r = (await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, {}), { stepMs: 10 })) as Result<{ liveId: string | null }>;
    const spareId = value(r).liveId;
    assert.ok(spareId);
    // The refusal is on its way back when the kiosk starts to quit: it arrives right after shutdown begins.
    gate.hold();
    value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId: spareId }));
    await advanceUntil(h.clock, () => gate.held.some((e) => e.text.includes('LIVE_CONN_INIT_FAILED')), { stepMs: 10, message: 'the refusal' });
    const closing = h.kiosk.shutdown();
    gate.release();
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`], 'no new session started');
    await driveUntilSettled(h.clock, closing, { stepMs: 10 });
    assert.deepEqual(h.emu.listSessions().map((s) => s.id), [spareId], 'no second room on the service');
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'init_failed'],
    ]);
    assert.equal(h.kiosk.calls.running, false);
    await until(() => h.kiosk.calls.state.phase === 'failed');
  });
});
