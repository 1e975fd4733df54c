/**
 * The session controller's two small helpers, on their own: its named timers (one pending per name, each
 * forgotten as it fires) and how it tells a new state from the one it already announced.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sameState } from '../../../electron/core/session-read-back.ts';
import { TimerSlots } from '../../../electron/core/timer-slots.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';

describe('TimerSlots', () => {
  it('one pending timer per name: has() while it waits, not once it fired or was cancelled', async () => {
    const clock = new FakeClock(0);
    const slots = new TimerSlots<'a' | 'b'>(clock);
    const fired: string[] = [];
    slots.set('a', 100, () => fired.push('a'));
    slots.set('b', 50, () => fired.push('b'));
    assert.deepEqual([slots.has('a'), slots.has('b')], [true, true]);
    slots.cancel('b');
    assert.equal(slots.has('b'), false);
    await clock.advance(100);
    assert.deepEqual(fired, ['a']);
    assert.equal(slots.has('a'), false);
  });

  it('setting a name again replaces its timer; a negative delay counts as 0; clearAll leaves nothing', async () => {
    const clock = new FakeClock(0);
    const slots = new TimerSlots<'a' | 'b'>(clock);
    const fired: string[] = [];
    slots.set('a', 100, () => fired.push('first'));
    slots.set('a', 200, () => fired.push('second'));
    assert.equal(clock.pendingCount, 1);
    slots.set('b', -5, () => fired.push('b'));
    await clock.advance(0);
    assert.deepEqual(fired, ['b']);
    await clock.advance(200);
    assert.deepEqual(fired, ['b', 'second']);
    slots.set('a', 10, () => fired.push('late'));
    slots.set('b', 10, () => fired.push('late'));
    slots.clearAll();
    assert.deepEqual([slots.has('a'), slots.has('b'), clock.pendingCount], [false, false, 0]);
    await clock.advance(50);
    assert.deepEqual(fired, ['b', 'second']);
  });
});

describe('sameState', () => {
  it('two states with the same fields are the same; a field more, less or different is a new state', () => {
    assert.equal(sameState({ phase: 'idle' }, { phase: 'idle' }), true);
    const held = { phase: 'held', liveId: 'L1', socketOpen: false, expiresAtMs: 5 } as const;
    assert.equal(sameState(held, { ...held }), true);
    assert.equal(sameState(held, { ...held, socketOpen: true }), false);
    assert.equal(sameState({ phase: 'creating' }, { phase: 'idle' }), false);
    // Same values on the first one's keys, but the second has one more.
    assert.equal(sameState({ phase: 'creating' } as never, { phase: 'creating', liveId: 'L1' } as never), false);
    assert.equal(sameState({ phase: 'creating', liveId: 'L1' } as never, { phase: 'creating' } as never), false);
  });
});
