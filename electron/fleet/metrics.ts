/**
 * Fleet metrics and health: Prometheus counters fed by the kiosk's event stream, and a
 * small node:http server for `/metrics` (text format) and `/healthz` (JSON). Electron-free; index.ts
 * creates it only when `metrics.enabled` and adds the renderer-crash and restart figures it alone knows.
 *
 * - Its own prom-client Registry (never the global one), so tests and a second instance never collide.
 * - Labels carry only bounded, non-secret values: outcome, hangup reasons from the spec's list (anything
 *   else is `other`), error codes from ERROR_CODES, spare statuses, renderer-gone reasons. Never a key,
 *   a token or a live_id.
 * - Each session is counted once: `creating` starts it, its first terminal state ends it; billing
 *   figures (credits, billed seconds, NOT_READY retries, reconnects) come from that terminal state's
 *   summary, which carries the final query's figures.
 * - A non-loopback bind requires a bearer token (config.ts refuses the configuration otherwise, and the
 *   server refuses to start); with a token, every request must carry `Authorization: Bearer <token>`,
 *   compared in constant time; anything else is answered 401 with no detail.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import type { CallFigures, HangupCause, KioskEvent, LastCallQuality, SpareEvent } from '../contract.ts';
import { AvatarError, ERROR_CODES, type ErrorCode } from '../core/errors.ts';
import { addSecret, silentLogger, type Logger } from '../core/log.ts';
import { HANGUP_REASONS } from '../core/protocol.ts';
import type { SessionPhase, SessionState } from '../core/session-types.ts';
import { CALL_LENGTH_BUCKETS, REFUSAL_KINDS, type FunnelCounts } from '../core/funnel.ts';
import { AGE_GATE_OUTCOMES, type AgeGateCounts } from '../kiosk/age-gate-counts.ts';
import { endedByContentReview } from '../kiosk/audit-count.ts';
import type { Kiosk } from '../kiosk/compose.ts';
import type { SafetyPosture } from '../kiosk/safety-config.ts';
import { isLoopbackHost, type KioskConfig } from '../kiosk/config.ts';

export const METRIC_PREFIX = 'avatar_kiosk_';
/** Time-to-live buckets in seconds: audio goes live in about a second, video warms up for several. */
export const TIME_TO_LIVE_BUCKETS = [0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60];
/** Call field-figure buckets in seconds: a pre-joined tap is ready in well under a second, a cold join with
 *  a warming video avatar takes several. */
export const CALL_FIGURE_BUCKETS = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8, 13, 20, 30];
/** The funnel's single-number steps, as /metrics labels them (the shared field names). */
const FUNNEL_STEPS = ['noticed', 'approached', 'greeted', 'tapped', 'gaveUp', 'failed', 'live', 'endedWell', 'endedBadly'] as const;

/** Electron's `render-process-gone` reasons; anything else is `other`. */
const RENDERER_GONE_REASONS = ['clean-exit', 'abnormal-exit', 'killed', 'crashed', 'oom', 'launch-failed', 'integrity-failure'];

/** What the metrics observe (`kioskMetricsSource` reads it off the kiosk's services). */
export interface MetricsSource {
  onEvent(listener: (event: KioskEvent) => void): () => void;
  /** The renderer's hangup requests with their cause (the kiosk's calls have it; optional for other sources). */
  onHangupCause?(listener: (cause: HangupCause, liveId: string | null) => void): () => void;
  readonly state: SessionState;
  readonly mode: string;
  /** The last call's connection figures, read at each scrape (absent: never exported). */
  readonly lastCallQuality?: LastCallQuality | null;
  /** The audience and moderation the kiosk runs with, and why adult was refused (absent: not exported). */
  readonly safety?: Pick<SafetyPosture, 'audience' | 'moderation' | 'region' | 'refusal'> | undefined;
  /** The age gate's counts since start (absent: not exported). */
  ageGateCounts?(): AgeGateCounts;
  /** The visitor funnel's counts since start (absent: not exported). */
  visitorCounts?(): FunnelCounts;
}

/** The kiosk's services as the metrics read them: its events, its calls, the mode, the last call's figures. */
export function kioskMetricsSource(kiosk: Pick<Kiosk, 'events' | 'calls' | 'connection' | 'telemetry'> & Partial<Pick<Kiosk, 'config' | 'ageGateCounts' | 'visitors'>>): MetricsSource {
  return {
    onEvent: (listener) => kiosk.events.onEvent(listener),
    onHangupCause: (listener) => kiosk.calls.onHangupCause(listener),
    get state() {
      return kiosk.calls.state;
    },
    get mode() {
      return kiosk.connection.mode;
    },
    get lastCallQuality() {
      return kiosk.telemetry.lastCallQuality;
    },
    get safety() {
      return kiosk.config?.safety;
    },
    ...(kiosk.ageGateCounts ? { ageGateCounts: () => kiosk.ageGateCounts!() } : {}),
    ...(kiosk.visitors ? { visitorCounts: () => kiosk.visitors!.sinceStart() } : {}),
  };
}

export interface Health {
  up: true;
  mode: string;
  sessionPhase: SessionPhase;
  lastErrorCode: ErrorCode | null;
  version: string;
}

export interface KioskMetricsOptions {
  version: string;
  /** How many times the app was launched before this run (persisted by index.ts). Default 0. */
  restarts?: number;
}

export interface KioskMetrics {
  readonly registry: Registry;
  /** Subscribe to a service's events; returns the unsubscribe function. */
  observe(source: MetricsSource): () => void;
  /** The renderer process went away (`render-process-gone`). */
  rendererGone(reason: string): void;
  /** An error outside a session (e.g. an invalid configuration at start-up). */
  recordError(code: ErrorCode): void;
  health(): Health;
  /** The Prometheus text exposition. */
  render(): Promise<string>;
}

export function createKioskMetrics(options: KioskMetricsOptions): KioskMetrics {
  const registry = new Registry();
  const registers = [registry];
  const name = (n: string) => `${METRIC_PREFIX}${n}`;

  const started = new Counter({ name: name('sessions_started_total'), help: 'Sessions started (a create request was made).', registers });
  const ended = new Counter({
    name: name('sessions_ended_total'),
    help: 'Sessions ended, by outcome (ended, failed) and end reason (a spec hangup reason, an error code, or other).',
    labelNames: ['outcome', 'end_reason'] as const,
    registers,
  });
  const wentLive = new Counter({ name: name('sessions_live_total'), help: 'Sessions that went live (billing started).', registers });
  const timeToLive = new Histogram({
    name: name('time_to_live_seconds'),
    help: 'From the create request to live (seconds).',
    buckets: TIME_TO_LIVE_BUCKETS,
    registers,
  });
  const notReady = new Counter({ name: name('not_ready_retries_total'), help: 'NOT_READY answers waited out (avatar warming up).', registers });
  const reconnects = new Counter({ name: name('reconnects_total'), help: 'Control-socket reconnects during live sessions.', registers });
  // Demo calls (the built-in emulator's play money) are never counted in the two below.
  const credits = new Counter({ name: name('credits_total'), help: 'Credits billed, from the final query of each session.', registers });
  const billed = new Counter({ name: name('billed_seconds_total'), help: 'Billed seconds, from the final query of each session.', registers });
  const spares = new Counter({
    name: name('spares_total'),
    help: 'Pre-warmed (spare) sessions by status: created, used, expired, failed.',
    labelNames: ['status'] as const,
    registers,
  });
  const rendererCrashes = new Counter({
    name: name('renderer_crashes_total'),
    help: 'Renderer processes gone, by Electron reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  const restarts = new Counter({ name: name('app_restarts_total'), help: 'Launches of the app before this one (persisted across runs).', registers });
  const errors = new Counter({ name: name('errors_total'), help: 'Errors by code (failed sessions and start-up problems).', labelNames: ['code'] as const, registers });
  const info = new Gauge({ name: name('info'), help: 'Always 1; labels say the version and the service mode.', labelNames: ['version', 'mode'] as const, registers });
  const mediaStalled = new Counter({
    name: name('media_stalled_total'),
    help: 'Live calls hung up by the media watchdog (the avatar\'s picture or voice stopped arriving for 20 s).',
    registers,
  });
  // Field figures of real calls, from the RTC SDK's own events (the renderer's reports, timed by main from
  // the tap). The only honest first-frame figures: the bench measures the client, not the avatar.
  const callFigure = (metric: string, help: string): Histogram<'call_mode' | 'proxy'> =>
    new Histogram({ name: name(metric), help: `${help} Labels: call mode, cloud proxy mode.`, labelNames: ['call_mode', 'proxy'] as const, buckets: CALL_FIGURE_BUCKETS, registers });
  const figureHistograms = {
    tapToRtcReadyMs: callFigure('call_tap_to_rtc_ready_seconds', 'From the tap to our RTC side ready (joined, microphone published), seconds.'),
    tapToConnInitAckMs: callFigure('call_tap_to_conn_init_ack_seconds', 'From the tap to the conn_init ack (live, billing starts), seconds.'),
    tapToAvatarPublishedMs: callFigure('call_tap_to_avatar_published_seconds', "From the tap to the avatar's user-published in the RTC channel, seconds."),
    tapToFirstFrameMs: callFigure('call_tap_to_first_frame_seconds', "From the tap to the avatar's first decoded video frame (video calls), seconds."),
    tapToFirstAudioMs: callFigure('call_tap_to_first_audio_seconds', "From the tap to the avatar's first audio (voice-only calls), seconds."),
    joinMs: callFigure('call_rtc_join_seconds', 'The RTC channel join itself (client.join), seconds.'),
  } as const;

  // Calls the service's content review ended: its own series so an alert needs no end-reason label.
  const auditViolations = new Counter({ name: name('audit_violations_total'), help: "Calls the avatar service's content review ended (hang-up reason audit_violation).", registers });
  new Counter({
    name: name('age_gate_total'),
    help: 'Visitors at the age gate of an adult kiosk since start, by outcome (asked, confirmed, declined); only counts are kept.',
    labelNames: ['outcome'] as const,
    registers,
    collect() {
      this.reset();
      const counts = source?.ageGateCounts?.();
      if (counts) for (const outcome of AGE_GATE_OUTCOMES) this.inc({ outcome }, counts[outcome]);
    },
  });
  // The visitor funnel (docs/analytics.md): counts since start, no label that could name a person.
  const funnelCounter = (metric: string, help: string, label: string, read: (c: FunnelCounts) => Array<[string, number]>) =>
    new Counter({
      name: name(metric),
      help,
      labelNames: [label],
      registers,
      collect() {
        this.reset();
        const counts = source?.visitorCounts?.();
        if (counts) for (const [value, n] of read(counts)) this.inc({ [label]: value }, n);
      },
    });
  funnelCounter('visitor_funnel_total', 'The visitor funnel since start, by step (noticed, approached, greeted, tapped, gaveUp, failed, live, endedWell, endedBadly); counts only.', 'step', (c) =>
    FUNNEL_STEPS.map((step) => [step, c[step]]),
  );
  funnelCounter('visitor_refusals_total', 'Taps that created nothing since start, by what refused them (ageGate, closed, outOfOrder).', 'kind', (c) => REFUSAL_KINDS.map((k) => [k, c.refused[k]]));
  funnelCounter('visitor_call_length_total', 'Conversations that went live since start, by length (under1m, from1to3m, from3to10m, over10m).', 'bucket', (c) =>
    CALL_LENGTH_BUCKETS.map((b) => [b, c.callLength[b]]),
  );
  new Gauge({
    name: name('safety_info'),
    help: 'Always 1: the audience the kiosk runs as, the moderation every create sends, its region, and whether an adult setting was refused.',
    labelNames: ['audience', 'moderation', 'region', 'adult_refused'] as const,
    registers,
    collect() {
      this.reset();
      const s = source?.safety;
      if (s) this.set({ audience: s.audience, moderation: s.moderation, region: s.region ?? '', adult_refused: s.refusal ? 'true' : 'false' }, 1);
    },
  });
  const active = new Gauge({ name: name('session_active'), help: '1 while a session is under way (creating to ending), else 0.', registers });

  // The last call's connection figures: set at scrape time from the source, absent until a call reported.
  const lastCall = (): LastCallQuality | null => source?.lastCallQuality ?? null;
  // Labelled by the call's quality level (a bounded word), which also keeps them absent rather than 0
  // until a call has reported figures: an unlabelled gauge would read 0 ms round trip.
  const lastCallGauge = (metric: string, help: string, pick: (q: LastCallQuality) => number): Gauge<'level'> =>
    new Gauge({
      name: name(metric),
      help: `${help} Label: the quality level (good, fair, poor, down, unknown).`,
      labelNames: ['level'] as const,
      registers,
      collect() {
        this.reset();
        const q = lastCall();
        if (q) this.set({ level: q.level }, pick(q));
      },
    });
  lastCallGauge('last_call_bitrate_kbps', "The last call's received bitrate (kbps), as the renderer last reported it.", (q) => q.bitrateKbps);
  lastCallGauge('last_call_packet_loss_ratio', "The last call's received packet loss (0 to 1).", (q) => q.packetLossPct / 100);
  lastCallGauge('last_call_frame_rate', "The last call's received avatar frame rate (fps; 0 in an audio call).", (q) => q.frameRate);
  lastCallGauge('last_call_rtt_ms', "The last call's round trip to the RTC provider's edge (ms).", (q) => q.rttMs);

  restarts.inc(Math.max(0, Math.floor(options.restarts ?? 0)));
  let source: MetricsSource | null = null;
  let lastErrorCode: ErrorCode | null = null;
  /** The session being counted: set at `creating`, cleared once its terminal state is counted. */
  let counting = false;

  function recordError(code: ErrorCode): void {
    const known = (ERROR_CODES as readonly string[]).includes(code) ? code : 'internal';
    errors.inc({ code: known });
    lastErrorCode = known;
  }

  function onState(state: SessionState): void {
    if (state.phase === 'creating') {
      started.inc();
      counting = true;
      return;
    }
    if (state.phase !== 'ended' && state.phase !== 'failed') return;
    if (!counting) return; // already counted (a rewritten terminal state, a late repeat)
    counting = false;
    const summary = state.summary;
    let reason: string;
    if (summary?.hangupReason) reason = (HANGUP_REASONS as readonly string[]).includes(summary.hangupReason) ? summary.hangupReason : 'other';
    else if (state.phase === 'failed') reason = state.error.code;
    else reason = 'other';
    ended.inc({ outcome: state.phase, end_reason: reason });
    if (endedByContentReview(state)) auditViolations.inc();
    if (state.phase === 'failed') recordError(state.error.code);
    if (!summary) return;
    if (summary.wentLive) wentLive.inc();
    if (summary.wentLive && summary.timingsMs.live !== null) timeToLive.observe(summary.timingsMs.live / 1000);
    if (summary.notReadyRetries > 0) notReady.inc(summary.notReadyRetries);
    if (summary.reconnects > 0) reconnects.inc(summary.reconnects);
    // The emulator's figures are play money: a demo call is never added to what the account was billed.
    if (source?.mode === 'demo') return;
    if (summary.creditsCost !== null && summary.creditsCost > 0) credits.inc(summary.creditsCost);
    if (summary.billedSeconds !== null && summary.billedSeconds > 0) billed.inc(summary.billedSeconds);
  }

  function onFigures(figures: CallFigures): void {
    const labels = { call_mode: figures.callMode, proxy: figures.proxy };
    for (const [key, histogram] of Object.entries(figureHistograms) as Array<[keyof typeof figureHistograms, Histogram<'call_mode' | 'proxy'>]>) {
      const ms = figures[key];
      if (ms !== null) histogram.observe(labels, ms / 1000);
    }
  }

  function onSpare(event: SpareEvent): void {
    const status = ['created', 'used', 'expired', 'failed'].includes(event.status) ? event.status : 'other';
    spares.inc({ status });
  }

  function refreshGauges(): void {
    info.reset();
    info.set({ version: options.version, mode: source?.mode ?? 'unknown' }, 1);
    const phase = source?.state.phase ?? 'idle';
    active.set(phase === 'idle' || phase === 'ended' || phase === 'failed' ? 0 : 1);
  }

  return {
    registry,
    observe(s) {
      source = s;
      const offEvents = s.onEvent((event) => {
        if (event.type === 'state') onState(event.state);
        else if (event.type === 'spare') onSpare(event);
        else if (event.type === 'call-figures') onFigures(event.figures);
      });
      const offCauses = s.onHangupCause?.((cause) => {
        if (cause === 'media_stalled') mediaStalled.inc();
      });
      return () => {
        offEvents();
        offCauses?.();
      };
    },
    rendererGone(reason) {
      rendererCrashes.inc({ reason: RENDERER_GONE_REASONS.includes(reason) ? reason : 'other' });
    },
    recordError,
    health() {
      return { up: true, mode: source?.mode ?? 'unknown', sessionPhase: source?.state.phase ?? 'idle', lastErrorCode, version: options.version };
    },
    async render() {
      refreshGauges();
      return registry.metrics();
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The HTTP endpoint

export interface MetricsServerOptions {
  metrics: KioskMetrics;
  host: string;
  port: number;
  token?: string | undefined;
  logger?: Logger;
  /** Connections held at once; more are closed on arrival. Default METRICS_MAX_CONNECTIONS. */
  maxConnections?: number;
  /** A socket with no traffic for this long is closed. Default METRICS_IDLE_TIMEOUT_MS. */
  idleTimeoutMs?: number;
}

/** A Prometheus scraper needs one or two; anyone on the LAN must not be able to hold hundreds open. */
export const METRICS_MAX_CONNECTIONS = 16;
/** Scrapes take milliseconds; a socket silent for this long is someone holding it. */
export const METRICS_IDLE_TIMEOUT_MS = 15_000;

export interface MetricsServer {
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Serve `/metrics` and `/healthz`. Rejects (AvatarError invalid_config) on a non-loopback host without a token. */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { metrics, host, port } = options;
  const logger = options.logger ?? silentLogger;
  const token = options.token ?? null;
  if (!token && !isLoopbackHost(host)) {
    throw new AvatarError('invalid_config', `Metrics on "${host}" need metrics.token: only loopback addresses may serve them without one.`, {
      details: { field: 'metrics.token' },
    });
  }
  addSecret(token);
  const expected = token ? digest(`Bearer ${token}`) : null;

  const authorized = (req: IncomingMessage): boolean => {
    if (!expected) return true;
    const given = req.headers.authorization;
    return typeof given === 'string' && timingSafeEqual(digest(given.trim()), expected);
  };

  // Without a token only this computer may read them, and a venue web page must not either: a DNS-rebound
  // name reaches 127.0.0.1 with its own Host, so (as the browser mode's host does) only a loopback Host
  // with this port is answered. With a token the token is the gate (a scraper may use any name).
  let boundPort = 0;
  const hostAllowed = (req: IncomingMessage): boolean => {
    if (expected) return true;
    const given = req.headers.host;
    if (typeof given !== 'string') return false;
    let url: URL;
    try {
      url = new URL(`http://${given}`);
    } catch {
      return false;
    }
    return isLoopbackHost(url.hostname) && (url.port || '80') === String(boundPort) && url.username === '' && url.pathname === '/';
  };

  const answer = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        return answer(res, 405, 'text/plain; charset=utf-8', 'Method not allowed\n');
      }
      if (!hostAllowed(req)) return answer(res, 421, 'text/plain; charset=utf-8', 'Misdirected request\n');
      if (path !== '/metrics' && path !== '/healthz') return answer(res, 404, 'text/plain; charset=utf-8', 'Not found\n');
      if (!authorized(req)) {
        res.setHeader('www-authenticate', 'Bearer realm="avatar-kiosk"');
        return answer(res, 401, 'text/plain; charset=utf-8', 'Unauthorized\n');
      }
      if (path === '/healthz') return answer(res, 200, 'application/json; charset=utf-8', `${JSON.stringify(metrics.health())}\n`);
      return answer(res, 200, metrics.registry.contentType, await metrics.render());
    })().catch((error: unknown) => {
      logger.warn('The metrics endpoint failed to answer', { error: String(error) });
      if (!res.headersSent) answer(res, 500, 'text/plain; charset=utf-8', 'Internal error\n');
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  // No token is needed on loopback, and the port may face the LAN: bound what idle sockets can hold.
  server.maxConnections = options.maxConnections ?? METRICS_MAX_CONNECTIONS;
  const idleMs = options.idleTimeoutMs ?? METRICS_IDLE_TIMEOUT_MS;
  server.keepAliveTimeout = Math.min(5_000, idleMs);
  server.setTimeout(idleMs, (socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  boundPort = bound;
  logger.info('Metrics endpoint ready', { host, port: bound, auth: token ? 'bearer' : 'none (loopback)' });
  let closing: Promise<void> | null = null;
  return {
    port: bound,
    host,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Start-up glue (index.ts): the launch counter file and the whole endpoint, never fatal

const launchStateSchema = z.strictObject({ launches: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) });

/** Count this launch in `path` (JSON `{launches}`); answers how many launches came before. A missing or bad file counts from 0. */
export function countLaunch(path: string): number {
  let before = 0;
  try {
    const parsed = launchStateSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (parsed.success) before = parsed.data.launches;
  } catch {
    // first launch, or an unreadable file: start again from 0
  }
  try {
    writeFileSync(path, `${JSON.stringify({ launches: before + 1 })}\n`);
  } catch {
    // a read-only profile: restarts then read 0, which Prometheus sees as a counter reset
  }
  return before;
}

export interface FleetMetrics {
  readonly metrics: KioskMetrics;
  readonly server: MetricsServer;
  close(): Promise<void>;
}

/** When `metrics.enabled`: count the launch, observe the service, serve. A failure (port taken) is logged, never thrown. */
export async function startFleetMetrics(options: {
  config: Pick<KioskConfig, 'metrics'>;
  service: MetricsSource;
  version: string;
  launchStatePath: string;
  startupErrors?: ErrorCode[];
  logger?: Logger;
}): Promise<FleetMetrics | null> {
  const { config, logger = silentLogger } = options;
  if (!config.metrics.enabled) return null;
  const metrics = createKioskMetrics({ version: options.version, restarts: countLaunch(options.launchStatePath) });
  for (const code of options.startupErrors ?? []) metrics.recordError(code);
  const off = metrics.observe(options.service);
  try {
    const server = await startMetricsServer({ metrics, host: config.metrics.host, port: config.metrics.port, token: config.metrics.token, logger });
    return {
      metrics,
      server,
      async close() {
        off();
        await server.close();
      },
    };
  } catch (error) {
    off();
    logger.error('The metrics endpoint could not start; the kiosk runs without it', { error: error instanceof Error ? error.message : String(error) });
    return null;
  }
}
