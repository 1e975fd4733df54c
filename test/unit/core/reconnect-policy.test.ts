/**
 * The reconnect policies (reconnect-policy.ts): NOT_READY's 2, 4 and 8 s within the warm-up budget, the
 * faster table for a drop while live within its grace budget, the table-driven backoff they are built
 * from, and `classify`, which decides whether a policy is asked at all (fatal or retry).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  backoffPolicy,
  classify,
  createLiveReconnectPolicy,
  createNotReadyPolicy,
  liveReconnectPolicy,
  notReadyPolicy,
  type ReconnectPolicy,
} from '../../../electron/core/reconnect-policy.ts';
import { AvatarError } from '../../../electron/core/errors.ts';

/** Delays the policy yields when each attempt follows right after the previous delay. */
function schedule(policy: ReconnectPolicy, maxAttempts = 100): number[] {
  const delays: number[] = [];
  let elapsedMs = 0;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const delay = policy.nextDelayMs({ attempt, elapsedMs });
    if (delay === null) break;
    delays.push(delay);
    elapsedMs += delay;
  }
  return delays;
}

describe('notReadyPolicy', () => {
  it('waits 2, 4 and 8 seconds, then keeps 8 seconds while the 60 s budget allows (54 s in all), then gives up', () => {
    assert.deepEqual(schedule(notReadyPolicy), [2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000]);
  });

  it('gives up when the next wait would end past the budget', () => {
    assert.equal(notReadyPolicy.nextDelayMs({ attempt: 1, elapsedMs: 58_000 }), 2000);
    assert.equal(notReadyPolicy.nextDelayMs({ attempt: 1, elapsedMs: 58_001 }), null);
    assert.equal(notReadyPolicy.nextDelayMs({ attempt: 4, elapsedMs: 52_000 }), 8000);
    assert.equal(notReadyPolicy.nextDelayMs({ attempt: 4, elapsedMs: 52_001 }), null);
  });

  it('takes a custom budget', () => {
    assert.deepEqual(schedule(createNotReadyPolicy(14_000)), [2000, 4000, 8000]);
    assert.deepEqual(schedule(createNotReadyPolicy(13_999)), [2000, 4000]);
  });
});

describe('liveReconnectPolicy', () => {
  it('retries at once, then after 250, 500, 1000 and 2000 ms, repeating 2000 ms within 10 s', () => {
    assert.deepEqual(schedule(liveReconnectPolicy), [0, 250, 500, 1000, 2000, 2000, 2000, 2000]);
  });

  it('gives up once the grace budget is spent', () => {
    assert.equal(liveReconnectPolicy.nextDelayMs({ attempt: 1, elapsedMs: 10_000 }), 0);
    assert.equal(liveReconnectPolicy.nextDelayMs({ attempt: 1, elapsedMs: 10_001 }), null);
    assert.deepEqual(schedule(createLiveReconnectPolicy(1_000)), [0, 250, 500]);
  });

  it('the live budget is the one given', () => {
    const policy = createLiveReconnectPolicy(1_000);
    assert.equal(policy.nextDelayMs({ attempt: 4, elapsedMs: 0 }), 1_000);
    assert.equal(policy.nextDelayMs({ attempt: 4, elapsedMs: 1 }), null);
  });
});

describe('backoffPolicy', () => {
  it('refuses an empty table with a message that says why', () => {
    assert.throws(() => backoffPolicy({ delaysMs: [], budgetMs: 1 }), RangeError);
    assert.throws(() => backoffPolicy({ delaysMs: [], budgetMs: 1 }), { name: 'RangeError', message: 'backoffPolicy needs at least one delay' });
  });

  it('treats attempt numbers below 1 as the first attempt', () => {
    assert.equal(backoffPolicy({ delaysMs: [7, 9], budgetMs: 100 }).nextDelayMs({ attempt: 0, elapsedMs: 0 }), 7);
  });
});

describe('classify', () => {
  it('says fatal for authentication, ownership, missing sessions, permanent init failure and no-reconnect hangups', () => {
    for (const signal of [
      'unauthorized',
      'forbidden',
      'not_found',
      'LIVE_CONN_INIT_FAILED',
      'credit_insufficient',
      'audit_violation',
      'token_expired',
      'insufficient_credits',
      'init_failed',
      'cancelled',
    ]) {
      assert.equal(classify(signal), 'fatal', signal);
    }
  });

  it('says fatal for a bad configuration and blocked content, as codes and as hangup reasons', () => {
    for (const signal of ['invalid_config', 'content_blocked', 'invalid_request', 'audit_violation', 'credit_insufficient']) {
      assert.equal(classify(signal), 'fatal', signal);
    }
  });

  it('reads the code of an AvatarError', () => {
    assert.equal(classify(new AvatarError('unauthorized', 'no')), 'fatal');
    assert.equal(classify(new AvatarError('network', 'blip')), 'retry');
  });

  it('says retry for network trouble, timeouts, server errors, NOT_READY and unknown things', () => {
    for (const signal of ['network', 'timeout', 'server', 'protocol', 'NOT_READY', 'connection_lost', 'something-new']) {
      assert.equal(classify(signal), 'retry', signal);
    }
    assert.equal(classify(new Error('x')), 'retry');
    assert.equal(classify(undefined), 'retry');
  });
});
