/**
 * The venue's maximum call length: main hangs up at live start + maxCallSeconds, the live
 * state's countdown (`endsAtMs`) reflects it, and the ledger says why the call ended. Fake clock, a fake
 * kiosk (only the services and members staff-ops uses).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HangupCause, KioskEvent, Result } from '../../../electron/contract.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import type { SessionState, SessionSummary } from '../../../electron/core/session-types.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { capCallLength } from '../../../electron/kiosk/call-states.ts';
import { createChannelRegistry } from '../../../electron/kiosk/channels.ts';
import type { SessionRecord } from '../../../electron/operations/ledger.ts';
import { jsonFilePersistence } from '../../../electron/operations/settings.ts';
import { createStaffOps, type StaffKiosk } from '../../../electron/operations/staff-ops.ts';

function fakeService(maxCallSeconds: number | undefined) {
  const listeners = new Set<(e: KioskEvent) => void>();
  const hangups: string[] = [];
  const causeListeners = new Set<(cause: HangupCause, liveId: string | null) => void>();
  const config = resolveConfig({ avatar: { imagePath: '/x.png', persona: 'P' }, ...(maxCallSeconds ? { maxCallSeconds } : {}) }, {});
  const service = {
    config,
    events: {
      onEvent(l: (e: KioskEvent) => void) {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    },
    calls: {
      running: true,
      // As the real one: each hangup asked for is heard with its cause (here the visitor's, as staff-ops asks).
      async hangup() {
        for (const l of [...causeListeners]) l('visitor', null);
        hangups.push('hangup');
        return { ok: true, value: undefined } as Result<void>;
      },
      onHangupCause(l: (cause: HangupCause, liveId: string | null) => void) {
        causeListeners.add(l);
        return () => causeListeners.delete(l);
      },
    },
    connection: { mode: 'direct', client: null },
    key: { present: true, source: 'env', weaklyProtected: false },
    telemetry: { lastCallQuality: null, lastCallFigures: null, callAvatarId: null },
    appearance: { attention: [] },
  } as unknown as StaffKiosk;
  const emit = (state: SessionState) => {
    for (const l of [...listeners]) l({ type: 'state', state, previous: 'live' });
  };
  return { service, emit, hangups };
}

const summary = (liveId: string): SessionSummary => ({
  liveId,
  callMode: 'video',
  wentLive: true,
  hangupReason: 'user_end',
  endedBy: 'client',
  finalStatus: 'ended',
  billedSeconds: 120,
  creditsCost: 180,
  notReadyRetries: 0,
  reconnects: 0,
  liveDurationS: 600,
  timingsMs: { create: 10, socketOpen: 20, live: 30, ended: 120_100 },
});

function setup(maxCallSeconds: number | undefined) {
  const clock = new FakeClock(Date.UTC(2026, 10, 23, 10));
  const fake = fakeService(maxCallSeconds);
  const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-maxcall-'));
  const ops = createStaffOps({
    kiosk: fake.service,
    channels: createChannelRegistry(),
    dataDir,
    persistence: jsonFilePersistence(join(dataDir, 'config.json')),
    env: {},
    appRoot: '/',
    clock,
    version: 't',
    logTail: () => [],
    platform: { getOpenAtLogin: () => null, setOpenAtLogin() {}, exitKiosk() {}, restart() {} },
  });
  return { clock, ops, ...fake };
}

describe('maxCallSeconds', () => {
  it('the live countdown ends at live start + maxCallSeconds when that is sooner than live_duration', () => {
    const live = { phase: 'live' as const, liveId: 'L', sinceMs: 1_000, endsAtMs: 601_000 };
    assert.deepEqual(capCallLength(live, 120), { ...live, endsAtMs: 121_000 });
    assert.deepEqual(capCallLength({ ...live, phase: 'reconnecting', attempt: 1 } as SessionState, 120), { ...live, phase: 'reconnecting', attempt: 1, endsAtMs: 121_000 });
    assert.equal(capCallLength(live, undefined), live);
    const short = { ...live, endsAtMs: 61_000 }; // live_duration 60 s: already sooner
    assert.equal(capCallLength(short, 120), short);
    const ended: SessionState = { phase: 'ended', liveId: 'L', summary: summary('L') };
    assert.equal(capCallLength(ended, 120), ended);
  });

  it('main hangs up exactly at the limit and the ledger records max_call', async () => {
    const { clock, emit, hangups, ops } = setup(120);
    const since = clock.now();
    emit({ phase: 'creating' });
    emit({ phase: 'live', liveId: 'L1', sinceMs: since, endsAtMs: since + 120_000 });
    // A reconnect inside the call does not restart the limit.
    await clock.advance(60_000);
    emit({ phase: 'reconnecting', liveId: 'L1', attempt: 1, sinceMs: since, endsAtMs: since + 120_000 });
    emit({ phase: 'live', liveId: 'L1', sinceMs: since, endsAtMs: since + 120_000 });
    await clock.advance(59_999);
    assert.deepEqual(hangups, []);
    await clock.advance(1);
    assert.deepEqual(hangups, ['hangup']);
    emit({ phase: 'ending', liveId: 'L1', reason: 'user_end' });
    emit({ phase: 'ended', liveId: 'L1', summary: summary('L1') });
    await ops.recorder.flush();
    const [rec] = ops.ledger.read().records as SessionRecord[];
    assert.equal(rec!.end_reason, 'max_call');
    assert.equal(clock.pendingCount, 0);
    ops.dispose();
  });

  it('a call that ends sooner leaves no timer; without a limit none is set', async () => {
    const a = setup(120);
    a.emit({ phase: 'live', liveId: 'L2', sinceMs: a.clock.now(), endsAtMs: a.clock.now() + 120_000 });
    assert.equal(a.clock.pendingCount, 1);
    a.emit({ phase: 'ended', liveId: 'L2', summary: summary('L2') });
    assert.equal(a.clock.pendingCount, 0);
    await a.clock.advance(200_000);
    assert.deepEqual(a.hangups, []);
    a.ops.dispose();

    const b = setup(undefined);
    b.emit({ phase: 'live', liveId: 'L3', sinceMs: b.clock.now(), endsAtMs: b.clock.now() + 600_000 });
    assert.equal(b.clock.pendingCount, 0);
    b.ops.dispose();
  });
});
