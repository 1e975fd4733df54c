/**
 * The kiosk wired (electron/kiosk/compose.ts): once shutdown began, what crosses its services is refused —
 * a call, a key, new settings — while the call's state can still be read. The stub emulator: no network.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNELS } from '../../../electron/contract.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { stubKiosk, TINY_PNG } from '../../helpers/stub-kiosk.ts';

const KEY = 'sk-unit-SECRET-9f8e7d6c5b4a';
const cfg = (raw: Record<string, unknown> = {}) => resolveConfig({ avatar: { imagePath: '/nonexistent.png', persona: 'P' }, ...raw }, {});

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
