/**
 * A call's state as the renderer is shown it, pure: the venue's maximum call length shortens the live
 * countdown, and a media problem the renderer reported becomes the call's end (the words a visitor reads).
 */
import type { MediaErrorKind, SessionState } from '../contract.ts';
import type { ErrorCode, ErrorInfo } from '../core/errors.ts';
import type { TerminalState } from '../core/session-controller-options.ts';

export type TerminalPhase = 'ended' | 'failed';

export function isTerminal(phase: SessionState['phase']): phase is TerminalPhase {
  return phase === 'ended' || phase === 'failed';
}

/** A state a call ends in: it has the call's summary (or null), which a media failure keeps. */
export function isTerminalState(state: SessionState): state is TerminalState {
  return isTerminal(state.phase);
}

export function liveIdOf(state: SessionState): string | null {
  return 'liveId' in state ? state.liveId : null;
}

/** The venue's maximum call length shortens the live state's countdown (`endsAtMs`). */
export function capCallLength(state: SessionState, maxCallSeconds: number | undefined): SessionState {
  if (!maxCallSeconds || (state.phase !== 'live' && state.phase !== 'reconnecting')) return state;
  const cap = state.sinceMs + maxCallSeconds * 1000;
  return cap < state.endsAtMs ? { ...state, endsAtMs: cap } : state;
}

const MEDIA_MESSAGES: Record<MediaErrorKind, { code: ErrorCode; message: string }> = {
  microphone_denied: { code: 'media_unavailable', message: 'The microphone could not be used, so the call was ended. Please ask staff to check the microphone.' },
  camera_denied: { code: 'media_unavailable', message: 'The camera could not be used, so the call was ended. Please ask staff to check the camera.' },
  device_missing: { code: 'media_unavailable', message: 'No microphone or camera was found, so the call was ended. Please ask staff for help.' },
  rtc_join_failed: {
    code: 'rtc_failed',
    message: 'The call could not join its audio/video channel: this network seems to block video calls, so the call was ended. Nothing was charged.',
  },
  rtc_disconnected: { code: 'rtc_failed', message: 'The audio/video connection was lost, so the call was ended. Please try again.' },
  engine_unavailable: { code: 'rtc_failed', message: 'The audio/video engine is not available on this kiosk, so the call was ended. Please ask staff for help.' },
  other: { code: 'rtc_failed', message: 'A media problem ended the call. Please try again.' },
};

export function mediaFailureInfo(kind: MediaErrorKind): ErrorInfo {
  return { ...MEDIA_MESSAGES[kind] };
}

/** A terminal state re-expressed as the media failure that caused the hangup (summary kept). */
export function asMediaFailure(state: TerminalState, error: ErrorInfo): SessionState {
  return { phase: 'failed', liveId: state.liveId, error, summary: state.summary };
}
