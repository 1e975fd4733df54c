/**
 * Safe updates driven through a scripted updater and a fake clock: what is set on electron-updater, why
 * updates are off (and at which log level), each check's outcome in the status and the log, when a
 * downloaded update is installed and how long it waits otherwise, a failed install, the pin, and that a
 * disposed instance leaves no timer behind. The real electron-updater on a packaged feed is
 * test/packaging/safe-updates.test.ts; these run in milliseconds.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { flushMicrotasks, StrictClock } from '../../helpers/fake-clock.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AvatarError } from '../../../electron/core/errors.ts';
import { pinRefusal } from '../../../electron/fleet/feed-binding.ts';
import { INSTALL_TIMEOUT_MS, startSafeUpdates, type SafeUpdatesOptions, type UpdaterLike, type UpdateStatus } from '../../../electron/fleet/safe-updates.ts';
import { SignedFeedProvider } from '../../../electron/fleet/signed-feed.ts';
import { FEED_MEMORY_FILE, type FeedMemory } from '../../../electron/fleet/feed-memory.ts';
import { stagingBucket, type OfferedUpdate } from '../../../electron/fleet/update-policy.ts';
import type { UpdateSettings } from '../../../electron/kiosk/fleet-config.ts';
import type { OpeningState } from '../../../electron/fleet/opening-hours.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { deferred } from '../../helpers/session-world.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const KEY = `MCowBQYDK2VwAyEA${'a'.repeat(43)}=`;
const SETTINGS: UpdateSettings = { url: 'https://u.example/kiosk/', channel: 'latest', publicKeys: [KEY], idleMinutes: 30, checkEveryMinutes: 60 };
const T0 = Date.parse('2026-11-23T10:00:00Z');
const tempDir = tempDirsRemovedAfterEach('ak-safe-updates-');
const MIN = 60_000;
const HOUR = 60 * MIN;

type CheckResult = Awaited<ReturnType<UpdaterLike['checkForUpdates']>>;
const offer = (version: string): CheckResult => ({ isUpdateAvailable: true, updateInfo: { version } });
const nothing: CheckResult = { isUpdateAvailable: false, updateInfo: { version: '1.0.0' } };

/** An updater that records what is done to it; each check and download answers what the test scripts. */
function scriptedUpdater() {
  const calls: unknown[][] = [];
  const listeners = new Map<string, (error: Error) => void>();
  const updater = {
    calls,
    // Set to the opposite of what the kiosk wants, so leaving them alone shows.
    autoDownload: true,
    autoInstallOnAppQuit: true,
    allowDowngrade: true,
    isUserWithinRollout: (_info: OfferedUpdate): boolean | Promise<boolean> => true,
    checkAnswer: (): Promise<CheckResult> => Promise.resolve(nothing),
    downloadAnswer: (): Promise<unknown> => Promise.resolve([]),
    installAnswer: (): void => {},
    setFeedURL(options: unknown) {
      calls.push(['setFeedURL', options]);
    },
    checkForUpdates() {
      calls.push(['checkForUpdates']);
      return updater.checkAnswer();
    },
    downloadUpdate() {
      calls.push(['downloadUpdate']);
      return updater.downloadAnswer();
    },
    quitAndInstall(...args: unknown[]) {
      calls.push(['quitAndInstall', ...args]);
      updater.installAnswer();
    },
    on(event: 'error', listener: (error: Error) => void) {
      calls.push(['on', event]);
      listeners.set(event, listener);
    },
    /** What electron-updater does with a failure outside a promise: an `error` event. */
    emitError: (error: Error) => listeners.get('error')?.(error),
    names: () => calls.map((c) => c[0]),
  };
  return updater;
}

/** A setFeedURL call with its memory and clock checked and left out, for deepEqual. */
function feedCall(call: unknown[] | undefined): unknown[] {
  const [name, options] = call as [string, Record<string, unknown>];
  const { memory, now, ...rest } = options;
  assert.equal(typeof (memory as FeedMemory).newest, 'function');
  assert.equal(typeof now, 'function');
  return [name, rest];
}

const clocks: StrictClock[] = [];
afterEach(() => {
  // Every clearTimeout was of a handle the clock gave out (never null, never someone else's).
  for (const c of clocks.splice(0)) assert.deepEqual(c.foreignClears, []);
});

/** A kiosk around the updates: whether a call runs, the opening hours, the last activity, and what was held. */
function rig(over: Partial<SafeUpdatesOptions> = {}) {
  const dataDir = tempDir();
  const clock = new StrictClock(T0);
  clocks.push(clock);
  const updater = scriptedUpdater();
  const logger = recordingLogger();
  const statuses: UpdateStatus[] = [];
  const order: string[] = [];
  const world = { inCall: false, opening: null as OpeningState | null, lastActivityMs: T0 - 2 * HOUR };
  const origInstall = updater.quitAndInstall.bind(updater);
  updater.quitAndInstall = (...args: unknown[]) => {
    order.push('quitAndInstall');
    origInstall(...args);
  };
  const start = () =>
    startSafeUpdates({
      updater,
      settings: SETTINGS,
      currentVersion: '1.0.0',
      kioskId: 'lobby-1',
      dataDir,
      clock,
      model: { inApp: true, kind: 'appimage' },
      logger,
      inCall: () => world.inCall,
      opening: () => world.opening,
      lastActivityMs: () => world.lastActivityMs,
      holdCalls: () => void order.push('hold'),
      releaseCalls: () => void order.push('release'),
      onChange: (s) => void statuses.push(s),
      ...over,
    });
  /** Started with 1.1.0 on offer, its first check (and what followed: the download, maybe the install) done. */
  const startOffered = async () => {
    updater.checkAnswer = () => Promise.resolve(offer('1.1.0'));
    const updates = start();
    await flushMicrotasks();
    return updates;
  };
  const lines = () => logger.lines.map((l) => [l.level, l.message, l.data]);
  return { clock, updater, logger, statuses, order, world, start, startOffered, lines, phases: () => statuses.map((s) => s.phase), dataDir };
}

const idleStatus: UpdateStatus = { phase: 'idle', model: 'appimage', off: null, ready: null, pinned: null, floor: null, installWhenIdle: false, lastCheckAt: null, lastError: null };

describe('safe updates: setting up the updater and the feed', () => {
  it('no download on its own, no install on quit, the signed feed with the keys; a first check at once, then every checkEveryMinutes', async () => {
    const r = rig();
    r.world.inCall = true;
    const updates = r.start();
    assert.deepEqual([r.updater.autoDownload, r.updater.autoInstallOnAppQuit, r.updater.allowDowngrade], [false, false, false]);
    assert.deepEqual(r.updater.names(), ['on', 'setFeedURL', 'checkForUpdates']);
    assert.deepEqual(feedCall(r.updater.calls[1]), ['setFeedURL', { provider: 'custom', updateProvider: SignedFeedProvider, url: 'https://u.example/kiosk', channel: 'latest', publicKeys: [KEY], pinned: null }]);
    assert.equal((r.updater.calls[1]![1] as { now: () => number }).now(), T0, "the feed's expiry is read on the kiosk's clock");
    assert.deepEqual(r.lines(), [['info', 'Updates: feed set', { url: 'https://u.example/kiosk', channel: 'latest', pinned: null, model: 'appimage' }]]);
    // The check is under way before start returns.
    assert.equal(updates.phase, 'checking');
    assert.deepEqual(r.statuses, [{ ...idleStatus, phase: 'checking' }]);
    await flushMicrotasks();
    assert.deepEqual(updates.status, { ...idleStatus, lastCheckAt: '2026-11-23T10:00:00.000Z' });
    assert.deepEqual(r.phases(), ['checking', 'idle']);
    assert.equal(updates.feed?.url, 'https://u.example/kiosk');
    assert.deepEqual(r.clock.pendingDelays(), [HOUR]);

    await r.clock.advance(HOUR - 1);
    assert.equal(r.updater.names().filter((n) => n === 'checkForUpdates').length, 1);
    await r.clock.advance(1);
    assert.equal(r.updater.names().filter((n) => n === 'checkForUpdates').length, 2);
    assert.equal(updates.status.lastCheckAt, '2026-11-23T11:00:00.000Z');
    assert.deepEqual(r.clock.pendingDelays(), [HOUR], 'the next check is scheduled once the last one is done');
    updates.dispose();
    assert.equal(r.clock.pendingCount, 0);
  });

  it('a pinned version is read from its own folder, older ones allowed (the rollback)', async () => {
    const r = rig({ settings: { ...SETTINGS, pinVersion: '0.9.0' } });
    r.updater.allowDowngrade = false;
    const updates = r.start();
    assert.equal(r.updater.allowDowngrade, true);
    assert.deepEqual(feedCall(r.updater.calls[1]), ['setFeedURL', { provider: 'custom', updateProvider: SignedFeedProvider, url: 'https://u.example/kiosk/0.9.0', channel: 'latest', publicKeys: [KEY], pinned: '0.9.0' }]);
    assert.deepEqual(r.lines()[0], ['info', 'Updates: feed set', { url: 'https://u.example/kiosk/0.9.0', channel: 'latest', pinned: '0.9.0', model: 'appimage' }]);
    assert.equal(updates.status.pinned, '0.9.0');
    updates.dispose();
  });

  const offCases: Array<[string, Partial<SafeUpdatesOptions>, string, 'info' | 'warn', string | null]> = [
    ['the OS package manager updates it', { model: { inApp: false, kind: 'os-package-manager', why: 'installed as a deb package' } }, 'installed as a deb package', 'warn', null],
    ['no feed URL', { settings: { ...SETTINGS, url: undefined } }, 'no update feed set (update.url)', 'warn', null],
    ['no update settings at all', { settings: undefined }, 'no update feed set (update.url)', 'warn', null],
    ['no signing key', { settings: { ...SETTINGS, publicKeys: undefined } }, 'no signing key set (update.publicKeys): an unsigned feed is never installed', 'warn', null],
    ['an empty list of keys', { settings: { ...SETTINGS, publicKeys: [] } }, 'no signing key set (update.publicKeys): an unsigned feed is never installed', 'warn', null],
    ['pinned to the running version', { settings: { ...SETTINGS, pinVersion: '1.0.0' } }, 'pinned to 1.0.0, which is running', 'info', '1.0.0'],
  ];
  for (const [name, over, why, level, pinned] of offCases) {
    it(`off when ${name}: the status says why, logged as ${level}; the updater is never asked`, async () => {
      const r = rig(over);
      const updates = r.start();
      await updates.check();
      await r.clock.advance(HOUR);
      assert.deepEqual(updates.status, { ...idleStatus, phase: 'off', model: over.model?.kind ?? 'appimage', off: why, pinned });
      assert.equal(updates.feed, null);
      assert.deepEqual(r.lines(), [[level, 'Updates: off', { why }]]);
      assert.deepEqual(r.updater.names(), ['on']);
      assert.deepEqual([r.updater.autoDownload, r.updater.autoInstallOnAppQuit], [false, false]);
      assert.deepEqual(r.statuses, [], 'nothing changed');
      updates.dispose();
    });
  }

  it('without settings the checks still come every 240 minutes (and find nothing to do)', async () => {
    const r = rig({ settings: undefined });
    const updates = r.start();
    assert.deepEqual(r.clock.pendingDelays(), [240 * MIN]);
    updates.dispose();
  });

  it('the rollout gate: accepted or not for this kiosk, with the reason logged; nothing without a feed', () => {
    const r = rig();
    r.start().dispose();
    const bucket = stagingBucket('lobby-1').toFixed(1);
    r.logger.lines.length = 0;
    assert.equal(r.updater.isUserWithinRollout({ version: '1.1.0' }), true);
    assert.equal(r.updater.isUserWithinRollout({ version: '1.1.0', stagingPercentage: 0 }), false);
    assert.deepEqual(r.lines(), [
      ['info', 'Updates: offered version accepted', { version: '1.1.0', reason: 'no staged rollout' }],
      ['info', 'Updates: offered version not for this kiosk', { version: '1.1.0', reason: `outside the 0 % stage (kiosk at ${bucket})` }],
    ]);

    const off = rig({ settings: undefined });
    off.start().dispose();
    off.logger.lines.length = 0;
    assert.equal(off.updater.isUserWithinRollout({ version: '1.1.0' }), false);
    assert.deepEqual(off.lines(), []);
  });
});

describe('safe updates: a check', () => {
  it('an update offered is downloaded, then waits for a safe moment: the status and the log say each step', async () => {
    const r = rig();
    r.world.inCall = true;
    const updates = await r.startOffered();
    assert.deepEqual(r.updater.names(), ['on', 'setFeedURL', 'checkForUpdates', 'downloadUpdate']);
    assert.deepEqual(r.phases(), ['checking', 'downloading', 'ready']);
    assert.deepEqual(updates.status, { ...idleStatus, phase: 'ready', ready: '1.1.0', lastCheckAt: '2026-11-23T10:00:00.000Z' });
    assert.equal(updates.ready, '1.1.0');
    assert.deepEqual(r.lines().slice(1), [
      ['info', 'Updates: downloading in the background', { version: '1.1.0' }],
      ['info', 'Updates: downloaded; waiting for a safe moment to install', { version: '1.1.0' }],
    ]);
    // Downloaded already: a check asks nothing more.
    await updates.check();
    assert.equal(r.updater.names().filter((n) => n === 'checkForUpdates').length, 1);
    updates.dispose();
  });

  it('a failure is reported by its first line (at most 300 characters) and forgotten at the next success', async () => {
    const r = rig();
    r.world.inCall = true;
    r.updater.checkAnswer = () => Promise.reject(new Error('net::ERR_CONNECTION_REFUSED\n    at somewhere'));
    const updates = r.start();
    await flushMicrotasks();
    assert.deepEqual(updates.status, { ...idleStatus, phase: 'error', lastError: 'net::ERR_CONNECTION_REFUSED' }, 'no check time: the check did not happen');
    assert.deepEqual(r.lines().at(-1), ['warn', 'Updates: the check or download failed; trying again later', { error: 'net::ERR_CONNECTION_REFUSED' }]);
    assert.deepEqual(r.phases(), ['checking', 'error']);

    r.updater.checkAnswer = () => Promise.reject('x'.repeat(400));
    await updates.check();
    assert.equal(updates.status.lastError, 'x'.repeat(300));

    r.updater.checkAnswer = () => Promise.resolve(nothing);
    await updates.check();
    assert.deepEqual([updates.phase, updates.status.lastError], ['idle', null]);

    r.updater.checkAnswer = () => Promise.resolve(offer('1.1.0'));
    r.updater.downloadAnswer = () => Promise.reject(new Error('sha512 checksum mismatch'));
    await updates.check();
    assert.deepEqual([updates.phase, updates.status.lastError, updates.ready], ['error', 'sha512 checksum mismatch', null]);
    r.updater.downloadAnswer = () => Promise.resolve([]);
    await updates.check();
    assert.deepEqual([updates.phase, updates.status.lastError, updates.ready], ['ready', null, '1.1.0']);
    updates.dispose();
  });

  it('an inactive updater answers null: nothing to do', async () => {
    const r = rig();
    r.updater.checkAnswer = () => Promise.resolve(null);
    const updates = r.start();
    await flushMicrotasks();
    assert.deepEqual(updates.status, { ...idleStatus, lastCheckAt: '2026-11-23T10:00:00.000Z' });
    updates.dispose();
  });

  it('checks asked for while one runs share it; the next one asks again; the check time is when the answer came', async () => {
    const r = rig();
    const answer = deferred<CheckResult>();
    r.updater.checkAnswer = () => answer.promise;
    const updates = r.start();
    const a = updates.check();
    const b = updates.check();
    await r.clock.advance(5_000);
    assert.equal(r.updater.names().filter((n) => n === 'checkForUpdates').length, 1);
    answer.resolve(nothing);
    await Promise.all([a, b]);
    assert.equal(updates.status.lastCheckAt, '2026-11-23T10:00:05.000Z');
    r.updater.checkAnswer = () => Promise.resolve(nothing);
    await updates.check();
    assert.equal(r.updater.names().filter((n) => n === 'checkForUpdates').length, 2);
    updates.dispose();
  });
});

describe('safe updates: when to install', () => {
  it('idle long enough: installs at once, calls held before the quit, silently and restarting the app', async () => {
    const r = rig({ settings: { ...SETTINGS, idleMinutes: 45 } });
    r.world.lastActivityMs = T0 - 45 * MIN;
    const updates = await r.startOffered();
    assert.deepEqual(r.updater.calls.at(-1), ['quitAndInstall', true, true]);
    assert.deepEqual(r.order, ['hold', 'quitAndInstall']);
    assert.deepEqual(r.phases(), ['checking', 'downloading', 'installing', 'installing']);
    assert.deepEqual(r.lines().at(-1), ['info', 'Updates: installing', { version: '1.1.0', reason: 'idle for 45 minutes' }]);
    // Installing: no check, no second install, no pin.
    await updates.check();
    updates.poke();
    updates.pin('0.9.0');
    assert.deepEqual(r.updater.names().filter((n) => n !== 'on'), ['setFeedURL', 'checkForUpdates', 'downloadUpdate', 'quitAndInstall']);
    assert.equal(updates.status.pinned, null);
    // The app is still running long after: the install failed.
    await r.clock.advance(INSTALL_TIMEOUT_MS - 1);
    assert.equal(updates.phase, 'installing');
    await r.clock.advance(1);
    const error = 'the app was still running 300 s after the install started';
    assert.deepEqual(updates.status, { ...idleStatus, phase: 'error', lastCheckAt: '2026-11-23T10:00:00.000Z', lastError: `install of 1.1.0 failed: ${error}` });
    assert.deepEqual(r.lines().at(-1), ['error', 'Updates: the install failed; taking calls again and trying from the next check', { version: '1.1.0', error }]);
    assert.deepEqual(r.order, ['hold', 'quitAndInstall', 'release']);
    assert.equal(r.statuses.at(-1)!.phase, 'error');
    // The next check starts over.
    await updates.check();
    assert.deepEqual(r.updater.names().slice(-3), ['checkForUpdates', 'downloadUpdate', 'quitAndInstall']);
    updates.dispose();
  });

  it('the installer cannot start (thrown, or reported as an error event): calls are taken again at once', async () => {
    const r = rig();
    r.updater.checkAnswer = () => Promise.resolve(offer('1.1.0'));
    r.updater.installAnswer = () => {
      throw new Error('spawn pkexec ENOENT');
    };
    const updates = r.start();
    await flushMicrotasks();
    assert.deepEqual([updates.phase, updates.status.lastError, updates.ready], ['error', 'install of 1.1.0 failed: spawn pkexec ENOENT', null]);
    assert.deepEqual(r.order, ['hold', 'quitAndInstall', 'release']);
    assert.deepEqual(r.clock.pendingDelays(), [HOUR], 'no install deadline left');
    // An error event outside an install changes nothing.
    r.updater.emitError(new Error('late'));
    assert.equal(updates.status.lastError, 'install of 1.1.0 failed: spawn pkexec ENOENT');

    r.updater.installAnswer = () => {};
    await updates.check();
    assert.equal(updates.phase, 'installing');
    r.updater.emitError(new Error('Squirrel: code signature did not match'));
    assert.deepEqual([updates.phase, updates.status.lastError], ['error', 'install of 1.1.0 failed: Squirrel: code signature did not match']);
    assert.deepEqual(r.order.slice(-3), ['hold', 'quitAndInstall', 'release']);
    assert.deepEqual(r.clock.pendingDelays(), [HOUR]);
    updates.dispose();
  });

  it('in use: looks again when the kiosk will have been idle long enough, at most a minute, at least a second later', async () => {
    const r = rig();
    r.updater.checkAnswer = () => Promise.resolve(offer('1.1.0'));
    r.world.lastActivityMs = T0 - 29 * MIN - 30_000;
    const updates = r.start();
    await flushMicrotasks();
    assert.deepEqual(r.clock.pendingDelays(), [30_000, HOUR]);
    r.world.lastActivityMs = T0 - 29 * MIN - 59_500;
    updates.poke();
    assert.deepEqual(r.clock.pendingDelays(), [1_000, HOUR], 'the earlier look replaced');
    r.world.lastActivityMs = T0 - 10 * MIN;
    updates.poke();
    assert.deepEqual(r.clock.pendingDelays(), [MIN, HOUR]);
    r.world.opening = { open: true, nextChangeAtMs: T0 + 20_000, nextOpenAtMs: null };
    updates.poke();
    assert.deepEqual(r.clock.pendingDelays(), [20_000, HOUR], 'closing time comes first');
    r.world.opening = { open: false, nextChangeAtMs: null, nextOpenAtMs: null };
    await r.clock.advance(20_000);
    assert.deepEqual(r.lines().at(-1), ['info', 'Updates: installing', { version: '1.1.0', reason: 'outside the opening hours' }]);
    updates.dispose();
  });

  it('during a call: looks again every minute, installs once the call is over', async () => {
    const r = rig();
    r.world.inCall = true;
    const updates = await r.startOffered();
    assert.deepEqual(r.clock.pendingDelays(), [MIN, HOUR]);
    await r.clock.advance(MIN);
    assert.deepEqual([updates.phase, r.clock.pendingDelays()], ['ready', [MIN, HOUR - MIN]]);
    r.world.inCall = false;
    await r.clock.advance(MIN);
    assert.deepEqual([updates.phase, r.order], ['installing', ['hold', 'quitAndInstall']]);
    updates.dispose();
  });

  it('poke before anything is downloaded does nothing', async () => {
    const r = rig();
    const updates = r.start();
    await flushMicrotasks();
    updates.poke();
    assert.deepEqual(r.clock.pendingDelays(), [HOUR]);
    updates.dispose();
  });

  it('"install when idle": at the next moment without a call, not waiting for idle minutes or closing time', async () => {
    const r = rig();
    r.world.inCall = true;
    r.world.lastActivityMs = T0;
    r.world.opening = { open: true, nextChangeAtMs: T0 + 8 * HOUR, nextOpenAtMs: null };
    const updates = await r.startOffered();
    updates.installWhenIdle();
    assert.deepEqual(r.lines().at(-1), ['info', 'Updates: will install at the next moment without a call', { ready: '1.1.0' }]);
    assert.deepEqual([updates.phase, updates.status.installWhenIdle, r.statuses.at(-1)!.installWhenIdle], ['ready', true, true]);
    assert.deepEqual(r.clock.pendingDelays(), [MIN, HOUR], 'not during the call');
    r.world.inCall = false;
    updates.poke();
    assert.deepEqual(r.lines().at(-1), ['info', 'Updates: installing', { version: '1.1.0', reason: 'an operator asked to install when idle' }]);
    // The install fails: the request is spent.
    r.updater.emitError(new Error('no'));
    assert.equal(updates.status.installWhenIdle, false);
    updates.dispose();
  });

  it('"install when idle" with an update waiting and no call: installs at once, though the kiosk was just used', async () => {
    const r = rig();
    r.world.lastActivityMs = T0;
    const updates = await r.startOffered();
    assert.equal(updates.phase, 'ready');
    updates.installWhenIdle();
    assert.deepEqual([updates.phase, r.order], ['installing', ['hold', 'quitAndInstall']]);
    assert.deepEqual(r.lines().at(-1), ['info', 'Updates: installing', { version: '1.1.0', reason: 'an operator asked to install when idle' }]);
    updates.dispose();
  });

  it('"install when idle" with nothing downloaded yet checks now, then installs what comes', async () => {
    const r = rig();
    r.world.lastActivityMs = T0;
    const updates = r.start();
    await flushMicrotasks();
    r.updater.checkAnswer = () => Promise.resolve(offer('1.1.0'));
    updates.installWhenIdle();
    assert.deepEqual(r.lines().at(-1), ['info', 'Updates: will install at the next moment without a call', { ready: null }]);
    await flushMicrotasks();
    assert.deepEqual(r.lines().at(-1), ['info', 'Updates: installing', { version: '1.1.0', reason: 'an operator asked to install when idle' }]);
    updates.dispose();
  });
});

describe('safe updates: the pin', () => {
  it('pinning drops the download and the pending look, reads the pinned folder now; unpinning follows the channel again', async () => {
    const r = rig();
    r.world.inCall = true;
    const updates = await r.startOffered();
    assert.deepEqual(r.clock.pendingDelays(), [MIN, HOUR]);
    r.updater.checkAnswer = () => Promise.resolve(nothing);
    updates.pin('0.9.0');
    assert.deepEqual(feedCall(r.updater.calls.at(-2)), ['setFeedURL', { provider: 'custom', updateProvider: SignedFeedProvider, url: 'https://u.example/kiosk/0.9.0', channel: 'latest', publicKeys: [KEY], pinned: '0.9.0' }]);
    assert.deepEqual(r.updater.calls.at(-1), ['checkForUpdates']);
    assert.equal(r.updater.allowDowngrade, true);
    assert.deepEqual(r.statuses.at(-2), { ...idleStatus, pinned: '0.9.0', lastCheckAt: '2026-11-23T10:00:00.000Z' }, 'the pin is in the status at once');
    assert.deepEqual(r.clock.pendingDelays(), [HOUR], 'the pending install look is gone');
    await flushMicrotasks();
    assert.deepEqual([updates.ready, updates.phase], [null, 'idle']);

    updates.pin(null);
    assert.deepEqual(feedCall(r.updater.calls.at(-2)), ['setFeedURL', { provider: 'custom', updateProvider: SignedFeedProvider, url: 'https://u.example/kiosk', channel: 'latest', publicKeys: [KEY], pinned: null }]);
    assert.equal(r.updater.allowDowngrade, false);
    assert.equal(updates.status.pinned, null);
    updates.dispose();
  });

  it('an empty version unpins, as null does', async () => {
    const r = rig({ settings: { ...SETTINGS, pinVersion: '0.9.0' } });
    const updates = r.start();
    await flushMicrotasks();
    updates.pin('');
    assert.deepEqual(feedCall(r.updater.calls.at(-2)), ['setFeedURL', { provider: 'custom', updateProvider: SignedFeedProvider, url: 'https://u.example/kiosk', channel: 'latest', publicKeys: [KEY], pinned: null }]);
    assert.equal(updates.status.pinned, null);
    updates.dispose();
  });

  it('a pin without update settings is kept in the status (updates stay off)', () => {
    const r = rig({ settings: undefined });
    const updates = r.start();
    updates.pin('0.9.0');
    assert.deepEqual(updates.status, { ...idleStatus, phase: 'off', off: 'no update feed set (update.url)', pinned: '0.9.0' });
    assert.deepEqual(r.statuses, [updates.status]);
    updates.pin(null);
    assert.equal(updates.status.pinned, null);
    updates.dispose();
  });

  it('an answer to a check of the feed before the pin is dropped (check, download, failure)', async () => {
    for (const stage of ['check', 'download', 'failure'] as const) {
      const r = rig();
      const answer = deferred<CheckResult>();
      const download = deferred<unknown>();
      r.updater.checkAnswer = () => (stage === 'failure' ? answer.promise.then(() => Promise.reject(new Error('refused'))) : answer.promise);
      r.updater.downloadAnswer = () => download.promise;
      const updates = r.start();
      if (stage === 'download') {
        answer.resolve(offer('1.1.0'));
        await flushMicrotasks();
        assert.equal(updates.phase, 'downloading');
      }
      // Pinned to the running version: updates go off while the old answer is still out.
      updates.pin('1.0.0');
      answer.resolve(offer('1.1.0'));
      download.resolve([]);
      await flushMicrotasks();
      assert.deepEqual(updates.status, { ...idleStatus, phase: 'off', off: 'pinned to 1.0.0, which is running', pinned: '1.0.0', lastCheckAt: stage === 'download' ? '2026-11-23T10:00:00.000Z' : null }, stage);
      assert.deepEqual(r.updater.names().filter((n) => n === 'downloadUpdate').length, stage === 'download' ? 1 : 0, stage);
      assert.equal(r.logger.lines.filter((l) => l.level === 'warn').length, 0, stage);
      updates.dispose();
    }
  });
});

describe('safe updates: a pin while a check is out', () => {
  it('the old answer is dropped, then the pinned folder is checked (not hours later at the next scheduled check)', async () => {
    const r = rig();
    r.world.inCall = true;
    const old = deferred<CheckResult>();
    r.updater.checkAnswer = () => old.promise;
    const updates = r.start();
    updates.pin('0.9.0');
    r.updater.checkAnswer = () => Promise.resolve(offer('0.9.0'));
    old.resolve(offer('1.1.0'));
    await flushMicrotasks();
    assert.deepEqual(r.updater.names().filter((n) => n !== 'on'), ['setFeedURL', 'checkForUpdates', 'setFeedURL', 'checkForUpdates', 'downloadUpdate']);
    assert.deepEqual([updates.phase, updates.ready, updates.status.pinned], ['ready', '0.9.0', '0.9.0']);
    updates.dispose();
  });
});

describe('safe updates: without the optional hooks', () => {
  it('no hold, release or change listener given: a download, an install and its failure run all the same', async () => {
    const r = rig({ holdCalls: undefined, releaseCalls: undefined, onChange: undefined });
    const updates = await r.startOffered();
    assert.deepEqual(r.updater.calls.at(-1), ['quitAndInstall', true, true]);
    r.updater.emitError(new Error('no'));
    assert.deepEqual([updates.phase, updates.status.lastError], ['error', 'install of 1.1.0 failed: no']);
    updates.dispose();
  });
});

describe('safe updates: dispose', () => {
  it('stops every timer, tells no one of a later change, and a check after it asks nothing', async () => {
    const r = rig();
    const updates = await r.startOffered();
    assert.deepEqual(r.clock.pendingDelays(), [INSTALL_TIMEOUT_MS, HOUR]);
    updates.dispose();
    assert.equal(r.clock.pendingCount, 0);
    // An install error after dispose: nothing released, nothing reported.
    const seen = r.statuses.length;
    r.updater.emitError(new Error('late'));
    assert.deepEqual([r.order, updates.phase], [['hold', 'quitAndInstall'], 'installing']);
    updates.installWhenIdle();
    assert.equal(r.statuses.length, seen);
  });

  it('a scheduled check still running at dispose schedules no other; a pending look and a check ask nothing', async () => {
    const r = rig();
    r.world.inCall = true;
    const updates = r.start();
    await flushMicrotasks();
    const answer = deferred<CheckResult>();
    r.updater.checkAnswer = () => answer.promise;
    await r.clock.advance(HOUR);
    updates.dispose();
    answer.resolve(offer('1.1.0'));
    await flushMicrotasks();
    assert.equal(r.clock.pendingCount, 0);
    assert.deepEqual(r.phases(), ['checking', 'idle', 'checking']);
    const calls = r.updater.calls.length;
    await updates.check();
    updates.poke();
    assert.equal(r.updater.calls.length, calls);
    assert.equal(r.clock.pendingCount, 0);
  });
});

describe("safe updates: the signer's floor", () => {
  /** The data folder as a kiosk leaves it after reading a feed signed with floor `minVersion`. */
  const remembered = (dataDir: string, minVersion: string) => {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, FEED_MEMORY_FILE), JSON.stringify({ v: 1, channels: { latest: { signedAt: '2026-11-20T00:00:00.000Z', version: '1.1.0', minVersion } } }));
  };

  it('the floor read from the channel is in the status; a pin below it is refused, logged and said in the status, nothing changed', async () => {
    const r = rig();
    remembered(r.dataDir, '1.1.0');
    const updates = r.start();
    await flushMicrotasks();
    assert.equal(updates.status.floor, '1.1.0');
    const feedCalls = () => r.updater.names().filter((n) => n === 'setFeedURL').length;
    const before = { calls: feedCalls(), statuses: r.statuses.length };
    const refused = `${pinRefusal('0.9.0', '1.1.0')}.`;
    for (const attempt of [() => updates.assertPinAllowed('0.9.0'), () => updates.pin('0.9.0')]) {
      assert.throws(attempt, (e: unknown) => e instanceof AvatarError && e.code === 'forbidden' && e.message === refused);
    }
    assert.equal(feedCalls(), before.calls, 'the feed is left as it was');
    assert.deepEqual(updates.status, { ...idleStatus, floor: '1.1.0', lastCheckAt: '2026-11-23T10:00:00.000Z', lastError: `update-pin 0.9.0 refused: ${pinRefusal('0.9.0', '1.1.0')}` });
    assert.equal(r.statuses.length, before.statuses + 2, 'each refusal reported');
    assert.deepEqual(r.lines().slice(-2), [
      ['warn', "Updates: a pin below the signer's floor was refused", { version: '0.9.0', floor: '1.1.0' }],
      ['warn', "Updates: a pin below the signer's floor was refused", { version: '0.9.0', floor: '1.1.0' }],
    ]);
    // At the floor, and unpinning, are fine.
    updates.assertPinAllowed(null);
    updates.pin('1.1.0');
    assert.equal(updates.status.pinned, '1.1.0');
    updates.dispose();
  });

  it('a pin in the settings below the floor: updates off, said and warned, the feed never set', () => {
    const r = rig({ settings: { ...SETTINGS, pinVersion: '0.9.0' } });
    remembered(r.dataDir, '1.1.0');
    const updates = r.start();
    const off = `the pin is refused: ${pinRefusal('0.9.0', '1.1.0')}`;
    assert.deepEqual(updates.status, { ...idleStatus, phase: 'off', off, pinned: '0.9.0', floor: '1.1.0' });
    assert.deepEqual(r.lines(), [['warn', 'Updates: off', { why: off }]]);
    assert.deepEqual(r.updater.names(), ['on']);
    updates.dispose();
  });

  it('a data file not as the kiosk writes it is said in the status from the start, until a check succeeds', async () => {
    const r = rig();
    mkdirSync(r.dataDir, { recursive: true });
    writeFileSync(join(r.dataDir, FEED_MEMORY_FILE), 'not json');
    r.world.inCall = true;
    const answer = deferred<CheckResult>();
    r.updater.checkAnswer = () => answer.promise;
    const updates = r.start();
    assert.equal(updates.status.lastError, `${join(r.dataDir, FEED_MEMORY_FILE)} is not JSON: started without it, so until this kiosk reads its channel again only the feeds' expiry keeps an older one out`);
    assert.deepEqual(r.lines()[0], ['error', 'Updates: the newest feeds seen could not be read', { problem: updates.status.lastError }]);
    answer.resolve(nothing);
    await flushMicrotasks();
    assert.equal(updates.status.lastError, null);
    updates.dispose();
  });

  it('a feed refused for its signature or what it is for is logged as refused; other failures as failures', async () => {
    for (const [code, message] of [
      ['ERR_UPDATER_FEED_BINDING', 'Updates: the feed was refused; nothing from it is installed'],
      ['ERR_UPDATER_FEED_SIGNATURE', 'Updates: the feed was refused; nothing from it is installed'],
      ['ERR_UPDATER_CHANNEL_FILE_NOT_FOUND', 'Updates: the check or download failed; trying again later'],
    ] as const) {
      const r = rig();
      r.updater.checkAnswer = () => Promise.reject(Object.assign(new Error('Update feed refused: why.'), { code }));
      const updates = r.start();
      await flushMicrotasks();
      assert.deepEqual(r.lines().at(-1), ['warn', message, { error: 'Update feed refused: why.' }], code);
      assert.equal(updates.status.lastError, 'Update feed refused: why.');
      updates.dispose();
    }
  });
});
