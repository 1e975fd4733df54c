/**
 * The kiosk's operations around a call, against the real emulator on 127.0.0.1 with one FakeClock: the call
 * orchestrator's hangup (its cause heard by every listener, type 5 once), media errors, the renderer lost
 * and shutdown with a slow hangup; the key refused while busy; settings applied without a restart;
 * availability (opening hours and holds, the warm connection); and the staff gate of the channels.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Socket } from 'node:net';
import { CHANNELS, type HangupCause, type KioskEvent } from '../../../electron/contract.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import type { GroupHandlers } from '../../../electron/kiosk/channels.ts';
import { startEmulator } from '../../../electron/emulator/index.ts';
import { kioskOnEmulatorPerTest, TINY_PNG } from '../../helpers/kiosk-on-emulator.ts';
import { advanceUntil, driveUntilSettled, until } from '../../helpers/until.ts';

const { setup, closeNow } = kioskOnEmulatorPerTest();

const noRtcWait = { kiosk: { awaitRendererRtc: false } };
const since = (events: KioskEvent[], n: number) => events.slice(n).map((e) => (e.type === 'state' ? e.state.phase : e.type));

describe('hangup', () => {
  it('with a call running: every listener hears the cause and live id, then type 5 goes out once', async () => {
    const h = await setup(noRtcWait);
    const heard: Array<[HangupCause, string | null]> = [];
    const listened: string[] = [];
    h.kiosk.calls.onHangupCause((cause, liveId) => void heard.push([cause, liveId]));
    h.kiosk.calls.onHangupCause(() => {
      throw new Error('a broken listener');
    });
    const off = h.kiosk.calls.onHangupCause((cause, liveId) => void listened.push(`${cause}:${liveId}`));
    const liveId = await h.tap();
    await h.reach('live');
    await h.hangup('idle');
    assert.deepEqual(heard, [['idle', liveId]]);
    assert.deepEqual(listened, [`idle:${liveId}`], 'a listener that throws does not keep the others from hearing');
    assert.equal(h.hangupsSeen(liveId), 1);
    assert.equal(h.kiosk.calls.state.phase, 'ended');

    // No cause: the visitor's hangup. An unsubscribed listener hears nothing more.
    off();
    const second = await h.tap();
    await h.reach('live');
    await h.hangup();
    assert.deepEqual(heard, [['idle', liveId], ['visitor', second]]);
    assert.deepEqual(listened, [`idle:${liveId}`]);
    assert.equal(h.hangupsSeen(second), 1);
  });

  it('a cause nobody listens to: the call still ends', async () => {
    const h = await setup(noRtcWait);
    const liveId = await h.tap();
    await h.reach('live');
    await h.hangup('media_stalled');
    assert.equal(h.hangupsSeen(liveId), 1);
    assert.equal(h.kiosk.calls.state.phase, 'ended');
  });

  it('with no call: nothing is heard and nothing changes', async () => {
    const h = await setup();
    const heard: Array<[HangupCause, string | null]> = [];
    const listened: HangupCause[] = [];
    h.kiosk.calls.onHangupCause((cause, liveId) => void heard.push([cause, liveId]));
    h.kiosk.calls.onHangupCause((cause) => void listened.push(cause));
    assert.deepEqual(await h.kiosk.calls.hangup('idle'), { ok: true, value: undefined });
    assert.deepEqual(await h.dispatch(CHANNELS.sessionHangup, undefined), { ok: true, value: undefined });
    assert.deepEqual([heard, listened, h.events], [[], [], []]);
    assert.deepEqual(h.kiosk.calls.state, { phase: 'idle' });
  });
});

describe('reportMediaError', () => {
  it('during a call: hung up (type 5 once) and the end shown as the media failure, with no extra state', async () => {
    const h = await setup(noRtcWait);
    const liveId = await h.tap();
    await h.reach('live');
    const n = h.events.length;
    const r = await driveUntilSettled(h.clock, h.kiosk.calls.reportMediaError({ kind: 'microphone_denied', message: 'NotAllowedError' }), { stepMs: 10 });
    assert.deepEqual(r, { ok: true, value: undefined });
    assert.deepEqual(since(h.events, n), ['ending', 'call-figures', 'failed']);
    const end = h.kiosk.calls.state;
    assert.ok(end.phase === 'failed');
    assert.deepEqual([end.liveId, end.error.code, end.summary?.liveId], [liveId, 'media_unavailable', liveId]);
    assert.equal(h.hangupsSeen(liveId), 1);
    // The figures keep how the hangup went at the service (ours, user_end), as its billing summary says.
    assert.equal(h.kiosk.telemetry.lastCallFigures?.endReason, 'user_end');
  });

  it('arriving while the end is already shown: the end is re-shown as the media failure (billing summary kept)', async () => {
    const h = await setup(noRtcWait);
    let reported: Promise<unknown> | null = null;
    h.kiosk.events.onEvent((e) => {
      if (e.type === 'state' && e.state.phase === 'ended') reported ??= h.kiosk.calls.reportMediaError({ kind: 'camera_denied', message: 'NotReadableError' });
    });
    const liveId = await h.tap();
    await h.reach('live');
    await h.hangup();
    assert.deepEqual(await reported, { ok: true, value: undefined });
    const terminal = h.events.filter((e) => e.type === 'state' && (e.state.phase === 'ended' || e.state.phase === 'failed'));
    assert.equal(terminal.length, 2);
    const [ended, failed] = terminal;
    assert.ok(ended?.type === 'state' && ended.state.phase === 'ended');
    assert.deepEqual(failed, {
      type: 'state',
      previous: 'ended',
      state: { phase: 'failed', liveId, error: { code: 'media_unavailable', message: 'The camera could not be used, so the call was ended. Please ask staff to check the camera.' }, summary: ended.state.summary },
    });
    assert.equal(h.hangupsSeen(liveId), 1, 'still one hangup');
  });

  it('before the call joined its channel: ended with type 5 and shown as rtc_failed', async () => {
    const h = await setup();
    const liveId = await h.tap();
    await driveUntilSettled(h.clock, h.kiosk.calls.reportMediaError({ kind: 'rtc_join_failed', message: 'blocked' }), { stepMs: 10 });
    assert.deepEqual(h.phases(), ['creating', 'connecting', 'ending', 'failed']);
    const end = h.kiosk.calls.state;
    assert.ok(end.phase === 'failed');
    assert.deepEqual([end.liveId, end.error.code], [liveId, 'rtc_failed']);
    assert.equal(h.hangupsSeen(liveId), 1);
    assert.equal(h.emu.getSession(liveId)?.connInits, 0, 'no conn_init: nothing billed');
  });

  it('while the session is still being created: the cancelled session is shown as the media failure', async () => {
    const h = await setup({ knobs: { createDelayMs: 200 } });
    const tap = h.dispatch(CHANNELS.sessionStart, {});
    await until(() => h.kiosk.calls.state.phase === 'creating');
    await driveUntilSettled(h.clock, h.kiosk.calls.reportMediaError({ kind: 'device_missing', message: 'NotFoundError' }), { stepMs: 10 });
    const end = h.kiosk.calls.state;
    assert.ok(end.phase === 'failed', JSON.stringify(end));
    assert.deepEqual(end.error, { code: 'media_unavailable', message: 'No microphone or camera was found, so the call was ended. Please ask staff for help.' });
    assert.deepEqual(h.phases().at(-1), 'failed');
    assert.equal(h.phases().filter((p) => p === 'failed').length, 1, 'one end shown');
    const r = await tap;
    assert.ok(r.ok);
    const made = h.emu.listSessions();
    assert.equal(made.length, 1);
    assert.equal(made[0]!.connInits, 0, 'the room was closed before any conn_init');
    assert.equal(h.hangupsSeen(made[0]!.id), 1);
  });

  it('with no call: nothing happens', async () => {
    const h = await setup();
    assert.deepEqual(await h.kiosk.calls.reportMediaError({ kind: 'other', message: 'x' }), { ok: true, value: undefined });
    assert.deepEqual([h.events, h.kiosk.calls.state], [[], { phase: 'idle' }]);
  });
});

describe('resetToAttract (the renderer was lost)', () => {
  it('a running call is hung up once and the kiosk goes back to idle; the microphone is unmuted', async () => {
    const h = await setup(noRtcWait);
    const liveId = await h.tap();
    await h.reach('live');
    await h.kiosk.calls.setMuted({ muted: true });
    const n = h.events.length;
    await driveUntilSettled(h.clock, h.kiosk.calls.resetToAttract(), { stepMs: 10 });
    assert.deepEqual(since(h.events, n), ['ending', 'call-figures', 'ended', 'idle', 'muted']);
    assert.deepEqual(h.events.slice(-2), [
      { type: 'state', state: { phase: 'idle' }, previous: 'ended' },
      { type: 'muted', muted: false },
    ]);
    assert.equal(h.hangupsSeen(liveId), 1);
    assert.deepEqual(h.kiosk.calls.state, { phase: 'idle' });
    // Main now holds the microphone as unmuted: muting it again is a change the page hears.
    await h.kiosk.calls.setMuted({ muted: true });
    assert.deepEqual(h.events.at(-1), { type: 'muted', muted: true });
  });

  it('after a call ended: back to idle only; not muted, so no muted event; already idle: no event at all', async () => {
    const h = await setup(noRtcWait);
    await h.tap();
    await h.reach('live');
    await h.hangup();
    const n = h.events.length;
    await h.kiosk.calls.resetToAttract();
    assert.deepEqual(h.events.slice(n), [{ type: 'state', state: { phase: 'idle' }, previous: 'ended' }]);
    await h.kiosk.calls.resetToAttract();
    assert.equal(h.events.length, n + 1);
  });
});

describe('shutdown', () => {
  it('a hangup slow to read back its billing is cut off after 5 s: type 5 went out, the session is disposed, a warning logged', async () => {
    const h = await setup({ ...noRtcWait, knobs: { endingMs: 60_000 } });
    const liveId = await h.tap();
    await h.reach('live');
    let done = false;
    const closing = h.kiosk.shutdown().then(() => (done = true));
    const t = h.clock.now();
    await advanceUntil(h.clock, () => done, { stepMs: 100, message: 'shutdown' });
    await closing;
    assert.equal(h.clock.now() - t, 5_000);
    assert.equal(h.hangupsSeen(liveId), 1);
    assert.equal(h.clock.pendingCount, 0, 'nothing of the session is left running');
    assert.deepEqual(h.warnings.map((l) => l.replace(/^\S+ /, '')), ['WARN Hangup is slow; disposing the session without waiting for billing figures']);
  });

  it('a prompt hangup: done without waiting and without a warning; the session’s hangup is shared with shutdown', async () => {
    const h = await setup(noRtcWait);
    const liveId = await h.tap();
    await h.reach('live');
    await driveUntilSettled(h.clock, Promise.all([h.kiosk.shutdown(), h.kiosk.calls.hangup(), h.kiosk.shutdown()]), { stepMs: 10 });
    assert.equal(h.hangupsSeen(liveId), 1);
    assert.deepEqual(h.warnings, []);
    assert.ok(h.clock.now() < 5_000 + 1_700_000_000_000);
  });
});

describe('setApiKey while busy', () => {
  it('refused while a call runs and after shutdown, with the reason', async () => {
    const h = await setup(noRtcWait);
    await h.tap();
    await h.reach('live');
    assert.deepEqual(await h.kiosk.key.set('sk-new'), {
      ok: false,
      error: { code: 'invalid_request', message: 'Hang up the current session before changing the API key.' },
    });
    assert.equal(h.kiosk.connection.mode, 'demo');
    await closeNow();
    assert.deepEqual(await h.kiosk.key.set('sk-new'), { ok: false, error: { code: 'cancelled', message: 'The kiosk is shutting down.' } });
  });

  it('a key that cannot be stored: refused with the store’s reason, logged for staff, the mode unchanged', async () => {
    const h = await setup({
      kiosk: {
        persistApiKey: async () => {
          throw new Error('the key store is locked');
        },
      },
    });
    const r = await h.kiosk.key.set('sk-new');
    assert.deepEqual(r, { ok: false, error: { code: 'internal', message: 'Could not store the API key: the key store is locked' } });
    assert.equal(h.kiosk.connection.mode, 'demo');
    assert.equal(h.warnings.length, 1);
    assert.match(h.warnings[0]!, /ERROR Could not store the API key .*the key store is locked/);
  });
});

describe('reconfigure', () => {
  it('refused while a call runs; else applied: removed settings go, the client is rebuilt, the page told', async () => {
    const h = await setup({ ...noRtcWait, config: { maxCallSeconds: 120 } });
    await h.tap();
    await h.reach('live');
    const next = resolveConfig({ callMode: 'audio', prewarm: { mode: 'off' }, avatar: { name: 'Ada', imagePath: TINY_PNG, persona: 'P' } }, {});
    await assert.rejects(h.kiosk.reconfigure(next), { code: 'invalid_request', message: 'Hang up the current session before changing the settings.' });
    assert.equal(h.kiosk.config.maxCallSeconds, 120);
    await h.hangup();
    const n = h.events.length;
    const before = h.kiosk.connection.client;
    await h.kiosk.reconfigure(next);
    assert.deepEqual(h.events.slice(n), [{ type: 'config-changed' }]);
    assert.equal(Object.hasOwn(h.kiosk.config, 'maxCallSeconds'), false, 'a setting absent from the new config is gone');
    assert.notEqual(h.kiosk.connection.client, before);
    assert.ok(h.kiosk.connection.client);
    const cfg = await h.kiosk.appearance.getConfig();
    assert.ok(cfg.ok);
    assert.deepEqual([cfg.value.avatar.name, cfg.value.maxCallSeconds], ['Ada', null]);

    // Applying the settings in use again (the same object) keeps them.
    await h.kiosk.reconfigure(h.kiosk.config);
    assert.equal(h.kiosk.config.avatar.name, 'Ada');
    assert.equal(h.kiosk.config.callMode, 'audio');
  });
});

describe('opening hours and holds', () => {
  it('closing drops the spare and makes none while closed; reopening makes one again; each change told once', async () => {
    const h = await setup({ config: { prewarm: { mode: 'on-approach' } } });
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await until(() => h.kiosk.spares.phase === 'ready');
    const closed = { open: false, nextOpenAt: '2026-11-25T08:00:00.000Z', timeZone: 'Europe/Paris' };
    const n = h.events.length;
    h.kiosk.availability.setOpening(closed);
    h.kiosk.availability.setOpening({ ...closed }); // the same again: nothing new
    assert.deepEqual(
      h.events.slice(n).map((e) => (e.type === 'spare' ? `spare ${e.status} ${e.reason}` : e)),
      ['spare expired closed', { type: 'opening', opening: closed }],
    );
    assert.equal(h.kiosk.spares.phase, null, 'closing makes no new spare in place of the dropped one');
    assert.deepEqual(h.kiosk.availability.opening, closed);
    const view = h.kiosk.availability.opening;
    view.open = true;
    assert.equal(h.kiosk.availability.opening.open, false, 'the getter hands out a copy');

    // Another visitor walks up while closed: no spare.
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await h.clock.advance(1_000);
    await until(() => h.emu.listSessions().length === 1);
    assert.equal(h.kiosk.spares.phase, null);

    // Only the next opening time moves: told again.
    h.kiosk.availability.setOpening({ ...closed, nextOpenAt: '2026-11-26T08:00:00.000Z' });
    h.kiosk.availability.setOpening({ ...closed, nextOpenAt: '2026-11-26T08:00:00.000Z', timeZone: 'Europe/Berlin' });
    assert.deepEqual(
      h.events.filter((e) => e.type === 'opening').map((e) => e.type === 'opening' && [e.opening.nextOpenAt, e.opening.timeZone]),
      [['2026-11-25T08:00:00.000Z', 'Europe/Paris'], ['2026-11-26T08:00:00.000Z', 'Europe/Paris'], ['2026-11-26T08:00:00.000Z', 'Europe/Berlin']],
    );

    // Open again: the last attract report is replayed, a spare is made.
    h.kiosk.availability.setOpening({ open: true, nextOpenAt: null, timeZone: 'Europe/Berlin' });
    await until(() => h.kiosk.spares.phase === 'ready', { message: 'a spare after reopening' });
    assert.equal(h.emu.listSessions().length, 2);
    assert.deepEqual(h.events.filter((e) => e.type === 'opening').at(-1), { type: 'opening', opening: { open: true, nextOpenAt: null, timeZone: 'Europe/Berlin' } });

    // Only open/closed changes (no next opening known): told, and the spare goes.
    h.kiosk.availability.setOpening({ open: false, nextOpenAt: null, timeZone: 'Europe/Berlin' });
    assert.deepEqual(h.events.filter((e) => e.type === 'opening').at(-1), { type: 'opening', opening: { open: false, nextOpenAt: null, timeZone: 'Europe/Berlin' } });
    assert.equal(h.kiosk.spares.phase, null);
  });

  it('a hold drops the spare and makes none; lifting it makes one again; each change told once', async () => {
    const h = await setup({ config: { prewarm: { mode: 'on-approach' } } });
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await until(() => h.kiosk.spares.phase === 'ready');
    const n = h.events.length;
    h.kiosk.availability.setHold('updating');
    h.kiosk.availability.setHold('updating');
    assert.equal(h.kiosk.availability.hold, 'updating');
    assert.deepEqual(
      h.events.slice(n).map((e) => (e.type === 'spare' ? `spare ${e.status} ${e.reason}` : e)),
      ['spare expired held', { type: 'hold', hold: 'updating' }],
    );
    assert.equal(h.kiosk.spares.phase, null, 'a hold makes no new spare in place of the dropped one');
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await h.clock.advance(1_000);
    await until(() => h.emu.listSessions().length === 1);
    assert.equal(h.kiosk.spares.phase, null);

    h.kiosk.availability.setHold(null);
    assert.equal(h.kiosk.availability.hold, null);
    assert.deepEqual(h.events.at(-1), { type: 'hold', hold: null });
    await until(() => h.kiosk.spares.phase === 'ready', { message: 'a spare after the hold' });
    assert.equal(h.emu.listSessions().length, 2);
  });

  it('after shutdown, opening and hold changes tell nobody and change nothing', async () => {
    const h = await setup();
    await closeNow();
    h.kiosk.availability.setHold('updating');
    assert.equal(h.kiosk.availability.hold, null);
    assert.deepEqual(h.events, []);
  });
});

describe('the IPC entry point and the service’s views', () => {
  it('staff channels follow the registered staff gate', async () => {
    const h = await setup();
    let unlocked = false;
    const handlers = { staff: { lock: async () => ({ ok: true as const, value: undefined }), logTail: async () => ({ ok: true as const, value: { lines: ['a'] } }) } };
    h.channels.register('staff', handlers.staff as unknown as GroupHandlers<'staff'>);
    h.channels.setGate({ touch: () => unlocked });
    assert.deepEqual(await h.dispatch(CHANNELS.staffLogTail, undefined), { ok: false, error: { code: 'unauthorized', message: 'The staff panel is locked. Enter the PIN.' } });
    unlocked = true;
    assert.deepEqual(await h.dispatch(CHANNELS.staffLogTail, undefined), { ok: true, value: { lines: ['a'] } });
  });

  it('an unsubscribed listener hears nothing more', async () => {
    const h = await setup();
    const heard: KioskEvent[] = [];
    const off = h.kiosk.events.onEvent((e) => heard.push(e));
    await h.kiosk.calls.setMuted({ muted: true });
    off();
    await h.kiosk.calls.setMuted({ muted: false });
    assert.deepEqual(heard, [{ type: 'muted', muted: true }]);
    assert.deepEqual(h.events, [{ type: 'muted', muted: true }, { type: 'muted', muted: false }]);
  });

  it('running, the avatar of the last call, the route, and dropping the spare', async () => {
    const h = await setup({ ...noRtcWait, config: { prewarm: { mode: 'on-approach' } } });
    assert.deepEqual([h.kiosk.calls.running, h.kiosk.telemetry.callAvatarId, h.kiosk.connection.route], [false, null, { kind: 'direct' }]);
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await until(() => h.kiosk.spares.phase === 'ready');
    h.kiosk.spares.discard('voice changed');
    assert.deepEqual(h.events.filter((e) => e.type === 'spare').map((e) => e.type === 'spare' && [e.status, e.reason]), [['created', undefined], ['expired', 'voice changed']]);
    await h.dispatch(CHANNELS.attractReport, { showing: false, present: true });
    await h.tap();
    assert.equal(h.kiosk.calls.running, true);
    assert.equal(h.kiosk.telemetry.callAvatarId, h.kiosk.config.cast[0]!.id);
    await h.reach('live');
    await h.hangup();
    await until(() => !h.kiosk.calls.running);
  });

  it('staff see the start-up problems given at creation, then the cast’s', async () => {
    const startup = { kind: 'config' as const, code: 'invalid_config' as const, message: 'config.json: "idle" is not a number; the default is used.' };
    const h = await setup({
      config: { avatars: [{ id: 'ava', imagePath: TINY_PNG, name: 'Ava' }, { id: 'bob', imagePath: '/nonexistent/bob.png', name: 'Bob' }] },
      kiosk: { startupAttention: [startup] },
    });
    const problems = h.kiosk.appearance.castProblems;
    assert.equal(problems.length, 1);
    assert.match(problems[0]!.message, /^The avatar "Bob" \(avatars\.1, id "bob"\)/);
    const attention = h.kiosk.appearance.attention;
    assert.deepEqual(attention[0], startup);
    assert.deepEqual(attention.slice(1).map((a) => [a.kind, a.message]), [['cast', `${problems[0]!.message} The other avatars are available; fix the configuration and restart.`]]);
  });

  it('control sockets for another session (recovery) are opened like the client’s', async () => {
    const h = await setup(noRtcWait);
    const liveId = await h.tap();
    await h.reach('live');
    const { url, headers } = h.kiosk.connection.client!.socketRequest(liveId);
    const seen: string[] = [];
    const socket = h.kiosk.connection.transportFactory(url, headers, {
      onOpen: () => seen.push('open'),
      onMessage: () => {},
      onClose: () => seen.push('closed'),
      onError: () => seen.push('error'),
    });
    await until(() => seen.includes('open'), { message: 'the socket opened' });
    socket.close(1000, 'test');
    await until(() => seen.includes('closed'));
    await h.hangup();
  });

  it('fetch reaches another service URL given as a string, a URL or a Request', async () => {
    const h = await setup();
    const url = `${h.emu.baseUrl}/no-such-path`;
    const a = await h.kiosk.connection.fetch(url);
    const b = await h.kiosk.connection.fetch(new URL(url));
    const c = await h.kiosk.connection.fetch(new Request(url));
    assert.deepEqual([a.status, b.status, c.status], [404, 404, 404]);
    await Promise.all([a.text(), b.text(), c.text()]);
  });
});

/** A TCP relay in front of the emulator that counts the connections the kiosk opens (127.0.0.1:0). */
async function countingRelay(targetPort: () => number) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    connections++;
    const upstream = connect(targetPort(), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the warm connection while the attract screen shows', () => {
  it('opened when the screen shows and the kiosk takes calls, renewed once stale; none while hidden, closed or held', async () => {
    let emuPort = 0;
    const relay = await countingRelay(() => emuPort);
    try {
      const h = await setup({
        kiosk: {
          startEmulator: async (o) => {
            const emu = await startEmulator(o);
            emuPort = Number(new URL(emu.baseUrl).port);
            return { ...emu, baseUrl: relay.url };
          },
        },
      });
      const report = (showing: boolean) => h.dispatch(CHANNELS.attractReport, { showing, present: null });
      const settled = async (n: number, message: string) => {
        await until(() => relay.connections >= n, { message, realTimeoutMs: 5_000 });
        await new Promise((r) => setTimeout(r, 50)); // time for a connection that should not come
        assert.equal(relay.connections, n, message);
      };
      await report(false);
      await settled(0, 'hidden: no connection');
      h.kiosk.availability.setOpening({ open: false, nextOpenAt: null, timeZone: null });
      await report(true);
      await settled(0, 'closed: no connection');
      h.kiosk.availability.setHold('updating');
      h.kiosk.availability.setOpening({ open: true, nextOpenAt: null, timeZone: null });
      await report(true);
      await settled(0, 'held: no connection');
      h.kiosk.availability.setHold(null); // replays "showing": calls are taken again
      await settled(1, 'showing and taking calls: one connection ahead of the tap');
      await h.clock.advance(20_000);
      await settled(1, 'still fresh at 20 s: kept');
      await h.clock.advance(20_000);
      await settled(2, 'stale at 40 s: renewed');
      await report(false);
      await h.clock.advance(60_000);
      await settled(2, 'hidden again: nothing renewed');
    } finally {
      await closeNow();
      await relay.close();
    }
  });
});

describe('a call the service ended for lack of credits', () => {
  it('stops spare sessions: the next visitor gets none (after a normal end they do)', async () => {
    const h = await setup({ ...noRtcWait, config: { prewarm: { mode: 'on-approach' } } });
    const first = await h.tap();
    await h.reach('live');
    await h.hangup();
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await until(() => h.kiosk.spares.phase === 'ready', { message: 'a spare after a normal end' });
    await h.dispatch(CHANNELS.attractReport, { showing: false, present: true });
    const second = await h.tap();
    assert.equal(second, h.emu.listSessions().at(-1)!.id, 'the tap took the spare');
    assert.notEqual(second, first);
    await h.reach('live');
    h.emu.forceHangup(second, 'credit_insufficient');
    await h.reach('ended');
    await until(() => !h.kiosk.calls.running);
    const made = h.emu.listSessions().length;
    await h.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await h.clock.advance(1_000);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.kiosk.spares.phase, null);
    assert.equal(h.kiosk.spares.blockedBy, 'credit_insufficient');
    assert.equal(h.emu.listSessions().length, made);
  });
});
