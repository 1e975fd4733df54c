/**
 * Where each operating system keeps a user's application folders (core/user-folders.ts), one rule for
 * Electron's userData, the browser mode, the fleet console and the download cache: the platform's own
 * variable when set, its usual folder under the home otherwise, an empty XDG variable read as unset; and the
 * one reading of AVATAR_KIOSK_DATA.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataDirFromEnv, userCacheDir, userConfigRoot } from '../../../electron/core/user-folders.ts';

const HOME = '/home/ada';

describe('userConfigRoot', () => {
  it('on Windows is APPDATA, or AppData/Roaming under the home when it is not set', () => {
    assert.equal(userConfigRoot({ APPDATA: 'D:/Roaming', XDG_CONFIG_HOME: '/x' }, 'win32', HOME), 'D:/Roaming');
    assert.equal(userConfigRoot({}, 'win32', HOME), '/home/ada/AppData/Roaming');
  });
  it('on macOS is Library/Application Support under the home, whatever XDG says', () => {
    assert.equal(userConfigRoot({ XDG_CONFIG_HOME: '/x', APPDATA: '/y' }, 'darwin', HOME), '/home/ada/Library/Application Support');
  });
  it('elsewhere is XDG_CONFIG_HOME, or .config under the home when it is unset or empty', () => {
    assert.equal(userConfigRoot({ XDG_CONFIG_HOME: '/srv/config', APPDATA: '/y' }, 'linux', HOME), '/srv/config');
    assert.equal(userConfigRoot({ XDG_CONFIG_HOME: '' }, 'linux', HOME), '/home/ada/.config');
    assert.equal(userConfigRoot({}, 'freebsd', HOME), '/home/ada/.config');
  });
});

describe('userCacheDir', () => {
  it("on Windows is avatar-kiosk/Cache under LOCALAPPDATA, or under the home's AppData/Local", () => {
    assert.equal(userCacheDir({ LOCALAPPDATA: 'D:/Local', XDG_CACHE_HOME: '/x' }, 'win32', HOME), 'D:/Local/avatar-kiosk/Cache');
    assert.equal(userCacheDir({}, 'win32', HOME), '/home/ada/AppData/Local/avatar-kiosk/Cache');
  });
  it('on macOS is Library/Caches/avatar-kiosk under the home', () => {
    assert.equal(userCacheDir({ XDG_CACHE_HOME: '/x', LOCALAPPDATA: '/y' }, 'darwin', HOME), '/home/ada/Library/Caches/avatar-kiosk');
  });
  it('elsewhere is avatar-kiosk under XDG_CACHE_HOME, or under .cache when it is unset or empty', () => {
    assert.equal(userCacheDir({ XDG_CACHE_HOME: '/srv/cache', LOCALAPPDATA: '/y' }, 'linux', HOME), '/srv/cache/avatar-kiosk');
    assert.equal(userCacheDir({ XDG_CACHE_HOME: '' }, 'linux', HOME), '/home/ada/.cache/avatar-kiosk');
    assert.equal(userCacheDir({}, 'linux', HOME), '/home/ada/.cache/avatar-kiosk');
  });
});

describe('dataDirFromEnv', () => {
  it('is the folder AVATAR_KIOSK_DATA names, trimmed; null when it is unset or blank', () => {
    assert.equal(dataDirFromEnv({ AVATAR_KIOSK_DATA: '  /var/lib/kiosk ' }), '/var/lib/kiosk');
    assert.equal(dataDirFromEnv({ AVATAR_KIOSK_DATA: '/data' }), '/data');
    for (const env of [{}, { AVATAR_KIOSK_DATA: '' }, { AVATAR_KIOSK_DATA: ' \t ' }, { OTHER: '/x' }]) assert.equal(dataDirFromEnv(env), null);
  });
});
