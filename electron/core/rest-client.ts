/**
 * The HTTP client of the avatar service (spec §4, §5, §7): create and query sessions, clone and list voices,
 * and the URL + headers of the control socket's handshake.
 *
 * Owns: request validation before sending (`invalid_request`), response validation (`protocol`), the mapping
 * of HTTP statuses and transport failures to `AvatarError` codes, per-request timeouts, and request logging
 * without secrets. It does not own the session life cycle or any retry policy beyond one immediate retry of
 * idempotent reads.
 *
 * Retries: `createSession` is NOT idempotent (each call opens a room and may bill) and `cloneVoice` costs
 * credits, so neither is ever retried here, not even after a timeout: the caller decides. `querySession` and
 * `listVoices` are retried once, immediately, on a `network` failure (typically a stale keep-alive socket).
 */
import type { z } from 'zod';
import { type Clock, systemClock } from './clock.ts';
import { AvatarError, type ErrorCode } from './errors.ts';
import { addSecret, redact, type Logger, silentLogger } from './log.ts';
import {
  type CloneVoiceRequest,
  type CloneVoiceResponse,
  type CreateSessionRequest,
  type CreateSessionResponse,
  type ListVoicesResponse,
  type LiveRecord,
  cloneVoiceRequestSchema,
  cloneVoiceResponseSchema,
  createSessionRequestSchema,
  createSessionResponseSchema,
  errorCodeFromBody,
  errorMessageFromBody,
  listVoicesResponseSchema,
  MIN_BALANCE_TO_START,
  querySessionResponseSchema,
} from './protocol.ts';
import type { ServiceTarget } from './session-types.ts';
import { type Endpoints, endpointsFor, parseServiceTarget } from './surface.ts';

export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

export interface ServiceClientOptions {
  target: ServiceTarget;
  /** Defaults to Node's global fetch (undici, keep-alive). Injected by tests. */
  fetch?: typeof fetch;
  /** Per request, covering connect, headers and body. Default 15 000 ms. */
  requestTimeoutMs?: number;
  logger?: Logger;
  /** Drives the request timeout (default `systemClock`), so tests can time out without waiting. */
  clock?: Clock;
}

export interface RequestOptions {
  /** Aborting it rejects the call with `cancelled`. */
  signal?: AbortSignal;
}

/** What the control socket needs to connect: the ws(s) URL and the handshake headers (spec §5). */
export interface SocketRequest {
  url: string;
  headers: Record<string, string>;
}

type Operation = 'createSession' | 'querySession' | 'cloneVoice' | 'listVoices';

interface Call<T> {
  op: Operation;
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  schema: z.ZodType<T>;
  retryOnNetworkError: boolean;
  signal: AbortSignal | undefined;
  liveId?: string;
}

export class ServiceClient {
  readonly target: ServiceTarget;
  readonly #endpoints: Endpoints;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly #clock: Clock;

  constructor(options: ServiceClientOptions) {
    // Re-validate: a target may come from a settings file or IPC, typed but never checked.
    const t = options.target;
    this.target = parseServiceTarget(t.surface === 'gateway' && t.headers ? { ...t, gatewayHeaders: t.headers } : t);
    if (this.target.surface === 'direct') addSecret(this.target.apiKey);
    this.#endpoints = endpointsFor(this.target);
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new AvatarError('invalid_config', `requestTimeoutMs must be a positive number of milliseconds (got ${timeoutMs}).`);
    }
    this.#timeoutMs = timeoutMs;
    this.#log = options.logger ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * POST create session (spec §4.1). Never retried: a retry after a lost answer could open a second room.
   * The issued RTC token is registered as a secret so logs redact it.
   */
  async createSession(req: CreateSessionRequest, opts: RequestOptions = {}): Promise<CreateSessionResponse> {
    const body = validateRequest(createSessionRequestSchema, req, 'session request');
    const res = await this.#call({
      op: 'createSession',
      method: 'POST',
      url: this.#endpoints.createSession,
      body,
      schema: createSessionResponseSchema,
      retryOnNetworkError: false,
      signal: opts.signal,
    });
    addSecret(res.rtc.token, { shortLived: true });
    return res;
  }

  /** GET query session (spec §4.2); returns the `live` object. Retried once on a network failure. */
  async querySession(liveId: string, opts: RequestOptions = {}): Promise<LiveRecord> {
    if (typeof liveId !== 'string' || liveId.trim() === '') {
      throw new AvatarError('invalid_request', 'A session id (live_id) is required to query a session.', { details: { field: 'liveId' } });
    }
    const res = await this.#call({
      op: 'querySession',
      method: 'GET',
      url: this.#endpoints.session(liveId),
      schema: querySessionResponseSchema,
      retryOnNetworkError: true,
      signal: opts.signal,
      liveId,
    });
    return res.live;
  }

  /** POST clone voice (spec §4.4). Costs credits after the free ones, so never retried. */
  async cloneVoice(req: CloneVoiceRequest, opts: RequestOptions = {}): Promise<CloneVoiceResponse> {
    const body = validateRequest(cloneVoiceRequestSchema, req, 'voice clone request');
    return this.#call({
      op: 'cloneVoice',
      method: 'POST',
      url: this.#endpoints.cloneVoice,
      body,
      schema: cloneVoiceResponseSchema,
      retryOnNetworkError: false,
      signal: opts.signal,
    });
  }

  /** GET list custom voices (spec §4.5). Retried once on a network failure. */
  async listVoices(opts: RequestOptions = {}): Promise<ListVoicesResponse> {
    return this.#call({
      op: 'listVoices',
      method: 'GET',
      url: this.#endpoints.listVoices,
      schema: listVoicesResponseSchema,
      retryOnNetworkError: true,
      signal: opts.signal,
    });
  }

  /**
   * A client like this one (same target, timeout, logger, clock), with its `fetch` wrapped (the wire report
   * records answers through it) and, on the direct surface, optionally another key.
   */
  derive(options: { wrapFetch?: (inner: typeof fetch) => typeof fetch; apiKey?: string; logger?: Logger }): ServiceClient {
    const target = options.apiKey !== undefined && this.target.surface === 'direct' ? { ...this.target, apiKey: options.apiKey } : this.target;
    return new ServiceClient({
      target,
      fetch: options.wrapFetch ? options.wrapFetch(this.#fetch) : this.#fetch,
      requestTimeoutMs: this.#timeoutMs,
      logger: options.logger ?? this.#log,
      clock: this.#clock,
    });
  }

  /** The control socket's URL and handshake headers (direct: `Authorization: Token <key>`; gateway: none). */
  socketRequest(liveId: string): SocketRequest {
    return { url: this.#endpoints.socket(liveId), headers: this.#endpoints.headers() };
  }

  // -------------------------------------------------------------------------------------------------

  async #call<T>(call: Call<T>): Promise<T> {
    try {
      return await this.#attempt(call);
    } catch (error) {
      if (call.retryOnNetworkError && error instanceof AvatarError && error.code === 'network' && !call.signal?.aborted) {
        this.#log.info(`${call.method} ${pathOf(call.url)} retrying once after a network error`);
        return await this.#attempt(call);
      }
      throw error;
    }
  }

  async #attempt<T>(call: Call<T>): Promise<T> {
    if (call.signal?.aborted) throw cancelled(call.signal.reason);
    const path = pathOf(call.url);
    const startedMs = this.#clock.now();
    const ms = () => this.#clock.now() - startedMs;

    // The timeout runs on the injected clock (AbortSignal.timeout cannot be driven by a FakeClock); the
    // caller's signal and ours are combined so either one aborts the fetch and the body read.
    const timeout = new AbortController();
    const timer = this.#clock.setTimeout(() => timeout.abort(timeoutReason(this.#timeoutMs)), this.#timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout.signal]) : timeout.signal;

    const headers: Record<string, string> = { Accept: 'application/json', ...this.#endpoints.headers() };
    if (call.body !== undefined) headers['Content-Type'] = 'application/json';

    let status = 0;
    let text: string;
    let location: string | null = null;
    try {
      const res = await this.#fetch(call.url, {
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal,
        // A redirect would either drop the Authorization header or turn a POST into a GET: report it instead.
        redirect: 'manual',
      });
      status = res.status;
      location = res.headers.get('location');
      // An oversized error answer still has its status, which decides the error: only its text is dropped.
      text = await readCappedText(res, MAX_RESPONSE_BYTES, status >= 200 && status < 300 ? 'throw' : 'empty');
    } catch (error) {
      const mapped = this.#transportError(error, call, timeout.signal);
      // A request its caller cancelled did not fail: the caller said why (at its own level).
      const level = call.signal?.aborted === true ? 'debug' : 'warn';
      this.#log[level](`${call.method} ${path} failed: ${mapped.code}`, { method: call.method, path, code: mapped.code, ms: ms() });
      throw mapped;
    } finally {
      this.#clock.clearTimeout(timer);
    }

    const logData = { method: call.method, path, status, ms: ms() };
    if (status >= 200 && status < 300) {
      this.#log.info(`${call.method} ${path} ${status} (${logData.ms} ms)`, logData);
      return parseResponse(call, status, text);
    }
    const error = httpError(call, status, text, location, this.target);
    this.#log.warn(`${call.method} ${path} ${status} (${logData.ms} ms): ${error.code}`, { ...logData, code: error.code });
    throw error;
  }

  #transportError(error: unknown, call: Call<unknown>, timeoutSignal: AbortSignal): AvatarError {
    if (error instanceof AvatarError) return error;
    if (call.signal?.aborted) return cancelled(error);
    if (timeoutSignal.aborted) {
      return new AvatarError(
        'timeout',
        `The avatar service did not answer within ${formatSeconds(this.#timeoutMs)} (${operationLabel(call.op)}). Check the network connection.`,
        // The bare fact, for callers that give their own advice (service-health.ts): one piece of advice, once.
        { cause: error, details: { reason: `no answer within ${formatSeconds(this.#timeoutMs)}` } },
      );
    }
    const host = hostOf(call.url);
    const detail = networkDetail(error);
    return new AvatarError(
      'network',
      `Could not reach the avatar service at ${host}${detail ? ` (${detail})` : ''}. Check the network connection and the service address.`,
      detail ? { cause: error, details: { reason: detail } } : { cause: error },
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// Helpers (module-private)

function validateRequest<T>(schema: z.ZodType<T>, value: unknown, label: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : undefined;
  const what = issue ? `${field ? `${field}: ` : ''}${issue.message}` : 'invalid';
  return failInvalid(`The ${label} is invalid (${what}).`, field);
}

function failInvalid(message: string, field: string | undefined): never {
  throw new AvatarError('invalid_request', message, field ? { details: { field } } : {});
}

function parseResponse<T>(call: Call<T>, status: number, text: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AvatarError(
      'protocol',
      `The avatar service sent an answer that is not valid JSON (${operationLabel(call.op)}, HTTP ${status}).`,
      { cause: error, status },
    );
  }
  const result = call.schema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue ? ` (${describeIssue(issue, json)})` : '';
    throw new AvatarError(
      'protocol',
      `The avatar service sent an answer in an unexpected format${where} (${operationLabel(call.op)}).`,
      { cause: result.error, status },
    );
  }
  return result.data;
}

/**
 * One schema issue in words a person can read ("rtc.token is missing", "live.id has the wrong type"), not
 * the schema library's own text ("Invalid input: expected string, received undefined").
 */
function describeIssue(issue: z.core.$ZodIssue, json: unknown): string {
  const path = issue.path.map(String).join('.');
  const name = path || 'the answer';
  let value: unknown = json;
  for (const key of issue.path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  if (issue.code === 'invalid_type') {
    if (value === undefined) return `${name} is missing`;
    return `${name} has the wrong type${path ? '' : ' (not a JSON object)'}`;
  }
  return `${name} is not valid`;
}

/** Error bodies are not shown in the spec (§7): accept JSON of any shape, plain text, HTML or nothing. */
function readErrorBody(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    // An HTML error page (proxy, load balancer) says nothing useful to an operator.
    if (trimmed.startsWith('<')) return undefined;
    return trimmed;
  }
}

const CREDIT_HINT = /balance|credit/i;

function httpError(call: Call<unknown>, status: number, text: string, location: string | null, target: ServiceTarget): AvatarError {
  const body = readErrorBody(text);
  // Server text goes into messages people see: mask the key, tokens and `Token …` values if it echoes them.
  const rawServerMessage = errorMessageFromBody(body);
  const serverMessage = rawServerMessage === undefined ? undefined : redact(rawServerMessage);
  const serverCode = errorCodeFromBody(body);
  const details: Record<string, unknown> = { operation: call.op };
  if (serverCode) details.serverCode = serverCode;
  const withServer = (message: string) => (serverMessage ? `${message} The service said: "${serverMessage}"` : message);
  const make = (code: ErrorCode, message: string) => new AvatarError(code, message, { status, details });

  // The spec does not show the low-balance answer (§7): recognise 402 or any 4xx that talks about credits.
  const mentionsCredit = CREDIT_HINT.test(serverMessage ?? '') || CREDIT_HINT.test(serverCode ?? '');
  if (status === 402 || (status >= 400 && status < 500 && status !== 401 && mentionsCredit)) {
    return make(
      'insufficient_credits',
      withServer(`The account does not have enough credits to start (at least ${MIN_BALANCE_TO_START} are needed) (HTTP ${status}). Top up the account.`),
    );
  }
  if (status >= 300 && status < 400) {
    const to = location ? ` to ${location.split(/[?#]/)[0]}` : '';
    return make('invalid_config', `The service address redirects${to} (HTTP ${status}); configure the final address instead.`);
  }
  switch (status) {
    case 401:
      return make(
        'unauthorized',
        target.surface === 'direct'
          ? 'The API key was rejected by the avatar service (HTTP 401). Check the key in the settings.'
          : withServer('The gateway refused the request (HTTP 401). Check the gateway\'s own sign-in.'),
      );
    case 403:
      return make(
        'forbidden',
        withServer(
          call.op === 'querySession'
            ? 'This session was created with a different API key, so it cannot be read with this one (HTTP 403).'
            : 'The avatar service refused access (HTTP 403).',
        ),
      );
    case 404:
      return make(
        'not_found',
        call.op === 'querySession'
          ? `The session ${call.liveId ?? ''} does not exist or has expired (HTTP 404).`.replace('  ', ' ')
          : 'The avatar service does not know this address (HTTP 404). Check the service URL.',
      );
    case 400:
    case 422:
      if (typeof body === 'object' && body !== null) {
        const inner = (body as { error?: { field?: unknown } }).error;
        if (inner && typeof inner === 'object' && typeof inner.field === 'string') details.field = inner.field;
      }
      return make('invalid_request', withServer(`The avatar service rejected the ${requestLabel(call.op)} (HTTP ${status}).`));
    default:
      return make(
        'server',
        withServer(
          status >= 500
            ? `The avatar service had a problem (HTTP ${status}). Try again in a moment.`
            : `The avatar service answered with an unexpected status (HTTP ${status}).`,
        ),
      );
  }
}

function cancelled(cause: unknown): AvatarError {
  return new AvatarError('cancelled', 'The operation was cancelled.', { cause });
}

function timeoutReason(ms: number): Error {
  const error = new Error(`Request timed out after ${ms} ms`);
  error.name = 'TimeoutError';
  return error;
}

function networkDetail(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause ?? error;
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    const known: Record<string, string> = {
      ECONNREFUSED: 'connection refused',
      ECONNRESET: 'connection reset',
      ENOTFOUND: 'host not found',
      EAI_AGAIN: 'name lookup failed',
      ETIMEDOUT: 'connection timed out',
      EHOSTUNREACH: 'host unreachable',
      ENETUNREACH: 'network unreachable',
      UND_ERR_SOCKET: 'connection closed',
      CERT_HAS_EXPIRED: 'TLS certificate expired',
      DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
    };
    return known[code] ?? code;
  }
  return '';
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '?';
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured address';
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function operationLabel(op: Operation): string {
  return { createSession: 'creating a session', querySession: 'reading a session', cloneVoice: 'cloning a voice', listVoices: 'listing voices' }[op];
}

function requestLabel(op: Operation): string {
  return { createSession: 'session request', querySession: 'session query', cloneVoice: 'voice clone request', listVoices: 'voice list request' }[op];
}

/** The largest answer we read. This API's answers are a few kilobytes (the voice list the largest);
 *  anything bigger is a broken or hostile server, and reading it whole would take main's memory. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

/** The body as text. Past `maxBytes` the stream is cancelled, which closes the connection (the rest is
 *  never downloaded), and the answer is `protocol` (`'throw'`) or an empty text (`'empty'`). */
export async function readCappedText(res: Response, maxBytes: number, oversize: 'throw' | 'empty' = 'throw'): Promise<string> {
  const tooLarge = () => {
    if (oversize === 'empty') return '';
    throw new AvatarError('protocol', `The avatar service sent an answer larger than ${Math.round(maxBytes / 1024)} KB; it was not read. Check the service address.`);
  };
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    return tooLarge();
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return tooLarge();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
