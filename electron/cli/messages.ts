/**
 * One-line human descriptions for the CLI's timeline and error line.
 */
import type { ErrorInfo } from '../core/errors.ts';
import { describeHangupReason } from '../core/messages.ts';
import { HANGUP_REASONS } from '../core/protocol.ts';
import type { SessionSummary } from '../core/session-types.ts';

export function describeEnd(summary: SessionSummary | null): string {
  if (!summary) return 'no session was created';
  if (!summary.wentLive) return `the session ended before the avatar went live (${describeHangupReason(summary.hangupReason)})`;
  switch (summary.endedBy) {
    case 'client':
      return 'ended: this client hung up (user_end)';
    case 'server':
      // The spec counts fourteen reasons and lists thirteen: an unlisted one is named as the service sent it.
      if (summary.hangupReason && !(HANGUP_REASONS as readonly string[]).includes(summary.hangupReason)) {
        return `ended by the service for a reason the spec does not list (${summary.hangupReason})`;
      }
      return `ended by the service: ${describeHangupReason(summary.hangupReason)} (${summary.hangupReason})`;
    case 'limit':
      return 'ended: the session reached live_duration and the client hung up';
    case 'network':
      return 'ended: the control connection was lost';
    default:
      return `ended (${describeHangupReason(summary.hangupReason)})`;
  }
}

export function describeError(error: ErrorInfo): string {
  return `${forCli(error.message)} [${error.code}]`;
}

/** The core's error sentences are written for the kiosk's operator ("check the key in the settings");
 *  on the CLI the key comes from the environment or a key file, so the advice names those. */
export function forCli(message: string): string {
  return message.replace(/Check the key in the settings\.$/, `Check the key you gave (AVATAR_API_KEY, or the file of --api-key-file): it must be the key issued for this service URL.`);
}
