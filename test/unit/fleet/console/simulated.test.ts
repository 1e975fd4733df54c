/**
 * The console's simulated kiosks (electron/fleet/console/simulated.ts) as an operator sees them on a real
 * Mosquitto (127.0.0.1): the status each publishes, the ledger-shaped record of each pretend call (times
 * from its injected clock), and the answers to every command, with what it did in order.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import { FakeClock } from '../../../helpers/fake-clock.ts';
import { emptyFunnelCounts } from '../../../../electron/core/funnel.ts';
import { COMMAND_NAMES, FLEET_COMMANDS } from '../../../../electron/fleet/command-table.ts';
import { demoScreenshot, startSimulatedKiosk, type SimulatedKiosk, type SimulatedKioskOptions } from '../../../../electron/fleet/console/simulated.ts';
import { mosquittoMissing, PREFIX, recordMessages, startBroker, type Broker, type SeenMessage } from '../../../helpers/mosquitto.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';
import { until } from '../../../helpers/until.ts';

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP the simulated kiosk tests: ${missing}`);
const USERS: Record<string, string> = { operator: 'op-sim', 'sim-1': 'pw-1', 'sim-2': 'pw-2', 'sim-3': 'pw-3', 'sim-4': 'pw-4', 'sim-5': 'pw-5', 'sim-6': 'pw-6', 'sim-7': 'pw-7' };
const T0 = Date.parse('2026-11-24T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** The first 24 bytes of a PNG: signature, IHDR length and type, then width 640 and height 480. */
const PNG_640x480 = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.from([0, 0, 2, 128, 0, 0, 1, 224])]);
const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

describe('simulated kiosk on a real Mosquitto', { skip: missing ?? false }, () => {
  const tempDir = tempDirsRemovedAfterEach('ak-sim-kiosk-');
  let broker: Broker;
  let operator: MqttClient;
  const seen: SeenMessage[] = [];
  const running: SimulatedKiosk[] = [];

  before(async () => {
    broker = await startBroker(USERS);
    operator = await connectAsync(broker.url, { username: 'operator', password: USERS.operator!, clientId: 'sim-test-operator', reconnectPeriod: 0 });
    recordMessages(operator, seen);
    await operator.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
  });
  after(async () => {
    for (const k of running) await k.close();
    await operator?.endAsync();
    await broker?.dispose();
  });

  const start = (kioskId: string, clock: FakeClock, extra: Partial<SimulatedKioskOptions> = {}) => {
    const kiosk = startSimulatedKiosk({ url: broker.url, kioskId, username: kioskId, password: USERS[kioskId], topicPrefix: PREFIX, dataDir: tempDir(), clock, screenshotPng: PNG_640x480, ...extra });
    running.push(kiosk);
    return kiosk;
  };
  const on = (kioskId: string, leaf: string) => seen.filter((m) => m.topic === `${PREFIX}/${kioskId}/${leaf}`).map((m) => m.body);
  /** The latest status of `kioskId` that holds, among those published after `since` messages were seen. */
  const statusOf = async (kioskId: string, holds: (s: Record<string, unknown>) => boolean, since = 0) => {
    const fresh = () => seen.slice(since).filter((m) => m.topic === `${PREFIX}/${kioskId}/status`).map((m) => m.body);
    await until(() => fresh().some(holds), { realTimeoutMs: 5_000, message: `${kioskId}'s status` });
    return fresh().findLast(holds)!;
  };
  /** Runs `change`, lets the status throttle pass, and returns the next status of `kioskId` that holds. */
  const statusAfter = async (kioskId: string, clock: FakeClock, change: () => Promise<unknown> | void, holds: (s: Record<string, unknown>) => boolean) => {
    const since = seen.length;
    await change();
    await clock.advance(1_000);
    return statusOf(kioskId, holds, since);
  };
  const nthRecord = async (kioskId: string, n: number) => {
    await until(() => on(kioskId, 'events').length >= n, { realTimeoutMs: 5_000, message: `${kioskId}'s event ${n}` });
    return on(kioskId, 'events')[n - 1]!.record as Record<string, unknown>;
  };
  let seq = 0;
  const command = async (kioskId: string, body: Record<string, unknown>) => {
    const id = `c-${++seq}`;
    await operator.publishAsync(`${PREFIX}/${kioskId}/cmd`, JSON.stringify({ id, expiresAt: iso(T0 + 3_600_000), ...body }), { qos: 1 });
    await until(() => on(kioskId, 'cmd/result').some((r) => r.id === id), { realTimeoutMs: 5_000, message: `the answer to ${id}` });
    const { at: _at, id: _id, ...answer } = on(kioskId, 'cmd/result').find((r) => r.id === id)!;
    return answer;
  };

  it('publishes its status, and a ledger-shaped record for each call it ends (not one it never started)', async () => {
    const clock = new FakeClock(T0);
    const kiosk = start('sim-1', clock, { group: 'lobby' });
    assert.deepEqual(await statusOf('sim-1', () => true), {
      online: true, kioskId: 'sim-1', group: 'lobby', version: '0.1.0', mode: 'simulated', phase: 'idle', cast: ['ava'], open: true, nextChangeAt: null,
      today: { sessions: 0, credits: 0, demoSessions: 0, day: '2026-11-24', from: '2026-11-24T00:00:00.000Z', to: '2026-11-25T00:00:00.000Z' }, lastErrorCode: null, avatarVolume: 100, queued: 0, droppedEvents: 0, policyError: null, at: iso(T0),
      service: { status: 'demo', message: 'Demo mode: the built-in emulator, no key needed.', action: null },
      visitors: { day: '2026-11-24', counts: emptyFunnelCounts() },
    });
    kiosk.endCall();
    await clock.advance(1_000);
    assert.equal((await statusAfter('sim-1', clock, () => kiosk.startCall(), (s) => s.phase !== 'idle')).phase, 'live');
    assert.equal(kiosk.inCall, true);
    await clock.advance(90_400);
    kiosk.endCall();
    assert.equal(kiosk.inCall, false);
    assert.deepEqual(await nthRecord('sim-1', 1), {
      kind: 'session', v: 1, start_at: iso(T0 + 1_000), live_at: iso(T0 + 2_000), end_at: iso(T0 + 92_400), live_id: null, surface: 'demo', call_mode: 'video',
      time_to_live_ms: 1000, not_ready_retries: 0, reconnects: 0, end_reason: 'user_end', ended_by: 'client', billed_seconds: 91, credits_cost: 2, recovered: false, avatar: 'ava',
    });
    // A simulated kiosk's calls are demo calls: counted apart, never as real money.
    const after = await statusOf('sim-1', (s) => s.phase === 'idle' && (s.today as { demoSessions: number }).demoSessions === 1);
    assert.deepEqual(after.today, { sessions: 0, credits: 0, demoSessions: 1, day: '2026-11-24', from: '2026-11-24T00:00:00.000Z', to: '2026-11-25T00:00:00.000Z' });
    assert.equal(on('sim-1', 'events').length, 1, 'the end of a call never started is no call');
    assert.deepEqual(kiosk.did, []);
  });

  it('takes turns through its cast and records an error code, without a group or with its own version', async () => {
    const clock = new FakeClock(T0);
    const kiosk = start('sim-2', clock, { avatars: ['ava', 'max'], version: '2.0.0' });
    const first = await statusOf('sim-2', () => true);
    assert.deepEqual([first.group, first.version, first.cast], [null, '2.0.0', ['ava', 'max']]);
    kiosk.startCall();
    await clock.advance(30_000);
    kiosk.endCall('failed', 0, 'rtc_failed');
    kiosk.startCall();
    await clock.advance(10_000);
    kiosk.endCall('user_end', 3);
    const [one, two] = [await nthRecord('sim-2', 1), await nthRecord('sim-2', 2)];
    assert.deepEqual([one.end_reason, one.credits_cost, one.error_code, one.avatar, one.billed_seconds], ['failed', 0, 'rtc_failed', 'max', 30]);
    assert.deepEqual([two.end_reason, two.credits_cost, 'error_code' in two, two.avatar, two.billed_seconds], ['user_end', 3, false, 'ava', 10]);
    await clock.advance(1_000);
    assert.deepEqual((await statusOf('sim-2', (s) => (s.today as { demoSessions: number }).demoSessions === 2)).today, { sessions: 0, credits: 0, demoSessions: 2, day: '2026-11-24', from: '2026-11-24T00:00:00.000Z', to: '2026-11-25T00:00:00.000Z' });
  });

  it("counts its visitors' day into its status as a kiosk does, and says when its service is unreachable", async () => {
    const clock = new FakeClock(T0);
    const kiosk = start('sim-4', clock, { avatars: ['ava', 'max'], surface: 'direct' });
    kiosk.visitor('walks-past');
    kiosk.visitor('stops-and-leaves');
    kiosk.visitor('taps-and-gives-up');
    kiosk.visitor('taps-and-fails');
    kiosk.visitor('is-refused');
    kiosk.startCall();
    await clock.advance(200_000);
    kiosk.endCall('user_end', 3);
    kiosk.startCall();
    await clock.advance(20_000);
    kiosk.endCall('media_stalled', 1);
    kiosk.setService({ status: 'unreachable', message: 'The service does not answer.', action: 'Check the network.' });
    const counts = {
      ...emptyFunnelCounts(), noticed: 7, approached: 6, greeted: 6, tapped: 5, refused: { ageGate: 0, closed: 1, outOfOrder: 0 }, gaveUp: 1, failed: 1, live: 2, endedWell: 1, endedBadly: 1,
      callLength: { under1m: 1, from1to3m: 0, from3to10m: 1, over10m: 0 },
      byLanguage: { en: { tapped: 2, live: 2 } }, byCallMode: { video: { tapped: 2, live: 2 } }, byAvatar: { max: { tapped: 1, live: 1 }, ava: { tapped: 1, live: 1 } },
    };
    await clock.advance(1_000);
    const status = await statusOf('sim-4', (s) => (s.service as { status: string }).status === 'unreachable' && (s.visitors as { counts: { live: number } }).counts.live === 2);
    assert.deepEqual(status.visitors, { day: '2026-11-24', counts });
    assert.deepEqual(status.service, { status: 'unreachable', message: 'The service does not answer.', action: 'Check the network.' });
    assert.deepEqual(kiosk.visitors, { day: '2026-11-24', counts });
    // A new day starts a new funnel.
    await clock.advance(24 * 60 * 60 * 1000);
    kiosk.visitor('walks-past');
    assert.deepEqual(kiosk.visitors, { day: '2026-11-25', counts: { ...emptyFunnelCounts(), noticed: 1 } });
  });

  it('answers every command, and does them in order', async () => {
    const clock = new FakeClock(T0);
    const kiosk = start('sim-3', clock, { avatars: ['ava', 'max'] });
    await statusOf('sim-3', () => true);
    assert.deepEqual(await command('sim-3', { cmd: 'reload' }), { cmd: 'reload', ok: true, result: { reloaded: true } });
    assert.deepEqual(await command('sim-3', { cmd: 'screenshot' }), { cmd: 'screenshot', ok: true, result: { mime: 'image/png', width: 640, height: 480, png: PNG_640x480.toString('base64') } });
    assert.deepEqual(await command('sim-3', { cmd: 'apply', settings: { idle: { promptSeconds: 30, hangupSeconds: 20 } } }), {
      cmd: 'apply', ok: true, result: { applied: ['idle.hangupSeconds', 'idle.promptSeconds'], name: 'Ava' },
    });
    assert.deepEqual(await command('sim-3', { cmd: 'apply', settings: { cast: ['max'], avatar: { name: 'Max', persona: 'calm' }, idle: { promptSeconds: 30 } } }), {
      cmd: 'apply', ok: true, result: { applied: ['avatar.name', 'avatar.persona', 'cast', 'idle.promptSeconds'], name: 'Max' },
    });
    assert.deepEqual(await command('sim-3', { cmd: 'apply', settings: { cast: ['ava', 'zed'] } }), {
      cmd: 'apply', ok: false, error: { code: 'invalid_config', message: 'There is no cast member "zed" on this kiosk.' },
    });
    assert.deepEqual(await command('sim-3', { cmd: 'apply', settings: { schedule: { timeZone: 'Europe/Berlin', weekly: {} } } }), { cmd: 'apply', ok: true, result: { applied: ['schedule'], name: 'Max' } });
    await clock.advance(1_000);
    await statusOf('sim-3', (s) => s.open === false);
    const weekly = { timeZone: 'Europe/Berlin', weekly: { mon: ['09:00-17:00'] } };
    assert.equal((await statusAfter('sim-3', clock, () => command('sim-3', { cmd: 'apply', settings: { schedule: weekly } }), (s) => s.open !== false)).open, true, 'open on some day: shown as open');
    await statusAfter('sim-3', clock, () => command('sim-3', { cmd: 'apply', settings: { schedule: { timeZone: 'Europe/Berlin', weekly: {} } } }), (s) => s.open === false);
    assert.equal((await statusAfter('sim-3', clock, () => command('sim-3', { cmd: 'apply', settings: { schedule: null } }), (s) => s.open !== false)).open, true, 'no opening hours: always open');
    assert.deepEqual(await command('sim-3', { cmd: 'end-call' }), { cmd: 'end-call', ok: true, result: { ended: false } });
    kiosk.startCall();
    await clock.advance(60_000);
    assert.deepEqual(await command('sim-3', { cmd: 'end-call' }), { cmd: 'end-call', ok: true, result: { ended: true } });
    const record = await nthRecord('sim-3', 1);
    assert.deepEqual([record.end_reason, record.credits_cost, record.billed_seconds], ['operator', 1, 60]);
    assert.equal(kiosk.inCall, false);
    assert.deepEqual(await command('sim-3', { cmd: 'set-volume', percent: 35 }), { cmd: 'set-volume', ok: true, result: { avatarVolume: 35 } });
    assert.equal(kiosk.avatarVolume, 35);
    assert.equal((await statusAfter('sim-3', clock, () => undefined, (s) => s.avatarVolume === 35)).avatarVolume, 35, 'the status shows the new volume');
    assert.deepEqual(await command('sim-3', { cmd: 'restart' }), { cmd: 'restart', ok: true, result: { restarting: true } });
    // The restart runs once its answer is published: it may come a moment after the operator has the answer.
    await until(() => kiosk.did.at(-1) === 'restart', { realTimeoutMs: 5_000, message: 'the restart after its answer' });
    assert.deepEqual(kiosk.did, ['reload', 'screenshot', 'apply', 'apply', 'apply', 'apply', 'apply', 'apply', 'apply', 'end-call', 'set-volume', 'restart']);
  });

  it('answers every command of the table, each one ok, with the kiosk\'s every capability', async () => {
    const clock = new FakeClock(T0);
    const kiosk = start('sim-6', clock);
    await statusOf('sim-6', () => true);
    // Each row's one argument at its example value (apply's: its JSON), the rest without arguments.
    const bodyFor = (name: (typeof COMMAND_NAMES)[number]) => {
      const arg = FLEET_COMMANDS[name].arg;
      return arg ? { cmd: name, [arg.field]: arg.kind === 'json' ? JSON.parse(arg.example) : arg.example } : { cmd: name };
    };
    const answers = [];
    for (const name of COMMAND_NAMES) answers.push(await command('sim-6', bodyFor(name)));
    assert.deepEqual(answers.map((a) => [a.cmd, a.ok]), COMMAND_NAMES.map((name) => [name, true]));
    await until(() => kiosk.did.length === COMMAND_NAMES.length - 2, { realTimeoutMs: 5_000, message: 'every command done' });
    // Ping and end-call (no call running) ask nothing of the kiosk.
    assert.deepEqual(kiosk.did, COMMAND_NAMES.filter((n) => n !== 'ping' && n !== 'end-call'));
  });

  it('reads the size of a picture of exactly a PNG header, and none from a shorter one', async () => {
    const clock = new FakeClock(T0);
    // A kiosk id of its own: a second kiosk under an id already connected would take the first one's session over.
    start('sim-7', clock, { screenshotPng: PNG_640x480.subarray(0, 23) });
    await statusOf('sim-7', () => true);
    const short = await command('sim-7', { cmd: 'screenshot' });
    assert.deepEqual([(short.result as { width: number }).width, (short.result as { height: number }).height], [0, 0]);
  });

  it('uses the demo avatar as the demo\'s screenshot', () => {
    assert.deepEqual(demoScreenshot(ROOT), readFileSync(join(ROOT, 'resources', 'demo-avatar.png')));
  });

  // Last: it takes the broker away from every kiosk (and the operator, which does not come back).
  it('tries the broker again every 2 s when not told otherwise', async () => {
    const kiosk = start('sim-5', new FakeClock(T0));
    await until(() => kiosk.link.connected, { realTimeoutMs: 5_000, message: 'sim-5 connected' });
    await broker.stop();
    await until(() => !kiosk.link.connected, { realTimeoutMs: 5_000, message: 'sim-5 lost the broker' });
    await broker.start();
    await until(() => kiosk.link.connected, { realTimeoutMs: 3_500, message: 'sim-5 back within one 2 s period' });
  });
});
