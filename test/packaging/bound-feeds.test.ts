/**
 * Update feeds bound to what they are for, tested at the seam where they were broken: the build's own
 * output → the updater. The project's real packaging makes three releases (test/helpers/packaging: 1.1.0 on
 * the stable channel, 0.0.1 kept for rollbacks, 2.0.0-beta.1 published on the beta channel), they are
 * laid out as docs/packaging.md says and signed with `cli update-sign`, a server on 127.0.0.1 serves the
 * folder (or, for an attack, what whoever holds the web server serves instead), and the REAL
 * electron-updater DebUpdater reads it through our SignedFeedProvider, driven by safe-updates as the kiosk
 * drives it. The attacks:
 *  - a file signed for beta-linux.yml served as latest-linux.yml to a stable kiosk;
 *  - the feed as it was signed before the operator set `stagingPercentage: 0`, served again (and after a
 *    restart of the kiosk);
 *  - a feed past its expiry;
 *  - `update-pin 0.0.1`: from the broker (real Mosquitto), from the console's link, from the policy;
 * and the rollback the signer allows on purpose (`update-sign --min-version`) still goes through.
 * "Installed" here is "downloaded and waiting" (`ready`): the install itself needs the Electron binary.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../helpers/fake-clock.ts';
import { startConsoleLink } from '../../electron/fleet/console/link.ts';
import { FleetState } from '../../electron/fleet/console/state.ts';
import { startFleetHost } from '../../electron/fleet/fleet-host.ts';
import { startSafeUpdates, type SafeUpdates, type SafeUpdatesOptions } from '../../electron/fleet/safe-updates.ts';
import { updateSchema } from '../../electron/kiosk/fleet-config.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createKiosk } from '../../electron/kiosk/compose.ts';
import { jsonFilePersistence } from '../../electron/operations/settings.ts';
import { CONSOLE_LOGIN, mosquittoMissing, PREFIX, startBroker } from '../helpers/mosquitto.ts';
import { buildDeb, repackageDeb, ROOT, type DebBuild } from '../helpers/packaging/build.ts';
import { runCli, serveFeed, type FeedServer } from '../helpers/packaging/feed-server.ts';
import { realDebUpdater } from '../helpers/packaging/real-updater.ts';
import { recordingLogger } from '../helpers/recording-logger.ts';
import { operateKiosk } from '../helpers/fleet-operator.ts';
import { realDelay, until } from '../helpers/until.ts';

console.log('# SKIP (part): the install step (quitAndInstall runs the installer and quits Electron) needs the real Electron binary; a downloaded update waiting to install counts as installed here.');

const STABLE = '1.1.0';
const OLD = '0.0.1';
const BETA = '2.0.0-beta.1';
const DAY_MS = 24 * 60 * 60_000;

let work = '';
let stable: DebBuild;
let old: DebBuild;
let beta: DebBuild;
let keyFile = '';
let publicKey = '';
let feed: FeedServer;
let base = '';
let requests: string[] = [];
/** What the web server's holder serves instead: request path → file. */
let swapped = new Map<string, string>();
const cli = runCli;

/** `cli update-sign` on a feed folder, as the release machine runs it. */
function sign(dir: string, ...flags: string[]): void {
  const r = cli('update-sign', '--key', keyFile, ...flags, dir);
  assert.equal(r.status, 0, r.stderr);
}

/** A feed folder laid out as docs/packaging.md says: the stable release at the top and in `1.1.0/`, the old
 *  release kept in `0.0.1/`, the beta's channel file and deb beside the stable ones. Served at `/<name>/`. */
function publishFeed(name: string): string {
  const dir = join(work, 'feeds', name);
  const copy = (build: DebBuild, channelFile: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const f of readdirSync(build.releaseDir)) if (f === channelFile || f.endsWith('.deb')) copyFileSync(join(build.releaseDir, f), join(to, f));
  };
  copy(stable, 'latest-linux.yml', dir);
  copy(stable, 'latest-linux.yml', join(dir, STABLE));
  copy(old, 'latest-linux.yml', join(dir, OLD));
  copy(beta, 'beta-linux.yml', dir);
  return dir;
}

/** The statement's dates in a signature file `update-sign` wrote (read only to word the expected refusals). */
function datesOf(sigFile: string): { signedAt: string; expiresAt: string } {
  const file = JSON.parse(readFileSync(sigFile, 'utf8')) as { statement: string };
  return JSON.parse(Buffer.from(file.statement, 'base64').toString('utf8')) as { signedAt: string; expiresAt: string };
}

/** The installers fetched from a feed folder so far. */
const fetched = (feed: string) => requests.filter((r) => r.startsWith(`/${feed}/`) && r.endsWith('.deb'));

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'ak-bound-feeds-'));
  stable = await buildDeb({ workDir: join(work, 'stable'), version: STABLE });
  // One after the other: on a busy machine two at once starve each other past electron-builder's time limit.
  old = await repackageDeb({ workDir: join(work, 'old'), from: stable, version: OLD });
  beta = await repackageDeb({ workDir: join(work, 'beta'), from: stable, version: BETA, channel: 'beta' });
  assert.ok(existsSync(join(beta.releaseDir, 'beta-linux.yml')), 'the beta build writes its own channel file');
  keyFile = join(work, 'fleet-update.key');
  const keygen = cli('update-keygen', '--key', keyFile);
  assert.equal(keygen.status, 0, keygen.stderr);
  publicKey = /^(MCowBQYDK2VwAyEA\S+)$/m.exec(keygen.stdout)![1]!;

  feed = await serveFeed(join(work, 'feeds'));
  ({ base, requests, swapped } = feed);
});

after(async () => {
  await feed?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A kiosk's updates on the real DebUpdater of the stable build, reading `/<feed>/`; its own data folder
 *  unless one is given (a restart keeps it). Never installs: a call is always under way. */
function kiosk(feed: string, over: Partial<SafeUpdatesOptions> & { running?: string } = {}): { updates: SafeUpdates; logger: ReturnType<typeof recordingLogger> } {
  const running = over.running ?? '1.0.0';
  const logger = recordingLogger();
  const updates = startSafeUpdates({
    updater: realDebUpdater(stable.resourcesDir, running, work).updater,
    settings: updateSchema.parse({ url: `${base}/${feed}`, publicKeys: [publicKey] }),
    currentVersion: running,
    kioskId: 'lobby-1',
    dataDir: mkdtempSync(join(work, 'kiosk-data-')),
    clock: new FakeClock(Date.now()),
    model: { inApp: true, kind: 'appimage' },
    logger,
    inCall: () => true,
    opening: () => null,
    lastActivityMs: () => 0,
    ...over,
  });
  return { updates, logger };
}

const refusedLine = (error: string) => ['warn', 'Updates: the feed was refused; nothing from it is installed', { error }];
const lines = (logger: ReturnType<typeof recordingLogger>) => logger.lines.map((l) => [l.level, l.message, l.data]);

describe('a feed bound to its channel, platform, date and floor (the real DebUpdater on the build\'s own feed)', () => {
  it('refuses a file signed for beta-linux.yml served as latest-linux.yml: the stable kiosk downloads nothing; the status and the log say why', async () => {
    const dir = publishFeed('cross');
    sign(dir);
    // The honest feed: the stable kiosk takes 1.1.0, so what is refused below is the swap, not the feed.
    const honest = kiosk('cross');
    await honest.updates.check();
    assert.equal(honest.updates.ready, STABLE, `${honest.updates.status.lastError}`);
    honest.updates.dispose();

    swapped.set('/cross/latest-linux.yml', join(dir, 'beta-linux.yml'));
    swapped.set('/cross/latest-linux.yml.sig', join(dir, 'beta-linux.yml.sig'));
    const { updates, logger } = kiosk('cross');
    await updates.check();
    assert.equal(updates.ready, null, 'the beta was not downloaded');
    assert.deepEqual(fetched('cross'), [`/cross/Avatar Kiosk-${STABLE}-linux-amd64.deb`], 'only the honest download');
    const error = 'Update feed refused: latest-linux.yml was signed for the "beta" channel; this kiosk follows "latest"; nothing from it is installed.';
    assert.deepEqual([updates.phase, updates.status.lastError], ['error', error]);
    assert.deepEqual(lines(logger).at(-1), refusedLine(error));
    updates.dispose();
  });

  it('refuses the feed as signed before the operator set stagingPercentage: 0, served again, also after the kiosk restarts', async () => {
    const dir = publishFeed('replay');
    sign(dir);
    const captured = mkdtempSync(join(work, 'captured-'));
    for (const f of ['latest-linux.yml', 'latest-linux.yml.sig']) copyFileSync(join(dir, f), join(captured, f));
    // The release goes wrong: the operator stops it and signs again.
    writeFileSync(join(dir, 'latest-linux.yml'), `${readFileSync(join(dir, 'latest-linux.yml'), 'utf8')}stagingPercentage: 0\n`);
    sign(dir);
    const dataDir = mkdtempSync(join(work, 'kiosk-data-'));
    const first = kiosk('replay', { dataDir });
    await first.updates.check();
    assert.deepEqual([first.updates.phase, first.updates.ready], ['idle', null], `the stopped rollout is followed: ${first.updates.status.lastError}`);

    // Whoever holds the web server serves the earlier signed feed again.
    swapped.set('/replay/latest-linux.yml', join(captured, 'latest-linux.yml'));
    swapped.set('/replay/latest-linux.yml.sig', join(captured, 'latest-linux.yml.sig'));
    await first.updates.check();
    assert.equal(first.updates.ready, null, 'the stopped release was not downloaded');
    first.updates.dispose();
    const restarted = kiosk('replay', { dataDir });
    await restarted.updates.check();
    assert.equal(restarted.updates.ready, null, 'not after a restart either');
    assert.deepEqual(fetched('replay'), [], 'no installer fetched');
    const t1 = datesOf(join(captured, 'latest-linux.yml.sig')).signedAt;
    const t2 = datesOf(join(dir, 'latest-linux.yml.sig')).signedAt;
    const error = `Update feed refused: latest-linux.yml was signed at ${t1}, before the one this kiosk already read (signed ${t2}): an older feed served again is refused; nothing from it is installed.`;
    for (const k of [first, restarted]) {
      assert.deepEqual([k.updates.phase, k.updates.status.lastError], ['error', error]);
      assert.deepEqual(lines(k.logger).at(-1), refusedLine(error));
    }
    restarted.updates.dispose();
  });

  it('refuses a feed past its expiry (30 days unless the signer says otherwise), and takes it the day before', async () => {
    const dir = publishFeed('expiry');
    const signing = Date.now();
    sign(dir);
    // 30 days after the signing, give or take the minute the CLI may take.
    const late = signing + 30 * DAY_MS + 60_000;
    const { updates, logger } = kiosk('expiry', { clock: new FakeClock(late) });
    await updates.check();
    assert.equal(updates.ready, null, 'the expired feed was not followed');
    assert.deepEqual(fetched('expiry'), []);
    const { signedAt, expiresAt } = datesOf(join(dir, 'latest-linux.yml.sig'));
    const error = `Update feed refused: latest-linux.yml expired at ${expiresAt} (signed ${signedAt}; this kiosk's clock says ${new Date(late).toISOString()}): sign the feed again with update-sign; nothing from it is installed.`;
    assert.deepEqual([updates.phase, updates.status.lastError], ['error', error]);
    assert.deepEqual(lines(logger).at(-1), refusedLine(error));
    updates.dispose();

    const inDate = kiosk('expiry', { clock: new FakeClock(signing + 29 * DAY_MS) });
    await inDate.updates.check();
    assert.equal(inDate.updates.ready, STABLE, `${inDate.updates.status.lastError}`);
    inDate.updates.dispose();
  });

  it('refuses a pin in the policy below the floor the signer set: from the signed feed on a fresh kiosk, and before reading anything on one that read its channel', async () => {
    const dir = publishFeed('policy-pin');
    sign(dir);
    // A kiosk that never read its channel reads the 0.0.1 folder, whose statement carries the floor.
    const fresh = kiosk('policy-pin', { running: STABLE, settings: updateSchema.parse({ url: `${base}/policy-pin`, publicKeys: [publicKey], pinVersion: OLD }) });
    await fresh.updates.check();
    assert.equal(fresh.updates.ready, null, '0.0.1 was not downloaded');
    assert.deepEqual(fetched('policy-pin'), []);
    const error = `Update feed refused: latest-linux.yml offers ${OLD}, below the lowest version its signer allows (${STABLE}); nothing from it is installed.`;
    assert.deepEqual([fresh.updates.phase, fresh.updates.status.lastError], ['error', error]);
    fresh.updates.dispose();

    // One that read its channel knows the floor: the pin is refused before anything is read.
    const dataDir = mkdtempSync(join(work, 'kiosk-data-'));
    const unpinned = kiosk('policy-pin', { running: STABLE, dataDir });
    await unpinned.updates.check();
    assert.deepEqual([unpinned.updates.phase, unpinned.updates.status.floor], ['idle', STABLE]);
    unpinned.updates.dispose();
    const asked = requests.length;
    const pinned = kiosk('policy-pin', { running: STABLE, dataDir, settings: updateSchema.parse({ url: `${base}/policy-pin`, publicKeys: [publicKey], pinVersion: OLD }) });
    await pinned.updates.check();
    assert.equal(requests.length, asked, 'nothing read');
    const why = `the pin is refused: ${OLD} is below the lowest version the fleet's signer allows (${STABLE}). To roll back on purpose, sign the feed again with \`update-sign --min-version ${OLD}\`, let the kiosks read it (update-check), then pin again`;
    assert.deepEqual([pinned.updates.phase, pinned.updates.status.off], ['off', why]);
    assert.deepEqual(lines(pinned.logger).at(-1), ['warn', 'Updates: off', { why }]);
    pinned.updates.dispose();
  });
});

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP update-pin over the broker: ${missing}`);
describe('update-pin below the floor over the fleet link (real Mosquitto, the console\'s own link)', () => {
  it('the kiosk and the console refuse update-pin 0.0.1 with a sentence, nothing kept or fetched; after the signer lowers the floor the rollback goes through', { skip: missing ?? false }, async () => {
    const dir = publishFeed('fleet-pin');
    sign(dir);
    const broker = await startBroker({ operator: 'op-pass', [CONSOLE_LOGIN]: 'console-pass', 'kiosk-a': 'a-pass' });
    const dataDir = mkdtempSync(join(work, 'fleet-'));
    const configFile = jsonFilePersistence(join(dataDir, 'config.json'));
    await configFile.write({ callMode: 'audio', update: { url: `${base}/fleet-pin`, publicKeys: [publicKey] } });
    const mqtt = { url: broker.url, username: 'kiosk-a', password: 'a-pass', kioskId: 'kiosk-a', topicPrefix: PREFIX };
    const served = await createKiosk({ awaitRendererRtc: false, config: resolveConfig({ ...configFile.read(), mqtt }, {}, { appRoot: ROOT }), apiKey: null, apiKeySource: 'none', persistApiKey: async () => {} });
    const clock = new FakeClock(Date.now());
    const op = await operateKiosk(broker, 'kiosk-a', clock);
    let host: ReturnType<typeof startFleetHost> | null = null;
    // Wired as main wires it (features/fleet-link.ts and features/safe-updates.ts); the kiosk runs the stable release.
    const updates = startSafeUpdates({
      updater: realDebUpdater(stable.resourcesDir, STABLE, work).updater,
      settings: served.config.update,
      currentVersion: STABLE,
      kioskId: 'kiosk-a',
      dataDir,
      clock,
      model: { inApp: true, kind: 'appimage' },
      inCall: () => true,
      opening: () => null,
      lastActivityMs: () => clock.now(),
      onChange: () => host?.link?.statusChanged(),
    });
    host = startFleetHost({ kiosk: served, ledger: null, dataDir, version: STABLE, clock, configFile, env: {}, policy: {}, appRoot: ROOT, actions: { reload: () => {}, restart: () => {}, screenshot: async () => ({ png: Buffer.alloc(0), width: 0, height: 0 }) }, reconnectMs: 200, updates: () => updates });
    const state = new FleetState({ now: () => clock.now() });
    const link = startConsoleLink({ url: broker.url, topicPrefix: PREFIX, clientId: 'console-bound-feeds', username: CONSOLE_LOGIN, password: 'console-pass', state, now: () => clock.now() });
    try {
      // The kiosk has read its channel (1.1.0 runs: nothing to download).
      await op.statusUntil((s) => s.update?.lastCheckAt !== null && s.update?.lastCheckAt !== undefined, 'a check in the status');
      const below = `${OLD} is below the lowest version the fleet's signer allows (${STABLE}). To roll back on purpose, sign the feed again with \`update-sign --min-version ${OLD}\`, let the kiosks read it (update-check), then pin again`;

      // From the broker: refused by the kiosk, with the sentence; nothing kept, nothing fetched; the status says so.
      const pinned = await op.command({ id: 'p1', cmd: 'update-pin', version: OLD });
      assert.equal(pinned.ok, false, JSON.stringify(pinned));
      assert.deepEqual(pinned.error, { code: 'forbidden', message: `${below}.` });
      assert.equal((configFile.read().update as Record<string, unknown>).pinVersion, undefined, 'not kept in config.json');
      assert.deepEqual(requests.filter((r) => r.startsWith(`/fleet-pin/${OLD}/`)), [], 'the old release was not read');
      assert.equal(updates.ready, null);
      await op.statusUntil((s) => s.update?.lastError === `update-pin ${OLD} refused: ${below}`, 'the refusal in the status');

      // From the console: refused before it is sent, with the same sentence, naming the kiosk.
      await link.ready(10_000);
      await until(() => state.row('kiosk-a')?.online === true, { realTimeoutMs: 15_000, message: 'the console sees the kiosk' });
      const results = op.results().length;
      assert.deepEqual(await link.send({ kiosks: ['kiosk-a'] }, { cmd: 'update-pin', version: OLD }), { ok: false, error: { code: 'forbidden', message: `update-pin ${OLD} is refused for kiosk-a: ${below}.` } });
      await realDelay(200);
      assert.equal(op.results().length, results, 'nothing reached the kiosk');

      // On purpose: the signer lowers the floor, the kiosk reads it, and the pin goes through.
      sign(dir, '--min-version', OLD);
      assert.equal((await op.command({ id: 'c1', cmd: 'update-check' })).ok, true);
      assert.equal(updates.status.floor, OLD);
      const rollback = await op.command({ id: 'p2', cmd: 'update-pin', version: OLD });
      assert.equal(rollback.ok, true, JSON.stringify(rollback));
      assert.equal((configFile.read().update as Record<string, unknown>).pinVersion, OLD);
      await until(() => updates.ready === OLD || updates.phase === 'error', { realTimeoutMs: 30_000, message: 'the rollback downloaded' });
      assert.equal(updates.ready, OLD, `${updates.status.lastError}`);
    } finally {
      updates.dispose();
      await link.close();
      await host.close();
      await op.end();
      await served.shutdown();
      await broker.dispose();
    }
  });
});
