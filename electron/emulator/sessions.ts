/**
 * Session lifecycle and billing of the emulated service (spec §3, §6, §8). Owns the state machine
 * waiting → on_live → ending → ended, the live-time charging (`CREDITS_PER_BILLING_UNIT` per started
 * `BILLING_UNIT_S` unit, taken as the unit starts), the live_duration guard, the reconnect grace window, the `waiting` TTL, and the
 * JSON shapes of the create and query answers. The socket layer (ws.ts) drives it through `attach`,
 * `detach`, `goLive`, `resume`, `failInit` and `end`, and is driven back through `SessionSocket`.
 */
import { randomBytes } from 'node:crypto';
import type { Clock, TimerHandle } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import {
  BILLING_UNIT_S,
  CREDITS_PER_BILLING_UNIT,
  DEFAULT_VOICE,
  MAX_LIVE_DURATION_S,
  RTC_TOKEN_VALIDITY_S,
  billableSeconds,
  creditsFor,
  type CallMode,
  type CreateSessionRequest,
} from '../core/protocol.ts';
import { EMULATOR_APP_ID_PREFIX, emulatorRtcToken, rtcIds } from '../core/rtc-ids.ts';
import type { AccountRecord, Accounts } from './accounts.ts';
import { timestamp, withExtraLiveFields } from './dialect.ts';
import type { TimerSet } from './timers.ts';
import type { EmulatedSession, EmulatedStatus, EmulatorKnobs } from './types.ts';

/** The emulator's RTC app id; the prefix tells the renderer to use its demo engine. */
export const EMULATOR_RTC_APP_ID = `${EMULATOR_APP_ID_PREFIX}rtc-app-0001`;
/** Ended sessions kept for queries before the oldest are forgotten (a kiosk may run for weeks). */
export const MAX_ENDED_SESSIONS_KEPT = 500;
/** Data URIs longer than this are abbreviated in the recorded request (they can be up to `MAX_BASE64_IMAGE_BYTES`). */
const MAX_RECORDED_IMAGE_CHARS = 4_096;
const BILLING_UNIT_MS = BILLING_UNIT_S * 1000;

/** What the session layer needs from the socket currently attached to a session. */
export interface SessionSocket {
  /** Send a forced hangup (type 6) with `reason`, then close the socket (spec §6 rule 5). */
  forceHangup(reason: string): void;
  /** This socket was replaced by a newer one for the same session: close it. */
  replaced(): void;
  /** The session expired while this socket held it without conn_init: close it. */
  expired(): void;
}

/** The fields a session shares with its public snapshot (types.ts `EmulatedSession`). */
type SessionFacts = Readonly<Pick<EmulatedSession, 'id' | 'creatorId' | 'liveDurationS' | 'request' | 'receivedRequest' | 'createdAtMs'>>;
type SessionProgress = Pick<
  EmulatedSession,
  'status' | 'hangupReason' | 'startedAtMs' | 'endedAtMs' | 'billedSeconds' | 'creditsCost' | 'connInits' | 'notReadyAnswers' | 'socketsOpened' | 'clientMessages' | 'clientControlFrames'
>;

export interface SessionRecord extends SessionFacts, SessionProgress {
  readonly account: AccountRecord;
  readonly callMode: CallMode;
  readonly avatar: { name: string | null; voice: string; persona: string };
  readonly rtc: { app_id: string; channel_id: string; user_id: string; token: string; token_expire_at: string | number };
  /** The socket currently attached (the newest one), if any. */
  socket: SessionSocket | null;
  /** When the live socket went away (start of a reconnect grace window), or null. */
  droppedAtMs: number | null;
  /** dropAfterMs has fired once for this session. */
  dropUsed: boolean;
  /** Credits already taken from the account for live time (reconciled at the end). */
  chargedCredits: number;
  /** Billing units charged so far. */
  unitsCharged: number;
  timers: { ttl: TimerHandle | null; unit: TimerHandle | null; liveDuration: TimerHandle | null; grace: TimerHandle | null; ending: TimerHandle | null };
}

export interface SessionContext {
  clock: Clock;
  timers: TimerSet;
  knobs: EmulatorKnobs;
  logger: Logger;
  accounts: Accounts;
}

export class SessionStore {
  readonly #ctx: SessionContext;
  readonly #byId = new Map<string, SessionRecord>();

  constructor(ctx: SessionContext) {
    this.#ctx = ctx;
  }

  get(id: string): SessionRecord | undefined {
    return this.#byId.get(id);
  }

  all(): SessionRecord[] {
    return [...this.#byId.values()];
  }

  /** spec §4.1: a new `waiting` session with RTC credentials. The caller has checked the balance (§3). */
  create(account: AccountRecord, request: CreateSessionRequest, effectiveRequest: CreateSessionRequest): SessionRecord {
    const { clock, knobs, timers } = this.#ctx;
    const now = clock.now();
    const id = randomBytes(8).toString('hex');
    const creatorId = account.creatorId;
    const session: SessionRecord = {
      id,
      account,
      creatorId,
      callMode: request.call_mode,
      liveDurationS: Math.max(1, Math.min(Math.floor(knobs.liveDurationS), MAX_LIVE_DURATION_S)), // spec §8: capped
      avatar: { name: request.avatar.name ?? null, voice: request.avatar.voice ?? DEFAULT_VOICE, persona: request.avatar.persona },
      rtc: {
        app_id: knobs.rtcAppId ?? EMULATOR_RTC_APP_ID,
        // spec §2.5 native channel map
        channel_id: request.call_mode === 'audio' ? rtcIds.audioChannel(id) : rtcIds.videoChannel(id),
        user_id: rtcIds.user(creatorId, id),
        token: emulatorRtcToken(knobs.rtcJoinMs, randomBytes(24).toString('base64url'), knobs.demoFreezeAfterMs, knobs.rtcQuality),
        token_expire_at: timestamp(knobs, now + RTC_TOKEN_VALIDITY_S * 1000),
      },
      request: recordableRequest(effectiveRequest),
      receivedRequest: recordableRequest(request),
      createdAtMs: now,
      status: 'waiting',
      hangupReason: null,
      startedAtMs: null,
      endedAtMs: null,
      billedSeconds: 0,
      creditsCost: 0,
      connInits: 0,
      notReadyAnswers: 0,
      socketsOpened: 0,
      clientMessages: [],
      clientControlFrames: { ping: 0, pong: 0 },
      socket: null,
      droppedAtMs: null,
      dropUsed: false,
      chargedCredits: 0,
      unitsCharged: 0,
      timers: { ttl: null, unit: null, liveDuration: null, grace: null, ending: null },
    };
    this.#byId.set(id, session);
    session.timers.ttl = timers.set(() => this.#onTtl(session), knobs.sessionTtlMs);
    this.#ctx.logger.info('session created', { liveId: id, callMode: session.callMode, liveDurationS: session.liveDurationS });
    return session;
  }

  /** A socket opened for this session; it becomes the current one and replaces any older socket. */
  attach(session: SessionRecord, socket: SessionSocket): void {
    const previous = session.socket;
    session.socket = socket;
    session.socketsOpened += 1;
    if (previous && previous !== socket) {
      this.#ctx.logger.info('socket replaced by a newer one', { liveId: session.id });
      previous.replaced();
    }
  }

  /** A socket went away at `atMs`. If it was the live one, the reconnect grace window starts. */
  detach(session: SessionRecord, socket: SessionSocket, atMs: number): void {
    if (session.socket !== socket) return;
    session.socket = null;
    if (session.status !== 'on_live') return;
    if (session.droppedAtMs === null) session.droppedAtMs = atMs;
    if (session.timers.grace !== null) return;
    const { knobs, timers, logger } = this.#ctx;
    logger.info('live socket lost; waiting for a reconnect', { liveId: session.id, graceMs: knobs.reconnectGraceMs });
    session.timers.grace = timers.set(() => {
      session.timers.grace = null;
      // spec §6 hangup reasons: the app client dropped and missed the reconnect grace window. Billing stops at the drop.
      this.end(session, 'client_reconnect_timeout', session.droppedAtMs ?? this.#ctx.clock.now(), true);
    }, knobs.reconnectGraceMs);
  }

  /** spec §3, §6 rule 1: conn_init acked with success — both ends ready, billing starts now. */
  goLive(session: SessionRecord): void {
    if (session.status !== 'waiting') return;
    const { clock, timers, logger } = this.#ctx;
    const now = clock.now();
    session.status = 'on_live';
    session.startedAtMs = now;
    timers.clear(session.timers.ttl);
    session.timers.ttl = null;
    logger.info('session live', { liveId: session.id, liveDurationS: session.liveDurationS });
    // spec §2.1 / §8: auto-disconnect at live_duration. Made before the billing timer, so it wins a tie.
    session.timers.liveDuration = timers.set(() => {
      session.timers.liveDuration = null;
      this.end(session, 'timeout', now + session.liveDurationS * 1000, true);
    }, session.liveDurationS * 1000);
    this.#chargeUnit(session);
  }

  /** A conn_init succeeded on a new socket while on_live: the grace window closes, billing never stopped. */
  resume(session: SessionRecord): void {
    this.#ctx.timers.clear(session.timers.grace);
    session.timers.grace = null;
    session.droppedAtMs = null;
  }

  /** spec §6 rule 3: LIVE_CONN_INIT_FAILED is permanent; the session ends without billing. */
  failInit(session: SessionRecord): void {
    this.end(session, null, this.#ctx.clock.now(), false);
  }

  /**
   * Move to `ending` (then `ended` after endingMs) and close the billing window at `billingEndMs`.
   * With `notifySocket`, the attached socket gets a forced hangup (type 6) and is closed.
   */
  end(session: SessionRecord, reason: string | null, billingEndMs: number, notifySocket: boolean): void {
    if (session.status === 'ending' || session.status === 'ended') return;
    const { clock, timers, knobs, logger, accounts } = this.#ctx;
    for (const key of ['ttl', 'unit', 'liveDuration', 'grace'] as const) {
      timers.clear(session.timers[key]);
      session.timers[key] = null;
    }
    if (session.startedAtMs !== null) {
      const endMs = Math.min(Math.max(billingEndMs, session.startedAtMs), session.startedAtMs + session.liveDurationS * 1000);
      session.endedAtMs = endMs;
      // spec §8: billed as whole billing units (billableSeconds, creditsFor); reconcile with what was taken as time accrued.
      session.billedSeconds = billableSeconds(endMs - session.startedAtMs);
      session.creditsCost = creditsFor(session.billedSeconds);
      const difference = session.creditsCost - session.chargedCredits;
      if (difference > 0) session.chargedCredits += accounts.charge(session.account, difference);
      else if (difference < 0) {
        accounts.refund(session.account, -difference);
        session.chargedCredits = session.creditsCost;
      }
    } else {
      session.endedAtMs = clock.now();
    }
    session.hangupReason = reason;
    session.status = 'ending';
    session.droppedAtMs = null;
    logger.info('session ending', {
      liveId: session.id,
      reason,
      billedSeconds: session.billedSeconds,
      creditsCost: session.creditsCost,
      balance: session.account.balance,
    });
    if (notifySocket && reason !== null && session.socket) session.socket.forceHangup(reason);
    if (knobs.endingMs <= 0) this.#markEnded(session);
    else session.timers.ending = timers.set(() => this.#markEnded(session), knobs.endingMs);
  }

  /** Billable seconds and credits so far: running while on_live, final afterwards. */
  billing(session: SessionRecord): { billedSeconds: number; creditsCost: number } {
    if (session.status === 'on_live' && session.startedAtMs !== null) {
      const billedSeconds = billableSeconds(this.#ctx.clock.now() - session.startedAtMs);
      return { billedSeconds, creditsCost: creditsFor(billedSeconds) };
    }
    return { billedSeconds: session.billedSeconds, creditsCost: session.creditsCost };
  }

  liveCount(): number {
    let count = 0;
    for (const s of this.#byId.values()) if (s.status === 'on_live') count += 1;
    return count;
  }

  snapshot(session: SessionRecord): EmulatedSession {
    const { billedSeconds, creditsCost } = this.billing(session);
    return {
      id: session.id,
      apiKey: session.account.apiKey,
      creatorId: session.creatorId,
      status: session.status,
      callMode: session.callMode,
      liveDurationS: session.liveDurationS,
      hangupReason: session.hangupReason,
      billedSeconds,
      creditsCost,
      connInits: session.connInits,
      notReadyAnswers: session.notReadyAnswers,
      socketsOpened: session.socketsOpened,
      clientMessages: session.clientMessages.map((m) => ({ ...m })),
      clientControlFrames: { ...session.clientControlFrames },
      createdAtMs: session.createdAtMs,
      startedAtMs: session.startedAtMs,
      endedAtMs: session.endedAtMs,
      request: structuredClone(session.request),
      receivedRequest: structuredClone(session.receivedRequest),
    };
  }

  /** spec §4.1 response body. */
  createJson(session: SessionRecord): unknown {
    return {
      live: withExtraLiveFields(this.#ctx.knobs, { id: session.id, status: session.status, live_duration: session.liveDurationS, call_mode: session.callMode }),
      rtc: { ...session.rtc },
    };
  }

  /** spec §4.2 response body. Timestamps are unix-second strings (§2.1; numbers with the `timestamps`
   *  knob), null before they happen. */
  queryJson(session: SessionRecord): unknown {
    const { billedSeconds, creditsCost } = this.billing(session);
    const knobs = this.#ctx.knobs;
    const unixSeconds = (ms: number) => timestamp(knobs, ms);
    return {
      live: withExtraLiveFields(knobs, {
        id: session.id,
        status: session.status,
        call_mode: session.callMode,
        live_duration: session.liveDurationS,
        avatar: { ...session.avatar },
        billed_seconds: billedSeconds,
        credits_cost: creditsCost,
        created_at: unixSeconds(session.createdAtMs),
        started_at: session.startedAtMs === null ? null : unixSeconds(session.startedAtMs),
        ended_at: session.endedAtMs === null ? null : unixSeconds(session.endedAtMs),
      }),
    };
  }

  /** Forget everything (close()). */
  clear(): void {
    this.#byId.clear();
  }

  /**
   * spec §8: `CREDITS_PER_BILLING_UNIT` per `BILLING_UNIT_S` while live, durations rounded up — so each
   * unit is paid as it starts. When the balance cannot pay the next unit, the session ends with credit_insufficient
   * ("Zero balance: the session disconnects automatically") at that unit's boundary.
   */
  #chargeUnit(session: SessionRecord): void {
    session.timers.unit = null;
    if (session.status !== 'on_live' || session.startedAtMs === null) return;
    const { clock, timers, accounts } = this.#ctx;
    const unitStartMs = session.startedAtMs + session.unitsCharged * BILLING_UNIT_MS;
    if (unitStartMs >= session.startedAtMs + session.liveDurationS * 1000) {
      this.end(session, 'timeout', unitStartMs, true);
      return;
    }
    if (session.account.balance < CREDITS_PER_BILLING_UNIT) {
      this.end(session, 'credit_insufficient', unitStartMs, true);
      return;
    }
    session.chargedCredits += accounts.charge(session.account, CREDITS_PER_BILLING_UNIT);
    session.unitsCharged += 1;
    const nextUnitMs = session.startedAtMs + session.unitsCharged * BILLING_UNIT_MS;
    session.timers.unit = timers.set(() => this.#chargeUnit(session), nextUnitMs - clock.now());
  }

  #markEnded(session: SessionRecord): void {
    session.timers.ending = null;
    session.status = 'ended';
    this.#ctx.logger.info('session ended', { liveId: session.id, reason: session.hangupReason });
    this.#pruneEnded();
  }

  /** spec §7: a session that was never used expires; afterwards it is unknown (404). */
  #onTtl(session: SessionRecord): void {
    session.timers.ttl = null;
    if (session.status !== 'waiting') return;
    if (session.socket && session.connInits > 0) {
      // Someone is still trying (e.g. a long NOT_READY loop): look again one TTL later.
      session.timers.ttl = this.#ctx.timers.set(() => this.#onTtl(session), this.#ctx.knobs.sessionTtlMs);
      return;
    }
    // Never initialised (no socket, or only a socket holding its conn_init, e.g. a spare): it expires,
    // its socket is closed, and it is unknown (404) from now on.
    const socket = session.socket;
    session.socket = null;
    socket?.expired();
    this.#byId.delete(session.id);
    this.#ctx.logger.info('waiting session expired', { liveId: session.id });
  }

  #pruneEnded(): void {
    const ended = [...this.#byId.values()].filter((s) => s.status === 'ended');
    for (let i = 0; i < ended.length - MAX_ENDED_SESSIONS_KEPT; i++) this.#byId.delete(ended[i]!.id);
  }
}

/** The request as recorded for tests: a huge data URI is abbreviated to its prefix and length. */
function recordableRequest(request: CreateSessionRequest): CreateSessionRequest {
  const uri = request.avatar.image_uri;
  if (uri.length <= MAX_RECORDED_IMAGE_CHARS) return structuredClone(request);
  const comma = uri.indexOf(',');
  const abbreviated = `${uri.slice(0, comma + 1)}${uri.slice(comma + 1, comma + 33)}…[${uri.length - comma - 1} base64 chars]`;
  // structuredClone copies the strings: V8's slices would otherwise keep the whole data URI (hundreds of
  // KB per session) alive for as long as the session is kept (found by `npm run bench`).
  return structuredClone({ ...request, avatar: { ...request.avatar, image_uri: abbreviated } });
}
