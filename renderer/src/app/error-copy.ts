/**
 * What a visitor reads when a call cannot start or ends badly: one human title and sentence per cause,
 * and a short code for staff. Never a stack trace or a raw message dump. Pure, so it is unit-testable.
 */
import type { ErrorInfo, MediaErrorKind } from '../../../electron/contract.ts';

export type ErrorCause = 'unauthorized' | 'credits' | 'content' | 'avatar' | 'media' | 'network' | 'engine' | 'expired' | 'generic';

/** The catalogue entry (`error.<copy>.title` / `.body`) a view shows in the visitor's language. */
export type ErrorCopyKey = ErrorCause | 'camera' | 'engineMissing' | 'networkBlocked' | 'noBridge';

export interface ErrorView {
  cause: ErrorCause;
  /** Which message the screen shows, translated; `title`/`body` are its English text (logs, tests). */
  copy: ErrorCopyKey;
  title: string;
  body: string;
  /** For staff: the error code or hangup reason, shown small. */
  code: string | null;
}

const COPY: Record<ErrorCause, { title: string; body: string }> = {
  unauthorized: {
    title: 'This kiosk isn’t set up yet',
    body: 'Its service key is missing or was not accepted. Please ask a member of staff for help.',
  },
  credits: {
    title: 'We’re out of conversation time',
    body: 'This kiosk has used up its credits for now. A member of staff can top them up.',
  },
  content: {
    title: 'This conversation was ended',
    body: 'Our content-safety system closed the call. You’re welcome to start a new conversation.',
  },
  avatar: {
    title: 'The avatar couldn’t get ready',
    body: 'Something went wrong while waking the avatar up. Please try again in a moment.',
  },
  media: {
    title: 'We can’t hear you',
    body: 'The microphone isn’t available or access to it was denied. Please ask a member of staff to check it.',
  },
  network: {
    title: 'The connection was lost',
    body: 'The kiosk couldn’t reach the avatar service. Please try again in a moment.',
  },
  engine: {
    title: 'The call couldn’t connect',
    body: 'The audio and video connection failed. Please try again in a moment.',
  },
  expired: {
    title: 'This conversation has expired',
    body: 'Please start a new conversation.',
  },
  generic: {
    title: 'Something went wrong',
    body: 'Please try again. If it keeps happening, a member of staff can help.',
  },
};

/** The view for a failure reported by main (SessionState `failed`, or a failed IPC call). */
export function errorViewFor(error: ErrorInfo, hangupReason?: string | null): ErrorView {
  const reasonCause = hangupReason ? causeForHangupReason(hangupReason) : null;
  const cause = reasonCause ?? causeForCode(error.code);
  const view: ErrorView = { cause, copy: cause, ...COPY[cause], code: hangupReason && reasonCause ? hangupReason : error.code };
  if (cause === 'media' && /camera/i.test(error.message)) {
    view.copy = 'camera';
    view.title = 'We can’t see you';
    view.body = 'The camera isn’t available or access to it was denied. Please ask a member of staff to check it.';
  }
  if (cause === 'engine' && /block/i.test(error.message)) Object.assign(view, NETWORK_BLOCKED);
  if (cause === 'engine' && /not installed|not available/i.test(error.message)) {
    view.copy = 'engineMissing';
    view.title = 'The call couldn’t connect';
    view.body = 'The audio and video engine is not available on this kiosk. Please ask a member of staff for help.';
  }
  return view;
}

/** Our RTC join failed before the call started (RTC first, then billing): nothing was charged. */
const NETWORK_BLOCKED = {
  copy: 'networkBlocked' as const,
  title: 'This network blocks video calls',
  body: 'The conversation couldn’t connect its sound and picture, so it was stopped before it began. Nothing was charged. Please ask a member of staff to check the network.',
};

/** The view for a renderer-side media failure (before main has answered). */
export function errorViewForMedia(kind: MediaErrorKind, message: string): ErrorView {
  switch (kind) {
    case 'microphone_denied':
      return { cause: 'media', copy: 'media', ...COPY.media, code: kind };
    case 'camera_denied':
      return { cause: 'media', copy: 'camera', title: 'We can’t see you', body: 'The camera isn’t available or access to it was denied. Please ask a member of staff to check it.', code: kind };
    case 'device_missing':
      return {
        cause: 'media',
        copy: /camera/i.test(message) ? 'camera' : 'media',
        title: /camera/i.test(message) ? 'We can’t see you' : 'We can’t hear you',
        body: `${message} Please ask a member of staff to check it.`,
        code: kind,
      };
    case 'engine_unavailable':
      return { cause: 'engine', copy: 'engineMissing', title: 'The call couldn’t connect', body: `${message} Please ask a member of staff for help.`, code: kind };
    case 'rtc_join_failed':
      return { cause: 'engine', ...NETWORK_BLOCKED, code: kind };
    case 'rtc_disconnected':
      return { cause: 'engine', copy: 'engine', ...COPY.engine, code: kind };
    case 'other':
      return { cause: 'generic', copy: 'generic', ...COPY.generic, code: kind };
  }
}

/** Hangup reasons that are the visitor-facing cause of an end (spec §6). */
export function causeForHangupReason(reason: string): ErrorCause | null {
  switch (reason) {
    case 'credit_insufficient':
      return 'credits';
    case 'audit_violation':
      return 'content';
    default:
      return null;
  }
}

function causeForCode(code: ErrorInfo['code']): ErrorCause {
  switch (code) {
    case 'unauthorized':
    case 'forbidden':
    case 'invalid_config':
      return 'unauthorized';
    case 'insufficient_credits':
      return 'credits';
    case 'content_blocked':
      return 'content';
    case 'not_ready':
    case 'init_failed':
      return 'avatar';
    case 'media_unavailable':
      return 'media';
    case 'network':
    case 'connection_lost':
    case 'timeout':
      return 'network';
    case 'rtc_failed':
      return 'engine';
    case 'token_expired':
    case 'not_found':
      return 'expired';
    default:
      return 'generic';
  }
}
