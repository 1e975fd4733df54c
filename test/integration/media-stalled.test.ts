/**
 * The media watchdog's hang-up as main sees it: the renderer asks for a hangup with cause `media_stalled`
 * on the ordinary hangup channel; the session ends on the service with type 5, the ledger records
 * `media_stalled`, and the fleet metrics count it (a visitor's hangup does not).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type KioskEvent, type Result } from '../../electron/contract.ts';
import type { Kiosk } from '../../electron/kiosk/compose.ts';
import type { SessionRecord } from '../../electron/operations/ledger.ts';
import { createKioskMetrics, kioskMetricsSource } from '../../electron/fleet/metrics.ts';
import { waitForEvent } from '../helpers/kiosk-events.ts';
import { createStaffKiosk, TINY_PNG } from '../helpers/staff-kiosk.ts';

const open: Kiosk[] = [];
after(async () => {
  await Promise.all(open.map((s) => s.shutdown()));
});

const noPlatform = { getOpenAtLogin: () => null, setOpenAtLogin: () => {}, exitKiosk: () => {}, restart: () => {} };

async function liveCall(kiosk: Kiosk, call: <T>(channel: string, arg?: unknown) => Promise<Result<T>>): Promise<string> {
  const live = waitForEvent(kiosk, (e: KioskEvent) => e.type === 'state' && e.state.phase === 'live', 10_000);
  const started = await call<{ liveId: string }>(CHANNELS.sessionStart, {});
  assert.ok(started.ok, JSON.stringify(started));
  await live;
  return started.value.liveId;
}

function metricValue(text: string, name: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : null;
}

describe('a call hung up by the media watchdog', () => {
  it('ends with type 5 on the service, the ledger says media_stalled, and avatar_kiosk_media_stalled_total counts it once', async () => {
    const { kiosk, channels, ops } = await createStaffKiosk({
      file: { callMode: 'video', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } },
      platform: noPlatform,
    });
    open.push(kiosk);
    const call = async <T>(channel: string, arg?: unknown) => (await channels.dispatch(channel, arg)) as Result<T>;
    // A kiosk refuses calls until staff chose a PIN.
    await call(CHANNELS.staffSetPin, { pin: '246813' });
    await call(CHANNELS.staffLock);
    const metrics = createKioskMetrics({ version: 'test' });
    const unobserve = metrics.observe(kioskMetricsSource(kiosk));
    assert.equal(metricValue(await metrics.render(), 'avatar_kiosk_media_stalled_total'), 0);

    // First a visitor's own hangup: recorded as before, not counted as a stall.
    const first = await liveCall(kiosk, call);
    let ended = waitForEvent(kiosk, (e) => e.type === 'state' && e.state.phase === 'ended', 10_000);
    assert.deepEqual(await call(CHANNELS.sessionHangup, { cause: 'visitor' }), { ok: true, value: undefined });
    await ended;

    const liveId = await liveCall(kiosk, call);
    ended = waitForEvent(kiosk, (e) => e.type === 'state' && e.state.phase === 'ended', 10_000);
    assert.deepEqual(await call(CHANNELS.sessionHangup, { cause: 'media_stalled' }), { ok: true, value: undefined });
    await ended;
    await ops.recorder.flush();

    const emu = kiosk.connection.emulator!.getSession(liveId)!;
    assert.deepEqual([emu.status, emu.hangupReason], ['ended', 'user_end'], 'type 5 reached the service');
    const records = ops.ledger.read().records as SessionRecord[];
    assert.deepEqual(
      records.map((r) => [r.live_id, r.call_mode, r.end_reason, r.ended_by]),
      [
        [first, 'video', 'user_end', 'client'],
        [liveId, 'video', 'media_stalled', 'client'],
      ],
    );
    assert.equal(records[1]!.billed_seconds, emu.billedSeconds);
    assert.equal(records[1]!.credits_cost, emu.creditsCost);

    const text = await metrics.render();
    assert.equal(metricValue(text, 'avatar_kiosk_media_stalled_total'), 1);
    assert.match(text, /# HELP avatar_kiosk_media_stalled_total Live calls hung up by the media watchdog/);
    // A hangup request with no session running is not a stall either.
    await call(CHANNELS.sessionHangup, { cause: 'media_stalled' });
    assert.equal(metricValue(await metrics.render(), 'avatar_kiosk_media_stalled_total'), 1);
    unobserve();
  });

  it('the hangup channel refuses any other cause (validated at the boundary)', async () => {
    const { kiosk, channels } = await createStaffKiosk({ file: { avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } }, platform: noPlatform });
    open.push(kiosk);
    const r = (await channels.dispatch(CHANNELS.sessionHangup, { cause: 'frozen' })) as Result<void>;
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.code, 'invalid_request');
  });
});
