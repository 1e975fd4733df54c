/**
 * The update feed's signature (electron/fleet/signed-feed.ts) at its edges: keys and signatures as they
 * come from files (a trailing newline), the exact sizes it accepts, the refusals word for word, and
 * SignedFeedProvider reading a feed through a scripted executor (no network): which requests it makes,
 * with what headers, and what it refuses before electron-updater parses a channel file.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { CancellationToken } from 'builder-util-runtime';
import { AvatarError } from '../../../electron/core/errors.ts';
import { feedSignatureValid, generateFeedKeys, parsePublicKey, publicKeyOf, SignedFeedProvider, signFeedFile } from '../../../electron/fleet/signed-feed.ts';

const fleet = generateFeedKeys();
const other = generateFeedKeys();
const YML = 'version: 1.2.0\nfiles:\n  - url: kiosk-1.2.0.AppImage\n    sha512: abc\n    size: 3\npath: kiosk-1.2.0.AppImage\nsha512: abc\nreleaseDate: "2026-11-24T18:00:00.000Z"\n';

/** An SM2 private key: a PEM private key whose type Node does not name (its asymmetricKeyType is undefined). */
const SM2_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqBHM9VAYItBG0wawIBAQQg4lNDD1c88Zs1+04J
5ctd4RbDpgV4TQC50XNK8wGJnUahRANCAARzzQe7xhcOCHTmdqVzQrP3wKlmR7l9
3y2C9QYanpFdhJy3M82F0vIwbcUiCnG+pOOGnzXqhECzNDFVZT3PlDPp
-----END PRIVATE KEY-----
`;

const refusal = (code: string, message: string) => (error: unknown) => {
  assert.ok(error instanceof AvatarError);
  assert.deepEqual([error.code, error.message], [code, message]);
  return true;
};

describe('feed keys and signatures edges', () => {
  it('reads a public key with the spaces and newline a file or a form leaves around it', () => {
    assert.ok(parsePublicKey(` ${fleet.publicKey}\n`));
    const sig = signFeedFile(YML, fleet.privateKeyPem);
    assert.equal(feedSignatureValid(YML, ` ${sig}\n`, [` ${fleet.publicKey}\n`]), true);
  });

  it('refuses a key of the right length with another algorithm, and an Ed25519 key one byte short or long', () => {
    const der = Buffer.from(fleet.publicKey, 'base64');
    const x25519 = Buffer.from(generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' }));
    assert.equal(x25519.length, der.length);
    assert.equal(parsePublicKey(x25519.toString('base64')), null);
    assert.equal(parsePublicKey(der.subarray(0, der.length - 1).toString('base64')), null);
    assert.equal(parsePublicKey(Buffer.concat([der, Buffer.from([0])]).toString('base64')), null);
  });

  it('takes a signature of exactly 64 bytes only', () => {
    const sig = Buffer.from(signFeedFile(YML, fleet.privateKeyPem), 'base64');
    assert.equal(feedSignatureValid(YML, Buffer.concat([sig, Buffer.from([0])]).toString('base64'), [fleet.publicKey]), false);
    assert.equal(feedSignatureValid(YML, sig.subarray(0, 63).toString('base64'), [fleet.publicKey]), false);
  });

  it('skips a listed key it cannot read and tries the next one', () => {
    const sig = signFeedFile(YML, fleet.privateKeyPem);
    assert.equal(feedSignatureValid(YML, sig, ['not a key']), false);
    assert.equal(feedSignatureValid(YML, sig, ['not a key', fleet.publicKey]), true);
  });

  it('makes a key pair: the private key in PKCS#8 PEM, whose public key is the one printed', () => {
    assert.match(fleet.privateKeyPem, /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/);
    assert.equal(publicKeyOf(fleet.privateKeyPem), fleet.publicKey);
  });

  it('refuses, with the reason, to sign with what is not an Ed25519 private key', () => {
    assert.throws(() => publicKeyOf(fleet.publicKey), refusal('invalid_request', 'The signing key is not a private key in PEM form (make one with `update-keygen`).'));
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    assert.throws(() => signFeedFile(YML, ec), refusal('invalid_request', 'The signing key is ec key; the feed is signed with an Ed25519 key (make one with `update-keygen`).'));
    assert.throws(() => signFeedFile(YML, SM2_KEY_PEM), refusal('invalid_request', 'The signing key is not an asymmetric key; the feed is signed with an Ed25519 key (make one with `update-keygen`).'));
  });
});

type Answer = string | null | { throws: unknown };

/** A provider on a scripted executor: `files` answers by request path; every request is recorded. */
function feedProvider(files: Record<string, Answer>, options: { channel?: string | null; publicKeys?: string[] } = {}) {
  const requests: { path: string; headers: unknown; token: unknown }[] = [];
  const executor = {
    async request(o: { path: string; headers?: unknown }, token: unknown) {
      requests.push({ path: o.path, headers: o.headers, token });
      const answer = files[o.path];
      if (answer === undefined) throw new Error(`HttpError: 404 Not Found\n"method: GET url: ${o.path}"`);
      if (answer !== null && typeof answer === 'object') throw answer.throws;
      return answer;
    },
  };
  const publicKeys = options.publicKeys ?? [fleet.publicKey];
  const provider = new SignedFeedProvider(
    { url: 'https://updates.example.com/feed', ...(options.channel === undefined ? {} : { channel: options.channel }), publicKeys },
    { channel: null, isAddNoCacheQuery: false } as never,
    { executor, platform: 'linux', isUseMultipleRangeRequest: true } as never,
  );
  /** httpRequest as electron-updater calls it (protected in its types). */
  const httpRequest = (url: string, headers?: Record<string, string>, token?: CancellationToken) =>
    (provider as unknown as { httpRequest(u: URL, h?: Record<string, string>, t?: CancellationToken): Promise<string | null> }).httpRequest(new URL(url), headers, token);
  return { provider, requests, publicKeys, httpRequest };
}

const signed = (text: string, key = fleet) => signFeedFile(text, key.privateKeyPem);

const refusedFeed = (message: string) => (error: unknown) => {
  assert.ok(error instanceof Error);
  assert.deepEqual([error.message, (error as { code?: unknown }).code], [`Update feed refused: ${message}.`, 'ERR_UPDATER_FEED_SIGNATURE']);
  return true;
};

describe('SignedFeedProvider', () => {
  it('reads the channel file of its platform beside its signature, and parses it when signed by a fleet key', async () => {
    const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': signed(YML) });
    const info = await feed.provider.getLatestVersion();
    assert.deepEqual([info.version, info.path, info.releaseDate], ['1.2.0', 'kiosk-1.2.0.AppImage', '2026-11-24T18:00:00.000Z']);
    assert.deepEqual(feed.requests.map((r) => r.path), ['/feed/latest-linux.yml', '/feed/latest-linux.yml.sig']);
  });

  it('reads a named channel from the settings', async () => {
    const feed = feedProvider({ '/feed/beta-linux.yml': YML, '/feed/beta-linux.yml.sig': signed(YML) }, { channel: 'beta' });
    assert.equal((await feed.provider.getLatestVersion()).version, '1.2.0');
    assert.deepEqual(feed.requests.map((r) => r.path), ['/feed/beta-linux.yml', '/feed/beta-linux.yml.sig']);
  });

  it('keeps the keys it was given, whatever later happens to the settings\' list', async () => {
    const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': signed(YML) });
    feed.publicKeys.splice(0, 1, other.publicKey);
    assert.equal((await feed.provider.getLatestVersion()).version, '1.2.0');
  });

  it('asks for the signature with the same headers, query and cancellation as the channel file', async () => {
    const feed = feedProvider({ '/feed/latest.yml?noCache=1': YML, '/feed/latest.yml.sig?noCache=1': signed(YML) });
    const token = new CancellationToken();
    assert.equal(await feed.httpRequest('https://updates.example.com/feed/latest.yml?noCache=1', { authorization: 'Basic a2lvc2s6cHc=' }, token), YML);
    assert.deepEqual(
      feed.requests.map((r) => [r.path, r.headers, r.token === token]),
      [
        ['/feed/latest.yml?noCache=1', { authorization: 'Basic a2lvc2s6cHc=' }, true],
        ['/feed/latest.yml.sig?noCache=1', { authorization: 'Basic a2lvc2s6cHc=' }, true],
      ],
    );
  });

  it('passes anything but a channel file through unchecked, even with ".yml" in its query', async () => {
    const feed = feedProvider({ '/feed/kiosk-1.2.0.AppImage.blockmap?for=latest.yml': 'blockmap' });
    assert.equal(await feed.httpRequest('https://updates.example.com/feed/kiosk-1.2.0.AppImage.blockmap?for=latest.yml'), 'blockmap');
    assert.deepEqual(feed.requests.map((r) => r.path), ['/feed/kiosk-1.2.0.AppImage.blockmap?for=latest.yml']);
  });

  it('refuses a channel file without a signature, saying which and why in one line', async () => {
    const feed = feedProvider({ '/feed/latest-linux.yml': YML });
    await assert.rejects(feed.provider.getLatestVersion(), refusedFeed('the feed has no signature for latest-linux.yml (/feed/latest-linux.yml.sig: HttpError: 404 Not Found)'));
    const odd = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': { throws: 'socket hang up' } });
    await assert.rejects(odd.provider.getLatestVersion(), refusedFeed('the feed has no signature for latest-linux.yml (/feed/latest-linux.yml.sig: socket hang up)'));
  });

  it('refuses an empty, missing or oversized signature unread', async () => {
    for (const sig of ['', null, 'A'.repeat(1025)]) {
      const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': sig });
      await assert.rejects(feed.provider.getLatestVersion(), refusedFeed('the signature of latest-linux.yml is empty or malformed'), String(sig?.length));
    }
  });

  it('refuses a channel file signed with another key, a tampered one and an empty answer', async () => {
    const notSigned = refusedFeed("latest-linux.yml is not signed by this fleet's key (a tampered feed, or one signed with another key); nothing from it is installed");
    const cases: [string, Answer, Answer][] = [
      ['another key', YML, signed(YML, other)],
      ['tampered', YML.replace('1.2.0', '6.6.6'), signed(YML)],
      ['no body', null, signed(YML)],
      ['a signature at the size limit that is no signature', YML, 'A'.repeat(1024)],
    ];
    for (const [what, body, sig] of cases) {
      const feed = feedProvider({ '/feed/latest-linux.yml': body, '/feed/latest-linux.yml.sig': sig });
      await assert.rejects(feed.provider.getLatestVersion(), notSigned, what);
    }
  });
});
