/**
 * The feed-signing commands as the release machine runs them: a key that is never overwritten and only its
 * owner can read; every channel file signed (top folder and version folders) with a statement of what it is
 * for (channel and platform from its name, its version read as electron-updater reads it, a version
 * folder's copy told apart, the floor, the dates), electron-builder's own files left alone; clear refusals
 * for a missing key, a wrong key type, a folder without channel files, a file that cannot be bound, a
 * current release below the floor asked for.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { generateKeyPairSync } from 'node:crypto';
import { runUpdateKeygen, runUpdateSign } from '../../../electron/cli/update-commands.ts';
import { STATEMENT_FORMAT } from '../../../electron/fleet/feed-binding.ts';
import { feedFileSha512, readFeedSignature } from '../../../electron/fleet/signed-feed.ts';
import { silentLogger } from '../../../electron/core/log.ts';
import type { CliIo } from '../../../electron/cli/probe.ts';

const dir = mkdtempSync(join(tmpdir(), 'ak-update-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const NOW = Date.parse('2026-11-24T18:00:00.000Z');
const now = () => NOW;

function io(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: {}, logger: silentLogger, onSignal: () => () => {} };
}

/** A feed folder with these channel files (path → version; electron-builder's own files may be listed with null). */
function feedWith(files: Record<string, string | null>): string {
  const feed = mkdtempSync(join(dir, 'feed-'));
  for (const [f, version] of Object.entries(files)) {
    mkdirSync(join(feed, f, '..'), { recursive: true });
    writeFileSync(join(feed, f), version === null ? 'x64: {}\n' : `version: ${version}\npath: kiosk-${version}.exe\nsha512: abc\n# ${f}\n`);
  }
  return feed;
}

describe('update-keygen and update-sign', () => {
  const key = join(dir, 'fleet.key');
  let publicKey = '';
  const statementOf = (feed: string, f: string) => {
    const read = readFeedSignature(readFileSync(join(feed, `${f}.sig`), 'utf8'), [publicKey]);
    assert.ok(read.ok, f);
    assert.equal(read.statement.sha512, feedFileSha512(readFileSync(join(feed, f))), `${f}: the statement names the file's bytes`);
    const { format, sha512: _sha, signedAt, expiresAt, ...rest } = read.statement;
    assert.deepEqual([format, signedAt], [STATEMENT_FORMAT, '2026-11-24T18:00:00.000Z']);
    return { ...rest, expiresAt };
  };

  it('update-keygen writes the private key 0600, prints the public key, and never overwrites a key', () => {
    const first = io();
    assert.equal(runUpdateKeygen({ key }, first), 0);
    assert.equal(statSync(key).mode & 0o777, 0o600);
    publicKey = /^(MCowBQYDK2VwAyEA\S+)$/m.exec(first.out.join(''))![1]!;
    const before = readFileSync(key, 'utf8');
    assert.throws(() => runUpdateKeygen({ key }, io()), /exists already; it is not overwritten/);
    assert.equal(readFileSync(key, 'utf8'), before);
    const usage = io();
    assert.equal(runUpdateKeygen({ key: undefined }, usage), 2);
    assert.match(usage.err.join(''), /needs --key PATH/);
  });

  it("update-sign signs every channel file, in version folders too, each bound to what it is for; electron-builder's own files are left alone", () => {
    const feed = feedWith({ 'latest.yml': '1.5.0', 'latest-mac.yml': '1.5.0', 'beta-linux-arm64.yml': '2.0.0-beta.1', '1.5.0/latest.yml': '1.5.0', '1.4.2/latest.yml': '1.4.2', 'staged/latest.yml': '1.5.0', 'builder-debug.yml': null, 'linux-unpacked/resources/app-update.yml': null });
    const run = io();
    assert.equal(runUpdateSign({ key, dir: feed, now }, run), 0);
    const until = '2026-12-24T18:00:00.000Z';
    assert.deepEqual(statementOf(feed, 'latest.yml'), { channel: 'latest', platform: 'windows', version: '1.5.0', pinned: false, minVersion: '1.5.0', expiresAt: until });
    assert.deepEqual(statementOf(feed, 'latest-mac.yml'), { channel: 'latest', platform: 'mac', version: '1.5.0', pinned: false, minVersion: '1.5.0', expiresAt: until });
    assert.deepEqual(statementOf(feed, 'beta-linux-arm64.yml'), { channel: 'beta', platform: 'linux-arm64', version: '2.0.0-beta.1', pinned: false, minVersion: '2.0.0-beta.1', expiresAt: until });
    assert.deepEqual(statementOf(feed, '1.5.0/latest.yml'), { channel: 'latest', platform: 'windows', version: '1.5.0', pinned: true, minVersion: '1.5.0', expiresAt: until });
    assert.deepEqual(statementOf(feed, '1.4.2/latest.yml'), { channel: 'latest', platform: 'windows', version: '1.4.2', pinned: true, minVersion: '1.5.0', expiresAt: until });
    assert.deepEqual(statementOf(feed, 'staged/latest.yml'), { channel: 'latest', platform: 'windows', version: '1.5.0', pinned: false, minVersion: '1.5.0', expiresAt: until }, 'a folder not named after its version holds a current file');
    for (const f of ['builder-debug.yml', 'linux-unpacked/resources/app-update.yml']) assert.equal(existsSync(join(feed, `${f}.sig`)), false, f);
    assert.deepEqual(run.out, [
      'signed 1.4.2/latest.yml → 1.4.2/latest.yml.sig (latest, windows: the copy kept for kiosks pinned to 1.4.2; floor 1.5.0; below the floor: no kiosk will install it)\n',
      'signed 1.5.0/latest.yml → 1.5.0/latest.yml.sig (latest, windows: the copy kept for kiosks pinned to 1.5.0; floor 1.5.0)\n',
      'signed beta-linux-arm64.yml → beta-linux-arm64.yml.sig (beta, linux-arm64: 2.0.0-beta.1, the current release; floor 2.0.0-beta.1)\n',
      'signed latest-mac.yml → latest-mac.yml.sig (latest, mac: 1.5.0, the current release; floor 1.5.0)\n',
      'signed latest.yml → latest.yml.sig (latest, windows: 1.5.0, the current release; floor 1.5.0)\n',
      'signed staged/latest.yml → staged/latest.yml.sig (latest, windows: 1.5.0, the current release; floor 1.5.0)\n',
      `Kiosks accept these with update.publicKeys containing ${publicKey}\n`,
      `Signed at 2026-11-24T18:00:00.000Z; valid until ${until}: sign the feed again before then, or the kiosks refuse it.\n`,
    ]);
  });

  it('--min-version lowers the floor (a rollback the signer allows) and --expires-in-days sets the expiry', () => {
    const feed = feedWith({ 'latest-linux.yml': '1.5.0', '1.4.2/latest-linux.yml': '1.4.2' });
    assert.equal(runUpdateSign({ key, dir: feed, now, minVersion: '1.4.2', expiresInDays: 2 }, io()), 0);
    assert.deepEqual(statementOf(feed, '1.4.2/latest-linux.yml'), { channel: 'latest', platform: 'linux', version: '1.4.2', pinned: true, minVersion: '1.4.2', expiresAt: '2026-11-26T18:00:00.000Z' });
    assert.deepEqual(statementOf(feed, 'latest-linux.yml').minVersion, '1.4.2');
  });

  it('only version folders: the floor is the newest version signed', () => {
    const feed = feedWith({ '1.4.2/latest-linux.yml': '1.4.2', '1.3.0/latest-linux.yml': '1.3.0' });
    assert.equal(runUpdateSign({ key, dir: feed, now }, io()), 0);
    assert.deepEqual([statementOf(feed, '1.3.0/latest-linux.yml').minVersion, statementOf(feed, '1.4.2/latest-linux.yml').minVersion], ['1.4.2', '1.4.2']);
  });

  it('refuses, before writing anything, a current release below --min-version, a file it cannot bind, a bad floor or expiry', () => {
    const below = feedWith({ 'latest.yml': '1.4.0', '1.4.0/latest.yml': '1.4.0' });
    assert.throws(() => runUpdateSign({ key, dir: below, now, minVersion: '1.5.0' }, io()), { message: 'latest.yml offers 1.4.0, below --min-version 1.5.0: kiosks would refuse it. Nothing signed.' });
    assert.equal(existsSync(join(below, '1.4.0/latest.yml.sig')), false);
    const misnamed = feedWith({ 'Latest.yml': '1.5.0' });
    assert.throws(() => runUpdateSign({ key, dir: misnamed, now }, io()), { message: 'Latest.yml is not named as a channel file (<channel>.yml, <channel>-mac.yml, <channel>-linux.yml or <channel>-linux-<arch>.yml): nothing signed.' });
    const noVersion = feedWith({ 'latest.yml': null });
    assert.throws(() => runUpdateSign({ key, dir: noVersion, now }, io()), { message: 'latest.yml names no version such as "1.4.2" (version: none): nothing signed.' });
    writeFileSync(join(noVersion, 'latest.yml'), 'version: [1\n');
    assert.throws(() => runUpdateSign({ key, dir: noVersion, now }, io()), {
      message: 'latest.yml is not a channel file electron-updater can read (Cannot parse update info from latest.yml in the latest release artifacts (file:///latest.yml): YAMLException: unexpected end of the stream within a flow collection (2:1)): nothing signed.',
    });
    const fine = feedWith({ 'latest.yml': '1.5.0' });
    assert.throws(() => runUpdateSign({ key, dir: fine, now, minVersion: 'v1.4' }, io()), { message: '--min-version must be a version such as "1.4.2" (got "v1.4").' });
    for (const days of [0, 367, Number.NaN]) assert.throws(() => runUpdateSign({ key, dir: fine, now, expiresInDays: days }, io()), { message: `--expires-in-days must be a number from 1 to 366 (got "${days}").` });
    assert.equal(existsSync(join(fine, 'latest.yml.sig')), false);
  });

  it('refuses a folder without channel files, a key that is not Ed25519, and missing arguments', () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    assert.throws(() => runUpdateSign({ key, dir: empty }, io()), /No channel file \(latest\*\.yml\)/);
    const rsa = join(dir, 'rsa.key');
    writeFileSync(rsa, generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }));
    writeFileSync(join(empty, 'latest.yml'), 'version: 1.0.0\n');
    assert.throws(() => runUpdateSign({ key: rsa, dir: empty }, io()), /rsa key; the feed is signed with an Ed25519 key/);
    assert.equal(runUpdateSign({ key, dir: undefined }, io()), 2);
  });
});
