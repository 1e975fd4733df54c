/**
 * The channel registry (electron/kiosk/channels.ts), the one way a page's call reaches a handler: each owner
 * registers its groups once; an unknown channel, a group nobody registered, a locked staff panel (before the
 * argument is looked at), a kiosk still in its first-run setup and a bad argument are each refused with
 * their own message; a handler that throws answers a Result, never a rejection.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, ok, type Result } from '../../../electron/contract.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { createChannelRegistry, SETUP_PENDING_MESSAGE, STAFF_LOCKED_MESSAGE, type GroupHandlers, type StaffGate } from '../../../electron/kiosk/channels.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';

const refused = (code: string, message: string) => ({ ok: false, error: { code, message } });

/** A `session` group whose every method records what it was called with and answers `ok(null)`. */
function recordingSession(calls: Array<[string, unknown]>): GroupHandlers<'session'> {
  const record = (method: string) => (args: unknown) => (calls.push([method, args]), ok(null as never));
  return {
    start: record('start'),
    hangup: record('hangup'),
    getState: record('getState'),
    setMuted: record('setMuted'),
    reportMediaError: record('reportMediaError'),
    rtcReady: record('rtcReady'),
    reportQuality: record('reportQuality'),
    reportMilestone: record('reportMilestone'),
  } as GroupHandlers<'session'>;
}

/** A `staff` group with only `logTail` (what the tests call); the rest are never reached. */
function staffWithLogTail(calls: string[]): GroupHandlers<'staff'> {
  return { logTail: () => (calls.push('logTail'), ok({ lines: ['a'] })) } as unknown as GroupHandlers<'staff'>;
}

describe('a call to a channel nobody can answer', () => {
  it('an unknown channel is refused, its name cut to 80 characters', async () => {
    const registry = createChannelRegistry();
    assert.deepEqual(await registry.dispatch('kiosk:shell:exec', { cmd: 'id' }), refused('invalid_request', 'Unknown channel: kiosk:shell:exec.'));
    const long = `kiosk:${'x'.repeat(200)}`;
    assert.deepEqual(await registry.dispatch(long, undefined), refused('invalid_request', `Unknown channel: ${long.slice(0, 80)}.`));
  });

  it('a channel of the contract whose group nobody registered is "not offered"', async () => {
    const registry = createChannelRegistry();
    assert.deepEqual(await registry.dispatch(CHANNELS.configGet, undefined), refused('invalid_request', 'This kiosk does not offer that operation.'));
  });
});

describe('the staff panel’s gate', () => {
  it('without a gate every staff channel is locked; the handler never runs', async () => {
    const registry = createChannelRegistry();
    const calls: string[] = [];
    registry.register('staff', staffWithLogTail(calls));
    assert.deepEqual(await registry.dispatch(CHANNELS.staffLogTail, undefined), refused('unauthorized', STAFF_LOCKED_MESSAGE));
    assert.deepEqual(calls, []);
  });

  it('is asked before the argument is looked at: a locked panel answers "locked" to a bad argument too; each call touches it once', async () => {
    const registry = createChannelRegistry();
    const calls: string[] = [];
    let unlocked = false;
    let touches = 0;
    registry.register('staff', staffWithLogTail(calls));
    registry.setGate({ touch: () => (touches++, unlocked) });
    assert.deepEqual(await registry.dispatch(CHANNELS.staffLogTail, { unexpected: true }), refused('unauthorized', STAFF_LOCKED_MESSAGE));
    unlocked = true;
    assert.deepEqual(await registry.dispatch(CHANNELS.staffLogTail, undefined), { ok: true, value: { lines: ['a'] } });
    assert.deepEqual(
      await registry.dispatch(CHANNELS.staffLogTail, { unexpected: true }),
      refused('invalid_request', 'Invalid arguments for kiosk:staff:log-tail: Unrecognized key: "unexpected".'),
      'unlocked: now the schema refuses it',
    );
    assert.deepEqual([touches, calls], [3, ['logTail']]);
  });

  it('visitor channels never ask the gate', async () => {
    const registry = createChannelRegistry();
    const calls: Array<[string, unknown]> = [];
    registry.register('session', recordingSession(calls));
    registry.setGate({ touch: () => assert.fail('a visitor channel asked the staff gate') });
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionSetMuted, { muted: true }), { ok: true, value: null });
    assert.deepEqual(calls, [['setMuted', { muted: true }]]);
  });
});

describe('a kiosk still in its first-run setup', () => {
  it('refuses a call, the attract report and a visitor step, and only those; once set up, all three go through', async () => {
    const registry = createChannelRegistry();
    const calls: Array<[string, unknown]> = [];
    let pending = true;
    const gate: StaffGate = { touch: () => false, setupPending: () => pending };
    registry.register('session', recordingSession(calls));
    registry.register('attract', { report: (args) => (calls.push(['report', args]), ok(undefined)), visitorStep: (args) => (calls.push(['visitorStep', args]), ok({ counted: true })) });
    registry.setGate(gate);
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionStart, {}), refused('invalid_request', SETUP_PENDING_MESSAGE));
    assert.deepEqual(await registry.dispatch(CHANNELS.attractReport, { showing: true, present: null }), refused('invalid_request', SETUP_PENDING_MESSAGE));
    assert.deepEqual(await registry.dispatch(CHANNELS.attractVisitorStep, { step: 'noticed' }), refused('invalid_request', SETUP_PENDING_MESSAGE));
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionHangup, undefined), { ok: true, value: null });
    assert.deepEqual(calls, [['hangup', undefined]]);
    pending = false;
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionStart, {}), { ok: true, value: null });
    assert.deepEqual(await registry.dispatch(CHANNELS.attractReport, { showing: true, present: null }), { ok: true, value: undefined });
    assert.deepEqual(await registry.dispatch(CHANNELS.attractVisitorStep, { step: 'noticed' }), { ok: true, value: { counted: true } });
    assert.deepEqual(calls.slice(1), [['start', {}], ['report', { showing: true, present: null }], ['visitorStep', { step: 'noticed' }]]);
  });
});

describe('the argument', () => {
  it('is checked with the channel’s schema: a bad one is refused naming the field, and the handler never runs', async () => {
    const registry = createChannelRegistry();
    const calls: Array<[string, unknown]> = [];
    registry.register('session', recordingSession(calls));
    const r = await registry.dispatch(CHANNELS.sessionSetMuted, { muted: 'yes' });
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error.message : '', /^Invalid arguments for kiosk:session:set-muted \(muted\): /);
    assert.equal(!r.ok && r.error.code, 'invalid_request');
    assert.deepEqual(calls, []);
  });

  it('the page fills an optional argument in (whenOmitted); here a tap with none is refused, a hangup with none goes through', async () => {
    const registry = createChannelRegistry();
    const calls: Array<[string, unknown]> = [];
    registry.register('session', recordingSession(calls));
    assert.deepEqual(
      await registry.dispatch(CHANNELS.sessionStart, undefined),
      refused('invalid_request', 'Invalid arguments for kiosk:session:start: Invalid input: expected object, received undefined.'),
    );
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionHangup, undefined), { ok: true, value: null });
    assert.deepEqual(calls, [['hangup', undefined]]);
  });
});

describe('a handler that throws', () => {
  it('answers a Result with the error’s code and message, and warns the operator (not for a refused PIN)', async () => {
    const logger = recordingLogger();
    const registry = createChannelRegistry({ logger });
    const session = recordingSession([]);
    session.rtcReady = () => {
      throw new AvatarError('network', 'the line dropped');
    };
    session.setMuted = async () => {
      throw new Error('plain error');
    };
    registry.register('session', session);
    registry.register('staff', {
      unlock: () => {
        throw new AvatarError('locked', 'Too many tries.');
      },
    } as unknown as GroupHandlers<'staff'>);
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionRtcReady, { liveId: 'L1' }), refused('network', 'the line dropped'));
    const plain = (await registry.dispatch(CHANNELS.sessionSetMuted, { muted: true })) as Result<unknown>;
    assert.equal(plain.ok, false);
    assert.equal(!plain.ok && plain.error.message, 'plain error');
    assert.deepEqual(await registry.dispatch(CHANNELS.staffUnlock, { pin: '123456' }), refused('locked', 'Too many tries.'));
    assert.deepEqual(
      logger.lines.map((l) => [l.level, l.message, l.data?.channel, l.data?.code]),
      [
        ['warn', 'IPC call failed', CHANNELS.sessionRtcReady, 'network'],
        ['warn', 'IPC call failed', CHANNELS.sessionSetMuted, plain.ok ? null : plain.error.code],
      ],
    );
  });
});

describe('a handler that refuses for want of the PIN', () => {
  it('answers unauthorized and warns nobody; another refusal is warned with its message', async () => {
    const logger = recordingLogger();
    const registry = createChannelRegistry({ logger });
    const session = recordingSession([]);
    session.hangup = () => {
      throw new AvatarError('unauthorized', 'Enter the PIN.');
    };
    session.getState = () => {
      throw new AvatarError('invalid_request', 'Not now.');
    };
    registry.register('session', session);
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionHangup, undefined), refused('unauthorized', 'Enter the PIN.'));
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionGetState, undefined), refused('invalid_request', 'Not now.'));
    assert.deepEqual(logger.lines, [{ level: 'warn', message: 'IPC call failed', data: { channel: CHANNELS.sessionGetState, code: 'invalid_request', message: 'Not now.' } }]);
  });
});

describe('registering', () => {
  it('a group or the gate registered twice is a wiring bug and throws; the first stays', async () => {
    const registry = createChannelRegistry();
    const calls: Array<[string, unknown]> = [];
    registry.register('session', recordingSession(calls));
    assert.throws(() => registry.register('session', recordingSession([])), { code: 'internal', message: 'The "session" channels are registered twice.' });
    registry.setGate({ touch: () => true });
    assert.throws(() => registry.setGate({ touch: () => false }), { code: 'internal', message: 'The staff gate is set twice.' });
    await registry.dispatch(CHANNELS.sessionHangup, undefined);
    assert.deepEqual(calls, [['hangup', undefined]]);
  });
});

describe('the channels: what the last measurement left alive', () => {
  it('the refusals say, in words, what to do', () => {
    assert.equal(STAFF_LOCKED_MESSAGE, 'The staff panel is locked. Enter the PIN.');
    assert.equal(SETUP_PENDING_MESSAGE, 'This kiosk is not set up yet: an installer must choose the staff PIN first.');
  });

  it('a gate that cannot say whether setup is pending lets a visitor\'s call through', async () => {
    const registry = createChannelRegistry();
    const calls: Array<[string, unknown]> = [];
    registry.register('session', recordingSession(calls));
    registry.setGate({ touch: () => true });
    assert.deepEqual(await registry.dispatch(CHANNELS.sessionStart, {}), { ok: true, value: null });
    assert.deepEqual(calls, [['start', {}]]);
  });
});
