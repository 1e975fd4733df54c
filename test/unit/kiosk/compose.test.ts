/**
 * The kiosk wired (electron/kiosk/compose.ts): the avatar's volume reaches the page (in its view of the kiosk
 * and as an event); once shutdown began, what crosses its services is refused — a call, a key, new
 * settings — while the call's state can still be read. Also what only the wiring decides: a kiosk with no
 * page, which failed calls make it check the service again, what its data folder keeps across a restart
 * (volume, visitor counts, the keep-alive a service accepted), the content review's count, a refused service
 * URL named by the service check (and a URL in use that the client refuses), each refused tap counted as
 * what refused it, and the age gate on the kiosk's clock. The stub emulator (no network),
 * or the in-process emulator on 127.0.0.1:0 where a call must run.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHANNELS, type KioskEvent } from '../../../electron/contract.ts';
import type { EventBus } from '../../../electron/kiosk/events.ts';
import { resolveConfig } from '../../../electron/kiosk/config.ts';
import { PASS_TTL_MS } from '../../../electron/kiosk/age-gate.ts';
import { memoryAvatarVolume } from '../../../electron/kiosk/avatar-volume.ts';
import { stubKiosk, TINY_PNG } from '../../helpers/stub-kiosk.ts';
import { kioskOnEmulator, value } from '../../helpers/kiosk-on-emulator.ts';
import { advanceUntil, until } from '../../helpers/until.ts';

const KEY = 'sk-unit-SECRET-9f8e7d6c5b4a';
const cfg = (raw: Record<string, unknown> = {}) => resolveConfig({ avatar: { imagePath: '/nonexistent.png', persona: 'P' }, ...raw }, {});

describe('the avatar volume', () => {
  it('is the one given: the page reads it in its config and hears each change; none after shutdown', async () => {
    const volume = memoryAvatarVolume(60);
    const { kiosk, channels } = await stubKiosk({ config: cfg(), avatarVolume: volume });
    const heard: unknown[] = [];
    kiosk.events.onEvent((e) => e.type === 'avatar-volume' && heard.push(e));
    assert.equal(kiosk.avatarVolume, volume);
    const before = await channels.dispatch(CHANNELS.configGet, undefined);
    assert.equal(before.ok && (before.value as { avatarVolume: number }).avatarVolume, 60);
    await volume.set(25);
    await volume.set(25); // the same volume again: no change, no event
    assert.deepEqual(heard, [{ type: 'avatar-volume', percent: 25 }]);
    const after = await channels.dispatch(CHANNELS.configGet, undefined);
    assert.equal(after.ok && (after.value as { avatarVolume: number }).avatarVolume, 25);
    await kiosk.shutdown();
    await volume.set(10);
    assert.deepEqual(heard, [{ type: 'avatar-volume', percent: 25 }], 'the page is gone: nobody hears it');
  });

  it('without one: 100 %, in memory', async () => {
    const { kiosk } = await stubKiosk({ config: cfg() });
    assert.equal(kiosk.avatarVolume.percent, 100);
    await kiosk.shutdown();
  });
});

describe('after shutdown began', () => {
  it('a call and a key answer cancelled; the call state still answers', async () => {
    const { kiosk, channels } = await stubKiosk({ awaitRendererRtc: false, config: cfg(), loadAvatarImage: undefined });
    await kiosk.shutdown();
    const a = await kiosk.calls.start();
    const b = await kiosk.key.set(KEY);
    assert.equal(!a.ok && a.error.code, 'cancelled');
    assert.equal(!b.ok && b.error.code, 'cancelled');
    assert.deepEqual(await channels.dispatch(CHANNELS.sessionGetState, undefined), { ok: true, value: { phase: 'idle' } });
  });

  it('new settings are refused: no emulator started again, the settings unchanged, nobody told', async () => {
    const { kiosk, emu } = await stubKiosk();
    const events: string[] = [];
    kiosk.events.onEvent((e) => events.push(e.type));
    await kiosk.shutdown();
    const next = resolveConfig({ avatar: { imagePath: TINY_PNG, persona: 'Another persona.' } }, {});
    await assert.rejects(kiosk.reconfigure(next), { code: 'cancelled', message: 'The kiosk is shutting down.' });
    assert.deepEqual(emu.calls, { started: 1, closed: 1 });
    assert.equal(kiosk.connection.emulator, null);
    assert.equal(kiosk.config.avatar.persona, 'P');
    assert.deepEqual(events, []);
  });
});

describe('a kiosk with no page', () => {
  it('registers no channel and runs its services all the same (a test or tool that drives them directly)', async () => {
    const { kiosk, emu } = await stubKiosk({ channels: undefined });
    assert.equal(kiosk.connection.mode, 'demo');
    assert.equal(emu.calls.started, 1);
    assert.equal(kiosk.calls.state.phase, 'idle');
    await kiosk.shutdown();
    assert.deepEqual(emu.calls, { started: 1, closed: 1 });
  });
});

describe('a failed call may mean the service changed: the kiosk checks it again', () => {
  const failed = (code: string) => ({
    type: 'state' as const,
    state: { phase: 'failed' as const, liveId: null, error: { code, message: `a ${code} failure` }, summary: null },
    previous: 'creating' as const,
  });

  it('after a failure of the service or the way to it (network, timeout, server, a refused key, forbidden, a lost connection), not after others', async () => {
    const { kiosk } = await stubKiosk();
    let checks = 0;
    const check = kiosk.health.check.bind(kiosk.health);
    kiosk.health.check = () => {
      checks += 1;
      return check();
    };
    // A real one: the stub emulator answers nothing, so the tap fails for the network.
    await kiosk.calls.start();
    assert.equal(kiosk.calls.state.phase === 'failed' && kiosk.calls.state.error.code, 'network');
    assert.equal(checks, 1);
    checks = 0;
    // The others through the kiosk's own event stream, as its call orchestrator tells it a call's end.
    const bus = kiosk.events as EventBus;
    const counted: Record<string, number> = {};
    for (const code of ['network', 'timeout', 'server', 'unauthorized', 'forbidden', 'connection_lost', 'insufficient_credits', 'invalid_request', 'rtc_failed']) {
      const before = checks;
      bus.emit(failed(code) as KioskEvent);
      counted[code] = checks - before;
    }
    assert.deepEqual(counted, {
      network: 1,
      timeout: 1,
      server: 1,
      unauthorized: 1,
      forbidden: 1,
      connection_lost: 1,
      insufficient_credits: 0,
      invalid_request: 0,
      rtc_failed: 0,
    });
    // Not for a call that ended well, nor for a failure once shutdown began.
    bus.emit({ type: 'state', state: { phase: 'idle' }, previous: 'ended' } as KioskEvent);
    const closing = kiosk.shutdown();
    bus.emit(failed('network') as KioskEvent);
    await closing;
    assert.equal(checks, 6);
  });
});

describe('what the kiosk keeps in its data folder', () => {
  it('the avatar’s volume and the visitor counts come back after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-data-'));
    try {
      const first = await stubKiosk({ dataDir: dir, config: cfg({ prewarm: { mode: 'off' } }) });
      await first.kiosk.avatarVolume.set(35);
      value(await first.channels.dispatch(CHANNELS.attractVisitorStep, { step: 'noticed' }));
      await first.kiosk.calls.start(); // the stub emulator answers nothing: a tap that failed
      await until(() => !first.kiosk.calls.running);
      const before = first.kiosk.visitors.today();
      assert.deepEqual([before.counts.noticed, before.counts.tapped, before.counts.failed], [1, 1, 1]);
      await first.kiosk.shutdown();
      const second = await stubKiosk({ dataDir: dir, config: cfg({ prewarm: { mode: 'off' } }) });
      assert.equal(second.kiosk.avatarVolume.percent, 35);
      assert.deepEqual(second.kiosk.visitors.today(), before);
      await second.kiosk.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('calls the content review ended', () => {
  it('are counted by the kiosk (staff, /metrics and the fleet read the count)', async () => {
    const h = await kioskOnEmulator({ kiosk: { awaitRendererRtc: false } });
    try {
      const liveId = await h.tap();
      await advanceUntil(h.clock, () => h.kiosk.calls.state.phase === 'live', { stepMs: 10 });
      assert.equal(h.kiosk.auditViolations(), 0);
      h.emu.forceHangup(liveId, 'audit_violation');
      await advanceUntil(h.clock, () => !h.kiosk.calls.running, { stepMs: 10 });
      assert.equal(h.kiosk.auditViolations(), 1);
    } finally {
      await h.close();
    }
  });
});

describe('a service URL the settings refused', () => {
  const refusedHttp = (field: string, source = 'config.json') => ({ field, source, message: `${field} must start with https:// (got http://avatar.example)` });
  const checked = async (kiosk: Awaited<ReturnType<typeof stubKiosk>>['kiosk']) => {
    await until(() => kiosk.health.current.status !== 'checking');
    return kiosk.health.current;
  };

  it('is what the kiosk’s service check names when no URL is in use: the service URL, the gateway URL or the whole service block', async () => {
    const cases = [
      { config: {}, dropped: refusedHttp('service.baseUrl') },
      // A refused gateway URL leaves no gateway (the settings fall back to the direct surface): still named.
      { config: {}, dropped: refusedHttp('service.gatewayUrl', 'AVATAR_GATEWAY_URL') },
      { config: {}, dropped: refusedHttp('service') },
    ];
    for (const { config, dropped } of cases) {
      const { kiosk } = await stubKiosk({ apiKey: KEY, apiKeySource: 'env', config: cfg(config), droppedSettings: [{ field: 'prewarm', source: 'config.json', message: 'not this one' }, dropped] });
      const health = await checked(kiosk);
      assert.equal(health.status, 'wrong_scheme', JSON.stringify(health));
      assert.equal(health.message, `${dropped.source}: ${dropped.message}`);
      await kiosk.shutdown();
    }
  });

  it('a URL in use that the service client refuses is named by the check as wrong, not as missing: the gateway’s or the service’s, whichever is in use', async () => {
    const cases = [
      { config: { service: { surface: 'gateway', gatewayUrl: 'https://gw.example/api' } }, apiKey: null, words: /should not end in "\/api"/ },
      { config: { service: { surface: 'direct', baseUrl: 'https://avatar.example/live/v1' } }, apiKey: KEY, words: /without "\/live\/v1"/ },
    ];
    for (const { config, apiKey, words } of cases) {
      const { kiosk } = await stubKiosk({ apiKey, apiKeySource: apiKey ? 'env' : 'none', config: cfg(config) });
      const health = await checked(kiosk);
      assert.equal(health.status, 'misconfigured', JSON.stringify(health));
      assert.match(health.message, words);
      await kiosk.shutdown();
    }
  });

  it('another setting refused is not taken for the URL: the check says the URL is missing', async () => {
    const { kiosk } = await stubKiosk({ apiKey: KEY, apiKeySource: 'env', config: cfg(), droppedSettings: [{ field: 'prewarm', source: 'config.json', message: 'must start with https://' }] });
    assert.equal((await checked(kiosk)).status, 'no_url');
    await kiosk.shutdown();
  });
});

describe('the keep-alive a service accepted, kept in the data folder', () => {
  it('is the one the kiosk’s calls start with after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-data-'));
    try {
      const first = await stubKiosk({ dataDir: dir });
      const keepAlive = first.kiosk.connection.keepAlive;
      assert.equal(keepAlive.style, 'pong-message');
      // The service closes a socket right after our pong message (as a control socket would report it):
      // the kiosk moves on to the next style it has.
      const next = keepAlive.refused('pong-message', 1008);
      assert.ok(next && next !== 'pong-message');
      await first.kiosk.shutdown();
      const second = await stubKiosk({ dataDir: dir });
      assert.equal(second.kiosk.connection.keepAlive.style, next);
      await second.kiosk.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a refused tap is counted once, as what refused it', () => {
  it('an adult kiosk: a tap before the age question and each visitor who answers no are refused by the age gate', async () => {
    const h = await kioskOnEmulator({ config: { audience: 'adult', region: 'DE-BY', adult: { allowedRegions: ['DE'] } }, kiosk: { awaitRendererRtc: false } });
    try {
      const early = await h.dispatch(CHANNELS.sessionStart, {});
      assert.equal(!early.ok && early.error.code, 'invalid_request');
      // Two visitors say no; one says yes, and is not refused.
      for (const confirmed of [false, false, true]) {
        value(await h.dispatch(CHANNELS.sessionAgeGateAsk, undefined));
        value(await h.dispatch(CHANNELS.sessionAgeGateAnswer, { confirmed }));
      }
      const counts = h.kiosk.visitors.today().counts;
      assert.deepEqual(counts.refused, { ageGate: 3, closed: 0, outOfOrder: 0 });
      assert.equal(counts.tapped, 3);
      assert.deepEqual(h.emu.listSessions(), [], 'nothing created');
    } finally {
      await h.close();
    }
  });

  it('a kiosk whose service cannot be reached is out of order: its tap is refused as such', async () => {
    const { kiosk, channels } = await stubKiosk({ apiKey: KEY, apiKeySource: 'env', config: cfg({ service: { baseUrl: 'https://avatar.example/live/v1' } }) });
    const tap = await channels.dispatch(CHANNELS.sessionStart, {});
    assert.equal(tap.ok, false);
    assert.deepEqual(kiosk.visitors.today().counts.refused, { ageGate: 0, closed: 0, outOfOrder: 1 });
    await kiosk.shutdown();
  });
});

describe('an adult kiosk’s age gate', () => {
  it('keeps time on the kiosk’s clock: a pass not used within its minute is gone', async () => {
    const h = await kioskOnEmulator({ config: { audience: 'adult', region: 'DE-BY', adult: { allowedRegions: ['DE'] } }, kiosk: { awaitRendererRtc: false } });
    try {
      assert.equal(h.kiosk.config.safety.audience, 'adult');
      value(await h.dispatch(CHANNELS.sessionAgeGateAsk, undefined));
      assert.deepEqual(value(await h.dispatch(CHANNELS.sessionAgeGateAnswer, { confirmed: true })), { passed: true });
      await h.clock.advance(PASS_TTL_MS + 1);
      const late = await h.dispatch(CHANNELS.sessionStart, {});
      assert.equal(!late.ok && late.error.code, 'invalid_request');
      assert.deepEqual(h.emu.listSessions(), [], 'nothing created');
      // A pass used at once starts the call.
      value(await h.dispatch(CHANNELS.sessionAgeGateAsk, undefined));
      value(await h.dispatch(CHANNELS.sessionAgeGateAnswer, { confirmed: true }));
      await h.tap();
      assert.equal(h.emu.listSessions().length, 1);
    } finally {
      await h.close();
    }
  });
});
