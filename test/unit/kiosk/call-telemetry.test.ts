/**
 * Call telemetry (electron/kiosk/call-telemetry.ts): a tap's field figures and connection figures as main
 * keeps them (ledger, /metrics, staff Status): each timed from the tap on the injected clock, the first
 * report of each milestone counting, reports for another call ignored, and one `call-figures` event just
 * before the terminal state with how the call ended (a tap refused after a warning too). Real emulator on
 * 127.0.0.1 with no latency, fake time moved only by the test.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type CallFigures, type KioskEvent } from '../../../electron/contract.ts';
import { kioskOnEmulatorPerTest, T0, TINY_PNG, type KioskOnEmulator } from '../../helpers/kiosk-on-emulator.ts';
import { until } from '../../helpers/until.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { createCallTelemetry } from '../../../electron/kiosk/call-telemetry.ts';
import type { SessionState } from '../../../electron/core/session-types.ts';
import { sessionSummary } from '../../helpers/metrics-source.ts';

const { setup } = kioskOnEmulatorPerTest();

const figuresEvents = (events: KioskEvent[]) => events.flatMap((e) => (e.type === 'call-figures' ? [e.figures] : []));
const milestone = (h: KioskOnEmulator, arg: Record<string, unknown>) => h.dispatch(CHANNELS.sessionReportMilestone, arg);
const quality = (h: KioskOnEmulator, arg: Record<string, unknown>) => h.dispatch(CHANNELS.sessionReportQuality, arg);

describe('call figures: a whole call timed from the tap', () => {
  it('RTC ready, ack, published, first frame and audio, the join; the first report of each counts; one event before the end', async () => {
    const h = await setup();
    const liveId = await h.tap();
    assert.equal(h.clock.now(), T0, 'the emulator answers without fake time passing');
    await h.clock.advance(50);
    // Another call's report is not this one's RTC side.
    assert.deepEqual(await h.kiosk.calls.rtcReady({ liveId: 'someone-else' }), { ok: true, value: { accepted: false } });
    await h.clock.advance(70);
    assert.deepEqual(await h.kiosk.calls.rtcReady({ liveId }), { ok: true, value: { accepted: true } });
    await h.reach('live');
    await h.clock.advance(30);
    assert.deepEqual(await milestone(h, { liveId, milestone: 'avatar_published' }), { ok: true, value: { accepted: true } });
    await h.clock.advance(10);
    assert.deepEqual(await milestone(h, { liveId, milestone: 'first_frame' }), { ok: true, value: { accepted: true } });
    await h.clock.advance(5);
    assert.deepEqual(await milestone(h, { liveId, milestone: 'first_audio' }), { ok: true, value: { accepted: true } });
    assert.deepEqual(await milestone(h, { liveId, milestone: 'joined', durationMs: 90 }), { ok: true, value: { accepted: true } });
    // Later repeats change nothing: the first of each counts.
    await h.clock.advance(1_000);
    for (const m of ['avatar_published', 'first_frame', 'first_audio'] as const) {
      assert.deepEqual(await milestone(h, { liveId, milestone: m }), { ok: true, value: { accepted: true } });
    }
    assert.deepEqual(await milestone(h, { liveId, milestone: 'joined', durationMs: 7 }), { ok: true, value: { accepted: true } });
    assert.deepEqual(await h.kiosk.calls.rtcReady({ liveId }), { ok: true, value: { accepted: false } }, 'already live');
    // A milestone of another call is refused.
    assert.deepEqual(await milestone(h, { liveId: 'someone-else', milestone: 'first_frame' }), { ok: true, value: { accepted: false } });
    assert.deepEqual(figuresEvents(h.events), [], 'nothing is sent while the call runs');
    assert.equal(h.kiosk.telemetry.lastCallFigures, null);

    await h.hangup();
    const expected: CallFigures = {
      liveId,
      callMode: 'audio',
      tapToRtcReadyMs: 120,
      tapToConnInitAckMs: 120,
      tapToAvatarPublishedMs: 150,
      tapToFirstFrameMs: 160,
      tapToFirstAudioMs: 165,
      joinMs: 90,
      proxy: 'off',
      endReason: 'user_end',
    };
    assert.deepEqual(figuresEvents(h.events), [expected]);
    assert.deepEqual(h.kiosk.telemetry.lastCallFigures, expected);
    // Sent once, just before the terminal state.
    const last = h.events.slice(-2).map((e) => (e.type === 'state' ? e.state.phase : e.type));
    assert.deepEqual(last, ['call-figures', 'ended']);

    // After the end there is no call to time: late reports are refused.
    assert.deepEqual(await h.kiosk.calls.rtcReady({ liveId }), { ok: true, value: { accepted: false } });
    assert.deepEqual(await milestone(h, { liveId, milestone: 'first_frame' }), { ok: true, value: { accepted: false } });
    assert.deepEqual(h.kiosk.telemetry.lastCallFigures, expected);
  });

  it('a joined report without its duration leaves the join unknown; milestones that never came stay null', async () => {
    const h = await setup({ kiosk: { awaitRendererRtc: false } });
    const liveId = await h.tap();
    await h.reach('live');
    // Without the RTC-first wait nothing waits for this report: it is refused and times nothing.
    assert.deepEqual(await h.kiosk.calls.rtcReady({ liveId }), { ok: true, value: { accepted: false } });
    assert.deepEqual(await milestone(h, { liveId, milestone: 'joined' }), { ok: true, value: { accepted: true } });
    await h.clock.advance(25);
    await h.hangup();
    assert.deepEqual(h.kiosk.telemetry.lastCallFigures, {
      liveId,
      callMode: 'audio',
      tapToRtcReadyMs: null,
      tapToConnInitAckMs: 0,
      tapToAvatarPublishedMs: null,
      tapToFirstFrameMs: null,
      tapToFirstAudioMs: null,
      joinMs: null,
      proxy: 'off',
      endReason: 'user_end',
    });
  });

  it('the end reason is the hangup cause main was given (idle, media_stalled…), else the service’s reason', async () => {
    const h = await setup({ kiosk: { awaitRendererRtc: false }, config: { rtc: { cloudProxy: 'tcp' } } });
    await h.tap();
    await h.reach('live');
    await h.hangup('idle');
    assert.deepEqual(figuresEvents(h.events).map((f) => [f.endReason, f.proxy]), [['idle', 'tcp']]);

    // `visitor` is the default, not a cause of its own: the service's reason (user_end) is recorded.
    await h.tap();
    await h.reach('live');
    await h.hangup('visitor');
    assert.deepEqual(figuresEvents(h.events).map((f) => f.endReason), ['idle', 'user_end']);

    // The first cause given counts.
    await h.tap();
    await h.reach('live');
    const a = h.kiosk.calls.hangup('media_stalled');
    const b = h.kiosk.calls.hangup('idle');
    await h.hangup();
    await Promise.all([a, b]);
    assert.deepEqual(figuresEvents(h.events).map((f) => f.endReason), ['idle', 'user_end', 'media_stalled']);
  });

  it('the service ending the call: its reason is the end reason (credit_insufficient)', async () => {
    const h = await setup({ kiosk: { awaitRendererRtc: false } });
    const liveId = await h.tap();
    await h.reach('live');
    h.emu.forceHangup(liveId, 'credit_insufficient');
    await h.reach('ended');
    assert.equal(h.kiosk.telemetry.lastCallFigures?.endReason, 'credit_insufficient');
    assert.equal(h.kiosk.telemetry.lastCallFigures?.liveId, liveId);
  });

  it('a tap refused by the service (no credits): figures with no live id, nothing timed, the error code as the reason', async () => {
    const h = await setup();
    h.emu.setBalance(h.emu.apiKey, 0);
    const r = await h.dispatch(CHANNELS.sessionStart, {});
    assert.deepEqual(r, { ok: true, value: { liveId: null } });
    await h.reach('failed');
    assert.deepEqual(h.phases(), ['creating', 'failed']);
    const end = h.kiosk.calls.state;
    assert.ok(end.phase === 'failed');
    assert.deepEqual([end.liveId, end.error.code, end.summary], [null, 'insufficient_credits', null]);
    assert.deepEqual(figuresEvents(h.events), [
      {
        liveId: null,
        callMode: 'audio',
        tapToRtcReadyMs: null,
        tapToConnInitAckMs: null,
        tapToAvatarPublishedMs: null,
        tapToFirstFrameMs: null,
        tapToFirstAudioMs: null,
        joinMs: null,
        proxy: 'off',
        endReason: 'insufficient_credits',
      },
    ]);
    // A refusal is expected business: warnings for staff, never an error (such as a listener that threw).
    assert.deepEqual(h.warnings.filter((line) => / ERROR /.test(line)), []);
    assert.ok(h.warnings.some((line) => line.includes('WARN spare: stopped until a create succeeds')));
    // Nothing waits for the renderer any more.
    assert.deepEqual(await h.kiosk.calls.rtcReady({ liveId: 'x' }), { ok: true, value: { accepted: false } });
  });

  it('a spare that fails at the tap: the RTC side first reported ready for this tap counts, not the fresh session’s', async () => {
    const h = await setup({ config: { prewarm: { mode: 'on-approach' } } });
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await until(() => h.kiosk.spares.phase === 'ready');
    await h.dispatch(CHANNELS.attractReport, { showing: false, present: true });
    h.emu.knobs.initFailure = true; // the spare's first conn_init is refused (LIVE_CONN_INIT_FAILED)
    const spareId = await h.tap();
    await h.clock.advance(40);
    assert.deepEqual(await h.kiosk.calls.rtcReady({ liveId: spareId }), { ok: true, value: { accepted: true } });
    await until(() => h.emu.listSessions().length === 2, { message: 'the fresh session' });
    h.emu.knobs.initFailure = false;
    const freshId = h.emu.listSessions()[1]!.id;
    await until(() => h.events.some((e) => e.type === 'credentials' && e.liveId === freshId));
    await h.clock.advance(60);
    assert.deepEqual(await h.kiosk.calls.rtcReady({ liveId: freshId }), { ok: true, value: { accepted: true } });
    await h.reach('live');
    await h.hangup();
    assert.deepEqual(figuresEvents(h.events).map((f) => [f.liveId, f.tapToRtcReadyMs, f.tapToConnInitAckMs]), [[freshId, 40, 100]]);
  });

  it('the call mode chosen at the tap is the figures’ call mode', async () => {
    const h = await setup({ kiosk: { awaitRendererRtc: false }, config: { allowModeChoice: true }, knobs: { warmupMs: { audio: 0, video: 0 } } });
    await h.tap({ callMode: 'video' });
    await h.reach('live');
    await h.hangup();
    assert.equal(h.kiosk.telemetry.lastCallFigures?.callMode, 'video');
  });
});

describe('connection figures (session.reportQuality)', () => {
  it('are kept for the call on screen, timed on arrival; a report for another call is refused', async () => {
    const h = await setup({ kiosk: { awaitRendererRtc: false } });
    const liveId = await h.tap();
    await h.reach('live');
    assert.equal(h.kiosk.telemetry.lastCallQuality, null);
    await h.clock.advance(1_234);
    const figures = { liveId, bitrateKbps: 800, packetLossPct: 1.5, frameRate: 24, rttMs: 60, level: 'good' };
    assert.deepEqual(await quality(h, figures), { ok: true, value: { accepted: true } });
    const first = { bitrateKbps: 800, packetLossPct: 1.5, frameRate: 24, rttMs: 60, level: 'good', atMs: T0 + 1_234, final: false };
    assert.deepEqual(h.kiosk.telemetry.lastCallQuality, first);
    assert.deepEqual(await quality(h, { ...figures, liveId: 'an-earlier-call', level: 'down' }), { ok: true, value: { accepted: false } });
    assert.deepEqual(h.kiosk.telemetry.lastCallQuality, first, 'a late report of another call never overwrites');

    await h.hangup();
    // The call just ended is still the one on screen: its final figures count.
    await h.clock.advance(10);
    assert.deepEqual(await quality(h, { ...figures, level: 'fair', final: true }), { ok: true, value: { accepted: true } });
    assert.deepEqual(h.kiosk.telemetry.lastCallQuality, { ...first, level: 'fair', atMs: h.clock.now(), final: true });
  });

  it('with no call on screen nothing is accepted', async () => {
    const h = await setup();
    const r = await quality(h, { liveId: 'L', bitrateKbps: 1, packetLossPct: 0, frameRate: 1, rttMs: 1, level: 'poor', final: false });
    assert.deepEqual(r, { ok: true, value: { accepted: false } });
    assert.equal(h.kiosk.telemetry.lastCallQuality, null);
  });
});

describe('the figures of a tap refused after a warning', () => {
  it('the warning (a long avatar name) reaches the renderer; the figures still name no live id (null, not missing)', async () => {
    const name = 'Professor Archibald Longname';
    const h = await setup({ config: { avatar: { imagePath: TINY_PNG, persona: 'A test persona.', name } } });
    h.emu.setBalance(h.emu.apiKey, 0);
    assert.deepEqual(await h.dispatch(CHANNELS.sessionStart, {}), { ok: true, value: { liveId: null } });
    await h.reach('failed');
    assert.deepEqual(
      h.events.flatMap((e) => (e.type === 'warning' ? [e.message] : e.type === 'credentials' ? [`credentials:${e.liveId}`] : [])),
      [`The avatar name "${name}" has ${[...name].length} characters; 20 or fewer are recommended.`],
    );
    // Exactly null: an undefined live id would vanish from the JSON the ledger and /metrics are made of.
    const figures = h.events.flatMap((e) => (e.type === 'call-figures' ? [e.figures] : []));
    assert.deepEqual(figures.map((f) => [f.liveId, f.endReason]), [[null, 'insufficient_credits']]);
    assert.strictEqual(h.kiosk.telemetry.lastCallFigures?.liveId, null);
  });
});

describe('the figures kept from the session’s states alone (the telemetry on its own, fake clock)', () => {
  const summary = (hangupReason: string | null) => sessionSummary({ liveId: 'L1', hangupReason });
  const make = () => {
    const sent: CallFigures[] = [];
    const telemetry = createCallTelemetry({
      clock: new FakeClock(10_000),
      emit: (e) => { if (e.type === 'call-figures') sent.push(e.figures); },
      cloudProxy: () => 'off',
      currentLiveId: () => null,
    });
    return { sent, telemetry };
  };

  it('before any tap, notes of credentials, causes, RTC and states change nothing and send nothing', () => {
    const { sent, telemetry } = make();
    telemetry.noteCredentials('L1');
    telemetry.noteCause('idle');
    telemetry.noteRtcReady();
    telemetry.noteState({ phase: 'ended', liveId: 'L1', summary: summary('user_end') });
    assert.deepEqual(sent, []);
    assert.equal(telemetry.lastCallFigures, null);
  });

  it('the live id comes from the states when no credentials named it; a failure without one keeps it', () => {
    const { sent, telemetry } = make();
    telemetry.tap('video', 'ava');
    telemetry.noteState({ phase: 'connecting', liveId: 'L1', attempt: 1 });
    telemetry.noteState({ phase: 'failed', liveId: null, error: { code: 'network', message: 'lost' }, summary: null });
    assert.deepEqual(sent.map((f) => [f.liveId, f.endReason]), [['L1', 'network']]);
  });

  it('the conn_init ack is the first live state’s; a reconnect that goes live again does not move it', () => {
    const { sent, telemetry } = make();
    telemetry.tap('audio', 'ava');
    const states: SessionState[] = [
      { phase: 'live', liveId: 'L1', sinceMs: 10_250, endsAtMs: 70_000 },
      { phase: 'reconnecting', liveId: 'L1', attempt: 1, sinceMs: 10_250, endsAtMs: 70_000 },
      { phase: 'live', liveId: 'L1', sinceMs: 12_000, endsAtMs: 70_000 },
    ];
    for (const state of states) telemetry.noteState(state);
    telemetry.noteState({ phase: 'ended', liveId: 'L1', summary: summary('user_end') });
    assert.deepEqual(sent.map((f) => [f.tapToConnInitAckMs, f.endReason]), [[250, 'user_end']]);
  });

  it('an end with neither a cause nor the service’s reason is recorded as unknown', () => {
    const { sent, telemetry } = make();
    telemetry.tap('audio', 'ava');
    telemetry.noteState({ phase: 'ended', liveId: 'L1', summary: summary(null) });
    assert.deepEqual(sent.map((f) => f.endReason), ['unknown']);
  });
});
