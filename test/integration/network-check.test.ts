/**
 * The video-network check of the staff Diagnostics, main's side, against the in-process emulator: the test
 * session's RTC credentials go to the screen, conn_init is never sent, and the session ends with type 5
 * (0 credits) whatever happens — a report from the screen, no report in time, or a second check.
 * The screen's side (join, measure, leave) is in test/e2e/network-check.test.ts.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type NetworkCheckReport, type NetworkCheckTicket, type Result } from '../../electron/contract.ts';
import type { EmulatedSession } from '../../electron/emulator/index.ts';
import type { Kiosk } from '../../electron/kiosk/compose.ts';
import { createNetworkCheck } from '../../electron/operations/network-check.ts';
import { createStaffKiosk, TINY_PNG } from '../helpers/staff-kiosk.ts';

const open: Kiosk[] = [];
after(async () => {
  await Promise.all(open.map((s) => s.shutdown()));
});

async function setup() {
  const { kiosk, channels, ops } = await createStaffKiosk({
    file: { callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } },
    platform: { getOpenAtLogin: () => null, setOpenAtLogin: () => {}, exitKiosk: () => {}, restart: () => {} },
  });
  open.push(kiosk);
  const call = async <T>(channel: string, arg?: unknown) => (await channels.dispatch(channel, arg)) as Result<T>;
  const emu = kiosk.connection.emulator!;
  return { kiosk, ops, call, emu };
}

const types = (s: EmulatedSession) => s.clientMessages.map((m) => m.type).filter((t) => t !== 4);
function value<T>(r: Result<T>): T {
  assert.ok(r.ok, JSON.stringify(r));
  return r.value;
}
async function until(predicate: () => boolean, message: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${message}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('video-network check (staff Diagnostics) against the emulator', () => {
  it('staff only; hands the test session’s RTC credentials, never conn_init, and ends it with type 5 at 0 credits', async () => {
    const { call, emu } = await setup();
    const locked = await call(CHANNELS.staffNetworkCheckStart);
    assert.equal(!locked.ok && locked.error.code, 'unauthorized', 'refused while the panel is locked');
    value(await call(CHANNELS.staffSetPin, { pin: '246813' }));
    const balance = emu.balance();

    const ticket = value(await call<NetworkCheckTicket>(CHANNELS.staffNetworkCheckStart));
    const session = () => emu.getSession(ticket.checkId)!;
    assert.equal(session().status, 'waiting');
    assert.match(ticket.rtc.channel_id, new RegExp(ticket.checkId), 'the test session’s own RTC channel');
    assert.ok(ticket.rtc.token.length > 0);
    assert.equal(ticket.cloudProxy, 'off');

    const outcome = { ok: true, joinMs: 412, state: 'connected' as const, proxy: 'off' as const, message: 'Joined the video network.' };
    const report = value(await call<NetworkCheckReport>(CHANNELS.staffNetworkCheckFinish, { checkId: ticket.checkId, outcome }));
    assert.deepEqual(report, { ...outcome, sessionClosed: true, creditsCost: 0 });
    assert.equal(session().connInits, 0, 'conn_init was never sent');
    assert.deepEqual(types(session()), [5], 'only the type 5 hang-up went out on the control socket');
    assert.equal(session().status, 'ended');
    assert.equal(session().startedAtMs, null, 'never on_live');
    assert.equal(session().creditsCost, 0);
    assert.equal(emu.balance(), balance, 'the account was not charged');

    const again = await call(CHANNELS.staffNetworkCheckFinish, { checkId: ticket.checkId, outcome });
    assert.equal(!again.ok && again.error.code, 'invalid_request', 'a check reports once');
  });

  it('no report from the screen in time: main ends the test session with type 5 itself', async () => {
    const { kiosk, emu } = await setup();
    const check = createNetworkCheck({ timeoutMs: 300 });
    const ticket = await check.start(kiosk.connection.client, kiosk.config);
    await until(() => emu.getSession(ticket.checkId)!.status === 'ended', 'the test session to end');
    const s = emu.getSession(ticket.checkId)!;
    assert.equal(s.connInits, 0);
    assert.deepEqual(types(s), [5]);
    assert.equal(s.creditsCost, 0);
    await assert.rejects(check.finish(ticket.checkId, { ok: true, joinMs: 100, state: 'connected', proxy: 'off', message: '' }), /Start it again/);
  });

  it('a second check ends the first one’s session with type 5; dispose ends the one still open', async () => {
    const { kiosk, emu } = await setup();
    const check = createNetworkCheck();
    const first = await check.start(kiosk.connection.client, kiosk.config);
    const second = await check.start(kiosk.connection.client, kiosk.config);
    assert.notEqual(first.checkId, second.checkId);
    assert.equal(emu.getSession(first.checkId)!.status, 'ended');
    assert.deepEqual(types(emu.getSession(first.checkId)!), [5]);
    assert.equal(emu.getSession(second.checkId)!.status, 'waiting');
    await check.dispose();
    assert.equal(emu.getSession(second.checkId)!.status, 'ended');
    assert.deepEqual(types(emu.getSession(second.checkId)!), [5]);
    assert.equal(emu.getSession(first.checkId)!.connInits + emu.getSession(second.checkId)!.connInits, 0);
  });
});
