/**
 * Saving the panel's settings when the service URL moves: a stored key is bound to the origin it was entered
 * for, so it is dropped (and the panel told) before another origin is used; a key that cannot be dropped
 * stops the save. A fake kiosk service, so the key store's answers are exact.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Result, StaffSettings } from '../../../electron/contract.ts';
import { rejection } from '../../helpers/rejection.ts';
import { TINY_PNG } from '../../helpers/staff-kiosk.ts';
import { staffOpsWorld } from '../../helpers/staff-ops-api-world.ts';

const value = <T>(r: Result<T>): T => {
  assert.ok(r.ok, JSON.stringify(r));
  return r.value;
};

const FILE = { service: { surface: 'direct', baseUrl: 'https://a.example' }, avatar: { imagePath: TINY_PNG, persona: 'A test persona.' }, encryptedApiKey: 'Y2lwaGVy' };

async function movedTo(w: Awaited<ReturnType<typeof staffOpsWorld>>, baseUrl: string | undefined) {
  const { settings } = value(await w.staff.getSettings()) as StaffSettings;
  const service = baseUrl === undefined ? { surface: 'direct' as const } : { surface: 'direct' as const, baseUrl };
  return w.staff.saveSettings({ settings: { ...settings, service } });
}

describe('saving settings: the stored key and the service origin', () => {
  it('another origin drops the stored key, says so in the answer and the log; the save is logged', async () => {
    const w = await staffOpsWorld({ mode: 'direct', file: FILE, apiKeySource: 'stored' });
    const r = value(await movedTo(w, 'https://b.example'));
    assert.equal(r.saved, true);
    assert.equal(r.saved && r.apiKeyCleared, true);
    assert.deepEqual(w.apiKeyCalls, [{ apiKey: null }]);
    assert.equal(w.persistence.read().encryptedApiKey, undefined);
    assert.deepEqual(
      w.logger.lines.filter((l) => l.level !== 'debug').map((l) => [l.level, l.message, l.data]),
      [
        ['warn', 'The service URL moved to another origin: the stored API key was removed and must be entered again', undefined],
        ['info', 'Settings saved', { restartRequired: false }],
      ],
    );
  });

  it('another origin with no stored key removes nothing', async () => {
    const w = await staffOpsWorld({ mode: 'direct', file: FILE, apiKeySource: 'none' });
    const r = value(await movedTo(w, 'https://b.example'));
    assert.equal(r.saved, true);
    assert.equal('apiKeyCleared' in r, false);
    assert.deepEqual(w.apiKeyCalls, []);
  });

  it('a stored key that cannot be removed stops the save with the key store\'s error', async () => {
    const w = await staffOpsWorld({ mode: 'direct', file: FILE, apiKeySource: 'stored', setApiKeyResult: { ok: false, error: { code: 'internal', message: 'The key store is locked.' } } });
    const e = await rejection(movedTo(w, 'https://b.example'));
    assert.deepEqual([e.code, e.message], ['internal', 'The key store is locked.']);
    assert.deepEqual(w.persistence.read().service, FILE.service, 'config.json still names the old service');
    assert.equal(w.persistence.read().encryptedApiKey, FILE.encryptedApiKey);
    assert.deepEqual(w.reconfigured, []);
  });

  it('a running URL that is no URL and a new setting with none both have no origin: the key stays', async () => {
    const w = await staffOpsWorld({ mode: 'direct', file: FILE, apiKeySource: 'stored' });
    w.state.config = { ...w.state.config, service: { ...w.state.config.service, baseUrl: 'not a url' } };
    const r = value(await movedTo(w, undefined));
    assert.equal(r.saved, true, JSON.stringify(r));
    assert.equal('apiKeyCleared' in r, false);
    assert.deepEqual(w.apiKeyCalls, []);
  });
});
