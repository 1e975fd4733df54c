/**
 * A call's state as the renderer is shown it (electron/kiosk/call-states.ts): the venue's maximum call
 * length on the live countdown, and the words a visitor reads when a media problem ended the call.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_ERROR_KINDS } from '../../../electron/contract.ts';
import type { SessionState } from '../../../electron/core/session-types.ts';
import { sessionSummary } from '../../helpers/metrics-source.ts';
import { asMediaFailure, capCallLength, isTerminalState, mediaFailureInfo } from '../../../electron/kiosk/call-states.ts';

describe('the venue’s maximum call length caps the live countdown', () => {
  const live = { phase: 'live' as const, liveId: 'L', sinceMs: 1_000, endsAtMs: 601_000 };

  it('0 (or no) maximum call length means no cap', () => {
    assert.deepEqual(capCallLength(live, 0), live);
    assert.deepEqual(capCallLength({ ...live, phase: 'reconnecting', attempt: 2 } as SessionState, 0), { ...live, phase: 'reconnecting', attempt: 2 });
  });

  it('a cap exactly at the service’s own end leaves the countdown as it is; one second sooner moves it', () => {
    // The very state, not a copy: nothing was capped.
    assert.equal(capCallLength(live, 600), live);
    assert.deepEqual(capCallLength(live, 599), { ...live, endsAtMs: 600_000 });
  });

  it('a state without a countdown passes through whatever the maximum', () => {
    const warming: SessionState = { phase: 'warming', liveId: 'L', notReadyRetries: 1, retryInMs: 500, retryAtMs: 2_000 };
    assert.equal(capCallLength(warming, 1), warming);
  });
});

describe('a media problem ends the call with words for the visitor', () => {
  it('maps device problems to media_unavailable and RTC problems to rtc_failed, with a human message', () => {
    for (const kind of MEDIA_ERROR_KINDS) {
      const info = mediaFailureInfo(kind);
      const expected = ['microphone_denied', 'camera_denied', 'device_missing'].includes(kind) ? 'media_unavailable' : 'rtc_failed';
      assert.equal(info.code, expected, kind);
      assert.match(info.message, /(call was ended|ended the call|so it was ended)\. /);
    }
  });
});

describe('a media problem re-expresses the state the call ended in', () => {
  const summary = sessionSummary({ liveId: 'L' });
  const error = mediaFailureInfo('camera_denied');

  it('an ended call becomes a failure with the media words, its summary kept', () => {
    assert.deepEqual(asMediaFailure({ phase: 'ended', liveId: 'L', summary }, error), { phase: 'failed', liveId: 'L', error, summary });
  });

  it('a call that failed already takes the media words instead of its own', () => {
    const failed = { phase: 'failed' as const, liveId: null, error: { code: 'network' as const, message: 'lost' }, summary: null };
    assert.deepEqual(asMediaFailure(failed, error), { phase: 'failed', liveId: null, error, summary: null });
  });

  it('only ended and failed are states a call ends in', () => {
    const states: SessionState[] = [
      { phase: 'idle' },
      { phase: 'ending', liveId: 'L', reason: 'user_end' },
      { phase: 'live', liveId: 'L', sinceMs: 0, endsAtMs: 1 },
      { phase: 'ended', liveId: 'L', summary },
      { phase: 'failed', liveId: null, error, summary: null },
    ];
    assert.deepEqual(states.filter(isTerminalState).map((s) => s.phase), ['ended', 'failed']);
  });
});
