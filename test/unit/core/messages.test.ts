/**
 * What a person reads when a call ends: one sentence per hangup reason of the spec's §6 table, a plain
 * "the call ended" when no reason came, and a reason the table does not know named as it came.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HANGUP_REASON_TEXT, describeHangupReason } from '../../../electron/core/messages.ts';
import { HANGUP_REASONS } from '../../../electron/core/protocol.ts';

describe('describeHangupReason', () => {
  it('gives the exact wording for each reason of the spec §6 table', () => {
    const expected: Record<(typeof HANGUP_REASONS)[number], string> = {
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
    assert.deepEqual(Object.fromEntries(HANGUP_REASONS.map((reason) => [reason, describeHangupReason(reason)])), expected);
    // The table covers exactly the known reasons: none missing, none invented.
    assert.deepEqual(Object.keys(HANGUP_REASON_TEXT).sort(), [...HANGUP_REASONS].sort());
  });

  it('says only that the call ended when no reason came', () => {
    for (const reason of [null, undefined, '']) assert.equal(describeHangupReason(reason), 'the call ended');
  });

  it('names a reason the table does not know, as the service sent it', () => {
    assert.equal(describeHangupReason('maintenance_window'), 'the service ended the call (maintenance_window)');
  });
});
