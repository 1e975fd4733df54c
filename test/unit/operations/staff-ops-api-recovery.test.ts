/**
 * Crash recovery as staff-ops runs it at start-up: which service a leftover session is checked (and hung up
 * with type 5) on, how long start-up waits for it, and what `dispose` stops. A fake kiosk service whose
 * current client and own `fetch` log their requests separately, and a FakeClock.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StaffStatus } from '../../../electron/contract.ts';
import type { ServiceTarget } from '../../../electron/core/session-types.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { CURRENT_SESSION_FILE, type CurrentSession } from '../../../electron/operations/recovery.ts';
import { autoClosingTransports, staffOpsWorld, type WorldOptions } from '../../helpers/staff-ops-api-world.ts';
import { APP_ROOT, TINY_PNG } from '../../helpers/staff-kiosk.ts';
import { until } from '../../helpers/until.ts';

const GATEWAY: ServiceTarget = { surface: 'gateway', gatewayUrl: 'https://gw.example' };
const DIRECT: ServiceTarget = { surface: 'direct', baseUrl: 'https://api.example', apiKey: 'sk-test-1' };

async function withLeftover(leftover: Partial<CurrentSession>, options: WorldOptions = {}) {
  const w = await staffOpsWorld(options);
  const record: CurrentSession = { v: 1, liveId: 'L1', surface: 'gateway', serviceUrl: 'https://gw.example', callMode: 'audio', startAtMs: w.clock.now() - 60_000, liveAtMs: null, ...leftover };
  writeFileSync(join(w.dataDir, CURRENT_SESSION_FILE), JSON.stringify(record));
  return w;
}

const checkedOn = (w: Awaited<ReturnType<typeof staffOpsWorld>>) => w.requests.map((r) => `${r.via} ${r.method} ${r.url}`);

describe('crash recovery: which service checks the leftover session', () => {
  it('the same gateway as now: the current client checks it, and the ledger records it', async () => {
    const w = await withLeftover({}, { target: GATEWAY });
    const outcome = await w.ops.recover();
    assert.deepEqual(checkedOn(w), ['client GET https://gw.example/api/lives/L1']);
    assert.deepEqual([outcome?.liveId, outcome?.hungUp, outcome?.record.ended_by, outcome?.record.error_code], ['L1', false, 'server', undefined]);
    assert.deepEqual((w.ops.ledger.read().records as Array<{ live_id: string }>).map((r) => r.live_id), ['L1']);
  });

  it('the same direct service as now: the current client (with our key) checks it', async () => {
    const w = await withLeftover({ surface: 'direct', serviceUrl: 'https://api.example' }, { mode: 'direct', target: DIRECT });
    await w.ops.recover();
    assert.deepEqual(checkedOn(w), ['client GET https://api.example/live/v1/lives/L1']);
  });

  it('another direct service than now: not checked (our key is not sent elsewhere), recorded as unreachable', async () => {
    const w = await withLeftover({ surface: 'direct', serviceUrl: 'https://old.example' }, { mode: 'direct', target: DIRECT });
    const outcome = await w.ops.recover();
    assert.deepEqual(checkedOn(w), []);
    assert.equal(outcome?.record.error_code, 'unreachable');
  });

  it('another gateway than now: a client for that gateway, through the service routes, checks it', async () => {
    const w = await withLeftover({ serviceUrl: 'https://old-gw.example' }, { target: GATEWAY });
    const outcome = await w.ops.recover();
    assert.deepEqual(checkedOn(w), ['service.fetch GET https://old-gw.example/api/lives/L1']);
    assert.equal(outcome?.record.error_code, undefined);
  });

  it('a gateway at the URL the direct client now uses is still a gateway: its own client checks it', async () => {
    const w = await withLeftover({ serviceUrl: 'https://api.example' }, { mode: 'direct', target: DIRECT });
    await w.ops.recover();
    assert.deepEqual(checkedOn(w), ['service.fetch GET https://api.example/api/lives/L1']);
  });

  it('no current client (misconfigured now): a gateway leftover is still checked', async () => {
    const w = await withLeftover({}, { target: null });
    const outcome = await w.ops.recover();
    assert.deepEqual(checkedOn(w), ['service.fetch GET https://gw.example/api/lives/L1']);
    assert.equal(outcome?.record.error_code, undefined);
  });

  it('a demo session died with its emulator: not checked', async () => {
    const w = await withLeftover({ surface: 'demo', serviceUrl: null }, { target: GATEWAY });
    const outcome = await w.ops.recover();
    assert.deepEqual(checkedOn(w), []);
    assert.equal(outcome?.record.error_code, 'unreachable');
  });

  it('a session still running is hung up with type 5 through the service control sockets', async () => {
    const w = await withLeftover({}, { target: GATEWAY });
    w.statuses.set('L1', ['live']);
    const outcome = await w.ops.recover();
    assert.equal(outcome?.hungUp, true);
    assert.deepEqual(w.serviceTransports.all.map((t) => [t.url, t.frames().map((f) => f.type)]), [['wss://gw.example/api/ws?live_id=L1', [5]]]);
  });

  it("staff-ops' own transport factory wins over the service one for that hangup", async () => {
    const mine = autoClosingTransports();
    const w = await withLeftover({}, { target: GATEWAY, opsTransports: mine });
    w.statuses.set('L1', ['live']);
    assert.equal((await w.ops.recover())?.hungUp, true);
    assert.deepEqual([mine.all.length, w.serviceTransports.all.length], [1, 0]);
  });
});

describe('crash recovery at start-up: bounded wait', () => {
  it('a slow service: start-up goes on at the timeout with a warning', async () => {
    const w = await withLeftover({}, { target: GATEWAY });
    w.statuses.set('L1', ['hang']);
    let done = false;
    const waiting = w.ops.recoverWithin(5_000).then(() => (done = true));
    await w.clock.advance(4_999);
    assert.equal(done, false);
    await w.clock.advance(1);
    await until(() => done);
    await waiting;
    assert.deepEqual(
      w.logger.lines.filter((l) => l.message.startsWith('Crash recovery')).map((l) => [l.level, l.message]),
      [['warn', 'Crash recovery is slow; showing the kiosk anyway']],
    );
  });

  it('a quick recovery leaves no timer behind and no late warning', async () => {
    const w = await withLeftover({}, { target: GATEWAY });
    await w.ops.recoverWithin(5_000);
    assert.equal(w.clock.pendingCount, 0);
    await w.clock.advance(10_000);
    assert.deepEqual(w.logger.lines.filter((l) => l.message.startsWith('Crash recovery')), []);
  });

  it('a recovery that fails is logged as an error and start-up goes on', async () => {
    const w = await staffOpsWorld();
    w.ops.recover = () => Promise.reject(new Error('disk gone'));
    await w.ops.recoverWithin(5_000);
    assert.deepEqual(
      w.logger.lines.filter((l) => l.message.startsWith('Crash recovery')).map((l) => [l.level, l.message, l.data]),
      [['error', 'Crash recovery failed', { error: 'Error: disk gone' }]],
    );
  });
});

describe('dispose', () => {
  it('stops observing: a later failure is not shown, and the maximum call length no longer hangs up', async () => {
    const config = resolveConfig({ avatar: { imagePath: TINY_PNG, persona: 'P' }, maxCallSeconds: 60 }, {}, { appRoot: APP_ROOT });
    const w = await staffOpsWorld({ config });
    const now = w.clock.now();
    w.emit({ type: 'state', state: { phase: 'live', liveId: 'L9', sinceMs: now, endsAtMs: now + 60_000 }, previous: 'connecting' } as never);
    w.ops.dispose();
    w.emit({ type: 'state', state: { phase: 'failed', error: { code: 'network', message: 'Lost.' } }, previous: 'live' } as never);
    await w.clock.advance(120_000);
    assert.deepEqual(w.hangups, []);
    assert.equal(w.listeners.size, 0);
    assert.deepEqual(((await w.staff.status()) as { value: StaffStatus }).value.errors, []);
  });

  it('ends an open network check with type 5 at once', async () => {
    const w = await staffOpsWorld();
    await w.staff.networkCheckStart();
    w.ops.dispose();
    await until(() => w.serviceTransports.all.length === 1 && w.serviceTransports.last.frames().length === 1);
    assert.deepEqual(w.serviceTransports.last.frames().map((f) => [f.type, f.live_id]), [[5, 'check-1']]);
  });

  it('a network check that cannot be closed is logged as a warning', async () => {
    const w = await staffOpsWorld();
    await w.staff.networkCheckStart();
    w.client!.socketRequest = () => {
      throw new Error('no socket');
    };
    w.ops.dispose();
    await until(() => w.logger.lines.some((l) => l.message.startsWith('Network check: closing')));
    assert.deepEqual(
      w.logger.lines.filter((l) => l.message.startsWith('Network check: closing')).map((l) => [l.level, l.message, l.data]),
      [['warn', 'Network check: closing the test session failed', { error: 'Error: no socket' }]],
    );
  });
});
