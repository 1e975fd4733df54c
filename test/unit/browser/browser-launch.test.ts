/**
 * The browser mode's pure choices: the data folder, which browser opens the page and with which
 * arguments (the host's blank start page, the DevTools protocol on a pipe: no launch code on the command
 * line), and the one line that says why a browser never showed the page.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataDirFrom, userDataDir } from '../../../electron/browser/kiosk-host.ts';
import { browserArgs, explainBrowserExit, findBrowser, noSandboxOptIn, windowKindFor } from '../../../electron/browser/open-browser.ts';
import { fileFor, GUARD_PATH, withGuard } from '../../../electron/browser/server.ts';
import { FIT_WINDOW_PATH } from '../../../electron/browser/fit-window.ts';

describe('browser mode: the data folder', () => {
  it('is AVATAR_KIOSK_DATA, else the folder the app uses under npm start', () => {
    assert.equal(dataDirFrom({ AVATAR_KIOSK_DATA: '/srv/kiosk' }, 'linux', '/home/k'), '/srv/kiosk');
    // A blank variable names no folder (an env file's empty line): the app's own folder.
    assert.equal(dataDirFrom({ AVATAR_KIOSK_DATA: '  ' }, 'linux', '/home/k'), '/home/k/.config/avatar-kiosk');
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

  it('opens an app window on the host\'s start page and a fresh profile, its DevTools protocol on a pipe (never a port), full screen with --kiosk in kiosk mode', () => {
    assert.deepEqual(browserArgs('http://127.0.0.1:5000/start', '/p', 'kiosk', { width: 1080, height: 1920 }), [
      '--user-data-dir=/p',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--auto-accept-camera-and-microphone-capture',
      '--autoplay-policy=no-user-gesture-required',
      '--remote-debugging-pipe',
      '--kiosk',
      '--app=http://127.0.0.1:5000/start',
    ]);
    assert.deepEqual(browserArgs('http://127.0.0.1:5000/start', '/p', 'app', { width: 1280, height: 800 }).slice(-2), ['--window-size=1280,800', '--app=http://127.0.0.1:5000/start#fit=1280x800']);
    assert.deepEqual([windowKindFor('kiosk'), windowKindFor('windowed'), windowKindFor('companion')], ['kiosk', 'app', 'app']);
  });

  it('adds --no-sandbox only when KIOSK_BROWSER_NO_SANDBOX is exactly 1', () => {
    assert.deepEqual([noSandboxOptIn({}), noSandboxOptIn({ KIOSK_BROWSER_NO_SANDBOX: 'yes' }), noSandboxOptIn({ KIOSK_BROWSER_NO_SANDBOX: '1' })], [false, false, true]);
    assert.ok(browserArgs('file:///l', '/p', 'kiosk', { width: 1, height: 1 }, { noSandbox: true }).includes('--no-sandbox'));
    assert.equal(browserArgs('file:///l', '/p', 'kiosk', { width: 1, height: 1 }).includes('--no-sandbox'), false);
  });

  it('says in one line why a browser never showed the page, from its stderr', () => {
    const root = '[6579:6579:1124/172651.175690:ERROR:content/browser/zygote_host/zygote_host_impl_linux.cc:103] Running as root without --no-sandbox is not supported. See https://crbug.com/638180.\n';
    assert.match(explainBrowserExit(root, {}), /^Chromium refuses to run as root without its sandbox, so no window opened\. Run npm start as a normal user; .*KIOSK_BROWSER_NO_SANDBOX=1/);
    const noDisplay = '[1:1:ERROR:ui/ozone/platform/x11/ozone_platform_x11.cc:250] Missing X server or $DISPLAY\n';
    assert.match(explainBrowserExit(noDisplay, {}), /found no display/);
    assert.equal(explainBrowserExit('[1:1:ERROR:x.cc:1] Something odd happened\n', { DISPLAY: ':0' }), 'The browser stopped before it showed the page: Something odd happened');
    assert.match(explainBrowserExit('', { DISPLAY: ':0' }), /said nothing about why/);
    for (const text of [root, noDisplay]) assert.equal(explainBrowserExit(text, {}).includes('\n'), false);
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

describe('browser mode: the input guard in every page', () => {
  // The guard first, then the app window's fit (which does nothing without its #fit= fragment).
  const tag = `<script src="${GUARD_PATH}"></script><script src="${FIT_WINDOW_PATH}"></script>`;
  it('goes first in the head, else right after the doctype, else first; other files are left as they are', () => {
    const html = (text: string) => withGuard(Buffer.from(text), '/r/index.html').toString('utf8');
    assert.equal(html('<!doctype html>\n<html lang="en">\n  <head>\n    <meta charset="utf-8" />'), `<!doctype html>\n<html lang="en">\n  <head>${tag}\n    <meta charset="utf-8" />`);
    assert.equal(html('<!DOCTYPE html><HEAD class="x"><title>a</title>'), `<!DOCTYPE html><HEAD class="x">${tag}<title>a</title>`);
    assert.equal(html('<!doctype html><title>kiosk</title>'), `<!doctype html>${tag}<title>kiosk</title>`);
    assert.equal(html('<p>bare'), `${tag}<p>bare`);
    const js = Buffer.from('export {}; // <head>');
    assert.equal(withGuard(js, '/r/assets/a.js'), js);
  });
});
