/**
 * The service connection (electron/kiosk/service-connection.ts): which service the kiosk talks to for its
 * key (the built-in emulator only without one), another service URL fetched the way the client is routed
 * (the venue's proxy), what shutdown closes: the emulator once, and nothing built again after it, the
 * keep-alive each client starts with, and the warm connection's timer. The stub emulator: nothing here
 * makes a call.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { CHANNELS } from '../../../electron/contract.ts';
import { KEEP_ALIVE_STYLE_LABELS, KeepAlive } from '../../../electron/core/keep-alive.ts';
import { silentLogger } from '../../../electron/core/log.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { StrictClock } from '../../helpers/fake-clock.ts';
import { stubKiosk } from '../../helpers/stub-kiosk.ts';

const KEY = 'sk-unit-SECRET-9f8e7d6c5b4a';
const cfg = (raw: Record<string, unknown> = {}) => resolveConfig({ avatar: { imagePath: '/nonexistent.png', persona: 'P' }, ...raw }, {});

describe('which service, for which key', () => {
  it('demo ↔ direct: the emulator starts only without a key and stops when one is set', async () => {
    const persisted: (string | null)[] = [];
    const { kiosk, emu } = await stubKiosk({
      awaitRendererRtc: false,
      config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }),
      loadAvatarImage: undefined,
      persistApiKey: async (k) => void persisted.push(k),
    });
    assert.equal(kiosk.connection.mode, 'demo');
    assert.equal(emu.calls.started, 1);
    const r = await kiosk.key.set(KEY);
    assert.equal(r.ok && kiosk.connection.mode, 'direct');
    assert.equal(emu.calls.closed, 1);
    assert.equal(kiosk.connection.emulator, null);
    await kiosk.key.set(null);
    assert.equal(emu.calls.started, 2);
    assert.deepEqual(persisted, [KEY, null]);
    await kiosk.shutdown();
    assert.equal(emu.calls.closed, 2);
  });
});

describe('shutdown closes the built-in emulator', () => {
  it('an emulator that does not close cleanly: shutdown completes all the same, with one warning naming the error', async () => {
    const { kiosk, emu, logger } = await stubKiosk();
    emu.handle.close = async () => {
      throw new Error('port still busy');
    };
    await kiosk.shutdown();
    assert.equal(kiosk.connection.emulator, null);
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'warn' || l.level === 'error'),
      [{ level: 'warn', message: 'Emulator did not close cleanly', data: { error: 'Error: port still busy' } }],
    );
    await kiosk.shutdown(); // shares the first: no second close, no second warning
    assert.equal(logger.lines.filter((l) => l.level === 'warn').length, 1);
  });

  it('a key being stored when shutdown begins builds no new client: the closed emulator is not started again', async () => {
    let stored!: () => void;
    const persisted = new Promise<void>((resolve) => (stored = resolve));
    const { kiosk, emu, logger } = await stubKiosk({ persistApiKey: () => persisted });
    const setting = kiosk.key.set(null);
    await kiosk.shutdown();
    stored();
    await setting;
    assert.deepEqual(emu.calls, { started: 1, closed: 1 });
    assert.equal(kiosk.connection.emulator, null);
    assert.equal(logger.lines.filter((l) => l.message === 'Service client ready').length, 1, 'only the client made at start-up');
  });
});

describe('fetch for another service URL', () => {
  it('goes through the venue’s proxy, as the client does (a CONNECT to that host)', async () => {
    // The "other service": a plain HTTP server that only the proxy can reach (its name resolves nowhere).
    const target = http.createServer((req, res) => res.end(`leftover answered ${req.method} ${req.url}`));
    const connects: string[] = [];
    const sockets = new Set<net.Socket>();
    const proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      connects.push(req.url ?? '');
      const upstream = net.connect((target.address() as net.AddressInfo).port, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => sockets.delete(s));
      }
    });
    await Promise.all([target, proxy].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
    const asked: string[] = [];
    const proxyUrl = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const { kiosk } = await stubKiosk({ proxy: { resolve: async (url) => (asked.push(url), `PROXY ${proxyUrl}`) } });
    try {
      const res = await kiosk.connection.fetch('http://leftover.invalid:8080/v1/live/status?id=L9');
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'leftover answered GET /v1/live/status?id=L9');
      assert.deepEqual(connects, ['leftover.invalid:8080']);
      assert.deepEqual(asked, ['http://leftover.invalid:8080/']);
    } finally {
      await kiosk.shutdown();
      for (const s of sockets) s.destroy();
      target.closeAllConnections();
      await Promise.all([target, proxy].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    }
  });
});

describe('the keep-alive each service accepts', () => {
  it('is the one remembered for the service’s address, shared by the calls and spares of that client', async () => {
    const remembered = new KeepAlive({ logger: silentLogger });
    const asked: string[] = [];
    const { kiosk, emu } = await stubKiosk({ keepAliveFor: (url) => (asked.push(url), remembered) });
    assert.equal(kiosk.connection.keepAlive, remembered);
    assert.deepEqual(asked, [emu.handle.baseUrl]);
    await kiosk.shutdown();
  });

  it('without a memory of it: a fresh one for each client', async () => {
    const { kiosk } = await stubKiosk();
    const first = kiosk.connection.keepAlive;
    assert.ok(first instanceof KeepAlive);
    await kiosk.reconfigure(kiosk.config);
    assert.ok(kiosk.connection.keepAlive instanceof KeepAlive);
    assert.notEqual(kiosk.connection.keepAlive, first);
    await kiosk.shutdown();
  });

  it('a fresh one tells the operator when the service refuses a keep-alive style', async () => {
    const { kiosk, logger } = await stubKiosk();
    const next = kiosk.connection.keepAlive.refused('pong-message', 1008);
    assert.ok(next);
    const warnings = logger.lines.filter((l) => l.level === 'warn').map((l) => [l.message, l.data]);
    assert.deepEqual(warnings, [[`control socket: the service closed the socket (1008) right after our keep-alive; the next connection sends ${KEEP_ALIVE_STYLE_LABELS[next]}`, { from: 'pong-message', to: next, code: 1008 }]]);
    await kiosk.shutdown();
  });
});

describe('the warm connection’s timer', () => {
  it('is cleared only when it was set: showing, hiding and closing clear no handle the clock never gave', async () => {
    const clock = new StrictClock(1_700_000_000_000);
    const { kiosk, channels } = await stubKiosk({ clock, config: cfg({ prewarm: { mode: 'off' } }) });
    await channels.dispatch(CHANNELS.attractReport, { showing: false, present: false });
    await channels.dispatch(CHANNELS.attractReport, { showing: true, present: false });
    await channels.dispatch(CHANNELS.attractReport, { showing: false, present: false });
    await kiosk.shutdown();
    assert.deepEqual(clock.foreignClears, []);
  });
});
