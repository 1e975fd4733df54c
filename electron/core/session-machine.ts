/**
 * The session as a pure state machine: `transition(machine, event, config) → { machine, effects }`. No I/O,
 * no timers, no clock: every event carries the time it happened (`atMs`), and the driver
 * (session-controller.ts) runs the effects and feeds the results back as events.
 *
 * Client phases (the `SessionState` union the UI renders) and the service's states behind them (spec §3):
 *
 *   idle → creating ──created──→ connecting ──ack ok──→ live ──drop──→ reconnecting ──ack ok──→ live
 *            ↑   │                 ↑ │   ↑                  │                 │
 *          hold  └─created─→ held ─┘ │   │ retry-due        │ hangup / type 6 / duration
 *               (a spare)  release   ↓   │                  ↓                 ↓
 *                                  warming (NOT_READY)    ending ──final──→ ended | failed
 *   service:  (none) → waiting ······························ on_live ······· ending → ended
 *
 * `held` is a spare (electron/kiosk/spare.ts decides when one is made): created, its socket open and
 * answering pings, conn_init not sent, so the room stays `waiting` and unbilled (spec §3). `release` (the
 * tap) sends conn_init on that socket; a held session given up, expired, refused or lost ends there with
 * type 5 and no conn_init (none after a 404 or the service's own type 6), with no billing read-back.
 *
 * Rules (spec §6): NOT_READY → close, wait (`NOT_READY_BACKOFF_MS`), reconnect (rule 2); LIVE_CONN_INIT_FAILED is permanent
 * (rule 3); a forced hangup ends the call and is never followed by a reconnect (rules 5, 6); the client's own
 * hangup sends type 5 and closes, no reconnect (rule 7). A raw close/error while live is a fallback signal
 * (rule 5): we try to restore the control socket within a grace budget while the RTC call continues.
 */
import type { ErrorCode, ErrorInfo } from './errors.ts';
import type { HangupReason } from './protocol.ts';
import { classify } from './reconnect-policy.ts';
import {
  RTC_READY_TIMEOUT_MS,
  type FinalRecord,
  type Machine,
  type MachineConfig,
  type MachineEffect,
  type MachineEvent,
  type SessionContext,
  type TransitionResult,
} from './session-machine-types.ts';
import type { EndedBy, SessionState, SessionSummary } from './session-types.ts';

export * from './session-machine-types.ts';

export function initialMachine(): Machine {
  return {
    state: { phase: 'idle' },
    context: {
      callMode: 'audio',
      liveId: null,
      liveDurationS: 0,
      startedAtMs: 0,
      createdAtMs: null,
      firstSocketOpenAtMs: null,
      liveAtMs: null,
      endedAtMs: null,
      socketsOpened: 0,
      notReadyRetries: 0,
      preLiveRetries: 0,
      warmupStartedAtMs: null,
      reconnects: 0,
      reconnectAttempt: 0,
      dropStartedAtMs: null,
      liveSinceMs: null,
      endsAtMs: null,
      wentLive: false,
      hangupReason: null,
      endedBy: null,
      failure: null,
      cancelledDuringCreate: false,
      lastError: null,
      rtcReady: false,
      connInitHeld: false,
      holdForMs: null,
    },
  };
}

export function isTerminal(state: SessionState): state is Extract<SessionState, { phase: 'ended' | 'failed' }> {
  return state.phase === 'ended' || state.phase === 'failed';
}

/** The summary of the session as the context stands (exact figures; timings relative to the create start). */
export function buildSummary(context: SessionContext, final: FinalRecord | null): SessionSummary {
  const rel = (atMs: number | null) => (atMs === null ? null : atMs - context.startedAtMs);
  return {
    liveId: context.liveId ?? '',
    callMode: context.callMode,
    wentLive: context.wentLive,
    hangupReason: context.hangupReason ?? final?.hangupReason ?? null,
    endedBy: context.endedBy,
    finalStatus: final?.status ?? null,
    billedSeconds: final?.billedSeconds ?? null,
    creditsCost: final?.creditsCost ?? null,
    notReadyRetries: context.notReadyRetries,
    reconnects: context.reconnects,
    liveDurationS: context.liveDurationS,
    timingsMs: {
      create: rel(context.createdAtMs),
      socketOpen: rel(context.firstSocketOpenAtMs),
      live: rel(context.liveAtMs),
      ended: rel(context.endedAtMs),
    },
  };
}

const err = (code: ErrorCode, message: string): ErrorInfo => ({ code, message });

// ---------------------------------------------------------------------------------------------------
// The transition function

/**
 * The next machine and the effects to run. An event that means nothing in the current phase returns the
 * same machine object and no effects (the driver logs it), so callers can detect "ignored" by identity.
 */
export function transition(machine: Machine, event: MachineEvent, config: MachineConfig): TransitionResult {
  const { state, context: ctx } = machine;
  const same: TransitionResult = { machine, effects: [] };
  const to = (next: SessionState, context: SessionContext, effects: MachineEffect[] = []): TransitionResult => ({
    machine: { state: next, context },
    effects,
  });

  // Terminal phases absorb everything. A new session starts from a fresh machine.
  if (isTerminal(state)) return same;

  // Failures that end the session at once (no live call to wind down).
  const failNow = (context: SessionContext, error: ErrorInfo, effects: MachineEffect[]): TransitionResult => {
    const c = { ...context, endedAtMs: context.endedAtMs ?? event.atMs, lastError: error };
    return to({ phase: 'failed', liveId: c.liveId, error, summary: c.liveId ? buildSummary(c, null) : null }, c, effects);
  };
  // Enter `ending`: the call is over from our side; read the final billing (spec §3 ending → ended).
  const endVia = (
    reason: HangupReason,
    endedBy: EndedBy,
    effects: MachineEffect[],
    failure: ErrorInfo | null = null,
  ): TransitionResult => {
    const c: SessionContext = { ...ctx, hangupReason: failure ? ctx.hangupReason : reason, endedBy, endedAtMs: event.atMs, failure };
    return to({ phase: 'ending', liveId: ctx.liveId!, reason }, c, [...effects, { type: 'query-final' }]);
  };

  // A held session that ends unused ends at once: never live, nothing billed, no billing read-back.
  const endHeld = (endedBy: EndedBy, reason: HangupReason, effects: MachineEffect[]): TransitionResult => {
    const c: SessionContext = { ...ctx, holdForMs: null, hangupReason: reason, endedBy, endedAtMs: event.atMs };
    return to({ phase: 'ended', liveId: c.liveId!, summary: buildSummary(c, null) }, c, effects);
  };

  switch (event.type) {
    case 'start': {
      if (state.phase !== 'idle') return same;
      const c: SessionContext = { ...initialMachine().context, callMode: event.callMode, startedAtMs: event.atMs };
      return to({ phase: 'creating' }, c, [{ type: 'create-session' }]);
    }

    case 'hold': {
      if (state.phase !== 'idle') return same;
      const c: SessionContext = { ...initialMachine().context, callMode: event.callMode, startedAtMs: event.atMs, holdForMs: event.holdForMs };
      return to({ phase: 'creating' }, c, [{ type: 'create-session' }]);
    }

    case 'created': {
      if (state.phase !== 'creating') return same;
      const c: SessionContext = {
        ...ctx,
        liveId: event.liveId,
        liveDurationS: event.liveDurationS,
        callMode: event.callMode,
        createdAtMs: event.atMs,
      };
      if (ctx.cancelledDuringCreate) {
        // The answer arrived although we cancelled: close the room without ever sending conn_init.
        const reason = ctx.hangupReason ?? 'user_end';
        return failNow({ ...c, endedBy: 'client', hangupReason: reason }, err('cancelled', 'The session was cancelled while it was being created.'), [
          { type: 'send-hangup', reason },
        ]);
      }
      if (ctx.holdForMs !== null) {
        // A spare: the socket opens holding conn_init (keep-alives and pings only), so the service keeps the
        // room `waiting`, unbilled, until the tap (spec §3 waiting → on_live needs conn_init).
        const expiresAtMs = event.atMs + ctx.holdForMs;
        const cc: SessionContext = { ...c, socketsOpened: 1, connInitHeld: true };
        return to({ phase: 'held', liveId: event.liveId, socketOpen: false, expiresAtMs }, cc, [openSocket(true), { type: 'schedule-hold-expiry', atMs: expiresAtMs }]);
      }
      if (config.awaitRtcReady) {
        // RTC first, then billing: the socket opens now (its handshake overlaps the renderer's join) but
        // holds conn_init until `rtc-ready`; a join that never gets ready is given up (type 5, no conn_init).
        const cc: SessionContext = { ...c, socketsOpened: 1, connInitHeld: true };
        return to({ phase: 'connecting', liveId: event.liveId, attempt: 1 }, cc, [
          { type: 'emit-credentials' },
          openSocket(true),
          { type: 'schedule-rtc-guard', atMs: event.atMs + (config.rtcReadyTimeoutMs ?? RTC_READY_TIMEOUT_MS) },
        ]);
      }
      const cc = { ...c, socketsOpened: 1 };
      return to({ phase: 'connecting', liveId: event.liveId, attempt: 1 }, cc, [{ type: 'emit-credentials' }, { type: 'open-socket' }]);
    }

    case 'create-failed': {
      if (state.phase !== 'creating') return same;
      const error = ctx.cancelledDuringCreate ? err('cancelled', 'The session was cancelled while it was being created.') : event.error;
      return failNow(ctx, error, []);
    }

    case 'socket-open': {
      if (state.phase === 'held') {
        if (state.socketOpen) return same;
        return to({ ...state, socketOpen: true }, { ...ctx, firstSocketOpenAtMs: ctx.firstSocketOpenAtMs ?? event.atMs });
      }
      if (state.phase !== 'connecting' && state.phase !== 'reconnecting') return same;
      if (ctx.firstSocketOpenAtMs !== null) return same;
      return to(state, { ...ctx, firstSocketOpenAtMs: event.atMs });
    }

    case 'ack-success': {
      if (state.phase === 'connecting') {
        // spec §3: waiting → on_live; billing starts now (§6 rule 1).
        const endsAtMs = event.atMs + ctx.liveDurationS * 1000;
        const c: SessionContext = { ...ctx, wentLive: true, liveAtMs: event.atMs, liveSinceMs: event.atMs, endsAtMs };
        return to({ phase: 'live', liveId: state.liveId, sinceMs: event.atMs, endsAtMs }, c, [
          { type: 'schedule-duration-guard', atMs: endsAtMs + config.durationGraceMs },
        ]);
      }
      if (state.phase === 'reconnecting') {
        const c: SessionContext = { ...ctx, reconnectAttempt: 0, dropStartedAtMs: null, lastError: null };
        return to({ phase: 'live', liveId: state.liveId, sinceMs: state.sinceMs, endsAtMs: state.endsAtMs }, c);
      }
      return same;
    }

    case 'ack-not-ready': {
      if (state.phase === 'connecting') {
        // spec §6 rule 2: close, wait (the NOT_READY policy's delay), reconnect with a fresh conn_init.
        const warmupStartedAtMs = ctx.warmupStartedAtMs ?? event.atMs;
        const attempt = ctx.preLiveRetries + 1;
        const delayMs = config.notReadyPolicy.nextDelayMs({ attempt, elapsedMs: event.atMs - warmupStartedAtMs, lastError: 'NOT_READY' });
        const c: SessionContext = { ...ctx, warmupStartedAtMs, lastError: err('not_ready', 'NOT_READY') };
        if (delayMs === null) {
          // Giving up on a created room: close it with type 5 (on this socket, still open after NOT_READY),
          // so it never waits on the service.
          return failNow(c, err('not_ready', 'The avatar was still not ready after the warm-up wait; try again later.'), [
            { type: 'send-hangup', reason: 'user_end' },
          ]);
        }
        const cc: SessionContext = { ...c, notReadyRetries: ctx.notReadyRetries + 1, preLiveRetries: attempt };
        return to(
          { phase: 'warming', liveId: state.liveId, notReadyRetries: cc.notReadyRetries, retryInMs: delayMs, retryAtMs: event.atMs + delayMs },
          cc,
          [{ type: 'close-socket' }, { type: 'schedule-retry', delayMs }],
        );
      }
      if (state.phase === 'reconnecting') {
        // The avatar was live; NOT_READY on a reconnect is treated like any failed reconnect attempt.
        const result = retryReconnect(machine, event.atMs, err('not_ready', 'NOT_READY on reconnect'), config, to, endVia);
        return { machine: result.machine, effects: [{ type: 'close-socket' }, ...result.effects] };
      }
      return same;
    }

    case 'ack-failed': {
      if (state.phase !== 'connecting' && state.phase !== 'reconnecting') return same;
      // spec §6 rule 3: permanent; a new session is needed.
      const error = err('init_failed', `The avatar could not be started (${event.errorCode}); create a new session.`);
      if (state.phase === 'reconnecting') {
        return endVia('user_end', 'network', [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, { type: 'close-socket' }], error);
      }
      // The service calls this permanent; a type 5 still makes sure the room is not left waiting.
      return failNow(ctx, error, [{ type: 'send-hangup', reason: 'user_end' }]);
    }

    case 'release': {
      if (state.phase !== 'held') return same;
      // The tap: from here the session runs as if created now (its timings count from the tap), and its
      // socket, open already, carries conn_init: tap → live is one round trip once the avatar is ready.
      const hold = !!config.awaitRtcReady;
      const c: SessionContext = {
        ...ctx,
        holdForMs: null,
        startedAtMs: event.atMs,
        createdAtMs: event.atMs,
        firstSocketOpenAtMs: state.socketOpen ? event.atMs : null,
        connInitHeld: true,
      };
      const effects: MachineEffect[] = [{ type: 'cancel-hold-expiry' }, { type: 'emit-credentials' }];
      if (hold) effects.push({ type: 'schedule-rtc-guard', atMs: event.atMs + (config.rtcReadyTimeoutMs ?? RTC_READY_TIMEOUT_MS) });
      else effects.push({ type: 'send-conn-init' });
      return to({ phase: 'connecting', liveId: state.liveId, attempt: ctx.socketsOpened }, hold ? c : { ...c, connInitHeld: false }, effects);
    }

    case 'hold-expired': {
      if (state.phase !== 'held') return same;
      // Unused for its whole hold: closed with type 5 before any conn_init, never billed.
      return endHeld('limit', 'user_end', [{ type: 'send-hangup', reason: 'user_end' }]);
    }

    case 'forced-hangup': {
      if (state.phase === 'held') return endHeld('server', event.reason, [{ type: 'cancel-hold-expiry' }, { type: 'close-socket' }]);
      if (state.phase === 'creating' || state.phase === 'idle' || state.phase === 'ending') return same;
      // spec §6 rules 5, 6: the server ended the call; never reconnect.
      return endVia(event.reason, 'server', [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, { type: 'close-socket' }]);
    }

    case 'socket-lost': {
      if (state.phase === 'held') {
        // A spare is not worth a reconnect: give it up, closing its room with type 5 over a hangup-only
        // socket unless the service has expired it already (404).
        const close: MachineEffect = event.error.code === 'not_found' ? { type: 'close-socket' } : { type: 'send-hangup', reason: 'user_end' };
        return failNow(ctx, event.error, [{ type: 'cancel-hold-expiry' }, close]);
      }
      if (state.phase === 'connecting') {
        if (classify(event.error.code) === 'fatal') return failNow(ctx, event.error, abandonEffects(event.error));
        // A drop before the ack: retry on the NOT_READY schedule (bounded by the same warm-up budget).
        const warmupStartedAtMs = ctx.warmupStartedAtMs ?? event.atMs;
        const attempt = ctx.preLiveRetries + 1;
        const delayMs = config.notReadyPolicy.nextDelayMs({ attempt, elapsedMs: event.atMs - warmupStartedAtMs, lastError: event.error });
        const c: SessionContext = { ...ctx, warmupStartedAtMs, lastError: event.error };
        if (delayMs === null) {
          const error = ctx.lastError?.code === 'not_ready' ? err('not_ready', 'The avatar was still not ready after the warm-up wait.') : event.error;
          return failNow(c, error, abandonEffects(event.error));
        }
        const cc: SessionContext = { ...c, preLiveRetries: attempt };
        return to(
          { phase: 'warming', liveId: state.liveId, notReadyRetries: ctx.notReadyRetries, retryInMs: delayMs, retryAtMs: event.atMs + delayMs },
          cc,
          [{ type: 'close-socket' }, { type: 'schedule-retry', delayMs }],
        );
      }
      if (state.phase === 'live') {
        // spec §6 rule 5: a raw close/error is a fallback signal. The RTC call goes on; restore the socket
        // and ask the server whether the session is still on.
        if (classify(event.error.code) === 'fatal') {
          return endVia('user_end', 'network', [{ type: 'cancel-duration-guard' }, { type: 'close-socket' }], event.error);
        }
        const c: SessionContext = { ...ctx, dropStartedAtMs: event.atMs, reconnectAttempt: 0, lastError: event.error };
        const next: Machine = {
          state: { phase: 'reconnecting', liveId: state.liveId, attempt: 0, sinceMs: state.sinceMs, endsAtMs: state.endsAtMs },
          context: c,
        };
        return withLossEffects(retryReconnect(next, event.atMs, event.error, config, to, endVia));
      }
      if (state.phase === 'reconnecting') {
        if (classify(event.error.code) === 'fatal') {
          return endVia('user_end', 'network', [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, { type: 'close-socket' }], event.error);
        }
        return withLossEffects(retryReconnect(machine, event.atMs, event.error, config, to, endVia));
      }
      return same;
    }

    case 'retry-due': {
      if (state.phase === 'warming') {
        const hold = !!config.awaitRtcReady && !ctx.rtcReady;
        const c: SessionContext = { ...ctx, socketsOpened: ctx.socketsOpened + 1, connInitHeld: hold };
        return to({ phase: 'connecting', liveId: state.liveId, attempt: c.socketsOpened }, c, [openSocket(hold)]);
      }
      if (state.phase === 'reconnecting') {
        const c: SessionContext = { ...ctx, socketsOpened: ctx.socketsOpened + 1, reconnects: ctx.reconnects + 1 };
        return to(state, c, [{ type: 'open-socket' }]);
      }
      return same;
    }

    case 'hangup-requested': {
      switch (state.phase) {
        case 'idle':
        case 'ending':
          return same;
        case 'creating':
          // Cancel the create; when its answer arrives, `created` closes the room (see above).
          if (ctx.cancelledDuringCreate) return same;
          return to(state, { ...ctx, cancelledDuringCreate: true, endedBy: 'client', hangupReason: event.reason }, [{ type: 'abort-create' }]);
        case 'held':
          return endHeld('client', event.reason, [{ type: 'cancel-hold-expiry' }, { type: 'send-hangup', reason: event.reason }]);
        case 'connecting':
        case 'warming':
        case 'live':
        case 'reconnecting':
          // spec §6 rule 7: type 5, close, no reconnect.
          return endVia(event.reason, 'client', [
            { type: 'cancel-retry' },
            { type: 'cancel-duration-guard' },
            ...(config.awaitRtcReady ? [{ type: 'cancel-rtc-guard' } as const] : []),
            { type: 'send-hangup', reason: event.reason },
          ]);
      }
      return same;
    }

    case 'duration-reached': {
      if (state.phase !== 'live' && state.phase !== 'reconnecting') return same;
      // The server should have ended the call at live_duration (spec §2.1); it has not, so we do.
      return endVia('timeout', 'limit', [{ type: 'cancel-retry' }, { type: 'send-hangup', reason: 'timeout' }]);
    }

    case 'status-known': {
      if (state.phase !== 'reconnecting') return same;
      const status = event.record.status;
      if (status !== 'ending' && status !== 'ended') return same;
      // The server already closed the session while we were away: stop reconnecting, read the final figures.
      const c: SessionContext = { ...ctx, hangupReason: event.record.hangupReason ?? null, endedBy: 'server', endedAtMs: event.atMs };
      return to({ phase: 'ending', liveId: state.liveId, reason: c.hangupReason ?? 'unknown' }, c, [
        { type: 'cancel-retry' },
        { type: 'cancel-duration-guard' },
        { type: 'close-socket' },
        { type: 'query-final' },
      ]);
    }

    case 'end-confirmed': {
      if (state.phase !== 'ending') return same;
      const summary = buildSummary(ctx, event.record);
      if (ctx.failure) return to({ phase: 'failed', liveId: state.liveId, error: ctx.failure, summary }, ctx);
      return to({ phase: 'ended', liveId: state.liveId, summary }, ctx);
    }

    case 'error': {
      if (state.phase === 'idle') return same;
      const effects: MachineEffect[] = [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }];
      // A created room we stop driving still gets its type 5 (the hangup went out already once ending).
      if (state.phase === 'held') effects.push({ type: 'cancel-hold-expiry' });
      const created = state.phase === 'held' || state.phase === 'connecting' || state.phase === 'warming' || state.phase === 'live' || state.phase === 'reconnecting';
      effects.push(created ? { type: 'send-hangup', reason: 'user_end' } : { type: 'close-socket' });
      if (state.phase === 'creating') effects.push({ type: 'abort-create' });
      return failNow(ctx, event.error, effects);
    }

    case 'rtc-ready': {
      if (!config.awaitRtcReady || ctx.rtcReady) return same;
      if (state.phase !== 'connecting' && state.phase !== 'warming') return same;
      const c: SessionContext = { ...ctx, rtcReady: true, connInitHeld: false };
      const effects: MachineEffect[] = [{ type: 'cancel-rtc-guard' }];
      if (state.phase === 'connecting' && ctx.connInitHeld) effects.push({ type: 'send-conn-init' });
      return to(state, c, effects);
    }

    case 'rtc-failed': {
      if (state.phase !== 'connecting' && state.phase !== 'warming') return same;
      // Our side of the call cannot work: close the room with type 5. Before `rtc-ready` no conn_init went
      // out, so the avatar never went live and nothing is billed.
      return endVia(
        'user_end',
        'client',
        [{ type: 'cancel-retry' }, { type: 'cancel-duration-guard' }, { type: 'cancel-rtc-guard' }, { type: 'send-hangup', reason: 'user_end' }],
        event.error,
      );
    }
  }
}

function openSocket(hold: boolean): MachineEffect {
  return hold ? { type: 'open-socket', holdConnInit: true } : { type: 'open-socket' };
}

/**
 * Effects of giving up on a created room after a failure: type 5, unless the room is already gone (404)
 * or refuses us outright (401/403), where only the socket is closed.
 */
function abandonEffects(error: ErrorInfo): MachineEffect[] {
  const refused = error.code === 'not_found' || error.code === 'unauthorized' || error.code === 'forbidden';
  return refused ? [{ type: 'close-socket' }] : [{ type: 'send-hangup', reason: 'user_end' }];
}

/** After a lost socket: drop it, and while still reconnecting, ask the server whether the session is still on. */
function withLossEffects(result: TransitionResult): TransitionResult {
  const stillReconnecting = result.machine.state.phase === 'reconnecting';
  const effects: MachineEffect[] = [{ type: 'close-socket' }, ...(stillReconnecting ? [{ type: 'query-status' } as const] : []), ...result.effects];
  return { machine: result.machine, effects };
}

/** One more attempt to restore a live connection, or give up (`connection_lost`) once the policy says so. */
function retryReconnect(
  machine: Machine,
  atMs: number,
  error: ErrorInfo,
  config: MachineConfig,
  to: (next: SessionState, context: SessionContext, effects?: MachineEffect[]) => TransitionResult,
  endVia: (reason: HangupReason, endedBy: EndedBy, effects: MachineEffect[], failure?: ErrorInfo | null) => TransitionResult,
): TransitionResult {
  const { state, context: ctx } = machine;
  if (state.phase !== 'reconnecting') return { machine, effects: [] };
  const attempt = ctx.reconnectAttempt + 1;
  const elapsedMs = atMs - (ctx.dropStartedAtMs ?? atMs);
  const delayMs = config.liveReconnectPolicy.nextDelayMs({ attempt, elapsedMs, lastError: error });
  if (delayMs === null) {
    // Exhausted: try to tell the server (best effort), then read the final figures and fail.
    return endVia(
      'user_end',
      'network',
      [{ type: 'cancel-duration-guard' }, { type: 'send-hangup', reason: 'user_end' }],
      { code: 'connection_lost', message: `The connection to the service was lost and could not be restored within ${Math.round(elapsedMs / 1000)} s.` },
    );
  }
  const c: SessionContext = { ...ctx, reconnectAttempt: attempt, lastError: error };
  const next: SessionState = { ...state, attempt };
  if (delayMs === 0) {
    const cc: SessionContext = { ...c, socketsOpened: c.socketsOpened + 1, reconnects: c.reconnects + 1 };
    return to(next, cc, [{ type: 'open-socket' }]);
  }
  return to(next, c, [{ type: 'schedule-retry', delayMs }]);
}
