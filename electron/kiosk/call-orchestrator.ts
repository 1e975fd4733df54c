/**
 * The call orchestrator: the one running call. A tap starts it (adopting the spare when it fits, else a
 * fresh session), the renderer's reports steer it (mute, media errors, its RTC side ready), and it ends
 * by a hangup with its cause, the renderer lost, or shutdown. Each session runs in a SessionController
 * (core/session-controller.ts); the orchestrator forwards its events to the renderer as the renderer must
 * see them (the venue's maximum call length, a media failure as the end).
 *
 * Invariants:
 * - At most one session runs at a time; a running session is hung up exactly once (type 5), also when
 *   a hangup, a media error and shutdown arrive together.
 * - A finished session's late events are dropped; an adopted spare that fails at the tap is replaced by
 *   a fresh session whose events are the only ones the renderer sees (spare-adoption.ts).
 * - RTC first, then billing: conn_init waits until the renderer reports its side ready (`rtcReady`).
 */
import { fail, ok, type HangupCause, type KioskEvent, type LanguageCode, type MediaErrorArgs, type Result, type RtcReadyArgs, type SetMutedArgs, type StartArgs } from '../contract.ts';
import type { BuiltCreateRequest } from '../core/avatar-input.ts';
import type { Clock } from '../core/clock.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import type { CallMode } from '../core/protocol.ts';
import { SessionController, type TerminalState } from '../core/session-controller.ts';
import type { SessionEvent, SessionState, StartOptions } from '../core/session-types.ts';
import type { Appearance } from './appearance.ts';
import type { Availability } from './availability.ts';
import { asMediaFailure, capCallLength, isTerminalState, liveIdOf, mediaFailureInfo } from './call-states.ts';
import type { CallTelemetry } from './call-telemetry.ts';
import type { CastEntry, KioskConfig } from './config.ts';
import type { ServiceConnectionView } from './service-connection.ts';
import { hangupOnce, newCallSession, type CallSession } from './call-session.ts';
import { LOST_AT_TAP, adoptionVerdict, asTapEvent, teachSpares } from './spare-adoption.ts';
import type { SpareManager, TakenSpare } from './spare.ts';

/** How long shutdown waits for the hangup (type 5 + query) before it gives up on a slow network. */
export const SHUTDOWN_HANGUP_TIMEOUT_MS = 5_000;

export interface CallOrchestrator {
  /** `session:start`: answered once the session exists (its live id) or ended before that (null). */
  start(args?: StartArgs): Promise<Result<{ liveId: string | null }>>;
  /** Hang up (type 5 to the service); `cause` is recorded (the ledger's end reason), default `visitor`. */
  hangup(cause?: HangupCause): Promise<Result<void>>;
  /** The current session state as the renderer was last told it. */
  readonly state: SessionState;
  /** Whether a session is running (creating … ending, until it is cleaned up). */
  readonly running: boolean;
  setMuted(args: SetMutedArgs): Promise<Result<void>>;
  /** The renderer's media failed: the call is hung up and its end shown as that failure. */
  reportMediaError(args: MediaErrorArgs): Promise<Result<void>>;
  /** The renderer's side of the session's RTC channel is ready: conn_init goes out now. */
  rtcReady(args: RtcReadyArgs): Promise<Result<{ accepted: boolean }>>;
  /** Each hangup asked for while a session runs, with its cause (the ledger, the fleet metrics);
   *  returns the unsubscribe function. */
  onHangupCause(listener: (cause: HangupCause, liveId: string | null) => void): () => void;
  /** The renderer was lost (crash/reload): hang up any session (once) and go back to `idle`, so the
   *  reloaded page starts on its attract screen rather than on the last call's end screen. */
  resetToAttract(): Promise<void>;
  /** Hang up a running session (exactly once), waiting at most `SHUTDOWN_HANGUP_TIMEOUT_MS` for it. */
  shutdown(): Promise<void>;
}

export interface CallOrchestratorOptions {
  config: KioskConfig;
  /** Injected in tests; without one, shutdown's bound runs on real time (a hung network must not block quitting). */
  clock?: Clock;
  logger: Logger;
  emit(event: KioskEvent): void;
  /** The kiosk is shutting down: no call starts, and a spare failing at the tap is not replaced. */
  closing(): boolean;
  connection: Pick<ServiceConnectionView, 'client' | 'clientError' | 'transportFactory' | 'keepAlive'>;
  availability: Pick<Availability, 'refusal'>;
  appearance: Pick<Appearance, 'cast' | 'castError'>;
  telemetry: CallTelemetry;
  spares: Pick<SpareManager, 'setBusy' | 'take' | 'noteCreateOutcome' | 'noteOutOfCredits'>;
  startOptions(callMode: CallMode, member: CastEntry, language: LanguageCode): StartOptions;
  buildRequest: (options: StartOptions) => Promise<BuiltCreateRequest>;
  /** RTC first, then billing (default true); only a caller with no renderer at all turns it off. */
  awaitRendererRtc?: boolean;
  /** Bound on the renderer's join before the session is given up (default 30 000 ms). */
  rtcReadyTimeoutMs?: number;
  /** A tap became a session (the visitor funnel counts it, with what the visitor chose). */
  onTap(tap: { callMode: CallMode; avatarId: string; language: LanguageCode }): void;
  /** A tap found no service to call (out of order): nothing was created. */
  onOutOfOrder(): void;
}

export function createCallOrchestrator(options: CallOrchestratorOptions): CallOrchestrator {
  const { config, logger, emit, connection, telemetry, spares } = options;
  const awaitRendererRtc = options.awaitRendererRtc ?? true;
  let state: SessionState = { phase: 'idle' };
  let muted = false;
  let active: CallSession | null = null;
  let shutdownPromise: Promise<void> | null = null;
  const hangupCauseListeners = new Set<(cause: HangupCause, liveId: string | null) => void>();

  function unmute(): void {
    if (!muted) return;
    muted = false;
    emit({ type: 'muted', muted: false });
  }

  /** Forward a controller event, rewriting the terminal state after a media failure. */
  function forward(session: CallSession, event: SessionEvent): void {
    if (active !== session) return; // a finished session's late events are dropped
    if (event.type === 'state') {
      let next = capCallLength(event.state, config.maxCallSeconds);
      if (isTerminalState(next)) {
        if (session.mediaFailure) next = asMediaFailure(next, session.mediaFailure);
        session.sawTerminal = true;
      }
      telemetry.noteState(next);
      state = next;
      emit({ type: 'state', state: next, previous: event.previous });
      return;
    }
    // An adopted spare's states are held until its first answer, its credentials are not: the renderer's
    // milestones for this call may arrive before its `connecting` state.
    if (event.type === 'credentials') telemetry.noteCredentials(event.liveId);
    emit(event);
  }

  async function start(args: StartArgs = {}): Promise<Result<{ liveId: string | null }>> {
    // A session the visitor has already left is only cleaning up (sockets closing, a hangup socket in
    // flight): wait for that instead of refusing the visitor's next start. Left means its end was shown, or
    // it is ending (hung up by either side: the renderer shows the end screen from then on, so the next
    // visitor may be through the age gate before the service has answered the hangup).
    if (active && (active.sawTerminal || active.hangupPromise || state.phase === 'ending')) await active.done;
    if (options.closing()) return fail('cancelled', 'The kiosk is shutting down.');
    if (active) return fail('invalid_request', 'A session is already running.');
    const refusal = options.availability.refusal();
    if (refusal) return fail('invalid_request', refusal);
    if (!connection.client) {
      options.onOutOfOrder();
      const error = connection.clientError ?? new AvatarError('invalid_config', 'The avatar service is not configured.');
      return fail(error.code, error.message);
    }
    const member = args.avatarId === undefined ? options.appearance.cast[0]! : config.cast.find((m) => m.id === args.avatarId);
    if (!member) return fail('invalid_request', `There is no avatar "${args.avatarId}" in the cast.`);
    const castError = options.appearance.castError(member.id);
    if (castError) return fail(castError.code, castError.message);
    let callMode = member.callMode;
    if (args.callMode && args.callMode !== callMode) {
      if (config.allowModeChoice) callMode = args.callMode;
      else logger.warn('Ignoring the requested call mode: allowModeChoice is off', { requested: args.callMode });
    }
    if (args.language && !config.languages.includes(args.language)) return fail('invalid_request', `The language "${args.language}" is not offered on this kiosk.`);
    const startOptions = options.startOptions(callMode, member, args.language ?? config.defaultLanguage);
    telemetry.tap(callMode, member.id);
    options.onTap({ callMode, avatarId: member.id, language: args.language ?? config.defaultLanguage });
    const session = newSession();
    active = session;
    unmute();
    // Adopt the spare when it fits, else the normal path.
    spares.setBusy(true);
    const taken = await spares.take(callMode, startOptions).catch((error: unknown) => {
      logger.warn('Could not take the spare session', { error: String(error) });
      return null;
    });
    launch(session, startOptions, taken);
    // Answer once the session exists (credentials issued) or ended before that; failures arrive as
    // state events (one source of truth for the UI).
    return ok({ liveId: await session.created });
  }

  /** A session for the current client (started later by `launch`). */
  function newSession(): CallSession {
    return newCallSession(
      new SessionController({
        client: connection.client!,
        logger,
        ...(options.clock ? { clock: options.clock } : {}),
        transportFactory: connection.transportFactory,
        buildRequest: options.buildRequest,
        keepAlive: connection.keepAlive,
        awaitRtcReady: awaitRendererRtc,
        ...(options.rtcReadyTimeoutMs !== undefined ? { rtcReadyTimeoutMs: options.rtcReadyTimeoutMs } : {}),
      }),
    );
  }

  /**
   * Start the session's controller in the background, or, with `taken`, make the spare's held controller
   * the call's and release it (conn_init on its open socket); its end clears `active`.
   */
  function launch(session: CallSession, startOptions: StartOptions, taken: TakenSpare | null): void {
    if (taken) {
      void session.controller.dispose(); // never started: the spare's controller runs this call
      session.controller = taken.controller;
    }
    const controller = session.controller;
    session.taken = taken;
    // An adopted spare's events are held until its first conn_init is answered: if that fails, the tap
    // falls back to a fresh session and the renderer never sees the spare.
    session.pending = taken ? [] : null;
    session.unsubscribe = controller.onEvent((event) => {
      teachSpares(spares, session.taken !== null, event);
      deliver(session, startOptions, asTapEvent(event));
    });

    let run: Promise<TerminalState> | null;
    if (taken) {
      // The renderer sees a tap on a spare as any tap: creating, then connecting.
      deliver(session, startOptions, { type: 'state', state: { phase: 'creating' }, previous: state.phase });
      run = controller.release({ awaitRtcReady: awaitRendererRtc, ...(options.rtcReadyTimeoutMs !== undefined ? { rtcReadyTimeoutMs: options.rtcReadyTimeoutMs } : {}) });
      if (!run) {
        // It ended between the hand-over and now (its socket lost): its session closed the room already.
        run = controller.hangup().then((terminal) => terminal ?? LOST_AT_TAP);
        replaceFailedSpare(session, startOptions, 'socket_lost');
      }
    } else {
      run = controller.start(startOptions);
    }

    // The session runs in the background; its end (any way) clears `active`.
    session.done = run
      .then((terminal) => {
        // Make sure the final state was seen even if the controller's last event raced the promise.
        if (active === session && !session.sawTerminal) {
          forward(session, { type: 'state', state: terminal, previous: state.phase });
        }
        logger.info('Session finished', { phase: state.phase });
      })
      .catch((error: unknown) => {
        // start() is documented to resolve with a terminal state; treat a throw as a failure anyway.
        const info = toAvatarError(error).toInfo();
        if (active === session && !session.sawTerminal) {
          forward(session, { type: 'state', state: { phase: 'failed', liveId: null, error: info, summary: null }, previous: state.phase });
        }
        logger.error('Session failed unexpectedly', { code: info.code, message: info.message });
      })
      .then(async () => {
        if (!session.superseded) session.resolveCreated(liveIdOf(state));
        session.taken?.settle('expired', 'session_over'); // no-op once settled
        if (active === session) active = null;
        spares.setBusy(active !== null);
        session.unsubscribe();
        // Clears the controller's timers and waits for its sockets to close (nothing leaks).
        await controller.dispose().catch((error: unknown) => logger.warn('Session controller dispose failed', { error: String(error) }));
      });
    session.resolveLaunched();
  }

  /** Route a controller event to the renderer: directly, or held while an adopted spare's first answer is due. */
  function deliver(session: CallSession, startOptions: StartOptions, event: SessionEvent): void {
    const pending = session.pending;
    if (!pending || (event.type === 'credentials' && awaitRendererRtc)) {
      // Credentials are never held: the adopted spare's conn_init waits for the renderer's RTC side, which
      // needs them (and the renderer may have pre-joined that channel already).
      if (event.type === 'credentials' && active === session) session.resolveCreated(event.liveId);
      forward(session, event);
      return;
    }
    pending.push(event);
    if (event.type !== 'state') return;
    const verdict = adoptionVerdict(event.state);
    if (verdict.kind === 'wait') return;
    const taken = session.taken!;
    if (verdict.kind === 'settled') {
      taken.settle(verdict.status);
      session.pending = null;
      for (const held of pending) deliver(session, startOptions, held);
      return;
    }
    replaceFailedSpare(session, startOptions, verdict.reason);
  }

  /** The spare failed at the tap: drop it quietly and start the normal path for this tap. */
  function replaceFailedSpare(session: CallSession, startOptions: StartOptions, reason: string): void {
    logger.warn('The spare session failed at the tap; creating a new session', { reason });
    session.taken!.settle('failed', reason);
    session.pending = null;
    session.superseded = true;
    if (active !== session || options.closing()) {
      // No fresh session replaces it: the tap is answered now, with none (else its invoke would wait forever).
      session.resolveCreated(null);
      return;
    }
    void session.controller.hangup().catch(() => {});
    const fresh = newSession();
    active = fresh;
    void fresh.created.then((liveId) => session.resolveCreated(liveId));
    launch(fresh, startOptions, null);
  }

  const hangupActive = (session: CallSession, why: string) => hangupOnce(session, why, logger);

  async function hangup(cause: HangupCause = 'visitor'): Promise<Result<void>> {
    if (active) {
      const liveId = liveIdOf(state);
      if (cause !== 'visitor') telemetry.noteCause(cause);
      for (const l of [...hangupCauseListeners]) {
        try {
          l(cause, liveId);
        } catch (error) {
          logger.warn('Hangup cause listener failed', { error: String(error) });
        }
      }
      await hangupActive(active, cause === 'visitor' ? 'renderer request' : `renderer request (${cause})`);
    }
    return ok(undefined);
  }

  return {
    start,
    hangup,
    get state() {
      return state;
    },
    get running() {
      return active !== null;
    },
    async setMuted(args) {
      if (muted !== args.muted) {
        muted = args.muted;
        emit({ type: 'muted', muted });
      }
      return ok(undefined);
    },
    async reportMediaError(args) {
      const failure = mediaFailureInfo(args.kind);
      logger.warn('The renderer reported a media error', { kind: args.kind, detail: args.message });
      const session = active;
      if (!session) return ok(undefined);
      session.mediaFailure ??= failure;
      // If the controller had already reached a terminal state, rewrite it now.
      if (isTerminalState(state)) {
        const previous = state.phase;
        state = asMediaFailure(state, session.mediaFailure);
        emit({ type: 'state', state, previous });
      }
      await hangupActive(session, `media error: ${args.kind}`);
      return ok(undefined);
    },
    async rtcReady(args) {
      const accepted = active ? active.controller.rtcReady(args.liveId) : false;
      if (accepted) telemetry.noteRtcReady();
      logger.info(accepted ? 'The renderer joined the RTC channel; sending conn_init' : 'An RTC-ready report for no waiting session was ignored', { liveId: args.liveId });
      return ok({ accepted });
    },
    onHangupCause(listener) {
      hangupCauseListeners.add(listener);
      return () => {
        hangupCauseListeners.delete(listener);
      };
    },
    async resetToAttract() {
      if (active) await hangupActive(active, 'renderer lost');
      if (!active && state.phase !== 'idle') {
        const previous = state.phase;
        state = { phase: 'idle' };
        emit({ type: 'state', state, previous });
      }
      unmute();
    },
    shutdown() {
      shutdownPromise ??= (async () => {
        const session = active;
        if (!session) return;
        const hung = hangupActive(session, 'shutdown');
        const injected = options.clock;
        let timer: unknown;
        const timeout = new Promise<void>((resolve) => {
          // Real time on purpose when no clock is injected: a hung network must not block quitting.
          timer = injected ? injected.setTimeout(resolve, SHUTDOWN_HANGUP_TIMEOUT_MS) : setTimeout(resolve, SHUTDOWN_HANGUP_TIMEOUT_MS);
        });
        const outcome = await Promise.race([hung.then(() => 'done' as const), timeout.then(() => 'timeout' as const)]);
        if (injected) injected.clearTimeout(timer as never);
        else clearTimeout(timer as ReturnType<typeof setTimeout>);
        if (outcome === 'timeout') {
          // type 5 went out first thing; only the billing read-back is slow. Stop waiting for it.
          logger.warn('Hangup is slow; disposing the session without waiting for billing figures');
          await session.controller.dispose().catch(() => {});
        }
      })();
      return shutdownPromise;
    },
  };
}
