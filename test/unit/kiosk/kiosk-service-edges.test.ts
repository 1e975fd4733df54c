/**
 * KioskService at its edges: a warning before a refused create and the call's figures, a key handed over
 * with no source, the built-in emulator refusing to close at shutdown, another service URL fetched
 * through the venue's proxy, a spare whose socket throws as the tap closes it, and a spare failing at the tap in
 * the instant the kiosk starts to shut down.
 * The stub emulator where no call is made; the real one (127.0.0.1:0, FakeClock) where one is.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { CHANNELS, type Result } from '../../../electron/contract.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { createKioskService, type KioskServiceOptions } from '../../../electron/kiosk/kiosk-service.ts';
import { wsTransportFactory, type TransportFactory } from '../../../electron/core/transport.ts';
import { kioskOnEmulatorPerTest, kioskOnSlowEmulator, shutDownAfterEach, TINY_PNG, value } from '../../helpers/kiosk-on-emulator.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { stubEmulator } from '../../helpers/stub-emulator.ts';
import { advanceUntil, driveUntilSettled, until } from '../../helpers/until.ts';

const { setup } = kioskOnEmulatorPerTest();
const track = shutDownAfterEach();

/** A kiosk on the stub emulator (nothing answers it), with its log recorded. */
async function stubKiosk(options: Partial<KioskServiceOptions> = {}) {
  const emu = stubEmulator();
  const logger = recordingLogger();
  const service = await createKioskService({
    config: resolveConfig({ avatar: { imagePath: TINY_PNG, persona: 'P' } }, {}),
    apiKey: null,
    apiKeySource: 'none',
    startEmulator: emu.start,
    loadAvatarImage: async () => null,
    logger,
    ...options,
  });
  return { service, emu, logger };
}

describe('the figures of a tap refused after a warning', () => {
  it('the warning (a long avatar name) reaches the renderer; the figures still name no live id (null, not missing)', async () => {
    const name = 'Professor Archibald Longname';
    const h = await setup({ config: { avatar: { imagePath: TINY_PNG, persona: 'A test persona.', name } } });
    h.emu.setBalance(h.emu.apiKey, 0);
    assert.deepEqual(await h.service.handle(CHANNELS.sessionStart, {}), { ok: true, value: { liveId: null } });
    await h.reach('failed');
    assert.deepEqual(
      h.events.flatMap((e) => (e.type === 'warning' ? [e.message] : e.type === 'credentials' ? [`credentials:${e.liveId}`] : [])),
      [`The avatar name "${name}" has ${[...name].length} characters; 20 or fewer are recommended.`],
    );
    // Exactly null: an undefined live id would vanish from the JSON the ledger and /metrics are made of.
    const figures = h.events.flatMap((e) => (e.type === 'call-figures' ? [e.figures] : []));
    assert.deepEqual(figures.map((f) => [f.liveId, f.endReason]), [[null, 'insufficient_credits']]);
    assert.strictEqual(h.service.lastCallFigures?.liveId, null);
  });
});

describe('the key and its source', () => {
  it('a key handed over with source "none" is not used: demo mode on the emulator, no key reported', async () => {
    const { service, emu } = await stubKiosk({ apiKey: 'sk-edges-NONE-0123456789', apiKeySource: 'none' });
    assert.equal(service.mode, 'demo');
    assert.equal(emu.calls.started, 1);
    const pc = value(await service.getConfig());
    assert.deepEqual([pc.mode, pc.hasApiKey, pc.apiKeySource], ['demo', false, 'none']);
    await service.shutdown();
  });
});

describe('shutdown and the built-in emulator', () => {
  it('an emulator that does not close cleanly: shutdown completes all the same, with one warning naming the error', async () => {
    const { service, emu, logger } = await stubKiosk();
    emu.handle.close = async () => {
      throw new Error('port still busy');
    };
    await service.shutdown();
    assert.equal(service.emulator, null);
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'warn' || l.level === 'error'),
      [{ level: 'warn', message: 'Emulator did not close cleanly', data: { error: 'Error: port still busy' } }],
    );
    await service.shutdown(); // shares the first: no second close, no second warning
    assert.equal(logger.lines.filter((l) => l.level === 'warn').length, 1);
  });
});

describe('settings after shutdown began', () => {
  it('reconfigure is refused once the kiosk shuts down: no emulator started again, the settings unchanged', async () => {
    const { service, emu } = await stubKiosk();
    const events: string[] = [];
    service.onEvent((e) => events.push(e.type));
    await service.shutdown();
    const next = resolveConfig({ avatar: { imagePath: TINY_PNG, persona: 'Another persona.' } }, {});
    await assert.rejects(service.reconfigure(next), { code: 'cancelled', message: 'The kiosk is shutting down.' });
    assert.deepEqual(emu.calls, { started: 1, closed: 1 });
    assert.equal(service.emulator, null);
    assert.equal(service.config.avatar.persona, 'P');
    assert.deepEqual(events, []);
  });

  it('a key being stored when shutdown begins builds no new client: the closed emulator is not started again', async () => {
    let stored!: () => void;
    const persisted = new Promise<void>((resolve) => (stored = resolve));
    const { service, emu, logger } = await stubKiosk({ persistApiKey: () => persisted });
    const setting = service.setApiKey({ apiKey: null });
    await service.shutdown();
    stored();
    await setting;
    assert.deepEqual(emu.calls, { started: 1, closed: 1 });
    assert.equal(service.emulator, null);
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
    const { service } = await stubKiosk({ proxy: { resolve: async (url) => (asked.push(url), `PROXY ${proxyUrl}`) } });
    try {
      const res = await service.fetch('http://leftover.invalid:8080/v1/live/status?id=L9');
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'leftover answered GET /v1/live/status?id=L9');
      assert.deepEqual(connects, ['leftover.invalid:8080']);
      assert.deepEqual(asked, ['http://leftover.invalid:8080/']);
    } finally {
      await service.shutdown();
      for (const s of sockets) s.destroy();
      target.closeAllConnections();
      await Promise.all([target, proxy].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    }
  });
});

describe('spares after a call that failed once its room existed', () => {
  it('a control socket refused (401) after a successful create does not stop spares: only a create’s refusal does', async () => {
    let refuse = true;
    // The service refuses the call's socket: the handshake goes out without its credentials.
    const factory: TransportFactory = (url, headers, handlers) =>
      wsTransportFactory(url, refuse ? Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization')) : headers, handlers);
    const h = await setup({ config: { prewarm: { mode: 'on-approach' } }, service: { transportFactory: factory } });
    const liveId = await h.tap();
    await h.reach('failed');
    const end = h.service.state;
    assert.ok(end.phase === 'failed');
    assert.deepEqual([end.liveId, end.error.code], [liveId, 'unauthorized']);
    await until(() => !h.service.running);
    refuse = false;
    assert.equal(h.service.spares.blockedBy, null);
    value(await h.service.handle(CHANNELS.attractReport, { showing: true, present: true }));
    assert.equal(h.service.spares.phase, 'creating', 'a spare is made for the next visitor');
    await until(() => h.service.spares.phase === 'ready', { message: 'spare ready' });
    assert.deepEqual(h.spareLog().map(([status]) => status), ['created']);
    assert.equal(h.warnings.some((l) => l.includes('spare: stopped until a create succeeds')), false);
  });
});

describe('a spare that cannot be closed cleanly at the tap', () => {
  it('its socket throws as it is closed for the other call mode: one warning naming the error, and the tap takes the normal path', async () => {
    let made = 0;
    // The first socket made is the spare's: it closes (the service hears it) and then throws.
    const factory: TransportFactory = (url, headers, handlers) => {
      const inner = wsTransportFactory(url, headers, handlers);
      if (++made > 1) return inner;
      return {
        send: (text) => inner.send(text),
        close(code, reason) {
          inner.close(code, reason);
          throw new Error('close failed');
        },
        terminate() {
          inner.terminate();
          throw new Error('terminate failed');
        },
        get isOpen() {
          return inner.isOpen;
        },
      };
    };
    const logger = recordingLogger();
    const h = await setup({ config: { prewarm: { mode: 'always' }, allowModeChoice: true }, service: { transportFactory: factory, logger } });
    value(await h.service.handle(CHANNELS.attractReport, { showing: true, present: true }));
    await until(() => h.service.spares.phase === 'ready', { message: 'spare ready' });
    const spareId = h.spareLog().find(([status]) => status === 'created')?.[1];
    assert.ok(spareId);
    value(await h.service.handle(CHANNELS.attractReport, { showing: false, present: true }));
    const liveId = await h.tap({ callMode: 'video' });
    assert.notEqual(liveId, spareId, 'a fresh room for the tap');
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'warn' || l.level === 'error'),
      [{ level: 'warn', message: 'Could not take the spare session', data: { error: 'Error: close failed' } }],
    );
    assert.deepEqual(
      h.emu.listSessions().map((s) => [s.id, (s.request as { call_mode: string }).call_mode]),
      [
        [spareId, 'audio'],
        [liveId, 'video'],
      ],
      'one create for the tap, in the mode it asked for',
    );
    await until(() => h.hangupsSeen(spareId) === 1, { message: 'the spare closed with type 5' });
    assert.equal(h.session(spareId).connInits, 0, 'the spare never went live');
  });
});

/** The real `ws` transport with everything it reports held back while `hold` is on, then played in order. */
function gatedTransports() {
  let holding = false;
  const held: Array<{ kind: string; text: string; play: () => void }> = [];
  const pass = (kind: string, text: string, play: () => void) => (holding ? held.push({ kind, text, play }) : play());
  const factory: TransportFactory = (url, headers, handlers) =>
    wsTransportFactory(url, headers, {
      onOpen: () => pass('open', '', () => handlers.onOpen()),
      onMessage: (data, isBinary) => pass('message', typeof data === 'string' ? data : '', () => handlers.onMessage(data, isBinary)),
      onClose: (code, reason) => pass('close', reason, () => handlers.onClose(code, reason)),
      onError: (error) => pass('error', error.message, () => handlers.onError(error)),
    });
  return {
    factory,
    held,
    hold: () => void (holding = true),
    release() {
      holding = false;
      for (const h of held.splice(0)) h.play();
    },
  };
}

describe('a spare failing at the tap as the kiosk shuts down', () => {
  it('no fresh room is made for the tap: the failed spare is the last call, and the service holds only its room', async () => {
    const gate = gatedTransports();
    const h = track(await kioskOnSlowEmulator({ service: { transportFactory: gate.factory } }));
    value(await h.service.handle(CHANNELS.attractReport, { showing: true, present: true }));
    await advanceUntil(h.clock, () => h.service.spares.phase === 'ready', { stepMs: 10, message: 'spare ready' });
    value(await h.service.handle(CHANNELS.attractReport, { showing: false, present: true }));
    h.emu.knobs.initFailure = true; // the spare's first conn_init is refused (LIVE_CONN_INIT_FAILED)
    const r = (await driveUntilSettled(h.clock, h.service.handle(CHANNELS.sessionStart, {}), { stepMs: 10 })) as Result<{ liveId: string | null }>;
    const spareId = value(r).liveId;
    assert.ok(spareId);
    // The refusal is on its way back when the kiosk starts to quit: it arrives right after shutdown begins.
    gate.hold();
    value(await h.service.handle(CHANNELS.sessionRtcReady, { liveId: spareId }));
    await advanceUntil(h.clock, () => gate.held.some((e) => e.text.includes('LIVE_CONN_INIT_FAILED')), { stepMs: 10, message: 'the refusal' });
    const closing = h.service.shutdown();
    gate.release();
    assert.deepEqual(h.uiLog(), [`credentials:${spareId}`], 'no new session started');
    await driveUntilSettled(h.clock, closing, { stepMs: 10 });
    assert.deepEqual(h.emu.listSessions().map((s) => s.id), [spareId], 'no second room on the service');
    assert.deepEqual(h.spareLog(), [
      ['created', spareId, undefined],
      ['failed', spareId, 'init_failed'],
    ]);
    assert.equal(h.service.running, false);
    await until(() => h.service.state.phase === 'failed');
  });
});
