/**
 * The kiosk's metrics endpoint (metrics.ts) on 127.0.0.1, answer by answer: exact status, headers and body
 * for each path, method, Host and token; the order of the checks (method, Host, path, token); a failing
 * render; the connection limits; closing. Then the start-up glue: the launch counter file and
 * startFleetMetrics, which never throws. A scripted source stands in for the kiosk service. What is counted,
 * and the exposition text itself, are in metrics-exposition.test.ts; the endpoint after real sessions through
 * the kiosk service is in test/integration/metrics.test.ts.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { AvatarError } from '../../../electron/core/errors.ts';
import { redact } from '../../../electron/core/log.ts';
import { countLaunch, createKioskMetrics, METRICS_IDLE_TIMEOUT_MS, METRICS_MAX_CONNECTIONS, startFleetMetrics, startMetricsServer, type MetricsServer } from '../../../electron/fleet/metrics.ts';
import { httpAnswer, rawExchange, silentConnections } from '../../helpers/http-answer.ts';
import { scriptedMetricsSource } from '../../helpers/metrics-source.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';
import { realDelay, until } from '../../helpers/until.ts';

const TOKEN = 'metrics-server-token-5f1c2a';
const TEXT = 'text/plain; charset=utf-8';
const HEALTH = '{"up":true,"mode":"unknown","sessionPhase":"idle","lastErrorCode":null,"version":"1.2.3"}\n';

const open: MetricsServer[] = [];
after(async () => {
  for (const s of open) await s.close();
});
async function serve(options: Partial<Parameters<typeof startMetricsServer>[0]> = {}): Promise<MetricsServer> {
  const server = await startMetricsServer({ metrics: createKioskMetrics({ version: '1.2.3' }), host: '127.0.0.1', port: 0, ...options });
  open.push(server);
  return server;
}
/** The headers every answer carries (date and connection aside). */
const plain = (length: number) => ({ 'content-type': TEXT, 'cache-control': 'no-store', 'content-length': String(length) });
const pick = (headers: Record<string, unknown>, names: string[]) => Object.fromEntries(names.filter((n) => n in headers).map((n) => [n, headers[n]]));
const SHOWN = ['content-type', 'cache-control', 'content-length', 'allow', 'www-authenticate'];

describe('metrics endpoint: answers without a token (loopback)', () => {
  it('/metrics: the exposition with its content type, never cached; a query string is ignored', async () => {
    const metrics = createKioskMetrics({ version: '1.2.3' });
    const server = await serve({ metrics });
    const body = await metrics.render();
    for (const path of ['/metrics', '/metrics?name[]=avatar_kiosk_info']) {
      const answer = await httpAnswer(server.port, path);
      assert.equal(answer.status, 200);
      assert.deepEqual(pick(answer.headers, SHOWN), { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store', 'content-length': String(Buffer.byteLength(body)) });
      assert.equal(answer.body, body);
    }
    assert.equal(server.host, '127.0.0.1');
  });

  it('/healthz: one JSON line; HEAD answers the same headers without a body', async () => {
    const server = await serve();
    const get = await httpAnswer(server.port, '/healthz');
    assert.equal(get.status, 200);
    assert.deepEqual(pick(get.headers, SHOWN), { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': String(HEALTH.length) });
    assert.equal(get.body, HEALTH);
    const head = await httpAnswer(server.port, '/healthz', { method: 'HEAD' });
    assert.deepEqual([head.status, pick(head.headers, SHOWN), head.body], [200, pick(get.headers, SHOWN), '']);
  });

  it('another method: 405 with Allow, before the Host and the path are looked at', async () => {
    const server = await serve();
    for (const [method, path, host] of [
      ['POST', '/metrics', `127.0.0.1:${server.port}`],
      ['DELETE', '/nowhere', 'attacker.example'],
      ['OPTIONS', '/healthz', `127.0.0.1:${server.port}`],
    ] as const) {
      const answer = await httpAnswer(server.port, path, { method, headers: { host } });
      assert.deepEqual([answer.status, pick(answer.headers, SHOWN), answer.body], [405, { ...plain(19), allow: 'GET, HEAD' }, 'Method not allowed\n'], `${method} ${path}`);
    }
  });

  it('an unknown path: 404 (after the Host check)', async () => {
    const server = await serve();
    for (const path of ['/', '/metrics/', '/healthz/x', '/favicon.ico']) {
      const answer = await httpAnswer(server.port, path);
      assert.deepEqual([answer.status, pick(answer.headers, SHOWN), answer.body], [404, plain(10), 'Not found\n'], path);
    }
    const misdirected = await httpAnswer(server.port, '/nowhere', { headers: { host: 'attacker.example' } });
    assert.equal(misdirected.status, 421);
  });

  it('a Host that is not a loopback name with this port, with a path or a user, or none at all: 421', async () => {
    const server = await serve();
    const p = server.port;
    for (const host of [`localhost:${p}`, `127.0.0.1:${p}`, `[::1]:${p}`, `LOCALHOST:${p}`]) assert.equal((await httpAnswer(p, '/healthz', { headers: { host } })).status, 200, host);
    for (const host of ['localhost', '127.0.0.1', `localhost:${p}/x`, `user@localhost:${p}`, `a b:${p}`, `[::1:${p}`, `10.0.0.5:${p}`]) {
      const answer = await httpAnswer(p, '/healthz', { headers: { host } });
      assert.deepEqual([answer.status, pick(answer.headers, SHOWN), answer.body], [421, plain(20), 'Misdirected request\n'], host);
    }
    // HTTP/1.0 may leave the Host out: nothing to check it against, so refused too.
    const noHost = await rawExchange(p, 'GET /healthz HTTP/1.0\r\n\r\n');
    assert.match(noHost, /^HTTP\/1\.1 421 Misdirected Request\r\n/);
    assert.ok(noHost.endsWith('\r\n\r\nMisdirected request\n'), noHost);
  });

  it('says it is ready in the log, with its port and no authentication', async () => {
    const logger = recordingLogger();
    const server = await serve({ logger });
    assert.deepEqual(logger.lines, [{ level: 'info', message: 'Metrics endpoint ready', data: { host: '127.0.0.1', port: server.port, auth: 'none (loopback)' } }]);
  });
});

describe('metrics endpoint: with a token', () => {
  it('401 with a Bearer challenge unless the exact token is sent; then any Host, even none', async () => {
    const logger = recordingLogger();
    const server = await serve({ token: TOKEN, logger });
    const p = server.port;
    assert.deepEqual(logger.lines, [{ level: 'info', message: 'Metrics endpoint ready', data: { host: '127.0.0.1', port: p, auth: 'bearer' } }]);
    for (const authorization of [undefined, TOKEN, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `bearer ${TOKEN}`, `Token ${TOKEN}`, 'Bearer']) {
      const answer = await httpAnswer(p, '/metrics', { headers: authorization === undefined ? {} : { authorization } });
      assert.deepEqual(
        [answer.status, pick(answer.headers, SHOWN), answer.body],
        [401, { ...plain(13), 'www-authenticate': 'Bearer realm="avatar-kiosk"' }, 'Unauthorized\n'],
        String(authorization),
      );
    }
    for (const host of ['kiosk-7.venue.lan', `localhost:${p}`]) {
      const answer = await httpAnswer(p, '/healthz', { headers: { host, authorization: `Bearer ${TOKEN}` } });
      assert.deepEqual([answer.status, answer.body], [200, HEALTH], host);
    }
    const noHost = await rawExchange(p, `GET /healthz HTTP/1.0\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    assert.ok(noHost.startsWith('HTTP/1.1 200 OK\r\n') && noHost.endsWith(`\r\n\r\n${HEALTH}`), noHost);
    // The value is compared trimmed (the parser already drops spaces and tabs; a no-break space too).
    const spaced = await rawExchange(p, `GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\xa0\r\nConnection: close\r\n\r\n`);
    assert.ok(spaced.startsWith('HTTP/1.1 200 OK\r\n'), spaced);
  });

  it('an unknown path is 404 before the token is asked for; 405 comes first of all', async () => {
    const server = await serve({ token: TOKEN });
    const notFound = await httpAnswer(server.port, '/secret');
    assert.deepEqual([notFound.status, notFound.body], [404, 'Not found\n']);
    const post = await httpAnswer(server.port, '/metrics', { method: 'POST' });
    assert.deepEqual([post.status, post.body], [405, 'Method not allowed\n']);
  });

  it('the token is masked in every log line from then on', async () => {
    const token = 'metrics-masked-token-93ab';
    assert.equal(redact(`scrape with ${token}`), `scrape with ${token}`);
    await serve({ token });
    assert.equal(redact(`scrape with ${token}`), 'scrape with ***');
  });

  it('off loopback: refused without a token (invalid_config, the field named), served with one', async () => {
    const metrics = createKioskMetrics({ version: '1.2.3' });
    for (const token of [undefined, '']) {
      await assert.rejects(startMetricsServer({ metrics, host: '0.0.0.0', port: 0, ...(token === undefined ? {} : { token }) }), (e: unknown) => {
        assert.ok(e instanceof AvatarError);
        assert.equal(e.code, 'invalid_config');
        assert.equal(e.message, 'Metrics on "0.0.0.0" need metrics.token: only loopback addresses may serve them without one.');
        assert.deepEqual(e.details, { field: 'metrics.token' });
        return true;
      });
    }
    const server = await serve({ metrics, host: '0.0.0.0', token: TOKEN });
    assert.equal(server.host, '0.0.0.0');
    assert.equal((await httpAnswer(server.port, '/healthz', { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  });
});

describe('metrics endpoint: failures, limits and closing', () => {
  it('a failing render or health: 500 with no detail, and a warning in the log', async () => {
    const logger = recordingLogger();
    const metrics = createKioskMetrics({ version: '1.2.3' });
    const server = await serve({
      logger,
      metrics: {
        ...metrics,
        render: () => Promise.reject(new Error('registry broke')),
        health: () => {
          throw new RangeError('no health');
        },
      },
    });
    logger.lines.length = 0;
    for (const path of ['/metrics', '/healthz']) {
      const answer = await httpAnswer(server.port, path);
      assert.deepEqual([answer.status, pick(answer.headers, SHOWN), answer.body], [500, plain(15), 'Internal error\n'], path);
    }
    assert.deepEqual(logger.lines, [
      { level: 'warn', message: 'The metrics endpoint failed to answer', data: { error: 'Error: registry broke' } },
      { level: 'warn', message: 'The metrics endpoint failed to answer', data: { error: 'RangeError: no health' } },
    ]);
  });

  it('a failure after the headers went out: the connection is dropped, not answered twice', async () => {
    const logger = recordingLogger();
    const metrics = createKioskMetrics({ version: '1.2.3' });
    // An ArrayBuffer passes the length computation and the headers, then res.end refuses it.
    const server = await serve({ logger, metrics: { ...metrics, render: async () => new ArrayBuffer(3) as unknown as string } });
    logger.lines.length = 0;
    await assert.rejects(httpAnswer(server.port, '/metrics', { timeoutMs: 3_000 }), { code: 'ECONNRESET', message: 'socket hang up' });
    assert.equal(logger.lines.length, 1);
    assert.deepEqual([logger.lines[0]!.level, logger.lines[0]!.message], ['warn', 'The metrics endpoint failed to answer']);
    assert.match(String(logger.lines[0]!.data?.error), /^TypeError \[ERR_INVALID_ARG_TYPE\]/);
  });

  it('holds at most maxConnections at once (16 by default); the rest are closed on arrival', async () => {
    assert.equal(METRICS_MAX_CONNECTIONS, 16);
    const small = await serve({ maxConnections: 2, idleTimeoutMs: 60_000 });
    const few = await silentConnections(small.port, 5);
    await until(() => few.closed() >= 3, { message: 'three closed' });
    await realDelay(50);
    assert.equal(few.closed(), 3);
    for (const s of few.sockets) s.destroy();

    const byDefault = await serve({ idleTimeoutMs: 60_000 });
    const many = await silentConnections(byDefault.port, 18);
    await until(() => many.closed() >= 2, { message: 'two closed' });
    await realDelay(50);
    assert.equal(many.closed(), 2);
    for (const s of many.sockets) s.destroy();
  });

  it('a silent connection is closed after idleTimeoutMs; keep-alive says the shorter of 5 s and that', async () => {
    assert.equal(METRICS_IDLE_TIMEOUT_MS, 15_000);
    const quick = await serve({ idleTimeoutMs: 150 });
    const silent = await silentConnections(quick.port, 1);
    await until(() => silent.closed() === 1, { realTimeoutMs: 3_000, message: 'the silent connection closed' });

    const keepAlive = async (server: MetricsServer) => (await httpAnswer(server.port, '/healthz', { headers: { connection: 'keep-alive' } })).headers['keep-alive'];
    assert.equal(await keepAlive(await serve({ idleTimeoutMs: 3_000 })), 'timeout=3');
    assert.equal(await keepAlive(await serve()), 'timeout=5');
    assert.equal(await keepAlive(await serve({ idleTimeoutMs: 60_000 })), 'timeout=5');
  });

  it('close: drops a connection in the middle of a request, stops listening, and is the same promise twice', async () => {
    const server = await startMetricsServer({ metrics: createKioskMetrics({ version: '1' }), host: '127.0.0.1', port: 0 });
    const half = await silentConnections(server.port, 1);
    half.sockets[0]!.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // the headers never finish
    await realDelay(20);
    const first = server.close();
    assert.equal(server.close(), first);
    let closed = false;
    void first.then(() => (closed = true));
    await until(() => closed, { message: 'close() resolved with a request half sent' });
    await until(() => half.closed() === 1, { message: 'the half-sent request dropped' });
    const refused = await new Promise<string>((resolve) => {
      const s = connect(server.port, '127.0.0.1', () => (s.destroy(), resolve('connected')));
      s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    assert.equal(refused, 'ECONNREFUSED');
  });

  it('a port already taken: the start rejects with the listen error', async () => {
    const first = await serve();
    await assert.rejects(startMetricsServer({ metrics: createKioskMetrics({ version: '1' }), host: '127.0.0.1', port: first.port }), { code: 'EADDRINUSE' });
  });
});

describe('start-up glue: the launch counter and startFleetMetrics', () => {
  const tempDir = tempDirsRemovedAfterEach('kiosk-metrics-server-');

  it('countLaunch: a missing file is launch 0 and is written; only {launches: whole number ≥ 0} is read back', () => {
    const dir = tempDir();
    const path = join(dir, 'launches.json');
    assert.equal(countLaunch(path), 0);
    assert.equal(readFileSync(path, 'utf8'), '{"launches":1}\n');
    for (const [text, before] of [
      ['{"launches":41}', 41],
      ['{"launches":-4}', 0],
      ['{"launches":1.5}', 0],
      ['{"launches":2,"extra":true}', 0],
      ['{"launches":"3"}', 0],
      ['[]', 0],
      ['', 0],
      [`{"launches":${Number.MAX_SAFE_INTEGER - 1}}`, Number.MAX_SAFE_INTEGER - 1],
      [`{"launches":${Number.MAX_SAFE_INTEGER + 2}}`, 0],
    ] as const) {
      writeFileSync(path, text);
      assert.equal(countLaunch(path), before, text);
      assert.equal(readFileSync(path, 'utf8'), `{"launches":${before + 1}}\n`, text);
    }
  });

  it('countLaunch: an unreadable or unwritable place counts from 0 and never throws', () => {
    const dir = tempDir();
    assert.equal(countLaunch(dir), 0); // a folder: neither read nor written
    assert.equal(countLaunch(join(dir, 'missing', 'launches.json')), 0);
    assert.equal(existsSync(join(dir, 'missing')), false);
  });

  it('off: nothing counted, subscribed or served', async () => {
    const dir = tempDir();
    const launchStatePath = join(dir, 'launches.json');
    const service = scriptedMetricsSource();
    const off = { metrics: { enabled: false, host: '127.0.0.1', port: 0 } };
    assert.equal(await startFleetMetrics({ config: off, service, version: '1', launchStatePath }), null);
    assert.equal(existsSync(launchStatePath), false);
    assert.deepEqual(service.listening(), { events: 0, causes: 0 });
  });

  it('on: counts the launch, records start-up errors, observes the service and serves; close lets go of both', async () => {
    const dir = tempDir();
    const launchStatePath = join(dir, 'launches.json');
    writeFileSync(launchStatePath, '{"launches":4}');
    const service = scriptedMetricsSource({ mode: 'direct' });
    const logger = recordingLogger();
    const fleet = await startFleetMetrics({
      config: { metrics: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN } },
      service,
      version: '5.0.0',
      launchStatePath,
      startupErrors: ['invalid_config', 'network'],
      logger,
    });
    assert.ok(fleet);
    assert.equal(readFileSync(launchStatePath, 'utf8'), '{"launches":5}\n');
    assert.deepEqual(service.listening(), { events: 1, causes: 1 });
    assert.deepEqual(logger.lines, [{ level: 'info', message: 'Metrics endpoint ready', data: { host: '127.0.0.1', port: fleet.server.port, auth: 'bearer' } }]);
    service.enter({ phase: 'creating' });
    const text = (await httpAnswer(fleet.server.port, '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).body;
    const lines = text.split('\n').filter((l) => /^avatar_kiosk_(app_restarts|errors|sessions_started|info)/.test(l));
    assert.deepEqual(lines, [
      'avatar_kiosk_sessions_started_total 1',
      'avatar_kiosk_app_restarts_total 4',
      'avatar_kiosk_errors_total{code="invalid_config"} 1',
      'avatar_kiosk_errors_total{code="network"} 1',
      'avatar_kiosk_info{version="5.0.0",mode="direct"} 1',
    ]);
    assert.equal(fleet.metrics.health().lastErrorCode, 'network');
    await fleet.close();
    assert.deepEqual(service.listening(), { events: 0, causes: 0 });
    await assert.rejects(httpAnswer(fleet.server.port, '/healthz'), { code: 'ECONNREFUSED' });
  });

  it('on without start-up errors: none recorded', async () => {
    const dir = tempDir();
    const fleet = await startFleetMetrics({ config: { metrics: { enabled: true, host: '127.0.0.1', port: 0 } }, service: scriptedMetricsSource(), version: '5.0.0', launchStatePath: join(dir, 'l.json') });
    assert.ok(fleet);
    const answer = await httpAnswer(fleet.server.port, '/metrics');
    assert.deepEqual(answer.body.split('\n').filter((l) => l.startsWith('avatar_kiosk_errors')), []);
    assert.equal(fleet.metrics.health().lastErrorCode, null);
    await fleet.close();
  });

  it('a server that cannot start is logged and answered null, and the service is let go', async () => {
    const dir = tempDir();
    const taken = await serve();
    for (const [metricsConfig, error] of [
      [{ enabled: true, host: '127.0.0.1', port: taken.port }, `listen EADDRINUSE: address already in use 127.0.0.1:${taken.port}`],
      [{ enabled: true, host: '0.0.0.0', port: 0 }, 'Metrics on "0.0.0.0" need metrics.token: only loopback addresses may serve them without one.'],
    ] as const) {
      const service = scriptedMetricsSource();
      const logger = recordingLogger();
      const fleet = await startFleetMetrics({ config: { metrics: metricsConfig }, service, version: '1', launchStatePath: join(dir, 'launches.json'), logger });
      assert.equal(fleet, null);
      assert.deepEqual(logger.lines, [{ level: 'error', message: 'The metrics endpoint could not start; the kiosk runs without it', data: { error } }]);
      assert.deepEqual(service.listening(), { events: 0, causes: 0 });
    }
  });
});
