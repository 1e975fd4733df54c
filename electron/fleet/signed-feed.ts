/**
 * The update feed's own signature: every channel file (`latest.yml`, `latest-mac.yml`, `latest-linux.yml`,
 * in the feed's top folder and in each `<version>/` folder) has a signature file beside it
 * (`latest-linux.yml.sig`) made with the fleet's private key (`cli update-sign`). What is signed is a
 * statement about the file (feed-binding.ts): its sha512, and what it is for (channel, platform, the
 * channel's current file or a pinned copy, the signer's floor, an expiry). The kiosk knows the public
 * key(s) from its settings (`update.publicKeys`) and reads the feed through `SignedFeedProvider`, which
 * refuses a channel file whose statement is not signed by the fleet, does not match its bytes, or is not
 * for what the kiosk asked, before electron-updater parses it. The channel file carries each installer's
 * sha512, which electron-updater checks after the download, so a verified channel file pins the installer
 * too: whoever controls only the web server (or the network) cannot make a kiosk install anything, nor
 * serve it a file meant for another channel, an older one again, or an expired one. Electron-free (node:crypto).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { GenericProvider } from 'electron-updater/out/providers/GenericProvider.js';
import type { CancellationToken, GenericServerOptions } from 'builder-util-runtime';
import type { OutgoingHttpHeaders } from 'node:http';
import { z } from 'zod';
import { AvatarError } from '../core/errors.ts';
import { feedStatementSchema, platformOfSuffix, statementProblem, type FeedStatement } from './feed-binding.ts';
import type { FeedMemory } from './feed-memory.ts';

/** The signature file's name beside a channel file. */
export const SIGNATURE_SUFFIX = '.sig';
/** A signature file larger than this is refused unread (one is about 600 characters). */
const MAX_SIGNATURE_CHARS = 2048;

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): a public key in the settings is this + 32 bytes, base64. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Parse a public key as the settings hold it (base64 of the SPKI DER, "MCowBQYDK2VwAyEA…"), or null. */
export function parsePublicKey(base64: string): KeyObject | null {
  const der = Buffer.from(base64.trim(), 'base64');
  if (der.length !== ED25519_SPKI_PREFIX.length + 32 || !der.subarray(0, ED25519_SPKI_PREFIX.length).equals(ED25519_SPKI_PREFIX)) return null;
  try {
    return createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch {
    return null;
  }
}

/** A new fleet key pair: the private key as PKCS#8 PEM (keep it off the kiosks), the public key as the settings hold it. */
export function generateFeedKeys(): { privateKeyPem: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  };
}

/** The public key (settings form) of a private key PEM; throws `invalid_request` if it is not an Ed25519 key. */
export function publicKeyOf(privateKeyPem: string): string {
  const key = privateFeedKey(privateKeyPem);
  return createPublicKey(key).export({ format: 'der', type: 'spki' }).toString('base64');
}

/** sha512 of a channel file's exact bytes, base64 (as a statement names it). */
export function feedFileSha512(content: Buffer | string): string {
  return createHash('sha512').update(Buffer.from(content)).digest('base64');
}

/** The signature file's own shape: the statement's exact bytes and the Ed25519 signature over them, base64. */
const signatureFileSchema = z.strictObject({ statement: z.string().max(1400).regex(/^[A-Za-z0-9+/]*={0,2}$/), signature: z.string().regex(/^[A-Za-z0-9+/]{86}==$/) });

/** The signature file (`<channel file>.sig`) for a statement, signed with the fleet's private key. */
export function signFeedStatement(statement: FeedStatement, privateKeyPem: string): string {
  const checked = feedStatementSchema.safeParse(statement);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new AvatarError('invalid_request', `The statement to sign is invalid at "${issue.path.join('.')}": ${issue.message}; a kiosk would refuse it.`);
  }
  const bytes = Buffer.from(JSON.stringify(checked.data));
  return `${JSON.stringify({ statement: bytes.toString('base64'), signature: sign(null, bytes, privateFeedKey(privateKeyPem)).toString('base64') })}\n`;
}

/**
 * The statement in a signature file, when one of `publicKeys` signed it. Otherwise why not: `malformed` (not
 * a signature file), `file-only` (a signature of the channel file's bytes alone, as an older `update-sign`
 * made them: it says nothing of what the file is for), `foreign` (no listed key signed it), `statement`
 * (signed, but not a statement this kiosk can read).
 */
export function readFeedSignature(text: string, publicKeys: readonly string[]): { ok: true; statement: FeedStatement } | { ok: false; why: 'malformed' | 'file-only' | 'foreign' | 'statement' } {
  const trimmed = text.trim();
  if (/^[A-Za-z0-9+/]{86}==$/.test(trimmed)) return { ok: false, why: 'file-only' };
  let raw: unknown;
  try {
    raw = JSON.parse(trimmed);
  } catch {
    return { ok: false, why: 'malformed' };
  }
  const file = signatureFileSchema.safeParse(raw);
  if (!file.success) return { ok: false, why: 'malformed' };
  const bytes = Buffer.from(file.data.statement, 'base64');
  const sig = Buffer.from(file.data.signature, 'base64');
  const signed = publicKeys.some((k) => {
    const key = parsePublicKey(k);
    return key !== null && verify(null, bytes, key, sig);
  });
  if (!signed) return { ok: false, why: 'foreign' };
  let statement: unknown;
  try {
    statement = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, why: 'statement' };
  }
  const parsed = feedStatementSchema.safeParse(statement);
  return parsed.success ? { ok: true, statement: parsed.data } : { ok: false, why: 'statement' };
}

function privateFeedKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new AvatarError('invalid_request', 'The signing key is not a private key in PEM form (make one with `update-keygen`).');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new AvatarError('invalid_request', `The signing key is ${key.asymmetricKeyType ?? 'not an asymmetric'} key; the feed is signed with an Ed25519 key (make one with \`update-keygen\`).`);
  return key;
}

/** The feed options the kiosk hands electron-updater (`setFeedURL`): the generic layout, the keys, and
 *  what the feed must be for. */
export interface SignedFeedOptions {
  /** The feed's folder (the generic provider's layout). */
  url: string;
  channel?: string | null;
  /** Ed25519 public keys (base64 SPKI); a statement signed by any one of them is accepted. */
  publicKeys: readonly string[];
  /** The version this kiosk is pinned to (`url` is then that version's folder), or null. */
  pinned: string | null;
  /** The newest statements read per channel (the kiosk's data folder). */
  memory: FeedMemory;
  /** The kiosk's clock (ms), for the expiry. */
  now(): number;
}

/**
 * electron-updater's generic provider, except that every `.yml` it reads must come with a signature file
 * (`<file>.sig` beside it) whose statement the fleet signed, names the file's exact bytes and is for what
 * this kiosk asked (feed-binding.ts `statementProblem`). A missing, malformed or foreign signature fails
 * the check with `ERR_UPDATER_FEED_SIGNATURE`, a statement for something else with
 * `ERR_UPDATER_FEED_BINDING`, so nothing from that feed is downloaded or installed. The statement of the
 * channel's current file is remembered once accepted.
 */
export class SignedFeedProvider extends GenericProvider {
  readonly #publicKeys: readonly string[];
  readonly #channel: string;
  readonly #pinned: string | null;
  readonly #memory: FeedMemory;
  readonly #now: () => number;

  constructor(configuration: SignedFeedOptions, updater: ConstructorParameters<typeof GenericProvider>[1], runtimeOptions: ConstructorParameters<typeof GenericProvider>[2]) {
    super({ provider: 'generic', url: configuration.url, channel: configuration.channel ?? null } satisfies GenericServerOptions, updater, runtimeOptions);
    this.#publicKeys = [...configuration.publicKeys];
    this.#channel = configuration.channel ?? 'latest';
    this.#pinned = configuration.pinned;
    this.#memory = configuration.memory;
    this.#now = configuration.now;
  }

  protected override async httpRequest(url: URL, headers?: OutgoingHttpHeaders | null, cancellationToken?: CancellationToken): Promise<string | null> {
    const body = await super.httpRequest(url, headers, cancellationToken);
    if (!url.pathname.endsWith('.yml')) return body;
    const name = fileName(url);
    const sigUrl = new URL(url.href);
    sigUrl.pathname += SIGNATURE_SUFFIX;
    let signature: string | null;
    try {
      signature = await super.httpRequest(sigUrl, headers, cancellationToken);
    } catch (error) {
      throw feedSignatureError(`the feed has no signature for ${name} (${sigUrl.pathname}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
    }
    if (!signature || signature.length > MAX_SIGNATURE_CHARS) throw feedSignatureError(`the signature of ${name} is empty or malformed`);
    const read = readFeedSignature(signature, this.#publicKeys);
    if (!read.ok && read.why === 'file-only') {
      throw feedSignatureError(`the signature of ${name} covers its bytes only, not what it is for (made by an older update-sign); sign the feed again`);
    }
    if (!read.ok && read.why !== 'foreign') throw feedSignatureError(`the signature of ${name} is empty or malformed`);
    if (!read.ok || body === null || feedFileSha512(body) !== read.statement.sha512) {
      throw feedSignatureError(`${name} is not signed by this fleet's key (a tampered feed, or one signed with another key); nothing from it is installed`);
    }
    const s = read.statement;
    const problem = statementProblem(name, s, {
      channel: this.#channel,
      // electron-updater names the channel file `<channel><suffix>.yml`: the suffix says the platform.
      platform: platformOfSuffix(this.getCustomChannelName('')),
      pinned: this.#pinned,
      nowMs: this.#now(),
      newest: this.#memory.newest(this.#channel),
    });
    if (problem) throw feedError(`${problem}; nothing from it is installed`, 'ERR_UPDATER_FEED_BINDING');
    if (!s.pinned) this.#memory.saw(s.channel, { signedAt: s.signedAt, version: s.version, minVersion: s.minVersion });
    return body;
  }
}

function fileName(url: URL): string {
  return url.pathname.split('/').pop() ?? url.pathname;
}

function feedSignatureError(message: string): Error & { code: string } {
  return feedError(message, 'ERR_UPDATER_FEED_SIGNATURE');
}

function feedError(message: string, code: string): Error & { code: string } {
  return Object.assign(new Error(`Update feed refused: ${message}.`), { code });
}
