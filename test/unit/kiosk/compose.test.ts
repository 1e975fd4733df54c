/**
 * The kiosk wired (electron/kiosk/compose.ts): the avatar's volume reaches the page (in its view of the kiosk
 * and as an event); once shutdown began, what crosses its services is refused — a call, a key, new
 * settings — while the call's state can still be read. The stub emulator: no network.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS } from '../../../electron/contract.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { memoryAvatarVolume } from '../../../electron/kiosk/avatar-volume.ts';
import { stubKiosk, TINY_PNG } from '../../helpers/stub-kiosk.ts';

const KEY = 'sk-unit-SECRET-9f8e7d6c5b4a';
const cfg = (raw: Record<string, unknown> = {}) => resolveConfig({ avatar: { imagePath: '/nonexistent.png', persona: 'P' }, ...raw }, {});

describe('the avatar volume', () => {
  it('is the one given: the page reads it in its config and hears each change; none after shutdown', async () => {
    const volume = memoryAvatarVolume(60);
    const { kiosk, channels } = await stubKiosk({ config: cfg(), avatarVolume: volume });
    const heard: unknown[] = [];
    kiosk.events.onEvent((e) => e.type === 'avatar-volume' && heard.push(e));
    assert.equal(kiosk.avatarVolume, volume);
    const before = await channels.dispatch(CHANNELS.configGet, undefined);
    assert.equal(before.ok && (before.value as { avatarVolume: number }).avatarVolume, 60);
    await volume.set(25);
    await volume.set(25); // the same volume again: no change, no event
    assert.deepEqual(heard, [{ type: 'avatar-volume', percent: 25 }]);
    const after = await channels.dispatch(CHANNELS.configGet, undefined);
    assert.equal(after.ok && (after.value as { avatarVolume: number }).avatarVolume, 25);
    await kiosk.shutdown();
    await volume.set(10);
    assert.deepEqual(heard, [{ type: 'avatar-volume', percent: 25 }], 'the page is gone: nobody hears it');
  });

  it('without one: 100 %, in memory', async () => {
    const { kiosk } = await stubKiosk({ config: cfg() });
    assert.equal(kiosk.avatarVolume.percent, 100);
    await kiosk.shutdown();
  });
});

describe('after shutdown began', () => {
  it('a call and a key answer cancelled; the call state still answers', async () => {
    const { kiosk, channels } = await stubKiosk({ awaitRendererRtc: false, config: cfg(), loadAvatarImage: undefined });
    await kiosk.shutdown();
    const a = await kiosk.calls.start();
    const b = await kiosk.key.set(KEY);
    assert.equal(!a.ok && a.error.code, 'cancelled');
    assert.equal(!b.ok && b.error.code, 'cancelled');
    assert.deepEqual(await channels.dispatch(CHANNELS.sessionGetState, undefined), { ok: true, value: { phase: 'idle' } });
  });

  it('new settings are refused: no emulator started again, the settings unchanged, nobody told', async () => {
    const { kiosk, emu } = await stubKiosk();
    const events: string[] = [];
    kiosk.events.onEvent((e) => events.push(e.type));
    await kiosk.shutdown();
    const next = resolveConfig({ avatar: { imagePath: TINY_PNG, persona: 'Another persona.' } }, {});
    await assert.rejects(kiosk.reconfigure(next), { code: 'cancelled', message: 'The kiosk is shutting down.' });
    assert.deepEqual(emu.calls, { started: 1, closed: 1 });
    assert.equal(kiosk.connection.emulator, null);
    assert.equal(kiosk.config.avatar.persona, 'P');
    assert.deepEqual(events, []);
  });
});
