/**
 * How a kiosk is updated, read from how it was installed (what the fleet status's `update.model` reports
 * and what decides whether the app updates itself): each platform and packaging, with the reason staff see
 * when the app does not update itself.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { installModel } from '../../../electron/fleet/update-policy.ts';

const packaged = { isPackaged: true, packageType: null, appImage: false };

describe('how a kiosk is updated', () => {
  it('from a checkout: nothing to update', () => {
    assert.deepEqual(installModel({ platform: 'win32', isPackaged: false, packageType: null, appImage: false }), { inApp: false, kind: 'not-packaged', why: 'running from a checkout: nothing to update' });
  });

  it('Windows (per-user NSIS) and macOS (zip) update themselves', () => {
    assert.deepEqual(installModel({ ...packaged, platform: 'win32' }), { inApp: true, kind: 'nsis-per-user' });
    assert.deepEqual(installModel({ ...packaged, platform: 'darwin' }), { inApp: true, kind: 'mac-zip' });
  });

  it("Linux packages (deb, rpm, pacman) are left to the system's package manager", () => {
    for (const type of ['deb', 'rpm', 'pacman', ' deb\n']) {
      const kind = type.trim();
      assert.deepEqual(installModel({ ...packaged, platform: 'linux', packageType: type, appImage: true }), {
        inApp: false,
        kind: 'os-package-manager',
        why: `installed as a ${kind} package: updated by the system's package manager (apt repository, unattended-upgrades or MDM), not by the app`,
      });
    }
  });

  it('a Linux AppImage updates itself; an unpacked Linux build cannot', () => {
    assert.deepEqual(installModel({ ...packaged, platform: 'linux', appImage: true }), { inApp: true, kind: 'appimage' });
    assert.deepEqual(installModel({ ...packaged, platform: 'linux', packageType: 'snap' }), { inApp: false, kind: 'unsupported', why: 'an unpacked Linux build cannot update itself; install the deb' });
  });

  it('any other platform has no updater, and says which platform', () => {
    assert.deepEqual(installModel({ ...packaged, platform: 'freebsd', appImage: true }), { inApp: false, kind: 'unsupported', why: 'no updater for freebsd' });
  });
});
