/**
 * Applies the security policy (page-policy.ts) to Electron: the app:// protocol serving only out/renderer,
 * the CSP on every response, permission handlers (media only, our origin only), and the per-webContents
 * guards (no navigation, no new windows, no <webview>). Thin on purpose; decisions live in page-policy.ts.
 */
import { app, protocol, session, type WebContents } from 'electron';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Logger } from '../core/log.ts';
import {
  APP_SCHEME,
  CONTENT_SECURITY_POLICY,
  allowNavigation,
  allowPermissionCheck,
  allowPermissionRequest,
  downloadTarget,
  mimeTypeFor,
  resolveAppFile,
  securityHeaders,
  withSecurityHeaders,
} from './page-policy.ts';

/** Must run before `app.whenReady()`: makes app:// a standard, secure origin (getUserMedia needs one). */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, stream: true } },
  ]);
}

/** Serve `root` (out/renderer) on app://kiosk with our security headers. Call after ready. */
export function serveRenderer(root: string, logger: Logger): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const file = resolveAppFile(request.url, root);
    if (!file) {
      logger.warn('Refused an app:// request outside the renderer', { url: request.url.slice(0, 200) });
      return new Response('Not found', { status: 404, headers: securityHeaders() });
    }
    try {
      const body = await readFile(file);
      return new Response(body, { status: 200, headers: { 'Content-Type': mimeTypeFor(file), ...securityHeaders() } });
    } catch {
      return new Response('Not found', { status: 404, headers: securityHeaders() });
    }
  });
}

/** Session-wide guards: CSP header on every http(s) response too, and the permission handlers. */
export function hardenSession(logger: Logger): void {
  const ses = session.defaultSession;
  ses.webRequest.onHeadersReceived((details, callback) => {
    // Any server-sent CSP is dropped: ours (page-policy.ts) is the stricter one. The scanner cannot read a
    // constant, so the policy itself is evaluated by test/security/electronegativity.ts.
    callback({ responseHeaders: { ...withSecurityHeaders(details.responseHeaders), 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } }); // eng-disable CSP_GLOBAL_CHECK evaluated by test/security

  });
  ses.setPermissionRequestHandler((webContents, permission, callback, details) => {
    const mediaTypes = 'mediaTypes' in details ? (details.mediaTypes ?? []) : [];
    const allowed = allowPermissionRequest(permission, { requestingUrl: details.requestingUrl, mediaTypes }, webContents.getURL());
    if (!allowed) logger.warn('Denied a permission request', { permission, url: details.requestingUrl?.slice(0, 200) });
    callback(allowed);
  });
  ses.setPermissionCheckHandler((_webContents, permission, requestingOrigin, details) =>
    allowPermissionCheck(permission, requestingOrigin, { ...(details.mediaType ? { mediaType: details.mediaType } : {}) }),
  );
  // Downloads: only the page's own exports (ledger CSV), saved straight into Downloads (no dialog on a kiosk).
  ses.on('will-download', (event, item) => {
    const target = downloadTarget(item.getURL(), item.getFilename(), app.getPath('downloads'), existsSync);
    if (!target) {
      event.preventDefault();
      logger.warn('Blocked a download', { url: item.getURL().slice(0, 200) });
      return;
    }
    item.setSavePath(target);
    logger.info('Saving a download', { path: target });
  });
}

/** Per-webContents guards, applied to every webContents the app ever creates. */
export function guardWebContents(logger: Logger): void {
  app.on('web-contents-created', (_event, contents: WebContents) => {
    contents.on('will-navigate', (event, url) => {
      if (!allowNavigation(url)) {
        event.preventDefault();
        logger.warn('Blocked a navigation', { url: url.slice(0, 200) });
      }
    });
    contents.on('will-redirect', (event, url) => {
      if (!allowNavigation(url)) {
        event.preventDefault();
        logger.warn('Blocked a redirect', { url: url.slice(0, 200) });
      }
    });
    contents.on('will-attach-webview', (event) => {
      event.preventDefault();
      logger.warn('Blocked a <webview>');
    });
    contents.setWindowOpenHandler(({ url }) => {
      logger.warn('Blocked a new window', { url: url.slice(0, 200) });
      return { action: 'deny' };
    });
  });
}
