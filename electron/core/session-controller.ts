/**
 * The driver of one avatar session at a time: the object the CLI, the Electron main process and tests use.
 * It feeds events into the pure machine (session-machine.ts), runs the effects it returns (HTTP via the
 * `ServiceClient`, control sockets via `ControlSocket`, timers via the `Clock`), and emits what a UI needs:
 * `state` (only on change), `credentials` (once, after create) and `warning` events.
 *
 * It owns every resource it starts: on the end of a session it clears its timers and closes its sockets;
 * `dispose()` additionally waits for the last closes, so a test can assert that nothing is left.
 */
import { buildCreateRequest, type BuiltCreateRequest } from './avatar-input.ts';
import { systemClock, type Clock } from './clock.ts';
import { ControlSocket, type ControlSocketOptions, type ControlSocketOutcome } from './control-socket.ts';
import { AvatarError, throwIfAborted, toAvatarError, type ErrorInfo } from './errors.ts';
import { KeepAlive } from './keep-alive.ts';
import { END_CONFIRM_TIMEOUT_MS } from './remote-hangup.ts';
import { silentLogger, type Logger } from './log.ts';
import type { CreateSessionResponse, HangupReason } from './protocol.ts';
import { liveReconnectPolicy as defaultLivePolicy, notReadyPolicy as defaultNotReadyPolicy } from './reconnect-policy.ts';
import { DEFAULT_CREATE_ANSWER_WAIT_MS, type SessionControllerOptions, type TerminalState } from './session-controller-options.ts';
import {
  initialMachine,
  isTerminal,
  transition,
  type Machine,
  type MachineConfig,
  type MachineEffect,
  type MachineEvent,
} from './session-machine.ts';
import { lossError, pollFinalRecord, queryStatus, sameState, type ReadBackDeps } from './session-read-back.ts';
import type { SessionEvent, SessionState, StartOptions } from './session-types.ts';
import { TimerSlots } from './timer-slots.ts';
import { wsTransportFactory, type TransportFactory } from './transport.ts';

export { DEFAULT_CREATE_ANSWER_WAIT_MS, type SessionControllerOptions, type TerminalState } from './session-controller-options.ts';

/** What a create request came to: the room it made, or its own error (`cancelled` when we stopped it). */
export type CreateAnswer = { created: CreateSessionResponse } | { error: ErrorInfo };

interface Run {
  promise: Promise<TerminalState>;
  resolve: (state: TerminalState) => void;
  options: StartOptions;
  /** Aborts the create request (at once before it is sent; after `createAnswerWaitMs` once it is out). */
  createAbort: AbortController;
  /** The create POST has been sent: from now on a room may exist whether or not we hear of it. */
  createSent: boolean;
  /** Aborts status/billing queries (dispose: don't wait for the billing figures). */
  queryAbort: AbortController;
  created: CreateSessionResponse | null;
  detachSignal: () => void;
  /** A held session's listener for the create's answer (see `hold`). */
  onCreateAnswer: ((answer: CreateAnswer) => void) | null;
}

export class SessionController {
  readonly #client: SessionControllerOptions['client'];
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #transportFactory: TransportFactory;
  #config: MachineConfig;
  readonly #keepAliveIntervalMs: number | undefined;
  readonly #deadAfterMs: number | undefined;
  readonly #keepAlive: KeepAlive;
  readonly #connectTimeoutMs: number;
  /** Bounds of the billing read-back after the end. */
  readonly #endQuery: { timeoutMs: number; intervalMs: number };
  readonly #readBack: ReadBackDeps;
  readonly #hangupSocketTimeoutMs: number;
  readonly #createAnswerWaitMs: number | null;
  readonly #buildRequest: (options: StartOptions) => Promise<BuiltCreateRequest>;

  #machine: Machine = initialMachine();
  readonly #listeners = new Set<(event: SessionEvent) => void>();
  #run: Run | null = null;
  #socket: ControlSocket | null = null;
  #generation = 0;
  readonly #timers: TimerSlots<'retry' | 'duration' | 'rtc' | 'create-wait' | 'hold'>;
  #lastSocketLoss: 'closed' | 'dead' | 'error' | null = null;
  /** A held socket still opening whose conn_init is due as soon as it opens (the RTC side got ready first). */
  #connInitOnOpen: ControlSocket | null = null;
  /** Background work of the current run (create, queries, hangup-only sockets); the run ends after it. */
  readonly #tasks = new Set<Promise<unknown>>();
  /** Sockets still closing (a polite close waits for the server's close frame); dispose() waits for them. */
  readonly #closings = new Set<Promise<unknown>>();
  readonly #queue: MachineEvent[] = [];
  #dispatching = false;
  #disposing: Promise<void> | null = null;

  constructor(options: SessionControllerOptions) {
    this.#client = options.client;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger ?? silentLogger;
    this.#timers = new TimerSlots(this.#clock);
    this.#transportFactory = options.transportFactory ?? wsTransportFactory;
    this.#config = {
      notReadyPolicy: options.notReadyPolicy ?? defaultNotReadyPolicy,
      liveReconnectPolicy: options.liveReconnectPolicy ?? defaultLivePolicy,
      durationGraceMs: options.durationGraceMs ?? 2_000,
      awaitRtcReady: options.awaitRtcReady ?? false,
      ...(options.rtcReadyTimeoutMs !== undefined ? { rtcReadyTimeoutMs: options.rtcReadyTimeoutMs } : {}),
    };
    this.#keepAliveIntervalMs = options.keepAliveIntervalMs;
    this.#deadAfterMs = options.deadAfterMs;
    this.#keepAlive = options.keepAlive ?? new KeepAlive({ logger: this.#log });
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.#endQuery = { timeoutMs: options.endQueryTimeoutMs ?? END_CONFIRM_TIMEOUT_MS, intervalMs: options.endQueryIntervalMs ?? 500 };
    this.#readBack = { client: this.#client, clock: this.#clock, log: this.#log };
    this.#hangupSocketTimeoutMs = options.hangupSocketTimeoutMs ?? 3_000;
    this.#createAnswerWaitMs = options.createAnswerWaitMs === undefined ? DEFAULT_CREATE_ANSWER_WAIT_MS : options.createAnswerWaitMs;
    this.#buildRequest = options.buildRequest ?? ((startOptions) => buildCreateRequest(startOptions));
  }

  /** The current state (plain data; safe to send over IPC). */
  get state(): SessionState {
    return this.#machine.state;
  }

  /** Subscribe to state/credentials/warning events. Returns the unsubscribe function. */
  onEvent(listener: (event: SessionEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Runs one whole session: create, connect (with NOT_READY warm-up), live (with reconnects), end, billing.
   * Resolves with the terminal state (`ended` or `failed`, never rejects for session problems). Rejects
   * (`invalid_request`) only when a session is already running or the controller was disposed.
   * `summary.timingsMs` count from this call, which begins the create step (build the request, POST it).
   * Aborting `signal` is the same as `hangup('user_end')`.
   */
  start(options: StartOptions, opts: { signal?: AbortSignal } = {}): Promise<TerminalState> {
    return this.#begin(options, opts.signal, null, { type: 'start', atMs: this.#clock.now(), callMode: options.callMode });
  }

  /**
   * Runs a session as a spare (electron/kiosk/spare.ts): create it, open its control socket holding
   * conn_init, and keep it `held` (pings answered, keep-alives sent, never billed) until `release()` makes
   * it a call, a hangup gives it up, or `holdForMs` after the create answered it expires; each of the
   * last two ends it with type 5 and no conn_init. `onCreateAnswer` hears the create's answer (the room, or
   * the request's own error) before the machine does: a spare may be dropped as it is announced, and its
   * room is then closed without a socket of its own.
   * Resolves like `start`, once the session (held, or the call it became) is over.
   */
  hold(options: StartOptions, opts: { holdForMs: number; onCreateAnswer?: (answer: CreateAnswer) => void }): Promise<TerminalState> {
    const event: MachineEvent = { type: 'hold', atMs: this.#clock.now(), callMode: options.callMode, holdForMs: opts.holdForMs };
    return this.#begin(options, undefined, opts.onCreateAnswer ?? null, event);
  }

  /**
   * The tap takes the held session: conn_init goes out on its open socket (with `awaitRtcReady`, once the
   * RTC side is ready), so tap → live is one round trip. The call's own RTC settings apply from here.
   * Returns the session's end (as `start` does), or null when it is not held (lost or ended meanwhile).
   */
  release(call: Pick<SessionControllerOptions, 'awaitRtcReady' | 'rtcReadyTimeoutMs'> = {}): Promise<TerminalState> | null {
    const run = this.#run;
    if (!run || this.#machine.state.phase !== 'held') return null;
    if (call.awaitRtcReady !== undefined) this.#config = { ...this.#config, awaitRtcReady: call.awaitRtcReady };
    if (call.rtcReadyTimeoutMs !== undefined) this.#config = { ...this.#config, rtcReadyTimeoutMs: call.rtcReadyTimeoutMs };
    this.#dispatch({ type: 'release', atMs: this.#clock.now() });
    return run.promise;
  }

  /**
   * Stop waiting for the answer of a create in flight after a hangup (the caller's own bound ran out):
   * the request is aborted, and a room it made can no longer be closed from here.
   */
  abandonCreate(): void {
    const run = this.#run;
    if (!run || run.created) return;
    this.#timers.cancel('create-wait');
    run.createAbort.abort();
  }

  /** How the last control socket was lost (closed, found dead, or failed), or null: a spare names its end by it. */
  get lastSocketLoss(): 'closed' | 'dead' | 'error' | null {
    return this.#lastSocketLoss;
  }

  #begin(options: StartOptions, signal: AbortSignal | undefined, onCreateAnswer: Run['onCreateAnswer'], first: MachineEvent): Promise<TerminalState> {
    if (this.#disposing) return Promise.reject(new AvatarError('invalid_request', 'This session controller was disposed.'));
    if (this.#run) return Promise.reject(new AvatarError('invalid_request', 'A session is already running; hang up first.'));
    let resolve!: (state: TerminalState) => void;
    const promise = new Promise<TerminalState>((r) => (resolve = r));
    const onAbort = () => void this.hangup('user_end');
    signal?.addEventListener('abort', onAbort, { once: true });
    this.#run = {
      promise,
      resolve,
      options,
      createAbort: new AbortController(),
      createSent: false,
      queryAbort: new AbortController(),
      created: null,
      detachSignal: () => signal?.removeEventListener('abort', onAbort),
      onCreateAnswer,
    };
    this.#machine = initialMachine();
    this.#lastSocketLoss = null;
    this.#dispatch(first);
    if (signal?.aborted) onAbort();
    return promise;
  }

  /**
   * Ends the session from any phase (default reason `user_end`, spec §6 rule 7): while creating it
   * waits for the create's answer (bounded by `createAnswerWaitMs`) and closes that room with type 5 and no
   * conn_init; while warming it stops retrying and closes the room;
   * when live it sends type 5, closes and reads the final billing. Resolves with the terminal state, or
   * `null` when no session ever ran.
   */
  hangup(reason: HangupReason = 'user_end'): Promise<TerminalState | null> {
    const run = this.#run;
    if (!run) {
      const state = this.#machine.state;
      return Promise.resolve(isTerminal(state) ? state : null);
    }
    this.#dispatch({ type: 'hangup-requested', atMs: this.#clock.now(), reason });
    return run.promise;
  }

  /**
   * The RTC side of the current session (`liveId`) is ready: joined, the remote subscription handler in
   * place, the microphone track ready. With `awaitRtcReady`, the held conn_init goes out now. Returns false
   * when it does not apply (another session, or no session waiting for it).
   */
  rtcReady(liveId: string): boolean {
    if (!this.#run || this.#machine.context.liveId !== liveId) return false;
    const before = this.#machine;
    this.#dispatch({ type: 'rtc-ready', atMs: this.#clock.now() });
    return this.#machine !== before;
  }

  /** The RTC side of the current session failed before it was ready (join refused, blocked network). */
  rtcFailed(liveId: string, error: ErrorInfo): boolean {
    if (!this.#run || this.#machine.context.liveId !== liveId) return false;
    const before = this.#machine;
    this.#dispatch({ type: 'rtc-failed', atMs: this.#clock.now(), error });
    return this.#machine !== before;
  }

  /** Hangs up if needed (without waiting for the billing figures), clears every timer, closes every socket. Idempotent. */
  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      const run = this.#run;
      if (run) {
        run.queryAbort.abort();
        this.#dispatch({ type: 'hangup-requested', atMs: this.#clock.now(), reason: 'user_end' });
        await run.promise;
      }
      this.#timers.clearAll();
      this.#closeSocket();
      while (this.#tasks.size + this.#closings.size > 0) await Promise.allSettled([...this.#tasks, ...this.#closings]);
      this.#listeners.clear();
    })();
    return this.#disposing;
  }

  // --- the machine ----------------------------------------------------------------------------------

  #dispatch(event: MachineEvent): void {
    this.#queue.push(event);
    if (this.#dispatching) return; // an effect fed an event back synchronously: run it after this one
    this.#dispatching = true;
    try {
      for (let next = this.#queue.shift(); next; next = this.#queue.shift()) this.#step(next);
    } finally {
      this.#dispatching = false;
    }
  }

  #step(event: MachineEvent): void {
    const previous = this.#machine;
    const { machine, effects } = transition(previous, event, this.#config);
    if (machine === previous) {
      this.#log.debug('session: event ignored', { event: event.type, phase: previous.state.phase });
      return;
    }
    this.#machine = machine;
    if (!sameState(previous.state, machine.state)) {
      this.#log.info(`session: ${previous.state.phase} → ${machine.state.phase}`, { event: event.type });
      this.#emit({ type: 'state', state: machine.state, previous: previous.state.phase });
    }
    for (const effect of effects) {
      try {
        this.#runEffect(effect);
      } catch (error) {
        this.#log.error('session: effect failed', { effect: effect.type, error: String(error) });
        this.#queue.push({ type: 'error', atMs: this.#clock.now(), error: toAvatarError(error).toInfo() });
      }
    }
    if (isTerminal(machine.state)) this.#finishRun(machine.state);
  }

  #finishRun(state: TerminalState): void {
    const run = this.#run;
    if (!run) return;
    this.#run = null;
    run.detachSignal();
    run.queryAbort.abort();
    this.#timers.clearAll();
    this.#closeSocket();
    this.#log.info('session: over', { phase: state.phase, liveId: state.liveId, error: state.phase === 'failed' ? state.error.code : undefined });
    // Resolve once the cleanup that matters to the service (a hangup still in flight) has run.
    void Promise.allSettled([...this.#tasks]).then(() => run.resolve(state));
  }

  #runEffect(effect: MachineEffect): void {
    const run = this.#run;
    if (!run) return;
    switch (effect.type) {
      case 'create-session':
        return this.#track(this.#createSession(run));
      case 'abort-create':
        return this.#abortCreate(run);
      case 'emit-credentials': {
        const created = run.created;
        if (!created) return;
        this.#emit({
          type: 'credentials',
          liveId: created.live.id,
          callMode: created.live.call_mode,
          liveDurationS: created.live.live_duration,
          rtc: created.rtc,
        });
        return;
      }
      case 'open-socket':
        return this.#openSocket(effect.holdConnInit === true);
      case 'send-conn-init':
        return this.#sendHeldConnInit();
      case 'schedule-rtc-guard':
        return this.#timers.set('rtc', effect.atMs - this.#clock.now(), () =>
          this.#dispatch({
            type: 'rtc-failed',
            atMs: this.#clock.now(),
            error: { code: 'rtc_failed', message: 'The call’s audio/video channel did not connect in time; the network may be blocking video calls.' },
          }),
        );
      case 'cancel-rtc-guard':
        return this.#timers.cancel('rtc');
      case 'close-socket':
        return this.#closeSocket();
      case 'send-hangup':
        return this.#sendHangup(effect.reason);
      case 'schedule-retry':
        return this.#timers.set('retry', effect.delayMs, () => this.#dispatch({ type: 'retry-due', atMs: this.#clock.now() }));
      case 'cancel-retry':
        return this.#timers.cancel('retry');
      case 'schedule-duration-guard':
        return this.#timers.set('duration', effect.atMs - this.#clock.now(), () => this.#dispatch({ type: 'duration-reached', atMs: this.#clock.now() }));
      case 'cancel-duration-guard':
        return this.#timers.cancel('duration');
      case 'schedule-hold-expiry':
        return this.#timers.set('hold', effect.atMs - this.#clock.now(), () => this.#dispatch({ type: 'hold-expired', atMs: this.#clock.now() }));
      case 'cancel-hold-expiry':
        return this.#timers.cancel('hold');
      case 'query-status':
        return this.#track(this.#queryStatus(run));
      case 'query-final':
        return this.#track(this.#queryFinal(run));
    }
  }

  // --- effects ----------------------------------------------------------------------------------------

  async #createSession(run: Run): Promise<void> {
    const signal = run.createAbort.signal;
    try {
      const built = await this.#buildRequest(run.options);
      throwIfAborted(signal);
      for (const message of built.warnings) this.#emit({ type: 'warning', message });
      run.createSent = true;
      const created = await this.#client.createSession(built.request, { signal });
      run.created = created;
      this.#heardCreate(run, { created });
      this.#dispatch({
        type: 'created',
        atMs: this.#clock.now(),
        liveId: created.live.id,
        liveDurationS: created.live.live_duration,
        callMode: created.live.call_mode,
      });
    } catch (error) {
      const info = toAvatarError(error).toInfo();
      // Our own abort is no failure of the service, and whatever aborted it has said so already (a cancel,
      // or the warning that its answer did not come in time).
      if (signal.aborted) this.#log.debug('session: create cut off', { code: info.code });
      // A held session's owner hears of it (`onCreateAnswer`) and says what it means for a spare.
      else if (run.onCreateAnswer) this.#log.debug('session: create failed', { code: info.code, message: info.message });
      else this.#log.warn('session: create failed', { code: info.code, message: info.message });
      this.#heardCreate(run, { error: info });
      this.#dispatch({ type: 'create-failed', atMs: this.#clock.now(), error: info });
    }
  }

  /** Tell a held session's listener of the create's answer (a listener that throws is logged, not fatal). */
  #heardCreate(run: Run, answer: CreateAnswer): void {
    try {
      run.onCreateAnswer?.(answer);
    } catch (error) {
      this.#log.error('session: the create listener threw', { error: String(error) });
    }
  }

  /**
   * Cancel the create. Before the POST nothing exists on the service: abort. Once it is out the service may
   * have made the room, and only the answer names it: wait for it (the machine then closes the room with
   * type 5 and no conn_init, spec §6 rule 7), bounded by `createAnswerWaitMs`, after which nothing more can
   * be done from here.
   */
  #abortCreate(run: Run): void {
    if (!run.createSent) return run.createAbort.abort();
    if (this.#timers.has('create-wait')) return;
    this.#log.info('session: cancelled while the create is in flight; waiting for its answer to close the room', { waitMs: this.#createAnswerWaitMs });
    if (this.#createAnswerWaitMs === null) return; // no bound of ours: the owner may `abandonCreate()`
    this.#timers.set('create-wait', this.#createAnswerWaitMs, () => {
      this.#log.warn('session: the create did not answer in time after a cancel; a room it made cannot be closed from here');
      run.createAbort.abort();
    });
  }

  #openSocket(hold = false): void {
    this.#closeSocket();
    this.#socket = this.#newControlSocket({
      ackTimeoutMs: this.#connectTimeoutMs,
      ...(hold ? { holdConnInit: true } : {}),
      ...(this.#keepAliveIntervalMs !== undefined ? { keepAliveIntervalMs: this.#keepAliveIntervalMs } : {}),
      ...(this.#deadAfterMs !== undefined ? { deadAfterMs: this.#deadAfterMs } : {}),
      onOutcome: (outcome, socket) => this.#onSocketOutcome(outcome, socket),
    });
    this.#log.debug('session: opening control socket', { generation: this.#socket.generation });
  }

  /**
   * The RTC side is ready: send the held conn_init on the open socket. On a socket whose handshake has not
   * finished yet (a join faster than the handshake) it goes out on open (the transport's handshake timeout
   * bounds that); with no socket at all, a fresh one sends it on open.
   */
  #sendHeldConnInit(): void {
    const socket = this.#socket;
    if (socket?.isOpen && !socket.connInitSent) {
      socket.connInit(this.#connectTimeoutMs);
      const why = this.#config.awaitRtcReady ? 'session: RTC ready; conn_init sent' : 'session: released; conn_init on the held control socket';
      this.#log.debug(why, { generation: socket.generation });
      return;
    }
    if (socket?.connInitSent) return;
    if (socket && !socket.isFinished) {
      this.#connInitOnOpen = socket;
      return;
    }
    this.#openSocket(false);
  }

  /** A control socket to this session with the next generation number. URL and headers are re-read on
   *  every attempt (credentials may have changed); throws if they cannot be built. */
  #newControlSocket(options: Omit<ControlSocketOptions, 'liveId' | 'url' | 'headers' | 'transportFactory' | 'clock' | 'logger' | 'generation'>): ControlSocket {
    const liveId = this.#liveId();
    const { url, headers } = this.#client.socketRequest(liveId);
    return new ControlSocket({
      liveId,
      url,
      headers,
      transportFactory: this.#transportFactory,
      clock: this.#clock,
      logger: this.#log,
      generation: ++this.#generation,
      keepAlive: this.#keepAlive,
      ...options,
    });
  }

  #onSocketOutcome(outcome: ControlSocketOutcome, socket: ControlSocket): void {
    if (socket !== this.#socket) {
      // A replaced or closed socket: its news is stale (generation guard).
      this.#log.debug('session: ignored outcome of an old socket', { outcome: outcome.kind, generation: socket.generation });
      return;
    }
    const atMs = this.#clock.now();
    switch (outcome.kind) {
      case 'open':
        if (this.#connInitOnOpen === socket) {
          this.#connInitOnOpen = null;
          socket.connInit(this.#connectTimeoutMs);
        }
        return this.#dispatch({ type: 'socket-open', atMs });
      case 'ack-success':
        return this.#dispatch({ type: 'ack-success', atMs });
      case 'ack-not-ready':
        return this.#dispatch({ type: 'ack-not-ready', atMs });
      case 'ack-failed':
        return this.#dispatch({ type: 'ack-failed', atMs, errorCode: outcome.errorCode });
      case 'forced-hangup':
        return this.#dispatch({ type: 'forced-hangup', atMs, reason: outcome.reason });
      case 'closed':
      case 'dead':
      case 'error':
        this.#lastSocketLoss = outcome.kind;
        this.#socket = null;
        this.#track(socket.closed, this.#closings);
        return this.#dispatch({ type: 'socket-lost', atMs, error: lossError(outcome) });
    }
  }

  #closeSocket(): void {
    const socket = this.#socket;
    if (!socket) return;
    this.#socket = null;
    socket.close(1000, 'client closing');
    this.#track(socket.closed, this.#closings);
  }

  /**
   * spec §6 rule 7: type 5, then close. On the current socket if it is open; otherwise over a fresh socket
   * that sends only the hangup (never conn_init, which could take the avatar live and start billing).
   */
  #sendHangup(reason: HangupReason): void {
    const socket = this.#socket;
    if (socket?.isOpen) {
      this.#socket = null;
      socket.hangup(reason);
      this.#track(socket.closed, this.#closings);
      return;
    }
    this.#closeSocket();
    let hangupSocket: ControlSocket;
    try {
      hangupSocket = this.#newControlSocket({
        sendConnInit: false,
        ackTimeoutMs: this.#hangupSocketTimeoutMs,
        onOutcome: (outcome, s) => {
          if (outcome.kind === 'open') s.hangup(reason);
          else if (outcome.kind === 'error' || outcome.kind === 'dead') this.#log.warn('session: the hangup could not be delivered', { outcome: outcome.kind });
        },
      });
    } catch (error) {
      this.#log.warn('session: could not send the hangup', { liveId: this.#machine.context.liveId, error: String(error) });
      return;
    }
    this.#track(hangupSocket.closed);
  }

  async #queryStatus(run: Run): Promise<void> {
    const record = await queryStatus(this.#readBack, this.#liveId(), run.queryAbort.signal);
    if (record) this.#dispatch({ type: 'status-known', atMs: this.#clock.now(), record });
  }

  async #queryFinal(run: Run): Promise<void> {
    const record = await pollFinalRecord(this.#readBack, this.#liveId(), run.queryAbort.signal, this.#endQuery);
    this.#dispatch({ type: 'end-confirmed', atMs: this.#clock.now(), record });
  }

  // --- helpers ----------------------------------------------------------------------------------------

  #liveId(): string {
    const liveId = this.#machine.context.liveId;
    if (!liveId) throw new AvatarError('internal', 'No session id yet.');
    return liveId;
  }

  #track(task: Promise<unknown>, into: Set<Promise<unknown>> = this.#tasks): void {
    const tracked = task.catch(() => {}).finally(() => into.delete(tracked));
    into.add(tracked);
  }

  #emit(event: SessionEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.#log.error('session: an event listener threw', { error: String(error) });
      }
    }
  }
}
