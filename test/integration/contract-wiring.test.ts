/**
 * The contract's table is the only list of channels: these tests prove that what is derived from it
 * covers it exactly. Main registers a handler for every channel and each reaches a real handler; the
 * preload (the built bundle, run with a recording `electron`) and the shared builder expose every
 * channel as its declared method and nothing else; every `staff` channel is refused while the staff
 * panel is locked, whatever its argument.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import vm from 'node:vm';
import { existsSync, readFileSync } from 'node:fs';
import { API_SHAPE, CHANNEL_ROWS, CHANNELS, buildKioskApi, type Result } from '../../electron/contract.ts';
import { STAFF_LOCKED_MESSAGE, type ChannelRegistry } from '../../electron/kiosk/channels.ts';
import type { Kiosk } from '../../electron/kiosk/compose.ts';
import { registerIpc, type InvokeEventLike } from '../../electron/main/ipc.ts';
import { createStaffKiosk, TINY_PNG } from '../helpers/staff-kiosk.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const ALL_CHANNELS = CHANNEL_ROWS.map((r) => r.spec.channel).sort();
const STAFF_ONLY = CHANNEL_ROWS.filter((r) => r.spec.access === 'staff').map((r) => r.spec.channel);

/** Every method of an API object, as `group.method`, and the channel each one invoked. */
async function callEveryMethod(api: Record<string, Record<string, unknown>>, invoked: Array<{ channel: string; arg: unknown }>) {
  const reached: Record<string, string> = {};
  for (const [group, methods] of Object.entries(api)) {
    for (const [method, fn] of Object.entries(methods)) {
      if (method === 'onEvent') continue;
      const before = invoked.length;
      await (fn as (a?: unknown) => Promise<unknown>)();
      assert.equal(invoked.length, before + 1, `${group}.${method} invokes exactly one channel`);
      reached[`${group}.${method}`] = invoked.at(-1)!.channel;
    }
  }
  return reached;
}

const EXPECTED_METHODS = Object.fromEntries(CHANNEL_ROWS.map((r) => [`${r.group}.${r.method}`, r.spec.channel]));

describe('the contract table', () => {
  it('names each channel once, under the kiosk: prefix, with a short name per channel', () => {
    assert.equal(new Set(ALL_CHANNELS).size, CHANNEL_ROWS.length);
    assert.deepEqual(Object.values(CHANNELS).sort(), ALL_CHANNELS);
    for (const c of ALL_CHANNELS) assert.match(c, /^kiosk:[a-z]+:[a-z-]+$/);
  });

  it('the API key can be set only through the PIN-gated staff channel', () => {
    const keyChannels = CHANNEL_ROWS.filter((r) => /api-key/.test(r.spec.channel));
    assert.deepEqual(keyChannels.map((r) => [r.spec.channel, r.spec.access]), [['kiosk:staff:set-api-key', 'staff']]);
  });

  it('in the staff group only the PIN pad itself is open to a locked panel', () => {
    const open = CHANNEL_ROWS.filter((r) => r.group === 'staff' && r.spec.access !== 'staff').map((r) => r.method);
    assert.deepEqual(open.sort(), ['lock', 'pinState', 'setPin', 'unlock']);
  });
});

describe('the shared API builder (preload, E2E bridge)', () => {
  it('exposes every channel as its declared method, and nothing else but onEvent', async () => {
    const invoked: Array<{ channel: string; arg: unknown }> = [];
    const api = buildKioskApi(API_SHAPE, async (channel, arg) => (invoked.push({ channel, arg }), { ok: true, value: null }), () => () => {});
    const reached = await callEveryMethod(api as unknown as Record<string, Record<string, unknown>>, invoked);
    assert.deepEqual(reached, EXPECTED_METHODS);
    assert.equal(typeof api.session.onEvent, 'function');
    assert.ok(Object.isFrozen(api) && Object.isFrozen(api.session), 'the API cannot be patched by page code');
  });

  it('sends at most one argument: none for getters, the default for an omitted optional one', async () => {
    const invoked: unknown[][] = [];
    const api = buildKioskApi(API_SHAPE, async (...args) => (invoked.push(args), { ok: true, value: null }), () => () => {});
    await api.session.getState();
    await (api.session.getState as (a?: unknown) => Promise<unknown>)({ sneaky: true });
    await api.session.start();
    await api.session.start({ callMode: 'audio' });
    await api.session.hangup();
    await api.staff.ledgerCsv();
    await api.session.setMuted({ muted: true });
    assert.deepEqual(invoked, [
      [CHANNELS.sessionGetState],
      [CHANNELS.sessionGetState],
      [CHANNELS.sessionStart, {}],
      [CHANNELS.sessionStart, { callMode: 'audio' }],
      [CHANNELS.sessionHangup],
      [CHANNELS.staffLedgerCsv, {}],
      [CHANNELS.sessionSetMuted, { muted: true }],
    ]);
  });
});

describe('the built preload (out/preload/index.cjs)', () => {
  const bundle = join(ROOT, 'out', 'preload', 'index.cjs');
  it('exposes exactly the contract as window.kiosk, requiring nothing but electron', async (t) => {
    if (!existsSync(bundle)) {
      t.skip(`SKIPPED: ${bundle} is not built (npm run build makes it; npm test builds before this runs)`);
      console.log(`# SKIPPED: the built preload is absent (${bundle}); run npm run build`);
      return;
    }
    const invoked: Array<{ channel: string; arg: unknown }> = [];
    const exposed: Record<string, unknown> = {};
    const required: string[] = [];
    const electron = {
      contextBridge: { exposeInMainWorld: (name: string, value: unknown) => void (exposed[name] = value) },
      ipcRenderer: {
        invoke: async (channel: string, ...args: unknown[]) => (invoked.push({ channel, arg: args[0] }), { ok: true, value: null }),
        on: () => {},
        removeListener: () => {},
      },
    };
    const nodeRequire = createRequire(bundle);
    const module = { exports: {} };
    const sandbox = {
      module,
      exports: module.exports,
      process: { contextIsolated: true },
      require: (id: string) => {
        required.push(id);
        return id === 'electron' ? electron : nodeRequire(id);
      },
    };
    vm.runInNewContext(readFileSync(bundle, 'utf8'), sandbox, { filename: bundle });
    assert.deepEqual([...new Set(required)], ['electron']);
    assert.deepEqual(Object.keys(exposed), ['kiosk']);
    const reached = await callEveryMethod(exposed.kiosk as Record<string, Record<string, unknown>>, invoked);
    assert.deepEqual(reached, EXPECTED_METHODS);
  });
});

describe('main: every channel has a handler; staff channels need the unlocked panel', () => {
  let kiosk: Kiosk;
  const registered = new Map<string, (event: InvokeEventLike, ...args: unknown[]) => Promise<unknown> | unknown>();
  const mainFrame = { url: 'app://kiosk/index.html' };
  const invoke = async (channel: string, ...args: unknown[]) => (await registered.get(channel)!({ senderFrame: mainFrame }, ...args)) as Result<unknown>;

  before(async () => {
    let channels: ChannelRegistry;
    ({ kiosk, channels } = await createStaffKiosk({
      file: { callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } },
      platform: { getOpenAtLogin: () => null, setOpenAtLogin: () => {}, exitKiosk: () => {}, restart: () => {} },
    }));
    registerIpc(
      { handle: (channel, listener) => void registered.set(channel, listener), removeHandler: (channel) => void registered.delete(channel) },
      { channels, origin: 'app://kiosk', getMainFrame: () => mainFrame },
    );
  });
  after(async () => {
    await kiosk.shutdown();
  });

  it('registers exactly the contract channels', () => {
    assert.deepEqual([...registered.keys()].sort(), ALL_CHANNELS);
  });

  it('a locked panel refuses every staff channel, whatever the argument, and nothing runs', async () => {
    assert.ok(STAFF_ONLY.length >= 10);
    for (const channel of STAFF_ONLY) {
      for (const arg of [undefined, {}, { pin: '1234' }, { settings: {} }, 'x'.repeat(10)]) {
        assert.deepEqual(await invoke(channel, arg), { ok: false, error: { code: 'unauthorized', message: STAFF_LOCKED_MESSAGE } }, channel);
      }
    }
    assert.equal(kiosk.connection.emulator!.listSessions().length, 0);
  });

  it('every channel reaches a handler (a bad argument is refused by its schema, never "not offered")', async () => {
    const answered = await invoke(CHANNELS.staffSetPin, { pin: '246810' });
    assert.equal(answered.ok, true, 'the PIN is set and the panel unlocked');
    for (const channel of ALL_CHANNELS) {
      const r = await invoke(channel, { certainly: 'not an argument of any channel' });
      assert.equal(r.ok, false, channel);
      if (!r.ok) {
        assert.equal(r.error.code, 'invalid_request', channel);
        assert.match(r.error.message, new RegExp(`^Invalid arguments for ${channel}`), channel);
      }
    }
  });

  it('an unlocked panel lets a staff channel through to its handler', async () => {
    const r = await invoke(CHANNELS.staffLogTail);
    assert.deepEqual(r, { ok: true, value: { lines: [] } });
    await invoke(CHANNELS.staffLock);
    assert.deepEqual(await invoke(CHANNELS.staffLogTail), { ok: false, error: { code: 'unauthorized', message: STAFF_LOCKED_MESSAGE } });
  });
});
