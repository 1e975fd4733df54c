/**
 * The update feed's own signature: every channel file (`latest.yml`, `latest-mac.yml`, `latest-linux.yml`,
 * in the feed's top folder and in each `<version>/` folder) carries a detached Ed25519 signature beside it
 * (`latest-linux.yml.sig`, base64), made with the fleet's private key (`cli update-sign`). The kiosk knows
 * the public key(s) from its settings (`update.publicKeys`) and reads the feed through `SignedFeedProvider`,
 * which refuses a channel file whose signature does not verify before electron-updater parses it. The
 * channel file carries each installer's sha512, which electron-updater checks after the download, so a
 * verified channel file pins the installer too: whoever controls only the web server (or the network)
 * cannot make a kiosk install anything. Electron-free (node:crypto).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { GenericProvider } from 'electron-updater/out/providers/GenericProvider.js';
import type { CancellationToken, GenericServerOptions } from 'builder-util-runtime';
import type { OutgoingHttpHeaders } from 'node:http';
import { AvatarError } from '../core/errors.ts';

/** The signature file's name beside a channel file. */
export const SIGNATURE_SUFFIX = '.sig';
/** A channel file or signature larger than this is refused unread (a feed file is a few hundred bytes). */
const MAX_SIGNATURE_CHARS = 1024;

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

/** The detached signature (base64) of a channel file's exact bytes. */
export function signFeedFile(content: Buffer | string, privateKeyPem: string): string {
  return sign(null, Buffer.from(content), privateFeedKey(privateKeyPem)).toString('base64');
}

/** Whether `signature` (base64) is one of `publicKeys`' signature of `content`'s exact bytes. */
export function feedSignatureValid(content: Buffer | string, signature: string, publicKeys: readonly string[]): boolean {
  const sig = Buffer.from(signature.trim(), 'base64');
  if (sig.length !== 64) return false;
  return publicKeys.some((k) => {
    const key = parsePublicKey(k);
    return key !== null && verify(null, Buffer.from(content), key, sig);
  });
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

/** The feed options the kiosk hands electron-updater (`setFeedURL`): the generic layout plus the keys. */
export interface SignedFeedOptions {
  /** The feed's folder (the generic provider's layout). */
  url: string;
  channel?: string | null;
  /** Ed25519 public keys (base64 SPKI); a channel file signed by any one of them is accepted. */
  publicKeys: readonly string[];
}

/**
 * electron-updater's generic provider, except that every `.yml` it reads must come with a valid signature
 * (`<file>.sig` beside it). A missing, malformed or foreign signature fails the check with
 * `ERR_UPDATER_FEED_SIGNATURE`, so nothing from that feed is downloaded or installed.
 */
export class SignedFeedProvider extends GenericProvider {
  readonly #publicKeys: readonly string[];

  constructor(configuration: SignedFeedOptions, updater: ConstructorParameters<typeof GenericProvider>[1], runtimeOptions: ConstructorParameters<typeof GenericProvider>[2]) {
    super({ provider: 'generic', url: configuration.url, channel: configuration.channel ?? null } satisfies GenericServerOptions, updater, runtimeOptions);
    this.#publicKeys = [...configuration.publicKeys];
  }

  protected override async httpRequest(url: URL, headers?: OutgoingHttpHeaders | null, cancellationToken?: CancellationToken): Promise<string | null> {
    const body = await super.httpRequest(url, headers, cancellationToken);
    if (!url.pathname.endsWith('.yml')) return body;
    const sigUrl = new URL(url.href);
    sigUrl.pathname += SIGNATURE_SUFFIX;
    let signature: string | null;
    try {
      signature = await super.httpRequest(sigUrl, headers, cancellationToken);
    } catch (error) {
      throw feedSignatureError(`the feed has no signature for ${fileName(url)} (${sigUrl.pathname}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
    }
    if (!signature || signature.length > MAX_SIGNATURE_CHARS) throw feedSignatureError(`the signature of ${fileName(url)} is empty or malformed`);
    if (body === null || !feedSignatureValid(body, signature, this.#publicKeys)) {
      throw feedSignatureError(`${fileName(url)} is not signed by this fleet's key (a tampered feed, or one signed with another key); nothing from it is installed`);
    }
    return body;
  }
}

function fileName(url: URL): string {
  return url.pathname.split('/').pop() ?? url.pathname;
}

function feedSignatureError(message: string): Error & { code: string } {
  return Object.assign(new Error(`Update feed refused: ${message}.`), { code: 'ERR_UPDATER_FEED_SIGNATURE' });
}
