/**
 * Which surface of the avatar service we talk to, and the URLs and headers that follow from it (spec §4, §5).
 *
 * - `parseServiceTarget` turns loose configuration (CLI flags, a settings file, the setup screen) into a
 *   validated, normalised `ServiceTarget`, or throws `invalid_config` with a message an operator can act on.
 * - `endpointsFor` builds every endpoint URL and the auth headers for a target.
 *
 * The API key only ever travels in the `Authorization: Token <key>` header (direct surface); it is never put
 * in a URL, and the gateway surface sends no key at all (spec §5). No hostnames are built in: the spec
 * publishes none, so the operator always supplies the URL.
 */
import { AvatarError } from './errors.ts';
import type { ServiceTarget } from './session-types.ts';

export type Surface = ServiceTarget['surface'];

/** Loose configuration as it arrives from flags, a file or a form. Empty strings count as absent. */
export interface ServiceTargetInput {
  surface?: Surface;
  baseUrl?: string;
  gatewayUrl?: string;
  apiKey?: string;
  /** Gateway only: the integrator's per-kiosk client authentication (e.g. a device token), sent on every
   *  request and socket handshake (spec §5 leaves customer authentication to the integrator). */
  gatewayHeaders?: Record<string, string>;
}

/** Header names a gateway header may not take: they belong to HTTP itself. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'connection', 'transfer-encoding', 'upgrade', 'accept', 'cookie', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions']);

/** Check the gateway headers: names are HTTP tokens (not reserved ones), values printable, one line. */
export function checkGatewayHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) {
      throw configError(`The gateway header name "${name.slice(0, 64)}" is not allowed; use a custom header such as X-Device-Token.`, 'gatewayHeaders');
    }
    if (typeof value !== 'string' || value.length === 0 || value.length > 4096 || /[\u0000-\u001f\u007f]/.test(value)) {
      throw configError(`The gateway header "${name}" needs a value of printable characters on one line (at most 4096).`, 'gatewayHeaders');
    }
    out[name] = value;
  }
  return out;
}

/** Every URL of one service target, plus the headers each HTTP request and the WS handshake carry. */
export interface Endpoints {
  /** POST: create a session (spec §4.1). */
  createSession: string;
  /** GET: query a session (spec §4.2). */
  session(liveId: string): string;
  /** WS(S): the control socket (spec §4.3); `ws://` for an `http://` target, `wss://` for `https://`. */
  socket(liveId: string): string;
  /** POST: clone a voice (spec §4.4). */
  cloneVoice: string;
  /** GET: list custom voices (spec §4.5). */
  listVoices: string;
  /** A fresh object each call: `{Authorization: 'Token <key>'}` on direct, `{}` on the gateway. */
  headers(): Record<string, string>;
}

/**
 * Validate and normalise service configuration.
 *
 * - `surface` defaults to `gateway` when only `gatewayUrl` is given, else `direct`; giving both URLs without
 *   naming the surface is ambiguous and rejected.
 * - URLs: `http:`/`https:` only, no query, no fragment, no `user:password@`; trailing slashes are removed.
 * - A direct base URL must be the service root (not ending in `/live/v1`), a gateway URL must not end in
 *   `/api`: the paths are appended here, and a doubled prefix would only show up later as a 404.
 * - direct needs an API key (no whitespace inside); gateway must not be given one (spec §5).
 * - direct over `http:` only to a loopback host: the key travels in every request and socket handshake,
 *   so on any network it must be encrypted (`https:`/`wss:`).
 */
export function parseServiceTarget(input: ServiceTargetInput): ServiceTarget {
  const baseUrl = blankToUndefined(input.baseUrl);
  const gatewayUrl = blankToUndefined(input.gatewayUrl);
  const apiKey = blankToUndefined(input.apiKey);

  let surface = input.surface;
  if (surface === undefined) {
    if (baseUrl && gatewayUrl) {
      throw configError(
        'Both a direct service URL and a gateway URL are set; choose one surface ("direct" or "gateway").',
        'surface',
      );
    }
    surface = gatewayUrl && !baseUrl ? 'gateway' : 'direct';
  }

  if (surface === 'direct') {
    if (!baseUrl) {
      throw configError('The avatar service URL (baseUrl) is not set. Enter the address the service provider gave you.', 'baseUrl');
    }
    const url = normaliseUrl(baseUrl, 'baseUrl', 'service URL');
    const cleartext = cleartextKeyProblem(url);
    if (cleartext) throw configError(`The service URL ${cleartext}.`, 'baseUrl');
    if (/\/live\/v1(\/lives)?$/i.test(new URL(url).pathname)) {
      throw configError(
        `The service URL should be the service root, without "/live/v1" (got ${url}); the paths are added automatically.`,
        'baseUrl',
      );
    }
    if (!apiKey) {
      throw configError('An API key is required for the direct surface. Enter the key from the platform workbench.', 'apiKey');
    }
    if (/[\s\u0000-\u001f\u007f]/.test(apiKey)) {
      // A key with spaces or control characters cannot go into a header (and is almost always a paste error).
      throw configError('The API key contains spaces or line breaks; paste the key exactly as issued.', 'apiKey');
    }
    if (url.includes(apiKey)) {
      throw configError('The service URL must not contain the API key; the key is sent in a header.', 'baseUrl');
    }
    return { surface: 'direct', baseUrl: url, apiKey };
  }

  if (surface === 'gateway') {
    if (!gatewayUrl) {
      throw configError('The gateway URL (gatewayUrl) is not set. Enter the address of your gateway.', 'gatewayUrl');
    }
    const url = normaliseUrl(gatewayUrl, 'gatewayUrl', 'gateway URL');
    if (/\/api$/i.test(new URL(url).pathname)) {
      throw configError(
        `The gateway URL should not end in "/api" (got ${url}); the /api paths are added automatically.`,
        'gatewayUrl',
      );
    }
    if (apiKey) {
      // spec §5: the gateway injects the upstream credential; a key configured here would be a leak risk.
      throw configError(
        'The gateway surface takes no API key (the gateway adds the credential itself). Remove the key, or switch to the direct surface.',
        'apiKey',
      );
    }
    const headers = input.gatewayHeaders && Object.keys(input.gatewayHeaders).length ? checkGatewayHeaders(input.gatewayHeaders) : null;
    // The headers authenticate this kiosk to the gateway (a device token): like the key, never in clear.
    const cleartext = headers ? cleartextHeadersProblem(url) : null;
    if (cleartext) throw configError(`The gateway URL ${cleartext}.`, 'gatewayUrl');
    return { surface: 'gateway', gatewayUrl: url, ...(headers ? { headers } : {}) };
  }

  throw configError(`Unknown service surface "${String(surface)}"; use "direct" or "gateway".`, 'surface');
}

/** The endpoint URLs and headers of a target (spec §4 table). IDs are URL-encoded. */
export function endpointsFor(target: ServiceTarget): Endpoints {
  if (target.surface === 'direct') {
    const base = stripTrailingSlashes(target.baseUrl);
    const socketBase = toWebSocketUrl(base);
    const authorization = `Token ${target.apiKey}`;
    return {
      createSession: `${base}/live/v1/lives`,
      session: (liveId) => `${base}/live/v1/lives/${encodeId(liveId)}`,
      socket: (liveId) => `${socketBase}/live/ws/live/connect?live_id=${encodeId(liveId)}`,
      cloneVoice: `${base}/live/v1/voices/clone`,
      listVoices: `${base}/live/v1/voices`,
      headers: () => ({ Authorization: authorization }),
    };
  }
  const gw = stripTrailingSlashes(target.gatewayUrl);
  const socketGw = toWebSocketUrl(gw);
  return {
    createSession: `${gw}/api/lives`,
    session: (liveId) => `${gw}/api/lives/${encodeId(liveId)}`,
    socket: (liveId) => `${socketGw}/api/ws?live_id=${encodeId(liveId)}`,
    cloneVoice: `${gw}/api/voices/clone`,
    listVoices: `${gw}/api/voices`,
    headers: () => ({ ...target.headers }),
  };
}

/** Loopback hosts (this computer): the only ones an unencrypted connection may carry the key to. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/** Why a direct-surface URL may not carry the API key (null when it may), as a predicate for "The service
 *  URL …": `http:` to anything but this computer sends the key in clear text over the network. */
export function cleartextKeyProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null; // not a URL: the URL checks say so
  }
  if (parsed.protocol !== 'http:' || isLoopbackHost(parsed.hostname)) return null;
  return `must start with https:// (got http://${parsed.host}): with http:// the API key would cross the network unencrypted; http:// is only for this computer (localhost, 127.0.0.1, ::1)`;
}

/** Why a gateway URL may not carry the kiosk's gatewayHeaders (null when it may): as for the key. */
export function cleartextHeadersProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' || isLoopbackHost(parsed.hostname)) return null;
  return `must start with https:// (got http://${parsed.host}) when gatewayHeaders are set: with http:// the device's token would cross the network unencrypted; http:// is only for this computer (localhost, 127.0.0.1, ::1)`;
}

/** A short description of a target for logs and status lines: surface and origin, never the key. */
export function describeTarget(target: ServiceTarget): string {
  return target.surface === 'direct' ? `direct ${target.baseUrl}` : `gateway ${target.gatewayUrl}`;
}

// ---------------------------------------------------------------------------------------------------

function blankToUndefined(value: string | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function normaliseUrl(raw: string, field: string, label: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw configError(`The ${label} is not a valid address; it should look like https://host or http://host:port.`, field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw configError(`The ${label} must start with http:// or https:// (got ${url.protocol}//…).`, field);
  }
  if (url.username || url.password) {
    throw configError(`The ${label} must not contain a user name or password; credentials are sent in headers.`, field);
  }
  // `new URL` drops an empty "?" or "#", so look at the raw text as well.
  if (url.search || raw.includes('?')) {
    throw configError(`The ${label} must not contain a query string ("?…"); give the plain address.`, field);
  }
  if (url.hash || raw.includes('#')) {
    throw configError(`The ${label} must not contain a fragment ("#…"); give the plain address.`, field);
  }
  return stripTrailingSlashes(`${url.protocol}//${url.host}${url.pathname}`);
}

function stripTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}

function toWebSocketUrl(httpUrl: string): string {
  return httpUrl.replace(/^http(s?):/i, (_m, s: string) => `ws${s.toLowerCase()}:`);
}

function encodeId(liveId: string): string {
  if (typeof liveId !== 'string' || liveId === '') {
    throw new AvatarError('invalid_request', 'A session id (live_id) is required.', { details: { field: 'liveId' } });
  }
  return encodeURIComponent(liveId);
}

function configError(message: string, field: string): AvatarError {
  return new AvatarError('invalid_config', message, { details: { field } });
}
