/**
 * The REST surfaces of the emulator (spec §4, §5, §7): routing for the direct surface (`/live/v1/...`,
 * `Authorization: Token <key>` required) and the gateway surface (`/gateway/api/...`, demo account
 * injected), body reading with a size cap, request validation with the zod schemas of core/protocol.ts,
 * and JSON answers delayed by `knobs.latencyMs`. Session rules live in sessions.ts, account and voice
 * rules in accounts.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/log.ts';
import {
  MAX_BASE64_IMAGE_BYTES,
  MIN_BALANCE_TO_START,
  cloneVoiceRequestSchema,
  createSessionRequestSchema,
  type CreateSessionRequest,
} from '../core/protocol.ts';
import type { AccountRecord, Accounts } from './accounts.ts';
import { ApiError } from './api-error.ts';
import { errorAnswer, withExtraBodyFields } from './dialect.ts';
import type { SessionRecord, SessionStore } from './sessions.ts';
import type { TimerSet } from './timers.ts';
import type { EmulatorKnobs } from './types.ts';
import type { z } from 'zod';

/** ASSUMPTION: the spec allows `MAX_IMAGE_BYTES` by URL and `MAX_BASE64_IMAGE_BYTES` decoded Base64 (~27 MB of
 *  text); a body over 60 MB gets 413. */
export const MAX_BODY_BYTES = 60 * 1024 * 1024;

export type Surface = 'direct' | 'gateway';

export const DIRECT_PREFIX = '/live/v1';
export const GATEWAY_PREFIX = '/gateway/api';
export const DIRECT_WS_PATH = '/live/ws/live/connect';
export const GATEWAY_WS_PATH = '/gateway/api/ws';

export interface HttpContext {
  knobs: EmulatorKnobs;
  timers: TimerSet;
  logger: Logger;
  accounts: Accounts;
  sessions: SessionStore;
  demoApiKey: string;
}

type RouteName = 'create' | 'query' | 'clone' | 'list';
interface RouteMatch {
  surface: Surface;
  route: RouteName;
  method: 'GET' | 'POST';
  liveId?: string;
}

/** Map a path to a route of either surface (spec §4 endpoint table), or null. */
export function matchRoute(pathname: string): RouteMatch | null {
  let surface: Surface;
  let rest: string;
  if (pathname.startsWith(DIRECT_PREFIX + '/')) {
    surface = 'direct';
    rest = pathname.slice(DIRECT_PREFIX.length);
  } else if (pathname.startsWith(GATEWAY_PREFIX + '/')) {
    surface = 'gateway';
    rest = pathname.slice(GATEWAY_PREFIX.length);
  } else return null;
  if (rest === '/lives') return { surface, route: 'create', method: 'POST' };
  if (rest === '/voices/clone') return { surface, route: 'clone', method: 'POST' };
  if (rest === '/voices') return { surface, route: 'list', method: 'GET' };
  const m = /^\/lives\/([^/]+)$/.exec(rest);
  if (m) {
    let liveId: string;
    try {
      liveId = decodeURIComponent(m[1]!);
    } catch {
      return null;
    }
    return { surface, route: 'query', method: 'GET', liveId };
  }
  return null;
}

/**
 * spec §5: the direct surface needs `Authorization: Token <key>` with a known key; the gateway injects the
 * demo account. Returns the account or throws 401.
 */
export function authenticate(ctx: Pick<HttpContext, 'accounts' | 'demoApiKey'>, surface: Surface, authorization: string | undefined): AccountRecord {
  if (surface === 'gateway') return ctx.accounts.require(ctx.demoApiKey);
  const m = /^Token\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) throw new ApiError(401, 'unauthorized', 'Missing or malformed Authorization header; expected "Token <API_KEY>".');
  const account = ctx.accounts.get(m[1]!);
  if (!account) throw new ApiError(401, 'unauthorized', 'Invalid API key.');
  return account;
}

/** spec §5: only the key that created a session may use it. */
export function requireOwner(session: SessionRecord | undefined, account: AccountRecord): SessionRecord {
  if (!session) throw new ApiError(404, 'not_found', 'No such session, or it has expired.');
  if (session.account !== account) throw new ApiError(403, 'forbidden', 'This session belongs to another API key.');
  return session;
}

export function createRequestHandler(ctx: HttpContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(ctx, req, res).catch((error: unknown) => {
      if (error instanceof ApiError) {
        respondError(ctx, res, error);
        return;
      }
      if (res.destroyed || req.destroyed) {
        ctx.logger.debug('request abandoned by the client', { error: String(error) });
        return;
      }
      ctx.logger.error('emulator request failed', { error: String(error) });
      respond(ctx, res, 500, { error: { code: 'internal', message: 'Internal emulator error.' } }); // a bug: always JSON
    });
  };
}

async function handle(ctx: HttpContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://emulator.invalid');
  const match = matchRoute(url.pathname);
  ctx.logger.debug('http request', { method: req.method, path: url.pathname });
  if (!match) {
    req.resume();
    throw new ApiError(404, 'not_found', `No route for ${url.pathname}.`);
  }
  if (req.method !== match.method) {
    req.resume();
    res.setHeader('allow', match.method);
    throw new ApiError(405, 'method_not_allowed', `${req.method ?? '?'} is not allowed here; use ${match.method}.`);
  }
  let account: AccountRecord;
  try {
    account = authenticate(ctx, match.surface, req.headers.authorization);
  } catch (error) {
    req.resume();
    throw error;
  }

  switch (match.route) {
    case 'create': {
      const body = await readJsonBody(req);
      const request = parseWith(createSessionRequestSchema, body);
      validateImageUri(request.avatar.image_uri);
      // spec §3 / §8: MIN_BALANCE_TO_START. ASSUMPTION: 402 insufficient_credits (the spec does not show it).
      if (account.balance < MIN_BALANCE_TO_START) {
        throw new ApiError(
          402,
          'insufficient_credits',
          `Starting a session needs at least ${MIN_BALANCE_TO_START} credits; the balance is ${account.balance}.`,
        );
      }
      const effective: CreateSessionRequest =
        match.surface === 'gateway'
          ? // spec §4.1: gateway defaults moderation `disabled`, extra_motion `true`; direct defaults are not shown (left unset).
            { ...request, moderation: request.moderation ?? 'disabled', extra_motion: request.extra_motion ?? true }
          : request;
      const session = ctx.sessions.create(account, request, effective);
      // spec §4.1 shows 200; the createStatus knob answers 201 Created, as many REST services do.
      respond(ctx, res, ctx.knobs.createStatus, ctx.sessions.createJson(session), {}, ctx.knobs.createDelayMs);
      return;
    }
    case 'query': {
      req.resume();
      const session = requireOwner(ctx.sessions.get(match.liveId ?? ''), account);
      respond(ctx, res, 200, ctx.sessions.queryJson(session));
      return;
    }
    case 'clone': {
      const body = await readJsonBody(req);
      const request = parseWith(cloneVoiceRequestSchema, body);
      respond(ctx, res, 200, ctx.accounts.cloneVoice(account, request));
      return;
    }
    case 'list': {
      req.resume();
      respond(ctx, res, 200, ctx.accounts.listVoices(account));
      return;
    }
  }
}

/** Send a JSON answer after `knobs.latencyMs` (+ `extraDelayMs`), on the injected clock. */
function respond(ctx: HttpContext, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, extraDelayMs = 0): void {
  const text = JSON.stringify(status >= 200 && status < 300 ? withExtraBodyFields(ctx.knobs, body) : body);
  respondText(ctx, res, status, 'application/json; charset=utf-8', text, headers, extraDelayMs);
}

/** An error answer in the `errorBody` knob's shape (spec §7 does not show it). */
function respondError(ctx: HttpContext, res: ServerResponse, error: ApiError): void {
  const { contentType, text } = errorAnswer(ctx.knobs, error);
  respondText(ctx, res, error.status, contentType, text, error.status === 413 ? { connection: 'close' } : {});
}

function respondText(ctx: HttpContext, res: ServerResponse, status: number, contentType: string | null, text: string, headers: Record<string, string> = {}, extraDelayMs = 0): void {
  const write = () => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { ...(contentType ? { 'content-type': contentType } : {}), 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };
  const latencyMs = ctx.knobs.latencyMs + extraDelayMs;
  if (latencyMs <= 0) {
    write();
    return;
  }
  const handle = ctx.timers.set(write, latencyMs);
  if (handle === null) res.destroy(); // shutting down
}

/** spec §4: create and clone bodies are JSON with Content-Type application/json; capped at MAX_BODY_BYTES. */
async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    req.resume();
    throw new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json.');
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    req.resume(); // drain so the client can read the answer
    throw new ApiError(413, 'payload_too_large', `The body exceeds ${MAX_BODY_BYTES} bytes.`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let tooLarge = false;
  await new Promise<void>((resolve, reject) => {
    let ended = false;
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > MAX_BODY_BYTES) {
        tooLarge = true;
        chunks.length = 0;
      } else if (!tooLarge) chunks.push(chunk);
    });
    req.on('end', () => {
      ended = true;
      resolve();
    });
    req.on('error', reject);
    // A client that goes away mid-body must not leave this promise pending forever.
    req.on('close', () => {
      if (!ended) reject(new Error('The client went away before the body was complete.'));
    });
  });
  if (tooLarge) throw new ApiError(413, 'payload_too_large', `The body exceeds ${MAX_BODY_BYTES} bytes.`);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, 'invalid_request', 'The body is not valid JSON.');
  }
}

/** Validate with a zod schema; the first issue becomes `{code:'invalid_request', message, field}`. */
function parseWith<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
  const message = issue ? (field ? `${field}: ${issue.message}` : issue.message) : 'Invalid request body.';
  throw new ApiError(400, 'invalid_request', message, field);
}

const DATA_URI_PREFIX = /^data:image\/(png|jpeg|jpg|webp);base64,/i;
const BASE64_BODY = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * spec §2.3: one image as a URL or Base64. Base64 must carry `data:image/<type>;base64,` with type
 * PNG/JPG/JPEG/WEBP and decode to under `MAX_BASE64_IMAGE_BYTES`. ASSUMPTION: URLs must be http(s).
 */
export function validateImageUri(uri: string): void {
  const field = 'avatar.image_uri';
  if (/^data:/i.test(uri)) {
    const prefix = DATA_URI_PREFIX.exec(uri);
    if (!prefix) {
      throw new ApiError(400, 'invalid_request', 'image_uri data URI must start with data:image/<png|jpeg|jpg|webp>;base64,', field);
    }
    const data = uri.slice(prefix[0].length);
    if (!data || data.length % 4 !== 0 || !BASE64_BODY.test(data)) {
      throw new ApiError(400, 'invalid_request', 'image_uri does not carry valid Base64 data.', field);
    }
    const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
    const decodedBytes = (data.length / 4) * 3 - padding;
    if (decodedBytes >= MAX_BASE64_IMAGE_BYTES) {
      throw new ApiError(400, 'invalid_request', `The Base64 image decodes to ${decodedBytes} bytes; it must be under ${MAX_BASE64_IMAGE_BYTES / 2 ** 20} MB.`, field);
    }
    return;
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ApiError(400, 'invalid_request', 'image_uri must be an http(s) URL or a data:image/...;base64, URI.', field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ApiError(400, 'invalid_request', 'image_uri must be an http(s) URL or a data:image/...;base64, URI.', field);
  }
}
