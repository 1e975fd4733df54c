/**
 * The update feed's signing, for whoever publishes releases (never run on a kiosk):
 *   update-keygen --key PATH      a new Ed25519 key pair: the private key to PATH (mode 0600, never
 *                                 overwritten), the public key printed for the policy's `update.publicKeys`
 *   update-sign --key PATH DIR    sign every channel file (`*.yml`) under DIR, electron-builder's release
 *                                 folder or the feed's copy of it, writing `<file>.sig` beside each
 * The kiosk installs nothing from a channel file whose signature does not verify (fleet/signed-feed.ts).
 */
import { lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { AvatarError } from '../core/errors.ts';
import { generateFeedKeys, publicKeyOf, signFeedFile, SIGNATURE_SUFFIX } from '../fleet/signed-feed.ts';
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

export function runUpdateSign(options: { key: string | undefined; dir: string | undefined }, io: CliIo): number {
  if (!options.key || !options.dir) {
    io.stderr('cli: update-sign needs --key PATH and the release folder: update-sign --key fleet-update.key release\n');
    return EXIT_USAGE;
  }
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
  for (const file of files) {
    const path = join(options.dir, file);
    writeFileSync(`${path}${SIGNATURE_SUFFIX}`, `${signFeedFile(readFileSync(path), pem)}\n`);
    io.stdout(`signed ${file} → ${file}${SIGNATURE_SUFFIX}\n`);
  }
  io.stdout(`Kiosks accept these with update.publicKeys containing ${publicKey}\n`);
  return 0;
}
