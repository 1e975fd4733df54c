/**
 * What a person reads when a call ends: one sentence per hangup reason of the spec's §6 table, a plain
 * "the call ended" when no reason came, and a reason the table does not know named as it came.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HANGUP_REASON_TEXT, describeHangupReason } from '../../../electron/core/messages.ts';
import { HANGUP_REASONS } from '../../../electron/core/protocol.ts';

describe('describeHangupReason', () => {
  // The sentences come from a table in messages.ts; copying that table here would only prove it equals
  // itself. What a person relies on: every reason the spec lists has its own plain words, fit to follow
  // "ended by the service: " in the CLI's timeline, and the reasons the spec calls internal say so.
  it('words each reason of the spec §6 table in a clause of its own, in plain words rather than its code', () => {
    const said = HANGUP_REASONS.map((reason) => describeHangupReason(reason));
    for (const [i, reason] of HANGUP_REASONS.entries()) {
      assert.match(said[i]!, /^[a-z][A-Za-z' ()-]*[a-z)]$/, `${reason}: a clause in words, no code, no full stop`);
      assert.notEqual(said[i], `the service ended the call (${reason})`, `${reason} is not left to the fallback`);
    }
    assert.equal(new Set(said).size, HANGUP_REASONS.length, 'no two reasons worded alike');
    assert.deepEqual(
      HANGUP_REASONS.filter((reason) => describeHangupReason(reason).endsWith(' (internal)')),
      ['owner_taken_over', 'owner_lease_lost', 'ai_output_closed'],
      'exactly the reasons the spec marks "Internal" are said to be internal',
    );
    // The two after which the kiosk does not reconnect (spec §6 rule 6): staff must read the cause plainly.
    assert.equal(describeHangupReason('credit_insufficient'), 'the account ran out of credits');
    assert.equal(describeHangupReason('audit_violation'), 'the content-safety system ended the call');
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
