/**
 * SessionController: a listener that throws must not take the session (or the other listeners) down with
 * it; the operator reads that it threw, and why. In-memory transports and a FakeClock (session-world.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SessionEvent } from '../../../electron/core/session-types.ts';
import { ACK_OK, world } from '../../helpers/session-world.ts';

describe('SessionController: event listeners', () => {
  it('a throwing listener is logged as an error with its message; the others and the session carry on', async () => {
    const { controller, log, startAcked } = world({ liveDurationS: 600 });
    const failure = new Error('the UI broke');
    controller.onEvent((e) => {
      if (e.type === 'credentials') throw failure;
    });
    const seen: SessionEvent['type'][] = [];
    controller.onEvent((e) => seen.push(e.type));
    const { result } = await startAcked();
    assert.equal(controller.state.phase, 'live');
    void controller.hangup();
    assert.equal((await result).phase, 'ended');
    assert.deepEqual(seen, ['state', 'state', 'credentials', 'state', 'state', 'state']);
    assert.deepEqual(
      log.lines.filter((l) => l.level === 'error'),
      [{ level: 'error', message: 'session: an event listener threw', data: { error: String(failure) } }],
    );
    await controller.dispose();
  });

  it('emits a state only when it changed, even when a figure in it is not a number', async () => {
    // live_duration NaN (an injected client is not schema-checked) makes endsAtMs NaN, which is not equal
    // to itself: the unchanged reconnecting state at the retry must still not be emitted twice.
    const h = world({ liveDurationS: Number.NaN, controller: { liveReconnectPolicy: { nextDelayMs: () => 500 } } });
    h.serverStatus = 'on_live';
    const { controller, clock, transports } = h;
    const phases: string[] = [];
    controller.onEvent((e) => void (e.type === 'state' && phases.push(e.state.phase)));
    await h.startAcked();
    transports.last.serverClose(1006);
    await clock.advance(500);
    assert.equal(transports.all.length, 2);
    transports.last.open();
    transports.last.receive(ACK_OK);
    assert.deepEqual(phases, ['creating', 'connecting', 'live', 'reconnecting', 'live']);
    await controller.dispose();
  });
});
