/**
 * The update glue with the REAL electron-updater (its NsisUpdater: the generic provider, the rollout gate,
 * the download and its sha512 check) against a feed served on 127.0.0.1. Electron itself is absent: the
 * updater gets an app adapter (no `electron.app`) and a Node HTTP executor in place of Electron's `net`
 * (the only two things it takes from Electron up to the install). The install itself (`quitAndInstall`
 * runs the downloaded installer and quits Electron) is recorded, not run: that needs the real Electron
 * binary and a Windows/macOS/AppImage build, which this machine has not.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type RequestOptions, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { configureRequestOptions, configureRequestUrl, HttpExecutor, type CancellationToken } from 'builder-util-runtime';
import electronUpdater from 'electron-updater';
import { FakeClock } from '../../electron/core/clock.ts';
import { startSafeUpdates, type UpdaterLike } from '../../electron/fleet/safe-updates.ts';
import { stagingBucket } from '../../electron/fleet/update-policy.ts';
import { updateSchema } from '../../electron/kiosk/fleet-config.ts';
import { realDelay, until } from '../helpers/until.ts';

console.log('# SKIP (part): the install step (quitAndInstall runs the installer and quits Electron) needs the real Electron binary and an installer build; it is recorded here, not run.');

/** Electron's `net` replaced by Node's http: electron-updater's own ElectronHttpExecutor, minus Electron. */
class NodeHttpExecutor extends HttpExecutor<ReturnType<typeof request>> {
  createRequest(options: RequestOptions, callback: (response: unknown) => void) {
    return request(options, callback);
  }
  download(url: URL, destination: string, options: { headers?: Record<string, string>; cancellationToken: CancellationToken }): Promise<string> {
    return options.cancellationToken.createPromise((resolve, reject, onCancel) => {
      const requestOptions: Record<string, unknown> = { headers: options.headers || undefined, redirect: 'manual' };
      configureRequestUrl(url, requestOptions);
      configureRequestOptions(requestOptions);
      this.doDownload(requestOptions, { destination, options: options as never, onCancel, callback: (error) => (error == null ? resolve(destination) : reject(error)), responseHandler: null }, 0);
    });
  }
}

/** electron-updater reads `<channel>.yml` on Windows, `<channel>-mac.yml` and `<channel>-linux.yml` elsewhere. */
const CHANNEL_FILE = `latest${process.platform === 'win32' ? '' : process.platform === 'darwin' ? '-mac' : '-linux'}.yml`;
const INSTALLER = Buffer.from('not really an installer, but its sha512 is checked');
const sha512 = createHash('sha512').update(INSTALLER).digest('base64');
const yml = (version: string, extra = '') =>
  `version: ${version}\nfiles:\n  - url: Avatar-Kiosk-Setup-${version}.exe\n    sha512: ${sha512}\n    size: ${INSTALLER.length}\npath: Avatar-Kiosk-Setup-${version}.exe\nsha512: ${sha512}\nreleaseDate: '2026-11-20T10:00:00.000Z'\n${extra}`;

let server: Server;
let base = '';
const requests: string[] = [];
const feed = new Map<string, string | Buffer>();
let dir = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ak-updates-'));
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = feed.get((req.url ?? '').split('?')[0]!);
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function realUpdater(version: string): { updater: UpdaterLike; installs: unknown[][] } {
  const userData = mkdtempSync(join(dir, 'user-'));
  const configPath = join(userData, 'app-update.yml');
  writeFileSync(configPath, `provider: generic\nurl: ${base}/feed\nupdaterCacheDirName: avatar-kiosk-updater\n`);
  const app = {
    version,
    name: 'Avatar Kiosk',
    isPackaged: true,
    appUpdateConfigPath: configPath,
    userDataPath: userData,
    baseCachePath: join(userData, 'cache'),
    whenReady: () => Promise.resolve(),
    relaunch: () => {},
    quit: () => {},
    onQuit: () => {},
  };
  const updater = new electronUpdater.NsisUpdater(null, app);
  (updater as unknown as { httpExecutor: HttpExecutor<never> }).httpExecutor = new NodeHttpExecutor() as never;
  updater.logger = process.env.DEBUG_UPDATER ? console : null;
  const installs: unknown[][] = [];
  updater.quitAndInstall = (...args: unknown[]) => void installs.push(args);
  return { updater: updater as unknown as UpdaterLike, installs };
}

/** A kiosk id whose staging bucket is below (or above) `pct`. */
function kioskIn(pct: number, inside: boolean): string {
  for (let i = 0; ; i++) if (stagingBucket(`k-${i}`) < pct === inside) return `k-${i}`;
}

describe('safe updates with electron-updater on a local feed', () => {
  it('downloads the newer version in the background and installs it only once the call is over and the kiosk closed', async () => {
    feed.set(`/feed/${CHANNEL_FILE}`, yml('1.1.0'));
    feed.set('/feed/Avatar-Kiosk-Setup-1.1.0.exe', INSTALLER);
    const { updater, installs } = realUpdater('1.0.0');
    const clock = new FakeClock(1_000_000);
    let inCall = true;
    let open = true;
    const updates = startSafeUpdates({
      updater,
      settings: updateSchema.parse({ url: `${base}/feed`, idleMinutes: 30 }),
      currentVersion: '1.0.0',
      kioskId: 'lobby-1',
      clock,
      ...(process.env.DEBUG_UPDATER ? { logger: { debug: console.log, info: console.log, warn: console.log, error: console.log } } : {}),
      inCall: () => inCall,
      opening: () => ({ open, nextChangeAtMs: null, nextOpenAtMs: null }),
      lastActivityMs: () => clock.now(),
    });
    try {
      await until(() => updates.ready !== null || updates.phase === 'error', { realTimeoutMs: 30_000, message: 'downloaded' });
      assert.equal(updates.phase, 'ready');
      assert.equal(updates.ready, '1.1.0');
      assert.ok(requests.includes('/feed/Avatar-Kiosk-Setup-1.1.0.exe'), requests.join(' '));
      assert.deepEqual(installs, [], 'not during a call');
      await clock.advance(120_000);
      assert.deepEqual(installs, [], 'still in the call');
      inCall = false;
      updates.poke();
      assert.deepEqual(installs, [], 'open and in use: waits');
      open = false;
      await clock.advance(60_000);
      assert.deepEqual(installs, [[true, true]], 'closed: silent install, app started again');
      assert.equal(updates.phase, 'installing');
    } finally {
      updates.dispose();
    }
  });

  it('follows the staged rollout: a kiosk outside the stage does not download', async () => {
    feed.set(`/feed/${CHANNEL_FILE}`, yml('1.2.0', 'stagingPercentage: 30\n'));
    feed.set('/feed/Avatar-Kiosk-Setup-1.2.0.exe', INSTALLER);
    for (const inside of [false, true]) {
      const { updater } = realUpdater('1.0.0');
      const before = requests.filter((r) => r.endsWith('1.2.0.exe')).length;
      const updates = startSafeUpdates({
        updater,
        settings: updateSchema.parse({ url: `${base}/feed` }),
        currentVersion: '1.0.0',
        kioskId: kioskIn(30, inside),
        clock: new FakeClock(0),
        inCall: () => true,
        opening: () => null,
        lastActivityMs: () => 0,
      });
      await updates.check();
      await realDelay(50);
      assert.equal(updates.ready, inside ? '1.2.0' : null, `inside=${inside}`);
      assert.equal(requests.filter((r) => r.endsWith('1.2.0.exe')).length - before, inside ? 1 : 0);
      updates.dispose();
    }
  });

  it('rolls back to the pinned version from its own folder, and ignores newer ones while pinned', async () => {
    feed.set(`/feed/${CHANNEL_FILE}`, yml('1.5.0'));
    feed.set(`/feed/1.4.2/${CHANNEL_FILE}`, yml('1.4.2'));
    feed.set('/feed/1.4.2/Avatar-Kiosk-Setup-1.4.2.exe', INSTALLER);
    const { updater } = realUpdater('1.5.0');
    const updates = startSafeUpdates({
      updater,
      settings: updateSchema.parse({ url: `${base}/feed`, pinVersion: '1.4.2' }),
      currentVersion: '1.5.0',
      kioskId: 'lobby-2',
      clock: new FakeClock(0),
      inCall: () => true,
      opening: () => null,
      lastActivityMs: () => 0,
    });
    await updates.check();
    assert.equal(updates.ready, '1.4.2', `phase ${updates.phase}`);
    assert.ok(requests.includes('/feed/1.4.2/Avatar-Kiosk-Setup-1.4.2.exe'));
    updates.dispose();
    // Already on the pinned version: no feed is read at all.
    const before = requests.length;
    const { updater: u2 } = realUpdater('1.4.2');
    const pinned = startSafeUpdates({ updater: u2, settings: updateSchema.parse({ url: `${base}/feed`, pinVersion: '1.4.2' }), currentVersion: '1.4.2', kioskId: 'x', clock: new FakeClock(0), inCall: () => false, opening: () => null, lastActivityMs: () => 0 });
    await pinned.check();
    assert.equal(pinned.phase, 'off');
    assert.equal(requests.length, before);
  });
});
