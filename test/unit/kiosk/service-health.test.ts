/**
 * The service check (electron/kiosk/service-health.ts) on a real kiosk (kiosk/compose.ts) against the real
 * emulator on 127.0.0.1: "connected" only once the service answered with the key accepted; a refused key,
 * a port nobody answers on and a missing URL each said as such with what to do; an unreachable service
 * re-checked on the injected clock (5 s, 10 s, …) until it answers, when the kiosk says so by itself. The
 * check creates no session (the emulator's session count stays 0).
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closedPort } from '../../helpers/closed-port.ts';
import type { KioskEvent, ServiceHealth } from '../../../electron/contract.ts';
import { FakeClock, StrictClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { silentLogger } from '../../../electron/core/log.ts';
import { DEMO_API_KEY, startEmulator, type EmulatorHandle } from '../../../electron/emulator/index.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { createKiosk, type Kiosk } from '../../../electron/kiosk/compose.ts';
import { createServiceHealth, HEALTH_RECHECK_MS, healthLine, healthOfConfigError, healthOfProbeError } from '../../../electron/kiosk/service-health.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { TINY_PNG } from '../../helpers/stub-kiosk.ts';
import { until } from '../../helpers/until.ts';

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function emulator(port = 0): Promise<EmulatorHandle> {
  const emu = await startEmulator({ host: '127.0.0.1', port });
  open.push(emu);
  return emu;
}


async function kioskFor(baseUrl: string | null, apiKey: string | null, clock = new FakeClock()): Promise<{ kiosk: Kiosk; events: ServiceHealth[]; clock: FakeClock }> {
  const kiosk = await createKiosk({
    config: resolveConfig({ avatar: { imagePath: TINY_PNG, persona: 'P' }, ...(baseUrl ? { service: { baseUrl } } : {}) }, {}),
    apiKey,
    apiKeySource: apiKey ? 'env' : 'none',
    loadAvatarImage: async () => null,
    logger: silentLogger,
    clock,
    awaitRendererRtc: false,
  });
  open.push({ close: () => kiosk.shutdown() });
  const events: ServiceHealth[] = [];
  kiosk.events.onEvent((event: KioskEvent) => {
    if (event.type === 'service') events.push(event.service);
  });
  return { kiosk, events, clock };
}

const settled = (kiosk: Kiosk) => until(() => kiosk.health.current.status !== 'checking', { realTimeoutMs: 10_000, message: 'the first check' });

describe('the start-up service check says the truth', () => {
  it('connected: only after the service answered and accepted the key; no session was created', async () => {
    const emu = await emulator();
    const { kiosk } = await kioskFor(emu.baseUrl, emu.apiKey);
    await settled(kiosk);
    const h = kiosk.health.current;
    assert.deepEqual([h.status, h.ok, h.message, h.action, h.nextCheckAtMs], ['connected', true, `Connected: the service at ${emu.baseUrl} answered and accepted the key.`, null, null]);
    assert.equal(healthLine(h), `Service: Connected: the service at ${emu.baseUrl} answered and accepted the key.`);
    assert.equal(emu.listSessions().length, 0, 'nothing created, nothing billed');
  });

  it('a refused key: named as such, with where the key comes from; the page is told the service is down', async () => {
    const emu = await emulator();
    const { kiosk } = await kioskFor(emu.baseUrl, 'sk-not-an-account-1234567890');
    await settled(kiosk);
    const h = kiosk.health.current;
    assert.deepEqual([h.status, h.ok], ['refused_key', false]);
    assert.equal(h.message, `The service at ${emu.baseUrl} refused the API key (HTTP 401).`);
    assert.equal(h.action, "Set AVATAR_API_KEY to the key from the provider's workbench (the one for this service URL) and start again.");
    const config = await kiosk.appearance.getConfig();
    assert.deepEqual(config.ok && config.value.service, { status: 'refused_key', ok: false });
    assert.equal(emu.listSessions().length, 0);
  });

  it('no URL: a key with no service URL is "no URL", with the variable to set; never re-checked by itself', async () => {
    const { kiosk, clock } = await kioskFor(null, 'sk-some-key-1234567890');
    await settled(kiosk);
    const h = kiosk.health.current;
    assert.deepEqual([h.status, h.ok, h.nextCheckAtMs], ['no_url', false, null]);
    assert.equal(h.message, 'An API key is set but no service URL, so the kiosk cannot reach the service.');
    assert.equal(h.action, 'Set AVATAR_BASE_URL (or service.baseUrl in config.json) to the https:// address the service provider gave you.');
    await clock.advance(10 * 60_000);
    assert.equal(kiosk.health.current.checkedAtMs, h.checkedAtMs, 'not checked again by itself: only a settings change can fix it');
  });

  it('unreachable, then the service comes up: re-checked at 5 s, 10 s, … and connected by itself', async () => {
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const { kiosk, events, clock } = await kioskFor(baseUrl, DEMO_API_KEY);
    await settled(kiosk);
    let h = kiosk.health.current;
    assert.deepEqual([h.status, h.ok, h.nextCheckAtMs], ['unreachable', false, clock.now() + HEALTH_RECHECK_MS[0]]);
    assert.equal(h.message, `The service at ${baseUrl} could not be reached (connection refused).`);
    assert.equal(h.action, "Check the address, the network and the venue's proxy or firewall.");
    assert.equal(healthLine(h), `Service: NOT CONNECTED. The service at ${baseUrl} could not be reached (connection refused). What to do: Check the address, the network and the venue's proxy or firewall. The kiosk checks again by itself.`);
    // Still down at the first re-check: the next one waits longer.
    await clock.advance(HEALTH_RECHECK_MS[0]);
    await until(() => kiosk.health.current.checkedAtMs === clock.now(), { realTimeoutMs: 10_000, message: 'the first re-check' });
    assert.equal(kiosk.health.current.nextCheckAtMs, clock.now() + HEALTH_RECHECK_MS[1]);
    // The service comes up on that port (the emulator's demo key is the one configured).
    const emu = await emulator(port);
    await clock.advance(HEALTH_RECHECK_MS[1]);
    await until(() => kiosk.health.current.status === 'connected', { realTimeoutMs: 10_000, message: 'connected by itself' });
    h = kiosk.health.current;
    assert.deepEqual([h.ok, h.nextCheckAtMs], [true, null]);
    assert.deepEqual(
      events.map((e) => e.status),
      ['unreachable', 'connected'],
      'the page heard it go down once and come back once (a second failed re-check says nothing new)',
    );
    const at = h.checkedAtMs;
    await clock.advance(10 * 60_000);
    assert.equal(kiosk.health.current.checkedAtMs, at, 'no more re-checks once connected');
  });

  it('demo mode: "demo", no request made', async () => {
    const { kiosk } = await kioskFor(null, null);
    await settled(kiosk);
    assert.deepEqual([kiosk.health.current.status, kiosk.health.current.ok, kiosk.health.current.message], ['demo', true, 'Demo mode: the built-in emulator, no key needed.']);
  });
});

describe('what a configuration problem means', () => {
  const schemeError = new AvatarError('invalid_config', 'The service URL must start with https:// (got http://avatar.example.com): …', { details: { field: 'baseUrl' } });
  it('an http:// URL is "wrong scheme", with the variable to set', () => {
    assert.deepEqual(healthOfConfigError(schemeError, 'direct', 'http://avatar.example.com'), {
      status: 'wrong_scheme',
      message: schemeError.message,
      action: 'Set AVATAR_BASE_URL (or service.baseUrl in config.json) to the https:// address; http:// is only for this computer.',
    });
  });
  it('a gateway with no URL is "no URL" for the gateway variable', () => {
    const e = new AvatarError('invalid_config', 'The gateway URL (gatewayUrl) is not set.', { details: { field: 'gatewayUrl' } });
    assert.deepEqual(healthOfConfigError(e, 'gateway', null), {
      status: 'no_url',
      message: 'No gateway URL is set, so the kiosk cannot reach its gateway.',
      action: 'Set AVATAR_GATEWAY_URL (or service.gatewayUrl in config.json) to the https:// address of your gateway.',
    });
  });
  it('any other setting is "misconfigured", its own message kept', () => {
    const e = new AvatarError('invalid_config', 'The API key contains spaces or line breaks; paste the key exactly as issued.', { details: { field: 'apiKey' } });
    assert.equal(healthOfConfigError(e, 'direct', 'https://a.example').status, 'misconfigured');
    assert.equal(healthOfConfigError(e, 'direct', 'https://a.example').message, e.message);
  });
});

describe('what a URL given but not used means (the settings refused it when they were read)', () => {
  const noUrl = new AvatarError('invalid_config', 'No service URL.', { details: { field: 'baseUrl' } });
  it('an http:// address from config.json: "wrong scheme", naming the file and the key to set', () => {
    const dropped = { source: 'config.json', message: 'service.baseUrl must start with https:// (got http://a.example)' };
    assert.deepEqual(healthOfConfigError(noUrl, 'direct', null, dropped), {
      status: 'wrong_scheme',
      message: 'config.json: service.baseUrl must start with https:// (got http://a.example)',
      action: 'Set service.baseUrl in config.json to the https:// address; http:// is only for this computer.',
    });
  });
  it('from a variable: the variable is what to set', () => {
    const dropped = { source: 'AVATAR_GATEWAY_URL', message: 'must start with https:// (got http://gw.example)' };
    const e = new AvatarError('invalid_config', 'No gateway URL.', { details: { field: 'gatewayUrl' } });
    assert.deepEqual(healthOfConfigError(e, 'gateway', null, dropped), {
      status: 'wrong_scheme',
      message: 'AVATAR_GATEWAY_URL: must start with https:// (got http://gw.example)',
      action: 'Set AVATAR_GATEWAY_URL to the https:// address; http:// is only for this computer.',
    });
  });
  it('refused for another reason: "misconfigured", fix where it came from', () => {
    const dropped = { source: 'AVATAR_BASE_URL', message: 'must be an http(s) URL' };
    assert.deepEqual(healthOfConfigError(noUrl, 'direct', null, dropped), { status: 'misconfigured', message: 'AVATAR_BASE_URL: must be an http(s) URL', action: 'Fix AVATAR_BASE_URL and start again.' });
  });
  it('only for the URL fields and only when no URL is in use', () => {
    const dropped = { source: 'config.json', message: 'must start with https://' };
    const other = new AvatarError('invalid_config', 'Bad key.', { details: { field: 'apiKey' } });
    assert.equal(healthOfConfigError(other, 'direct', null, dropped).status, 'misconfigured');
    assert.equal(healthOfConfigError(other, 'direct', null, dropped).message, 'Bad key.');
    assert.equal(healthOfConfigError(noUrl, 'direct', 'https://a.example', dropped).status, 'misconfigured');
    const noField = new AvatarError('invalid_config', 'Something.', { details: { field: 7 } });
    assert.equal(healthOfConfigError(noField, 'direct', null, dropped).status, 'misconfigured');
  });
  it('an https:// URL in use (whatever its case or spaces) is not a scheme problem; an http:// one is, for the gateway too', () => {
    const gw = new AvatarError('invalid_config', 'Gateway refused.', { details: { field: 'gatewayUrl' } });
    assert.equal(healthOfConfigError(gw, 'gateway', ' HTTPS://gw.example').status, 'misconfigured');
    assert.deepEqual(healthOfConfigError(gw, 'gateway', 'http://gw.example'), {
      status: 'wrong_scheme',
      message: 'Gateway refused.',
      action: 'Set AVATAR_GATEWAY_URL (or service.gatewayUrl in config.json) to the https:// address; http:// is only for this computer.',
    });
    assert.equal(healthOfConfigError(gw, 'gateway', 'xhttps://gw.example').status, 'wrong_scheme');
  });
  it('any other setting: the action says where settings are fixed', () => {
    const e = new AvatarError('invalid_config', 'Bad.', { details: { field: 'apiKey' } });
    assert.equal(healthOfConfigError(e, 'direct', null).action, 'Fix that setting (config.json, the environment or Settings), then restart or save the settings.');
  });
});

describe('what a failed check means', () => {
  const ORIGIN = 'https://avatar.example.com';
  const err = (code: string, extra: { status?: number; reason?: string } = {}) =>
    new AvatarError(code as never, `the client says ${code}`, { ...(extra.status ? { status: extra.status } : {}), ...(extra.reason ? { details: { reason: extra.reason } } : {}) });

  it('a refused key: the HTTP status, and where the key is fixed (the environment or Settings)', () => {
    assert.deepEqual(healthOfProbeError(err('unauthorized'), 'direct', ORIGIN, 'stored'), {
      status: 'refused_key',
      message: `The service at ${ORIGIN} refused the API key (HTTP 401).`,
      action: "Enter the key from the provider's workbench again in Settings (the one for this service URL).",
    });
    assert.equal(healthOfProbeError(err('forbidden'), 'direct', ORIGIN, 'env').message, `The service at ${ORIGIN} refused the API key (HTTP 403).`);
    assert.equal(healthOfProbeError(err('forbidden', { status: 407 }), 'direct', ORIGIN, 'env').message, `The service at ${ORIGIN} refused the API key (HTTP 407).`);
    assert.equal(healthOfProbeError(err('unauthorized'), 'direct', ORIGIN, 'env').action, "Set AVATAR_API_KEY to the key from the provider's workbench (the one for this service URL) and start again.");
  });

  it('a gateway that refuses the kiosk: its device token', () => {
    assert.deepEqual(healthOfProbeError(err('unauthorized'), 'gateway', ORIGIN, 'none'), {
      status: 'refused_key',
      message: `The gateway at ${ORIGIN} refused this kiosk (HTTP 401).`,
      action: 'Check the device token in service.gatewayHeaders with your integrator.',
    });
    assert.equal(healthOfProbeError(err('forbidden'), 'gateway', ORIGIN, 'none').message, `The gateway at ${ORIGIN} refused this kiosk (HTTP 403).`);
    assert.equal(healthOfProbeError(err('forbidden', { status: 451 }), 'gateway', ORIGIN, 'none').message, `The gateway at ${ORIGIN} refused this kiosk (HTTP 451).`);
  });

  it('unreachable: the fact only (a server error with its status, a timeout or a failed connection with the reason)', () => {
    const action = "Check the address, the network and the venue's proxy or firewall.";
    assert.deepEqual(healthOfProbeError(err('server', { status: 502 }), 'direct', ORIGIN, 'env'), { status: 'unreachable', message: `The service at ${ORIGIN} answered with an error (HTTP 502).`, action });
    assert.equal(healthOfProbeError(err('server'), 'direct', ORIGIN, 'env').message, `The service at ${ORIGIN} answered with an error.`);
    assert.equal(healthOfProbeError(err('timeout', { reason: 'no answer in 10 s' }), 'direct', ORIGIN, 'env').message, `The service at ${ORIGIN} did not answer (no answer in 10 s).`);
    assert.equal(healthOfProbeError(err('timeout'), 'direct', ORIGIN, 'env').message, `The service at ${ORIGIN} did not answer.`);
    assert.equal(healthOfProbeError(err('network', { reason: 'DNS lookup failed' }), 'direct', ORIGIN, 'env').message, `The service at ${ORIGIN} could not be reached (DNS lookup failed).`);
    assert.deepEqual(healthOfProbeError(err('network'), 'gateway', ORIGIN, 'env'), { status: 'unreachable', message: `The service at ${ORIGIN} could not be reached.`, action });
  });

  it('anything else answered, but not as the service: the URL to check, for the service or the gateway', () => {
    assert.deepEqual(healthOfProbeError(err('protocol'), 'direct', ORIGIN, 'env'), {
      status: 'not_service',
      message: `Something answered at ${ORIGIN}, but not as the avatar service: the client says protocol`,
      action: 'Check the service URL: the root address you were given (without /live/v1 or /api).',
    });
    assert.equal(healthOfProbeError(err('not_found'), 'gateway', ORIGIN, 'none').action, 'Check the gateway URL: the root address you were given (without /live/v1 or /api).');
  });
});

describe('healthLine: one line for a terminal', () => {
  const base: ServiceHealth = { status: 'unreachable', ok: false, message: 'The service could not be reached.', action: null, checkedAtMs: 1, nextCheckAtMs: null };
  it('checking, a good status with its message, a bad one with what to do and whether it checks again', () => {
    assert.equal(healthLine({ ...base, status: 'checking', ok: true, message: 'Checking the service…' }), 'Service: checking…');
    assert.equal(healthLine({ ...base, status: 'demo', ok: true, message: 'Demo mode.' }), 'Service: Demo mode.');
    assert.equal(healthLine(base), 'Service: NOT CONNECTED. The service could not be reached.');
    assert.equal(healthLine({ ...base, action: 'Fix it.' }), 'Service: NOT CONNECTED. The service could not be reached. What to do: Fix it.');
    assert.equal(healthLine({ ...base, nextCheckAtMs: 5 }), 'Service: NOT CONNECTED. The service could not be reached. The kiosk checks again by itself.');
  });
});

describe('the monitor, on a fake connection', () => {
  type Answer = () => Promise<unknown>;
  function monitor(options: { mode?: 'direct' | 'gateway' | 'demo'; answers?: Answer[]; client?: boolean; clientError?: AvatarError | null; dropped?: { source: string; message: string } | null } = {}) {
    const clock = new FakeClock();
    const logger = recordingLogger();
    const emitted: ServiceHealth[] = [];
    const answers = [...(options.answers ?? [])];
    let calls = 0;
    let closing = false;
    const mode = options.mode ?? 'direct';
    const client = {
      target: mode === 'gateway' ? { surface: 'gateway', gatewayUrl: 'https://gw.example' } : { surface: 'direct', baseUrl: 'https://svc.example' },
      listVoices: () => {
        calls += 1;
        return (answers.shift() ?? (() => Promise.resolve([])))();
      },
    };
    const connection = { client: options.client === false ? null : (client as never), clientError: options.clientError ?? null, mode: mode as 'direct' | 'gateway' | 'demo' };
    const health = createServiceHealth({
      connection,
      keySource: () => 'stored',
      configuredUrl: () => null,
      ...(options.dropped !== undefined ? { droppedUrl: () => options.dropped! } : {}),
      closing: () => closing,
      emit: (event) => {
        if (event.type === 'service') emitted.push(event.service);
      },
      logger,
      clock,
    });
    return { clock, logger, emitted, health, connection, calls: () => calls, setClosing: (c: boolean) => (closing = c) };
  }
  const down = () => Promise.reject(new AvatarError('network', 'down', { details: { reason: 'connection refused' } }));

  it('checking before the first check: ok, nothing checked yet; current is a copy', () => {
    const { health } = monitor();
    assert.deepEqual(health.current, { status: 'checking', ok: true, message: 'Checking the service…', action: null, checkedAtMs: null, nextCheckAtMs: null });
    (health.current as { status: string }).status = 'demo';
    assert.equal(health.current.status, 'checking');
  });

  it('connected through a gateway says the gateway answered; a change is logged at info and emitted once', async () => {
    const { health, logger, emitted, clock } = monitor({ mode: 'gateway' });
    const h = await health.check();
    assert.deepEqual(h, { status: 'connected', ok: true, message: 'Connected: the gateway at https://gw.example answered.', action: null, checkedAtMs: clock.now(), nextCheckAtMs: null });
    await health.check();
    assert.deepEqual(emitted.map((e) => e.status), ['connected']);
    assert.deepEqual(logger.lines, [{ level: 'info', message: 'Service: connected', data: { message: 'Connected: the gateway at https://gw.example answered.' } }]);
  });

  it('a failure is logged at warn with what to do; the re-checks wait 5, 10, 20, 40 s, then every minute', async () => {
    const { health, logger, clock, calls } = monitor({ answers: Array(7).fill(down) });
    const first = await health.check();
    assert.deepEqual([first.status, first.ok, first.checkedAtMs, first.nextCheckAtMs], ['unreachable', false, clock.now(), clock.now() + 5_000]);
    assert.deepEqual(logger.lines, [{ level: 'warn', message: 'Service: unreachable', data: { message: 'The service at https://svc.example could not be reached (connection refused).', action: "Check the address, the network and the venue's proxy or firewall." } }]);
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const wait = health.current.nextCheckAtMs! - clock.now();
      waits.push(wait);
      await clock.advance(wait - 1);
      assert.equal(calls(), i + 1, 'not before its time');
      await clock.advance(1);
      assert.equal(calls(), i + 2);
    }
    assert.deepEqual(waits, [5_000, 10_000, 20_000, 40_000, 60_000, 60_000]);
    assert.equal(HEALTH_RECHECK_MS.length, 5);
    assert.equal(logger.lines.length, 1, 'the same failure again says nothing new');
  });

  it('back after failing, the next failure waits 5 s again', async () => {
    const { health, clock } = monitor({ answers: [down, down, () => Promise.resolve([]), down] });
    await health.check();
    await clock.advance(5_000);
    await clock.advance(10_000);
    assert.equal(health.current.status, 'connected');
    const again = await health.check();
    assert.equal(again.nextCheckAtMs! - clock.now(), 5_000);
  });

  it('a check started after a failure replaces its timer: one re-check, not two', async () => {
    const { health, clock, calls } = monitor({ answers: [down, down] });
    await health.check();
    await health.check();
    assert.equal(clock.pendingCount, 1);
    await clock.advance(10_000);
    assert.equal(calls(), 3);
  });

  it('an answer that comes after a newer check began is dropped', async () => {
    let release!: () => void;
    const slow: Answer = () => new Promise((_, reject) => (release = () => reject(new AvatarError('network', 'late'))));
    const { health, clock, emitted } = monitor({ answers: [slow, () => Promise.resolve([])] });
    const late = health.check();
    const newer = await health.check();
    assert.equal(newer.status, 'connected');
    release();
    assert.equal((await late).status, 'connected');
    assert.equal(clock.pendingCount, 0, 'the dropped failure schedules nothing');
    assert.deepEqual(emitted.map((e) => e.status), ['connected']);
  });

  it('a success that comes after a newer check began is dropped too', async () => {
    let release!: () => void;
    const slow: Answer = () => new Promise((resolve) => (release = () => resolve([])));
    const { health } = monitor({ answers: [slow, down] });
    const late = health.check();
    const newer = await health.check();
    assert.equal(newer.status, 'unreachable');
    release();
    assert.equal((await late).status, 'unreachable');
    assert.equal(health.current.status, 'unreachable');
  });

  it('closed: no more re-checks, and an answer still on its way changes nothing', async () => {
    let release!: () => void;
    const slow: Answer = () => new Promise((_, reject) => (release = () => reject(new AvatarError('network', 'late'))));
    const { health, clock, calls } = monitor({ answers: [down, slow] });
    await health.check();
    health.close();
    await clock.advance(60_000);
    assert.equal(calls(), 1);
    const pending = health.check();
    health.close();
    release();
    await pending;
    assert.equal(clock.pendingCount, 0);
  });

  it('while the kiosk is closing: no check, no event, no re-check', async () => {
    const { health, emitted, setClosing, calls, clock } = monitor({ answers: [down] });
    setClosing(true);
    const h = await health.check();
    assert.equal(h.status, 'checking');
    assert.equal(calls(), 0);
    setClosing(false);
    let release!: () => void;
    const r = monitor({ answers: [() => new Promise((_, reject) => (release = () => reject(new AvatarError('network', 'x'))))] });
    const pending = r.health.check();
    r.setClosing(true);
    release();
    assert.equal((await pending).status, 'checking');
    assert.equal(r.clock.pendingCount, 0);
    assert.deepEqual(emitted, []);
    assert.equal(clock.pendingCount, 0);
  });

  it('an answer that arrives once the kiosk is closing is kept but not emitted', async () => {
    let release!: () => void;
    const { health, emitted, setClosing } = monitor({ answers: [() => new Promise((resolve) => (release = () => resolve([])))] });
    const pending = health.check();
    setClosing(true);
    release();
    assert.equal((await pending).status, 'connected');
    assert.equal(health.current.status, 'connected');
    assert.deepEqual(emitted, []);
  });

  it('no client and no error: "not configured"; with a dropped URL, that is what is said; never re-checked', async () => {
    const { health, clock } = monitor({ client: false });
    assert.deepEqual(await health.check(), { status: 'misconfigured', ok: false, message: 'The service is not configured.', action: 'Set the service URL and key.', checkedAtMs: clock.now(), nextCheckAtMs: null });
    assert.equal(clock.pendingCount, 0);
    const m = monitor({ client: false, clientError: new AvatarError('invalid_config', 'No URL.', { details: { field: 'baseUrl' } }), dropped: { source: 'AVATAR_BASE_URL', message: 'must start with https:// (got http://x)' } });
    assert.equal((await m.health.check()).status, 'wrong_scheme');
    const n = monitor({ client: false, clientError: new AvatarError('invalid_config', 'No URL.', { details: { field: 'baseUrl' } }) });
    assert.equal((await n.health.check()).status, 'no_url');
  });

  it('demo mode after failures starts the backoff afresh', async () => {
    const { health, clock, connection } = monitor({ answers: [down, down, down] });
    await health.check();
    await clock.advance(5_000);
    assert.equal(health.current.nextCheckAtMs! - clock.now(), 10_000);
    connection.mode = 'demo';
    assert.deepEqual(await health.check(), { status: 'demo', ok: true, message: 'Demo mode: the built-in emulator, no key needed.', action: null, checkedAtMs: clock.now(), nextCheckAtMs: null });
    connection.mode = 'direct';
    assert.equal((await health.check()).nextCheckAtMs! - clock.now(), 5_000);
  });
});

describe('the service check: what the last measurement left alive', () => {
  it('an error without details is "misconfigured"; a setting other than the URLs is never a scheme problem, whatever the URL', () => {
    assert.equal(healthOfConfigError(new AvatarError('invalid_config', 'Bad.'), 'direct', 'http://a.example').status, 'misconfigured');
    const key = new AvatarError('invalid_config', 'Bad key.', { details: { field: 'apiKey' } });
    assert.deepEqual(healthOfConfigError(key, 'direct', 'http://a.example'), { status: 'misconfigured', message: 'Bad key.', action: 'Fix that setting (config.json, the environment or Settings), then restart or save the settings.' });
  });

  function fakeMonitor(configuredUrl: () => string | null, clock = new StrictClock()) {
    const emitted: string[] = [];
    let answer: () => Promise<unknown> = () => Promise.resolve([]);
    const connection = { client: null as never, clientError: new AvatarError('invalid_config', 'The service URL was refused.', { details: { field: 'baseUrl' } }) as AvatarError | null, mode: 'direct' as 'direct' | 'gateway' | 'demo' };
    const health = createServiceHealth({
      connection,
      keySource: () => 'env',
      configuredUrl,
      closing: () => false,
      emit: (event) => {
        if (event.type === 'service') emitted.push(`${event.service.status}: ${event.service.message}`);
      },
      logger: silentLogger,
      clock,
    });
    return { health, emitted, clock, connection, setAnswer: (a: () => Promise<unknown>) => (answer = a), answer: () => answer() };
  }

  it('a new status with the same sentence is still told (the URL was fixed, another setting is wrong)', async () => {
    let url = 'http://a.example';
    const { health, emitted } = fakeMonitor(() => url);
    await health.check();
    url = 'https://a.example';
    await health.check();
    assert.deepEqual(emitted, ['wrong_scheme: The service URL was refused.', 'misconfigured: The service URL was refused.']);
  });

  it('the same status with a new sentence is told too', async () => {
    const clock = new StrictClock();
    const m = monitorOn(clock, [() => Promise.reject(new AvatarError('network', 'x', { details: { reason: 'connection refused' } })), () => Promise.reject(new AvatarError('network', 'x', { details: { reason: 'DNS lookup failed' } }))]);
    await m.health.check();
    await m.health.check();
    assert.deepEqual(m.emitted, [
      'unreachable: The service at https://svc.example could not be reached (connection refused).',
      'unreachable: The service at https://svc.example could not be reached (DNS lookup failed).',
    ]);
  });

  it('clears only timers it set: a first check, a demo check and a close clear nothing that was not scheduled', async () => {
    const clock = new StrictClock();
    const m = monitorOn(clock, []);
    await m.health.check();
    m.health.close();
    assert.deepEqual(clock.foreignClears, []);
  });

  it('an answer from before a close is dropped even when a check started after the close', async () => {
    const clock = new StrictClock();
    let releaseA!: () => void;
    let releaseB!: () => void;
    const m = monitorOn(clock, [
      () => new Promise((_, reject) => (releaseA = () => reject(new AvatarError('network', 'late')))),
      () => new Promise((resolve) => (releaseB = () => resolve([]))),
    ]);
    const a = m.health.check();
    m.health.close();
    const b = m.health.check();
    releaseA();
    await a;
    releaseB();
    await b;
    assert.deepEqual(m.emitted.map((e) => e.split(':')[0]), ['connected']);
    assert.equal(clock.pendingCount, 0);
  });

  function monitorOn(clock: StrictClock, answers: Array<() => Promise<unknown>>) {
    const emitted: string[] = [];
    const client = { target: { surface: 'direct', baseUrl: 'https://svc.example' }, listVoices: () => (answers.shift() ?? (() => Promise.resolve([])))() };
    const health = createServiceHealth({
      connection: { client: client as never, clientError: null, mode: 'direct' },
      keySource: () => 'env',
      configuredUrl: () => 'https://svc.example',
      closing: () => false,
      emit: (event) => {
        if (event.type === 'service') emitted.push(`${event.service.status}: ${event.service.message}`);
      },
      logger: silentLogger,
      clock,
    });
    return { health, emitted };
  }
});
