/**
 * A gateway that authenticates kiosks with gatewayHeaders (a device token from the policy file) is used
 * over https:// only, loopback aside: over plain http:// the token would cross the venue network in
 * clear. Through the user's path: the policy file on disk → loadPolicy → resolveConfig → the kiosk service
 * → a visitor's tap, against a real local "gateway" that records what reaches it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../electron/core/log.ts';
import { loadPolicy } from '../../electron/fleet/managed-config.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const TOKEN = 'device-token-4f1b9c0e7a2d';

const closers: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** The kiosk as installed: `gatewayUrl` in the user's config, the token in the administrator's policy file. */
async function kioskFor(gatewayUrl: string): Promise<Kiosk> {
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-gw-policy-'));
  const policyFile = join(dir, 'policy.json');
  writeFileSync(policyFile, JSON.stringify({ service: { gatewayHeaders: { 'X-Device-Token': TOKEN } } }), { mode: 0o644 });
  const env = { AVATAR_KIOSK_POLICY: policyFile };
  const policy = loadPolicy({ path: policyFile, env });
  assert.deepEqual(policy.problems, []);
  const config = resolveConfig({ service: { surface: 'gateway', gatewayUrl } }, {}, { appRoot: ROOT, policy: policy.policy });
  const kiosk = await createKiosk({ config, apiKey: null, apiKeySource: 'none', logger: silentLogger, awaitRendererRtc: false });
  closers.push(() => kiosk.shutdown());
  return kiosk;
}

describe('gateway with gatewayHeaders', () => {
  it('refuses plain http:// to another computer: the tap is answered with a config error, and nothing is sent', async () => {
    const kiosk = await kioskFor('http://gateway.venue.invalid:8080');
    const r = await kiosk.calls.start({ callMode: 'audio' });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.code, 'invalid_config');
    assert.equal(
      !r.ok && r.error.message,
      'The gateway URL must start with https:// (got http://gateway.venue.invalid:8080) when gatewayHeaders are set: with http:// the device\'s token would cross the network unencrypted; http:// is only for this computer (localhost, 127.0.0.1, ::1).',
    );
  });

  it('accepts http:// on this computer (a local gateway), and sends the token there', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const gateway = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"detail":"not today"}');
    });
    await new Promise<void>((ok) => gateway.listen(0, '127.0.0.1', ok));
    closers.push(() => new Promise<void>((ok) => gateway.close(() => ok())));
    const port = (gateway.address() as { port: number }).port;
    const kiosk = await kioskFor(`http://127.0.0.1:${port}`);
    await kiosk.calls.start({ callMode: 'audio' });
    const deadline = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(seen.length >= 1, 'the local gateway was asked');
    assert.equal(seen[0]!['x-device-token'], TOKEN);
  });
});
