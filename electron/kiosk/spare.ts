/**
 * Spare ("pre-warmed") sessions for fast start. Electron-free; the kiosk (compose.ts) owns one
 * `SpareManager`: availability.ts feeds it the attract screen's reports, the call orchestrator its busy
 * state and the outcome of its creates (spare-adoption.ts). A spare is the NEXT visitor's session, created
 * ahead of the tap:
 *
 *   a SessionController started with `hold` (core/session-machine.ts, the `held` phase): created over REST
 *   (spec §4.1: `waiting`, not billed), its control socket open holding conn_init (answers pings, sends
 *   keep-alives) → one of:
 *     - used:    the tap takes it (`take`): that controller becomes the call's, and `release` sends conn_init
 *                on its open socket, so tap → live is one round trip once the avatar is ready (spec §3);
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
 *
 * This module is the policy only. How a held session keeps its socket, expires after `maxAgeSeconds`,
 * reacts to a loss, a 404 or the service's type 6, and closes its room with type 5 before any conn_init
 * are the session machine's transitions; the manager names each end for its `SpareEvent`.
 */
import { buildCreateRequest, type BuiltCreateRequest } from '../core/avatar-input.ts';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import type { KeepAlive } from '../core/keep-alive.ts';
import type { ErrorCode } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { heldSessionLogger, spareEnd } from './spare-adoption.ts';
import type { CallMode } from '../core/protocol.ts';
import type { ServiceClient } from '../core/rest-client.ts';
import { DEFAULT_CREATE_ANSWER_WAIT_MS, SessionController, type CreateAnswer } from '../core/session-controller.ts';
import type { SessionEvent, StartOptions } from '../core/session-types.ts';
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

/** The service client a spare is made with; a used spare's call reads its billing with it too. */
export type SpareClient = Pick<ServiceClient, 'createSession' | 'socketRequest' | 'querySession'>;

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
  /** The keep-alive that works with the current service (shared with its calls). Re-read for every spare. */
  keepAlive?: () => KeepAlive;
}

/**
 * A spare handed to a tap: its controller, still `held`, becomes the call's (`release` sends conn_init).
 * `settle` records how its first conn_init went (once; later calls are ignored).
 */
export interface TakenSpare {
  liveId: string;
  callMode: CallMode;
  controller: SessionController;
  settle(status: 'used' | 'expired' | 'failed', reason?: string): void;
}

type SparePhase = 'creating' | 'opening' | 'ready';

interface Spare {
  phase: SparePhase;
  callMode: CallMode;
  /** What the session was created with; a different one at the tap means the settings changed. */
  fingerprint: string;
  /** Its session, from the create to its end (or to the tap, which takes it over). */
  controller: SessionController;
  liveId: string | null;
  /** Bounds the wait for the create's answer once the spare is dropped during shutdown. */
  createWaitTimer: TimerHandle | null;
  /** Resolves true once ready, false once ended. */
  settled: Promise<boolean>;
  resolveSettled(ready: boolean): void;
  /** Its life ended (event emitted) or it was taken. */
  done: boolean;
  /** Taken by a tap: its controller is the call's now. */
  handedOver: boolean;
  /** Stop listening to its controller, and stop waiting for it at shutdown (the tap owns it). */
  letGo(): void;
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
  /** Clock times of spare creates within the last hour. */
  #creates: number[] = [];
  #cooldownUntilMs = 0;
  #nobodyTimer: TimerHandle | null = null;
  #wakeTimer: TimerHandle | null = null;
  #limitLogged = false;
  /** Spares' sessions still ending (hangups, creates in flight); `close()` waits for them. */
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
    const { controller, liveId } = spare;
    const state = controller.state;
    if (!liveId || state.phase !== 'held' || !state.socketOpen) {
      this.#end(spare, 'failed', 'socket_lost');
      return null;
    }
    // Hand over: the manager forgets it; whatever its socket does from now on, its session handles.
    spare.done = true;
    spare.handedOver = true;
    this.#spare = null;
    spare.letGo();
    let settled = false;
    this.#log.info('spare: taken by a tap', { liveId, callMode });
    return {
      liveId,
      callMode,
      controller,
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
    const startOptions = this.#opts.startOptions();
    const client = this.#opts.getClient();
    this.#creates.push(this.#clock.now());
    if (!client) {
      // The client went away between the decision and now: nothing is sent, and the next waits as after
      // any failed spare.
      this.#cooldownUntilMs = this.#clock.now() + FAILURE_COOLDOWN_MS;
      this.#log.info('spare: failed', { liveId: null, reason: 'invalid_config' });
      this.#emitEnd('failed', null, startOptions.callMode, 'invalid_config');
      this.#evaluate();
      return;
    }
    let resolveSettled!: (ready: boolean) => void;
    const settled = new Promise<boolean>((resolve) => (resolveSettled = resolve));
    let letGo!: () => void;
    const handedOver = new Promise<void>((resolve) => (letGo = resolve));
    const keepAlive = this.#opts.keepAlive?.();
    // Its session waits however long for the create's answer (only shutdown bounds that: see `#end`).
    const controller = new SessionController({
      client,
      clock: this.#clock,
      logger: heldSessionLogger(this.#log, () => spare.handedOver),
      transportFactory: this.#transportFactory,
      buildRequest: this.#buildRequest,
      createAnswerWaitMs: null,
      hangupSocketTimeoutMs: SPARE_HANGUP_TIMEOUT_MS,
      ...(keepAlive ? { keepAlive } : {}),
      ...(this.#opts.keepAliveIntervalMs !== undefined ? { keepAliveIntervalMs: this.#opts.keepAliveIntervalMs } : {}),
      ...(this.#opts.deadAfterMs !== undefined ? { deadAfterMs: this.#opts.deadAfterMs } : {}),
    });
    const unsubscribe = controller.onEvent((event) => this.#onSessionEvent(spare, event));
    const spare: Spare = {
      phase: 'creating',
      callMode: startOptions.callMode,
      fingerprint: fingerprint(startOptions),
      controller,
      liveId: null,
      createWaitTimer: null,
      settled,
      resolveSettled,
      done: false,
      handedOver: false,
      letGo: () => {
        unsubscribe();
        letGo();
      },
    };
    this.#spare = spare;
    const over = controller.hold(startOptions, {
      holdForMs: this.#settings.maxAgeSeconds * 1000,
      onCreateAnswer: (answer) => this.#onCreateAnswer(spare, answer),
    });
    // Until the tap takes it, the spare's session is ours to wait for (shutdown waits for its type 5).
    this.#track(
      Promise.race([over, handedOver]).then(async () => {
        if (spare.handedOver) return;
        unsubscribe();
        await controller.dispose();
      }),
    );
  }

  /** The create answered (before the session's machine hears of it). */
  #onCreateAnswer(spare: Spare, answer: CreateAnswer): void {
    this.#clearCreateWait(spare);
    if ('error' in answer) {
      const code = answer.error.code;
      if (BLOCKING_CODES.has(code)) this.#blockedBy = code;
      if (!spare.done) this.#end(spare, 'failed', code, { fromSession: true });
      else this.#log.debug('spare: create ended after the spare was dropped', { code });
      this.#evaluate();
      return;
    }
    const { created } = answer;
    const liveId = created.live.id;
    spare.liveId = liveId;
    if (this.#blockedBy) this.#blockedBy = null; // a create succeeded: the account works again
    if (spare.done) {
      // Dropped while its create was in flight (settings changed, nobody there, shutdown): its session,
      // cancelled, closes the room the answer names before any conn_init, so it is never billed.
      this.#log.info('spare: closing a room created after the spare was dropped', { liveId });
      return;
    }
    this.#log.info('spare: created', { liveId, callMode: spare.callMode });
    spare.phase = 'opening';
    // A listener may drop the spare on hearing of it (the kiosk closing, say): its session is then
    // cancelled before it opens a socket of its own, and closes the room over a hangup-only socket.
    this.#opts.emit({ type: 'spare', status: 'created', liveId, callMode: spare.callMode, rtc: created.rtc });
  }

  /** What the spare's session did: ready once its socket is open; its end, named for the SpareEvent. */
  #onSessionEvent(spare: Spare, event: SessionEvent): void {
    if (event.type !== 'state' || spare.done) return;
    const state = event.state;
    if (state.phase === 'held' && state.socketOpen && spare.phase !== 'ready') {
      spare.phase = 'ready';
      spare.resolveSettled(true);
      this.#log.debug('spare: control socket open, holding conn_init', { liveId: spare.liveId });
      return;
    }
    if (state.phase !== 'ended' && state.phase !== 'failed') return;
    // A create failure was recorded from the create's own answer already (`#onCreateAnswer`).
    if (state.phase === 'failed' && state.liveId === null) return;
    const [status, reason] = spareEnd(state, spare.controller.lastSocketLoss);
    this.#end(spare, status, reason, { fromSession: true });
  }

  /**
   * End the spare's life: record it (one event), and unless its session ended by itself, give the session
   * up: held, it closes its room with type 5 before any conn_init (spec §6 rule 7) — over its own socket
   * when open, else over a hangup-only socket; still creating, it waits for the answer and closes the room
   * that names. Shutdown bounds that wait: a create not sent yet is stopped, one that does not answer in
   * time is given up.
   */
  #end(spare: Spare, status: 'expired' | 'failed', reason: string, how: { fromSession?: boolean } = {}): void {
    if (spare.done) return;
    spare.done = true;
    if (this.#spare === spare) this.#spare = null;
    spare.resolveSettled(false);
    const liveId = spare.liveId;
    if (status === 'failed') this.#cooldownUntilMs = this.#clock.now() + FAILURE_COOLDOWN_MS;
    this.#log.info(`spare: ${status}`, { liveId, reason });
    if (!how.fromSession) {
      void spare.controller.hangup();
      if (this.#closed && spare.phase === 'creating' && spare.createWaitTimer === null) {
        spare.createWaitTimer = this.#clock.setTimeout(() => {
          spare.createWaitTimer = null;
          this.#log.warn('spare: the create did not answer in time at shutdown; a room it made cannot be closed from here');
          spare.controller.abandonCreate();
        }, CREATE_ANSWER_WAIT_MS);
      }
    }
    this.#emitEnd(status, liveId, spare.callMode, reason);
    // Not from inside `#evaluate` → `#create` (a synchronous loop): re-evaluate on the next turn.
    queueMicrotask(() => this.#evaluate());
  }

  #emitEnd(status: 'used' | 'expired' | 'failed', liveId: string | null, callMode: CallMode, reason?: string): void {
    this.#opts.emit({ type: 'spare', status, liveId, callMode, ...(reason ? { reason } : {}) });
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
