/**
 * Which way main's own connections go (core/proxy.ts): Chromium's PAC answer parsed, loopback never
 * proxied, a resolver that fails or hangs means direct (the kiosk keeps trying rather than stopping).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIRECT, parsePacAnswer, proxyQueryUrl, RESOLVE_TIMEOUT_MS, routeFor } from '../../../electron/core/proxy.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';

describe('parsePacAnswer', () => {
  it('reads each PAC entry in order, with the default port of its kind', () => {
    assert.deepEqual(parsePacAnswer('PROXY proxy.venue:3128; SOCKS5 socks.venue; HTTPS secure.venue:8443; DIRECT'), [
      { kind: 'http', url: 'http://proxy.venue:3128' },
      { kind: 'socks', url: 'socks5://socks.venue:1080' },
      { kind: 'https', url: 'https://secure.venue:8443' },
      DIRECT,
    ]);
    assert.deepEqual(parsePacAnswer('proxy  10.0.0.1:8080'), [{ kind: 'http', url: 'http://10.0.0.1:8080' }]);
    assert.deepEqual(parsePacAnswer('SOCKS [::1]:1081'), [{ kind: 'socks', url: 'socks4://[::1]:1081' }]);
  });

  it('leaves out what it cannot use and falls back to direct', () => {
    assert.deepEqual(parsePacAnswer(''), [DIRECT]);
    assert.deepEqual(parsePacAnswer('QUIC q.venue:443'), [DIRECT]);
    assert.deepEqual(parsePacAnswer('PROXY; PROXY a b; PROXY user:pw@host:1; PROXY host/path:1'), [DIRECT]);
    assert.deepEqual(parsePacAnswer('QUIC q:443; PROXY p:1'), [{ kind: 'http', url: 'http://p:1' }]);
  });
});

describe('routeFor', () => {
  const answering = (answer: string, asked: string[] = []) => ({
    resolve: async (url: string) => {
      asked.push(url);
      return answer;
    },
  });

  it('asks about the https/http URL of the host and port (sockets and brokers included)', async () => {
    const asked: string[] = [];
    assert.deepEqual(await routeFor('wss://svc.example.com/v1/ws?x=1', answering('PROXY p:3128', asked)), { kind: 'http', url: 'http://p:3128' });
    await routeFor('mqtts://broker.example.com:8883', answering('DIRECT', asked));
    await routeFor('mqtt://[2001:db8::1]:1883', answering('DIRECT', asked));
    assert.deepEqual(asked, ['https://svc.example.com/', 'https://broker.example.com:8883/', 'http://[2001:db8::1]:1883/']);
    assert.equal(proxyQueryUrl('ws://h:81/a'), 'http://h:81/');
  });

  it('never sends this computer through a proxy (the only place http:// may carry the key)', async () => {
    const asked: string[] = [];
    for (const url of ['http://127.0.0.1:9000', 'https://localhost', 'ws://[::1]:1']) assert.equal(await routeFor(url, answering('PROXY p:1', asked)), DIRECT);
    assert.deepEqual(asked, []);
  });

  it('connects directly when the resolver fails or does not answer in time', async () => {
    assert.equal(await routeFor('https://svc.example.com', { resolve: () => Promise.reject(new Error('no session')) }), DIRECT);
    const clock = new FakeClock();
    const pending = routeFor('https://svc.example.com', { resolve: () => new Promise<string>(() => {}) }, undefined, clock);
    await Promise.resolve();
    await clock.advance(RESOLVE_TIMEOUT_MS);
    assert.equal(await pending, DIRECT);
    assert.equal(clock.pendingCount, 0);
  });
});
