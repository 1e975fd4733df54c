/**
 * Spare ("pre-warmed") sessions for fast start. Electron-free; the kiosk (compose.ts) owns one
 * `SpareManager`: availability.ts feeds it the attract screen's reports, the call orchestrator its busy
 * state and the outcome of its creates (spare-adoption.ts). A spare is the NEXT visitor's session, created
 * ahead of the tap:
 *
 *   created over REST (spec §4.1: `waiting`, not billed) → control socket opened with `holdConnInit`
 *   (answers pings, sends keep-alives, never conn_init) → one of:
 *     - used:    the tap takes it (`take`); the SessionController sends conn_init on its open socket, so
 *                tap → live is one round trip once the avatar is ready (spec §3 waiting → on_live);
 *     - expired: unused for `maxAgeSeconds`, nobody in front of the kiosk for 20 s, settings changed, the
 *                visitor chose the other call mode, or shutdown → type 5 (`user_end`) before any conn_init,
 *                so the service never bills it (spec §3: billing starts at the conn_init ack);
 *     - failed:  the create failed, the socket was lost or refused (404 expired), or its first conn_init
 *                failed after the tap (LIVE_CONN_INIT_FAILED) → dropped quietly; the tap takes the normal path.
 *   Every spare's life ends in exactly one `SpareEvent` (`used` | `expired` | `failed`), after `created`
 *   (a spare whose create failed has only `failed`, with liveId null).
 *
 * When spares are made (`prewarm.mode`):
 *   - `off`: never;
 *   - `always`: while the attract screen shows;
 *   - `on-approach` (default): while the attract screen shows and someone is present; where presence is
 *     unknown (`present: null`: no camera, camera disabled) it behaves like `always`.
 * Never while a session runs, while the last create failed with 401/402/403 (or the account ran out of
 * credits), within 30 s of a failed spare, or beyond `maxPerHour` creates in any rolling hour.
 */
import { buildCreateRequest, type BuiltCreateRequest } from '../core/avatar-input.ts';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import { ControlSocket, type ControlSocketOutcome } from '../core/control-socket.ts';
import type { KeepAlive } from '../core/keep-alive.ts';
import { toAvatarError, type ErrorCode } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import type { CallMode, CreateSessionResponse } from '../core/protocol.ts';
import { hangupWithoutConnInit } from '../core/remote-hangup.ts';
import type { ServiceClient } from '../core/rest-client.ts';
import { DEFAULT_CREATE_ANSWER_WAIT_MS, type AdoptedSession } from '../core/session-controller.ts';
import type { StartOptions } from '../core/session-types.ts';
import { wsTransportFactory, type TransportFactory } from '../core/transport.ts';
import type { AttractReportArgs, PrewarmMode, SpareEvent } from '../contract.ts';

export interface PrewarmSettings {
  mode: PrewarmMode;
  /** An unused spare is closed (type 5, never billed) this long after its create answered. */
  maxAgeSeconds: number;
  /** At most this many spare creates in any rolling hour. */
  maxPerHour: number;
}

/** "Nobody for 20 s": a spare made on approach is closed after this much absence. */
export const NOBODY_CLOSE_MS = 20_000;
/** After a failed spare, wait this long before the next (a broken service must not be hammered). */
export const FAILURE_COOLDOWN_MS = 30_000;
/** How long a tap waits for a spare still being created or opened before taking the normal path. */
export const TAKE_WAIT_MS = 10_000;
/** Bound on delivering a type 5 over a fresh socket to a spare whose own socket is gone. */
export const SPARE_HANGUP_TIMEOUT_MS = 3_000;
export const HOUR_MS = 3_600_000;
/** At shutdown, how long a spare's create in flight may take to answer so its room can be closed. */
export const CREATE_ANSWER_WAIT_MS = DEFAULT_CREATE_ANSWER_WAIT_MS;
/** Create failures that stop spares until a create succeeds again or the key changes (spec §7, §8). */
export const BLOCKING_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['unauthorized', 'forbidden', 'insufficient_credits']);

export type SpareClient = Pick<ServiceClient, 'createSession' | 'socketRequest'>;

export interface SpareManagerOptions {
  settings: PrewarmSettings;
  /** The client sessions use right now (null: not configured → no spares). Re-read on every create. */
  getClient(): SpareClient | null;
  /** The options a tap would start with (the configured default call mode). Re-read on every create. */
  startOptions(): StartOptions;
  emit(event: SpareEvent): void;
  clock?: Clock;
  logger?: Logger;
  transportFactory?: TransportFactory;
  /** Default `buildCreateRequest` (the same request a tap would send). */
  buildRequest?: (options: StartOptions) => Promise<BuiltCreateRequest>;
  /** Control socket keep-alive cadence / dead detection (defaults: ControlSocket's `DEFAULT_KEEP_ALIVE_INTERVAL_MS` / `DEFAULT_DEAD_AFTER_MS`). */
  keepAliveIntervalMs?: number;
  deadAfterMs?: number;
  /** The keep-alive that works with the current service (shared with its calls). Re-read for every socket. */
  keepAlive?: () => KeepAlive;
}

/** A spare handed to a tap. `settle` records how its first conn_init went (once; later calls are ignored). */
export interface TakenSpare {
  liveId: string;
  callMode: CallMode;
  adopt: AdoptedSession;
  settle(status: 'used' | 'expired' | 'failed', reason?: string): void;
}

type SparePhase = 'creating' | 'opening' | 'ready';

interface Spare {
  seq: number;
  phase: SparePhase;
  callMode: CallMode;
  /** What the session was created with; a different one at the tap means the settings changed. */
  fingerprint: string;
  abort: AbortController;
  /** The client its create went to: its room is closed with that client (that key), whatever is current by then. */
  client: SpareClient | null;
  /** The create POST is out: a room may exist, and only the answer names it. */
  createSent: boolean;
  /** Bounds the wait for that answer once the spare is dropped during shutdown. */
  createWaitTimer: TimerHandle | null;
  created: CreateSessionResponse | null;
  socket: ControlSocket | null;
  ageTimer: TimerHandle | null;
  /** Resolves true once ready, false once ended. */
  settled: Promise<boolean>;
  resolveSettled(ready: boolean): void;
  /** Its life ended (event emitted) or it was taken. */
  done: boolean;
}

export class SpareManager {
  readonly #settings: PrewarmSettings;
  readonly #opts: SpareManagerOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #transportFactory: TransportFactory;
  readonly #buildRequest: (options: StartOptions) => Promise<BuiltCreateRequest>;

  #showing = false;
  #present: boolean | null = null;
  #busy = false;
  #closed = false;
  /** Why spares are stopped (a blocking create failure), or null. */
  #blockedBy: ErrorCode | 'credit_insufficient' | null = null;
  #spare: Spare | null = null;
  #seq = 0;
  /** Clock times of spare creates within the last hour. */
  #creates: number[] = [];
  #cooldownUntilMs = 0;
  #nobodyTimer: TimerHandle | null = null;
  #wakeTimer: TimerHandle | null = null;
  #limitLogged = false;
  /** Hangups, creates and closes in flight; `close()` waits for them. */
  readonly #tasks = new Set<Promise<unknown>>();

  constructor(options: SpareManagerOptions) {
    this.#opts = options;
    this.#settings = options.settings;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger ?? silentLogger;
    this.#transportFactory = options.transportFactory ?? wsTransportFactory;
    this.#buildRequest = options.buildRequest ?? ((o) => buildCreateRequest(o));
  }

  /** For tests and diagnostics: the spare's phase, or null. */
  get phase(): SparePhase | null {
    return this.#spare?.phase ?? null;
  }

  /** For diagnostics: why spares are blocked, or null. */
  get blockedBy(): string | null {
    return this.#blockedBy;
  }

  /** The attract screen shows/hides or presence changed (IPC `attract.report`). Repeats are harmless. */
  report(args: AttractReportArgs): void {
    if (this.#closed) return;
    const presenceChanged = args.present !== this.#present;
    this.#showing = args.showing;
    this.#present = args.present;
    if (presenceChanged) this.#onPresence();
    this.#evaluate();
  }

  /** A session is running (no new spares) or over (spares may resume). */
  setBusy(busy: boolean): void {
    if (this.#busy === busy) return;
    this.#busy = busy;
    this.#evaluate();
  }

  /** The outcome of a normal-path create: a blocking failure stops spares, a success lifts the stop. */
  noteCreateOutcome(error: ErrorCode | null): void {
    if (error === null) {
      if (this.#blockedBy) this.#log.info('spare: a create succeeded; spare sessions resume', { wasBlockedBy: this.#blockedBy });
      this.#blockedBy = null;
    } else if (BLOCKING_CODES.has(error)) {
      this.#block(error);
    }
    this.#evaluate();
  }

  /** The account ran out of credits (a `credit_insufficient` hangup): no spares until a create succeeds. */
  noteOutOfCredits(): void {
    this.#block('credit_insufficient');
  }

  /** Drop the spare (settings changed, API key changed…); `unblock` also forgets a blocking failure. */
  discard(reason: string, options: { unblock?: boolean } = {}): void {
    if (options.unblock) this.#blockedBy = null;
    const spare = this.#spare;
    if (spare) this.#end(spare, 'expired', reason);
    this.#evaluate();
  }

  /**
   * The tap: hand over the spare if it matches (same call mode, same settings), waiting for one still being
   * created or opened (bounded). Returns null for the normal path; a mismatching spare is closed.
   */
  async take(callMode: CallMode, startOptions: StartOptions): Promise<TakenSpare | null> {
    const spare = this.#spare;
    if (!spare || spare.done || this.#closed) return null;
    if (spare.callMode !== callMode) {
      this.#end(spare, 'expired', 'other_call_mode');
      return null;
    }
    if (spare.fingerprint !== fingerprint(startOptions)) {
      this.#end(spare, 'expired', 'settings_changed');
      return null;
    }
    if (spare.phase !== 'ready') {
      let timer: TimerHandle | null = null;
      const timeout = new Promise<boolean>((resolve) => (timer = this.#clock.setTimeout(() => resolve(false), TAKE_WAIT_MS)));
      const ready = await Promise.race([spare.settled, timeout]);
      if (timer !== null) this.#clock.clearTimeout(timer);
      if (!ready || spare.done || this.#spare !== spare) {
        if (!spare.done) this.#end(spare, 'expired', 'not_ready_at_tap');
        return null;
      }
    }
    const socket = spare.socket;
    const created = spare.created;
    if (!created || !socket || !socket.isOpen) {
      this.#end(spare, 'failed', 'socket_lost');
      return null;
    }
    // Hand over: the manager forgets it; the controller re-routes the socket's outcomes to itself.
    spare.done = true;
    this.#spare = null;
    this.#clearAgeTimer(spare);
    socket.setOutcomeListener((outcome) => this.#log.debug('spare: outcome before adoption', { outcome: outcome.kind }));
    let settled = false;
    const liveId = created.live.id;
    this.#log.info('spare: taken by a tap', { liveId, callMode });
    return {
      liveId,
      callMode,
      adopt: { created, socket },
      settle: (status, reason) => {
        if (settled) return;
        settled = true;
        if (status === 'failed') this.#cooldownUntilMs = this.#clock.now() + FAILURE_COOLDOWN_MS;
        this.#emitEnd(status, liveId, callMode, reason);
      },
    };
  }

  /** Shutdown: close the spare with type 5 (exactly once), stop every timer, wait for closes in flight. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#clearTimer('nobody');
      this.#clearTimer('wake');
      const spare = this.#spare;
      if (spare) this.#end(spare, 'expired', 'shutdown');
    }
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  // --- deciding ----------------------------------------------------------------------------------------

  /** Should a spare exist right now? (Whether one may be created is `#mayCreate`.) */
  #wanted(): boolean {
    if (this.#closed || this.#busy || !this.#showing) return false;
    switch (this.#settings.mode) {
      case 'off':
        return false;
      case 'always':
        return true;
      case 'on-approach':
        return this.#present !== false;
    }
  }

  #evaluate(): void {
    if (this.#spare || !this.#wanted()) return;
    if (this.#blockedBy) return;
    if (!this.#opts.getClient()) return;
    const now = this.#clock.now();
    this.#creates = this.#creates.filter((t) => now - t < HOUR_MS);
    if (this.#creates.length >= this.#settings.maxPerHour) {
      if (!this.#limitLogged) this.#log.info('spare: hourly limit reached; taps take the normal path', { maxPerHour: this.#settings.maxPerHour });
      this.#limitLogged = true;
      const oldest = this.#creates[0];
      if (oldest !== undefined) this.#wakeAt(oldest + HOUR_MS);
      return;
    }
    if (now < this.#cooldownUntilMs) {
      this.#wakeAt(this.#cooldownUntilMs);
      return;
    }
    this.#limitLogged = false;
    this.#create();
  }

  #onPresence(): void {
    if (this.#settings.mode !== 'on-approach') return;
    if (this.#present === false) {
      // "Nobody for 20 s" → the spare is closed: it would expire unused and only hold a service slot.
      if (this.#nobodyTimer === null) {
        this.#nobodyTimer = this.#clock.setTimeout(() => {
          this.#nobodyTimer = null;
          const spare = this.#spare;
          if (spare && this.#present === false) this.#end(spare, 'expired', 'nobody_present');
        }, NOBODY_CLOSE_MS);
      }
    } else {
      this.#clearTimer('nobody');
    }
  }

  #block(why: ErrorCode | 'credit_insufficient'): void {
    if (this.#blockedBy !== why) this.#log.warn('spare: stopped until a create succeeds', { why });
    this.#blockedBy = why;
    const spare = this.#spare;
    if (spare) this.#end(spare, 'expired', `blocked_${why}`);
  }

  // --- one spare's life ----------------------------------------------------------------------------------

  #create(): void {
    let resolveSettled!: (ready: boolean) => void;
    const settled = new Promise<boolean>((resolve) => (resolveSettled = resolve));
    const startOptions = this.#opts.startOptions();
    const spare: Spare = {
      seq: ++this.#seq,
      phase: 'creating',
      callMode: startOptions.callMode,
      fingerprint: fingerprint(startOptions),
      abort: new AbortController(),
      client: null,
      createSent: false,
      createWaitTimer: null,
      created: null,
      socket: null,
      ageTimer: null,
      settled,
      resolveSettled,
      done: false,
    };
    this.#spare = spare;
    this.#creates.push(this.#clock.now());
    this.#track(this.#runCreate(spare, startOptions));
  }

  async #runCreate(spare: Spare, startOptions: StartOptions): Promise<void> {
    const client = this.#opts.getClient();
    spare.client = client;
    let created: CreateSessionResponse;
    try {
      if (!client) throw toAvatarError(new Error('The service is not configured.'), 'invalid_config');
      const built = await this.#buildRequest(startOptions);
      if (spare.abort.signal.aborted) throw toAvatarError(spare.abort.signal.reason, 'cancelled');
      spare.createSent = true;
      created = await client.createSession(built.request, { signal: spare.abort.signal });
    } catch (error) {
      this.#clearCreateWait(spare);
      const e = toAvatarError(error);
      if (BLOCKING_CODES.has(e.code)) this.#blockedBy = e.code;
      if (!spare.done) this.#end(spare, 'failed', e.code);
      else this.#log.debug('spare: create ended after the spare was dropped', { code: e.code });
      this.#evaluate();
      return;
    }
    this.#clearCreateWait(spare);
    spare.created = created;
    const liveId = created.live.id;
    if (this.#blockedBy) this.#blockedBy = null; // a create succeeded: the account works again
    if (spare.done) {
      // Dropped while its create was in flight (settings changed, nobody there, shutdown): close the room
      // it made anyway, before any conn_init, so it is never billed. Its end was already recorded.
      this.#log.info('spare: closing a room created after the spare was dropped', { liveId });
      this.#hangupOverFreshSocket(liveId, client!);
      return;
    }
    this.#log.info('spare: created', { liveId, callMode: spare.callMode });
    this.#opts.emit({ type: 'spare', status: 'created', liveId, callMode: spare.callMode, rtc: created.rtc });
    // A listener may drop the spare on hearing of it (the kiosk closing, say): `#end` has closed its room
    // already, so nothing more is opened or timed for it.
    if (spare.done) return;
    spare.ageTimer = this.#clock.setTimeout(() => {
      spare.ageTimer = null;
      if (!spare.done) this.#end(spare, 'expired', 'max_age');
    }, this.#settings.maxAgeSeconds * 1000);
    spare.phase = 'opening';
    try {
      const { url, headers } = client!.socketRequest(liveId);
      spare.socket = new ControlSocket({
        liveId,
        url,
        headers,
        transportFactory: this.#transportFactory,
        clock: this.#clock,
        logger: this.#log,
        holdConnInit: true,
        ...(this.#opts.keepAliveIntervalMs !== undefined ? { keepAliveIntervalMs: this.#opts.keepAliveIntervalMs } : {}),
        ...(this.#opts.deadAfterMs !== undefined ? { deadAfterMs: this.#opts.deadAfterMs } : {}),
        ...(this.#opts.keepAlive ? { keepAlive: this.#opts.keepAlive() } : {}),
        onOutcome: (outcome) => this.#onSocketOutcome(spare, outcome),
      });
    } catch (error) {
      this.#end(spare, 'failed', toAvatarError(error).code);
    }
  }

  #onSocketOutcome(spare: Spare, outcome: ControlSocketOutcome): void {
    if (spare.done) return;
    switch (outcome.kind) {
      case 'open':
        spare.phase = 'ready';
        spare.resolveSettled(true);
        this.#log.debug('spare: control socket open, holding conn_init', { liveId: spare.created?.live.id });
        return;
      case 'forced-hangup':
        return this.#end(spare, 'failed', `forced_hangup_${outcome.reason}`);
      case 'closed':
        return this.#end(spare, 'failed', 'socket_lost');
      case 'dead':
        return this.#end(spare, 'failed', 'socket_dead');
      case 'error':
        return this.#end(spare, 'failed', outcome.error.code);
      case 'ack-success':
      case 'ack-not-ready':
      case 'ack-failed':
        return; // never: conn_init is held
    }
  }

  /**
   * End the spare's life: record it (one event), and close its room before any conn_init with type 5
   * (spec §6 rule 7) — over its own socket when open, else over a fresh socket that sends only the hangup.
   * A room that is gone (404) or whose create never answered needs nothing.
   */
  #end(spare: Spare, status: 'expired' | 'failed', reason: string): void {
    if (spare.done) return;
    spare.done = true;
    if (this.#spare === spare) this.#spare = null;
    this.#clearAgeTimer(spare);
    spare.resolveSettled(false);
    const liveId = spare.created?.live.id ?? null;
    if (status === 'failed') this.#cooldownUntilMs = this.#clock.now() + FAILURE_COOLDOWN_MS;
    this.#log.info(`spare: ${status}`, { liveId, reason });
    const socket = spare.socket;
    spare.socket = null;
    if (socket && socket.isOpen) {
      socket.hangup('user_end');
      this.#track(socket.closed);
    } else {
      if (socket) {
        socket.terminate();
        this.#track(socket.closed);
      }
      const client = spare.client;
      if (liveId && client && reason !== 'not_found' && !reason.startsWith('forced_hangup')) this.#hangupOverFreshSocket(liveId, client);
      // Still creating: let the create answer, whatever ended the spare (shutdown included), and
      // `#runCreate` closes the room it made (never billed). Shutdown waits for that, bounded: a create
      // not sent yet is simply stopped, one that does not answer in time is given up.
      if (!spare.created && this.#closed) {
        if (!spare.createSent) spare.abort.abort();
        else if (spare.createWaitTimer === null) {
          spare.createWaitTimer = this.#clock.setTimeout(() => {
            spare.createWaitTimer = null;
            this.#log.warn('spare: the create did not answer in time at shutdown; a room it made cannot be closed from here');
            spare.abort.abort();
          }, CREATE_ANSWER_WAIT_MS);
        }
      }
    }
    this.#emitEnd(status, liveId, spare.callMode, reason);
    // Not from inside `#evaluate` → `#create` (a synchronous loop): re-evaluate on the next turn.
    queueMicrotask(() => this.#evaluate());
  }

  #emitEnd(status: 'used' | 'expired' | 'failed', liveId: string | null, callMode: CallMode, reason?: string): void {
    this.#opts.emit({ type: 'spare', status, liveId, callMode, ...(reason ? { reason } : {}) });
  }

  /** type 5 over a socket that never sends conn_init (the spare's own socket is gone or never opened). */
  #hangupOverFreshSocket(liveId: string, client: SpareClient): void {
    const options = { clock: this.#clock, logger: this.#log, transportFactory: this.#transportFactory, socketTimeoutMs: SPARE_HANGUP_TIMEOUT_MS };
    this.#track(
      hangupWithoutConnInit(client, liveId, options).catch((error: unknown) => {
        this.#log.warn('spare: could not send the hangup', { liveId, error: String(error) });
      }),
    );
  }

  // --- timers and tasks ----------------------------------------------------------------------------------

  #wakeAt(atMs: number): void {
    if (this.#wakeTimer !== null) return;
    this.#wakeTimer = this.#clock.setTimeout(() => {
      this.#wakeTimer = null;
      this.#evaluate();
    }, Math.max(0, atMs - this.#clock.now()));
  }

  #clearCreateWait(spare: Spare): void {
    if (spare.createWaitTimer !== null) this.#clock.clearTimeout(spare.createWaitTimer);
    spare.createWaitTimer = null;
  }

  #clearAgeTimer(spare: Spare): void {
    if (spare.ageTimer !== null) this.#clock.clearTimeout(spare.ageTimer);
    spare.ageTimer = null;
  }

  #clearTimer(which: 'nobody' | 'wake'): void {
    const handle = which === 'nobody' ? this.#nobodyTimer : this.#wakeTimer;
    if (handle !== null) this.#clock.clearTimeout(handle);
    if (which === 'nobody') this.#nobodyTimer = null;
    else this.#wakeTimer = null;
  }

  #track(task: Promise<unknown>): void {
    const tracked = task.catch(() => {}).finally(() => this.#tasks.delete(tracked));
    this.#tasks.add(tracked);
  }
}

/** What a session is created with, as one comparable string (no secrets: persona, image path, voice…). */
export function fingerprint(options: StartOptions): string {
  return JSON.stringify([options.callMode, options.avatar, options.moderation ?? null, options.extraMotion ?? null]);
}
