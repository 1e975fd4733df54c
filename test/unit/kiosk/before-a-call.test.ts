/**
 * The kiosk before any call: what the renderer is told (the appearance's PublicConfig), which service
 * client the connection builds for which key and surface, and which taps the call orchestrator refuses up
 * front (with the exact code and message).
 * No network: a stub emulator answers demo mode, and nothing here creates a session.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHANNELS, type AttentionItem, type KioskEvent, type Result } from '../../../electron/contract.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { createLogger } from '../../../electron/core/log.ts';
import { resolveConfig, DEFAULT_COMPANION_SHORTCUT, type KioskConfig } from '../../../electron/kiosk/config.ts';
import { readImageAsDataUrl } from '../../../electron/kiosk/appearance.ts';
import { createChannelRegistry } from '../../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk, type KioskOptions } from '../../../electron/kiosk/compose.ts';
import { FakeTransports } from '../../helpers/fake-transport.ts';
import { stubEmulator } from '../../helpers/stub-emulator.ts';
import { realDelay, until } from '../../helpers/until.ts';

const KEY = 'sk-unit-CONFIG-5e4d3c2b1a09';
// Two real one-pixel PNGs (the cast check builds a create request from each picture).
const PNG_A = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PNG_B = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const cfg = (raw: Record<string, unknown> = {}): KioskConfig => resolveConfig({ avatar: { imagePath: '/nonexistent.png', persona: 'P' }, ...raw }, {});

interface Made {
  kiosk: Kiosk;
  dispatch: ReturnType<typeof createChannelRegistry>['dispatch'];
  events: KioskEvent[];
  lines: string[];
  emu: ReturnType<typeof stubEmulator>;
}

async function make(options: Partial<KioskOptions> = {}): Promise<Made> {
  const lines: string[] = [];
  const emu = stubEmulator();
  const channels = createChannelRegistry();
  const kiosk = await createKiosk({
    channels,
    config: cfg(),
    apiKey: null,
    apiKeySource: 'none',
    startEmulator: emu.start,
    loadAvatarImage: async () => null,
    logger: createLogger({ level: 'debug', sink: (l) => lines.push(l) }),
    ...options,
  });
  const events: KioskEvent[] = [];
  kiosk.events.onEvent((e) => events.push(e));
  return { kiosk, dispatch: channels.dispatch, events, lines, emu };
}

function value<T>(r: Result<T>): T {
  assert.equal(r.ok, true, JSON.stringify(r));
  return (r as { ok: true; value: T }).value;
}

function failure(r: Result<unknown>): { code: string; message: string } {
  assert.equal(r.ok, false, JSON.stringify(r));
  const { code, message } = (r as { ok: false; error: { code: string; message: string } }).error;
  return { code, message };
}

const logged = (lines: string[], level: string, text: string) => lines.some((l) => l.includes(` ${level} `) && l.includes(text));

describe('the attract picture', () => {
  it('reads a picture of ordinary size, and refuses one over 20 MiB before reading it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-img-size-'));
    const photo = join(dir, 'photo.png');
    writeFileSync(photo, Buffer.alloc(64 * 1024, 7));
    const url = await readImageAsDataUrl(photo);
    assert.equal(url, `data:image/png;base64,${Buffer.alloc(64 * 1024, 7).toString('base64')}`);
    const huge = join(dir, 'huge.png');
    writeFileSync(huge, '');
    truncateSync(huge, 20 * 1024 * 1024 + 1); // sparse: nothing is written
    await assert.rejects(readImageAsDataUrl(huge), /The avatar picture/);
  });

  it('a picture that cannot be read gives imageDataUrl null (attract screen without it), told to the operator', async () => {
    const m = await make({ loadAvatarImage: async () => Promise.reject(new Error('EACCES: permission denied')) });
    const pc = value(await m.kiosk.appearance.getConfig());
    assert.strictEqual(pc.avatar.imageDataUrl, null);
    assert.strictEqual(pc.cast[0]!.imageDataUrl, null);
    assert.ok(m.lines.some((l) => l.includes(' WARN Could not load the avatar image for the attract screen') && l.includes('EACCES')), m.lines.join('\n'));
    await m.kiosk.shutdown();
  });

  it('each cast member shows its own picture; the one shared with the avatar block is read once', async () => {
    const reads: string[] = [];
    const config = cfg({ avatar: { imagePath: PNG_A, persona: 'P' }, avatars: [{ id: 'ava', name: 'Ava', imagePath: PNG_A }, { id: 'bo', name: 'Bo', imagePath: PNG_B }] });
    const m = await make({ config, loadAvatarImage: async (p) => (reads.push(p), `shown:${p}`) });
    const pc = value(await m.kiosk.appearance.getConfig());
    assert.deepEqual(pc.cast.map((c) => [c.id, c.imageDataUrl]), [['ava', `shown:${PNG_A}`], ['bo', `shown:${PNG_B}`]]);
    assert.deepEqual(pc.avatar, { name: 'Ava', imageDataUrl: `shown:${PNG_A}`, voice: config.avatar.voice });
    assert.deepEqual(reads, [PNG_A, PNG_B]);
    await m.kiosk.shutdown();
  });
});

describe('PublicConfig', () => {
  it('a stored key: direct mode, source stored, not weakly protected unless told so', async () => {
    const m = await make({ config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }), apiKey: KEY, apiKeySource: 'stored' });
    const pc = value(await m.kiosk.appearance.getConfig());
    assert.deepEqual([pc.mode, pc.hasApiKey, pc.apiKeySource, pc.apiKeyWeaklyProtected], ['direct', true, 'stored', false]);
    assert.equal(m.emu.calls.started, 0, 'no emulator with a key');
    await m.kiosk.shutdown();
  });

  it('the video fit follows the screen the kiosk was told of; companion, opening and hold are reported as they are', async () => {
    const wide = { window: { mode: 'kiosk', width: 1920, height: 1080 } };
    const m = await make({ portrait: true, config: cfg(wide) });
    const pc = value(await m.kiosk.appearance.getConfig());
    assert.deepEqual(pc.video, { fit: 'cover' }, 'a portrait screen fills with the face');
    assert.deepEqual(pc.companion, { pushToTalk: false, shortcut: DEFAULT_COMPANION_SHORTCUT });
    assert.deepEqual(pc.opening, { open: true, nextOpenAt: null, timeZone: null });
    assert.equal(pc.hold, null);
    await m.kiosk.shutdown();
    const landscape = await make({ config: cfg(wide) });
    assert.deepEqual(value(await landscape.kiosk.appearance.getConfig()).video, { fit: 'contain' }, 'told nothing: the configured window decides');
    await landscape.kiosk.shutdown();
  });

  it('synthetic devices only in demo mode and only when asked for', async () => {
    const cases: Array<[Partial<KioskOptions>, boolean]> = [
      [{ demoDevices: true }, true],
      [{}, false],
      [{ demoDevices: false }, false],
      [{ demoDevices: true, config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }), apiKey: KEY, apiKeySource: 'env' }, false],
    ];
    for (const [options, expected] of cases) {
      const m = await make(options);
      assert.equal(value(await m.kiosk.appearance.getConfig()).demoDevices, expected, JSON.stringify({ ...options, config: undefined }));
      await m.kiosk.shutdown();
    }
  });

  it('start-up problems given at creation reach staff (count in PublicConfig, items in attention); none means zero', async () => {
    const item: AttentionItem = { kind: 'config', code: 'invalid_config', message: 'config.json: "window.mode" is invalid; the default is used.' };
    const m = await make({ startupAttention: [item] });
    assert.deepEqual(m.kiosk.appearance.attention, [item]);
    assert.equal(value(await m.kiosk.appearance.getConfig()).attention, 1);
    await m.kiosk.shutdown();
    const clean = await make();
    assert.deepEqual(clean.kiosk.appearance.attention, []);
    assert.equal(value(await clean.kiosk.appearance.getConfig()).attention, 0);
    await clean.kiosk.shutdown();
  });
});

describe('a cast member that cannot be used', () => {
  const config = () => cfg({ avatars: [{ id: 'ava', name: 'Ava', imagePath: PNG_A }, { id: 'bo', name: 'Bo', imagePath: '/nonexistent/bo.png' }] });

  it('is left out of the cast, told to staff and the operator, and a tap on it is refused with its problem', async () => {
    const m = await make({ config: config() });
    const problems = m.kiosk.appearance.castProblems;
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.code, 'invalid_config');
    assert.match(problems[0]!.message, /^The avatar "Bo" \(avatars\.1, id "bo"\) cannot be used: /);
    assert.deepEqual(m.kiosk.appearance.attention, [{ kind: 'cast', code: 'invalid_config', message: `${problems[0]!.message} The other avatars are available; fix the configuration and restart.` }]);
    const pc = value(await m.kiosk.appearance.getConfig());
    assert.equal(pc.attention, 1);
    assert.deepEqual(pc.cast.map((c) => c.id), ['ava']);
    assert.ok(m.lines.some((l) => l.includes(' ERROR An avatar of the cast cannot be used') && l.includes('The avatar \\"Bo\\"')), m.lines.join('\n'));
    const r = failure(await m.kiosk.calls.start({ avatarId: 'bo' }));
    assert.deepEqual(r, { code: 'invalid_config', message: problems[0]!.message });
    assert.equal(m.kiosk.calls.running, false);
    await m.kiosk.shutdown();
  });
});

describe('the service client', () => {
  it('without a stored key the kiosk cannot keep one: storing one fails as internal and demo mode stays', async () => {
    const m = await make({ persistApiKey: undefined });
    const r = failure(await m.kiosk.key.set(KEY));
    assert.deepEqual(r, { code: 'internal', message: 'Could not store the API key: This kiosk cannot store an API key.' });
    assert.equal(m.kiosk.connection.mode, 'demo');
    assert.equal(m.emu.calls.closed, 0);
    await m.kiosk.shutdown();
  });

  it('the operator is told which service the kiosk talks to: the built-in emulator (demo) or the configured one', async () => {
    const demo = await make();
    assert.ok(demo.lines.some((l) => l.includes(' INFO Demo mode: no API key configured; using the built-in emulator') && l.includes('http://127.0.0.1:9')), demo.lines.join('\n'));
    assert.ok(demo.lines.some((l) => l.includes(' INFO Service client ready') && l.includes('"mode":"demo"')), demo.lines.join('\n'));
    await demo.kiosk.shutdown();
    const direct = await make({ config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }), apiKey: KEY, apiKeySource: 'env' });
    assert.ok(direct.lines.some((l) => l.includes(' INFO Service client ready') && l.includes('"mode":"direct"')), direct.lines.join('\n'));
    assert.equal(direct.lines.some((l) => l.includes('Demo mode')), false);
    await direct.kiosk.shutdown();
  });

  it('an emulator that does not close cleanly when a key is set: direct mode all the same, and a warning', async () => {
    const m = await make({ persistApiKey: async () => {}, config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }) });
    m.emu.handle.close = async () => {
      throw new Error('server busy');
    };
    value(await m.kiosk.key.set(KEY));
    assert.equal(m.kiosk.connection.mode, 'direct');
    assert.equal(m.kiosk.connection.emulator, null);
    assert.ok(m.lines.some((l) => l.includes(' WARN Emulator did not close cleanly') && l.includes('server busy')), m.lines.join('\n'));
    await m.kiosk.shutdown();
  });

  it('clearing a key that was never set keeps the running emulator (not restarted)', async () => {
    const m = await make({ persistApiKey: async () => {} });
    const first = m.kiosk.connection.emulator;
    assert.ok(first);
    value(await m.kiosk.key.set(null));
    assert.equal(value(await m.kiosk.appearance.getConfig()).mode, 'demo');
    assert.deepEqual(m.emu.calls, { started: 1, closed: 0 });
    assert.strictEqual(m.kiosk.connection.emulator, first);
    await m.kiosk.shutdown();
  });

  it('a gateway header holding the service key is refused: no client, and a tap answers why', async () => {
    const config = cfg({ service: { surface: 'gateway', gatewayUrl: 'https://gw.example.com' } });
    config.service.gatewayHeaders = { 'x-site': 'lobby', authorization: `Bearer ${KEY}` };
    const m = await make({ config, apiKey: KEY, apiKeySource: 'env' });
    assert.equal(m.kiosk.connection.mode, 'gateway');
    assert.equal(m.kiosk.connection.client, null);
    const r = failure(await m.kiosk.calls.start());
    assert.deepEqual(r, { code: 'invalid_config', message: 'A gateway header holds the service API key; the gateway adds the key itself. Use a per-kiosk token.' });
    assert.ok(
      m.lines.some((l) => l.includes(' ERROR The service configuration is invalid; sessions cannot start until it is fixed') && l.includes('A gateway header holds the service API key')),
      m.lines.join('\n'),
    );
    await m.kiosk.shutdown();
  });

  it('a gateway with its own device token works alongside a key the kiosk holds', async () => {
    const config = cfg({ service: { surface: 'gateway', gatewayUrl: 'https://gw.example.com' } });
    config.service.gatewayHeaders = { 'x-site': 'lobby', authorization: 'Bearer device-token-77' };
    const m = await make({ config, apiKey: KEY, apiKeySource: 'env' });
    assert.equal(m.kiosk.connection.mode, 'gateway');
    assert.notEqual(m.kiosk.connection.client, null);
    await m.kiosk.shutdown();
  });

  it('an emulator that cannot start: the tap answers invalid_config with its reason', async () => {
    const m = await make({
      startEmulator: async () => {
        throw new Error('listen EADDRINUSE 127.0.0.1');
      },
    });
    assert.equal(m.kiosk.connection.client, null);
    assert.deepEqual(failure(await m.kiosk.calls.start()), { code: 'invalid_config', message: 'listen EADDRINUSE 127.0.0.1' });
    await m.kiosk.shutdown();
  });

  it('a tap while the new client is still being built is refused as not configured', async () => {
    let answer!: (pac: string) => void;
    const asked: string[] = [];
    const proxy = {
      resolve: (url: string) => {
        asked.push(url);
        return asked.length === 1 ? Promise.resolve('DIRECT') : new Promise<string>((resolve) => (answer = resolve));
      },
    };
    const m = await make({ config: cfg({ service: { baseUrl: 'https://avatar.example.com' } }), apiKey: KEY, apiKeySource: 'stored', persistApiKey: async () => {}, proxy });
    const changing = m.kiosk.key.set(`${KEY}-2`);
    while (asked.length < 2) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(failure(await m.kiosk.calls.start()), { code: 'invalid_config', message: 'The avatar service is not configured.' });
    answer('DIRECT');
    value(await changing);
    assert.equal(m.kiosk.connection.mode, 'direct');
    await m.kiosk.shutdown();
  });

  it('with no usable service configuration, the control sockets still come from the injected transport', async () => {
    const transports = new FakeTransports();
    const m = await make({ config: cfg(), apiKey: KEY, apiKeySource: 'env', transportFactory: transports.factory });
    assert.equal(m.kiosk.connection.client, null, 'no baseUrl for the direct surface');
    assert.match(failure(await m.kiosk.calls.start()).message, /baseUrl/);
    m.kiosk.connection.transportFactory('ws://127.0.0.1:9/live', {}, { onOpen() {}, onMessage() {}, onClose() {}, onError() {} });
    assert.equal(transports.all.length, 1);
    await m.kiosk.shutdown();
  });
});

describe('taps refused up front', () => {
  it('after shutdown: cancelled, "The kiosk is shutting down."', async () => {
    const m = await make();
    await m.kiosk.shutdown();
    assert.deepEqual(failure(await m.kiosk.calls.start()), { code: 'cancelled', message: 'The kiosk is shutting down.' });
  });

  it('outside opening hours and while an update holds calls, each with its own message', async () => {
    const m = await make();
    m.kiosk.availability.setOpening({ open: false, nextOpenAt: '2026-11-25T08:00:00.000Z', timeZone: 'Europe/Berlin' });
    assert.deepEqual(failure(await m.kiosk.calls.start()), { code: 'invalid_request', message: 'The kiosk is closed (outside its opening hours).' });
    m.kiosk.availability.setOpening({ open: true, nextOpenAt: null, timeZone: 'Europe/Berlin' });
    m.kiosk.availability.setHold('updating');
    assert.deepEqual(failure(await m.kiosk.calls.start()), { code: 'invalid_request', message: 'The kiosk is updating; back in a moment.' });
    assert.equal(m.kiosk.calls.running, false);
    await m.kiosk.shutdown();
  });

  it('an avatar not in the cast', async () => {
    const m = await make({ config: cfg({ avatars: [{ id: 'ava', name: 'Ava', imagePath: PNG_A }] }) });
    assert.deepEqual(failure(await m.kiosk.calls.start({ avatarId: 'zed' })), { code: 'invalid_request', message: 'There is no avatar "zed" in the cast.' });
    assert.equal(m.kiosk.calls.running, false);
    await m.kiosk.shutdown();
  });
});

describe('event listeners', () => {
  it('a listener that throws does not keep the event from the others, and the operator is told', async () => {
    const m = await make();
    const seen: string[] = [];
    m.kiosk.events.onEvent(() => {
      throw new Error('renderer gone');
    });
    m.kiosk.events.onEvent((e) => seen.push(e.type));
    m.kiosk.availability.setHold('updating');
    assert.deepEqual(seen, ['hold']);
    assert.ok(m.lines.some((l) => l.includes(' WARN An event listener threw') && l.includes('renderer gone')), m.lines.join('\n'));
    await m.kiosk.shutdown();
  });
});

describe('the warm connection', () => {
  it('while the attract screen shows, one connection to the service is kept open and renewed once stale; none after', async () => {
    // A bare TCP listener on 127.0.0.1: each warm-up is one accepted connection.
    const sockets: Socket[] = [];
    const server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const clock = new FakeClock();
    const config = cfg({ service: { baseUrl: `http://127.0.0.1:${port}` }, prewarm: { mode: 'off' } });
    // The service check's own request would be one more connection this listener never answers.
    const m = await make({ config, apiKey: KEY, apiKeySource: 'stored', clock, checkService: false });
    try {
      assert.equal(sockets.length, 0, 'nothing before the attract screen shows');
      value(await m.dispatch(CHANNELS.attractReport, { showing: true, present: null }));
      await until(() => sockets.length === 1, { message: 'the first warm connection' });
      await clock.advance(20_000);
      await realDelay(20);
      assert.equal(sockets.length, 1, 'checked after 20 s: still fresh, kept');
      await clock.advance(20_000);
      await until(() => sockets.length === 2, { message: 'renewed after 40 s (older than 30 s)' });
      value(await m.dispatch(CHANNELS.attractReport, { showing: false, present: null }));
      for (let i = 0; i < 4; i++) await clock.advance(20_000);
      await realDelay(20);
      assert.equal(sockets.length, 2, 'a call or a hidden attract screen: no more warm-ups');
      assert.equal(clock.pendingCount, 0, 'the refresh timer is gone');
    } finally {
      await m.kiosk.shutdown();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
