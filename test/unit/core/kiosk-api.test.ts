/**
 * `window.kiosk` as every transport builds it from the contract's shape: each method sends on its own
 * channel exactly the arguments the shape allows (none, the given one, or `whenOmitted`), returns what the
 * transport answers, and only the session group carries `onEvent`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildKioskApi, type ApiShape } from '../../../electron/core/kiosk-api.ts';

const SHAPE: ApiShape = {
  session: {
    start: { channel: 'kiosk:session:start', arg: 'required' },
    end: { channel: 'kiosk:session:end', arg: 'none' },
  },
  settings: {
    get: { channel: 'kiosk:settings:get', arg: 'optional', whenOmitted: { scope: 'all' } },
    save: { channel: 'kiosk:settings:save', arg: 'optional' },
  },
};

type Method = (arg?: unknown) => Promise<unknown>;
type TestApi = Record<string, Record<string, Method>>;

/** An API over a transport that records each call's exact argument list and answers with it. */
function build() {
  const calls: unknown[][] = [];
  const onEvent = (_listener: (event: string) => void) => () => {};
  const api = buildKioskApi<TestApi, string>(
    SHAPE,
    async (...args: unknown[]) => {
      calls.push(args);
      return { ok: true, value: args.length };
    },
    onEvent,
  );
  return { api, calls, onEvent };
}

describe('buildKioskApi', () => {
  it('sends a required argument as given, and returns the transport\'s answer', async () => {
    const { api, calls } = build();
    assert.deepEqual(await api.session!.start!({ callMode: 'video' }), { ok: true, value: 2 });
    assert.deepEqual(calls, [['kiosk:session:start', { callMode: 'video' }]]);
  });

  it('sends nothing but the channel for a method without an argument, even when one is passed', async () => {
    const { api, calls } = build();
    assert.deepEqual(await api.session!.end!(), { ok: true, value: 1 });
    await api.session!.end!('stray');
    assert.deepEqual(calls, [['kiosk:session:end'], ['kiosk:session:end']]);
  });

  it('sends whenOmitted for an omitted optional argument, the argument itself when given (null included)', async () => {
    const { api, calls } = build();
    await api.settings!.get!();
    await api.settings!.get!({ scope: 'call' });
    await api.settings!.get!(null);
    assert.deepEqual(calls, [
      ['kiosk:settings:get', { scope: 'all' }],
      ['kiosk:settings:get', { scope: 'call' }],
      ['kiosk:settings:get', null],
    ]);
  });

  it('sends only the channel for an omitted optional argument without whenOmitted', async () => {
    const { api, calls } = build();
    await api.settings!.save!();
    await api.settings!.save!({ volume: 3 });
    assert.deepEqual(calls, [['kiosk:settings:save'], ['kiosk:settings:save', { volume: 3 }]]);
  });

  it('gives the session group, and only it, the event subscription', () => {
    const { api, onEvent } = build();
    assert.equal((api.session as Record<string, unknown>).onEvent, onEvent);
    assert.equal('onEvent' in api.settings!, false);
    assert.deepEqual(Object.keys(api), ['session', 'settings']);
    assert.deepEqual(Object.keys(api.settings!), ['get', 'save']);
  });

  it('cannot be changed by the page', () => {
    const { api } = build();
    assert.equal(Object.isFrozen(api), true);
    assert.equal(Object.isFrozen(api.session), true);
  });
});
