/**
 * The update feed's signing, for whoever publishes releases (never run on a kiosk):
 *   update-keygen --key PATH      a new Ed25519 key pair: the private key to PATH (mode 0600, never
 *                                 overwritten), the public key printed for the policy's `update.publicKeys`
 *   update-sign --key PATH DIR    sign every channel file (`*.yml`) under DIR, electron-builder's release
 *                                 folder or the feed's copy of it, writing `<file>.sig` beside each
 *     [--min-version V]           the floor: no kiosk of the channel installs (or is pinned to) anything
 *                                 older; default the version the channel's current file offers, so a
 *                                 rollback below it needs the signer to say so
 *     [--expires-in-days N]       kiosks refuse the signature after N days (default 30): sign again before
 * What is signed is a statement about each file (fleet/feed-binding.ts): its sha512, channel and platform
 * (from its name), its version, whether it is the copy kept in its version's folder (`<feed>/1.4.2/`) for
 * pinned kiosks, the floor, when it was signed and when it expires. The kiosk installs nothing from a
 * channel file whose statement does not verify or is for something else (fleet/signed-feed.ts).
 */
import { lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { parseUpdateInfo } from 'electron-updater/out/providers/Provider.js';
import semver from 'semver';
import { AvatarError } from '../core/errors.ts';
import { channelFileParts, DEFAULT_EXPIRY_DAYS, isVersion, MAX_EXPIRY_DAYS, STATEMENT_FORMAT, type FeedStatement } from '../fleet/feed-binding.ts';
import { feedFileSha512, generateFeedKeys, publicKeyOf, signFeedStatement, SIGNATURE_SUFFIX } from '../fleet/signed-feed.ts';
import { EXIT_USAGE, type CliIo } from './probe.ts';

/** electron-builder's own files in the release folder that are not part of the feed. */
const NOT_CHANNEL_FILES = new Set(['builder-debug.yml', 'builder-effective-config.yaml', 'app-update.yml']);
/** Folders walked at most this deep (the feed's top folder and one folder per version). */
const MAX_DEPTH = 3;

export function runUpdateKeygen(options: { key: string | undefined }, io: CliIo): number {
  if (!options.key) {
    io.stderr('cli: update-keygen needs --key PATH (where the private key is written)\n');
    return EXIT_USAGE;
  }
  const { privateKeyPem, publicKey } = generateFeedKeys();
  try {
    // 'wx': never overwrite a key that may already sign a fleet's feed.
    writeFileSync(options.key, privateKeyPem, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new AvatarError('invalid_request', code === 'EEXIST' ? `${options.key} exists already; it is not overwritten (move it away first).` : `${options.key} could not be written (${code ?? 'error'}).`);
  }
  io.stdout(`Private key written to ${options.key} (keep it on the release machine, never on a kiosk).\n`);
  io.stdout(`Public key for the policy's update.publicKeys:\n${publicKey}\n`);
  return 0;
}

/** The channel files under `dir` (sorted, relative paths). */
export function channelFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (folder: string, depth: number) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory() && depth < MAX_DEPTH && !entry.name.endsWith('-unpacked')) walk(path, depth + 1);
      else if (entry.isFile() && entry.name.endsWith('.yml') && !NOT_CHANNEL_FILES.has(entry.name)) out.push(relative(dir, path));
    }
  };
  walk(dir, 1);
  return out.sort();
}

export interface UpdateSignOptions {
  key: string | undefined;
  dir: string | undefined;
  /** The floor (`--min-version`); default per channel and platform: its current file's version. */
  minVersion?: string | undefined;
  /** `--expires-in-days`, already a number (default 30). */
  expiresInDays?: number | undefined;
  /** The release machine's clock (ms). */
  now?: () => number;
}

/** One channel file to sign, as read from the folder. */
interface Release {
  file: string;
  bytes: Buffer;
  channel: string;
  platform: string;
  version: string;
  /** In a folder named after its own version: the copy kept for pinned kiosks. */
  pinned: boolean;
}

function readRelease(dir: string, file: string): Release {
  const name = basename(file);
  const parts = channelFileParts(name);
  if (!parts) throw new AvatarError('invalid_request', `${file} is not named as a channel file (<channel>.yml, <channel>-mac.yml, <channel>-linux.yml or <channel>-linux-<arch>.yml): nothing signed.`);
  const bytes = readFileSync(join(dir, file));
  let version: unknown;
  try {
    // electron-updater's own parser: the version the kiosk will read from these bytes.
    version = (parseUpdateInfo(bytes.toString('utf8'), name, new URL(`file:///${name}`)) as { version?: unknown } | null)?.version;
  } catch (error) {
    throw new AvatarError('invalid_request', `${file} is not a channel file electron-updater can read (${(error instanceof Error ? error.message : String(error)).split(/[\n,]/)[0]}): nothing signed.`);
  }
  if (!isVersion(version)) throw new AvatarError('invalid_request', `${file} names no version such as "1.4.2" (version: ${JSON.stringify(version) ?? 'none'}): nothing signed.`);
  return { file, bytes, ...parts, version, pinned: basename(dirname(join(dir, file))) === version };
}

const keyOf = (r: Release) => `${r.channel} ${r.platform}`;

/** The floor of each channel and platform: `--min-version`, else the version its current file offers (the
 *  lowest, should several folders hold one), else the newest version signed (only version folders). */
function floors(releases: Release[], minVersion: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const key of new Set(releases.map(keyOf))) {
    const mine = releases.filter((r) => keyOf(r) === key);
    const current = mine.filter((r) => !r.pinned).map((r) => r.version).sort(semver.compare);
    out.set(key, minVersion ?? current[0] ?? mine.map((r) => r.version).sort(semver.rcompare)[0]!);
  }
  return out;
}

export function runUpdateSign(options: UpdateSignOptions, io: CliIo): number {
  if (!options.key || !options.dir) {
    io.stderr('cli: update-sign needs --key PATH and the release folder: update-sign --key fleet-update.key release\n');
    return EXIT_USAGE;
  }
  if (options.minVersion !== undefined && !isVersion(options.minVersion)) throw new AvatarError('invalid_request', `--min-version must be a version such as "1.4.2" (got "${options.minVersion}").`);
  const days = options.expiresInDays ?? DEFAULT_EXPIRY_DAYS;
  if (!(days >= 1 && days <= MAX_EXPIRY_DAYS)) throw new AvatarError('invalid_request', `--expires-in-days must be a number from 1 to ${MAX_EXPIRY_DAYS} (got "${days}").`);
  let pem: string;
  try {
    pem = readFileSync(options.key, 'utf8');
  } catch (error) {
    throw new AvatarError('invalid_request', `The signing key ${options.key} could not be read (${(error as { code?: string }).code ?? 'error'}).`);
  }
  let isDir = false;
  try {
    isDir = lstatSync(options.dir).isDirectory();
  } catch {
    /* reported below */
  }
  if (!isDir) throw new AvatarError('invalid_request', `${options.dir} is not a folder.`);
  const files = channelFiles(options.dir);
  if (!files.length) throw new AvatarError('invalid_request', `No channel file (latest*.yml) under ${options.dir}: run the build with its publish settings first.`);
  const publicKey = publicKeyOf(pem);
  const releases = files.map((f) => readRelease(options.dir!, f));
  const floor = floors(releases, options.minVersion);
  // A current file below the floor would stop every kiosk of its channel: refused before anything is written.
  for (const r of releases) {
    const min = floor.get(keyOf(r))!;
    if (!r.pinned && semver.lt(r.version, min)) throw new AvatarError('invalid_request', `${r.file} offers ${r.version}, below --min-version ${min}: kiosks would refuse it. Nothing signed.`);
  }
  const nowMs = (options.now ?? Date.now)();
  const signedAt = new Date(nowMs).toISOString();
  const expiresAt = new Date(nowMs + days * 24 * 60 * 60_000).toISOString();
  for (const r of releases) {
    const minVersion = floor.get(keyOf(r))!;
    const statement: FeedStatement = { format: STATEMENT_FORMAT, channel: r.channel, platform: r.platform, version: r.version, pinned: r.pinned, minVersion, sha512: feedFileSha512(r.bytes), signedAt, expiresAt };
    writeFileSync(join(options.dir, `${r.file}${SIGNATURE_SUFFIX}`), signFeedStatement(statement, pem));
    const role = r.pinned ? `the copy kept for kiosks pinned to ${r.version}` : `${r.version}, the current release`;
    const below = semver.lt(r.version, minVersion) ? `; below the floor: no kiosk will install it` : '';
    io.stdout(`signed ${r.file} → ${r.file}${SIGNATURE_SUFFIX} (${r.channel}, ${r.platform}: ${role}; floor ${minVersion}${below})\n`);
  }
  io.stdout(`Kiosks accept these with update.publicKeys containing ${publicKey}\n`);
  io.stdout(`Signed at ${signedAt}; valid until ${expiresAt}: sign the feed again before then, or the kiosks refuse it.\n`);
  return 0;
}
