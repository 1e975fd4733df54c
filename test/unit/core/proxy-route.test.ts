/**
 * Which way main's own connections go (core/proxy.ts): Chromium's PAC answer parsed (every keyword, in any
 * case, with its default port), loopback never proxied, a resolver that fails or hangs means direct (the
 * kiosk keeps trying rather than stopping), and what the choice logs: the origin and the route, never a
 * path or a query. The resolver's time limit runs on an injected clock. How a chosen route carries bytes
 * is proxy-tunnel.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIRECT, RESOLVE_TIMEOUT_MS, describeRoute, parsePacAnswer, proxyQueryUrl, routeFor, type ProxyResolver } from '../../../electron/core/proxy.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';

const answering = (answer: string, asked: string[] = []): ProxyResolver => ({
  resolve: async (url) => {
    asked.push(url);
    return answer;
  },
});

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
  it('knows every PAC keyword, in any case, with its default port and scheme', () => {
    assert.deepEqual(parsePacAnswer('PROXY a; http b; HTTPS c; socks d; SOCKS4 e; Socks5 f; direct'), [
      { kind: 'http', url: 'http://a:80' },
      { kind: 'http', url: 'http://b:80' },
      { kind: 'https', url: 'https://c:443' },
      { kind: 'socks', url: 'socks4://d:1080' },
      { kind: 'socks', url: 'socks4://e:1080' },
      { kind: 'socks', url: 'socks5://f:1080' },
      DIRECT,
    ]);
  });
  it('reads entries separated by tabs and padded with spaces, and skips empty ones', () => {
    assert.deepEqual(parsePacAnswer(' ;  PROXY\tp.venue:3128 ;; DIRECT ; '), [{ kind: 'http', url: 'http://p.venue:3128' }, DIRECT]);
  });
  it('leaves out what it cannot use and falls back to direct', () => {
    assert.deepEqual(parsePacAnswer(''), [DIRECT]);
    assert.deepEqual(parsePacAnswer('QUIC q.venue:443'), [DIRECT]);
    assert.deepEqual(parsePacAnswer('PROXY; PROXY a b; PROXY user:pw@host:1; PROXY host/path:1'), [DIRECT]);
    assert.deepEqual(parsePacAnswer('QUIC q:443; PROXY p:1'), [{ kind: 'http', url: 'http://p:1' }]);
  });
  it('leaves out an entry that is not a valid address', () => {
    assert.deepEqual(parsePacAnswer('PROXY h:99999; PROXY [bad:1; SOCKS5 s:1'), [{ kind: 'socks', url: 'socks5://s:1' }]);
  });
  it('leaves out an entry with a trailing slash path, keeps one with a bare host', () => {
    assert.deepEqual(parsePacAnswer('PROXY h:1/; PROXY h:2/x; HTTPS h'), [{ kind: 'http', url: 'http://h:1' }, { kind: 'https', url: 'https://h:443' }]);
  });
});

describe('proxyQueryUrl and describeRoute', () => {
  it('asks about the https URL for secure schemes and the http one otherwise, without path or query', () => {
    const cases: Array<[string, string]> = [
      ['https://h.test/a?b=1', 'https://h.test/'],
      ['wss://h.test:8443/ws?live_id=1', 'https://h.test:8443/'],
      ['mqtts://broker.test', 'https://broker.test/'],
      ['http://h.test:8080/x', 'http://h.test:8080/'],
      ['mqtt://[2001:db8::2]:1883', 'http://[2001:db8::2]:1883/'],
    ];
    for (const [url, asked] of cases) assert.equal(proxyQueryUrl(url), asked, url);
  });
  it('describes a route as "direct" or the proxy URL', () => {
    assert.equal(describeRoute(DIRECT), 'direct');
    assert.equal(describeRoute({ kind: 'socks', url: 'socks5://s.venue:1080' }), 'socks5://s.venue:1080');
  });
});

describe('routeFor', () => {
  it('asks about the https/http URL of the host and port (sockets and brokers included)', async () => {
    const asked: string[] = [];
    assert.deepEqual(await routeFor('wss://svc.example.com/v1/ws?x=1', answering('PROXY p:3128', asked)), { kind: 'http', url: 'http://p:3128' });
    await routeFor('mqtts://broker.example.com:8883', answering('DIRECT', asked));
    await routeFor('mqtt://[2001:db8::1]:1883', answering('DIRECT', asked));
    assert.deepEqual(asked, ['https://svc.example.com/', 'https://broker.example.com:8883/', 'http://[2001:db8::1]:1883/']);
    assert.equal(proxyQueryUrl('ws://h:81/a'), 'http://h:81/');
  });
  it('asks the resolver for a host that is not this computer', async () => {
    const asked: string[] = [];
    assert.deepEqual(await routeFor('https://127.0.0.1.example/x', answering('PROXY p:1', asked)), { kind: 'http', url: 'http://p:1' });
    assert.deepEqual(asked, ['https://127.0.0.1.example/']);
  });
  it('never sends this computer through a proxy (the only place http:// may carry the key)', async () => {
    const asked: string[] = [];
    for (const url of ['http://127.0.0.1:9000', 'https://localhost', 'ws://[::1]:1']) assert.equal(await routeFor(url, answering('PROXY p:1', asked)), DIRECT);
    assert.deepEqual(asked, []);
  });
  it('goes direct without asking for text that is not a URL, or without a resolver', async () => {
    const asked: string[] = [];
    assert.equal(await routeFor('not a url', answering('PROXY p:1', asked)), DIRECT);
    assert.equal(await routeFor('https://svc.test', null), DIRECT);
    assert.equal(await routeFor('https://svc.test', undefined), DIRECT);
    assert.deepEqual(asked, []);
  });
  it('logs the chosen route with the origin only', async () => {
    const logger = recordingLogger();
    const route = await routeFor('wss://svc.test:8443/live/ws?live_id=L1', answering('SOCKS5 s.venue:1081; DIRECT'), logger);
    assert.deepEqual(route, { kind: 'socks', url: 'socks5://s.venue:1081' });
    assert.deepEqual(logger.lines, [{ level: 'info', message: 'Network route', data: { origin: 'wss://svc.test:8443', route: 'socks5://s.venue:1081' } }]);
  });
  it('logs "direct" for an empty answer', async () => {
    const logger = recordingLogger();
    assert.equal(await routeFor('https://svc.test/x', answering(''), logger), DIRECT);
    assert.deepEqual(logger.lines, [{ level: 'info', message: 'Network route', data: { origin: 'https://svc.test', route: 'direct' } }]);
  });

  describe('when the resolver fails or does not answer', () => {
    it('connects directly when the resolver fails or does not answer in time', async () => {
      assert.equal(await routeFor('https://svc.example.com', { resolve: () => Promise.reject(new Error('no session')) }), DIRECT);
      const clock = new FakeClock();
      const pending = routeFor('https://svc.example.com', { resolve: () => new Promise<string>(() => {}) }, undefined, clock);
      await Promise.resolve();
      await clock.advance(RESOLVE_TIMEOUT_MS);
      assert.equal(await pending, DIRECT);
      assert.equal(clock.pendingCount, 0);
    });
    it('logs a failing resolver and goes direct', async () => {
      const logger = recordingLogger();
      const resolver: ProxyResolver = { resolve: () => Promise.reject(new Error('no session yet')) };
      assert.equal(await routeFor('https://svc.test/a', resolver, logger), DIRECT);
      assert.deepEqual(logger.lines, [{ level: 'warn', message: 'Could not ask for the proxy; connecting directly', data: { origin: 'https://svc.test', error: 'Error: no session yet' } }]);
    });
    it('waits exactly RESOLVE_TIMEOUT_MS for a resolver that never answers, then goes direct', async () => {
      const logger = recordingLogger();
      const clock = new FakeClock();
      let settled = false;
      const pending = routeFor('https://svc.test', { resolve: () => new Promise<string>(() => {}) }, logger, clock).then((route) => ((settled = true), route));
      await clock.advance(RESOLVE_TIMEOUT_MS - 1);
      assert.equal(settled, false);
      await clock.advance(1);
      assert.equal(await pending, DIRECT);
      assert.deepEqual(logger.lines, [{ level: 'warn', message: 'Could not ask for the proxy; connecting directly', data: { origin: 'https://svc.test', error: 'Error: no answer within 5000 ms' } }]);
      assert.equal(clock.pendingCount, 0);
    });
    it('leaves no timer behind once the resolver has answered', async () => {
      const clock = new FakeClock();
      assert.deepEqual(await routeFor('https://svc.test', answering('PROXY p:2'), undefined, clock), { kind: 'http', url: 'http://p:2' });
      assert.equal(clock.pendingCount, 0);
    });
  });
});
