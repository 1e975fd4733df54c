/**
 * The browser mode runs the app's feature list (features/index.ts) on its own host: the fleet link it
 * starts is the app's, on the settings as the host read them. With a config.json that cannot be read, the
 * app never writes over it; the browser mode's fleet `apply` must refuse in the same words, through a real
 * broker, and leave the file as it was.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connectAsync } from 'mqtt';
import { silentLogger } from '../../electron/core/log.ts';
import { startBrowserKiosk } from '../../electron/browser/kiosk-host.ts';
import { mosquittoMissing, PREFIX, startBroker } from '../helpers/mosquitto.ts';
import { until } from '../helpers/until.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const missing = mosquittoMissing();
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `ak-host-features-${name}-`));
  dirs.push(d);
  return d;
};

describe('the browser mode runs the app\'s features', () => {
  it('a fleet `apply` on a kiosk whose config.json cannot be read is refused as staff are, and the file is left as it was', { skip: missing ?? false }, async () => {
    const broker = await startBroker({ operator: 'op-pass', 'kiosk-b': 'b-pass' });
    const dataDir = tempDir('data');
    const unreadable = '{ "avatar": { "name": "Ada" }, oops';
    writeFileSync(join(dataDir, 'config.json'), unreadable);
    // The broker comes from the administrator's policy: config.json is not used at all.
    const policyDir = tempDir('policy');
    const policyFile = join(policyDir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify({ mqtt: { url: broker.url, username: 'kiosk-b', password: 'b-pass', kioskId: 'kiosk-b', topicPrefix: PREFIX } }));
    const rendererDir = tempDir('renderer');
    mkdirSync(join(rendererDir, 'assets'));
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>kiosk</title>');
    const op = await connectAsync(broker.url, { username: 'operator', password: 'op-pass', protocolVersion: 5, reconnectPeriod: 0 });
    const kiosk = await startBrowserKiosk({ dataDir, env: { AVATAR_KIOSK_POLICY: policyFile }, appRoot: ROOT, rendererDir, logger: silentLogger, version: '0.0.0-test' });
    try {
      assert.ok(kiosk.configError, 'config.json was not used');
      const seen: Array<{ topic: string; body: Record<string, unknown> }> = [];
      op.on('message', (topic, payload) => payload.length && seen.push({ topic, body: JSON.parse(payload.toString()) as Record<string, unknown> }));
      await op.subscribeAsync(`${PREFIX}/kiosk-b/#`, { qos: 1 });
      await until(() => seen.some((m) => m.topic === `${PREFIX}/kiosk-b/status` && m.body.online === true), { realTimeoutMs: 15_000, message: 'the kiosk online' });

      await op.publishAsync(`${PREFIX}/kiosk-b/cmd`, JSON.stringify({ id: 'a1', cmd: 'apply', settings: { avatar: { name: 'Eve' } } }), { qos: 1, properties: { messageExpiryInterval: 60 } });
      await until(() => seen.some((m) => m.topic === `${PREFIX}/kiosk-b/cmd/result` && m.body.id === 'a1'), { realTimeoutMs: 15_000, message: 'the answer to apply' });
      const { at: _at, ...answer } = seen.find((m) => m.topic === `${PREFIX}/kiosk-b/cmd/result` && m.body.id === 'a1')!.body;
      assert.deepEqual(answer, {
        id: 'a1',
        cmd: 'apply',
        ok: false,
        error: { code: 'invalid_config', message: 'The configuration file is invalid; fix it (or delete it) before saving settings.' },
      });
      assert.equal(readFileSync(join(dataDir, 'config.json'), 'utf8'), unreadable);
      assert.notEqual(kiosk.kiosk.config.avatar.name, 'Eve');
    } finally {
      await kiosk.close();
      await op.endAsync();
      await broker.stop();
    }
  });
});
