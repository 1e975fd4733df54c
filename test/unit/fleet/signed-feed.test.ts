/**
 * The update feed's signature (signed-feed.ts): public keys as update-keygen prints them and as a file or a
 * form leaves them (a trailing newline), the exact sizes it accepts, reading back what the fleet key signed
 * and the refusals word for word, signing only what it would read back; and SignedFeedProvider reading a
 * feed through a scripted executor (no network): which requests it makes, with what headers, what it refuses
 * before electron-updater parses a channel file, the platform it expects from electron-updater's own
 * channel-file name, and what it remembers in the data folder.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import { CancellationToken } from 'builder-util-runtime';
import { AvatarError } from '../../../electron/core/errors.ts';
import { openFeedMemory } from '../../../electron/fleet/feed-memory.ts';
import { generateFeedKeys, parsePublicKey, publicKeyOf, readFeedSignature, SignedFeedProvider, signFeedStatement } from '../../../electron/fleet/signed-feed.ts';
import { updateSchema } from '../../../electron/kiosk/fleet-config.ts';
import { SIGNED_AT, signedFor, statementFor } from '../../helpers/feed-statement.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

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

const tempDir = tempDirsRemovedAfterEach('ak-signed-feed-');

describe('public keys', () => {
  it('reads the public key as update-keygen prints it, which the settings schema accepts', () => {
    assert.match(fleet.publicKey, /^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=$/);
    assert.ok(parsePublicKey(fleet.publicKey));
    assert.equal(publicKeyOf(fleet.privateKeyPem), fleet.publicKey);
    assert.equal(parsePublicKey('MCowBQYDK2VwAyEA'), null);
    assert.deepEqual(updateSchema.parse({ url: 'https://u.example', publicKeys: [fleet.publicKey] }).publicKeys, [fleet.publicKey]);
    assert.throws(() => updateSchema.parse({ url: 'https://u.example', publicKeys: ['-----BEGIN PUBLIC KEY-----'] }), /Ed25519 public key/);
  });

  it('refuses a key of the right length with another algorithm, and an Ed25519 key one byte short or long', () => {
    const der = Buffer.from(fleet.publicKey, 'base64');
    const x25519 = Buffer.from(generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' }));
    assert.equal(x25519.length, der.length);
    assert.equal(parsePublicKey(x25519.toString('base64')), null);
    assert.equal(parsePublicKey(der.subarray(0, der.length - 1).toString('base64')), null);
    assert.equal(parsePublicKey(Buffer.concat([der, Buffer.from([0])]).toString('base64')), null);
  });

  it('makes a key pair: the private key in PKCS#8 PEM, whose public key is the one printed', () => {
    assert.match(fleet.privateKeyPem, /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/);
    assert.equal(publicKeyOf(fleet.privateKeyPem), fleet.publicKey);
  });
});

describe('reading a signature file', () => {
  it('reads back the statement the fleet key signed, from any listed key, and nothing else', () => {
    const text = 'version: 1.1.0\npath: a.exe\nsha512: abc\n';
    const sig = signedFor(text, fleet.privateKeyPem, { version: '1.1.0', minVersion: '1.1.0' });
    const statement = statementFor(text, { version: '1.1.0', minVersion: '1.1.0' });
    assert.deepEqual(readFeedSignature(sig, [fleet.publicKey]), { ok: true, statement });
    assert.deepEqual(readFeedSignature(sig, [generateFeedKeys().publicKey]), { ok: false, why: 'foreign' }, 'another key');
    assert.deepEqual(readFeedSignature(sig, [generateFeedKeys().publicKey, fleet.publicKey]), { ok: true, statement }, 'any listed key (a key change)');
    assert.deepEqual(readFeedSignature('bm90IGEgc2lnbmF0dXJl', [fleet.publicKey]), { ok: false, why: 'malformed' });
  });

  it('reads a public key and a signature file with the spaces and newline a file or a form leaves around them', () => {
    assert.ok(parsePublicKey(` ${fleet.publicKey}\n`));
    const sig = signedFor(YML, fleet.privateKeyPem);
    assert.ok(sig.endsWith('}\n'));
    assert.deepEqual(readFeedSignature(` ${sig}\n`, [` ${fleet.publicKey}\n`]), { ok: true, statement: statementFor(YML) });
  });

  it('takes a signature of exactly 64 bytes only', () => {
    const file = JSON.parse(signedFor(YML, fleet.privateKeyPem)) as { statement: string; signature: string };
    const sig = Buffer.from(file.signature, 'base64');
    for (const wrong of [Buffer.concat([sig, Buffer.from([0])]), sig.subarray(0, 63)]) {
      assert.deepEqual(readFeedSignature(JSON.stringify({ ...file, signature: wrong.toString('base64') }), [fleet.publicKey]), { ok: false, why: 'malformed' }, String(wrong.length));
    }
  });

  it('skips a listed key it cannot read and tries the next one', () => {
    const sig = signedFor(YML, fleet.privateKeyPem);
    assert.deepEqual(readFeedSignature(sig, ['not a key']), { ok: false, why: 'foreign' });
    assert.deepEqual(readFeedSignature(sig, ['not a key', fleet.publicKey]), { ok: true, statement: statementFor(YML) });
  });

  it('tells apart a signature of the bytes alone (an older update-sign), a file with more or fewer fields, and a signed statement it cannot read', () => {
    const bytesOnly = sign(null, Buffer.from(YML), generateKeyPairSync('ed25519').privateKey).toString('base64');
    assert.deepEqual(readFeedSignature(`${bytesOnly}\n`, [fleet.publicKey]), { ok: false, why: 'file-only' });
    const file = JSON.parse(signedFor(YML, fleet.privateKeyPem)) as Record<string, string>;
    for (const odd of [{ ...file, note: 'x' }, { statement: file.statement }, [file], 'null']) {
      assert.deepEqual(readFeedSignature(JSON.stringify(odd), [fleet.publicKey]), { ok: false, why: 'malformed' }, JSON.stringify(odd).slice(0, 20));
    }
    const key = generateFeedKeys();
    const signRaw = (text: string) => JSON.stringify({ statement: Buffer.from(text).toString('base64'), signature: sign(null, Buffer.from(text), key.privateKeyPem).toString('base64') });
    assert.deepEqual(readFeedSignature(signRaw('not json'), [key.publicKey]), { ok: false, why: 'statement' });
    assert.deepEqual(readFeedSignature(signRaw(JSON.stringify({ ...statementFor(YML), channel: 'Latest' })), [key.publicKey]), { ok: false, why: 'statement' });
    assert.deepEqual(readFeedSignature(signRaw(JSON.stringify({ ...statementFor(YML), extra: 1 })), [key.publicKey]), { ok: false, why: 'statement' });
  });
});

describe('signing a statement', () => {
  it('signs only a statement it would read back', () => {
    assert.throws(() => signFeedStatement({ ...statementFor(YML), version: 'v1' }, fleet.privateKeyPem), refusal('invalid_request', 'The statement to sign is invalid at "version": must be a version such as "1.4.2"; a kiosk would refuse it.'));
  });

  it('refuses, with the reason, to sign with what is not an Ed25519 private key', () => {
    assert.throws(() => publicKeyOf(fleet.publicKey), refusal('invalid_request', 'The signing key is not a private key in PEM form (make one with `update-keygen`).'));
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    assert.throws(() => signedFor(YML, ec), refusal('invalid_request', 'The signing key is ec key; the feed is signed with an Ed25519 key (make one with `update-keygen`).'));
    assert.throws(() => signedFor(YML, SM2_KEY_PEM), refusal('invalid_request', 'The signing key is not an asymmetric key; the feed is signed with an Ed25519 key (make one with `update-keygen`).'));
  });

  it('refuses to sign with anything but an Ed25519 private key', () => {
    const text = 'version: 1.1.0\npath: a.exe\nsha512: abc\n';
    assert.throws(() => signedFor(text, fleet.publicKey), /not a private key in PEM form/);
  });
});

type Answer = string | null | { throws: unknown };

/** Now, for the provider: a day after the default statement was signed. */
const NOW = Date.parse(SIGNED_AT) + 24 * 60 * 60_000;

/** A provider on a scripted executor: `files` answers by request path; every request is recorded. Its
 *  memory is a real one in a fresh folder (or `dir`). */
function feedProvider(files: Record<string, Answer>, options: { channel?: string | null; publicKeys?: string[]; pinned?: string; platform?: string; dir?: string; nowMs?: number } = {}) {
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
  const dir = options.dir ?? tempDir();
  const memory = openFeedMemory(dir);
  const provider = new SignedFeedProvider(
    { url: 'https://updates.example.com/feed', ...(options.channel === undefined ? {} : { channel: options.channel }), publicKeys, pinned: options.pinned ?? null, memory, now: () => options.nowMs ?? NOW },
    { channel: null, isAddNoCacheQuery: false } as never,
    { executor, platform: options.platform ?? 'linux', isUseMultipleRangeRequest: true } as never,
  );
  /** httpRequest as electron-updater calls it (protected in its types). */
  const httpRequest = (url: string, headers?: Record<string, string>, token?: CancellationToken) =>
    (provider as unknown as { httpRequest(u: URL, h?: Record<string, string>, t?: CancellationToken): Promise<string | null> }).httpRequest(new URL(url), headers, token);
  return { provider, requests, publicKeys, httpRequest, memory, dir };
}

const signed = (text: string | null, key = fleet, over: Parameters<typeof statementFor>[1] = {}) => signedFor(text ?? '', key.privateKeyPem, over);

const refusedFeed = (message: string, code = 'ERR_UPDATER_FEED_SIGNATURE') => (error: unknown) => {
  assert.ok(error instanceof Error);
  assert.deepEqual([error.message, (error as { code?: unknown }).code], [`Update feed refused: ${message}.`, code]);
  return true;
};
const unbound = (message: string) => refusedFeed(`${message}; nothing from it is installed`, 'ERR_UPDATER_FEED_BINDING');

describe('SignedFeedProvider', () => {
  it('reads the channel file of its platform beside its signature, parses it when the fleet signed a statement of it, and remembers the statement', async () => {
    const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': signed(YML) });
    const info = await feed.provider.getLatestVersion();
    assert.deepEqual([info.version, info.path, info.releaseDate], ['1.2.0', 'kiosk-1.2.0.AppImage', '2026-11-24T18:00:00.000Z']);
    assert.deepEqual(feed.requests.map((r) => r.path), ['/feed/latest-linux.yml', '/feed/latest-linux.yml.sig']);
    assert.deepEqual(feed.memory.newest('latest'), { signedAt: SIGNED_AT, version: '1.2.0', minVersion: '1.2.0' });
    assert.deepEqual(openFeedMemory(feed.dir).newest('latest'), { signedAt: SIGNED_AT, version: '1.2.0', minVersion: '1.2.0' }, 'kept on disk');
  });

  it('reads a named channel from the settings', async () => {
    const feed = feedProvider({ '/feed/beta-linux.yml': YML, '/feed/beta-linux.yml.sig': signed(YML, fleet, { channel: 'beta' }) }, { channel: 'beta' });
    assert.equal((await feed.provider.getLatestVersion()).version, '1.2.0');
    assert.deepEqual(feed.requests.map((r) => r.path), ['/feed/beta-linux.yml', '/feed/beta-linux.yml.sig']);
    assert.deepEqual([feed.memory.newest('beta')?.version, feed.memory.newest('latest')], ['1.2.0', null]);
  });

  it('expects the platform of the channel file electron-updater asks for: mac, windows, linux on another arch', async () => {
    const arch = process.arch === 'x64' ? '' : `-${process.arch}`;
    for (const [platform, path, statementPlatform] of [['darwin', '/feed/latest-mac.yml', 'mac'], ['win32', '/feed/latest.yml', 'windows'], ['linux', `/feed/latest-linux${arch}.yml`, `linux${arch}`]] as const) {
      const feed = feedProvider({ [path]: YML, [`${path}.sig`]: signed(YML, fleet, { platform: statementPlatform }) }, { platform });
      assert.equal((await feed.provider.getLatestVersion()).version, '1.2.0', platform);
    }
    const linuxOnMac = feedProvider({ '/feed/latest-mac.yml': YML, '/feed/latest-mac.yml.sig': signed(YML) }, { platform: 'darwin' });
    await assert.rejects(linuxOnMac.provider.getLatestVersion(), unbound('latest-mac.yml was signed for linux; this kiosk runs mac'));
  });

  it('reads the pinned copy from its version folder, and does not take it as the newest of the channel', async () => {
    const feed = feedProvider({ '/feed/1.1.0/latest-linux.yml': YML, '/feed/1.1.0/latest-linux.yml.sig': signed(YML, fleet, { version: '1.1.0', minVersion: '1.0.0', pinned: true }) }, { pinned: '1.1.0' });
    assert.equal(await feed.httpRequest('https://updates.example.com/feed/1.1.0/latest-linux.yml'), YML);
    assert.equal(feed.memory.newest('latest'), null);
  });

  it('refuses what the fleet signed for something else, each with its reason (statementProblem), and remembers nothing', async () => {
    const cases: Array<[string, Parameters<typeof statementFor>[1], Partial<Parameters<typeof feedProvider>[1]>, string]> = [
      ['another channel', { channel: 'beta' }, {}, 'latest-linux.yml was signed for the "beta" channel; this kiosk follows "latest"'],
      ['a pinned copy served as the current file', { pinned: true }, {}, "latest-linux.yml was signed as the copy of 1.2.0 kept for kiosks pinned to it, not as the channel's current release"],
      ['an expired one', {}, { nowMs: Date.parse('2026-12-24T18:00:00.000Z') }, "latest-linux.yml expired at 2026-12-24T18:00:00.000Z (signed 2026-11-24T18:00:00.000Z; this kiosk's clock says 2026-12-24T18:00:00.000Z): sign the feed again with update-sign"],
    ];
    for (const [what, over, options, message] of cases) {
      const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': signed(YML, fleet, over) }, options);
      await assert.rejects(feed.provider.getLatestVersion(), unbound(message), what);
      assert.equal(feed.memory.newest('latest'), null, what);
    }
  });

  it('refuses an older statement of the channel after a newer one, even after a restart; the same one again is fine', async () => {
    const older = signed(YML, fleet, { signedAt: '2026-11-20T00:00:00.000Z' });
    const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': signed(YML) });
    await feed.provider.getLatestVersion();
    await feed.provider.getLatestVersion();
    const replay = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': older }, { dir: feed.dir });
    await assert.rejects(
      replay.provider.getLatestVersion(),
      unbound('latest-linux.yml was signed at 2026-11-20T00:00:00.000Z, before the one this kiosk already read (signed 2026-11-24T18:00:00.000Z): an older feed served again is refused'),
    );
    assert.deepEqual(replay.memory.newest('latest')?.signedAt, SIGNED_AT);
  });

  it('refuses a pinned copy below the floor of the newest statement read, saying how to roll back on purpose', async () => {
    const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': signed(YML) });
    await feed.provider.getLatestVersion();
    const old = 'version: 0.0.1\npath: kiosk-0.0.1.AppImage\nsha512: abc\n';
    const pinned = feedProvider({ '/feed/0.0.1/latest-linux.yml': old, '/feed/0.0.1/latest-linux.yml.sig': signed(old, fleet, { version: '0.0.1', minVersion: '0.0.1', pinned: true, signedAt: '2026-01-01T00:00:00.000Z' }) }, { dir: feed.dir, pinned: '0.0.1' });
    await assert.rejects(
      pinned.httpRequest('https://updates.example.com/feed/0.0.1/latest-linux.yml'),
      unbound("latest-linux.yml: 0.0.1 is below the lowest version the fleet's signer allows (1.2.0). To roll back on purpose, sign the feed again with `update-sign --min-version 0.0.1`, let the kiosks read it (update-check), then pin again"),
    );
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

  it('refuses an empty, missing, oversized or unreadable signature unread', async () => {
    for (const sig of ['', null, 'A'.repeat(2049), 'A'.repeat(2048), '{"statement":"","signature":""}']) {
      const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': sig });
      await assert.rejects(feed.provider.getLatestVersion(), refusedFeed('the signature of latest-linux.yml is empty or malformed'), String(sig?.length));
    }
  });

  it('refuses a signature of the bytes alone, as an older update-sign made them, saying to sign again', async () => {
    const bytesOnly = sign(null, Buffer.from(YML), fleet.privateKeyPem).toString('base64');
    const feed = feedProvider({ '/feed/latest-linux.yml': YML, '/feed/latest-linux.yml.sig': `${bytesOnly}\n` });
    await assert.rejects(feed.provider.getLatestVersion(), refusedFeed('the signature of latest-linux.yml covers its bytes only, not what it is for (made by an older update-sign); sign the feed again'));
  });

  it('refuses a channel file signed with another key, a tampered one and an empty answer', async () => {
    const notSigned = refusedFeed("latest-linux.yml is not signed by this fleet's key (a tampered feed, or one signed with another key); nothing from it is installed");
    const cases: [string, Answer, Answer][] = [
      ['another key', YML, signed(YML, other)],
      ['tampered', YML.replace('1.2.0', '6.6.6'), signed(YML)],
      ['no body', null, signed(YML)],
    ];
    for (const [what, body, sig] of cases) {
      const feed = feedProvider({ '/feed/latest-linux.yml': body, '/feed/latest-linux.yml.sig': sig });
      await assert.rejects(feed.provider.getLatestVersion(), notSigned, what);
      assert.equal(feed.memory.newest('latest'), null, what);
    }
  });
});
