/**
 * The service key (electron/kiosk/service-key.ts): where the key in use comes from, and that a key the kiosk
 * is given or stores never reaches a log line. The stub emulator: no network.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../../electron/core/log.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { stubKiosk } from '../../helpers/stub-kiosk.ts';
import { value } from '../../helpers/kiosk-on-emulator.ts';

const KEY = 'sk-unit-SECRET-9f8e7d6c5b4a';
const cfg = (raw: Record<string, unknown> = {}) => resolveConfig({ avatar: { imagePath: '/nonexistent.png', persona: 'P' }, ...raw }, {});

describe('the key and its source', () => {
  it('a key handed over with source "none" is not used: demo mode on the emulator, no key reported', async () => {
    const { kiosk, emu } = await stubKiosk({ apiKey: 'sk-edges-NONE-0123456789', apiKeySource: 'none' });
    assert.equal(kiosk.connection.mode, 'demo');
    assert.equal(emu.calls.started, 1);
    const pc = value(await kiosk.appearance.getConfig());
    assert.deepEqual([pc.mode, pc.hasApiKey, pc.apiKeySource], ['demo', false, 'none']);
    await kiosk.shutdown();
  });
});

describe('the key in the logs', () => {
  it('registers the key for log redaction: a log line containing it is masked', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', sink: (l) => lines.push(l) });
    const { kiosk } = await stubKiosk({
      awaitRendererRtc: false,
      config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }),
      loadAvatarImage: undefined,
      persistApiKey: async () => {},
      logger,
    });
    await kiosk.key.set(KEY);
    logger.info(`oops ${KEY}`, { key2: KEY });
    assert.ok(lines.length > 0);
    assert.doesNotMatch(lines.join('\n'), new RegExp(KEY));
    await kiosk.shutdown();
  });
});
