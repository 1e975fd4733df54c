/**
 * electron-updater's real class for a packaged deb (`DebUpdater`: the build's `package-type` says deb),
 * reading the build's own `resources/app-update.yml`, with only what needs the Electron binary replaced:
 * Electron's `app` by a small object and its `net` by Node's http (`NodeHttpExecutor`, electron-updater's
 * own ElectronHttpExecutor minus Electron). The install (`quitAndInstall`: pkexec dpkg -i, then quitting
 * Electron) is recorded, never run.
 */
import { mkdtempSync } from 'node:fs';
import { request, type RequestOptions } from 'node:http';
import { join } from 'node:path';
import { configureRequestOptions, configureRequestUrl, HttpExecutor, type CancellationToken } from 'builder-util-runtime';
import electronUpdater from 'electron-updater';
import type { UpdaterLike } from '../../../electron/fleet/safe-updates.ts';

/** Electron's `net` replaced by Node's http: electron-updater's own ElectronHttpExecutor, minus Electron. */
export class NodeHttpExecutor extends HttpExecutor<ReturnType<typeof request>> {
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

export interface RecordedUpdater {
  updater: UpdaterLike;
  /** The arguments of each `quitAndInstall` (never run). */
  installs: unknown[][];
  /** What electron-updater does with a failure outside a promise (the installer's start): an `error` event. */
  emitError(error: Error): void;
}

/** A DebUpdater for the app in `resourcesDir` running `version`, its user data in a new folder under `workDir`. */
export function realDebUpdater(resourcesDir: string, version: string, workDir: string): RecordedUpdater {
  const userData = mkdtempSync(join(workDir, 'user-'));
  const app = {
    version,
    name: 'Avatar Kiosk',
    isPackaged: true,
    appUpdateConfigPath: join(resourcesDir, 'app-update.yml'),
    userDataPath: userData,
    baseCachePath: join(userData, 'cache'),
    whenReady: () => Promise.resolve(),
    relaunch: () => {},
    quit: () => {},
    onQuit: () => {},
  };
  const updater = new electronUpdater.DebUpdater(null, app as never);
  (updater as unknown as { httpExecutor: HttpExecutor<never> }).httpExecutor = new NodeHttpExecutor() as never;
  updater.logger = process.env.DEBUG_UPDATER ? console : null;
  const installs: unknown[][] = [];
  // Recorded, never run: DebUpdater would run pkexec dpkg -i here.
  updater.quitAndInstall = (...args: unknown[]) => void installs.push(args);
  return { updater: updater as unknown as UpdaterLike, installs, emitError: (e) => void updater.emit('error', e) };
}
