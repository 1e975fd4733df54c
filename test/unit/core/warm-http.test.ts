/**
 * The fast-start connection: `nodeFetch` (the fetch subset ServiceClient uses, over node:http),
 * `WarmHttp` (a pre-connected keep-alive agent) and the create-request cache. Against a local HTTP server
 * on port 0 that counts its TCP connections.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { createCachedRequestBuilder } from '../../../electron/core/request-cache.ts';
import type { StartOptions } from '../../../electron/core/session-types.ts';
import { nodeFetch, WarmHttp } from '../../../electron/core/warm-http.ts';
import { until } from '../../helpers/until.ts';

let server: http.Server;
let baseUrl: string;
let connections = 0;
const seen: Array<{ method: string; url: string; body: string; headers: http.IncomingHttpHeaders }> = [];

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/elsewhere' });
        return res.end();
      }
      if (req.url === '/empty') {
        res.writeHead(204);
        return res.end();
      }
      if (req.url === '/slow') return; // never answers
      if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { code: 'not_found' } }));
      }
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
      res.end(JSON.stringify({ echo: body, method: req.method }));
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('nodeFetch', () => {
  const noAgent = () => undefined;

  it('sends method, headers and a string body; returns status, headers and text', async () => {
    const res = await nodeFetch(`${baseUrl}/lives`, { method: 'POST', headers: { Authorization: 'Token k', 'Content-Type': 'application/json' }, body: '{"a":1}' }, noAgent);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { echo: '{"a":1}', method: 'POST' });
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('set-cookie'), 'a=1, b=2');
    const last = seen.at(-1)!;
    assert.equal(last.headers.authorization, 'Token k');
    assert.equal(last.headers['content-length'], '7');
  });

  it('returns error statuses and does not follow redirects', async () => {
    const missing = await nodeFetch(`${baseUrl}/missing`, { method: 'GET' }, noAgent);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: { code: 'not_found' } });
    const redirect = await nodeFetch(`${baseUrl}/redirect`, { method: 'POST', body: '{}' }, noAgent);
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.get('location'), '/elsewhere');
    assert.equal(seen.filter((s) => s.url === '/elsewhere').length, 0);
    const empty = await nodeFetch(`${baseUrl}/empty`, undefined, noAgent);
    assert.equal(empty.status, 204);
    assert.equal(await empty.text(), '');
  });

  it('rejects with an AbortError when the signal aborts', async () => {
    const controller = new AbortController();
    const pending = nodeFetch(`${baseUrl}/slow`, { signal: controller.signal }, noAgent);
    await until(() => seen.some((s) => s.url === '/slow'));
    controller.abort();
    await assert.rejects(pending, (error: Error) => error.name === 'AbortError');
  });

  it('rejects on a connection failure', async () => {
    await assert.rejects(nodeFetch('http://127.0.0.1:1/x', undefined, noAgent), (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED');
  });
});

describe('WarmHttp', () => {
  it('pre-connects, and the next requests use that connection (no new connection on the tap)', async () => {
    const warm = new WarmHttp({ baseUrl });
    try {
      const before = connections;
      await warm.warm();
      await until(() => connections === before + 1);
      assert.equal(warm.isWarm, true);
      await warm.warm(); // already warm: nothing new
      assert.equal(connections, before + 1);
      const a = await warm.fetch(`${baseUrl}/lives`, { method: 'POST', body: '{}' });
      assert.equal(a.status, 200);
      await a.text();
      const b = await warm.fetch(`${baseUrl}/lives/x`);
      await b.text();
      assert.equal(connections, before + 1, 'the create and the next request rode the pre-connected socket');
      assert.equal(warm.reused, 1);
      assert.equal(warm.isWarm, false, 'the parked connection was taken');
    } finally {
      warm.close();
    }
  });

  it('replaces a parked connection older than maxParkedMs', async () => {
    const clock = new FakeClock();
    const warm = new WarmHttp({ baseUrl, clock, maxParkedMs: 30_000 });
    try {
      const before = connections;
      await warm.warm();
      await clock.advance(30_000);
      assert.equal(warm.isWarm, false);
      await warm.warm();
      await until(() => connections === before + 2);
      assert.equal(warm.isWarm, true);
    } finally {
      warm.close();
    }
  });

  it('sends requests to other origins without the agent', async () => {
    const warm = new WarmHttp({ baseUrl: 'http://127.0.0.1:1' });
    try {
      const res = await warm.fetch(`${baseUrl}/lives`);
      assert.equal(res.status, 200);
      assert.equal(warm.reused, 0);
    } finally {
      warm.close();
    }
  });
});

describe('createCachedRequestBuilder', () => {
  const options: StartOptions = { callMode: 'audio', avatar: { persona: 'p', image: '/img/a.png', name: 'Ava' } };

  it('builds once per options and file stamp, and again when the file changes', async () => {
    let builds = 0;
    let stamp = '10:1';
    const build = createCachedRequestBuilder({
      build: async (o) => {
        builds += 1;
        return { request: { call_mode: o.callMode, avatar: { persona: o.avatar.persona, image_uri: `data:image/png;base64,${builds}` } }, warnings: ['w'] };
      },
      fileStamp: async () => stamp,
    });
    const a = await build(options);
    const b = await build({ ...options });
    assert.equal(builds, 1);
    assert.deepEqual(a, b);
    a.request.avatar.persona = 'mutated';
    assert.equal((await build(options)).request.avatar.persona, 'p', 'callers get copies');
    stamp = '11:2';
    assert.equal((await build(options)).request.avatar.image_uri, 'data:image/png;base64,2');
    await build({ ...options, callMode: 'video' });
    assert.equal(builds, 3);
  });

  it('does not cache an unreadable file (the builder reports it)', async () => {
    let builds = 0;
    const build = createCachedRequestBuilder({
      build: async () => {
        builds += 1;
        throw new Error('cannot read');
      },
      fileStamp: async () => null,
    });
    await assert.rejects(build(options));
    await assert.rejects(build(options));
    assert.equal(builds, 2);
  });
});
