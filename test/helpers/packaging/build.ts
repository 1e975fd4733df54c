/**
 * Runs the project's real packaging, offline: `electron-builder --linux deb` with the repository's own
 * electron-builder.yml, except that
 *  - `electronDist` names a local folder holding a stand-in `electron` executable (a shell script that
 *    carries Electron's fuse wire, so @electron/fuses really flips it) instead of the downloaded Electron
 *    zip, which this machine cannot fetch;
 *  - `CUSTOM_FPM_PATH` names fpm-stand-in.mjs, which builds the deb with Debian's dpkg-deb instead of the
 *    fpm that electron-builder downloads from GitHub;
 *  - the output goes to a temporary folder, the version can be set (`extraMetadata.version`), and native
 *    modules are not rebuilt (`npmRebuild: false`: nothing in the checkout changes).
 * Everything else (the asar, app-update.yml, package-type, latest-linux.yml with the deb's sha512) is
 * electron-builder's own work. Needs the app built first (`npm run build`).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const ROOT = join(import.meta.dirname, '../../..');
export const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
/** Electron's fuse wire v1 has 8 fuses; '1' on, '0' off (as a fresh Electron build ships them, roughly). */
const STAND_IN_FUSES = '10111100';

export interface DebBuild {
  /** electron-builder's output folder (the deb, latest-linux.yml, linux-unpacked/). */
  releaseDir: string;
  unpackedDir: string;
  resourcesDir: string;
  debFile: string;
  /** What electron-builder printed (for a failure message). */
  log: string;
}

/** A folder electron-builder accepts as an unpacked Electron for Linux. */
export function standInElectron(dir: string): string {
  mkdirSync(join(dir, 'resources'), { recursive: true });
  const exe = join(dir, 'electron');
  writeFileSync(exe, `#!/bin/sh\necho "stand-in for Electron: the real binary cannot be downloaded here" >&2\nexit 1\n# ${FUSE_SENTINEL}\x01\x08${STAND_IN_FUSES}\n`);
  chmodSync(exe, 0o755);
  writeFileSync(join(dir, 'chrome-sandbox'), '');
  writeFileSync(join(dir, 'version'), '45.4.1');
  return dir;
}

/**
 * Set by `npm run mutate` only: a folder where a build is kept and reused. A mutant changes the TypeScript
 * source, never out/ (built once before the run), so every mutant would package the very same app; the key
 * covers everything the package is made from (out/, package.json, electron-builder.yml, the version), so a
 * changed build is packaged afresh. `npm test` never sets it: there every run packages for real.
 */
export const DEB_CACHE_ENV = 'AK_MUTATION_DEB_CACHE';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

function packageInputsKey(version: string): string {
  const hash = createHash('sha256').update(`version ${version}\n`);
  for (const file of [join(ROOT, 'package.json'), join(ROOT, 'electron-builder.yml'), ...filesUnder(join(ROOT, 'out'))]) {
    hash.update(`${relative(ROOT, file)}\n`).update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 32);
}

export async function buildDeb(options: { workDir: string; version: string }): Promise<DebBuild> {
  if (!existsSync(join(ROOT, 'out/main/index.js')) || !existsSync(join(ROOT, 'out/renderer/index.html'))) {
    throw new Error('The app is not built: run `npm run build` before this test (it packages out/).');
  }
  const cacheRoot = process.env[DEB_CACHE_ENV];
  if (!cacheRoot) return packageDeb(options);
  const kept = join(cacheRoot, packageInputsKey(options.version));
  if (!existsSync(kept)) {
    const fresh = await packageDeb({ workDir: join(options.workDir, 'to-keep'), version: options.version });
    // Two test runners may package at once: each writes its own folder and renames it into place.
    const staging = `${kept}.${process.pid}`;
    cpSync(fresh.releaseDir, join(staging, 'release'), { recursive: true, verbatimSymlinks: true });
    writeFileSync(join(staging, 'log.txt'), fresh.log);
    try {
      renameSync(staging, kept);
    } catch {
      rmSync(staging, { recursive: true, force: true }); // the other runner got there first: same inputs, same build
    }
  }
  const releaseDir = join(options.workDir, 'release');
  cpSync(join(kept, 'release'), releaseDir, { recursive: true, verbatimSymlinks: true });
  return debBuildIn(releaseDir, options.version, readFileSync(join(kept, 'log.txt'), 'utf8'));
}

function debBuildIn(releaseDir: string, version: string, log: string): DebBuild {
  const unpackedDir = join(releaseDir, 'linux-unpacked');
  return { releaseDir, unpackedDir, resourcesDir: join(unpackedDir, 'resources'), debFile: join(releaseDir, `Avatar Kiosk-${version}-linux-amd64.deb`), log };
}

async function packageDeb(options: { workDir: string; version: string }): Promise<DebBuild> {
  const electronDist = standInElectron(join(options.workDir, 'electron-dist'));
  const releaseDir = join(options.workDir, 'release');
  const log = await runElectronBuilder(options.workDir, [
    `-c.electronDist=${electronDist}`,
    `-c.directories.output=${releaseDir}`,
    `-c.extraMetadata.version=${options.version}`,
    // Never rebuild native modules in the checkout's node_modules (the optional RTC addon would fetch
    // Electron's headers): the packaged tree is what is checked, not a rebuild.
    '-c.npmRebuild=false',
  ]);
  return debBuildIn(releaseDir, options.version, log);
}

/**
 * Another release made from an app `buildDeb` packaged: electron-builder's own `--prepackaged` run on a
 * copy of that unpacked app, with another version and, if given, another channel (`publish.channel`, as a
 * beta build is published). The deb and its channel file (`<channel>-linux.yml` with the deb's sha512) are
 * electron-builder's real output; the app inside keeps the first build's files, which the updater never
 * looks at (it checks the deb's bytes against the channel file). About half the time of a full build.
 */
export async function repackageDeb(options: { workDir: string; from: DebBuild; version: string; channel?: string }): Promise<DebBuild> {
  // electron-builder writes app-update.yml into the prepackaged folder: a copy, so the first build keeps its own.
  const unpacked = join(options.workDir, 'prepackaged');
  cpSync(options.from.unpackedDir, unpacked, { recursive: true, verbatimSymlinks: true });
  const releaseDir = join(options.workDir, 'release');
  const channel = options.channel ? ['-c.publish.provider=generic', '-c.publish.url=https://updates.example.invalid/avatar-kiosk', `-c.publish.channel=${options.channel}`] : [];
  const log = await runElectronBuilder(options.workDir, ['--prepackaged', unpacked, `-c.directories.output=${releaseDir}`, `-c.extraMetadata.version=${options.version}`, '-c.npmRebuild=false', ...channel]);
  return { ...debBuildIn(releaseDir, options.version, log), unpackedDir: unpacked, resourcesDir: join(unpacked, 'resources') };
}

/** `electron-builder --linux deb --x64` with the repository's config and these arguments, publishing nothing;
 *  what it printed, or an error with its tail. */
async function runElectronBuilder(workDir: string, extra: string[]): Promise<string> {
  const cli = join(ROOT, 'node_modules/electron-builder/cli.js');
  const args = [cli, '--linux', 'deb', '--x64', '--config', 'electron-builder.yml', ...extra, '--publish', 'never'];
  // electron-builder executes the stand-in itself, so it needs its exec bit; a copied checkout (Stryker's
  // sandbox) loses it, so run a copy made executable here.
  const fpm = join(workDir, 'fpm-stand-in.mjs');
  cpSync(join(import.meta.dirname, 'fpm-stand-in.mjs'), fpm);
  chmodSync(fpm, 0o755);
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, CUSTOM_FPM_PATH: fpm, CI: 'true', ELECTRON_BUILDER_CACHE: join(workDir, 'cache') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`electron-builder failed (exit ${code}):\n${out.slice(-4000)}`));
    });
  });
}
