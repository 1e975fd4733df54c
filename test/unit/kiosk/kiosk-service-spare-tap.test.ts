/**
 * The tap that takes a spare session, with the renderer joining RTC first (the default): its credentials
 * reach the renderer at once, its states only once the spare's first conn_init is answered. The kiosk
 * service against the in-process emulator on 127.0.0.1:0, on one FakeClock (50 fake ms per answer).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type Result } from '../../../electron/contract.ts';
import type { EmulatedSession } from '../../../electron/emulator/index.ts';
import { kioskOnSlowEmulator, shutDownAfterEach, value, type KioskOnEmulator, type KioskOnEmulatorOptions } from '../../helpers/kiosk-on-emulator.ts';
import { advanceInSteps, advanceUntil, driveUntilSettled, until } from '../../helpers/until.ts';

type Harness = KioskOnEmulator;
const track = shutDownAfterEach();

/** Spares on approach (the default); `awaitRendererRtc` as the kiosk's default unless given. */
async function setup(options: KioskOnEmulatorOptions & { awaitRendererRtc?: boolean } = {}): Promise<Harness> {
  const { awaitRendererRtc, ...rest } = options;
  return track(await kioskOnSlowEmulator({ ...rest, service: awaitRendererRtc === undefined ? {} : { awaitRendererRtc } }));
}

/** Approach, then let fake time pass until the spare's socket is open. Returns the spare's room. */
async function approach(h: Harness): Promise<string> {
  value(await h.service.handle(CHANNELS.attractReport, { showing: true, present: true }));
  await advanceUntil(h.clock, () => h.service.spares.phase === 'ready', { stepMs: 10, message: 'spare ready' });
  const created = h.spareLog().find(([s]) => s === 'created');
  assert.ok(created?.[1]);
  return created[1];
}

/** The visitor taps: the attract screen goes away (unless its report is late), then `session.start`
 *  (resolves once the session exists). */
async function tap(h: Harness, arg: unknown = {}, leaveAttract = true): Promise<string> {
  if (leaveAttract) value(await h.service.handle(CHANNELS.attractReport, { showing: false, present: true }));
  const r = (await driveUntilSettled(h.clock, h.service.handle(CHANNELS.sessionStart, arg), { stepMs: 10, realTimeoutMs: 3_000 })) as Result<{ liveId: string | null }>;
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
    assert.deepEqual(value(await h.service.handle(CHANNELS.sessionReportMilestone, { liveId, milestone: 'joined', durationMs: 80 })), { accepted: true });
    await h.clock.advance(500);
    assert.equal(h.session(spareId).connInits, 0);
    value(await h.service.handle(CHANNELS.sessionRtcReady, { liveId }));
    await advanceUntil(h.clock, () => h.service.state.phase === 'live', { stepMs: 10 });
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`, 'creating', 'connecting', 'live']);
    assert.deepEqual(h.events.map((e) => e.type), ['spare', 'credentials', 'spare', 'state', 'state', 'state'], 'nothing else reaches the renderer');
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
    await driveUntilSettled(h.clock, h.service.hangup(), { stepMs: 50 });
    const figures = h.service.lastCallFigures;
    assert.ok(figures);
    assert.deepEqual([figures.liveId, figures.joinMs], [spareId, 80]);
  });

  it('a hangup before the renderer joined ends the spare (type 5 once); no other room is made', async () => {
    const h = await setup();
    const spareId = await approach(h);
    await tap(h);
    await driveUntilSettled(h.clock, h.service.hangup(), { stepMs: 50 });
    await h.clock.advance(1_000);
    assert.deepEqual(nonKeepAlive(h.session(spareId)), [5]);
    assert.equal(h.emu.listSessions().length, 1, 'the visitor\'s hangup made no new room');
    assert.equal(h.session(spareId).billedSeconds, 0);
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['used', spareId, undefined],
    ]);
    assert.equal(h.service.state.phase, 'ended');
  });

  it('a video spare still warming (NOT_READY) is the call: it goes live on its own room after the retry', async () => {
    const h = await setup({ config: { callMode: 'video' }, knobs: { warmupMs: { audio: 0, video: 1_000 } } });
    const spareId = await approach(h);
    const liveId = await tap(h);
    value(await h.service.handle(CHANNELS.sessionRtcReady, { liveId }));
    await advanceUntil(h.clock, () => h.service.state.phase === 'live', { stepMs: 50, maxFakeMs: 10_000 });
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
    value(await h.service.handle(CHANNELS.sessionRtcReady, { liveId }));
    await until(() => h.session(spareId).connInits === 1, { message: 'conn_init of the spare' });
    h.emu.knobs.initFailure = false;
    await advanceUntil(h.clock, () => h.emu.listSessions().length === 2, { stepMs: 10, message: 'a fresh room' });
    const fresh = h.emu.listSessions().find((s) => s.id !== spareId)!.id;
    await advanceUntil(h.clock, () => h.events.some((e) => e.type === 'credentials' && e.liveId === fresh), { stepMs: 10 });
    value(await h.service.handle(CHANNELS.sessionRtcReady, { liveId: fresh }));
    await advanceUntil(h.clock, () => h.service.state.phase === 'live', { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'init_failed'],
    ]);
    assert.ok(h.lines.some((l) => l.includes('The spare session failed at the tap; creating a new session') && l.includes('init_failed')), h.lines.join('\n'));
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`, 'creating', 'connecting', `credentials:${fresh}`, 'live'], 'none of the failed spare\'s states');
    // The visitor is in a call: 30 s of someone in front of the screen make no spare.
    await advanceInSteps(h.clock, 30_000, { stepMs: 1_000 });
    assert.equal(h.emu.listSessions().length, 2);
    assert.equal(h.service.state.phase, 'live');
  });
});

describe('a tap on a spare with no renderer to join RTC', () => {
  it('the credentials are held with the states until the first answer, in order, and nothing fails on the way', async () => {
    const h = await setup({ awaitRendererRtc: false });
    const spareId = await approach(h);
    assert.equal(await tap(h), spareId);
    await advanceUntil(h.clock, () => h.service.state.phase === 'live', { stepMs: 10 });
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
    value(await h.service.handle(CHANNELS.sessionRtcReady, { liveId: fresh }));
    await advanceUntil(h.clock, () => h.service.state.phase === 'live', { stepMs: 10 });
    assert.equal(h.session(spareId).connInits, 0, 'the lost spare was never billed');
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`, 'creating', 'connecting', `credentials:${fresh}`, 'live'], 'none of the lost spare\'s states');
  });
});

describe('the out-of-credits stop', () => {
  it('is lifted by a created room, not by a tap abandoned before its room was answered', async () => {
    const h = await setup({ knobs: { createDelayMs: 1_000 } });
    h.emu.setBalance(h.emu.apiKey, 10);
    value((await driveUntilSettled(h.clock, h.service.handle(CHANNELS.sessionStart, {}), { stepMs: 50 })) as Result<unknown>);
    await advanceUntil(h.clock, () => h.service.state.phase === 'failed', { stepMs: 50 });
    assert.equal(h.service.spares.blockedBy, 'insufficient_credits');
    h.emu.setBalance(h.emu.apiKey, 1000);
    // A visitor taps and walks away while the create is still out: the room is closed unused.
    const started = h.service.handle(CHANNELS.sessionStart, {});
    await until(() => h.emu.listSessions().length === 1, { message: 'the create reached the service' });
    await driveUntilSettled(h.clock, Promise.all([h.service.hangup(), started]), { stepMs: 50 });
    assert.equal(h.service.spares.blockedBy, 'insufficient_credits', 'no room was handed over: still stopped');
    value(await h.service.handle(CHANNELS.attractReport, { showing: true, present: true }));
    await advanceInSteps(h.clock, 5_000, { stepMs: 500 });
    assert.equal(h.emu.listSessions().length, 1, 'no spare');
    assert.deepEqual(h.spareLog(), []);
  });
});

describe('spares and the service client', () => {
  it('a new key drops the spare (type 5, settings_changed) and forgets an out-of-credits stop', async () => {
    const h = await setup();
    h.emu.setBalance(h.emu.apiKey, 10);
    const r = (await driveUntilSettled(h.clock, h.service.handle(CHANNELS.sessionStart, {}), { stepMs: 10 })) as Result<{ liveId: string | null }>;
    assert.equal(value(r).liveId, null);
    await advanceUntil(h.clock, () => h.service.state.phase === 'failed', { stepMs: 10 });
    assert.equal(h.service.spares.blockedBy, 'insufficient_credits');
    h.emu.setBalance(h.emu.apiKey, 1000);
    value(await h.service.setApiKey({ apiKey: null }));
    assert.equal(h.service.spares.blockedBy, null, 'a changed key may have credits');
    const spareId = await approach(h);
    value(await h.service.setApiKey({ apiKey: null }));
    await advanceUntil(h.clock, () => h.session(spareId).status !== 'waiting', { stepMs: 10 });
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['expired', spareId, 'settings_changed'],
    ]);
    assert.deepEqual(nonKeepAlive(h.session(spareId)), [5]);
  });

  it('opening after a closed spell makes no spare unless the attract screen said it shows', async () => {
    const h = await setup({ config: { prewarm: { mode: 'always' } } });
    h.service.setOpening({ open: false, nextOpenAt: null, timeZone: null });
    h.service.setOpening({ open: true, nextOpenAt: null, timeZone: null });
    await advanceInSteps(h.clock, 2_000, { stepMs: 100 });
    assert.equal(h.emu.listSessions().length, 0);
    assert.deepEqual(h.spareLog(), []);
  });
});
