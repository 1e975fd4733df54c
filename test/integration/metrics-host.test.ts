/**
 * `/healthz` and `/metrics` without a token answer only this computer: a venue web page that rebinds its
 * own DNS name to 127.0.0.1 reaches the port, but with its own Host, which is refused (421), as the
 * browser mode's host refuses it. With a token, the token is the gate and any name a scraper uses is fine.
 * A real endpoint on 127.0.0.1, port 0; requests carry the Host a browser would send.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createKioskMetrics, startMetricsServer, type MetricsServer } from '../../electron/fleet/metrics.ts';

function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

const servers: MetricsServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

describe('metrics endpoint: which Host it answers', () => {
  it('without a token: only a loopback Host with its own port; a rebound name gets 421 and no figures', async () => {
    const server = await startMetricsServer({ metrics: createKioskMetrics({ version: '1.2.3', restarts: 0 }), host: '127.0.0.1', port: 0 });
    servers.push(server);
    const p = server.port;
    for (const host of [`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`]) {
      assert.equal((await get(p, '/healthz', { host })).status, 200, host);
      assert.equal((await get(p, '/metrics', { host })).status, 200, host);
    }
    for (const host of [`attacker.example:${p}`, `127.0.0.1.nip.io:${p}`, 'attacker.example', `127.0.0.1:${p + 1}`, `user@127.0.0.1:${p}`]) {
      for (const path of ['/healthz', '/metrics']) {
        const answer = await get(p, path, { host });
        assert.equal(answer.status, 421, `${host} ${path}`);
        assert.doesNotMatch(answer.body, /1\.2\.3|kiosk_/);
      }
    }
  });

  it('with a token: any Host, but only with the token', async () => {
    const server = await startMetricsServer({ metrics: createKioskMetrics({ version: '1.2.3', restarts: 0 }), host: '127.0.0.1', port: 0, token: 'metrics-token-0123456789abcdef' });
    servers.push(server);
    const p = server.port;
    assert.equal((await get(p, '/healthz', { host: `kiosk-12.venue.lan:${p}` })).status, 401);
    assert.equal((await get(p, '/healthz', { host: `kiosk-12.venue.lan:${p}`, authorization: 'Bearer metrics-token-0123456789abcdef' })).status, 200);
  });
});
