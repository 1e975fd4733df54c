/**
 * An app window that fits the screen it opens on. `npm start`'s window is opened at the configured size
 * (`window.width` × `window.height`, a portrait 1080 × 1920 by default); on a 1280 × 800 desktop that put
 * "Tap to talk" below the screen's edge (measured under Xvfb with Debian's Chromium, no window manager).
 *
 * The host cannot ask the screen's size portably (xrandr and xdpyinfo are often absent, Wayland has
 * neither), but the page knows it: `screen.availWidth/availHeight`. And Chromium lets an `--app` window's
 * own page size it: `window.resizeTo` took the window from 1080 × 1920 to 450 × 800 under Xvfb at
 * 1280 × 800 (Chromium 1xx, measured with xdotool). So the host's start page (browser mode only: Electron
 * never loads it) runs this script, which scales the configured size down to the available screen,
 * keeping its aspect, and moves the window onto it. The size comes in the start page's fragment
 * (`#fit=<w>x<h>`, never sent to the server), put there for app windows only: a `--kiosk` window is full
 * screen already and is left alone.
 *
 * Plain JavaScript kept as text, like input-guard.ts; test/unit/browser/fit-window.test.ts runs this text.
 */

/**
 * A window that is not on the screen yet may ignore the first resize (its page can load before the window
 * is mapped), so the script asks again, every FIT_RETRY_MS for at most FIT_TRIES times, until the window
 * has the size. It runs on the start page and on the kiosk's page: when the host's session cookie is there
 * before the browser's first request, /start answers with a redirect, the start page never shows, and the
 * fragment rides the redirect to the kiosk's page (a redirect without a fragment keeps the request's).
 */
export const FIT_TRIES = 20;
export const FIT_RETRY_MS = 250;

/** Where the host serves the script (same origin, so the page's CSP allows it). */
export const FIT_WINDOW_PATH = '/fit-window.js';

/** The start page's fragment that asks for the fit: `#fit=1080x1920`. */
export function fitFragment(size: { width: number; height: number }): string {
  return `#fit=${Math.round(size.width)}x${Math.round(size.height)}`;
}

/** The size that fits: the configured one scaled down (never up) to the available screen, aspect kept. */
export function fittedSize(wanted: { width: number; height: number }, available: { width: number; height: number }): { width: number; height: number } {
  const scale = Math.min(1, available.width / wanted.width, available.height / wanted.height);
  return { width: Math.floor(wanted.width * scale), height: Math.floor(wanted.height * scale) };
}

export const FIT_WINDOW_SOURCE = `(function (win) {
  var m = /^#fit=(\\d{2,5})x(\\d{2,5})$/.exec(String(win.location.hash || ''));
  if (!m) return;
  var w = Number(m[1]), h = Number(m[2]), tries = 0;
  function fit() {
    var s = win.screen, aw = Number(s.availWidth), ah = Number(s.availHeight);
    if (!(aw > 0 && ah > 0)) return true;
    var scale = Math.min(1, aw / w, ah / h);
    var fw = Math.floor(w * scale), fh = Math.floor(h * scale);
    if (win.outerWidth !== fw || win.outerHeight !== fh) win.resizeTo(fw, fh);
    var left = Number(s.availLeft) || 0, top = Number(s.availTop) || 0;
    var x = Math.min(Math.max(win.screenX, left), left + aw - fw), y = Math.min(Math.max(win.screenY, top), top + ah - fh);
    if (x !== win.screenX || y !== win.screenY) win.moveTo(x, y);
    return win.outerWidth === fw && win.outerHeight === fh;
  }
  (function again() {
    if (!fit() && ++tries < ${FIT_TRIES}) win.setTimeout(again, ${FIT_RETRY_MS});
  })();
})(window);
`;
