/**
 * Fleet metrics: a scripted set of sessions through the real kiosk service against the
 * in-process emulator, then `/metrics` read over HTTP with EXACT counter values (billing figures are
 * compared with the emulator's own records of each session). Plus `/healthz`, the bearer-token check on
 * a non-loopback bind (bound to 0.0.0.0, reached only through 127.0.0.1) and the label hygiene rules.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { KioskEvent, SpareEvent } from '../../electron/contract.ts';
import { AvatarError } from '../../electron/core/errors.ts';
import type { SessionState } from '../../electron/core/session-types.ts';
import { resolveConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry } from '../../electron/kiosk/channels.ts';
import { createKiosk, type Kiosk } from '../../electron/kiosk/compose.ts';
import { countLaunch, createKioskMetrics, kioskMetricsSource, startFleetMetrics, startMetricsServer, type KioskMetrics, type MetricsServer } from '../../electron/fleet/metrics.ts';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForEvent, phaseIs, isTerminal } from '../helpers/kiosk-events.ts';

const TINY_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const TOKEN = 'fleet-token-0123456789abcdef';

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.end();
  });
}

/** `name{labels} value` lines of the exposition, without comments. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

const waitFor = (kiosk: Kiosk, predicate: (e: KioskEvent) => boolean, timeoutMs = 20_000) => waitForEvent(kiosk, predicate, timeoutMs);

describe('fleet metrics after a scripted set of sessions', () => {
  it('counts sessions, outcomes, retries, reconnects, billing, spares, crashes, restarts and errors exactly', async () => {
    const config = resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } }, {});
    const kiosk = await createKiosk({ awaitRendererRtc: false,
      config,
      apiKey: null,
      apiKeySource: 'none',
      // video warms up for 1 s: its first conn_init gets NOT_READY, the retry 2 s later goes live.
      emulatorKnobs: { warmupMs: { audio: 0, video: 1_000 }, endingMs: 20 },
    });
    closers.push(() => kiosk.shutdown());
    const emulator = kiosk.connection.emulator!;

    // Spare events come from the pre-warming branch; here a stand-in source adds them to the stream.
    const spareListeners = new Set<(e: KioskEvent) => void>();
    const source = {
      onEvent(listener: (e: KioskEvent) => void) {
        const off = kiosk.events.onEvent(listener);
        spareListeners.add(listener);
        return () => {
          off();
          spareListeners.delete(listener);
        };
      },
      get state() {
        return kiosk.calls.state;
      },
      get mode() {
        return kiosk.connection.mode;
      },
    };
    const spare = (status: SpareEvent['status'], reason?: string) => {
      for (const l of spareListeners) l({ type: 'spare', status, liveId: 'live-spare-secret', callMode: 'audio', ...(reason ? { reason } : {}) });
    };

    const metrics = createKioskMetrics({ version: '9.9.9', restarts: 3 });
    metrics.observe(source);
    const server = await startMetricsServer({ metrics, host: '127.0.0.1', port: 0 });
    closers.push(() => server.close());

    const liveIds: string[] = [];
    async function session(args: Record<string, unknown>, whileLive: (liveId: string) => Promise<void>): Promise<KioskEvent> {
      const live = waitFor(kiosk, phaseIs('live'));
      const r = await kiosk.calls.start(args);
      assert.ok(r.ok && r.value.liveId, JSON.stringify(r));
      const liveId = r.value.liveId;
      liveIds.push(liveId);
      await live;
      const end = waitFor(kiosk, isTerminal);
      await whileLive(liveId);
      const event = await end;
      await kiosk.calls.hangup(); // waits until the finished session is released (no-op otherwise)
      return event;
    }

    // 1. audio, the visitor hangs up.
    await session({}, async () => void (await kiosk.calls.hangup()));
    // 2. video: one NOT_READY retry, then hung up.
    await session({ callMode: 'video' }, async () => void (await kiosk.calls.hangup()));
    // 3. audio, the control socket drops once while live: one reconnect, then hung up.
    await session({}, async (liveId) => {
      const back = waitFor(kiosk, phaseIs('reconnecting')).then(() => waitFor(kiosk, phaseIs('live')));
      emulator.dropConnection(liveId);
      await back;
      await kiosk.calls.hangup();
    });
    // 4. audio, the server ends it (type 6, audit_violation).
    const forced = await session({}, async (liveId) => emulator.forceHangup(liveId, 'audit_violation'));
    assert.equal(forced.type === 'state' && forced.state.phase, 'ended');
    // 5. no credits left: the create is refused → failed, insufficient_credits.
    emulator.setBalance(emulator.apiKey, 0);
    const refused = waitFor(kiosk, isTerminal);
    await kiosk.calls.start({});
    const fifth = await refused;
    assert.equal(fifth.type === 'state' && fifth.state.phase === 'failed' && fifth.state.error.code, 'insufficient_credits');

    spare('created');
    spare('used');
    spare('created');
    spare('expired', 'max_age');
    spare('failed', 'network');
    metrics.rendererGone('crashed');
    metrics.rendererGone('oom');
    metrics.rendererGone('something-new');

    const sessions = liveIds.map((id) => emulator.getSession(id)!);
    const credits = sessions.reduce((n, s) => n + s.creditsCost, 0);
    const billedSeconds = sessions.reduce((n, s) => n + s.billedSeconds, 0);
    assert.ok(credits > 0 && billedSeconds > 0, 'the live sessions were billed');

    const res = await get(server.port, '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.type, /^text\/plain; version=0\.0\.4/);
    const m = samples(res.body);
    const expected: Record<string, number> = {
      'avatar_kiosk_sessions_started_total': 5,
      'avatar_kiosk_sessions_ended_total{outcome="ended",end_reason="user_end"}': 3,
      'avatar_kiosk_sessions_ended_total{outcome="ended",end_reason="audit_violation"}': 1,
      'avatar_kiosk_sessions_ended_total{outcome="failed",end_reason="insufficient_credits"}': 1,
      'avatar_kiosk_sessions_live_total': 4,
      'avatar_kiosk_time_to_live_seconds_count': 4,
      'avatar_kiosk_time_to_live_seconds_bucket{le="+Inf"}': 4,
      'avatar_kiosk_not_ready_retries_total': 1,
      'avatar_kiosk_reconnects_total': 1,
      // Demo calls on the built-in emulator: play money, never in what the account was billed.
      'avatar_kiosk_credits_total': 0,
      'avatar_kiosk_billed_seconds_total': 0,
      'avatar_kiosk_spares_total{status="created"}': 2,
      'avatar_kiosk_spares_total{status="used"}': 1,
      'avatar_kiosk_spares_total{status="expired"}': 1,
      'avatar_kiosk_spares_total{status="failed"}': 1,
      'avatar_kiosk_renderer_crashes_total{reason="crashed"}': 1,
      'avatar_kiosk_renderer_crashes_total{reason="oom"}': 1,
      'avatar_kiosk_renderer_crashes_total{reason="other"}': 1,
      'avatar_kiosk_app_restarts_total': 3,
      'avatar_kiosk_errors_total{code="insufficient_credits"}': 1,
      'avatar_kiosk_info{version="9.9.9",mode="demo"}': 1,
      'avatar_kiosk_session_active': 0,
    };
    for (const [key, want] of Object.entries(expected)) assert.equal(m.get(key), want, `${key}\n${res.body}`);
    // Exactly these label sets exist for the labelled counters (nothing else was counted).
    const keysOf = (prefix: string) => [...m.keys()].filter((k) => k.startsWith(prefix)).sort();
    assert.deepEqual(keysOf('avatar_kiosk_sessions_ended_total'), Object.keys(expected).filter((k) => k.startsWith('avatar_kiosk_sessions_ended_total')).sort());
    assert.deepEqual(keysOf('avatar_kiosk_errors_total'), ['avatar_kiosk_errors_total{code="insufficient_credits"}']);
    // No live_id, key or spare id anywhere in the exposition.
    for (const secret of [...liveIds, emulator.apiKey, 'live-spare-secret']) assert.ok(!res.body.includes(secret), `leaked ${secret}`);
    // Not the global registry.
    assert.doesNotMatch(res.body, /process_cpu|nodejs_/);

    const health = await get(server.port, '/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.body), { up: true, mode: 'demo', sessionPhase: 'failed', lastErrorCode: 'insufficient_credits', version: '9.9.9' });
  });

  it('counts a session once even when its terminal state is re-sent', () => {
    const metrics = createKioskMetrics({ version: '1' });
    const listeners: Array<(e: KioskEvent) => void> = [];
    metrics.observe({ onEvent: (l) => (listeners.push(l), () => {}), state: { phase: 'idle' }, mode: 'direct' });
    const emit = (state: SessionState) => listeners.forEach((l) => l({ type: 'state', state, previous: 'idle' }));
    emit({ phase: 'creating' });
    const failed: SessionState = { phase: 'failed', liveId: null, error: { code: 'network', message: 'x' }, summary: null };
    emit(failed);
    emit(failed);
    return metrics.render().then((text) => {
      const m = samples(text);
      assert.equal(m.get('avatar_kiosk_sessions_started_total'), 1);
      assert.equal(m.get('avatar_kiosk_sessions_ended_total{outcome="failed",end_reason="network"}'), 1);
      assert.equal(m.get('avatar_kiosk_errors_total{code="network"}'), 1);
    });
  });
});

describe('metrics endpoint authentication', () => {
  let metrics: KioskMetrics;
  let server: MetricsServer;

  it('refuses a non-loopback bind without a token', async () => {
    metrics = createKioskMetrics({ version: '1' });
    await assert.rejects(startMetricsServer({ metrics, host: '0.0.0.0', port: 0 }), (e: unknown) => e instanceof AvatarError && e.code === 'invalid_config' && /metrics\.token/.test(e.message));
    assert.throws(
      () => resolveConfig({ metrics: { enabled: true, host: '0.0.0.0' } }, {}),
      (e: unknown) => e instanceof AvatarError && e.details?.field === 'metrics.token',
    );
    assert.equal(resolveConfig({ metrics: { enabled: true, host: '0.0.0.0', token: TOKEN } }, {}).metrics.host, '0.0.0.0');
    assert.equal(resolveConfig({ metrics: { enabled: true, host: '::1' } }, {}).metrics.token, undefined);
  });

  it('on 0.0.0.0 with a token: 401 without it or with a wrong one, 200 with it; 404 and 405 elsewhere', async () => {
    metrics = createKioskMetrics({ version: '1' });
    server = await startMetricsServer({ metrics, host: '0.0.0.0', port: 0, token: TOKEN });
    closers.push(() => server.close());
    const cases: Array<[string, Record<string, string>, number]> = [
      ['/metrics', {}, 401],
      ['/healthz', {}, 401],
      ['/metrics', { authorization: `Bearer ${TOKEN}x` }, 401],
      ['/metrics', { authorization: TOKEN }, 401],
      ['/metrics', { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` }, 401],
      ['/metrics', { authorization: `Bearer ${TOKEN}` }, 200],
      ['/healthz', { authorization: `Bearer ${TOKEN}` }, 200],
      ['/other', { authorization: `Bearer ${TOKEN}` }, 404],
    ];
    const got: number[] = [];
    for (const [path, headers] of cases) got.push((await get(server.port, path, headers)).status);
    assert.deepEqual(got, cases.map((c) => c[2]));
    const unauthorized = await get(server.port, '/metrics', {});
    assert.equal(unauthorized.body, 'Unauthorized\n');
    assert.ok(!unauthorized.body.includes(TOKEN));
    assert.equal((await get(server.port, '/metrics', { authorization: `Bearer ${TOKEN}` }, 'POST')).status, 405);
    await server.close();
    await server.close(); // idempotent
  });
});

describe('startFleetMetrics and the launch counter', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kiosk-metrics-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const idle = { onEvent: () => () => {}, state: { phase: 'idle' } as SessionState, mode: 'demo' };

  it('countLaunch answers the launches before this one and persists the new count; a bad file counts from 0', () => {
    const path = join(dir, 'metrics-state.json');
    assert.deepEqual([countLaunch(path), countLaunch(path), countLaunch(path)], [0, 1, 2]);
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), { launches: 3 });
    writeFileSync(path, '{"launches": -4}');
    assert.equal(countLaunch(path), 0);
    writeFileSync(path, 'not json');
    assert.equal(countLaunch(path), 0);
    assert.equal(countLaunch(path), 1);
  });

  it('is off unless enabled; serves restarts and start-up errors when on; a taken port is logged, not thrown', async () => {
    const launchStatePath = join(dir, 'launches.json');
    writeFileSync(launchStatePath, '{"launches": 7}');
    const metricsOff = resolveConfig({}, {}).metrics;
    assert.equal(await startFleetMetrics({ config: { metrics: metricsOff }, service: idle, version: '1', launchStatePath }), null);
    const on = { metrics: { enabled: true, host: '127.0.0.1', port: 0 } };
    const fleet = (await startFleetMetrics({ config: on, service: idle, version: '2.0.0', launchStatePath, startupErrors: ['invalid_config'] }))!;
    closers.push(() => fleet.close());
    const m = samples((await get(fleet.server.port, '/metrics')).body);
    assert.equal(m.get('avatar_kiosk_app_restarts_total'), 7);
    assert.equal(m.get('avatar_kiosk_errors_total{code="invalid_config"}'), 1);
    assert.deepEqual(JSON.parse((await get(fleet.server.port, '/healthz')).body), { up: true, mode: 'demo', sessionPhase: 'idle', lastErrorCode: 'invalid_config', version: '2.0.0' });

    const logged: string[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (msg: string) => void logged.push(msg) };
    const taken = { metrics: { enabled: true, host: '127.0.0.1', port: fleet.server.port } };
    assert.equal(await startFleetMetrics({ config: taken, service: idle, version: '1', launchStatePath, logger }), null);
    assert.deepEqual(logged, ['The metrics endpoint could not start; the kiosk runs without it']);
  });
});

describe('metrics server limits (no token needed on loopback, and the port may face the LAN)', () => {
  /** Open `n` TCP connections that never send a byte; count the ones the server closes. */
  async function idleConnections(port: number, n: number): Promise<{ sockets: Socket[]; closed: () => number }> {
    let closed = 0;
    const sockets = await Promise.all(
      Array.from({ length: n }, () => new Promise<Socket>((resolve, reject) => {
        const s = connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => undefined); // a reset from the server is what we count
        s.once('close', () => closed++);
        s.once('error', reject);
      }).catch(() => null)),
    );
    return { sockets: sockets.filter((s): s is Socket => s !== null), closed: () => closed };
  }
  const waitFor = async (what: string, pred: () => boolean) => {
    const deadline = Date.now() + 15_000;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('holds at most 16 idle connections out of 200; the rest are closed on arrival', async (t) => {
    const metrics = createKioskMetrics({ version: '1.0.0-test' });
    const server = await startMetricsServer({ metrics, host: '127.0.0.1', port: 0, idleTimeoutMs: 60_000 });
    const idle = await idleConnections(server.port, 200);
    t.after(async () => {
      for (const s of idle.sockets) s.destroy();
      await server.close();
    });
    await waitFor('the excess connections to be closed', () => idle.closed() >= 200 - 16);
    await new Promise((r) => setTimeout(r, 300)); // and no more than those
    assert.equal(200 - idle.closed(), 16, 'connections the server still holds');
  });

  it('closes connections that stay silent, after which scrapes are answered again', async (t) => {
    const metrics = createKioskMetrics({ version: '1.0.0-test' });
    const server = await startMetricsServer({ metrics, host: '127.0.0.1', port: 0, maxConnections: 4, idleTimeoutMs: 300 });
    t.after(() => server.close());
    const idle = await idleConnections(server.port, 4);
    await waitFor('the idle connections to be closed', () => idle.closed() === 4);
    const health = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port: server.port, path: '/healthz' }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject).end();
    });
    assert.equal(health, 200);
  });
});


describe("the last call's connection figures", () => {
  it('are absent until a call reports, then exported exactly as the last report said', async (t) => {
    const config = resolveConfig({ callMode: 'audio', avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } }, {});
    const channels = createChannelRegistry();
    const kiosk = await createKiosk({ channels, awaitRendererRtc: false, config, apiKey: null, apiKeySource: 'none', emulatorKnobs: { warmupMs: { audio: 0, video: 0 }, endingMs: 20 } });
    t.after(() => kiosk.shutdown());
    const metrics = createKioskMetrics({ version: '9.9.9' });
    metrics.observe(kioskMetricsSource(kiosk));
    const before = samples(await metrics.render());
    for (const key of before.keys()) assert.ok(!key.startsWith('avatar_kiosk_last_call_'), `${key} before any call`);

    const live = waitFor(kiosk, phaseIs('live'));
    const r = await kiosk.calls.start({});
    assert.ok(r.ok && r.value.liveId);
    const liveId = r.value.liveId;
    await live;
    const report = (figures: Record<string, unknown>) => channels.dispatch('kiosk:session:report-quality', { liveId, ...figures });
    assert.deepEqual(await report({ bitrateKbps: 980, packetLossPct: 0.5, frameRate: 25, rttMs: 52, level: 'good' }), { ok: true, value: { accepted: true } });
    assert.deepEqual(await report({ bitrateKbps: 310, packetLossPct: 12.5, frameRate: 9.5, rttMs: 640, level: 'poor' }), { ok: true, value: { accepted: true } });
    // Out of range: refused before the handler, the kept figures stay.
    const bad = await report({ bitrateKbps: 310, packetLossPct: 140, frameRate: 9.5, rttMs: 640, level: 'poor' });
    assert.equal(bad.ok, false);
    // Another call's late report is ignored.
    assert.deepEqual(
      await channels.dispatch('kiosk:session:report-quality', { liveId: 'live-someone-else', bitrateKbps: 1, packetLossPct: 0, frameRate: 1, rttMs: 1, level: 'good' }),
      { ok: true, value: { accepted: false } },
    );
    await kiosk.calls.hangup();

    const after = samples(await metrics.render());
    assert.equal(after.get('avatar_kiosk_last_call_bitrate_kbps{level="poor"}'), 310);
    assert.equal(after.get('avatar_kiosk_last_call_packet_loss_ratio{level="poor"}'), 0.125);
    assert.equal(after.get('avatar_kiosk_last_call_frame_rate{level="poor"}'), 9.5);
    assert.equal(after.get('avatar_kiosk_last_call_rtt_ms{level="poor"}'), 640);
    assert.deepEqual([...after.keys()].filter((k) => k.startsWith('avatar_kiosk_last_call_')).length, 4, 'one sample per gauge (the last report only)');
    assert.deepEqual(
      { ...kiosk.telemetry.lastCallQuality, atMs: 0 },
      { bitrateKbps: 310, packetLossPct: 12.5, frameRate: 9.5, rttMs: 640, level: 'poor', atMs: 0, final: false },
    );
  });
});
