/**
 * A tap, as the renderer and the service see it (the call orchestrator, electron/kiosk/call-orchestrator.ts,
 * with the services it uses): the kiosk against the in-process emulator on
 * 127.0.0.1:0, everything on one FakeClock (the emulator answers after 50 fake ms). What is asserted is
 * what the renderer receives (events, in order), what the service receives (the create request, conn_init,
 * type 5) and the figures the call leaves behind.
 */
import { describe, it } from 'node:test';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import assert from 'node:assert/strict';
import { CHANNELS, type Result } from '../../../electron/contract.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { startEmulator, type EmulatedSession } from '../../../electron/emulator/index.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { createChannelRegistry } from '../../../electron/kiosk/channels.ts';
import { createKiosk } from '../../../electron/kiosk/compose.ts';
import { kioskOnSlowEmulator, shutDownAfterEach, TINY_PNG, value, type KioskOnEmulator, type KioskOnEmulatorOptions } from '../../helpers/kiosk-on-emulator.ts';
import { advanceUntil, driveUntilSettled } from '../../helpers/until.ts';

const T0 = 1_700_000_000_000;
const LATENCY_MS = 50;

type Harness = KioskOnEmulator;
const track = shutDownAfterEach();

/** No spares here (prewarm off): every tap takes the normal path. */
async function setup(options: KioskOnEmulatorOptions = {}): Promise<Harness> {
  return track(await kioskOnSlowEmulator({ ...options, config: { prewarm: { mode: 'off' }, ...options.config } }));
}

/** Tap: `session.start` (resolves once the session exists), driving fake time meanwhile. */
async function tap(h: Harness, arg: unknown = {}): Promise<string> {
  const r = (await driveUntilSettled(h.clock, h.dispatch(CHANNELS.sessionStart, arg), { stepMs: 10 })) as Result<{ liveId: string | null }>;
  const liveId = value(r).liveId;
  assert.ok(liveId, 'the session exists');
  return liveId;
}

const types = (s: EmulatedSession) => s.clientMessages.map((m) => m.type);
const request = (s: EmulatedSession) => s.request as { avatar: { name?: string; persona: string }; moderation?: string; extra_motion?: boolean; call_mode: string };

describe('a tap, by default (the renderer joins RTC first)', () => {
  it('credentials go out at once, conn_init only after the renderer reports its RTC side ready; then live', async () => {
    const h = await setup({ kiosk: {} });
    const liveId = await tap(h);
    await h.clock.advance(1_000);
    assert.equal(h.session(liveId).connInits, 0, 'no conn_init (no billing) before the renderer joined');
    assert.deepEqual(h.uiLog(), ['creating', 'connecting', `credentials:${liveId}`]);
    assert.deepEqual(value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId })), { accepted: true });
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    assert.equal(h.session(liveId).connInits, 1);
    assert.deepEqual(h.uiLog(), ['creating', 'connecting', `credentials:${liveId}`, 'live']);
  });

  it('the call figures: timed from the tap, milestones accepted as soon as the credentials name the call', async () => {
    const h = await setup({ config: { rtc: { cloudProxy: 'tcp' } } });
    const tapAt = h.clock.now();
    const liveId = await tap(h);
    const credentialsAt = h.clock.now();
    // The renderer joins with the credentials before any later state names the call.
    assert.deepEqual(value(await h.dispatch(CHANNELS.sessionReportMilestone, { liveId, milestone: 'joined', durationMs: 120 })), { accepted: true });
    await h.clock.advance(200);
    value(await h.dispatch(CHANNELS.sessionRtcReady, { liveId }));
    const readyAt = h.clock.now();
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    const live = h.kiosk.calls.state;
    assert.ok(live.phase === 'live');
    await driveUntilSettled(h.clock, h.kiosk.calls.hangup(), { stepMs: 50 });
    const figures = h.events.filter((e) => e.type === 'call-figures');
    assert.equal(figures.length, 1, 'once per tap');
    assert.deepEqual(figures[0], {
      type: 'call-figures',
      figures: {
        liveId,
        callMode: 'audio',
        tapToRtcReadyMs: readyAt - tapAt,
        tapToConnInitAckMs: live.sinceMs - tapAt,
        tapToAvatarPublishedMs: null,
        tapToFirstFrameMs: null,
        tapToFirstAudioMs: null,
        joinMs: 120,
        proxy: 'tcp',
        endReason: 'user_end',
      },
    });
    assert.ok(credentialsAt > tapAt && readyAt > credentialsAt);
    assert.deepEqual(h.kiosk.telemetry.lastCallFigures, figures[0]!.type === 'call-figures' ? figures[0]!.figures : null);
  });
});

describe('what a session is created with', () => {
  it('the tapped cast member (its name and persona), moderation and extra motion when configured', async () => {
    const h = await setup({
      config: { moderation: 'strict', extraMotion: false, avatars: [{ id: 'ava', name: 'Ava', imagePath: TINY_PNG }, { id: 'bo', name: 'Bo', imagePath: TINY_PNG, persona: 'Bo persona.' }] },
      kiosk: { awaitRendererRtc: false },
    });
    const liveId = await tap(h, { avatarId: 'bo' });
    const req = request(h.session(liveId));
    assert.equal(req.avatar.name, 'Bo');
    assert.match(req.avatar.persona, /^Bo persona\./);
    assert.equal(req.moderation, 'strict');
    assert.equal(req.extra_motion, false);
    assert.equal(h.kiosk.telemetry.callAvatarId, 'bo');
  });

  it('with nothing configured, a public kiosk asks for moderation "strict" itself, and sends no extra motion', async () => {
    const h = await setup({ kiosk: { awaitRendererRtc: false } });
    const liveId = await tap(h);
    const req = request(h.session(liveId));
    assert.equal(req.moderation, 'strict');
    assert.equal('extra_motion' in req, false);
    assert.equal(h.kiosk.telemetry.callAvatarId, 'default');
  });
});

describe('the call mode a tap asks for', () => {
  it('is ignored while allowModeChoice is off, and the operator is told what was asked for', async () => {
    const h = await setup({ config: { allowModeChoice: false }, kiosk: { awaitRendererRtc: false } });
    const warned = () => h.lines.filter((l) => l.includes(' WARN Ignoring the requested call mode: allowModeChoice is off'));
    const same = await tap(h, { callMode: 'audio' });
    assert.deepEqual(warned(), [], 'asking for the configured mode is no problem');
    await driveUntilSettled(h.clock, h.kiosk.calls.hangup(), { stepMs: 50 });
    const other = await tap(h, { callMode: 'video' });
    assert.equal(request(h.session(other)).call_mode, 'audio');
    assert.equal(request(h.session(same)).call_mode, 'audio');
    assert.equal(warned().length, 1);
    assert.match(warned()[0]!, /"requested":"video"/);
  });

  it('is honoured with allowModeChoice on', async () => {
    const h = await setup({ config: { allowModeChoice: true }, kiosk: { awaitRendererRtc: false } });
    const liveId = await tap(h, { callMode: 'video' });
    assert.equal(request(h.session(liveId)).call_mode, 'video');
  });
});

describe('the tap and the microphone', () => {
  it('a visitor muted at the end of the last call starts the next one unmuted (told to the renderer first)', async () => {
    const h = await setup({ kiosk: { awaitRendererRtc: false } });
    value(await h.kiosk.calls.setMuted({ muted: true }));
    const liveId = await tap(h);
    assert.deepEqual(h.uiLog().slice(0, 3), ['muted:true', 'muted:false', 'creating']);
    await driveUntilSettled(h.clock, h.kiosk.calls.hangup(), { stepMs: 50 });
    const before = h.uiLog().length;
    await tap(h);
    assert.equal(h.uiLog().slice(before).filter((e) => e.startsWith('muted')).length, 0, 'not muted: nothing to tell');
    assert.ok(liveId);
  });
});

describe('a tap right after the end was shown', () => {
  it('is not refused while the last session only cleans up: it waits, then starts a new session', async () => {
    const h = await setup({ kiosk: { awaitRendererRtc: false } });
    const first = await tap(h);
    await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
    let again: Promise<unknown> | null = null;
    const off = h.kiosk.events.onEvent((e) => {
      // The renderer's end screen offers a new call at once.
      if (e.type === 'state' && e.state.phase === 'ended' && !again) again = h.dispatch(CHANNELS.sessionStart, {});
    });
    await driveUntilSettled(h.clock, h.kiosk.calls.hangup(), { stepMs: 50 });
    off();
    assert.ok(again, 'the end was shown');
    const r = (await driveUntilSettled(h.clock, again as Promise<unknown>, { stepMs: 10 })) as Result<{ liveId: string | null }>;
    const second = value(r).liveId;
    assert.ok(second && second !== first);
    assert.equal(h.emu.listSessions().length, 2);
    assert.deepEqual(types(h.session(first)).filter((t) => t === 5), [5], 'the first was hung up once');
  });
});

describe('connections to the service', () => {
  it('the tap\'s create and its control socket share one keep-alive connection (no second TCP set-up)', async () => {
    const clock = new FakeClock(T0);
    const emu = await startEmulator({ host: '127.0.0.1', port: 0, clock, knobs: { latencyMs: LATENCY_MS, warmupMs: { audio: 0, video: 0 }, endingMs: 300 } });
    // A TCP relay in front of the service counts the connections the kiosk opens.
    const opened: Socket[] = [];
    const relay = createServer((client) => {
      opened.push(client);
      const upstream = connect(Number(new URL(emu.baseUrl).port), '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const config = resolveConfig({ callMode: 'audio', prewarm: { mode: 'off' }, avatar: { imagePath: TINY_PNG, persona: 'P' }, service: { baseUrl: `http://127.0.0.1:${(relay.address() as AddressInfo).port}` } }, {});
    const channels = createChannelRegistry();
    const kiosk = await createKiosk({ channels, config, apiKey: emu.apiKey, apiKeySource: 'env', clock, awaitRendererRtc: false });
    try {
      // The start-up service check answered first (on the connection the tap then reuses).
      await advanceUntil(clock, () => kiosk.health.current.status === 'connected', { stepMs: 10 });
      const r = (await driveUntilSettled(clock, channels.dispatch(CHANNELS.sessionStart, {}), { stepMs: 10 })) as Result<{ liveId: string | null }>;
      assert.ok(value(r).liveId);
      await advanceUntil(clock, () => kiosk.calls.state.phase === 'live', { stepMs: 10 });
      assert.equal(opened.length, 1);
      await driveUntilSettled(clock, kiosk.calls.hangup(), { stepMs: 50 });
    } finally {
      await driveUntilSettled(clock, kiosk.shutdown());
      for (const socket of opened) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
      await emu.close();
    }
  });
});
