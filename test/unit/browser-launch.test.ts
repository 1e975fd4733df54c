/**
 * The browser mode's pure choices: the data folder, which browser opens the page and with which
 * arguments, the launch page that carries the secret (never the command line), and the renderer's
 * secret handling (fragment → sessionStorage, address bar cleaned).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataDirFrom, userDataDir } from '../../electron/browser/kiosk-host.ts';
import { browserArgs, findBrowser, launchPage } from '../../electron/browser/open-browser.ts';
import { fileFor } from '../../electron/browser/server.ts';
import { takeSecret } from '../../renderer/src/app/socket-kiosk.ts';

describe('browser mode: the data folder', () => {
  it('is AVATAR_KIOSK_DATA, else the folder the app uses under npm start', () => {
    assert.equal(dataDirFrom({ AVATAR_KIOSK_DATA: '/srv/kiosk' }, 'linux', '/home/k'), '/srv/kiosk');
    assert.equal(userDataDir('linux', {}, '/home/k'), '/home/k/.config/avatar-kiosk');
    assert.equal(userDataDir('linux', { XDG_CONFIG_HOME: '/cfg' }, '/home/k'), '/cfg/avatar-kiosk');
    assert.equal(userDataDir('darwin', {}, '/Users/k'), '/Users/k/Library/Application Support/avatar-kiosk');
  });
});

describe('browser mode: opening the browser', () => {
  const installed = (...paths: string[]) => (p: string) => paths.includes(p);

  it('takes KIOSK_BROWSER when it exists, `none` for no browser, else the first installed candidate', () => {
    assert.equal(findBrowser({}, ['/usr/bin/chromium', '/usr/bin/google-chrome'], installed('/usr/bin/google-chrome')), '/usr/bin/google-chrome');
    assert.equal(findBrowser({}, ['/usr/bin/chromium'], installed()), null);
    assert.equal(findBrowser({ KIOSK_BROWSER: 'none' }, ['/usr/bin/chromium'], installed('/usr/bin/chromium')), null);
    assert.equal(findBrowser({ KIOSK_BROWSER: '/opt/chrome' }, ['/usr/bin/chromium'], installed('/opt/chrome', '/usr/bin/chromium')), '/opt/chrome');
    assert.equal(findBrowser({ KIOSK_BROWSER: '/opt/missing' }, ['/usr/bin/chromium'], installed('/usr/bin/chromium')), null);
  });

  it('opens an app window on a fresh profile, full screen with --kiosk in kiosk mode', () => {
    assert.deepEqual(browserArgs('file:///p/launch.html', '/p', 'kiosk', { width: 1080, height: 1920 }), [
      '--user-data-dir=/p',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--auto-accept-camera-and-microphone-capture',
      '--autoplay-policy=no-user-gesture-required',
      '--kiosk',
      '--app=file:///p/launch.html',
    ]);
    assert.deepEqual(browserArgs('file:///p/launch.html', '/p', 'windowed', { width: 1280, height: 800 }).slice(-2), ['--window-size=1280,800', '--app=file:///p/launch.html']);
  });

  it('puts the secret URL in a launch page, escaped, with no referrer', () => {
    assert.equal(
      launchPage('http://127.0.0.1:5000/#key=a"b&c<d'),
      '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=http://127.0.0.1:5000/#key=a&quot;b&amp;c&lt;d"><title>Avatar Kiosk</title>\n',
    );
  });
});

describe('browser mode: files served', () => {
  it('maps / to index.html and refuses anything outside the renderer folder', () => {
    assert.equal(fileFor('/', '/r'), '/r/index.html');
    assert.equal(fileFor('/assets/a.js?x=1', '/r'), '/r/assets/a.js');
    // Every way up is folded at the renderer folder: the answer is a file inside it, or none.
    for (const path of ['/../etc/passwd', '/%2e%2e/etc/passwd', '/..%2f..%2fetc/passwd', '/..%5c..%5cetc/passwd', '//etc/passwd']) {
      const file = fileFor(path, '/r');
      assert.ok(file === null || file.startsWith('/r/'), `${path} → ${file}`);
    }
    assert.equal(fileFor('/a%00.js', '/r'), null);
    assert.equal(fileFor('/%E0%A4%A', '/r'), null);
  });
});

describe('browser mode: the page\'s secret', () => {
  function fakeWindow(hash: string, stored: string | null = null) {
    const storage = new Map<string, string>(stored ? [['kiosk-socket-secret', stored]] : []);
    const replaced: string[] = [];
    const win = {
      location: { hash, pathname: '/', search: '' },
      history: { replaceState: (_s: unknown, _t: string, url: string) => void replaced.push(url) },
      sessionStorage: { getItem: (k: string) => storage.get(k) ?? null, setItem: (k: string, v: string) => void storage.set(k, v) },
    };
    return { win: win as unknown as Parameters<typeof takeSecret>[0], storage, replaced };
  }

  it('takes it from the fragment, cleans the address bar and keeps it for a reload of this tab', () => {
    const { win, storage, replaced } = fakeWindow('#key=s3cret');
    assert.equal(takeSecret(win), 's3cret');
    assert.deepEqual(replaced, ['/']);
    assert.equal(storage.get('kiosk-socket-secret'), 's3cret');
  });

  it('after a reload, reads it from this tab\'s storage; with neither, there is none', () => {
    assert.equal(takeSecret(fakeWindow('', 'kept').win), 'kept');
    assert.equal(takeSecret(fakeWindow('').win), null);
  });
});
