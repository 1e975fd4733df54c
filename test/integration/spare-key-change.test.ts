/**
 * A new API key while the attract screen shows: the first spare after it must be made with the new key. A
 * spare made with the old (refused) key at that moment fails with 401 and stops spares again, so the
 * corrected key would get no fast start until a visitor's own create succeeded.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS, type KioskEvent, type SpareEvent } from '../../electron/contract.ts';
import { FakeClock } from '../helpers/fake-clock.ts';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';
import { advanceInSteps, advanceUntil, driveUntilSettled } from '../helpers/until.ts';

const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const WRONG_KEY = 'sk-wrong-key-0000-1111';

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  const c = cleanup;
  cleanup = null;
  if (c) await c();
});

describe('spare sessions when the API key changes', () => {
  it('after a refused key is replaced, the next spare is created with the new key and opens', async () => {
    const clock = new FakeClock();
    const emu: EmulatorHandle = await startEmulator({ host: '127.0.0.1', port: 0, clock, knobs: { latencyMs: 0, warmupMs: { audio: 0, video: 0 } } });
    const config = resolveConfig({ callMode: 'video', service: { baseUrl: emu.baseUrl }, avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } }, {});
    const channels = createChannelRegistry();
    const kiosk: Kiosk = await createKiosk({ channels,
      awaitRendererRtc: false,
      config,
      apiKey: WRONG_KEY,
      apiKeySource: 'stored',
      clock,
      persistApiKey: async () => undefined,
    });
    cleanup = async () => {
      await driveUntilSettled(clock, kiosk.shutdown());
      await emu.close();
    };
    const events: KioskEvent[] = [];
    kiosk.events.onEvent((e) => events.push(e));
    const spareLog = () => events.filter((e): e is SpareEvent => e.type === 'spare').map((e) => [e.status, e.liveId, e.reason]);

    await channels.dispatch(CHANNELS.attractReport, { showing: true, present: true });
    await advanceUntil(clock, () => spareLog().length > 0, { stepMs: 10, message: 'the first spare ends' });
    assert.deepEqual(spareLog(), [['failed', null, 'unauthorized']]);
    // The operator notices later: spares have been stopped (401) for a while, past any cooldown.
    await advanceInSteps(clock, 60_000, { stepMs: 1_000 });
    assert.equal(spareLog().length, 1, 'stopped: no spare with the refused key');

    const r = await kiosk.key.set(emu.apiKey);
    assert.equal(r.ok, true);
    await advanceUntil(clock, () => kiosk.spares.phase === 'ready' || spareLog().length > 1, { stepMs: 10, message: 'a spare after the new key' });
    await advanceInSteps(clock, 100, { stepMs: 10 });
    assert.deepEqual(spareLog().slice(1).map(([status, , reason]) => [status, reason]), [['created', undefined]], 'no spare is made with the refused key');
    assert.equal(kiosk.spares.phase, 'ready');
  });
});
