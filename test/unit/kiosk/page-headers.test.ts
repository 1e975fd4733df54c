/**
 * What the kiosk page may do (electron/kiosk/page-headers.ts), read the way a browser reads it: the
 * Content-Security-Policy as directives, the headers every file of the page gets, and the content type a
 * file is served with.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONTENT_SECURITY_POLICY, mimeTypeFor, securityHeaders } from '../../../electron/kiosk/page-headers.ts';

/** A policy as a browser parses it: directive name → its sources. */
function directives(policy: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out.set(name, sources);
  }
  return out;
}

const AGORA = ['https://*.agora.io:*', 'wss://*.agora.io:*', 'https://*.sd-rtn.com:*', 'wss://*.sd-rtn.com:*'];

describe('CONTENT_SECURITY_POLICY: what the page may load', () => {
  const csp = directives(CONTENT_SECURITY_POLICY);

  it('nothing by default; scripts, manifest only from our own files; no plugins, frames, forms or base URL', () => {
    assert.deepEqual(csp.get('default-src'), ["'none'"]);
    assert.deepEqual(csp.get('script-src'), ["'self'"]);
    assert.deepEqual(csp.get('manifest-src'), ["'self'"]);
    for (const name of ['object-src', 'frame-src', 'child-src', 'base-uri', 'form-action', 'frame-ancestors']) {
      assert.deepEqual(csp.get(name), ["'none'"], name);
    }
  });

  it('inline styles (Svelte transitions, the RTC SDK), images and fonts from data:, media from blobs and streams', () => {
    assert.deepEqual(csp.get('style-src'), ["'self'", "'unsafe-inline'"]);
    assert.deepEqual(csp.get('img-src'), ["'self'", 'data:', 'blob:']);
    assert.deepEqual(csp.get('media-src'), ["'self'", 'blob:', 'mediastream:']);
    assert.deepEqual(csp.get('font-src'), ["'self'", 'data:']);
    assert.deepEqual(csp.get('worker-src'), ["'self'", 'blob:']);
  });

  it('the network: our own origin and the Agora Web SDK hosts on any port, nothing else', () => {
    assert.deepEqual(csp.get('connect-src'), ["'self'", ...AGORA]);
  });

  it('exactly these fifteen directives, each once, separated as a browser expects', () => {
    assert.equal(csp.size, 15);
    assert.equal(CONTENT_SECURITY_POLICY.split('; ').length, 15);
  });

});

describe('securityHeaders: sent with every file of the page', () => {
  it('the policy, no MIME sniffing, an opener of our own origin only, no referrer', () => {
    assert.deepEqual(securityHeaders(), {
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Referrer-Policy': 'no-referrer',
    });
  });

  it('a fresh object each time (a caller adding its own headers changes no other response)', () => {
    const first = securityHeaders();
    first['X-Extra'] = '1';
    assert.equal(securityHeaders()['X-Extra'], undefined);
  });
});

describe('mimeTypeFor: the content type a file is served with', () => {
  const TYPES: [string, string][] = [
    ['index.html', 'text/html; charset=utf-8'],
    ['assets/main-1a2b.js', 'text/javascript; charset=utf-8'],
    ['worker.mjs', 'text/javascript; charset=utf-8'],
    ['assets/style.css', 'text/css; charset=utf-8'],
    ['manifest.json', 'application/json'],
    ['logo.svg', 'image/svg+xml'],
    ['a.png', 'image/png'],
    ['a.jpg', 'image/jpeg'],
    ['a.jpeg', 'image/jpeg'],
    ['a.webp', 'image/webp'],
    ['font.woff2', 'font/woff2'],
    ['font.woff', 'font/woff'],
    ['engine.wasm', 'application/wasm'],
    ['chime.mp3', 'audio/mpeg'],
    ['chime.wav', 'audio/wav'],
    ['attract.mp4', 'video/mp4'],
    ['attract.webm', 'video/webm'],
    ['favicon.ico', 'image/x-icon'],
  ];

  it('by the file name\'s last extension', () => {
    for (const [file, type] of TYPES) assert.equal(mimeTypeFor(file), type, file);
    assert.equal(mimeTypeFor('/srv/out/renderer/assets/app.min.js'), 'text/javascript; charset=utf-8');
    assert.equal(mimeTypeFor('archive.js.map'), 'application/octet-stream');
  });

  it('whatever the extension\'s case', () => {
    assert.equal(mimeTypeFor('INDEX.HTML'), 'text/html; charset=utf-8');
    assert.equal(mimeTypeFor('Photo.JpEg'), 'image/jpeg');
  });

  it('a name that is only an extension is still typed by it', () => {
    assert.equal(mimeTypeFor('.css'), 'text/css; charset=utf-8');
  });

  it('unknown, missing or empty extensions are served as bytes, never guessed', () => {
    for (const file of ['README', 'a.txt', 'a.', 'js', 'html', '', 'a.toString', 'a.__proto__', 'a.constructor']) {
      assert.equal(mimeTypeFor(file), 'application/octet-stream', file);
    }
  });
});
