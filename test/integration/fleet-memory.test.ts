/**
 * The fleet console's memory, accounts and broker watch on a real Mosquitto (the shipped set-up) with
 * simulated kiosks running the real kiosk link:
 *  - a restarted console shows the spend and the "since" it had (its data folder);
 *  - a broker that hangs (SIGSTOP: its connection stays open) is noticed within seconds, and a command
 *    then fails at once with a true message;
 *  - a read-only viewer cannot send; the audit log says who sent what, on disk too.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../electron/core/clock.ts';
import { accountsFromTokens } from '../../electron/fleet/console/accounts.ts';
import { startFleetConsole, type FleetConsole } from '../../electron/fleet/console/index.ts';
import { UNRESPONSIVE_AFTER_MS } from '../../electron/fleet/console/link.ts';
import { startSimulatedKiosk, type SimulatedKiosk } from '../../electron/fleet/console/simulated.ts';
import { httpRequest as http } from '../helpers/http-request.ts';
import { CONSOLE_LOGIN, mosquittoMissing, PREFIX, startBroker, type Broker } from '../helpers/mosquitto.ts';
import { until } from '../helpers/until.ts';

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP the fleet console memory tests: ${missing}`);
const USERS: Record<string, string> = { [CONSOLE_LOGIN]: 'console-secret-mem', 'k-1': 'pw-1', 'k-2': 'pw-2' };
const OPERATOR = 'operator-token-for-memory-0123456789';
const VIEWER = 'viewer-token-for-memory-0123456789';
const WAIT_MS = 20_000;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

describe('fleet console memory, accounts and broker watch (real Mosquitto)', { skip: missing ?? false }, () => {
  let broker: Broker;
  let root: string;
  const kiosks: SimulatedKiosk[] = [];
  const consoles: FleetConsole[] = [];
  const start = async () => {
    const fleet = await startFleetConsole({
      brokerUrl: broker.url,
      topicPrefix: PREFIX,
      clientId: 'console-mem',
      username: CONSOLE_LOGIN,
      password: USERS[CONSOLE_LOGIN]!,
      pageDir: join(root, 'page'),
      dataDir: join(root, 'console'),
      accounts: accountsFromTokens([
        { name: 'alice', role: 'operator', token: OPERATOR },
        { name: 'wall', role: 'viewer', token: VIEWER },
      ]),
      reconnectMs: 300,
    });
    consoles.push(fleet);
    return fleet;
  };
  const api = (fleet: FleetConsole, token: string, path: string, body?: unknown) =>
    http(fleet.server.origin, path, {
      ...(body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }),
      headers: { host: new URL(fleet.server.origin).host, authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });

  before(async () => {
    broker = await startBroker(USERS, { groups: { 'k-1': 'lobby', 'k-2': 'lobby' } });
    root = mkdtempSync(join(tmpdir(), 'ak-fleet-memory-'));
    mkdirSync(join(root, 'page'));
    writeFileSync(join(root, 'page', 'index.html'), '<!doctype html><title>console</title>');
    for (const id of ['k-1', 'k-2'])
      kiosks.push(startSimulatedKiosk({ url: broker.url, kioskId: id, username: id, password: USERS[id], group: 'lobby', topicPrefix: PREFIX, dataDir: join(root, id), clock: systemClock, screenshotPng: PNG, avatars: ['ava'], reconnectMs: 300 }));
  });
  after(async () => {
    process.kill(broker.pid!, 'SIGCONT');
    for (const k of kiosks) await k.close();
    for (const c of consoles) await c.close().catch(() => undefined);
    await broker?.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('a restarted console shows the spend and the "since" it had', async () => {
    const first = await start();
    await until(() => first.state.rows().filter((r) => r.online).length === 2, { realTimeoutMs: WAIT_MS, message: 'two kiosks online' });
    kiosks[0]!.startCall();
    kiosks[0]!.endCall('user_end', 2.5);
    kiosks[1]!.startCall();
    kiosks[1]!.endCall('user_end', 1);
    await until(() => first.state.spendRows().reduce((n, r) => n + r.sessions, 0) === 2, { realTimeoutMs: WAIT_MS, message: 'two calls on the console' });
    const spend = first.state.spendRows();
    const since = first.state.rows().map((r) => [r.kioskId, r.sinceAt]);
    await first.close();
    consoles.pop();

    const second = await start();
    await until(() => second.link.connected, { realTimeoutMs: WAIT_MS, message: 'the second console connected' });
    assert.deepEqual(second.state.spendRows(), spend);
    assert.deepEqual(second.state.rows().map((r) => [r.kioskId, r.sinceAt]), since, 'the "since" it saw, not "before the console started"');
    assert.ok(existsSync(join(root, 'console')) && readdirSync(join(root, 'console')).length > 0, 'kept in its data folder');
  });

  it('a viewer cannot send (403); the audit log says who sent what, on disk too', async () => {
    const fleet = consoles.at(-1)!;
    const viewer = await api(fleet, VIEWER, '/api/command', { target: { kiosks: ['k-1'] }, command: { cmd: 'ping' } });
    assert.equal(viewer.status, 403);
    const sent = await api(fleet, OPERATOR, '/api/command', { target: { kiosks: ['k-1'] }, command: { cmd: 'ping' } });
    const id = (JSON.parse(sent.body) as { id: string }).id;
    await until(() => fleet.log.get(id)?.command.ok === 1, { realTimeoutMs: WAIT_MS, message: 'the ping answered' });
    const record = fleet.log.recent(1)[0]!;
    assert.deepEqual({ by: record.by, cmd: record.cmd, target: record.target, ok: record.ok }, { by: 'alice', cmd: 'ping', target: 'kiosk k-1', ok: 1 });
    const onDisk = readdirSync(join(root, 'console')).map((f) => (f.endsWith('.jsonl') || f.endsWith('.log') ? readFileSync(join(root, 'console', f), 'utf8') : '')).join('');
    assert.match(onDisk, new RegExp(`${id}[^\\n]*alice|alice[^\\n]*${id}`), 'the command and who sent it, on disk');
    const listed = JSON.parse((await api(fleet, VIEWER, '/api/commands')).body) as { commands: Array<{ id: string; by: string }> };
    assert.equal(listed.commands[0]!.by, 'alice');
  });

  it('a hung broker (stopped, its connection open) is noticed within seconds, and a command fails at once saying so', async () => {
    const fleet = consoles.at(-1)!;
    await until(() => fleet.link.connected, { realTimeoutMs: WAIT_MS, message: 'connected' });
    process.kill(broker.pid!, 'SIGSTOP');
    const stoppedAt = Date.now();
    try {
      await until(() => !fleet.link.connected, { realTimeoutMs: 15_000, message: 'the hung broker noticed' });
      const noticedMs = Date.now() - stoppedAt;
      assert.ok(noticedMs < UNRESPONSIVE_AFTER_MS + 4_000, `noticed after ${noticedMs} ms`);
      const t0 = Date.now();
      const refused = JSON.parse((await api(fleet, OPERATOR, '/api/command', { target: { kiosks: ['k-1'] }, command: { cmd: 'ping' } })).body) as { ok: boolean; error: { code: string; message: string } };
      assert.ok(Date.now() - t0 < 2_000, 'at once');
      assert.equal(refused.ok, false);
      assert.equal(refused.error.code, 'network');
      assert.match(refused.error.message, /^The (broker has not answered the console since|console is not connected to the broker)/);
    } finally {
      process.kill(broker.pid!, 'SIGCONT');
    }
    await until(() => fleet.link.connected, { realTimeoutMs: WAIT_MS, message: 'back once the broker answers again' });
  });
});

describe('npm run fleet: the token on stdout', { skip: missing ?? false }, () => {
  it('prints a token on the first start only (the account it makes), never again at a later start', async () => {
    const { spawn } = await import('node:child_process');
    const broker = await startBroker({ [CONSOLE_LOGIN]: 'op-stdout' });
    const dir = mkdtempSync(join(tmpdir(), 'ak-fleet-stdout-'));
    writeFileSync(join(dir, 'password'), 'op-stdout', { mode: 0o600 });
    const ROOT = join(import.meta.dirname, '..', '..');
    /** One start of the console, its stdout until it says how to scrape it, then stopped. */
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'electron/cli/fleet-console.ts'), '--broker', broker.url, '--username', CONSOLE_LOGIN, '--password-file', join(dir, 'password'), '--prefix', PREFIX, '--port', '0', '--data-dir', join(dir, 'console')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no start within 60 s: ${out}`))), 60_000);
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (/^Prometheus:/m.test(out)) child.kill('SIGTERM');
        });
        child.on('close', () => (clearTimeout(timer), resolve(out)));
      });
    try {
      const first = await run();
      const token = readFileSync(join(dir, 'console', 'admin.token'), 'utf8').trim();
      assert.match(token, /^[A-Za-z0-9_-]{32}$/);
      assert.ok(first.includes(token), 'shown once, on the first start');
      const second = await run();
      assert.ok(!second.includes(token), `not printed again: ${second}`);
      assert.match(second, /sign in with your account's token/);
    } finally {
      await broker.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
