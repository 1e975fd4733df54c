import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  APP_ORIGIN,
  CONTENT_SECURITY_POLICY,
  allowNavigation,
  allowPermissionCheck,
  allowPermissionRequest,
  downloadTarget,
  isOwnOrigin,
  mimeTypeFor,
  resolveAppFile,
  withSecurityHeaders,
} from '../../../electron/main/page-policy.ts';
import { originOf } from '../../../electron/main/ipc.ts';

const PAGE = `${APP_ORIGIN}/index.html`;

describe('policy: permissions', () => {
  it('grants media (audio/video) to our own page only', () => {
    assert.equal(allowPermissionRequest('media', { requestingUrl: PAGE, mediaTypes: ['audio'] }, PAGE), true);
    assert.equal(allowPermissionRequest('media', { requestingUrl: PAGE, mediaTypes: ['audio', 'video'] }, PAGE), true);
    assert.equal(allowPermissionRequest('media', { requestingUrl: 'https://evil.example.com/', mediaTypes: ['audio'] }, PAGE), false);
    assert.equal(allowPermissionRequest('media', { requestingUrl: PAGE, mediaTypes: ['audio'] }, 'https://evil.example.com/'), false);
    assert.equal(allowPermissionRequest('media', { requestingUrl: 'file:///tmp/x.html', mediaTypes: ['audio'] }, 'file:///tmp/x.html'), false);
  });
  it('denies every other permission, even to our page', () => {
    for (const p of ['notifications', 'geolocation', 'display-capture', 'clipboard-read', 'midiSysex', 'hid', 'openExternal', 'fullscreen', 'unknown']) {
      assert.equal(allowPermissionRequest(p, { requestingUrl: PAGE }, PAGE), false, p);
      assert.equal(allowPermissionCheck(p, APP_ORIGIN, {}), false, p);
    }
  });
  it('denies a media request for anything but audio/video (e.g. screen capture)', () => {
    assert.equal(allowPermissionRequest('media', { requestingUrl: PAGE, mediaTypes: ['audio', 'screen'] }, PAGE), false);
  });
  it('permission checks: media from our origin only', () => {
    assert.equal(allowPermissionCheck('media', APP_ORIGIN, { mediaType: 'video' }), true);
    assert.equal(allowPermissionCheck('media', 'https://evil.example.com', { mediaType: 'video' }), false);
    assert.equal(allowPermissionCheck('media', 'app://kiosk.evil', { mediaType: 'audio' }), false);
  });
});

describe('policy: origins and navigation', () => {
  it('isOwnOrigin matches app://kiosk exactly', () => {
    assert.equal(isOwnOrigin(PAGE), true);
    assert.equal(isOwnOrigin('app://kiosk/'), true);
    for (const u of ['app://other/index.html', 'app://kiosk.evil/', 'https://kiosk/', 'file:///index.html', '', null, 'not a url']) {
      assert.equal(isOwnOrigin(u), false, String(u));
    }
  });
  it('originOf gives app://kiosk for our page (URL.origin would say "null")', () => {
    assert.equal(originOf(PAGE), APP_ORIGIN);
    assert.equal(originOf('https://a.example.com:8443/x?y'), 'https://a.example.com:8443');
    assert.equal(originOf('nonsense'), null);
  });
  it('never allows navigation', () => {
    assert.equal(allowNavigation('https://example.com'), false);
    assert.equal(allowNavigation(PAGE), false);
  });
});

describe('policy: app:// file serving', () => {
  const root = '/opt/kiosk/out/renderer';
  it('maps our URLs under the renderer root', () => {
    assert.equal(resolveAppFile(`${APP_ORIGIN}/index.html`, root), `${root}/index.html`);
    assert.equal(resolveAppFile(`${APP_ORIGIN}/`, root), `${root}/index.html`);
    assert.equal(resolveAppFile(`${APP_ORIGIN}/assets/app-123.js?v=1#x`, root), `${root}/assets/app-123.js`);
  });
  it('refuses traversal, other hosts and other schemes', () => {
    for (const u of [
      `${APP_ORIGIN}/../main/index.js`,
      `${APP_ORIGIN}/%2e%2e/main/index.js`,
      `${APP_ORIGIN}/assets/%2e%2e%2f%2e%2e%2fmain%2findex.js`,
      `${APP_ORIGIN}/%00.html`,
      `${APP_ORIGIN}/%E0%A4%A`,
      'app://other/index.html',
      'file:///etc/passwd',
      'nonsense',
    ]) {
      const f = resolveAppFile(u, root);
      assert.ok(f === null || f.startsWith(root + '/'), `${u} → ${f}`);
      if (u.includes('main')) assert.equal(f === null || !f.includes('/out/main/'), true, u);
    }
    assert.equal(resolveAppFile('app://other/index.html', root), null);
    assert.equal(resolveAppFile('file:///etc/passwd', root), null);
  });
  it('mime types', () => {
    assert.equal(mimeTypeFor('/a/index.html'), 'text/html; charset=utf-8');
    assert.equal(mimeTypeFor('/a/x.JS'), 'text/javascript; charset=utf-8');
    assert.equal(mimeTypeFor('/a/x.unknown'), 'application/octet-stream');
  });
});

describe('policy: downloads', () => {
  const none = () => false;
  it('saves only our page’s blob: exports, into the downloads folder', () => {
    assert.equal(downloadTarget('blob:app://kiosk/5f1c', 'ledger-2026-11.csv', '/home/k/Downloads', none), join('/home/k/Downloads', 'ledger-2026-11.csv'));
    assert.equal(downloadTarget('https://evil.example.com/a.csv', 'a.csv', '/d', none), null);
    assert.equal(downloadTarget('blob:https://evil.example.com/5f1c', 'a.csv', '/d', none), null);
    assert.equal(downloadTarget('app://kiosk/index.html', 'index.html', '/d', none), null);
  });
  it('strips paths and odd characters from the name, and numbers it when taken', () => {
    assert.equal(downloadTarget('blob:app://kiosk/1', '../../etc/passwd', '/d', none), join('/d', 'passwd'));
    assert.equal(downloadTarget('blob:app://kiosk/1', 'C:\\Windows\\ledger *?.csv', '/d', none), join('/d', 'ledger_.csv'));
    assert.equal(downloadTarget('blob:app://kiosk/1', '...', '/d', none), join('/d', 'download'));
    const taken = new Set([join('/d', 'ledger.csv'), join('/d', 'ledger-1.csv')]);
    assert.equal(downloadTarget('blob:app://kiosk/1', 'ledger.csv', '/d', (p) => taken.has(p)), join('/d', 'ledger-2.csv'));
  });
});

describe('policy: CSP', () => {
  it('is strict: no unsafe-eval, no inline scripts, no plugins/frames', () => {
    assert.match(CONTENT_SECURITY_POLICY, /default-src 'none'/);
    assert.match(CONTENT_SECURITY_POLICY, /script-src 'self'(;|$)/);
    assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-eval/);
    assert.match(CONTENT_SECURITY_POLICY, /object-src 'none'/);
    assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
  });
  it('replaces a server-sent CSP and keeps other headers', () => {
    const h = withSecurityHeaders({ 'content-security-policy': ["default-src *"], 'X-Other': 'y' });
    assert.equal(h['content-security-policy'], undefined);
    assert.deepEqual(h['Content-Security-Policy'], [CONTENT_SECURITY_POLICY]);
    assert.deepEqual(h['X-Other'], ['y']);
  });
});

describe('built preload (out/preload/index.cjs)', () => {
  const file = join(import.meta.dirname, '../../../out/preload/index.cjs');
  it('is one CommonJS file that requires only electron', (t) => {
    if (!existsSync(file)) {
      t.skip('out/preload/index.cjs is not built (run `npx electron-vite build` first)');
      return;
    }
    const code = readFileSync(file, 'utf8');
    const requires = [...code.matchAll(/\brequire\(\s*["'`]([^"'`]+)["'`]\s*\)/g)].map((m) => m[1]);
    assert.ok(requires.length > 0);
    assert.deepEqual([...new Set(requires)], ['electron']);
    assert.doesNotMatch(code, /\brequire\(\s*[^"'`\s]/, 'no dynamic require');
    assert.doesNotMatch(code, /^\s*(import|export)\s/m, 'no ESM syntax');
    assert.doesNotMatch(code, /exposeInMainWorld\(\s*["']ipcRenderer/, 'ipcRenderer is never exposed');
  });
});
