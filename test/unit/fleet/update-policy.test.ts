import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installDecision, installModel, offerAccepted, stagingBucket, updateFeed } from '../../../electron/fleet/update-policy.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { updateSchema } from '../../../electron/kiosk/fleet-config.ts';

const settings = (s: Record<string, unknown>) => updateSchema.parse(s);

describe('update policy', () => {
  it('reads the channel feed, or the pinned version\'s folder (downgrade allowed), or nothing', () => {
    assert.equal(updateFeed(undefined, '1.0.0'), null);
    assert.equal(updateFeed(settings({}), '1.0.0'), null);
    assert.deepEqual(updateFeed(settings({ url: 'https://updates.example.com/kiosk/', channel: 'beta' }), '1.0.0'), {
      url: 'https://updates.example.com/kiosk',
      channel: 'beta',
      allowDowngrade: false,
      pinned: null,
    });
    assert.deepEqual(updateFeed(settings({ url: 'https://updates.example.com/kiosk', pinVersion: '1.4.2' }), '1.5.0'), {
      url: 'https://updates.example.com/kiosk/1.4.2',
      channel: 'latest',
      allowDowngrade: true,
      pinned: '1.4.2',
    });
    assert.equal(updateFeed(settings({ url: 'https://updates.example.com/kiosk', pinVersion: '1.4.2' }), '1.4.2'), null, 'already there');
  });

  it('accepts only the pinned version when pinned, else follows the staged rollout by a stable bucket', () => {
    const pinned = updateFeed(settings({ url: 'https://u.example', pinVersion: '1.4.2' }), '1.5.0')!;
    assert.deepEqual(offerAccepted(pinned, { version: '1.4.2' }, 99), { accept: true, reason: 'the pinned version 1.4.2' });
    assert.deepEqual(offerAccepted(pinned, { version: '1.5.1' }, 0), { accept: false, reason: 'pinned to 1.4.2; the feed offers 1.5.1' });
    const open = updateFeed(settings({ url: 'https://u.example' }), '1.0.0')!;
    assert.equal(offerAccepted(open, { version: '1.1.0' }, 80).accept, true);
    assert.deepEqual(offerAccepted(open, { version: '1.1.0', stagingPercentage: 20 }, 19.9), { accept: true, reason: 'inside the 20 % stage (kiosk at 19.9)' });
    assert.deepEqual(offerAccepted(open, { version: '1.1.0', stagingPercentage: '20' }, 20), { accept: false, reason: 'outside the 20 % stage (kiosk at 20.0)' });
    assert.equal(offerAccepted(open, { version: '1.1.0', stagingPercentage: 0 }, 0).accept, false);
    assert.equal(offerAccepted(open, { version: '1.1.0', stagingPercentage: 100 }, 99.99).accept, true);
    // Stable and spread: the same id always lands in the same place; 1000 ids fill a 25 % stage to about a quarter.
    assert.equal(stagingBucket('lobby-3'), stagingBucket('lobby-3'));
    const inStage = Array.from({ length: 1000 }, (_, i) => stagingBucket(`kiosk-${i}`)).filter((b) => b < 25).length;
    assert.ok(inStage > 200 && inStage < 300, `${inStage} of 1000 in a 25 % stage`);
  });

  it('installs never during a call, at once while closed, else after the idle time (retrying by closing time)', () => {
    const base = { nowMs: 10_000_000, lastActivityMs: 10_000_000 - 5 * 60_000, idleMinutes: 30 };
    assert.deepEqual(installDecision({ ...base, inCall: true, opening: { open: false, nextChangeAtMs: null, nextOpenAtMs: null } }), { install: false, reason: 'a call is under way', retryAtMs: null });
    assert.deepEqual(installDecision({ ...base, inCall: false, opening: { open: false, nextChangeAtMs: 1, nextOpenAtMs: 1 } }), { install: true, reason: 'outside the opening hours', retryAtMs: null });
    assert.deepEqual(installDecision({ ...base, inCall: false, opening: null }), { install: false, reason: 'the kiosk is in use', retryAtMs: base.lastActivityMs + 30 * 60_000 });
    // Open, closing in 10 minutes (before the idle time is up): look again at closing.
    assert.deepEqual(installDecision({ ...base, inCall: false, opening: { open: true, nextChangeAtMs: base.nowMs + 10 * 60_000, nextOpenAtMs: null } }).retryAtMs, base.nowMs + 10 * 60_000);
    assert.deepEqual(installDecision({ ...base, nowMs: base.lastActivityMs + 30 * 60_000, inCall: false, opening: null }), { install: true, reason: 'idle for 30 minutes', retryAtMs: null });
  });

  it('refuses an update feed over plain http to another computer, and a malformed pin', () => {
    const bad = (update: unknown) => {
      try {
        resolveConfig({ update }, {}, { readText: () => 'p' });
        return 'accepted';
      } catch (error) {
        return (error as Error).message;
      }
    };
    assert.match(bad({ url: 'http://updates.example.com/kiosk' }), /"update\.url".*must start with https:\/\//);
    assert.equal(bad({ url: 'http://127.0.0.1:8080/feed' }), 'accepted');
    assert.match(bad({ url: 'https://u.example', pinVersion: 'latest' }), /"update\.pinVersion".*must be a version such as "1\.4\.2"/);
  });
});

describe('update policy: the feed URL and staging percentages as written', () => {
  it('drops every trailing slash of the feed URL', () => {
    assert.equal(updateFeed(settings({ url: 'https://updates.example/kiosk//' }), '1.0.0')?.url, 'https://updates.example/kiosk');
    assert.equal(
      updateFeed(settings({ url: 'https://updates.example/kiosk//', pinVersion: '1.2.3' }), '1.0.0')?.url,
      'https://updates.example/kiosk/1.2.3',
    );
  });

  const feed = updateFeed(settings({ url: 'https://updates.example/kiosk' }), '1.0.0')!;
  it('an offer without a staging percentage (absent, null or empty) is for everyone', () => {
    for (const stagingPercentage of [undefined, null, '']) {
      assert.deepEqual(offerAccepted(feed, { version: '2.0.0', stagingPercentage: stagingPercentage as string | undefined }, 99.9), { accept: true, reason: 'no staged rollout' });
    }
  });

  it('a staging percentage that is not a number is ignored (everyone), and a numeric text is read', () => {
    assert.deepEqual(offerAccepted(feed, { version: '2.0.0', stagingPercentage: 'soon' }, 99.9), { accept: true, reason: 'no valid staging percentage' });
    assert.deepEqual(offerAccepted(feed, { version: '2.0.0', stagingPercentage: '25' }, 10), { accept: true, reason: 'inside the 25 % stage (kiosk at 10.0)' });
    assert.deepEqual(offerAccepted(feed, { version: '2.0.0', stagingPercentage: '25' }, 25), { accept: false, reason: 'outside the 25 % stage (kiosk at 25.0)' });
  });
});

describe('install model', () => {
  const model = (over: Partial<Parameters<typeof installModel>[0]>) => installModel({ platform: 'linux', isPackaged: true, packageType: null, appImage: false, ...over }).kind;
  it('updates in the app without an administrator on Windows (per-user NSIS), macOS (zip) and from an AppImage', () => {
    assert.equal(model({ platform: 'win32' }), 'nsis-per-user');
    assert.equal(model({ platform: 'darwin' }), 'mac-zip');
    assert.equal(model({ appImage: true }), 'appimage');
  });
  it('leaves a deb or rpm to the OS package manager, and a checkout or unpacked build alone', () => {
    assert.equal(model({ packageType: 'deb\n' }), 'os-package-manager');
    assert.equal(model({ packageType: 'rpm' }), 'os-package-manager');
    assert.equal(model({ isPackaged: false, platform: 'win32' }), 'not-packaged');
    assert.equal(model({}), 'unsupported');
  });
});
