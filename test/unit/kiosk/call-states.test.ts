/**
 * A call's state as the renderer is shown it (electron/kiosk/call-states.ts): the venue's maximum call
 * length on the live countdown, and the words a visitor reads when a media problem ended the call.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MEDIA_ERROR_KINDS } from '../../../electron/contract.ts';
import type { SessionState } from '../../../electron/core/session-types.ts';
import { capCallLength, mediaFailureInfo } from '../../../electron/kiosk/call-states.ts';

describe('the venue’s maximum call length caps the live countdown', () => {
  const live = { phase: 'live' as const, liveId: 'L', sinceMs: 1_000, endsAtMs: 601_000 };

  it('0 (or no) maximum call length means no cap', () => {
    assert.deepEqual(capCallLength(live, 0), live);
    assert.deepEqual(capCallLength({ ...live, phase: 'reconnecting', attempt: 2 } as SessionState, 0), { ...live, phase: 'reconnecting', attempt: 2 });
  });

  it('a cap exactly at the service’s own end leaves the countdown as it is; one second sooner moves it', () => {
    assert.deepEqual(capCallLength(live, 600), live);
    assert.deepEqual(capCallLength(live, 599), { ...live, endsAtMs: 600_000 });
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
