import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, ok, type Result } from '../../../electron/contract.ts';
import { handleIpc, registerIpc, type FrameLike, type InvokeEventLike, type IpcMainLike } from '../../../electron/main/ipc.ts';
import { APP_ORIGIN } from '../../../electron/main/page-policy.ts';

class FakeIpcMain implements IpcMainLike {
  readonly handlers = new Map<string, (event: InvokeEventLike, ...args: unknown[]) => unknown>();
  handle(channel: string, listener: (event: InvokeEventLike, ...args: unknown[]) => unknown): void {
    assert.ok(!this.handlers.has(channel), `registered twice: ${channel}`);
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
  invoke(channel: string, event: InvokeEventLike, ...args: unknown[]): Promise<Result<unknown>> {
    const h = this.handlers.get(channel);
    if (!h) return Promise.reject(new Error(`No handler registered for '${channel}'`));
    return Promise.resolve(h(event, ...args)) as Promise<Result<unknown>>;
  }
}

function setup() {
  const mainFrame: FrameLike = { url: `${APP_ORIGIN}/index.html` };
  const calls: { channel: string; arg: unknown }[] = [];
  const channels = {
    async dispatch(channel: string, arg: unknown): Promise<Result<unknown>> {
      calls.push({ channel, arg });
      return ok({ echoed: channel });
    },
  };
  let current: FrameLike | null = mainFrame;
  const ipc = new FakeIpcMain();
  const dispose = registerIpc(ipc, { channels, origin: APP_ORIGIN, getMainFrame: () => current });
  return {
    ipc,
    calls,
    mainFrame,
    dispose,
    setMainFrame(f: FrameLike | null) {
      current = f;
    },
  };
}

describe('registerIpc', () => {
  it('registers exactly the contract channels and removes them on dispose', () => {
    const s = setup();
    assert.deepEqual([...s.ipc.handlers.keys()].sort(), Object.values(CHANNELS).sort());
    s.dispose();
    assert.equal(s.ipc.handlers.size, 0);
  });

  it('dispatches a call from our main frame to the channel registry with its one argument', async () => {
    const s = setup();
    const r = await s.ipc.invoke(CHANNELS.sessionSetMuted, { senderFrame: s.mainFrame }, { muted: true });
    assert.deepEqual(r, { ok: true, value: { echoed: CHANNELS.sessionSetMuted } });
    assert.deepEqual(s.calls, [{ channel: CHANNELS.sessionSetMuted, arg: { muted: true } }]);
  });

  it('an unregistered channel has no handler at all (Electron rejects the invoke)', async () => {
    const s = setup();
    await assert.rejects(s.ipc.invoke('kiosk:debug:eval', { senderFrame: s.mainFrame }, 'x'), /No handler/);
    assert.equal(s.calls.length, 0);
  });
});

describe('handleIpc: the sender-frame check', () => {
  const cases: [string, (s: ReturnType<typeof setup>) => InvokeEventLike][] = [
    ['no sender frame (destroyed)', () => ({ senderFrame: null })],
    ['a subframe of our page', () => ({ senderFrame: { url: `${APP_ORIGIN}/index.html` } })],
    ['our main frame after navigating to another origin', (s) => {
      (s.mainFrame as { url: string }).url = 'https://evil.example.com/';
      return { senderFrame: s.mainFrame };
    }],
    ['our main frame showing a file:// page', (s) => {
      (s.mainFrame as { url: string }).url = 'file:///etc/passwd';
      return { senderFrame: s.mainFrame };
    }],
    ['a look-alike origin', (s) => {
      (s.mainFrame as { url: string }).url = 'app://kiosk.evil/index.html';
      return { senderFrame: s.mainFrame };
    }],
    ['a detached frame', () => ({ senderFrame: { url: `${APP_ORIGIN}/index.html`, detached: true } })],
  ];
  for (const [name, makeEvent] of cases) {
    it(`rejects ${name} with forbidden, before the registry sees it`, async () => {
      const s = setup();
      const r = await s.ipc.invoke(CHANNELS.configGet, makeEvent(s));
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.error.code, 'forbidden');
      assert.equal(s.calls.length, 0);
    });
  }

  it('rejects everything when the window is gone', async () => {
    const s = setup();
    const frame = s.mainFrame;
    s.setMainFrame(null);
    const r = await s.ipc.invoke(CHANNELS.sessionStart, { senderFrame: frame }, {});
    assert.equal(r.ok, false);
    assert.equal(s.calls.length, 0);
  });

  it('rejects more than one argument with invalid_request', async () => {
    const s = setup();
    const r = await s.ipc.invoke(CHANNELS.sessionStart, { senderFrame: s.mainFrame }, {}, { extra: 1 });
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.error.code, 'invalid_request');
    assert.equal(s.calls.length, 0);
  });

  it('turns a throwing registry into an internal Result (never a rejection)', async () => {
    const frame: FrameLike = { url: `${APP_ORIGIN}/` };
    const r = await handleIpc(CHANNELS.configGet, { senderFrame: frame }, [], {
      origin: APP_ORIGIN,
      getMainFrame: () => frame,
      channels: {
        dispatch: async () => {
          throw new Error('secret detail');
        },
      },
    });
    assert.deepEqual(r, { ok: false, error: { code: 'internal', message: 'The request failed unexpectedly.' } });
  });

  it('passes unknown channels to the registry, which rejects them (the real one is tested in test/unit/kiosk/channels.test.ts)', async () => {
    const frame: FrameLike = { url: `${APP_ORIGIN}/` };
    const seen: string[] = [];
    await handleIpc('kiosk:nope', { senderFrame: frame }, [], {
      origin: APP_ORIGIN,
      getMainFrame: () => frame,
      channels: {
        dispatch: async (c) => {
          seen.push(c);
          return { ok: false, error: { code: 'invalid_request', message: 'Unknown channel' } };
        },
      },
    });
    assert.deepEqual(seen, ['kiosk:nope']);
  });
});
