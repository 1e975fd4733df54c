/**
 * Updates from the build's own output. The project's real packaging runs first (test/helpers/packaging:
 * electron-builder with the repository's electron-builder.yml, a stand-in Electron executable and a
 * dpkg-deb stand-in for fpm, both because their downloads cannot run here). Then:
 *  - the packaged tree is read as an installed kiosk would have it: resources/app-update.yml,
 *    package-type, the asar's files and the demo avatar, the flipped fuses, the deb's own contents;
 *  - the feed is made from the release folder the way docs/packaging.md says (copied to the feed's top
 *    folder and to `<version>/`, signed with `cli update-sign`), served on 127.0.0.1, and read by the REAL
 *    electron-updater class that this deb would get (DebUpdater: package-type says deb) with the packaged
 *    app-update.yml, Electron's `app` and `net` replaced by small Node adapters. It downloads and checks
 *    the deb against the signed channel file, and refuses a tampered, foreign-signed or unsigned one (a
 *    feed served for what it is not — another channel, an older one, an expired one, a pin below the
 *    floor — is bound-feeds.test.ts).
 * The install itself (`quitAndInstall` runs pkexec/the installer and quits Electron) is recorded, never
 * run: it needs the real Electron binary.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../helpers/fake-clock.ts';
import { startSafeUpdates, INSTALL_TIMEOUT_MS, type SafeUpdates, type SafeUpdatesOptions, type UpdaterLike } from '../../electron/fleet/safe-updates.ts';
import { installModel, stagingBucket, type InstallModel } from '../../electron/fleet/update-policy.ts';
import { updateSchema } from '../../electron/kiosk/fleet-config.ts';
import { CHANNELS, type KioskEvent, type Result } from '../../electron/contract.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk } from '../../electron/kiosk/compose.ts';
import { phaseIs, waitForEvent } from '../helpers/kiosk-events.ts';
import { startFleetHost } from '../../electron/fleet/fleet-host.ts';
import { jsonFilePersistence } from '../../electron/operations/settings.ts';
import { mosquittoMissing, PREFIX, startBroker } from '../helpers/mosquitto.ts';
import { buildDeb, FUSE_SENTINEL, ROOT, type DebBuild } from '../helpers/packaging/build.ts';
import { runCli, serveFeed, type FeedServer } from '../helpers/packaging/feed-server.ts';
import { realDebUpdater, type RecordedUpdater } from '../helpers/packaging/real-updater.ts';
import { operateKiosk } from '../helpers/fleet-operator.ts';
import { realDelay, until } from '../helpers/until.ts';

const require = createRequire(import.meta.url);
const asar = require('@electron/asar') as { listPackage(path: string, o: { isPack: boolean }): string[]; extractFile(path: string, file: string): Buffer };
const yaml = require('js-yaml') as { load(text: string): unknown; dump(v: unknown): string };

console.log('# SKIP (part): the install step (quitAndInstall runs the installer and quits Electron) needs the real Electron binary; it is recorded here, not run.');

/** The kiosks' clocks start at the real time: the feed's signature holds from when the CLI signs it. */
const NOW = Date.now();
const VERSION = '1.1.0';
const RUNNING = '1.0.0';
let work = '';
let build: DebBuild;
let feedDir = '';
let fleetKey: { privateKeyPem: string; publicKey: string };
let feed: FeedServer;
let base = '';
let requests: string[] = [];
const cli = runCli;

function sha512(file: string): string {
  return createHash('sha512').update(readFileSync(file)).digest('base64');
}

/** Copy the release's feed files (channel file, deb) into `dir`, as an operator uploads them. */
function publish(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(build.releaseDir)) {
    if (name === 'latest-linux.yml' || name.endsWith('.deb')) copyFileSync(join(build.releaseDir, name), join(dir, name));
  }
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'ak-updates-'));
  build = await buildDeb({ workDir: work, version: VERSION });
  // The fleet's key, made and used with the CLI the docs name.
  const keyFile = join(work, 'fleet-update.key');
  const keygen = cli('update-keygen', '--key', keyFile);
  assert.equal(keygen.status, 0, keygen.stderr);
  const publicKey = /^(MCowBQYDK2VwAyEA\S+)$/m.exec(keygen.stdout)?.[1];
  assert.ok(publicKey, keygen.stdout);
  fleetKey = { privateKeyPem: readFileSync(keyFile, 'utf8'), publicKey };
  feedDir = join(work, 'feed');
  publish(feedDir);
  publish(join(feedDir, VERSION));
  const signed = cli('update-sign', '--key', keyFile, feedDir);
  assert.equal(signed.status, 0, signed.stderr);
  assert.match(signed.stdout, /signed latest-linux\.yml/);
  assert.match(signed.stdout, new RegExp(`signed ${VERSION}/latest-linux\\.yml`));

  feed = await serveFeed(feedDir);
  base = feed.base;
  requests = feed.requests;
});

after(async () => {
  await feed?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packaged kiosk (electron-builder --linux deb, the build\'s own output)', () => {
  it('writes app-update.yml for the generic feed and package-type "deb" into resources/', () => {
    const config = yaml.load(readFileSync(join(build.resourcesDir, 'app-update.yml'), 'utf8')) as Record<string, unknown>;
    assert.equal(config.provider, 'generic');
    assert.equal(config.channel, 'latest');
    assert.equal(config.updaterCacheDirName, 'avatar-kiosk-updater');
    assert.equal(readFileSync(join(build.resourcesDir, 'package-type'), 'utf8'), 'deb');
  });

  it('writes the feed\'s channel file with the deb\'s sha512 and size', () => {
    const info = yaml.load(readFileSync(join(build.releaseDir, 'latest-linux.yml'), 'utf8')) as { version: string; path: string; sha512: string; files: Array<{ url: string; sha512: string; size: number }> };
    assert.equal(info.version, VERSION);
    assert.equal(info.path, `Avatar Kiosk-${VERSION}-linux-amd64.deb`);
    assert.equal(info.sha512, sha512(build.debFile));
    assert.deepEqual(info.files, [{ url: info.path, sha512: sha512(build.debFile), size: statSync(build.debFile).size }]);
  });

  it('ships the built app, the demo avatar and the runtime dependencies in the asar, and nothing of the checkout', () => {
    const files = new Set(asar.listPackage(join(build.resourcesDir, 'app.asar'), { isPack: false }).map((f) => f.replaceAll('\\', '/')));
    for (const f of ['/package.json', '/out/main/index.js', '/out/renderer/index.html', '/resources/demo-avatar.png', '/resources/demo-avatar.json', '/resources/demo-persona.txt', '/node_modules/electron-updater/package.json', '/node_modules/zod/package.json']) {
      assert.ok(files.has(f), `${f} in the asar`);
    }
    assert.ok([...files].some((f) => /^\/out\/preload\/[^/]+\.cjs$/.test(f)), 'the preload');
    const leaks = [...files].filter((f) => (f.startsWith('/out/') && f.endsWith('.map')) || /^\/resources\/[^/]+\.ts$/.test(f) || /^\/(electron|test|renderer\/src|docs)\//.test(f) || /^\/node_modules\/(electron|electron-builder|svelte|vite|playwright|typescript)\//.test(f));
    assert.deepEqual(leaks, [], 'no sources, source maps or build tools');
    // The demo avatar is the repository's file, byte for byte.
    assert.ok(asar.extractFile(join(build.resourcesDir, 'app.asar'), 'resources/demo-avatar.png').equals(readFileSync(join(ROOT, 'resources/demo-avatar.png'))));
    const pkg = JSON.parse(asar.extractFile(join(build.resourcesDir, 'app.asar'), 'package.json').toString()) as { version: string; main: string };
    assert.equal(pkg.version, VERSION);
    assert.equal(pkg.main, 'out/main/index.js');
  });

  it('flips the Electron fuses electron-builder.yml asks for in the packaged executable', () => {
    const exe = readFileSync(join(build.unpackedDir, 'avatar-kiosk'));
    const at = exe.indexOf(FUSE_SENTINEL) + FUSE_SENTINEL.length;
    // RunAsNode, CookieEncryption, NodeOptions, NodeCliInspect, AsarIntegrity, OnlyLoadAppFromAsar, V8Snapshot, FileProtocol
    // CookieEncryption is off on purpose (electron-builder.yml says why).
    assert.equal(exe.subarray(at + 2, at + 10).toString(), '00001100');
  });

  it('puts app-update.yml and package-type inside the deb, where the installed app reads them', () => {
    const list = execFileSync('dpkg-deb', ['-c', build.debFile], { encoding: 'utf8' });
    for (const f of ['./opt/Avatar Kiosk/resources/app-update.yml', './opt/Avatar Kiosk/resources/package-type', './opt/Avatar Kiosk/resources/app.asar', './usr/share/applications/com.avatarkiosk.app.desktop']) {
      assert.ok(list.includes(f), `${f} in the deb`);
    }
    assert.equal(execFileSync('dpkg-deb', ['-f', build.debFile, 'Package', 'Version', 'Recommends'], { encoding: 'utf8' }).trim(), `Package: avatar-kiosk\nVersion: ${VERSION}\nRecommends: gnome-keyring`);
  });

  it('is updated by the OS package manager: with its package-type the in-app updater stays off and reads nothing', async () => {
    const model = installModel({ platform: 'linux', isPackaged: true, packageType: readFileSync(join(build.resourcesDir, 'package-type'), 'utf8'), appImage: false });
    assert.equal(model.kind, 'os-package-manager');
    const before = requests.length;
    const { updater } = realUpdater();
    const updates = start({ updater, model });
    await updates.check();
    assert.equal(updates.phase, 'off');
    assert.match(updates.status.off ?? '', /deb package: updated by the system's package manager/);
    assert.equal(requests.length, before, 'no feed request');
    updates.dispose();
  });
});

const IN_APP: InstallModel = { inApp: true, kind: 'appimage' };

/** The real electron-updater class for this build, with the packaged app-update.yml. */
function realUpdater(version = RUNNING): RecordedUpdater {
  return realDebUpdater(build.resourcesDir, version, work);
}

function start(over: Partial<SafeUpdatesOptions> & { updater: UpdaterLike }): SafeUpdates {
  return startSafeUpdates({
    settings: updateSchema.parse({ url: `${base}/`, publicKeys: [fleetKey.publicKey] }),
    currentVersion: RUNNING,
    kioskId: 'lobby-1',
    dataDir: mkdtempSync(join(work, 'data-')),
    clock: new FakeClock(NOW),
    model: IN_APP,
    inCall: () => true,
    opening: () => null,
    lastActivityMs: () => 0,
    ...(process.env.DEBUG_UPDATER ? { logger: { debug: console.log, info: console.log, warn: console.log, error: console.log } } : {}),
    ...over,
  });
}

/** A kiosk id whose staging bucket is below (or above) `pct`. */
function kioskIn(pct: number, inside: boolean): string {
  for (let i = 0; ; i++) if (stagingBucket(`k-${i}`) < pct === inside) return `k-${i}`;
}

const debRequests = () => requests.filter((r) => r.endsWith('.deb')).length;

describe('safe updates from the signed feed, with the real electron-updater', () => {
  it('downloads the newer build and checks it; installs only after the call, once closed, holding calls first', async () => {
    const { updater, installs } = realUpdater();
    const clock = new FakeClock(NOW);
    let inCall = true;
    let open = true;
    const installsWhenHeld: number[] = [];
    const updates = start({
      updater,
      clock,
      inCall: () => inCall,
      opening: () => ({ open, nextChangeAtMs: null, nextOpenAtMs: null }),
      lastActivityMs: () => clock.now(),
      holdCalls: () => void installsWhenHeld.push(installs.length),
    });
    try {
      await until(() => updates.ready !== null || updates.phase === 'error', { realTimeoutMs: 30_000, message: 'downloaded' });
      assert.equal(updates.phase, 'ready', updates.status.lastError ?? '');
      assert.equal(updates.ready, VERSION);
      assert.ok(requests.includes(`/Avatar Kiosk-${VERSION}-linux-amd64.deb`), requests.join(' '));
      assert.ok(requests.includes('/latest-linux.yml.sig'));
      await clock.advance(120_000);
      assert.deepEqual(installs, [], 'not during a call');
      inCall = false;
      updates.poke();
      assert.deepEqual(installs, [], 'open and in use: waits');
      open = false;
      await clock.advance(60_000);
      assert.deepEqual(installs, [[true, true]], 'closed: silent install, app started again');
      assert.deepEqual(installsWhenHeld, [0], 'calls are held once, before the quit begins');
      assert.equal(updates.phase, 'installing');
    } finally {
      updates.dispose();
    }
  });

  for (const [name, tamper] of [
    ['a channel file changed after signing (another installer\'s sha512)', (yml: string) => yml.replaceAll(/sha512: \S+/g, `sha512: ${createHash('sha512').update('evil').digest('base64')}`)],
    ['a channel file signed with another key', null],
    ['a channel file without a signature', undefined],
  ] as const) {
    it(`refuses ${name}: nothing is downloaded, the status says why`, async () => {
      const dir = join(feedDir, `bad-${Math.random().toString(36).slice(2)}`);
      publish(dir);
      const yml = readFileSync(join(dir, 'latest-linux.yml'), 'utf8');
      if (tamper === null) {
        const otherKey = join(dir, '..', `${dir.split(sep).pop()}.key`);
        assert.equal(cli('update-keygen', '--key', otherKey).status, 0);
        assert.equal(cli('update-sign', '--key', otherKey, dir).status, 0);
      } else if (tamper !== undefined) {
        assert.equal(cli('update-sign', '--key', join(work, 'fleet-update.key'), dir).status, 0);
        writeFileSync(join(dir, 'latest-linux.yml'), tamper(yml));
      }
      const before = debRequests();
      const { updater, installs } = realUpdater();
      const updates = start({ updater, settings: updateSchema.parse({ url: `${base}/${dir.split(sep).pop()}`, publicKeys: [fleetKey.publicKey] }), inCall: () => false });
      await updates.check();
      assert.equal(updates.phase, 'error');
      assert.match(updates.status.lastError ?? '', tamper === undefined ? /Update feed refused: the feed has no signature for latest-linux\.yml/ : /Update feed refused: latest-linux\.yml is not signed by this fleet's key/);
      assert.equal(updates.ready, null);
      assert.equal(debRequests(), before, 'no installer fetched');
      assert.deepEqual(installs, []);
      updates.dispose();
    });
  }

  it('stays off without a signing key in the settings, and reads nothing', async () => {
    const before = requests.length;
    const { updater } = realUpdater();
    const updates = start({ updater, settings: updateSchema.parse({ url: `${base}/` }) });
    await updates.check();
    assert.equal(updates.phase, 'off');
    assert.match(updates.status.off ?? '', /no signing key/);
    assert.equal(requests.length, before);
    updates.dispose();
  });

  it('follows the staged rollout written into the signed channel file: a kiosk outside the stage does not download', async () => {
    const dir = join(feedDir, 'staged');
    publish(dir);
    const yml = `${readFileSync(join(dir, 'latest-linux.yml'), 'utf8')}stagingPercentage: 30\n`;
    writeFileSync(join(dir, 'latest-linux.yml'), yml);
    assert.equal(cli('update-sign', '--key', join(work, 'fleet-update.key'), dir).status, 0);
    for (const inside of [false, true]) {
      const { updater } = realUpdater();
      const before = debRequests();
      const updates = start({ updater, settings: updateSchema.parse({ url: `${base}/staged`, publicKeys: [fleetKey.publicKey] }), kioskId: kioskIn(30, inside) });
      await updates.check();
      await realDelay(50);
      assert.equal(updates.ready, inside ? VERSION : null, `inside=${inside} ${updates.status.lastError}`);
      assert.equal(debRequests() - before, inside ? 1 : 0);
      updates.dispose();
    }
  });

  it('rolls back to a pinned version from its own signed folder, even when older than the running one', async () => {
    const { updater } = realUpdater('1.5.0');
    const updates = start({ updater, currentVersion: '1.5.0', settings: updateSchema.parse({ url: `${base}/`, pinVersion: VERSION, publicKeys: [fleetKey.publicKey] }) });
    await updates.check();
    assert.equal(updates.ready, VERSION, `phase ${updates.phase} ${updates.status.lastError}`);
    assert.ok(requests.includes(`/${VERSION}/latest-linux.yml.sig`));
    assert.ok(requests.includes(`/${VERSION}/Avatar Kiosk-${VERSION}-linux-amd64.deb`));
    assert.equal(updates.status.pinned, VERSION);
    updates.dispose();
  });

  it('a failed install leaves "installing": the error is logged and reported, calls are taken again, the next check starts over', async () => {
    const { updater, installs, emitError } = realUpdater();
    const errors: string[] = [];
    const statuses: string[] = [];
    let held = 0;
    const clock = new FakeClock(NOW);
    const updates = start({
      updater,
      clock,
      inCall: () => false,
      lastActivityMs: () => NOW - 3_600_000,
      logger: { debug() {}, info() {}, warn() {}, error: (m, d) => void errors.push(`${m} ${JSON.stringify(d)}`) },
      holdCalls: () => held++,
      releaseCalls: () => held--,
      onChange: (s) => statuses.push(s.phase),
    });
    try {
      await until(() => installs.length > 0 || updates.phase === 'error', { realTimeoutMs: 30_000, message: 'install started' });
      assert.equal(updates.phase, 'installing');
      assert.equal(held, 1);
      // The installer could not start (electron-updater reports it as an `error` event).
      emitError(new Error('pkexec: no authentication agent found'));
      assert.equal(updates.phase, 'error');
      assert.equal(held, 0, 'calls are taken again');
      assert.match(updates.status.lastError ?? '', /install of 1\.1\.0 failed: pkexec: no authentication agent found/);
      assert.equal(errors.length, 1);
      assert.match(errors[0]!, /the install failed/);
      assert.deepEqual(statuses.slice(-2), ['installing', 'error']);
      assert.equal(updates.ready, null, 'downloaded again from the next check');

      // The next check (the same cached download) tries again; this time the app simply never quits.
      await updates.check();
      await until(() => installs.length === 2, { realTimeoutMs: 30_000, message: 'second install' });
      assert.equal(updates.phase, 'installing');
      await clock.advance(INSTALL_TIMEOUT_MS);
      assert.equal(updates.phase, 'error');
      assert.match(updates.status.lastError ?? '', /still running 300 s after the install started/);
      assert.equal(held, 0);
    } finally {
      updates.dispose();
    }
  });
});

describe('the "back in a moment" window: from the decision to install until the quit', () => {
  it('no call starts: the kiosk refuses it, the service sees no session, the screen says back in a moment; a failed install takes calls again', async () => {
    const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const channels = createChannelRegistry();
    const kiosk = await createKiosk({ channels,
      awaitRendererRtc: false,
      config: resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } }, {}),
      apiKey: null,
      apiKeySource: 'none',
      emulatorKnobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 20 },
      persistApiKey: async () => {},
    });
    const events: KioskEvent[] = [];
    kiosk.events.onEvent((e) => events.push(e));
    const { updater, installs, emitError } = realUpdater();
    const clock = new FakeClock(NOW);
    // Wired as main wires it (features/safe-updates.ts, on main/host.ts).
    const updates = start({
      updater,
      clock,
      inCall: () => kiosk.calls.running,
      lastActivityMs: () => NOW - 3_600_000,
      holdCalls: () => kiosk.availability.setHold('updating'),
      releaseCalls: () => kiosk.availability.setHold(null),
    });
    const startCall = () => channels.dispatch(CHANNELS.sessionStart, {}) as Promise<Result<{ liveId: string | null }>>;
    try {
      // A visitor is in a call when the download completes: the install waits for its end.
      const live = waitForEvent(kiosk, phaseIs('live'), 8_000);
      assert.equal((await startCall()).ok, true);
      await live;
      await until(() => updates.ready !== null || updates.phase === 'error', { realTimeoutMs: 30_000, message: 'downloaded' });
      assert.deepEqual(installs, [], 'not during the call');
      const ended = waitForEvent(kiosk, (e) => e.type === 'state' && (e.state.phase === 'ended' || e.state.phase === 'idle'), 8_000);
      await channels.dispatch(CHANNELS.sessionHangup, undefined);
      await ended;
      updates.poke();
      assert.deepEqual(installs, [[true, true]], 'installing once the call is over');
      const sessionsBefore = kiosk.connection.emulator!.listSessions().length;

      // The app has not quit yet (Squirrel.Mac is still fetching): visitors tap, and nothing starts.
      for (let i = 0; i < 3; i++) {
        const answer = await startCall();
        assert.equal(answer.ok, false);
        assert.match((answer as { error: { message: string } }).error.message, /updating; back in a moment/);
        await clock.advance(10_000);
      }
      assert.equal(kiosk.connection.emulator!.listSessions().length, sessionsBefore, 'no session was created on the service');
      assert.equal(kiosk.calls.running, false);
      assert.deepEqual(events.filter((e) => e.type === 'hold'), [{ type: 'hold', hold: 'updating' }], 'the screen shows "back in a moment"');
      const cfg = (await channels.dispatch(CHANNELS.configGet, undefined)) as Result<{ hold?: string | null }>;
      assert.equal(cfg.ok && cfg.value.hold, 'updating', 'a page loaded now shows it too');

      // The install fails: calls are taken again.
      emitError(new Error('Squirrel: code signature did not match'));
      assert.deepEqual(events.filter((e) => e.type === 'hold').at(-1), { type: 'hold', hold: null });
      const again = waitForEvent(kiosk, phaseIs('live'), 8_000);
      assert.equal((await startCall()).ok, true);
      await again;
    } finally {
      updates.dispose();
      await kiosk.shutdown();
    }
  });
});

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP the fleet's update commands over the broker: ${missing}`);
describe('updates over the fleet link (real Mosquitto)', () => {
  it('the status carries the update state; the operator pins a version (kept in config.json) and asks for an install when idle', { skip: missing ?? false }, async () => {
    const broker = await startBroker({ operator: 'op-pass', 'kiosk-a': 'a-pass' });
    const dataDir = mkdtempSync(join(work, 'fleet-'));
    const configFile = jsonFilePersistence(join(dataDir, 'config.json'));
    await configFile.write({ callMode: 'audio', update: { url: `${base}/`, publicKeys: [fleetKey.publicKey] } });
    const mqtt = { url: broker.url, username: 'kiosk-a', password: 'a-pass', kioskId: 'kiosk-a', topicPrefix: PREFIX };
    const kiosk = await createKiosk({
      awaitRendererRtc: false,
      config: resolveConfig({ ...configFile.read(), mqtt }, {}, { appRoot: ROOT }),
      apiKey: null,
      apiKeySource: 'none',
      persistApiKey: async () => {},
    });
    const clock = new FakeClock(Date.now());
    const op = await operateKiosk(broker, 'kiosk-a', clock);
    const { updater, installs } = realUpdater();
    let host: ReturnType<typeof startFleetHost> | null = null;
    // Wired as main wires it (features/fleet-link.ts and features/safe-updates.ts).
    const updates = start({
      updater,
      clock,
      settings: kiosk.config.update,
      inCall: () => kiosk.calls.running,
      lastActivityMs: () => clock.now(),
      holdCalls: () => kiosk.availability.setHold('updating'),
      releaseCalls: () => kiosk.availability.setHold(null),
      onChange: () => host?.link?.statusChanged(),
    });
    host = startFleetHost({ kiosk, ledger: null, dataDir, version: RUNNING, clock, configFile, env: {}, policy: {}, appRoot: ROOT, actions: { reload: () => {}, restart: () => {}, screenshot: async () => ({ png: Buffer.alloc(0), width: 0, height: 0 }) }, reconnectMs: 200, updates: () => updates });
    try {
      // Downloaded, waiting for a quiet moment (in use a minute ago): the status says so.
      await op.statusUntil((s) => s.update?.ready === VERSION, 'ready in the status');
      const ready = op.statuses().findLast((s) => s.update?.ready === VERSION)!.update;
      assert.deepEqual({ phase: ready.phase, model: ready.model, off: ready.off, pinned: ready.pinned, lastError: ready.lastError }, { phase: 'ready', model: 'appimage', off: null, pinned: null, lastError: null });

      // Pin: kept in config.json (so the pinned version stays pinned after it restarts), and in the status.
      const pinned = await op.command({ id: 'p1', cmd: 'update-pin', version: VERSION });
      assert.equal(pinned.ok, true, JSON.stringify(pinned));
      assert.equal(pinned.result.update.pinned, VERSION);
      assert.deepEqual((configFile.read().update as Record<string, unknown>).pinVersion, VERSION);
      assert.deepEqual((configFile.read().update as Record<string, unknown>).publicKeys, [fleetKey.publicKey], 'the rest of the settings stay');
      await until(() => updates.ready === VERSION, { realTimeoutMs: 30_000, message: 'downloaded again from the pinned folder' });
      assert.ok(requests.includes(`/${VERSION}/latest-linux.yml.sig`));
      assert.deepEqual(installs, [], 'still in use: no install yet');

      // Install when idle: at once, since no call runs; calls are held first.
      const install = await op.command({ id: 'i1', cmd: 'update-install' });
      assert.equal(install.ok, true, JSON.stringify(install));
      assert.deepEqual(installs, [[true, true]]);
      assert.equal(kiosk.availability.hold, 'updating');
      await op.statusUntil((s) => s.update?.phase === 'installing', 'installing in the status');

      // A malformed pin is refused with a reason, nothing changed.
      const bad = await op.command({ id: 'p2', cmd: 'update-pin', version: 'latest' });
      assert.equal(bad.ok, false);
      assert.match(bad.error.message, /must be a version such as "1\.4\.2"/);
    } finally {
      updates.dispose();
      await host.close();
      await op.end();
      await kiosk.shutdown();
      await broker.dispose();
    }
  });
});
