/**
 * The service key (electron/kiosk/service-key.ts): where the key in use comes from, and that a key the kiosk
 * is given or stores never reaches a log line; storing or clearing it from the staff panel, on its own and
 * through the kiosk. The stub emulator: no network.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AvatarError } from '../../../electron/core/errors.ts';
import { createLogger } from '../../../electron/core/log.ts';
import { createServiceKey, type ServiceKeyOptions } from '../../../electron/kiosk/service-key.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
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

describe('the key on its own: source, protection, and a change from the staff panel', () => {
  function make(options: Partial<ServiceKeyOptions> = {}) {
    const steps: string[] = [];
    const logger = recordingLogger();
    let closing = false;
    let callRunning = false;
    const key = createServiceKey({
      apiKey: null,
      apiKeySource: 'none',
      logger,
      closing: () => closing,
      callRunning: () => callRunning,
      persist: async (k) => void steps.push(`persist ${k}`),
      onChange: async () => void steps.push(`rebuild with ${key.value}`),
      ...options,
    });
    return { key, steps, logger, setClosing: () => (closing = true), setCallRunning: (v: boolean) => (callRunning = v) };
  }
  const seen = (key: ReturnType<typeof make>['key']) => [key.value, key.present, key.source, key.weaklyProtected];

  it('no key: none, not present, not weak', () => {
    assert.deepEqual(seen(make().key), [null, false, 'none', false]);
  });

  it('a stored key: its protection is this machine’s store’s', () => {
    assert.deepEqual(seen(make({ apiKey: 'sk-stored', apiKeySource: 'stored', weaklyProtected: 'unknown' }).key), ['sk-stored', true, 'stored', 'unknown']);
    assert.deepEqual(seen(make({ apiKey: 'sk-stored', apiKeySource: 'stored' }).key), ['sk-stored', true, 'stored', false]);
  });

  it('the environment’s key wins over one stored later, and its protection is not the store’s', async () => {
    const { key, steps } = make({ apiKey: 'sk-env', apiKeySource: 'env', weaklyProtected: true });
    assert.deepEqual(seen(key), ['sk-env', true, 'env', false]);
    assert.deepEqual(await key.set('sk-new'), { ok: true, value: undefined });
    assert.deepEqual(seen(key), ['sk-env', true, 'env', false]);
    assert.deepEqual(await key.set(null), { ok: true, value: undefined });
    assert.deepEqual(seen(key), ['sk-env', true, 'env', false], 'clearing the stored key leaves the environment’s');
    assert.deepEqual(steps, ['persist sk-new', 'rebuild with sk-env', 'persist null', 'rebuild with sk-env']);
  });

  it('storing, then clearing: stored first, then the connection rebuilt with it; each logged without the key', async () => {
    const { key, steps, logger } = make({ weaklyProtected: true });
    assert.deepEqual(await key.set('sk-typed-in'), { ok: true, value: undefined });
    assert.deepEqual(seen(key), ['sk-typed-in', true, 'stored', true]);
    assert.deepEqual(await key.set(null), { ok: true, value: undefined });
    assert.deepEqual(seen(key), [null, false, 'none', false]);
    assert.deepEqual(steps, ['persist sk-typed-in', 'rebuild with sk-typed-in', 'persist null', 'rebuild with null']);
    assert.deepEqual(logger.lines.map((l) => [l.level, l.message, l.data]), [
      ['info', 'API key stored', { source: 'stored' }],
      ['info', 'Stored API key cleared', { source: 'none' }],
    ]);
  });

  it('refused while shutting down or during a call: nothing stored, nothing rebuilt', async () => {
    const { key, steps, setClosing, setCallRunning } = make();
    setCallRunning(true);
    assert.deepEqual(await key.set('sk-x'), { ok: false, error: { code: 'invalid_request', message: 'Hang up the current session before changing the API key.' } });
    setClosing();
    assert.deepEqual(await key.set('sk-x'), { ok: false, error: { code: 'cancelled', message: 'The kiosk is shutting down.' } });
    setCallRunning(false);
    assert.deepEqual(await key.set('sk-x'), { ok: false, error: { code: 'cancelled', message: 'The kiosk is shutting down.' } });
    assert.deepEqual(steps, []);
    assert.deepEqual(seen(key), [null, false, 'none', false]);
  });

  it('a store that fails: the error is said and logged, the key in use unchanged, nothing rebuilt', async () => {
    const { key, steps, logger } = make({
      apiKey: 'sk-old', apiKeySource: 'stored',
      persist: async () => {
        throw new AvatarError('invalid_config', 'no encryption is available on this machine');
      },
    });
    assert.deepEqual(await key.set('sk-new'), { ok: false, error: { code: 'invalid_config', message: 'Could not store the API key: no encryption is available on this machine' } });
    assert.deepEqual(seen(key), ['sk-old', true, 'stored', false]);
    assert.deepEqual(steps, []);
    assert.deepEqual(logger.lines.map((l) => [l.level, l.message, l.data]), [['error', 'Could not store the API key', { message: 'no encryption is available on this machine' }]]);
  });

  it('a kiosk with no key store refuses to store one, in words', async () => {
    const { key } = make({ persist: undefined });
    assert.deepEqual(await key.set('sk-new'), { ok: false, error: { code: 'internal', message: 'Could not store the API key: This kiosk cannot store an API key.' } });
    assert.equal(key.value, null);
  });
});
