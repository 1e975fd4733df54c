/**
 * What the kiosk page may do, as data: its Content-Security-Policy, the headers sent with every file of it,
 * and the files' MIME types. Electron-free, because two hosts serve the page: main (app://kiosk,
 * electron/main/security.ts) and the browser mode (http://127.0.0.1, electron/browser/).
 */

/**
 * The renderer's CSP, sent as a header on everything app:// serves and on every http(s) response. It
 * matches renderer/index.html's meta policy (browsers enforce both), made stricter where the page does
 * not need more (default-src 'none', no frames/forms/plugins). Network: only the Agora Web SDK 4.x hosts
 * (*.agora.io, *.sd-rtn.com, any port, per Agora's firewall list); the demo engine needs no network and
 * the renderer never talks to the service (main does). `'self'` is our own bundled files only: app://kiosk
 * in Electron; in the browser mode the page's 127.0.0.1 origin, which also covers its same-origin socket.
 * Evaluated with Google's CSP evaluator in test/security/electronegativity.ts.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  // Svelte transitions and the RTC SDK set inline styles on elements.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob: mediastream:",
  "font-src 'self' data:",
  'connect-src \'self\' https://*.agora.io:* wss://*.agora.io:* https://*.sd-rtn.com:* wss://*.sd-rtn.com:*',
  // agora-rtc-sdk-ng runs an internal worker from a blob: URL.
  "worker-src 'self' blob:",
  "manifest-src 'self'",
  "object-src 'none'",
  "frame-src 'none'",
  "child-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Response headers we add to everything the page loads. */
export function securityHeaders(): Record<string, string> {
  return {
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Referrer-Policy': 'no-referrer',
  };
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.wasm': 'application/wasm',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.ico': 'image/x-icon',
};

export function mimeTypeFor(file: string): string {
  const dot = file.lastIndexOf('.');
  return (dot >= 0 && MIME[file.slice(dot).toLowerCase()]) || 'application/octet-stream';
}
