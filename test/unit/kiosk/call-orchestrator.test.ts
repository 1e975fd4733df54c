/**
 * The call orchestrator (electron/kiosk/call-orchestrator.ts) where a call does not go the usual way: the
 * visitor taps while the service is still ending the last call, the spare cannot be taken or its controller
 * fails at the hand-over (ended already, a release, hangup or dispose that throws, a run that throws after
 * its end was shown), and the venue's join bound on an adopted spare; also what the visitor funnel hears of
 * a tap, and the held spare's keep-alive style. The kiosk against the in-process emulator on 127.0.0.1:0
 * (50 fake ms latency), on one FakeClock; what is asserted is what the renderer, the service and the
 * operator's log see.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type Result } from '../../../electron/contract.ts';
import type { SessionController } from '../../../electron/core/session-controller.ts';
import type { SpareManager } from '../../../electron/kiosk/spare.ts';
import { approachSpare as approach, kioskOnSlowEmulator, shutDownAfterEach, value, type KioskOnEmulator, type KioskOnEmulatorOptions } from '../../helpers/kiosk-on-emulator.ts';
import { advanceInSteps, advanceUntil, driveUntilSettled } from '../../helpers/until.ts';

type Harness = KioskOnEmulator;
const track = shutDownAfterEach();

async function setup(options: KioskOnEmulatorOptions = {}): Promise<Harness> {
  return track(await kioskOnSlowEmulator(options));
}

/** The visitor leaves the attract screen and taps; answered once the session exists (or ended before). */
async function tap(h: Harness, arg: unknown = {}): Promise<Result<{ liveId: string | null }>> {
  value(await h.dispatch(CHANNELS.attractReport, { showing: false, present: true }));
  return (await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, arg), { stepMs: 10, realTimeoutMs: 3_000 })) as Result<{ liveId: string | null }>;
}

/** Hands the tap the spare as the manager would, with its controller changed by `change` first. */
function spareHandedOverAs(h: Harness, change: (controller: SessionController) => void | Promise<void>): void {
  const spares = h.kiosk.spares;
  const take = spares.take.bind(spares);
  spares.take = (async (...args: Parameters<SpareManager['take']>) => {
    const taken = await take(...args);
    if (taken) await change(taken.controller);
    return taken;
  }) as SpareManager['take'];
}

const noRtcWait = { kiosk: { awaitRendererRtc: false } };

describe('a tap while the last call is still ending', () => {
  it('ended by the service and still reading its figures: the tap waits for it, then starts the next call', async () => {
    const h = await setup({ ...noRtcWait, config: { prewarm: { mode: 'off' } } });
    const first = value(await tap(h)).liveId!;
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    h.emu.forceHangup(first, 'timeout');
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'ending', { stepMs: 5 });
    // Nobody hung up on our side: the service did, and the billing read-back is still due.
    const next = await tap(h);
    assert.ok(next.ok && next.value.liveId && next.value.liveId !== first, JSON.stringify(next));
    assert.deepEqual(h.phases(), ['creating', 'connecting', 'live', 'ending', 'ended', 'creating', 'connecting']);
  });

  it('its end just shown, its sockets still closing: a tap at that moment waits for them, then starts', async () => {
    const h = await setup({ ...noRtcWait, config: { prewarm: { mode: 'off' } } });
    const first = value(await tap(h)).liveId!;
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    let second: Promise<Result<{ liveId: string | null }>> | null = null;
    // The tap comes the moment the end screen shows, before the session has let go of its sockets.
    h.kiosk.events.onEvent((e) => {
      if (e.type === 'state' && e.state.phase === 'ended' && !second) second = h.kiosk.calls.start();
    });
    h.emu.forceHangup(first, 'timeout');
    await advanceUntil(h.clock, () => second !== null, { stepMs: 10 });
    const next = await driveUntilSettled(h.clock, second!, { stepMs: 10 });
    assert.ok(next.ok && next.value.liveId && next.value.liveId !== first, JSON.stringify(next));
  });
});

describe('a spare that cannot be taken', () => {
  it('the manager fails to hand it over: one warning naming why, and the tap makes a session of its own', async () => {
    const h = await setup({ ...noRtcWait, config: { prewarm: { mode: 'off' } } });
    h.kiosk.spares.take = async () => {
      throw new Error('the spare store broke');
    };
    const r = await tap(h);
    const liveId = value(r).liveId!;
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.equal(h.session(liveId).connInits, 1);
    assert.equal(h.warnings.length, 1, h.warnings.join('\n'));
    assert.match(h.warnings[0]!, /WARN Could not take the spare session .*"error":"Error: the spare store broke"/);
  });
});

describe('a spare whose controller fails at the hand-over', () => {
  it('it ended between the hand-over and the release: the spare is reported failed, socket_lost, and a fresh session is the call', async () => {
    const h = await setup();
    const spareId = await approach(h);
    // Its session is over before the orchestrator releases it (as when its socket is lost): `release` has
    // nothing to release.
    spareHandedOverAs(h, async (controller) => {
      await controller.hangup();
    });
    const liveId = value(await tap(h)).liveId!;
    assert.notEqual(liveId, spareId, 'the tap is answered with the fresh session');
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'socket_lost'],
    ]);
    value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId }));
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.equal(h.session(liveId).connInits, 1);
    assert.deepEqual(h.uiLog(), ['creating', 'connecting', `credentials:${liveId}`, 'live']);
  });

  it('it ended between the hand-over and the release while the kiosk began shutting down: the tap is answered with no session, none made', async () => {
    const h = await setup({ ...noRtcWait });
    const spareId = await approach(h);
    let shutdown: Promise<void> | null = null;
    spareHandedOverAs(h, async (controller) => {
      await controller.hangup();
      shutdown = h.kiosk.shutdown();
    });
    assert.deepEqual(await tap(h), { ok: true, value: { liveId: null } }, 'no session came of the tap');
    await driveUntilSettled(h.clock, shutdown!, { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'socket_lost'],
    ]);
    assert.deepEqual(h.emu.listSessions().map((session) => session.id), [spareId], 'no fresh session was made');
    assert.equal(h.hangupsSeen(spareId), 1);
    // The renderer is told the spare's own end: nothing went live, nothing billed.
    const ends = h.events.flatMap((e) => (e.type === 'state' && (e.state.phase === 'ended' || e.state.phase === 'failed') ? [e.state] : []));
    assert.deepEqual(ends.map((e) => [e.phase, e.liveId, e.phase === 'ended' && e.summary.wentLive]), [['ended', spareId, false]]);
  });

  it('its release throws: the renderer sees the call failed, the operator an error, the spare expired with the session', async () => {
    const h = await setup();
    const spareId = await approach(h);
    spareHandedOverAs(h, (controller) => {
      controller.release = () => Promise.reject(new Error('release broke'));
    });
    const r = await tap(h);
    assert.deepEqual(r, { ok: true, value: { liveId: null } }, 'no session came of the tap');
    const failed = h.events.filter((e) => e.type === 'state' && e.state.phase === 'failed');
    assert.deepEqual(failed, [
      {
        type: 'state',
        state: { phase: 'failed', liveId: null, error: { code: 'internal', message: 'release broke' }, summary: null },
        previous: 'idle',
      },
    ]);
    // The spare's `creating` was held for its first answer, which never came: the renderer goes from the
    // attract screen straight to the failure.
    assert.deepEqual(h.phases(), ['failed']);
    assert.ok(h.lines.some((l) => / ERROR Session failed unexpectedly .*"code":"internal".*"message":"release broke"/.test(l)), h.lines.join('\n'));
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['expired', spareId, 'session_over'],
    ]);
    assert.equal(h.kiosk.calls.running, false);
  });

  it('its dispose fails once the call is over: a warning naming why, and the kiosk takes the next tap', async () => {
    const h = await setup({ ...noRtcWait });
    const spareId = await approach(h);
    spareHandedOverAs(h, (controller) => {
      const dispose = controller.dispose.bind(controller);
      controller.dispose = async () => {
        await dispose();
        throw new Error('a socket would not close');
      };
    });
    const liveId = value(await tap(h)).liveId!;
    assert.equal(liveId, spareId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    await h.hangup();
    await advanceUntil(h.clock, () => !h.kiosk.calls.running, { stepMs: 10 });
    assert.ok(
      h.warnings.some((l) => / WARN Session controller dispose failed .*"error":"Error: a socket would not close"/.test(l)),
      h.warnings.join('\n'),
    );
    const next = value(await tap(h)).liveId;
    assert.ok(next && next !== spareId);
  });

  it('its hangup throws: one warning naming why, and the visitor’s hangup still completes', async () => {
    const h = await setup({ ...noRtcWait });
    const spareId = await approach(h);
    spareHandedOverAs(h, (controller) => {
      const hangup = controller.hangup.bind(controller);
      controller.hangup = async (...args) => {
        await hangup(...args);
        throw new Error('the socket broke while hanging up');
      };
    });
    assert.equal(value(await tap(h)).liveId, spareId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    await h.hangup();
    assert.ok(h.warnings.some((l) => / WARN Hangup failed .*"error":"Error: the socket broke while hanging up"/.test(l)), h.warnings.join('\n'));
    assert.equal(h.hangupsSeen(spareId), 1);
  });

  it('its run throws after the call’s end was shown: the renderer keeps that end, the operator reads the error', async () => {
    const h = await setup({ ...noRtcWait });
    const spareId = await approach(h);
    spareHandedOverAs(h, (controller) => {
      const release = controller.release.bind(controller);
      controller.release = (...args) => release(...args)?.then(() => Promise.reject(new Error('late trouble'))) ?? null;
    });
    assert.equal(value(await tap(h)).liveId, spareId);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    await h.hangup();
    await advanceUntil(h.clock, () => !h.kiosk.calls.running, { stepMs: 10 });
    assert.deepEqual(h.phases().filter((p) => p === 'ended' || p === 'failed'), ['ended'], 'one end, the real one');
    assert.ok(h.lines.some((l) => / ERROR Session failed unexpectedly .*"message":"late trouble"/.test(l)), h.lines.join('\n'));
    assert.equal(h.hangupsSeen(spareId), 1);
  });

  it('the venue’s bound on the renderer’s join holds for an adopted spare too: it ends at that bound, type 5 once', async () => {
    const h = await setup({ kiosk: { rtcReadyTimeoutMs: 2_000 } });
    const spareId = await approach(h);
    assert.equal(value(await tap(h)).liveId, spareId);
    // The renderer never reports its RTC side ready.
    await h.clock.advance(1_900);
    assert.equal(h.kiosk.calls.running, true, 'still waiting inside the bound');
    await advanceUntil(h.clock, () => !h.kiosk.calls.running, { stepMs: 50, maxFakeMs: 1_000 });
    assert.equal(h.hangupsSeen(spareId), 1);
    assert.equal(h.session(spareId).connInits, 0, 'never billed');
  });
});

describe('what the visitor funnel hears of a tap', () => {
  it('the language asked for, else the kiosk’s default', async () => {
    const h = await setup({ ...noRtcWait, config: { prewarm: { mode: 'off' }, languages: ['en', 'fr'], defaultLanguage: 'en' } });
    const heard: unknown[] = [];
    const visitors = h.kiosk.visitors;
    const tapCounted = visitors.tap.bind(visitors);
    visitors.tap = (facts) => {
      heard.push(facts);
      tapCounted(facts);
    };
    value(await tap(h, { language: 'fr' }));
    await h.hangup();
    value(await tap(h));
    assert.deepEqual(heard, [
      { callMode: 'audio', avatarId: h.kiosk.config.cast[0]!.id, language: 'fr' },
      { callMode: 'audio', avatarId: h.kiosk.config.cast[0]!.id, language: 'en' },
    ]);
  });
});

describe('a spare keeps alive as the kiosk’s calls do', () => {
  const pongMessages = (h: Harness, liveId: string) => h.session(liveId).clientMessages.filter((m) => m.type === 4).length;

  it('by default with a pong message to each of the service’s pings', async () => {
    const h = await setup();
    const spareId = await approach(h);
    await advanceInSteps(h.clock, 60_000, { stepMs: 1_000 });
    assert.ok(pongMessages(h, spareId) > 0);
  });

  it('in the style the service accepted: after it refused the pong message, WebSocket pongs only', async () => {
    const h = await setup();
    assert.notEqual(h.kiosk.connection.keepAlive.refused('pong-message', 1008), null);
    const spareId = await approach(h);
    await advanceInSteps(h.clock, 60_000, { stepMs: 1_000 });
    assert.equal(h.kiosk.spares.phase, 'ready', 'still held: the service took the WebSocket pongs as signs of life');
    assert.equal(pongMessages(h, spareId), 0);
  });
});
