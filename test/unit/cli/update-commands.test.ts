/**
 * The feed-signing commands as the release machine runs them: a key that is never overwritten and only its
 * owner can read; every channel file signed (top folder and version folders), electron-builder's own files
 * left alone; clear refusals for a missing key, a wrong key type, a folder without channel files.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { generateKeyPairSync } from 'node:crypto';
import { runUpdateKeygen, runUpdateSign } from '../../../electron/cli/update-commands.ts';
import { feedSignatureValid } from '../../../electron/fleet/signed-feed.ts';
import { silentLogger } from '../../../electron/core/log.ts';
import type { CliIo } from '../../../electron/cli/probe.ts';

const dir = mkdtempSync(join(tmpdir(), 'ak-update-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function io(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: {}, logger: silentLogger, onSignal: () => () => {} };
}

describe('update-keygen and update-sign', () => {
  const key = join(dir, 'fleet.key');
  let publicKey = '';

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

  it('update-sign signs every channel file, in version folders too, and leaves electron-builder\'s own files alone', () => {
    const feed = join(dir, 'feed');
    mkdirSync(join(feed, '1.4.2'), { recursive: true });
    mkdirSync(join(feed, 'linux-unpacked/resources'), { recursive: true });
    for (const f of ['latest.yml', 'latest-mac.yml', '1.4.2/latest.yml', 'builder-debug.yml', 'linux-unpacked/resources/app-update.yml']) writeFileSync(join(feed, f), `version: 1.4.2\n# ${f}\n`);
    const run = io();
    assert.equal(runUpdateSign({ key, dir: feed }, run), 0);
    for (const f of ['latest.yml', 'latest-mac.yml', '1.4.2/latest.yml']) {
      assert.ok(feedSignatureValid(readFileSync(join(feed, f)), readFileSync(join(feed, `${f}.sig`), 'utf8'), [publicKey]), f);
    }
    for (const f of ['builder-debug.yml', 'linux-unpacked/resources/app-update.yml']) assert.equal(existsSync(join(feed, `${f}.sig`)), false, f);
    assert.match(run.out.join(''), new RegExp(`Kiosks accept these with update.publicKeys containing ${publicKey.replace(/[+/]/g, '\\$&')}`));
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
