/**
 * Security policy decisions as pure functions (Electron-free, unit-tested in test/unit/main/ipc-policy.test.ts);
 * security.ts and window.ts apply them to Electron's session and webContents.
 *
 * Why a custom `app://kiosk` scheme rather than file://: every file on disk shares the file:// origin, so
 * a permission or IPC check on "our origin" could not tell our page from any other local HTML; file://
 * also gives no place to set response headers. A standard, secure, privileged scheme gives the page a
 * real origin (checked by IPC and permission handlers), a secure context (getUserMedia needs one), and
 * lets us attach the CSP to every response we serve. Only files under out/renderer are served.
 */
import { join, normalize, relative, resolve, sep, isAbsolute } from 'node:path';

export const APP_SCHEME = 'app';
export const APP_HOST = 'kiosk';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;

// The CSP and headers are shared with the browser mode (electron/browser/), so they live Electron-free in kiosk/.
export { CONTENT_SECURITY_POLICY, mimeTypeFor, securityHeaders } from '../kiosk/page-headers.ts';
import { securityHeaders } from '../kiosk/page-headers.ts';

/** Merge our CSP into a response's headers (replacing any CSP a server sent: ours is stricter). */
export function withSecurityHeaders(headers: Record<string, string[] | string> | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (k.toLowerCase() === 'content-security-policy') continue;
    out[k] = Array.isArray(v) ? v : [v];
  }
  for (const [k, v] of Object.entries(securityHeaders())) out[k] = [v];
  return out;
}

export function isOwnOrigin(url: string | undefined | null): boolean {
  if (!url) return false;
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST;
  } catch {
    return false;
  }
}

/**
 * Permission requests: only `media` (microphone/camera), only audio/video, only from our own page.
 * Everything else (notifications, geolocation, clipboard, midi, hid, display capture…) is denied.
 */
export function allowPermissionRequest(permission: string, details: { requestingUrl?: string; mediaTypes?: readonly string[] }, pageUrl: string): boolean {
  if (permission !== 'media') return false;
  if (!isOwnOrigin(details.requestingUrl ?? pageUrl) || !isOwnOrigin(pageUrl)) return false;
  const types = details.mediaTypes ?? [];
  return types.every((t) => t === 'audio' || t === 'video');
}

/** Permission checks (synchronous queries such as enumerateDevices labels). */
export function allowPermissionCheck(permission: string, requestingOrigin: string, details: { mediaType?: string }): boolean {
  if (permission !== 'media') return false;
  if (!isOwnOrigin(requestingOrigin)) return false;
  const t = details.mediaType;
  return t === undefined || t === 'audio' || t === 'video' || t === 'unknown';
}

/**
 * Where a download from the page is saved, or null to refuse it. Only our page's own blob: URLs (the
 * staff panel's CSV export) may download; the file goes into `downloadsDir` under a sanitised name
 * (no path, no control characters), numbered when the name is taken, so no dialog opens on a kiosk.
 */
export function downloadTarget(url: string, suggestedName: string, downloadsDir: string, exists: (path: string) => boolean): string | null {
  if (!url.startsWith(`blob:${APP_ORIGIN}/`)) return null;
  const base = suggestedName.replace(/^.*[\\/]/, '').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(0, 100) || 'download';
  const dot = base.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ''];
  for (let n = 0; n < 1000; n++) {
    const candidate = join(downloadsDir, n === 0 ? base : `${stem}-${n}${ext}`);
    if (!exists(candidate)) return candidate;
  }
  return null;
}

/** Navigation is never allowed away from the loaded page (reload of our own entry is not a navigation). */
export function allowNavigation(_url: string): boolean {
  return false;
}

/**
 * Map an `app://kiosk/<path>` request to a file under `root`, or null (outside root, other host,
 * traversal, or not our scheme). `/` serves index.html.
 */
export function resolveAppFile(requestUrl: string, root: string): string | null {
  let u: URL;
  try {
    u = new URL(requestUrl);
  } catch {
    return null;
  }
  if (u.protocol !== `${APP_SCHEME}:` || u.host !== APP_HOST) return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(u.pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0')) return null;
  if (pathname === '/' || pathname === '') pathname = '/index.html';
  const rootAbs = resolve(root);
  const file = resolve(rootAbs, '.' + normalize(pathname));
  const rel = relative(rootAbs, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).includes('..')) return null;
  return file;
}
