/**
 * What a feed signature is for (electron/fleet/feed-binding.ts), as pure functions: a channel file's
 * channel and platform read from its name as electron-builder writes it, the pin refusal's sentence, and
 * each reason a signed statement does not fit what a kiosk asked for, word for word and in order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { channelFileParts, FUTURE_TOLERANCE_MS, isVersion, pinRefusal, platformOfSuffix, statementProblem, type FeedExpectation } from '../../../electron/fleet/feed-binding.ts';
import { EXPIRES_AT, SIGNED_AT, statementFor } from '../../helpers/feed-statement.ts';

const NOW = Date.parse(SIGNED_AT) + 60_000;
const expect = (over: Partial<FeedExpectation> = {}): FeedExpectation => ({ channel: 'latest', platform: 'linux', pinned: null, nowMs: NOW, newest: null, ...over });
const st = (over: Parameters<typeof statementFor>[1] = {}) => statementFor('version: 1.2.0\n', over);

describe('channel file names', () => {
  it('reads the channel and platform from the names electron-builder writes, and nothing else', () => {
    const cases: Array<[string, ReturnType<typeof channelFileParts>]> = [
      ['latest.yml', { channel: 'latest', platform: 'windows' }],
      ['latest-mac.yml', { channel: 'latest', platform: 'mac' }],
      ['latest-linux.yml', { channel: 'latest', platform: 'linux' }],
      ['beta-linux-arm64.yml', { channel: 'beta', platform: 'linux-arm64' }],
      ['beta-linux-arm.yml', { channel: 'beta', platform: 'linux-arm' }],
      ['lobby-east-linux.yml', { channel: 'lobby-east', platform: 'linux' }],
      ['Latest.yml', null],
      ['latest-linux.yaml', null],
      ['latest-linux.yml.sig', null],
      ['.yml', null],
      [`${'a'.repeat(33)}.yml`, null],
    ];
    for (const [name, parts] of cases) assert.deepEqual(channelFileParts(name), parts, name);
  });

  it('names the platform of electron-updater\'s channel-file suffix', () => {
    assert.deepEqual(['', '-mac', '-linux', '-linux-arm64'].map(platformOfSuffix), ['windows', 'mac', 'linux', 'linux-arm64']);
  });

  it('takes a version only as semver writes it', () => {
    assert.deepEqual(['1.4.2', '2.0.0-beta.1', 'v1.4.2', '1.4', ' 1.4.2', '1.4.2 ', 1, null, `1.0.0-${'a'.repeat(60)}`].map(isVersion), [true, true, false, false, false, false, false, false, false]);
  });
});

describe('a pin below the floor', () => {
  it('is refused with what to do to roll back on purpose', () => {
    assert.equal(
      pinRefusal('0.0.1', '1.1.0'),
      "0.0.1 is below the lowest version the fleet's signer allows (1.1.0). To roll back on purpose, sign the feed again with `update-sign --min-version 0.0.1`, let the kiosks read it (update-check), then pin again",
    );
    assert.match(pinRefusal('1.1.0-beta.1', '1.1.0') ?? '', /^1\.1\.0-beta\.1 is below/);
  });

  it('is allowed at or above the floor, or with no floor known (or one that is not a version)', () => {
    assert.deepEqual([pinRefusal('1.1.0', '1.1.0'), pinRefusal('1.2.0', '1.1.0'), pinRefusal('0.0.1', null), pinRefusal('0.0.1', 'latest'), pinRefusal('x', '1.1.0')], [null, null, null, null, null]);
  });
});

describe('a signed statement against what the kiosk asked for', () => {
  it('fits: the channel, the platform, the current file, in date, at its floor', () => {
    assert.equal(statementProblem('latest-linux.yml', st(), expect()), null);
    assert.equal(statementProblem('latest-linux.yml', st({ pinned: true, version: '1.1.0', minVersion: '1.1.0' }), expect({ pinned: '1.1.0' })), null);
  });

  it('names each mismatch, the first one found', () => {
    const cases: Array<[string, Parameters<typeof statementFor>[1], Partial<FeedExpectation>, string]> = [
      ['channel', { channel: 'beta', platform: 'mac' }, {}, 'f.yml was signed for the "beta" channel; this kiosk follows "latest"'],
      ['platform', { platform: 'windows', pinned: true }, {}, 'f.yml was signed for windows; this kiosk runs linux'],
      ['pinned copy as current', { pinned: true, signedAt: '2020-01-01T00:00:00.000Z' }, {}, "f.yml was signed as the copy of 1.2.0 kept for kiosks pinned to it, not as the channel's current release"],
      ['current as pinned copy', {}, { pinned: '1.2.0' }, "f.yml was signed as the channel's current release, not as the copy of 1.2.0 this kiosk is pinned to"],
      ['another pinned copy', { pinned: true, version: '1.3.0', minVersion: '1.3.0' }, { pinned: '1.2.0' }, 'f.yml was signed as the copy of 1.3.0, not as the copy of 1.2.0 this kiosk is pinned to'],
      ['expired', { version: '0.1.0' }, { nowMs: Date.parse(EXPIRES_AT) }, "f.yml expired at 2026-12-24T18:00:00.000Z (signed 2026-11-24T18:00:00.000Z; this kiosk's clock says 2026-12-24T18:00:00.000Z): sign the feed again with update-sign"],
      ['signed ahead', {}, { nowMs: Date.parse(SIGNED_AT) - FUTURE_TOLERANCE_MS - 1 }, "f.yml was signed at 2026-11-24T18:00:00.000Z, more than a day ahead of this kiosk's clock (2026-11-23T17:59:59.999Z): check the release machine's clock, or this kiosk's"],
      ['below its own floor', { version: '1.1.0', minVersion: '1.2.0' }, {}, 'f.yml offers 1.1.0, below the lowest version its signer allows (1.2.0)'],
      ['older than the newest read', { signedAt: '2026-11-24T17:59:59.999Z' }, { newest: { signedAt: SIGNED_AT, version: '1.2.0', minVersion: '0.1.0' } }, 'f.yml was signed at 2026-11-24T17:59:59.999Z, before the one this kiosk already read (signed 2026-11-24T18:00:00.000Z): an older feed served again is refused'],
      ['pinned below the floor read', { pinned: true, version: '1.0.0', minVersion: '1.0.0' }, { pinned: '1.0.0', newest: { signedAt: SIGNED_AT, version: '1.2.0', minVersion: '1.1.0' } }, `f.yml: ${pinRefusal('1.0.0', '1.1.0')}`],
    ];
    for (const [what, over, asked, message] of cases) assert.equal(statementProblem('f.yml', st(over), expect(asked)), message, what);
  });

  it('takes the same statement again, one signed a day ahead at most, a pinned copy older than the newest read, one a millisecond before it expires', () => {
    const newest = { signedAt: SIGNED_AT, version: '1.2.0', minVersion: '1.0.0' };
    assert.equal(statementProblem('f.yml', st(), expect({ newest })), null);
    assert.equal(statementProblem('f.yml', st(), expect({ nowMs: Date.parse(SIGNED_AT) - FUTURE_TOLERANCE_MS })), null);
    assert.equal(statementProblem('f.yml', st({ pinned: true, version: '1.0.0', minVersion: '1.0.0', signedAt: '2026-01-01T00:00:00.000Z' }), expect({ pinned: '1.0.0', newest })), null);
    assert.equal(statementProblem('f.yml', st(), expect({ nowMs: Date.parse(EXPIRES_AT) - 1 })), null);
  });
});
