/**
 * Human wording for the service's hangup reasons (spec §6 table), shared by the CLI and the UI.
 */
import type { HangupReason } from './protocol.ts';

export const HANGUP_REASON_TEXT: Record<string, string> = {
  user_end: 'the call was ended by the user',
  timeout: 'the session reached its time limit',
  audit_violation: 'the content-safety system ended the call',
  credit_insufficient: 'the account ran out of credits',
  sip_closed: 'the SIP or provider side closed the call',
  provider_closed: 'the provider closed the call',
  sip_reconnect_timeout: 'the SIP link dropped and did not come back in time',
  client_reconnect_timeout: 'this app lost its connection and did not come back in time',
  prepared_sip_disconnected: 'the SIP link dropped before the avatar was ready',
  owner_taken_over: 'the service moved the session to another node (internal)',
  owner_lease_lost: 'the service lost the session (internal)',
  ai_output_closed: 'the avatar\'s output channel closed (internal)',
  external: 'the service closed the call (broadcast close)',
};

export function describeHangupReason(reason: HangupReason | null | undefined): string {
  if (!reason) return 'the call ended';
  return HANGUP_REASON_TEXT[reason] ?? `the service ended the call (${reason})`;
}
