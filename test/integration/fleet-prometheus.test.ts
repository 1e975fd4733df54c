/**
 * The fleet's monitoring as an operator installs it: the alert rules pass Debian's `promtool test rules`;
 * Debian's real `prometheus` scrapes the fleet console (127.0.0.1, the operator token from a file) while
 * simulated kiosks on a real Mosquitto take calls, and every series it stores names its kiosk; every
 * Grafana panel's and alert's query runs on that Prometheus and finds data the console exports.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connectAsync } from 'mqtt';
import { systemClock } from '../../electron/core/clock.ts';
import { startFleetConsole } from '../../electron/fleet/console/index.ts';
import { createConsoleMetrics, FLEET_PREFIX } from '../../electron/fleet/console/metrics.ts';
import { startSimulatedKiosk, type SimulatedKiosk } from '../../electron/fleet/console/simulated.ts';
import { FleetState } from '../../electron/fleet/console/state.ts';
import { CONSOLE_LOGIN, freePort, mosquittoMissing, PREFIX, startBroker } from '../helpers/mosquitto.ts';
import { until } from '../helpers/until.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const RULES_DIR = join(ROOT, 'ops', 'prometheus');
const DASHBOARD = join(ROOT, 'ops', 'grafana', 'fleet-dashboard.json');
const which = (bin: string) => ['/usr/bin', '/usr/local/bin', '/usr/sbin'].map((d) => join(d, bin)).find(existsSync) ?? null;
const PROMTOOL = which('promtool');
const PROMETHEUS = which('prometheus');
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets: Array<{ expr: string; refId: string }>;
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; title: string; schemaVersion: number; panels: Panel[]; templating: { list: Array<{ name: string; type: string }> } };
// Every family a scrape carries (its own scrape-error counter included), as its TYPE lines name them.
const exported = new Set([...(await createConsoleMetrics(new FleetState({ now: Date.now }), () => true).render()).matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]!));
const namesIn = (expr: string) => [...expr.matchAll(/\bavatar_fleet_[a-z_]+\b/g)].map((m) => m[0]);
const alertExprs = () => {
  const text = readFileSync(join(RULES_DIR, 'fleet-alerts.yml'), 'utf8');
  // The rules' expressions, read with promtool's own parser would need YAML; the file keeps them simple.
  return [...text.matchAll(/expr: (?:\|\n((?: {10}.*\n)+)|(.*)\n)/g)].map((m) => (m[1] ?? m[2]!).trim());
};

describe('fleet dashboard (Grafana JSON)', () => {
  it('has a uid, a datasource variable, unique panel ids and panels that fit the 24-column grid without overlap', () => {
    assert.equal(dashboard.uid, 'avatar-kiosk-fleet');
    assert.ok(dashboard.schemaVersion >= 36);
    assert.ok(dashboard.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource'));
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      assert.ok(p.gridPos.x >= 0 && p.gridPos.x + p.gridPos.w <= 24, `${p.title} fits the width`);
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          assert.ok(!cells.has(`${x},${y}`), `${p.title} overlaps another panel at ${x},${y}`);
          cells.add(`${x},${y}`);
        }
      assert.ok(p.targets.length > 0, `${p.title} has a query`);
    }
  });

  it('queries only series the console exports (the rules too)', () => {
    const used = [...dashboard.panels.flatMap((p) => p.targets.flatMap((t) => namesIn(t.expr))), ...alertExprs().flatMap(namesIn)];
    assert.ok(used.length > 10);
    assert.deepEqual(
      used.filter((n) => !exported.has(n)),
      [],
    );
  });
});

describe('alert rules', { skip: PROMTOOL ? false : 'promtool is not installed (Debian: apt-get install prometheus)' }, () => {
  it('pass promtool check rules and promtool test rules', () => {
    const check = spawnSync(PROMTOOL!, ['check', 'rules', 'fleet-alerts.yml'], { cwd: RULES_DIR, encoding: 'utf8' });
    assert.equal(check.status, 0, check.stdout + check.stderr);
    const test = spawnSync(PROMTOOL!, ['test', 'rules', 'fleet-alerts.test.yml'], { cwd: RULES_DIR, encoding: 'utf8' });
    assert.equal(test.status, 0, test.stdout + test.stderr);
    assert.match(test.stdout, /SUCCESS/);
  });
});

const skipScrape = mosquittoMissing() ?? (PROMETHEUS ? null : 'prometheus is not installed (Debian: apt-get install prometheus)');
describe('Prometheus scrapes the fleet console', { skip: skipScrape ?? false }, () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('stores every series with its kiosk label, and every panel and alert query runs', async () => {
    const broker = await startBroker({ [CONSOLE_LOGIN]: 'op-prom', 'k-1': 'pw-1', 'k-2': 'pw-2', rogue: 'pw-rogue' }, { groups: { 'k-1': 'lobby', 'k-2': 'lobby' } });
    cleanups.push(() => broker.dispose());
    const dir = mkdtempSync(join(tmpdir(), 'ak-fleet-prom-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const fleet = await startFleetConsole({ brokerUrl: broker.url, topicPrefix: PREFIX, clientId: 'console-prom', username: CONSOLE_LOGIN, password: 'op-prom', pageDir: dir, reconnectMs: 300 });
    cleanups.push(() => fleet.close());
    const kiosks: SimulatedKiosk[] = ['k-1', 'k-2'].map((id, i) =>
      startSimulatedKiosk({ url: broker.url, kioskId: id, username: id, password: `pw-${i + 1}`, group: 'lobby', topicPrefix: PREFIX, dataDir: join(dir, id), clock: systemClock, screenshotPng: PNG, avatars: ['ava', 'max'], surface: 'direct' }),
    );
    cleanups.push(() => Promise.all(kiosks.map((k) => k.close())).then(() => undefined));
    await until(() => fleet.state.rows().filter((r) => r.online).length === 2, { realTimeoutMs: 20_000, message: 'two kiosks online' });
    kiosks[0]!.startCall();
    kiosks[0]!.endCall('user_end', 2.5);
    kiosks[1]!.startCall();
    kiosks[1]!.endCall('media_stalled', 1);
    kiosks[1]!.startCall();
    kiosks[1]!.endCall('credit_insufficient', 0.5);
    await until(() => fleet.state.spendRows().reduce((n, r) => n + r.sessions, 0) === 3, { realTimeoutMs: 20_000, message: 'three calls on the console' });
    // Six passers-by at k-1: with its caller, 7 noticed (shown); k-2's 2 stay under the threshold.
    for (let i = 0; i < 6; i++) kiosks[0]!.visitor('walks-past');
    await until(() => fleet.state.funnels().find((f) => f.kioskId === 'k-1')?.visitors?.counts.noticed === 7, { realTimeoutMs: 20_000, message: "k-1's funnel on the console" });

    writeFileSync(join(dir, 'token'), fleet.token!, { mode: 0o600 });
    const port = await freePort();
    const target = new URL(fleet.server.origin).host;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${join(RULES_DIR, 'fleet-alerts.yml')}`,
        'scrape_configs:',
        '  - job_name: avatar-fleet',
        '    authorization:',
        `      credentials_file: ${join(dir, 'token')}`,
        '    static_configs:',
        `      - targets: ['${target}']`,
        '',
      ].join('\n'),
    );
    const prom: ChildProcess = spawn(PROMETHEUS!, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let promLog = '';
    prom.stderr!.on('data', (d: Buffer) => (promLog = (promLog + d.toString()).slice(-4000)));
    cleanups.push(() => new Promise<void>((resolve) => (prom.exitCode !== null ? resolve() : (prom.once('exit', () => resolve()), prom.kill('SIGTERM')))));

    const query = async (expr: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`);
      return (await res.json()) as { status: string; error?: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
    };
    let online: Awaited<ReturnType<typeof query>> | null = null;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      online = await query('avatar_fleet_kiosk_online').catch(() => null);
      if (online?.data?.result.length === 2) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.equal(online?.data.result.length, 2, `Prometheus stored the kiosks' series (log: ${promLog})`);
    assert.deepEqual(online!.data.result.map((r) => r.metric.kiosk).sort(), ['k-1', 'k-2']);

    const up = await query('up{job="avatar-fleet"}');
    assert.equal(up.data.result[0]?.value[1], '1', 'the scrape with the token succeeds');
    // Every stored fleet series names its kiosk, but the console's own and the fleet's and groups' totals.
    const all = await query('{__name__=~"avatar_fleet_.+"}');
    const fleetWide = ['broker_connected', 'kiosks', 'kiosks_offline', 'group_kiosks', 'group_kiosks_offline', 'broker_messages_dropped_total', 'last_message_timestamp_seconds', 'broker_session_problems_total', 'visitors'].map((n) => `${FLEET_PREFIX}${n}`);
    const unlabelled = all.data.result.filter((r) => !r.metric.kiosk && !fleetWide.includes(r.metric.__name__!)).map((r) => r.metric.__name__);
    assert.deepEqual(unlabelled, []);
    const groups = await query('avatar_fleet_group_kiosks');
    assert.deepEqual(groups.data.result.map((r) => `${r.metric.group}=${r.value[1]}`), ['lobby=2']);
    const credits = await query('avatar_fleet_credits_total');
    assert.deepEqual(credits.data.result.map((r) => `${r.metric.kiosk}/${r.metric.avatar}=${r.value[1]}`).sort(), ['k-1/max=2.5', 'k-2/ava=0.5', 'k-2/max=1']);
    const trouble = await query('avatar_fleet_account_trouble_total');
    assert.deepEqual(trouble.data.result.map((r) => `${r.metric.kiosk}/${r.metric.reason}=${r.value[1]}`), ['k-2/credit_insufficient=1']);

    const funnel = await query('avatar_fleet_kiosk_visitors');
    assert.deepEqual(funnel.data.result.map((r) => `${r.metric.kiosk}/${r.metric.step}=${r.value[1]}`), ['k-1/noticed=7'], 'only counts of 5 and more leave the console');
    const fleetFunnel = await query('sum by (step) (avatar_fleet_visitors{step=~"noticed|tapped"})');
    assert.deepEqual(fleetFunnel.data.result.map((r) => `${r.metric.step}=${r.value[1]}`).sort(), ['noticed=7', 'tapped=0']);

    for (const expr of [...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)), ...alertExprs()]) {
      const result = await query(expr);
      assert.equal(result.status, 'success', `${expr}: ${result.error ?? ''}`);
    }
    const rules = (await (await fetch(`http://127.0.0.1:${port}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: unknown[] }> } };
    assert.equal(rules.data.groups[0]?.rules.length, 16, 'Prometheus loaded the alert rules');

    // A compromised kiosk publishes what made prom-client throw (a negative cost, two costs that add up
    // to Infinity): the console refuses them, and Prometheus keeps scraping every kiosk's series.
    const rogue = await connectAsync(broker.url, { username: 'rogue', password: 'pw-rogue', clientId: 'rogue', protocolVersion: 5, reconnectPeriod: 0 });
    cleanups.push(() => rogue.endAsync(true));
    const attack = [-1, 1e308, 1e308].map((cost, i) => JSON.stringify({ id: `rogue-${i}`, kioskId: 'rogue', record: { kind: 'session', end_at: new Date().toISOString(), end_reason: 'user_end', credits_cost: cost, avatar: 'ava' } }));
    for (const payload of attack) await rogue.publishAsync(`${PREFIX}/rogue/events`, payload, { qos: 1 });
    // Filed, refused or (without the console's checks) counted.
    await until(() => fleet.state.refusals.count('events') === 3 || fleet.state.row('rogue') !== null, { realTimeoutMs: 20_000, message: 'the three events arrived' });
    // Scrapes every second: three seconds on, the state of the latest one.
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal((await query('up{job="avatar-fleet"}')).data.result[0]?.value[1], '1', 'the console still answers its scrapes');
    const refused = await query('avatar_fleet_refused_payloads_total');
    assert.deepEqual(refused.data.result.map((r) => `${r.metric.reason}=${r.value[1]}`).sort(), ['negative=1', 'too_large=2']);
    assert.equal((await query('avatar_fleet_kiosk_online')).data.result.length, 2, "every kiosk's series still there");
    assert.deepEqual((await query('avatar_fleet_credits_total >= 0')).data.result.length, 3, 'no credits went below zero or to Infinity');
  });
});
