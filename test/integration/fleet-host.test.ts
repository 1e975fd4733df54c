/**
 * The fleet host (fleet-host.ts), on the real kiosk's services (demo emulator) and around a scripted kiosk
 * (no emulator, no window). Opening hours: they gate calls and spare sessions, the kiosk is told (with the
 * time zone), the log says open or closed and the next change in local time, and /metrics has the gauge
 * (registered again by a host started again). A link that cannot start is logged and the kiosk runs on. A
 * remote `apply` is written to config.json and reaches the running service; a policy-managed or impossible
 * one, or one during a call, is refused with nothing changed; an operator's update pin is kept or refused.
 * Through a real Mosquitto on 127.0.0.1: ledger records reach the events topic and today's totals the
 * status, each field of the status, whether the kiosk reaches its service, each remote command it wires
 * (call, window, volume, update and apply commands), `set-volume` reaching the kiosk's volume, its file,
 * the page's events and the status (a restarted kiosk keeps it), the reconnect delay; and the link through
 * the venue's proxy.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import { Registry } from 'prom-client';
import type { CallFigures, KioskEvent, OpeningInfo, SessionState } from '../../electron/contract.ts';
import { systemClock } from '../../electron/core/clock.ts';
import { AvatarError } from '../../electron/core/errors.ts';
import { emptyFunnelCounts } from '../../electron/core/funnel.ts';
import { DEMO_API_KEY, startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { applyRemoteSettings, persistUpdatePin, startFleetHost, type ConfigFileAccess, type FleetHostOptions, type FleetKiosk, type LedgerFeed } from '../../electron/fleet/fleet-host.ts';
import { createKioskMetrics } from '../../electron/fleet/metrics.ts';
import type { SafeUpdates, UpdateStatus } from '../../electron/fleet/safe-updates.ts';
import { AVATAR_VOLUME_FILE, memoryAvatarVolume, openAvatarVolume } from '../../electron/kiosk/avatar-volume.ts';
import { DAY_FIGURE_KEYS, type DayFigureKey } from '../../electron/kiosk/call-figures.ts';
import { createChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk } from '../../electron/kiosk/compose.ts';
import { resolveConfig, type KioskConfig } from '../../electron/kiosk/config.ts';
import type { ServiceMode } from '../../electron/kiosk/service-connection.ts';
import { createLedger, type SessionRecord } from '../../electron/operations/ledger.ts';
import { jsonFilePersistence } from '../../electron/operations/settings.ts';
import { closedPort } from '../helpers/closed-port.ts';
import { FakeClock } from '../helpers/fake-clock.ts';
import { mosquittoMissing, PREFIX, recordMessages, startBroker, type Broker, type SeenMessage } from '../helpers/mosquitto.ts';
import { recordingLogger } from '../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../helpers/temp-dirs.ts';
import { realDelay, until } from '../helpers/until.ts';

const ROOT = join(import.meta.dirname, '../..');
const tempDir = tempDirsRemovedAfterEach('ak-fleet-host-');
const schedule = { timeZone: 'UTC', weekly: { mon: ['09:00-17:00'] } };
const MONDAY_8 = Date.parse('2026-11-23T08:00:00Z');
const noActions: FleetHostOptions['actions'] = { reload: () => {}, restart: () => {}, screenshot: async () => ({ png: Buffer.alloc(0), width: 0, height: 0 }) };
const MONDAY_7Z = Date.parse('2026-11-23T07:00:00Z');
/** The kiosk's local day its totals are for, and its start and end (the machine's time zone). */
const kioskDay = (ms: number) => {
  const d = new Date(ms);
  const midnight = (plusDays: number) => new Date(d.getFullYear(), d.getMonth(), d.getDate() + plusDays).toISOString();
  return { day: `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`, from: midnight(0), to: midnight(1) };
};
const BERLIN = { timeZone: 'Europe/Berlin', weekly: { mon: ['09:00-17:00'] } };
const AVATARS = [
  { id: 'ava', name: 'Ava', imagePath: 'resources/demo-avatar.png' },
  { id: 'max', name: 'Max', imagePath: 'resources/demo-avatar.png' },
];

/** config.json in memory. */
function memoryFile(initial: Record<string, unknown>): ConfigFileAccess & { data: Record<string, unknown>; writes: number } {
  const file = {
    data: structuredClone(initial),
    writes: 0,
    read: () => structuredClone(file.data),
    write: async (next: Record<string, unknown>) => {
      file.writes++;
      file.data = structuredClone(next);
    },
  };
  return file;
}

/** The part of the kiosk the fleet host uses, scripted: what it was told and asked is kept. */
function scriptedService(config: KioskConfig) {
  const listeners = new Set<(event: KioskEvent) => void>();
  const service = {
    config,
    running: false,
    mode: 'demo' as ServiceMode,
    state: { phase: 'idle' } as SessionState,
    openings: [] as OpeningInfo[],
    hangups: [] as string[],
    reconfigured: [] as KioskConfig[],
    avatarVolume: memoryAvatarVolume(),
    /** The day of the visitor funnel the kiosk reports (its counter is visitor-funnel.test.ts's). */
    visitorsDay: { day: '2026-11-23', counts: Object.assign(emptyFunnelCounts(), { tapped: 3, live: 2 }) },
    setOpening(info: OpeningInfo) {
      service.openings.push(info);
    },
    async hangup(cause: string) {
      service.hangups.push(cause);
      service.running = false;
      return { ok: true, value: undefined };
    },
    onEvent(listener: (event: KioskEvent) => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    emit(event: KioskEvent) {
      for (const l of listeners) l(event);
    },
    async reconfigure(next: KioskConfig) {
      service.reconfigured.push(next);
      service.config = next;
    },
  };
  return service;
}
type ScriptedService = ReturnType<typeof scriptedService>;

/** The scripted service as the fleet host is given it: the kiosk's services, each reading the script. */
function fleetKioskOf(service: ScriptedService): FleetKiosk {
  return {
    get config() {
      return service.config;
    },
    reconfigure: (next: KioskConfig) => service.reconfigure(next),
    events: { onEvent: (listener: (event: KioskEvent) => void) => service.onEvent(listener) },
    calls: {
      get running() {
        return service.running;
      },
      get state() {
        return service.state;
      },
      hangup: (cause: string) => service.hangup(cause),
    },
    connection: {
      get mode() {
        return service.mode;
      },
    },
    availability: { setOpening: (info: OpeningInfo) => service.setOpening(info) },
    ageGateCounts: () => ({ asked: 0, confirmed: 0, declined: 0 }),
    auditViolations: () => 0,
    avatarVolume: service.avatarVolume,
    visitors: { today: () => service.visitorsDay },
  } as unknown as FleetKiosk;
}

function host(service: ScriptedService, over: Partial<FleetHostOptions> = {}) {
  const clock = (over.clock as FakeClock | undefined) ?? new FakeClock(MONDAY_7Z);
  const logger = recordingLogger();
  const done: string[] = [];
  const configFile = memoryFile({});
  const fleet = startFleetHost({
    kiosk: fleetKioskOf(service),
    ledger: null,
    dataDir: tempDir(),
    version: '1.2.3',
    clock,
    logger,
    configFile,
    env: {},
    policy: {},
    appRoot: ROOT,
    actions: {
      reload: () => void done.push('reload'),
      restart: () => void done.push('restart'),
      screenshot: async () => ({ png: Buffer.from('PNG'), width: 4, height: 3 }),
    },
    ...over,
  });
  return { fleet, clock, logger, done, configFile };
}

const FAILED: SessionState = { phase: 'failed', liveId: null, error: { code: 'network', message: 'x' }, summary: null };

/** A call's figures with only the join time measured. */
const figures = (joinMs: number): CallFigures => ({
  liveId: 'l1',
  callMode: 'video',
  ...(Object.fromEntries(DAY_FIGURE_KEYS.map((key) => [key, null])) as Record<DayFigureKey, null>),
  joinMs,
  proxy: 'off',
  endReason: 'user_end',
});

/** A real kiosk (demo emulator) on `file` as its config.json, and `policy`. */
async function kioskWith(file: Record<string, unknown>, policy: Record<string, unknown> = {}) {
  const dataDir = tempDir();
  const configFile = jsonFilePersistence(join(dataDir, 'config.json'));
  await configFile.write(file);
  const channels = createChannelRegistry();
  const kiosk = await createKiosk({ channels, config: resolveConfig(file, {}, { appRoot: ROOT, policy }), apiKey: null, apiKeySource: 'none' });
  return { dataDir, configFile, configPath: join(dataDir, 'config.json'), kiosk, channels };
}

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP the fleet host's broker tests: ${missing}`);

describe('fleet host: opening hours', () => {
  it('while closed: no call, no spare session, /metrics says 0; at opening both come back', async () => {
    const { dataDir, configFile, kiosk, channels } = await kioskWith({ schedule, prewarm: { mode: 'always' }, presence: { cameraEnabled: false } });
    const clock = new FakeClock(MONDAY_8);
    const metrics = createKioskMetrics({ version: 't' });
    const events: string[] = [];
    kiosk.events.onEvent((e) => {
      if (e.type === 'opening') events.push(`opening:${e.opening.open}:${e.opening.nextOpenAt}`);
      if (e.type === 'spare') events.push(`spare:${e.status}`);
    });
    const host = startFleetHost({ kiosk, ledger: null, dataDir, version: 't', clock, configFile, env: {}, policy: {}, appRoot: ROOT, registry: metrics.registry, actions: noActions });
    try {
      assert.deepEqual(events, ['opening:false:2026-11-23T09:00:00.000Z']);
      await channels.dispatch('kiosk:attract:report', { showing: true, present: null });
      await realDelay(300);
      assert.equal(kiosk.connection.emulator!.listSessions().length, 0, 'no spare while closed');
      assert.deepEqual(await kiosk.calls.start(), { ok: false, error: { code: 'invalid_request', message: 'The kiosk is closed (outside its opening hours).' } });
      assert.match(await metrics.render(), /^avatar_kiosk_open 0$/m);

      await clock.advance(60 * 60_000);
      assert.equal(events[1], 'opening:true:null');
      assert.match(await metrics.render(), /^avatar_kiosk_open 1$/m);
      await until(() => events.includes('spare:created'), { realTimeoutMs: 15_000, message: 'a spare once open' });

      // Closing time drops the spare (closed, never billed).
      await clock.advance(8 * 60 * 60_000);
      await until(() => events.includes('spare:expired'), { realTimeoutMs: 15_000, message: 'the spare dropped at closing' });
      assert.equal(kiosk.availability.opening.open, false);
    } finally {
      await host.close();
      await kiosk.shutdown();
    }
  });

  it('opening hours: the kiosk is told (with the time zone), the log says open or closed and the next change in local time', async () => {
    const service = scriptedService(resolveConfig({ schedule: BERLIN }, {}, { appRoot: ROOT }));
    const { fleet, clock, logger } = host(service);
    assert.deepEqual(service.openings, [{ open: false, nextOpenAt: '2026-11-23T08:00:00.000Z', timeZone: 'Europe/Berlin' }]);
    assert.deepEqual(fleet.opening, { open: false, nextChangeAtMs: Date.parse('2026-11-23T08:00:00Z'), nextOpenAtMs: Date.parse('2026-11-23T08:00:00Z') });
    await clock.advance(60 * 60_000);
    assert.deepEqual(service.openings.at(-1), { open: true, nextOpenAt: null, timeZone: 'Europe/Berlin' });
    assert.deepEqual(logger.lines, [
      { level: 'info', message: 'Opening hours: closed', data: { next: 'Mon 23 Nov, 09:00' } },
      { level: 'info', message: 'Opening hours: open', data: { next: 'Mon 23 Nov, 17:00' } },
    ]);
    assert.equal(fleet.link, null);
    await fleet.close();
  });

  it('opening hours that never open: no next change in the log', async () => {
    const service = scriptedService(resolveConfig({ schedule: { timeZone: 'UTC', weekly: {} } }, {}, { appRoot: ROOT }));
    const { fleet, logger } = host(service);
    assert.deepEqual(logger.lines, [{ level: 'info', message: 'Opening hours: closed', data: { next: null } }]);
    assert.deepEqual(service.openings, [{ open: false, nextOpenAt: null, timeZone: 'UTC' }]);
    await fleet.close();
  });

  it('no opening hours: open, no time zone, nothing logged', async () => {
    const service = scriptedService(resolveConfig({}, {}, { appRoot: ROOT }));
    const { fleet, logger } = host(service);
    assert.deepEqual(service.openings, [{ open: true, nextOpenAt: null, timeZone: null }]);
    assert.deepEqual(logger.lines, []);
    await fleet.close();
  });

  it('the /metrics gauge is removed on close, so a host started again registers it again', async () => {
    const registry = new Registry();
    const service = scriptedService(resolveConfig({}, {}, { appRoot: ROOT }));
    const first = host(service, { registry });
    assert.match(await registry.metrics(), /^avatar_kiosk_open 1$/m);
    await first.fleet.close();
    assert.equal(registry.getSingleMetric('avatar_kiosk_open'), undefined);
    const second = host(service, { registry });
    assert.match(await registry.metrics(), /^avatar_kiosk_open 1$/m);
    await second.fleet.close();
  });
});

describe('fleet host: without a link', () => {
  it('a link that cannot start (an unreadable certificate) is logged; the kiosk runs without it', async () => {
    const mqtt = { url: 'mqtts://broker.example', kioskId: 'k-cert', certFile: '/nonexistent/c.pem', keyFile: '/nonexistent/k.pem' };
    const service = scriptedService(resolveConfig({ mqtt }, {}, { appRoot: ROOT }));
    const { fleet, logger } = host(service);
    assert.equal(fleet.link, null);
    assert.deepEqual(logger.lines.filter((l) => l.level === 'error'), [
      { level: 'error', message: 'The fleet link could not start; the kiosk runs without it', data: { message: 'The MQTT cert file /nonexistent/c.pem could not be read (ENOENT).' } },
    ]);
    await fleet.close();
  });

  it('without a link, ledger records and the service\'s events are taken quietly; after close they are not heard', async () => {
    const service = scriptedService(resolveConfig({}, {}, { appRoot: ROOT }));
    let append: ((record: unknown) => void) | null = null;
    let unsubscribed = 0;
    const ledger: LedgerFeed = {
      totals: () => ({ today: { sessions: 0, credits: 0 } }) as never,
      onAppend: (listener) => {
        append = listener;
        return () => void unsubscribed++;
      },
    };
    const { fleet } = host(service, { ledger });
    append!({ kind: 'session' });
    service.emit({ type: 'call-figures', figures: figures(100) });
    service.emit({ type: 'state', state: { phase: 'idle' }, previous: 'ended' } as KioskEvent);
    service.emit({ type: 'state', state: FAILED, previous: 'live' });
    service.emit({ type: 'opening', opening: { open: true, nextOpenAt: null, timeZone: null } });
    await fleet.close();
    assert.equal(unsubscribed, 1);
  });
});

describe('applyRemoteSettings and persistUpdatePin: what they apply, keep and refuse', () => {
  it('apply: writes config.json and reconfigures; a policy-managed key or an unknown cast member is refused and nothing changes', async () => {
    const { configFile, configPath, kiosk } = await kioskWith({ avatars: AVATARS, idle: { promptSeconds: 45, hangupSeconds: 15 } }, { avatar: { persona: 'Policy persona.' } });
    const options = { kiosk, configFile, env: {}, policy: { avatar: { persona: 'Policy persona.' } }, appRoot: ROOT };
    try {
      const applied = await applyRemoteSettings({ avatar: { name: 'Eve' }, cast: ['max'], idle: { promptSeconds: 60 }, schedule }, options);
      assert.deepEqual(applied, ['avatar.name', 'cast', 'idle.promptSeconds', 'schedule']);
      const file = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
      assert.deepEqual(file.castSelection, ['max']);
      assert.deepEqual(file.idle, { promptSeconds: 60, hangupSeconds: 15 });
      assert.deepEqual(file.schedule, schedule);
      assert.deepEqual(kiosk.config.cast.map((m) => m.id), ['max']);
      assert.equal(kiosk.config.idle.promptSeconds, 60);
      assert.equal(kiosk.config.avatar.name, 'Eve');

      const before = readFileSync(configPath, 'utf8');
      await assert.rejects(applyRemoteSettings({ avatar: { persona: 'Hijack' } }, options), { message: '"avatar.persona" is set by the administrator\'s policy file on this kiosk; change it there.' });
      await assert.rejects(applyRemoteSettings({ cast: ['nobody'] }, options), { message: 'Invalid configuration at "castSelection.0": there is no avatar "nobody" in the cast (ava, max).' });
      assert.equal(readFileSync(configPath, 'utf8'), before);
      // Removing the hours.
      assert.deepEqual(await applyRemoteSettings({ schedule: null }, options), ['schedule']);
      assert.equal((JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>).schedule, undefined);
    } finally {
      await kiosk.shutdown();
    }
  });

  it('update-pin: kept in config.json beside the other update settings, removed by null; refused when the policy pins', async () => {
    const { configFile, configPath, kiosk } = await kioskWith({ callMode: 'audio', update: { url: 'https://u.example/kiosk', checkEveryMinutes: 60 } });
    await kiosk.shutdown();
    await persistUpdatePin('1.4.2', { configFile, policy: {} });
    assert.deepEqual(JSON.parse(readFileSync(configPath, 'utf8')).update, { url: 'https://u.example/kiosk', checkEveryMinutes: 60, pinVersion: '1.4.2' });
    await persistUpdatePin(null, { configFile, policy: {} });
    assert.deepEqual(JSON.parse(readFileSync(configPath, 'utf8')).update, { url: 'https://u.example/kiosk', checkEveryMinutes: 60 });
    const before = readFileSync(configPath, 'utf8');
    await assert.rejects(persistUpdatePin('1.4.2', { configFile, policy: { update: { pinVersion: '1.5.0' } } }), { code: 'forbidden', message: "The administrator's policy sets update.pinVersion; change it there." });
    assert.equal(readFileSync(configPath, 'utf8'), before, 'nothing changed');
  });

  const policy = { avatar: { persona: 'Policy persona.' } };
  const file = { avatars: AVATARS, schedule: BERLIN, window: { kiosk: false } };
  const setup = (over: Record<string, unknown> = {}, pol: Record<string, unknown> = policy) => {
    const configFile = memoryFile({ ...file, ...over });
    const service = scriptedService(resolveConfig(configFile.read(), {}, { appRoot: ROOT, policy: pol }));
    return { configFile, service, options: { kiosk: fleetKioskOf(service), configFile, env: {}, policy: pol, appRoot: ROOT } };
  };

  it('one setting: only it is applied; the hours and the policy stay; window and engine are the running ones', async () => {
    const { configFile, service, options } = setup();
    const window = service.config.window;
    assert.deepEqual(await applyRemoteSettings({ avatar: { name: 'Eve' } }, options), ['avatar.name']);
    assert.deepEqual(configFile.data.schedule, BERLIN);
    const applied = service.reconfigured[0]!;
    assert.deepEqual([applied.avatar.name, applied.avatar.persona], ['Eve', 'Policy persona.']);
    assert.equal(applied.window, window);
    assert.equal(applied.rtcEngine, service.config.rtcEngine);
  });

  it('nothing to apply, a cast the policy sets, a call started meanwhile: refused, nothing written', async () => {
    const { configFile, service, options } = setup();
    await assert.rejects(applyRemoteSettings({}, options), {
      code: 'invalid_request',
      message: 'Nothing to apply; "apply" may change avatar.name, avatar.persona, cast, schedule, idle.promptSeconds, idle.hangupSeconds.',
    });
    await assert.rejects(applyRemoteSettings({ avatar: { persona: 'Mine' } }, options), { code: 'invalid_request', message: '"avatar.persona" is set by the administrator\'s policy file on this kiosk; change it there.' });
    service.running = true;
    await assert.rejects(applyRemoteSettings({ avatar: { name: 'Eve' } }, options), { code: 'invalid_request', message: 'A call started meanwhile; send the command again.' });
    assert.deepEqual([configFile.writes, service.reconfigured.length], [0, 0]);

    const locked = setup({}, { castSelection: ['ava'] });
    await assert.rejects(applyRemoteSettings({ cast: ['max'] }, locked.options), { code: 'invalid_request', message: '"cast" is set by the administrator\'s policy file on this kiosk; change it there.' });
    assert.equal(locked.configFile.writes, 0);
  });

  it('an operator pin is kept when the policy has update settings without a pin, or none at all', async () => {
    for (const policyUpdate of [{ channel: 'beta' }, null]) {
      const configFile = memoryFile({ update: null });
      await persistUpdatePin('1.4.2', { configFile, policy: { update: policyUpdate } });
      assert.deepEqual(configFile.data, { update: { pinVersion: '1.4.2' } });
    }
  });
});

describe('fleet host with the real kiosk on a real broker', () => {
  it('sends each ledger record to the events topic and today\'s totals in the status', { skip: missing ?? false }, async () => {
    const broker = await startBroker({ operator: 'op-pass', 'kiosk-a': 'a-pass' });
    const { dataDir, configFile, kiosk } = await kioskWith({});
    const ledger = createLedger({ dir: join(dataDir, 'ledger') });
    const op = await connectAsync(broker.url, { username: 'operator', password: 'op-pass', protocolVersion: 5, reconnectPeriod: 0 });
    const seen: Array<{ topic: string; body: Record<string, unknown> }> = [];
    op.on('message', (topic, payload) => seen.push({ topic, body: JSON.parse(payload.toString()) as Record<string, unknown> }));
    await op.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
    const mqtt = { url: broker.url, username: 'kiosk-a', password: 'a-pass', kioskId: 'kiosk-a', topicPrefix: PREFIX };
    await kiosk.reconfigure({ ...kiosk.config, mqtt: { ...mqtt, queueLimit: 100 } });
    const clock = new FakeClock(Date.now());
    const logged: string[] = [];
    const record = (level: string) => (message: string, details?: unknown) => void logged.push(`${level} ${message} ${JSON.stringify(details ?? {})}`);
    const logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
    const host = startFleetHost({ kiosk, ledger, dataDir, version: '1.2.3', clock, logger, configFile, env: {}, policy: {}, appRoot: ROOT, actions: noActions, reconnectMs: 200 });
    try {
      await until(() => seen.some((s) => s.topic === `${PREFIX}/kiosk-a/status` && s.body.online === true), { realTimeoutMs: 15_000, message: 'online' });
      const session: SessionRecord = {
        kind: 'session',
        v: 1,
        start_at: new Date(clock.now() - 60_000).toISOString(),
        live_at: new Date(clock.now() - 55_000).toISOString(),
        end_at: new Date(clock.now()).toISOString(),
        live_id: 'live-1',
        surface: 'direct', // a real call (a demo one is counted apart, never in the credits)
        call_mode: 'video',
        time_to_live_ms: 5000,
        not_ready_retries: 0,
        reconnects: 0,
        end_reason: 'user_end',
        ended_by: 'client',
        billed_seconds: 55,
        credits_cost: 3,
        recovered: false,
      };
      await ledger.append(session);
      await until(() => seen.some((s) => s.topic === `${PREFIX}/kiosk-a/events`), { realTimeoutMs: 15_000, message: 'the event' });
      const event = seen.find((s) => s.topic === `${PREFIX}/kiosk-a/events`)!.body;
      assert.deepEqual(event.record, session);
      assert.match(String(event.id), /^[0-9a-f]{8}-1$/);
      await clock.advance(1_000); // the status throttle
      await until(() => seen.some((s) => s.topic === `${PREFIX}/kiosk-a/status` && (s.body.today as { sessions: number }).sessions === 1), { realTimeoutMs: 15_000, message: 'totals in the status' });
      const status = seen.filter((s) => s.topic === `${PREFIX}/kiosk-a/status`).at(-1)!.body;
      // With the kiosk's local day the totals are for (its start and end), so the console can tell its days apart.
      assert.deepEqual([status.version, status.mode, status.open, status.today], ['1.2.3', 'demo', true, { sessions: 1, credits: 3, demoSessions: 0, ...kioskDay(clock.now()) }]);
      assert.ok(logged.some((l) => l.startsWith('info Fleet link: connecting to the broker') && l.includes('"username":"kiosk-a"')), logged.join('\n'));
      assert.equal(logged.filter((l) => l.includes('a-pass')).length, 0, 'the broker password is never logged');
      // A clean stop says offline (retained) before leaving.
      await host.close();
      await until(() => seen.filter((s) => s.topic === `${PREFIX}/kiosk-a/status`).at(-1)!.body.online === false, { realTimeoutMs: 10_000, message: 'offline on stop' });
      assert.equal(seen.filter((s) => s.topic === `${PREFIX}/kiosk-a/status`).at(-1)!.body.reason, 'stopped');
    } finally {
      await host.close();
      await op.endAsync();
      await kiosk.shutdown();
      await broker.dispose();
    }
  });

  it('the status says whether the kiosk reaches its service: not while nobody answers, connected once the service is up', { skip: missing ?? false }, async () => {
    const broker = await startBroker({ operator: 'op-pass', 'kiosk-b': 'b-pass' });
    // A port nobody listens on yet; the emulator comes up on it later.
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const dataDir = tempDir();
    const configFile = jsonFilePersistence(join(dataDir, 'config.json'));
    const mqtt = { url: broker.url, username: 'kiosk-b', password: 'b-pass', kioskId: 'kiosk-b', topicPrefix: PREFIX, queueLimit: 100 };
    const file = { service: { baseUrl }, mqtt, prewarm: { mode: 'off' } };
    await configFile.write(file);
    const kiosk = await createKiosk({ config: resolveConfig(file, {}, { appRoot: ROOT }), apiKey: DEMO_API_KEY, apiKeySource: 'env' });
    const op = await connectAsync(broker.url, { username: 'operator', password: 'op-pass', protocolVersion: 5, reconnectPeriod: 0 });
    const statuses: Array<Record<string, unknown>> = [];
    op.on('message', (topic, payload) => topic === `${PREFIX}/kiosk-b/status` && statuses.push(JSON.parse(payload.toString()) as Record<string, unknown>));
    await op.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
    const host = startFleetHost({ kiosk, ledger: null, dataDir, version: '1.2.3', clock: systemClock, configFile, env: {}, policy: {}, appRoot: ROOT, actions: noActions, reconnectMs: 200 });
    let emu: EmulatorHandle | null = null;
    const service = () => statuses.at(-1)?.service as { status: string; message: string; action: string | null } | undefined;
    try {
      await until(() => service()?.status === 'unreachable', { realTimeoutMs: 20_000, message: 'unreachable in the status' });
      assert.match(service()!.message, new RegExp(`^The service at ${baseUrl.replace(/[.:/]/g, '\\$&')} could not be reached \\(connection refused\\)\\.$`));
      assert.equal(service()!.action, "Check the address, the network and the venue's proxy or firewall.");
      assert.equal(statuses.at(-1)!.mode, 'direct');
      emu = await startEmulator({ host: '127.0.0.1', port });
      // The kiosk's own re-check (5 s, real time here) finds it, and the status is published again.
      await until(() => service()?.status === 'connected', { realTimeoutMs: 30_000, message: 'connected in the status' });
      assert.deepEqual(service(), { status: 'connected', message: `Connected: the service at ${baseUrl} answered and accepted the key.`, action: null });
    } finally {
      await host.close();
      await op.endAsync();
      await kiosk.shutdown();
      await emu?.close();
      await broker.dispose();
    }
  });

  it('set-volume from the broker: the kiosk\'s volume, its file, the page\'s event and the status; a restarted kiosk keeps it', { skip: missing ?? false }, async () => {
    const broker = await startBroker({ operator: 'op-pass', 'kiosk-v': 'v-pass' });
    const dataDir = tempDir();
    const configFile = jsonFilePersistence(join(dataDir, 'config.json'));
    const file = { mqtt: { url: broker.url, username: 'kiosk-v', password: 'v-pass', kioskId: 'kiosk-v', topicPrefix: PREFIX } };
    await configFile.write(file);
    const op = await connectAsync(broker.url, { username: 'operator', password: 'op-pass', protocolVersion: 5, reconnectPeriod: 0 });
    const seen: Array<{ topic: string; body: Record<string, unknown> }> = [];
    op.on('message', (topic, payload) => payload.length && seen.push({ topic, body: JSON.parse(payload.toString()) as Record<string, unknown> }));
    await op.subscribeAsync(`${PREFIX}/kiosk-v/#`, { qos: 1 });
    const statuses = () => seen.filter((m) => m.topic === `${PREFIX}/kiosk-v/status`).map((m) => m.body);
    const clock = new FakeClock(Date.now());
    /** The kiosk as a host starts it: its volume opened in the data folder, and the fleet host. */
    const start = async () => {
      const kiosk = await createKiosk({ config: resolveConfig(file, {}, { appRoot: ROOT }), apiKey: null, apiKeySource: 'none', avatarVolume: openAvatarVolume({ dir: dataDir }) });
      const heard: unknown[] = [];
      kiosk.events.onEvent((e) => e.type === 'avatar-volume' && heard.push(e));
      const host = startFleetHost({ kiosk, ledger: null, dataDir, version: '1.2.3', clock, configFile, env: {}, policy: {}, appRoot: ROOT, actions: noActions, reconnectMs: 200 });
      return { kiosk, host, heard };
    };
    let running = await start();
    try {
      await until(() => statuses().some((s) => s.online === true && s.avatarVolume === 100), { realTimeoutMs: 15_000, message: 'online at 100 %' });
      const send = async (id: string, body: Record<string, unknown>) => {
        await op.publishAsync(`${PREFIX}/kiosk-v/cmd`, JSON.stringify({ id, ...body }), { qos: 1, properties: { messageExpiryInterval: 60 } });
        await until(() => seen.some((m) => m.topic === `${PREFIX}/kiosk-v/cmd/result` && m.body.id === id), { realTimeoutMs: 15_000, message: `the answer to ${id}` });
        const { at: _at, ...answer } = seen.find((m) => m.topic === `${PREFIX}/kiosk-v/cmd/result` && m.body.id === id)!.body;
        return answer;
      };
      assert.deepEqual(await send('v1', { cmd: 'set-volume', percent: 40 }), { id: 'v1', cmd: 'set-volume', ok: true, result: { avatarVolume: 40 } });
      assert.equal(running.kiosk.avatarVolume.percent, 40);
      assert.deepEqual(running.heard, [{ type: 'avatar-volume', percent: 40 }], 'the page hears it');
      assert.deepEqual(JSON.parse(readFileSync(join(dataDir, AVATAR_VOLUME_FILE), 'utf8')), { v: 1, percent: 40 });
      await clock.advance(1_000); // the status throttle
      await until(() => statuses().at(-1)!.avatarVolume === 40, { realTimeoutMs: 15_000, message: 'the status at 40 %' });
      assert.deepEqual(await send('v2', { cmd: 'set-volume', percent: 140 }), {
        id: 'v2',
        cmd: 'set-volume',
        ok: false,
        error: { code: 'invalid_request', message: 'Invalid command at "percent": the volume is a whole percent from 0 to 100.' },
      });
      assert.equal(running.kiosk.avatarVolume.percent, 40);

      // Restarted: the new kiosk plays at 40 %, tells the page so, and its first status says so.
      await running.host.close();
      await running.kiosk.shutdown();
      const before = statuses().length;
      running = await start();
      const config = await running.kiosk.appearance.getConfig();
      assert.equal(config.ok && config.value.avatarVolume, 40);
      await until(() => statuses().slice(before).some((s) => s.online === true), { realTimeoutMs: 15_000, message: 'online again' });
      assert.equal(statuses().slice(before).find((s) => s.online === true)!.avatarVolume, 40);
    } finally {
      await running.host.close();
      await running.kiosk.shutdown();
      await op.endAsync();
      await broker.dispose();
    }
  });
});

const KIOSKS = ['k-status', 'k-defaults', 'k-commands', 'k-updates', 'k-apply', 'k-apply-2', 'k-back', 'k-lacks', 'k-volume'] as const;

describe('fleet host around a scripted kiosk on a real broker: the status and each command', { skip: missing ?? false }, () => {
  let broker: Broker;
  let op: MqttClient;
  const seen: SeenMessage[] = [];
  before(async () => {
    broker = await startBroker({ operator: 'op-pass', ...Object.fromEntries(KIOSKS.map((k) => [k, `${k}-pass`])) });
    op = await connectAsync(broker.url, { username: 'operator', password: 'op-pass', protocolVersion: 5, reconnectPeriod: 0 });
    recordMessages(op, seen);
    await op.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
  });
  after(async () => {
    await op?.endAsync();
    await broker?.dispose();
  });

  const mqttFor = (kioskId: (typeof KIOSKS)[number]) => ({ url: broker.url, username: kioskId, password: `${kioskId}-pass`, kioskId, topicPrefix: PREFIX });
  const statuses = (kioskId: string) => seen.filter((s) => s.topic === `${PREFIX}/${kioskId}/status`).map((s) => s.body);
  /**
   * The status is published at most once a (fake) second, and the queue's acknowledgement may take that
   * second first: wait, moving the clock on a second at a time, at most three times.
   */
  const statusWith = async (clock: FakeClock, kioskId: string, predicate: (s: Record<string, unknown>) => boolean, message: string) => {
    for (let step = 0; ; step++) {
      try {
        await until(() => statuses(kioskId).some(predicate), { realTimeoutMs: 1_500, message });
        return statuses(kioskId).findLast(predicate)!;
      } catch (error) {
        if (step === 3) throw error;
        await clock.advance(1_000);
      }
    }
  };
  let commandSeq = 0;
  const command = async (kioskId: string, body: Record<string, unknown>) => {
    const results = () => seen.filter((s) => s.topic === `${PREFIX}/${kioskId}/cmd/result`);
    const before = results().length;
    const id = `c${++commandSeq}`;
    await op.publishAsync(`${PREFIX}/${kioskId}/cmd`, JSON.stringify({ id, ...body }), { qos: 1, properties: { messageExpiryInterval: 60 } });
    await until(() => results().length > before, { realTimeoutMs: 5_000, message: `an answer to ${String(body.cmd)}` });
    const { at: _at, id: answered, ...rest } = results()[before]!.body;
    assert.equal(answered, id);
    return rest;
  };

  it('the status: version, mode, phase, cast, hours, today\'s totals, the errors given, the sandbox, updates, the avatar volume, the day\'s call figures', async () => {
    const service = scriptedService(resolveConfig({ avatars: AVATARS, schedule: BERLIN, mqtt: mqttFor('k-status') }, {}, { appRoot: ROOT }));
    const update: UpdateStatus = { phase: 'idle', model: 'appimage', off: null, ready: null, pinned: null, floor: null, installWhenIdle: false, lastCheckAt: null, lastError: null };
    let append: ((record: unknown) => void) | null = null;
    let today = { sessions: 2, credits: 5 };
    const ledger: LedgerFeed = { totals: () => ({ today }) as never, onAppend: (l) => ((append = l), () => {}) };
    const { fleet, clock } = host(service, {
      ledger,
      lastErrorCode: () => 'network_error',
      policyError: 'policy.json: "avatar.name" is not a string',
      sandbox: true,
      updates: () => ({ status: update }) as unknown as SafeUpdates,
    });
    try {
      const first = await statusWith(clock, 'k-status', (s) => s.online === true, 'online');
      const { at: _at, ...fields } = first;
      assert.deepEqual(fields, {
        online: true,
        kioskId: 'k-status',
        group: null,
        version: '1.2.3',
        mode: 'demo',
        phase: 'idle',
        cast: ['ava', 'max'],
        open: false,
        nextChangeAt: '2026-11-23T08:00:00.000Z',
        today: { sessions: 2, credits: 5, demoSessions: 0, ...kioskDay(clock.now()) },
        lastErrorCode: 'network_error',
        policyError: 'policy.json: "avatar.name" is not a string',
        sandbox: true,
        update,
        avatarVolume: 100,
        queued: 0,
        droppedEvents: 0,
        // Who the kiosk is for: public by default, moderation strict, nothing refused, nothing counted yet.
        safety: { audience: 'public', moderation: 'strict', region: null, refusal: null, ageGate: { asked: 0, confirmed: 0, declined: 0 }, auditViolations: 0 },
        // The day's visitor funnel, exact (the console thresholds what it shows).
        visitors: { day: '2026-11-23', counts: Object.assign(emptyFunnelCounts(), { tapped: 3, live: 2 }) },
      });
      // A ledger record goes to the events topic, and today's totals to the status.
      await clock.advance(1_000);
      today = { sessions: 3, credits: 8 };
      append!({ kind: 'session', n: 1 });
      await until(() => seen.some((s) => s.topic === `${PREFIX}/k-status/events`), { realTimeoutMs: 5_000, message: 'the event' });
      assert.deepEqual(seen.find((s) => s.topic === `${PREFIX}/k-status/events`)!.body.record, { kind: 'session', n: 1 });
      await statusWith(clock, 'k-status', (s) => (s.today as { sessions: number }).sessions === 3, 'the new totals');
      // A call's figures: the day's summary joins the status.
      await clock.advance(1_000);
      service.emit({ type: 'call-figures', figures: figures(1_234) });
      const withFigures = await statusWith(clock, 'k-status', (s) => s.callFigures !== undefined, 'the call figures');
      const summary = withFigures.callFigures as { calls: number; day: string; p50: { joinMs: number | null; tapToRtcReadyMs: number | null } };
      assert.deepEqual([summary.calls, summary.p50.joinMs, summary.p50.tapToRtcReadyMs], [1, 1_234, null]);
      assert.match(summary.day, /^2026-11-2[23]$/);
    } finally {
      await fleet.close();
    }
  });

  it('the status without the optional parts: no totals, no error, no sandbox, no updates; a failed call\'s code, phase and mode as they change', async () => {
    const service = scriptedService(resolveConfig({ mqtt: mqttFor('k-defaults') }, {}, { appRoot: ROOT }));
    const { fleet, clock } = host(service, { updates: () => null });
    try {
      const first = await statusWith(clock, 'k-defaults', (s) => s.online === true, 'online');
      assert.deepEqual([first.nextChangeAt, first.today, first.lastErrorCode, first.policyError, first.update, 'sandbox' in first, 'callFigures' in first], [null, { sessions: 0, credits: 0, demoSessions: 0, ...kioskDay(clock.now()) }, null, null, null, false, false]);
      await clock.advance(1_000);
      service.state = FAILED;
      service.emit({ type: 'state', state: service.state, previous: 'live' });
      const failed = await statusWith(clock, 'k-defaults', (s) => s.phase === 'failed', 'the failed phase');
      assert.equal(failed.lastErrorCode, 'network');
      await clock.advance(1_000);
      service.state = { phase: 'idle' } as SessionState;
      service.emit({ type: 'state', state: service.state, previous: 'failed' });
      const idle = await statusWith(clock, 'k-defaults', (s) => s.phase === 'idle' && s.lastErrorCode === 'network', 'idle again, the code kept');
      assert.equal(idle.mode, 'demo');
      await clock.advance(1_000);
      service.mode = 'direct';
      // Other events (here the hold) do not republish the status; an opening event does.
      service.emit({ type: 'hold', hold: null });
      await realDelay(150);
      assert.equal(statuses('k-defaults').some((s) => s.mode === 'direct'), false);
      service.emit({ type: 'opening', opening: { open: true, nextOpenAt: null, timeZone: null } });
      await statusWith(clock, 'k-defaults', (s) => s.mode === 'direct', 'the mode after an opening event');
      assert.equal(fleet.link?.kioskId, 'k-defaults');
    } finally {
      await fleet.close();
    }
  });

  it('commands: ping, one that would interrupt a call, end-call as the operator, reload, screenshot, restart after the answer', async () => {
    const service = scriptedService(resolveConfig({ mqtt: mqttFor('k-commands') }, {}, { appRoot: ROOT }));
    const { fleet, done, clock } = host(service);
    try {
      await statusWith(clock, 'k-commands', (s) => s.online === true, 'online');
      assert.deepEqual(await command('k-commands', { cmd: 'ping' }), { cmd: 'ping', ok: true, result: { pong: true, version: '1.2.3' } });
      service.running = true;
      assert.deepEqual(await command('k-commands', { cmd: 'reload' }), {
        cmd: 'reload',
        ok: false,
        error: { code: 'busy', message: 'A visitor is in a call; "reload" would interrupt it. Send it again with "force": true to end the call first.' },
      });
      assert.deepEqual(await command('k-commands', { cmd: 'end-call' }), { cmd: 'end-call', ok: true, result: { ended: true } });
      assert.deepEqual(service.hangups, ['operator']);
      assert.deepEqual(await command('k-commands', { cmd: 'reload' }), { cmd: 'reload', ok: true, result: { reloaded: true } });
      assert.deepEqual(await command('k-commands', { cmd: 'screenshot' }), { cmd: 'screenshot', ok: true, result: { mime: 'image/png', width: 4, height: 3, png: Buffer.from('PNG').toString('base64') } });
      assert.deepEqual(await command('k-commands', { cmd: 'restart' }), { cmd: 'restart', ok: true, result: { restarting: true } });
      assert.deepEqual(await command('k-commands', { cmd: 'update-check' }), {
        cmd: 'update-check',
        ok: false,
        error: { code: 'unavailable', message: 'Updates are not set up on this kiosk (no update.url in its settings).' },
      });
      await until(() => done.includes('restart'), { realTimeoutMs: 5_000, message: 'the restart' });
      assert.deepEqual(done, ['reload', 'restart']);
    } finally {
      await fleet.close();
    }
  });

  it('a command needing what the host left out is refused in the host\'s words, before a call is touched', async () => {
    const service = scriptedService(resolveConfig({ mqtt: mqttFor('k-lacks') }, {}, { appRoot: ROOT }));
    const { fleet, clock } = host(service, { actions: { reload: () => undefined, lacks: { screenshot: 'No window here.' } } });
    try {
      await statusWith(clock, 'k-lacks', (s) => s.online === true, 'online');
      service.running = true;
      assert.deepEqual(await command('k-lacks', { cmd: 'screenshot', force: true }), { cmd: 'screenshot', ok: false, error: { code: 'unsupported', message: 'No window here.' } });
      assert.deepEqual(await command('k-lacks', { cmd: 'restart', force: true }), { cmd: 'restart', ok: false, error: { code: 'unsupported', message: 'This kiosk cannot restart itself from afar.' } });
      assert.deepEqual(service.hangups, []);
    } finally {
      await fleet.close();
    }
  });

  it('set-volume: the kiosk\'s volume, in the answer and in the status (every host has it)', async () => {
    const service = scriptedService(resolveConfig({ mqtt: mqttFor('k-volume') }, {}, { appRoot: ROOT }));
    const { fleet, clock } = host(service);
    try {
      await statusWith(clock, 'k-volume', (s) => s.online === true && s.avatarVolume === 100, 'online at 100 %');
      assert.deepEqual(await command('k-volume', { cmd: 'set-volume', percent: 40 }), { cmd: 'set-volume', ok: true, result: { avatarVolume: 40 } });
      assert.equal(service.avatarVolume.percent, 40);
      await statusWith(clock, 'k-volume', (s) => s.avatarVolume === 40, 'the status at 40 %');
      // Staff's change (the kiosk's event) reaches the status too.
      await service.avatarVolume.set(25);
      service.emit({ type: 'avatar-volume', percent: 25 });
      await statusWith(clock, 'k-volume', (s) => s.avatarVolume === 25, 'the status at 25 %');
      assert.deepEqual(await command('k-volume', { cmd: 'set-volume', percent: 101 }), {
        cmd: 'set-volume',
        ok: false,
        error: { code: 'invalid_request', message: 'Invalid command at "percent": the volume is a whole percent from 0 to 100.' },
      });
    } finally {
      await fleet.close();
    }
  });

  it('update commands: check, install when idle, a pin kept in config.json then passed on; a pin below the floor or a policy pin refuses, nothing kept; no updates: unavailable', async () => {
    const service = scriptedService(resolveConfig({ mqtt: mqttFor('k-updates') }, {}, { appRoot: ROOT }));
    const asked: unknown[][] = [];
    const status: UpdateStatus = { phase: 'ready', model: 'appimage', off: null, ready: '1.3.0', pinned: null, floor: null, installWhenIdle: false, lastCheckAt: null, lastError: null };
    const updates = {
      get status() {
        return { ...status, pinned: asked.findLast((a) => a[0] === 'pin')?.[1] ?? null };
      },
      check: async () => void asked.push(['check']),
      installWhenIdle: () => void asked.push(['installWhenIdle']),
      pin: (version: string | null) => void asked.push(['pin', version]),
      assertPinAllowed(version: string | null) {
        asked.push(['assertPinAllowed', version]);
        if (version === '0.0.1') throw new AvatarError('forbidden', '0.0.1 is below the floor.');
      },
    } as unknown as SafeUpdates;
    let current: SafeUpdates | null = updates;
    // The host reads the policy object it was given at each pin.
    const policy: Record<string, unknown> = {};
    const { fleet, logger, configFile, clock } = host(service, { updates: () => current, policy });
    try {
      await statusWith(clock, 'k-updates', (s) => s.online === true, 'online');
      assert.deepEqual(await command('k-updates', { cmd: 'update-check' }), { cmd: 'update-check', ok: true, result: { update: status } });
      assert.deepEqual(await command('k-updates', { cmd: 'update-install' }), { cmd: 'update-install', ok: true, result: { update: status } });
      assert.deepEqual(asked, [['check'], ['installWhenIdle']]);
      assert.deepEqual(await command('k-updates', { cmd: 'update-pin', version: '1.2.0' }), { cmd: 'update-pin', ok: true, result: { update: { ...status, pinned: '1.2.0' } } });
      assert.deepEqual(configFile.data, { update: { pinVersion: '1.2.0' } });
      assert.deepEqual(asked.at(-1), ['pin', '1.2.0']);
      assert.deepEqual(logger.lines.find((l) => l.message === 'Updates: pin changed by the operator'), { level: 'info', message: 'Updates: pin changed by the operator', data: { version: '1.2.0' } });

      // Below the signer's floor: refused before anything is kept or passed on.
      assert.deepEqual(await command('k-updates', { cmd: 'update-pin', version: '0.0.1' }), { cmd: 'update-pin', ok: false, error: { code: 'forbidden', message: '0.0.1 is below the floor.' } });
      assert.deepEqual(configFile.data, { update: { pinVersion: '1.2.0' } });

      policy.update = { pinVersion: '1.1.0' };
      assert.deepEqual(await command('k-updates', { cmd: 'update-pin', version: null }), {
        cmd: 'update-pin',
        ok: false,
        error: { code: 'forbidden', message: "The administrator's policy sets update.pinVersion; change it there." },
      });
      assert.deepEqual(asked.slice(2), [['assertPinAllowed', '1.2.0'], ['pin', '1.2.0'], ['assertPinAllowed', '0.0.1'], ['assertPinAllowed', null]], 'neither refused pin passed on');
      current = null;
      assert.deepEqual(await command('k-updates', { cmd: 'update-check' }), {
        cmd: 'update-check',
        ok: false,
        error: { code: 'unavailable', message: 'Updates are not set up on this kiosk (no update.url in its settings).' },
      });
    } finally {
      await fleet.close();
    }
  });

  it('apply: written, the new opening hours watched at once, the host told after; no after-apply hook needed', async () => {
    const service = scriptedService(resolveConfig({ mqtt: mqttFor('k-apply') }, {}, { appRoot: ROOT }));
    const { fleet, done, configFile, clock } = host(service, {
      actions: { reload: () => {}, restart: () => {}, screenshot: async () => ({ png: Buffer.alloc(0), width: 0, height: 0 }), afterApply: () => void done.push('afterApply') },
    });
    try {
      await statusWith(clock, 'k-apply', (s) => s.online === true, 'online');
      assert.deepEqual(service.openings, [{ open: true, nextOpenAt: null, timeZone: null }]);
      assert.deepEqual(await command('k-apply', { cmd: 'apply', settings: { schedule: BERLIN } }), { cmd: 'apply', ok: true, result: { applied: ['schedule'] } });
      assert.deepEqual(configFile.data.schedule, BERLIN);
      assert.deepEqual(service.openings.at(-1), { open: false, nextOpenAt: '2026-11-23T08:00:00.000Z', timeZone: 'Europe/Berlin' });
      assert.deepEqual(done, ['afterApply']);
    } finally {
      await fleet.close();
    }
    // Another host with no after-apply hook.
    service.config = { ...service.config, mqtt: { ...service.config.mqtt!, ...mqttFor('k-apply-2') } };
    const again = host(service, { configFile: memoryFile({}) });
    try {
      await statusWith(again.clock, 'k-apply-2', (s) => s.online === true, 'online');
      assert.deepEqual(await command('k-apply-2', { cmd: 'apply', settings: { schedule: null } }), { cmd: 'apply', ok: true, result: { applied: ['schedule'] } });
    } finally {
      await again.fleet.close();
    }
  });

  // Last: it takes the broker away and brings it back.
  it('the reconnect delay given is the link\'s: back within it once the broker is', async () => {
    const service = scriptedService(resolveConfig({ mqtt: mqttFor('k-back') }, {}, { appRoot: ROOT }));
    const { fleet, clock } = host(service, { reconnectMs: 100 });
    try {
      await statusWith(clock, 'k-back', (s) => s.online === true, 'online');
      await broker.stop();
      await until(() => fleet.link?.connected === false, { realTimeoutMs: 5_000, message: 'the link saw the broker go' });
      await broker.start();
      // The link's default is 5 s.
      await until(() => fleet.link?.connected === true, { realTimeoutMs: 2_000, message: 'back within the short delay' });
    } finally {
      await fleet.close();
    }
  });
});

describe('fleet host through the venue\'s proxy', () => {
  it('the link to the broker goes through the route given', async () => {
    const targets: string[] = [];
    // A proxy that notes where it was asked to connect, and refuses.
    const proxy = createServer().on('connect', (req, socket) => {
      targets.push(String(req.url));
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const service = scriptedService(resolveConfig({ mqtt: { url: 'mqtt://127.0.0.1:1883', kioskId: 'k-proxied' } }, {}, { appRoot: ROOT }));
    const { fleet } = host(service, { mqttRoute: { kind: 'http', url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` } });
    try {
      await until(() => targets.length > 0, { realTimeoutMs: 5_000, message: 'a CONNECT at the proxy' });
      assert.equal(targets[0], '127.0.0.1:1883');
    } finally {
      await fleet.close();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});
