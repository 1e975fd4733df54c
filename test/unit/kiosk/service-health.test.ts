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
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import { silentLogger } from '../../../electron/core/log.ts';
import { DEMO_API_KEY, startEmulator, type EmulatorHandle } from '../../../electron/emulator/index.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { createKiosk, type Kiosk } from '../../../electron/kiosk/compose.ts';
import { HEALTH_RECHECK_MS, healthLine, healthOfConfigError } from '../../../electron/kiosk/service-health.ts';
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
    assert.match(h.message, new RegExp(`^The service at ${baseUrl.replace(/[.:/]/g, '\\$&')} could not be reached: .*connection refused`));
    assert.equal(h.action, "Check the address, the network and the venue's proxy or firewall; the kiosk checks again by itself.");
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
