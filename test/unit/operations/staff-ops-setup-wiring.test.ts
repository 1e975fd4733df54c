/**
 * What createStaffOps wires around the kiosk's services, against a scripted stand-in for them so each
 * state event, key source and clock tick is chosen by the test: the Status tab's figures, the recent
 * errors list, the venue's maximum call length, and the first checks of saving the settings.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock, type Clock } from '../../../electron/core/clock.ts';
import type { KioskEvent, Result, StaffStatus } from '../../../electron/contract.ts';
import type { SessionState } from '../../../electron/core/session-types.ts';
import type { ConfigEnv } from '../../../electron/kiosk/config.ts';
import { createChannelRegistry } from '../../../electron/kiosk/channels.ts';
import { memoryAvatarVolume, type AvatarVolume } from '../../../electron/kiosk/avatar-volume.ts';
import { jsonFilePersistence, type SettingsPersistence } from '../../../electron/operations/settings.ts';
import { createStaffOps, type StaffKiosk, type StaffOps, type StaffOpsOptions } from '../../../electron/operations/staff-ops.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';
import { sessionSummary } from '../../helpers/ledger-records.ts';
import { rejection } from '../../helpers/rejection.ts';
import { TINY_PNG } from '../../helpers/staff-kiosk.ts';
import { join, relative, sep } from 'node:path';
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hashPin } from '../../../electron/operations/staff-pin.ts';
import { loadPolicy } from '../../../electron/fleet/managed-config.ts';
import { StrictClock } from '../../helpers/fake-clock.ts';

const tempDir = tempDirsRemovedAfterEach('staff-ops-setup-');

/** The kiosk's services as staff operations see them, every answer chosen by the test. */
interface ScriptedService {
  mode: 'demo' | 'direct' | 'gateway';
  client: { target: Record<string, string> } | undefined;
  config: { maxCallSeconds?: number; service: { baseUrl?: string }; window: unknown; rtcEngine: string };
  running: boolean;
  attention: unknown[];
  lastCallQuality: unknown;
  lastCallFigures: unknown;
  callAvatarId: string | null;
  avatarVolume: AvatarVolume;
  keySource: 'env' | 'stored' | 'none';
  hangups: number;
  reconfigured: Array<Record<string, unknown>>;
  /** What listeners threw: the real event bus logs "An event listener threw" for each. */
  listenerErrors: unknown[];
  emit(event: KioskEvent): void;
}

function scriptedService(over: Partial<ScriptedService> = {}): ScriptedService {
  const listeners = new Set<(event: KioskEvent) => void>();
  const s: ScriptedService = {
    mode: 'demo',
    client: undefined,
    config: { service: {}, window: { mode: 'kiosk' }, rtcEngine: 'auto' },
    running: false,
    attention: [],
    lastCallQuality: null,
    lastCallFigures: null,
    callAvatarId: null,
    avatarVolume: memoryAvatarVolume(),
    keySource: 'none',
    hangups: 0,
    reconfigured: [],
    listenerErrors: [],
    ...over,
    emit(event: KioskEvent) {
      for (const l of [...listeners]) {
        try {
          l(event);
        } catch (error) {
          s.listenerErrors.push(error);
        }
      }
    },
  };
  scriptedKiosks.set(s, {
    get config() {
      // The audience as a kiosk resolves it with nothing configured: public, strict.
      return { safety: { audience: 'public', requested: 'public', moderation: 'strict', region: null, refusal: null, ageGate: null }, ...s.config };
    },
    async reconfigure(config: Record<string, unknown>) {
      s.reconfigured.push(config);
    },
    events: {
      onEvent(listener: (event: KioskEvent) => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    calls: {
      get running() {
        return s.running;
      },
      async hangup() {
        s.hangups += 1;
        return { ok: true, value: undefined };
      },
      onHangupCause: () => () => {},
    },
    connection: {
      get mode() {
        return s.mode;
      },
      get client() {
        return s.client;
      },
      transportFactory: undefined,
    },
    key: {
      get present() {
        return s.keySource !== 'none';
      },
      get source() {
        return s.keySource;
      },
      get weaklyProtected() {
        return s.keySource === 'stored' ? 'unknown' : false;
      },
    },
    avatarVolume: s.avatarVolume,
    telemetry: {
      get lastCallQuality() {
        return s.lastCallQuality;
      },
      get lastCallFigures() {
        return s.lastCallFigures;
      },
      get callAvatarId() {
        return s.callAvatarId;
      },
    },
    appearance: {
      get attention() {
        return s.attention;
      },
    },
    ageGateCounts: () => ({ asked: 0, confirmed: 0, declined: 0 }),
    auditViolations: () => 0,
  } as unknown as StaffKiosk);
  return s;
}
/** The kiosk each scripted service stands for (what staff operations are given). */
const scriptedKiosks = new WeakMap<ScriptedService, StaffKiosk>();

interface Setup {
  service: ScriptedService;
  ops: StaffOps;
  clock: StrictClock;
  dataDir: string;
  persistence: SettingsPersistence;
  logger: ReturnType<typeof recordingLogger>;
}

const opened: StaffOps[] = [];
afterEach(() => {
  for (const o of opened.splice(0)) o.dispose();
});

function setup(
  service: ScriptedService = scriptedService(),
  extra: Partial<Omit<StaffOpsOptions, 'clock'>> & { clock?: Clock; file?: Record<string, unknown>; env?: ConfigEnv } = {},
): Setup {
  const clock = new StrictClock();
  const dataDir = extra.dataDir ?? tempDir();
  const persistence = extra.persistence ?? jsonFilePersistence(join(dataDir, 'config.json'));
  const logger = recordingLogger();
  const ops = createStaffOps({
    kiosk: scriptedKiosks.get(service)!,
    channels: createChannelRegistry(),
    dataDir,
    persistence,
    env: {},
    appRoot: tempDir(),
    version: '1.2.3-test',
    logTail: () => [],
    platform: { getOpenAtLogin: () => null, setOpenAtLogin: () => {}, exitKiosk: () => {}, restart: () => {} },
    logger,
    ...extra,
    clock: extra.clock ?? clock,
  });
  opened.push(ops);
  return { service, ops, clock, dataDir, persistence, logger };
}

function value<T>(r: Result<T>): T {
  assert.ok(r.ok, JSON.stringify(r));
  return r.value;
}
const statusOf = async (ops: StaffOps): Promise<StaffStatus> => value(await ops.handlers.staff.status(undefined as never));

const live = (liveId: string, sinceMs: number): KioskEvent => ({ type: 'state', state: { phase: 'live', liveId, sinceMs, endsAtMs: sinceMs + 600_000 }, previous: 'warming' });
const state = (s: SessionState, previous: SessionState['phase'] = 'live'): KioskEvent => ({ type: 'state', state: s, previous });
const failed = (code: string, message: string): KioskEvent =>
  state({ phase: 'failed', liveId: 'L1', error: { code, message } as never, summary: null });

describe('staff status: where the kiosk is pointed, its key, its figures', () => {
  it('shows no service URL in demo mode, the base URL on the direct surface and the gateway URL on the gateway', async () => {
    const demo = setup(scriptedService({ mode: 'demo', client: { target: { surface: 'direct', baseUrl: 'https://api.example' } } }));
    assert.equal((await statusOf(demo.ops)).serviceUrl, null);
    const direct = setup(scriptedService({ mode: 'direct', client: { target: { surface: 'direct', baseUrl: 'https://api.example', gatewayUrl: 'https://gw.example' } } }));
    assert.equal((await statusOf(direct.ops)).serviceUrl, 'https://api.example');
    const gateway = setup(scriptedService({ mode: 'gateway', client: { target: { surface: 'gateway', baseUrl: 'https://api.example', gatewayUrl: 'https://gw.example' } } }));
    assert.equal((await statusOf(gateway.ops)).serviceUrl, 'https://gw.example');
    // Between a settings change and the new client there may be none: the tab says so rather than failing.
    const between = setup(scriptedService({ mode: 'direct', client: undefined }));
    assert.equal((await statusOf(between.ops)).serviceUrl, null);
  });

  it('counts the uptime in whole seconds since staff operations started', async () => {
    const { ops, clock } = setup();
    await clock.advance(5_999);
    assert.equal((await statusOf(ops)).uptimeS, 5);
    await clock.advance(1);
    assert.equal((await statusOf(ops)).uptimeS, 6);
  });

  it('says "no key" when the kiosk has none', async () => {
    const { ops } = setup(scriptedService({ keySource: 'none' }));
    const s = await statusOf(ops);
    assert.deepEqual([s.hasApiKey, s.apiKeySource, s.apiKeyWeaklyProtected], [false, 'none', false]);
    const settings = value(await ops.handlers.staff.getSettings(undefined as never));
    assert.deepEqual([settings.hasApiKey, settings.apiKeySource], [false, 'none']);
  });

  it("shows the key the service reports, and copies of the last call's quality and figures", async () => {
    const quality = { bitrateKbps: 900, packetLossPct: 0.5, frameRate: 24, rttMs: 80, level: 'good', atMs: 1, final: true };
    const figures = { liveId: 'L1', callMode: 'video', tapToRtcReadyMs: 1, tapToConnInitAckMs: 2, tapToAvatarPublishedMs: 3, tapToFirstFrameMs: 4, tapToFirstAudioMs: 5, joinMs: 6, proxy: 'off', endReason: 'user_end' };
    const service = scriptedService({ keySource: 'stored', lastCallQuality: quality, lastCallFigures: figures });
    const { ops } = setup(service);
    const s = await statusOf(ops);
    assert.deepEqual([s.hasApiKey, s.apiKeySource, s.apiKeyWeaklyProtected], [true, 'stored', 'unknown']);
    assert.deepEqual(s.lastCall, quality);
    assert.deepEqual(s.lastCallFigures, figures);
    assert.notEqual(s.lastCall, quality, 'a copy: the panel cannot change what main keeps');
    const none = await statusOf(setup().ops);
    assert.equal('lastCall' in none || 'lastCallFigures' in none, false);
  });
});

describe('the recent errors list', () => {
  it('keeps each failed call with its time, code and message cut to 500 characters', async () => {
    const { service, ops, clock } = setup();
    await clock.advance(1_000);
    service.emit(failed('network', 'x'.repeat(600)));
    const errors = (await statusOf(ops)).errors;
    assert.deepEqual(errors, [{ atMs: clock.now(), code: 'network', message: 'x'.repeat(500) }]);
  });

  it('keeps the last 20 failures, oldest dropped first', async () => {
    const { service, ops } = setup();
    for (let i = 1; i <= 21; i++) service.emit(failed('network', `failure ${i}`));
    const errors = (await statusOf(ops)).errors;
    assert.equal(errors.length, 20);
    assert.equal(errors[0]!.message, 'failure 2');
    assert.equal(errors[19]!.message, 'failure 21');
  });

  it('lists only failures: calls that end, other states and events that are not states add nothing', async () => {
    const { service, ops } = setup();
    service.emit(live('L1', 0));
    service.emit(state({ phase: 'ended', liveId: 'L1', summary: sessionSummary() }));
    service.emit({ type: 'muted', muted: true });
    service.emit({ type: 'warning', message: 'A name over 20 characters.' });
    assert.deepEqual((await statusOf(ops)).errors, []);
    assert.deepEqual(service.listenerErrors, [], 'staff operations handle every event without throwing');
  });
});

describe("the venue's maximum call length", () => {
  const withLimit = (maxCallSeconds?: number) =>
    scriptedService({ config: { ...(maxCallSeconds !== undefined ? { maxCallSeconds } : {}), service: {}, window: {}, rtcEngine: 'auto' } });

  it('hangs up once the call has been live for maxCallSeconds, says so in the log and the ledger', async () => {
    const { service, ops, clock, logger } = setup(withLimit(60));
    service.emit(state({ phase: 'creating' }, 'idle'));
    // The live state arrives 10 s after the avatar went live: the limit counts from going live.
    service.emit(live('L1', clock.now() - 10_000));
    await clock.advance(49_999);
    assert.equal(service.hangups, 0);
    assert.equal(logger.lines.some((l) => l.message.startsWith('Maximum')), false);
    await clock.advance(1);
    assert.equal(service.hangups, 1);
    assert.deepEqual(
      logger.lines.filter((l) => l.message.startsWith('Maximum')),
      [{ level: 'info', message: 'Maximum call length reached; hanging up', data: { maxCallSeconds: 60 } }],
    );
    service.emit(state({ phase: 'ended', liveId: 'L1', summary: sessionSummary({ liveId: 'L1', endedBy: 'client', hangupReason: 'user_end' }) }));
    await ops.recorder.flush();
    const records = ops.ledger.read().records;
    assert.deepEqual(records.map((r) => (r as { end_reason: string }).end_reason), ['max_call']);
  });

  it('counts from the first live state of a call: a reconnect does not restart or repeat it', async () => {
    const { service, clock } = setup(withLimit(30));
    const since = clock.now();
    service.emit(live('L1', since));
    await clock.advance(20_000);
    // The control socket drops and comes back: the call goes on, its limit with it.
    service.emit(state({ phase: 'reconnecting', liveId: 'L1', attempt: 1, sinceMs: since, endsAtMs: since + 600_000 }));
    service.emit(live('L1', since));
    await clock.advance(10_000);
    assert.equal(service.hangups, 1);
    // Still reported live (the hangup is on its way) after another reconnect: no second hangup.
    service.emit(state({ phase: 'reconnecting', liveId: 'L1', attempt: 2, sinceMs: since, endsAtMs: since + 600_000 }));
    service.emit(live('L1', since));
    await clock.advance(60_000);
    assert.equal(service.hangups, 1);
  });

  it('a reconnect without the live state coming back still hangs up at the limit', async () => {
    const { service, clock } = setup(withLimit(30));
    const since = clock.now();
    service.emit(live('L1', since));
    service.emit(state({ phase: 'reconnecting', liveId: 'L1', attempt: 1, sinceMs: since, endsAtMs: since + 600_000 }));
    service.emit(state({ phase: 'ending', liveId: 'L1', reason: 'user_end' } as SessionState));
    await clock.advance(30_000);
    assert.equal(service.hangups, 1);
  });

  for (const end of [
    state({ phase: 'ended', liveId: 'L1', summary: sessionSummary() }),
    failed('network', 'The connection dropped.'),
    state({ phase: 'idle' }, 'ended'),
  ]) {
    it(`a call that is over (${end.type === 'state' ? end.state.phase : ''}) is not hung up later`, async () => {
      const { service, clock } = setup(withLimit(30));
      service.emit(live('L1', clock.now()));
      await clock.advance(10_000);
      service.emit(end);
      await clock.advance(60_000);
      assert.equal(service.hangups, 0);
      assert.equal(clock.pendingCount, 0);
    });
  }

  it('the next call gets its own limit', async () => {
    const { service, clock } = setup(withLimit(30));
    service.emit(live('L1', clock.now()));
    await clock.advance(30_000);
    assert.equal(service.hangups, 1);
    service.emit(state({ phase: 'ended', liveId: 'L1', summary: sessionSummary() }));
    await clock.advance(5_000);
    service.emit(live('L2', clock.now()));
    await clock.advance(29_999);
    assert.equal(service.hangups, 1);
    await clock.advance(1);
    assert.equal(service.hangups, 2);
  });

  it('clears only the timers it set: calls that end without a limit armed, and dispose', async () => {
    const { service, ops, clock } = setup(withLimit(undefined));
    service.emit(live('L1', clock.now()));
    service.emit(state({ phase: 'ended', liveId: 'L1', summary: sessionSummary() }));
    service.emit(state({ phase: 'idle' }, 'ended'));
    ops.dispose();
    assert.deepEqual(clock.foreignClears, []);
  });

  it('without maxCallSeconds no call is cut short (on the real clock too)', async () => {
    const service = withLimit(undefined);
    setup(service, { clock: systemClock });
    service.emit(live('L1', Date.now()));
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(service.hangups, 0);
  });
});

describe("the PIN gate: the administrator's policy and the lock-out file", () => {
  const where = '/etc/avatar-kiosk/policy.json';
  const noPinReason = (path: string) =>
    `No staff PIN is set: the administrator's policy file ${path} sets no staffPinHash, and first-run setup does not open on a managed kiosk. Add staffPinHash to the policy file and restart.`;

  it('a policy staffPinHash that is empty locks the PIN: config.json does not stand in, and setup stays closed', async () => {
    const dataDir = tempDir();
    const persistence = jsonFilePersistence(join(dataDir, 'config.json'));
    await persistence.write({ staffPinHash: await hashPin('135790') });
    const { ops } = setup(scriptedService(), { dataDir, persistence, policy: { policy: { staffPinHash: '' }, managedKeys: ['staffPinHash'], path: where, found: true } });
    assert.deepEqual(value(ops.handlers.staff.pinState(undefined as never) as Result<unknown>), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: noPinReason(where) });
    const unlock = await rejection(ops.pin.unlock('135790'));
    assert.deepEqual([unlock.code, unlock.message], ['invalid_request', 'No staff PIN is set yet: choose one first.']);
    const chosen = await rejection(ops.pin.setPin('246813'));
    assert.deepEqual([chosen.code, chosen.message], ['forbidden', noPinReason(where)]);
  });

  it('a policy staffPinHash that is not text locks the PIN too, without a policy file on disk', async () => {
    const dataDir = tempDir();
    const persistence = jsonFilePersistence(join(dataDir, 'config.json'));
    await persistence.write({ staffPinHash: await hashPin('135790') });
    const { ops } = setup(scriptedService(), { dataDir, persistence, policy: { policy: { staffPinHash: 42 }, managedKeys: [] } });
    assert.deepEqual(ops.pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
    assert.equal((await rejection(ops.pin.unlock('135790'))).message, 'No staff PIN is set yet: choose one first.');
  });

  const reasons: Array<[string, NonNullable<StaffOpsOptions['policy']>, string | null]> = [
    ['no policy file and no PIN named: setup opens', { policy: {}, managedKeys: [], found: false }, null],
    ['a policy file without a PIN', { policy: {}, managedKeys: [], path: where, found: true }, noPinReason(where)],
    ['a policy file with no problems listed', { policy: {}, managedKeys: [], path: where, found: true, problems: [] }, noPinReason(where)],
    ['a PIN named where the path is unknown', { policy: {}, managedKeys: [], found: false, namesStaffPin: true }, noPinReason('the policy file')],
    [
      'a policy file not applied as written',
      { policy: {}, managedKeys: [], path: where, found: true, problems: ['callMode: not audio or video.', 'staffPinHash: not a PIN hash.'] },
      `No staff PIN is set, and the administrator's policy file ${where} was not applied as written: callMode: not audio or video. staffPinHash: not a PIN hash. First-run setup does not open on a managed kiosk: fix the policy file (staffPinHash) and restart.`,
    ],
  ];
  for (const [name, policy, outOfOrder] of reasons) {
    it(`out of order without a PIN: ${name}`, () => {
      const { ops } = setup(scriptedService(), { policy });
      assert.equal(ops.pin.state().outOfOrder, outOfOrder);
      assert.equal(ops.pin.setupPending(), true);
    });
  }

  it('a dangling symbolic link at the policy path keeps setup shut: a visitor cannot choose the PIN', async () => {
    const dir = tempDir();
    const path = join(dir, 'policy.json');
    symlinkSync(join(dir, 'moved.json'), path);
    const { ops } = setup(scriptedService(), { policy: loadPolicy({ path }) });
    const chosen = await rejection(ops.pin.setPin('246813'));
    assert.equal(chosen.code, 'forbidden');
    assert.match(chosen.message, /^No staff PIN is set, and the administrator's policy file .* was not applied as written: The policy file .* could not be read: .* is a symbolic link to /);
    assert.equal(ops.pin.state().pinSet, false);
  });

  it('wrong PINs are kept in pin-lockout.json (owner only), so a relaunch gives no fresh tries', async () => {
    const dataDir = tempDir();
    const persistence = jsonFilePersistence(join(dataDir, 'config.json'));
    await persistence.write({ staffPinHash: await hashPin('135790') });
    const first = setup(scriptedService(), { dataDir, persistence });
    assert.equal((await rejection(first.ops.pin.unlock('000000'))).message, 'Wrong PIN. 4 tries left.');
    const file = join(dataDir, 'pin-lockout.json');
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { failures: 1, level: 0, lockedUntilMs: 0 });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const relaunched = setup(scriptedService(), { dataDir, persistence });
    assert.equal(relaunched.ops.pin.state().attemptsLeft, 4);
    // A damaged file counts as no lock-out rather than stopping the kiosk.
    writeFileSync(file, '{ not json');
    assert.equal(setup(scriptedService(), { dataDir, persistence }).ops.pin.state().attemptsLeft, 5);
  });
});

describe('the settings: reading the store and saving', () => {
  const brokenStore: SettingsPersistence = {
    read() {
      throw new Error('disk gone');
    },
    async write() {},
  };

  it('an unreadable settings store shows the defaults and says why in the log', async () => {
    const { ops, logger } = setup(scriptedService(), { persistence: brokenStore });
    const before = logger.lines.length;
    const got = value(await ops.handlers.staff.getSettings(undefined as never));
    assert.equal(got.settings.callMode, 'video');
    assert.deepEqual(logger.lines.slice(before), [{ level: 'warn', message: 'Could not read the settings store', data: { error: 'Error: disk gone' } }]);
  });

  it('lists the keys the environment and the policy manage, once each, sorted', async () => {
    const env = { AVATAR_SURFACE: 'direct', AVATAR_BASE_URL: 'https://env.example' };
    const both = setup(scriptedService(), { env, policy: { policy: {}, managedKeys: ['window.mode', 'callMode', 'service.baseUrl'] } });
    assert.deepEqual(value(await both.ops.handlers.staff.getSettings(undefined as never)).managed, ['callMode', 'service.baseUrl', 'service.surface', 'window.mode']);
    const envOnly = setup(scriptedService(), { env });
    assert.deepEqual(value(await envOnly.ops.handlers.staff.getSettings(undefined as never)).managed, ['service.baseUrl', 'service.surface']);
  });

  const settingsFrom = async (ops: StaffOps) => value(await ops.handlers.staff.getSettings(undefined as never)).settings;
  const webImage = 'https://images.example/avatar.png';

  it('refuses to save during a call', async () => {
    const { ops, service, persistence } = setup(scriptedService({ running: true }));
    const e = await rejection(ops.handlers.staff.saveSettings({ settings: await settingsFrom(ops) }) as Promise<unknown>);
    assert.deepEqual([e.code, e.message], ['invalid_request', 'Hang up the current session before changing the settings.']);
    assert.deepEqual([persistence.read(), service.reconfigured], [{}, []]);
  });

  it('answers the field errors of invalid settings and changes nothing', async () => {
    const { ops, service, persistence } = setup();
    const settings = await settingsFrom(ops);
    const res = value(await ops.handlers.staff.saveSettings({ settings: { ...settings, avatar: { ...settings.avatar, imagePath: 'ftp://images.example/a.png' } } }));
    assert.deepEqual(res, { saved: false, fieldErrors: { 'avatar.imagePath': 'Avatar image must be a file, an http(s) address or a data: URI.' } });
    assert.deepEqual([persistence.read(), service.reconfigured], [{}, []]);
  });

  it("the running kiosk takes what the environment and the policy set over the saved form", async () => {
    const env = { AVATAR_BASE_URL: 'https://env.example' };
    const { ops, service } = setup(scriptedService({ config: { service: { baseUrl: 'https://env.example' }, window: {}, rtcEngine: 'auto' } }), {
      env,
      policy: { policy: { callMode: 'video' }, managedKeys: ['callMode'] },
    });
    const settings = await settingsFrom(ops);
    const res = value(await ops.handlers.staff.saveSettings({ settings: { ...settings, callMode: 'audio', avatar: { ...settings.avatar, imagePath: webImage } } }));
    assert.equal(res.saved, true, JSON.stringify(res));
    assert.equal(service.reconfigured.length, 1);
    const config = service.reconfigured[0] as { callMode: string; service: { baseUrl?: string } };
    assert.deepEqual([config.callMode, config.service.baseUrl], ['video', 'https://env.example']);
  });

  it('a picked image is kept as a file in the data folder, not as base64 in config.json', async () => {
    const { ops, service, persistence, dataDir } = setup(scriptedService(), { policy: { policy: { callMode: 'video' }, managedKeys: ['callMode'] } });
    const settings = await settingsFrom(ops);
    const res = value(await ops.handlers.staff.saveSettings({ settings: { ...settings, callMode: 'audio', avatar: { ...settings.avatar, imagePath: TINY_PNG } } }));
    assert.equal(res.saved, true, JSON.stringify(res));
    const stored = join(dataDir, 'avatar-image.png');
    assert.equal((persistence.read().avatar as { imagePath: string }).imagePath, stored);
    assert.deepEqual(readFileSync(stored), Buffer.from(TINY_PNG.slice(TINY_PNG.indexOf(',') + 1), 'base64'));
    assert.equal((service.reconfigured[0] as { callMode: string }).callMode, 'video', 'the policy wins for the picked image too');
  });

  it('a picked image is stored as a file whatever the case of its data: scheme', async () => {
    // URI schemes ignore case (RFC 3986), and the image check accepts DATA: as well.
    const { ops, persistence, dataDir } = setup();
    const settings = await settingsFrom(ops);
    const upper = `DATA:${TINY_PNG.slice('data:'.length)}`;
    const res = value(await ops.handlers.staff.saveSettings({ settings: { ...settings, avatar: { ...settings.avatar, imagePath: upper } } }));
    assert.equal(res.saved, true, JSON.stringify(res));
    assert.equal((persistence.read().avatar as { imagePath: string }).imagePath, join(dataDir, 'avatar-image.png'));
  });

  it('a picked image stored where the app cannot find it again is a field error, not a saved setting', async () => {
    // A data folder given relative to the working directory, and an app folder elsewhere: the stored
    // image's path is checked against the app folder, where there is no such file.
    const dataDir = relative(process.cwd(), tempDir());
    // As deep as the working directory, so the data folder's `..` steps stay inside it.
    const appRoot = join(tempDir(), ...process.cwd().split(sep).filter(Boolean));
    mkdirSync(appRoot, { recursive: true });
    const { ops, service } = setup(scriptedService(), { dataDir, appRoot });
    const settings = await settingsFrom(ops);
    const res = value(await ops.handlers.staff.saveSettings({ settings: { ...settings, avatar: { ...settings.avatar, imagePath: TINY_PNG } } }));
    assert.deepEqual(res, { saved: false, fieldErrors: { 'avatar.imagePath': `Avatar image: no file at ${join(appRoot, dataDir, 'avatar-image.png')}.` } });
    assert.deepEqual(service.reconfigured, []);
  });

  it('a key from the environment pins the service URL: another origin is refused next to the field', async () => {
    const { ops, service, persistence } = setup(scriptedService({ keySource: 'env', mode: 'direct', config: { service: { baseUrl: 'https://api.example' }, window: {}, rtcEngine: 'auto' } }));
    const settings = await settingsFrom(ops);
    const res = value(
      await ops.handlers.staff.saveSettings({
        settings: { ...settings, service: { surface: 'direct', baseUrl: 'https://elsewhere.example' }, avatar: { ...settings.avatar, imagePath: webImage } },
      }),
    );
    assert.deepEqual(res, {
      saved: false,
      fieldErrors: { 'service.baseUrl': 'The API key comes from the environment (AVATAR_API_KEY), so the service URL must come from there too (AVATAR_BASE_URL) or from the policy file.' },
    });
    assert.deepEqual([persistence.read(), service.reconfigured], [{}, []]);
  });
});
