/**
 * Call telemetry: what each call measured, for staff (Status tab), /metrics and the fleet. The field
 * figures of a tap (`CallFigures`: tap → RTC ready, → conn_init ack, → avatar published, → first frame
 * and audio, the join time, why it ended), sent once as a `call-figures` event just before the call's
 * terminal state; the renderer's milestones for the running call; and the last call's connection
 * quality as the renderer last reported it. The day's summary of the figures is call-figures.ts.
 *
 * The call orchestrator feeds it (a tap, the session's states, credentials, a hangup's cause, the RTC
 * side ready); the renderer's reports arrive through the `session` channels.
 */
import { ok, type CallFigures, type CallMilestoneArgs, type CallQualityArgs, type KioskEvent, type LastCallQuality, type Result, type SessionState } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import type { CallMode } from '../core/protocol.ts';
import { isTerminalState } from './call-states.ts';

/** What staff, /metrics and the ledger read of the calls so far. */
export interface CallFiguresView {
  /** The last call's connection figures (null until a call reported some). */
  readonly lastCallQuality: LastCallQuality | null;
  /** The last call's field figures (null until a call ended). */
  readonly lastCallFigures: CallFigures | null;
  /** The cast member (id) of the call started last, for the ledger's spend per avatar; null before any call. */
  readonly callAvatarId: string | null;
}

export interface CallTelemetry extends CallFiguresView {
  /** A tap: a call starts now, in this mode, with this cast member. */
  tap(callMode: CallMode, avatarId: string): void;
  /** The call's credentials are out (its live id is known before its `connecting` state). */
  noteCredentials(liveId: string): void;
  /** The call's state as the renderer sees it; its terminal state sends the figures out (once, first). */
  noteState(state: SessionState): void;
  /** Why we hung up when it was not the visitor (idle, max_call, media_stalled…); the first counts. */
  noteCause(cause: string): void;
  /** The renderer's side of the RTC channel is ready (the first report counts). */
  noteRtcReady(): void;
  /** `session:reportMilestone`: a field milestone of the running call, timed from the tap on arrival. */
  reportMilestone(args: CallMilestoneArgs): Result<{ accepted: boolean }>;
  /** `session:reportQuality`: connection figures for the call on screen. */
  reportQuality(args: CallQualityArgs): Result<{ accepted: boolean }>;
}

export interface CallTelemetryOptions {
  clock: Clock;
  emit(event: KioskEvent): void;
  /** The cloud proxy the calls use (config `rtc.cloudProxy`), recorded with the figures. */
  cloudProxy(): CallFigures['proxy'];
  /** The live id of the call on screen (running or just ended), or null. */
  currentLiveId(): string | null;
}

/** A tap's field figures while its call runs (clock times; see `CallFigures`). */
interface FiguresDraft {
  tapAtMs: number;
  callMode: CallMode;
  liveId: string | null;
  rtcReadyAtMs: number | null;
  ackAtMs: number | null;
  publishedAtMs: number | null;
  firstFrameAtMs: number | null;
  firstAudioAtMs: number | null;
  joinMs: number | null;
  /** Why we hung up when it was not the visitor (idle, max_call, media_stalled…). */
  cause: string | null;
}

export function createCallTelemetry(options: CallTelemetryOptions): CallTelemetry {
  const { clock } = options;
  /** The field figures of the tap under way (see `CallFigures`), and of the last finished call. */
  let figures: FiguresDraft | null = null;
  let lastCallFigures: CallFigures | null = null;
  /** The last call's connection figures, as the renderer last reported them (staff Status, /metrics). */
  let lastCallQuality: LastCallQuality | null = null;
  let callAvatarId: string | null = null;

  return {
    get lastCallQuality() {
      return lastCallQuality;
    },
    get lastCallFigures() {
      return lastCallFigures;
    },
    get callAvatarId() {
      return callAvatarId;
    },
    tap(callMode, avatarId) {
      callAvatarId = avatarId;
      figures = {
        tapAtMs: clock.now(),
        callMode,
        liveId: null,
        rtcReadyAtMs: null,
        ackAtMs: null,
        publishedAtMs: null,
        firstFrameAtMs: null,
        firstAudioAtMs: null,
        joinMs: null,
        cause: null,
      };
    },
    noteCredentials(liveId) {
      if (figures) figures.liveId = liveId;
    },
    noteCause(cause) {
      if (figures) figures.cause ??= cause;
    },
    noteRtcReady() {
      if (figures && figures.rtcReadyAtMs === null) figures.rtcReadyAtMs = clock.now();
    },
    noteState(next) {
      const f = figures;
      if (!f) return;
      if ('liveId' in next && next.liveId) f.liveId = next.liveId;
      if (next.phase === 'live' && f.ackAtMs === null) f.ackAtMs = next.sinceMs;
      if (!isTerminalState(next)) return;
      figures = null;
      const summary = next.summary;
      const from = (atMs: number | null): number | null => (atMs === null ? null : Math.max(0, atMs - f.tapAtMs));
      const endReason = f.cause ?? summary?.hangupReason ?? (next.phase === 'failed' ? next.error.code : 'unknown');
      lastCallFigures = {
        liveId: f.liveId,
        callMode: f.callMode,
        tapToRtcReadyMs: from(f.rtcReadyAtMs),
        tapToConnInitAckMs: from(f.ackAtMs),
        tapToAvatarPublishedMs: from(f.publishedAtMs),
        tapToFirstFrameMs: from(f.firstFrameAtMs),
        tapToFirstAudioMs: from(f.firstAudioAtMs),
        joinMs: f.joinMs,
        proxy: options.cloudProxy(),
        endReason,
      };
      options.emit({ type: 'call-figures', figures: lastCallFigures });
    },
    reportMilestone(args) {
      const f = figures;
      if (!f || f.liveId !== args.liveId) return ok({ accepted: false });
      const now = clock.now();
      switch (args.milestone) {
        case 'joined':
          f.joinMs ??= args.durationMs ?? null;
          break;
        case 'avatar_published':
          f.publishedAtMs ??= now;
          break;
        case 'first_frame':
          f.firstFrameAtMs ??= now;
          break;
        case 'first_audio':
          f.firstAudioAtMs ??= now;
          break;
      }
      return ok({ accepted: true });
    },
    // A report for any other live id is ignored, so a late report of an earlier call never overwrites
    // the current one's.
    reportQuality(args) {
      if (options.currentLiveId() !== args.liveId) return ok({ accepted: false });
      lastCallQuality = {
        bitrateKbps: args.bitrateKbps,
        packetLossPct: args.packetLossPct,
        frameRate: args.frameRate,
        rttMs: args.rttMs,
        level: args.level,
        atMs: clock.now(),
        final: args.final ?? false,
      };
      return ok({ accepted: true });
    },
  };
}
