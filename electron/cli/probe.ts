/**
 * `probe`: one whole session, headless. Create → control socket → live → hold → hang up (user_end) →
 * read the final billing, then print a report. Its contract (options, JSON fields, exit codes) is
 * one an independent conformance suite drives, so change it only with care.
 *
 * Exit codes: 0 iff the session went live and the client ended it itself after --hold; 1 for any other
 * outcome (server ended it, never went live, errors); 2 for bad usage/configuration; 130/143 when
 * interrupted by SIGINT/SIGTERM. A live session is always hung up before the process exits.
 */
import { AvatarError, toAvatarError, type ErrorInfo } from '../core/errors.ts';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import type { CallMode, Moderation } from '../core/protocol.ts';
import { ServiceClient } from '../core/rest-client.ts';
import { SessionController, type TerminalState } from '../core/session-controller.ts';
import type { SessionEvent, SessionState, SessionSummary } from '../core/session-types.ts';
import { resolveTarget, type TargetOptions } from './target.ts';
import { describeEnd, describeError } from './messages.ts';
import { wsTransportFactory } from '../core/transport.ts';
import { WireRecorder, recordErrorAnswers } from '../core/wire-recorder.ts';
import { WIRE_WATCH_MS, costLine, describeWireReport, writeWireReport } from './wire-report.ts';

export interface ProbeOptions extends TargetOptions {
  mode: CallMode;
  image: string;
  persona: string;
  name?: string | undefined;
  voice?: string | undefined;
  moderation?: Moderation | undefined;
  extraMotion?: boolean | undefined;
  holdSeconds: number;
  json: boolean;
  /** Write a wire report (what the service sent, shapes only) to this file (wire-report.ts). */
  wireReport?: string | undefined;
}

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'fatal';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** Subscribe to SIGINT/SIGTERM and to fatal errors (uncaught exceptions, unhandled rejections);
   *  returns the unsubscribe function. */
  onSignal(handler: (signal: StopSignal) => void): () => void;
  logger: Logger;
  clock?: Clock;
}

/** The JSON report. Field names are part of the CLI's contract (the conformance suite reads them). */
export interface ProbeReport {
  live_id: string;
  call_mode: CallMode;
  went_live: boolean;
  hangup_reason: string | null;
  final_status: string | null;
  billed_seconds: number | null;
  credits_cost: number | null;
  not_ready_retries: number;
  reconnects: number;
  timings_ms: { create: number | null; socket_open: number | null; live: number | null; ended: number | null };
  /** Present only when the probe did not succeed. */
  error?: ErrorInfo;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;

export function toReport(summary: SessionSummary, error: ErrorInfo | null): ProbeReport {
  const report: ProbeReport = {
    live_id: summary.liveId,
    call_mode: summary.callMode,
    went_live: summary.wentLive,
    hangup_reason: summary.hangupReason,
    final_status: summary.finalStatus,
    billed_seconds: summary.billedSeconds,
    credits_cost: summary.creditsCost,
    not_ready_retries: summary.notReadyRetries,
    reconnects: summary.reconnects,
    timings_ms: {
      create: summary.timingsMs.create,
      socket_open: summary.timingsMs.socketOpen,
      live: summary.timingsMs.live,
      ended: summary.timingsMs.ended,
    },
  };
  if (error) report.error = error;
  return report;
}

export async function runProbe(options: ProbeOptions, io: CliIo): Promise<number> {
  const clock = io.clock ?? systemClock;
  const startedAt = clock.now();
  const say = (line: string) => {
    if (options.json) return;
    const seconds = ((clock.now() - startedAt) / 1000).toFixed(1).padStart(6);
    io.stdout(`${seconds}s  ${line}\n`);
  };

  let resolved;
  try {
    resolved = await resolveTarget(options, io.env, io.logger);
  } catch (err) {
    const error = toAvatarError(err, 'invalid_config');
    io.stderr(`probe: ${error.message}\n`);
    return error.code === 'invalid_config' ? EXIT_USAGE : EXIT_FAILED;
  }

  const recorder = options.wireReport ? new WireRecorder({ source: 'cli-probe', surface: resolved.target.surface, clock }) : null;
  const baseClient = new ServiceClient({ target: resolved.target, logger: io.logger });
  const client = recorder ? baseClient.derive({ wrapFetch: (inner) => recorder.recordingFetch(inner) }) : baseClient;
  const controller = new SessionController({
    client,
    clock,
    logger: io.logger,
    // The wire report watches the socket before conn_init (unbilled), then sends it: see wire-report.ts.
    ...(recorder ? { transportFactory: recorder.recordingTransports(wsTransportFactory), awaitRtcReady: true, rtcReadyTimeoutMs: WIRE_WATCH_MS + 30_000 } : {}),
  });
  let watchTimer: ReturnType<Clock['setTimeout']> | null = null;
  const clearWatch = () => {
    if (watchTimer !== null) clock.clearTimeout(watchTimer);
    watchTimer = null;
  };
  if (recorder) {
    recorder.addSecrets(resolved.target.surface === 'direct' ? resolved.target.apiKey : null, options.persona, options.image);
    const line = costLine(options.holdSeconds);
    if (options.json) io.stderr(`probe: ${line}\n`);
    else say(line);
    await recordErrorAnswers(baseClient, recorder);
  }
  const abort = new AbortController();
  let interruptedBy: StopSignal | null = null;
  let heldFully = false;
  let holdTimer: ReturnType<Clock['setTimeout']> | null = null;

  const clearHold = () => {
    if (holdTimer !== null) clock.clearTimeout(holdTimer);
    holdTimer = null;
  };

  const unsubscribeEvents = controller.onEvent((event: SessionEvent) => {
    if (event.type === 'warning') {
      if (options.json) io.logger.warn(event.message);
      else say(`warning: ${event.message}`);
      return;
    }
    if (event.type === 'credentials') {
      if (recorder) {
        say(`created session ${event.liveId} (${event.callMode}, at most ${event.liveDurationS} s); watching the control socket for ${WIRE_WATCH_MS / 1000} s before conn_init`);
        watchTimer = clock.setTimeout(() => {
          watchTimer = null;
          controller.rtcReady(event.liveId);
        }, WIRE_WATCH_MS);
        return;
      }
      say(`created session ${event.liveId} (${event.callMode}, at most ${event.liveDurationS} s, RTC channel ${event.rtc.channel_id}); opened the control socket, sent conn_init`);
      return;
    }
    if (event.type !== 'state') return;
    const line = describeState(event.state, options.holdSeconds, clock.now());
    if (line) say(line);
    if (event.state.phase === 'live' && event.previous !== 'reconnecting' && holdTimer === null && !heldFully) {
      holdTimer = clock.setTimeout(() => {
        holdTimer = null;
        heldFully = true;
        say(`held ${options.holdSeconds} s: hanging up (user_end)`);
        void controller.hangup('user_end');
      }, options.holdSeconds * 1000);
    }
    if (event.state.phase === 'ending' || event.state.phase === 'ended' || event.state.phase === 'failed') {
      clearHold();
      clearWatch();
    }
  });

  const unsubscribeSignals = io.onSignal((signal) => {
    if (interruptedBy) {
      io.stderr(`probe: ${signal} again; still hanging up the session, please wait.\n`);
      return;
    }
    interruptedBy = signal;
    clearHold();
    clearWatch();
    io.logger.warn(signal === 'fatal' ? 'unexpected error: ending the session' : `${signal} received: ending the session`);
    abort.abort(new AvatarError('cancelled', signal === 'fatal' ? 'Stopped by an unexpected error.' : `Interrupted by ${signal}.`));
    void controller.hangup('user_end');
  });

  say(`creating ${options.mode === 'audio' ? 'an audio' : 'a video'} session on ${resolved.label}, moderation ${options.moderation ?? 'not sent (the service\'s default)'}`);
  let terminal: TerminalState;
  try {
    terminal = await controller.start(
      {
        callMode: options.mode,
        avatar: { persona: options.persona, image: options.image, name: options.name, voice: options.voice },
        moderation: options.moderation,
        extraMotion: options.extraMotion,
      },
      { signal: abort.signal },
    );
  } catch (err) {
    terminal = { phase: 'failed', liveId: null, error: toAvatarError(err).toInfo(), summary: null };
  } finally {
    clearHold();
    clearWatch();
    unsubscribeEvents();
    unsubscribeSignals();
    await controller.dispose();
    await resolved.emulator?.close();
  }

  const summary = terminal.phase === 'ended' ? terminal.summary : terminal.summary;
  const succeeded =
    terminal.phase === 'ended' &&
    interruptedBy === null &&
    heldFully &&
    summary !== null &&
    summary.wentLive &&
    summary.hangupReason === 'user_end' &&
    summary.endedBy === 'client';

  let error: ErrorInfo | null = null;
  if (!succeeded) {
    if (interruptedBy === 'fatal') error = { code: 'internal', message: 'An unexpected error stopped the probe; the session was hung up.' };
    else if (interruptedBy) error = { code: 'cancelled', message: `Interrupted by ${interruptedBy}; the session was hung up.` };
    else if (terminal.phase === 'failed') error = terminal.error;
    else error = { code: 'internal', message: describeEnd(summary) };
  }

  if (summary) {
    if (options.json) io.stdout(JSON.stringify(toReport(summary, error)) + '\n');
    else printHumanSummary(summary, say);
  }
  if (error) io.stderr(`probe: ${describeError(error)}\n`);
  if (recorder && options.wireReport) {
    if (!recorder.report().socket.ack) recorder.note('conn_init_ack: not seen (the call did not get that far)');
    const report = recorder.report();
    try {
      await writeWireReport(options.wireReport, report);
      if (options.json) io.stderr(`probe: ${describeWireReport(options.wireReport, report)}\n`);
      else say(describeWireReport(options.wireReport, report));
    } catch (err) {
      io.stderr(`probe: could not write the wire report to ${options.wireReport} (${(err as { code?: string }).code ?? toAvatarError(err).message})\n`);
      return EXIT_FAILED;
    }
  }

  if (succeeded) return EXIT_OK;
  if (interruptedBy === 'SIGINT') return EXIT_SIGINT;
  if (interruptedBy === 'SIGTERM') return EXIT_SIGTERM;
  return EXIT_FAILED;
}

function describeState(state: SessionState, holdSeconds: number, nowMs: number): string | null {
  switch (state.phase) {
    case 'idle':
    case 'creating':
    case 'held': // the probe never holds a session
      return null;
    case 'connecting':
      // Attempt 1 is announced with the credentials (the controller emits them right after this state).
      return state.attempt === 1 ? null : `control socket attempt ${state.attempt}; sent conn_init`;
    case 'warming':
      return `avatar not ready yet (NOT_READY #${state.notReadyRetries}); retrying in ${(state.retryInMs / 1000).toFixed(0)} s`;
    case 'live':
      return `live: the avatar is in the room and billing runs (holding ${holdSeconds} s, session ends by itself in ${Math.round((state.endsAtMs - nowMs) / 1000)} s)`;
    case 'reconnecting':
      return `control socket lost; reconnecting (attempt ${state.attempt})`;
    case 'ending':
      return `ending (${state.reason})`;
    case 'ended':
    case 'failed':
      return null;
  }
}

function printHumanSummary(summary: SessionSummary, say: (line: string) => void): void {
  say(describeEnd(summary));
  const billing =
    summary.billedSeconds === null
      ? 'billing figures not available'
      : `billed ${summary.billedSeconds} s, ${summary.creditsCost ?? '?'} credits`;
  say(`session ${summary.liveId}: final status ${summary.finalStatus ?? 'unknown'}; ${billing}; ` +
    `${summary.notReadyRetries} NOT_READY retr${summary.notReadyRetries === 1 ? 'y' : 'ies'}, ${summary.reconnects} reconnect${summary.reconnects === 1 ? '' : 's'}`);
}
