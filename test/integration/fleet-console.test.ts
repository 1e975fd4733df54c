/**
 * The fleet console's server and broker link on a real Mosquitto (127.0.0.1, password file, the
 * per-kiosk ACL of docs/fleet.md), with simulated kiosks running the real kiosk link:
 *  - only the operator with the token reaches it, only under its own host name, never from the LAN;
 *  - commands go to one kiosk, a group or the fleet, checked first with the kiosk's own parser;
 *  - its persistent session: calls that end while the console is down reach it when it is back;
 *  - spend as CSV, per kiosk, day and avatar.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectAsync } from 'mqtt';
import { systemClock } from '../../electron/core/clock.ts';
import { startFleetConsole, type FleetConsole } from '../../electron/fleet/console/index.ts';
import { CONSOLE_CSP } from '../../electron/fleet/console/server.ts';
import { NOT_RECEIVED } from '../../electron/fleet/console/spend.ts';
import { KEY_HEADER, SECURE_COOKIE } from '../../electron/fleet/console/sessions.ts';
import { startSimulatedKiosk, type SimulatedKiosk } from '../../electron/fleet/console/simulated.ts';
import type { VisitorsView } from '../../electron/fleet/console/view.ts';
import { CONSOLE_LOGIN, mosquittoMissing, PREFIX, startBroker, type Broker } from '../helpers/mosquitto.ts';
import { httpRequest as http } from '../helpers/http-request.ts';
import { realDelay, until } from '../helpers/until.ts';

const missing = mosquittoMissing();
if (missing) console.log(`# SKIP the fleet console broker tests: ${missing}`);
const USERS: Record<string, string> = { 'fleet-console': 'console-secret-1', operator: 'op-console-1', 'k-1': 'pw-1', 'k-2': 'pw-2', 'k-3': 'pw-3', 'v-1': 'pw-v1', 'v-2': 'pw-v2', 'w-1': 'pw-w1', 'w-2': 'pw-w2', 'w-3': 'pw-w3', 'x-1': 'pw-x1', 'x-2': 'pw-x2', 'x-3': 'pw-x3' };
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const WAIT_MS = 15_000;
const ROOT = join(import.meta.dirname, '..', '..');

/** The real CLI process (`npm run cli -- fleet …`). */
function cli(args: string[], env: Record<string, string>, onLine?: (line: string, child: ChildProcess) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Node itself, as `npm run cli` runs it: behind tsx's own parent process a signal is relayed, and on a
  // loaded machine that parent SIGKILLs the CLI when it has not confirmed within 30 ms (no hang-up sent).
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'electron/cli/index.ts'), ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const line of d.toString().split('\n').filter(Boolean)) onLine?.(line, child);
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))));
}

describe('fleet console with a real Mosquitto', { skip: missing ?? false }, () => {
  let broker: Broker;
  let fleet: FleetConsole;
  let root: string;
  const kiosks: Record<string, SimulatedKiosk> = {};
  const start = (id: string, group: string, avatars = ['ava', 'max']) => {
    kiosks[id] = startSimulatedKiosk({ url: broker.url, kioskId: id, username: id, password: USERS[id], group, topicPrefix: PREFIX, dataDir: join(root, id), clock: systemClock, screenshotPng: PNG, avatars, reconnectMs: 300 });
    return kiosks[id];
  };
  const consoleOn = (token = 'operator-token-for-tests-0123456789') =>
    startFleetConsole({ brokerUrl: broker.url, topicPrefix: PREFIX, clientId: 'console-it', username: CONSOLE_LOGIN, password: USERS[CONSOLE_LOGIN]!, pageDir: join(root, 'page'), token, reconnectMs: 300 });
  const bearer = () => ({ authorization: `Bearer ${fleet.token}`, host: new URL(fleet.server.origin).host });

  before(async () => {
    broker = await startBroker(USERS, { groups: { 'k-1': 'lobby', 'k-2': 'lobby', 'k-3': 'shop', 'v-1': 'hall', 'v-2': 'hall', 'w-1': 'wing', 'w-2': 'wing', 'w-3': 'wing', 'x-1': 'yard', 'x-2': 'yard', 'x-3': 'yard' } });
    root = mkdtempSync(join(tmpdir(), 'ak-fleet-console-'));
    mkdirSync(join(root, 'page'));
    writeFileSync(join(root, 'page', 'index.html'), '<!doctype html><title>console</title>');
    fleet = await consoleOn();
    start('k-1', 'lobby');
    start('k-2', 'lobby');
    start('k-3', 'shop');
    await until(() => fleet.state.rows().filter((r) => r.online).length === 3, { realTimeoutMs: WAIT_MS, message: 'three kiosks online' });
  });
  after(async () => {
    for (const k of Object.values(kiosks)) await k.close();
    await fleet?.close();
    await broker?.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  describe('who can reach it', () => {
    it('refuses a request without the token, with a wrong one, or under another host name', async () => {
      const origin = fleet.server.origin;
      assert.equal((await http(origin, '/api/kiosks')).status, 401);
      assert.equal((await http(origin, '/metrics')).status, 401);
      assert.equal((await http(origin, '/api/kiosks', { headers: { authorization: 'Bearer not-the-token' } })).status, 401);
      // A DNS-rebinding page reaches 127.0.0.1 under its own name: refused even with the cookie.
      const rebound = await http(origin, '/api/kiosks', { headers: { ...bearer(), host: `evil.example:${new URL(origin).port}` } });
      assert.equal(rebound.status, 421);
    });

    it("signs in with the token for a session cookie that is not the token, which another server on 127.0.0.1 receives but cannot use", async () => {
      const origin = fleet.server.origin;
      const signed = await http(origin, '/api/sign-in', { method: 'POST', headers: { host: new URL(origin).host, 'content-type': 'application/json', origin }, body: JSON.stringify({ token: fleet.token }) });
      assert.equal(signed.status, 200);
      const cookie = String(signed.headers['set-cookie']);
      assert.match(cookie, new RegExp(`^${SECURE_COOKIE.replace('-', '\\-')}=[^;]+; Secure; HttpOnly; SameSite=Strict; Path=/$`));
      const sent = cookie.split(';')[0]!;
      assert.ok(!sent.includes(fleet.token!), 'the cookie is not the token');
      // What another server on 127.0.0.1 the operator visits receives: the cookie. Neither as a cookie alone
      // nor as a bearer does it open the console.
      const value = sent.slice(sent.indexOf('=') + 1);
      assert.equal((await http(origin, '/api/kiosks', { headers: { host: new URL(origin).host, cookie: sent } })).status, 401);
      assert.equal((await http(origin, '/api/kiosks', { headers: { host: new URL(origin).host, authorization: `Bearer ${value}` } })).status, 401);
      const key = (JSON.parse(signed.body) as { key: string }).key;
      assert.equal((await http(origin, '/api/kiosks', { headers: { host: new URL(origin).host, cookie: sent, [KEY_HEADER]: key } })).status, 200);
      const page = await http(origin, '/', { headers: { host: new URL(origin).host } });
      assert.equal(page.status, 200);
      assert.match(page.body, /<title>console<\/title>/);
      assert.equal(page.headers['content-security-policy'], CONSOLE_CSP);
      assert.match(CONSOLE_CSP, /script-src 'self';/);
      assert.doesNotMatch(CONSOLE_CSP, /unsafe/);
    });

    it('refuses a cross-origin POST and a non-JSON one', async () => {
      const body = JSON.stringify({ target: { kiosks: ['k-1'] }, command: { cmd: 'ping' } });
      const cross = await http(fleet.server.origin, '/api/command', { method: 'POST', headers: { ...bearer(), origin: 'http://evil.example', 'content-type': 'application/json' }, body });
      assert.equal(cross.status, 403);
      const form = await http(fleet.server.origin, '/api/command', { method: 'POST', headers: { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' }, body });
      assert.equal(form.status, 415);
      assert.deepEqual(kiosks['k-1']!.did, []);
    });

    it('listens on 127.0.0.1 only: not on the computer\'s network addresses', async (t) => {
      const lan = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal);
      if (!lan) return t.skip('this computer has no non-loopback IPv4 address');
      const port = new URL(fleet.server.origin).port;
      await assert.rejects(http(`http://${lan.address}:${port}`, '/api/kiosks', { headers: bearer() }), /ECONNREFUSED/);
    });
  });

  describe('commands', () => {
    const send = async (target: unknown, command: unknown) => {
      const res = await http(fleet.server.origin, '/api/command', { method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' }, body: JSON.stringify({ target, command }) });
      return JSON.parse(res.body) as { ok: boolean; id?: string; expected?: string[]; error?: { code: string; message: string } };
    };

    it('a group command reaches that group only; each answer is shown per kiosk', async () => {
      const sent = await send({ group: 'lobby' }, { cmd: 'ping' });
      assert.equal(sent.ok, true, JSON.stringify(sent));
      assert.deepEqual(sent.expected?.sort(), ['k-1', 'k-2']);
      await until(() => ['k-1', 'k-2'].every((k) => fleet.state.row(k)?.lastAnswer?.id === sent.id), { realTimeoutMs: WAIT_MS, message: 'the lobby answers' });
      assert.equal(fleet.state.row('k-1')!.lastAnswer!.summary, '{"pong":true,"version":"0.1.0"}');
      await realDelay(500);
      assert.notEqual(fleet.state.row('k-3')!.lastAnswer?.id, sent.id, 'the shop kiosk did not get it');
    });

    it('a fleet-wide screenshot reaches every kiosk; each picture is served by the console', async () => {
      const sent = await send({ fleet: true }, { cmd: 'screenshot' });
      assert.equal(sent.ok, true);
      await until(() => ['k-1', 'k-2', 'k-3'].every((k) => fleet.state.row(k)?.lastAnswer?.id === sent.id), { realTimeoutMs: WAIT_MS, message: 'three screenshots' });
      const url = fleet.state.row('k-3')!.lastAnswer!.screenshotUrl!;
      const png = await http(fleet.server.origin, url, { headers: bearer() });
      assert.equal(png.status, 200);
      assert.equal(png.headers['content-type'], 'image/png');
      assert.equal((await http(fleet.server.origin, url)).status, 401, 'not without the token');
    });

    it('refuses what the kiosk would refuse, before anything is sent', async () => {
      const before = Object.values(kiosks).map((k) => k.did.length);
      const key = await send({ kiosks: ['k-1'] }, { cmd: 'apply', settings: { apiKey: 'sk-x' } });
      assert.deepEqual(key, { ok: false, error: { code: 'invalid_request', message: '"apply" cannot change "apiKey"; it may change only avatar.name, avatar.persona, cast, schedule, idle.promptSeconds, idle.hangupSeconds.' } });
      const unknown = await send({ kiosks: ['k-1'] }, { cmd: 'format-disk' });
      assert.equal(unknown.ok, false);
      assert.match(unknown.error!.message, /Unknown command "format-disk"/);
      const wildcard = await send({ kiosks: ['+'] }, { cmd: 'ping' });
      assert.equal(wildcard.ok, false);
      await realDelay(300);
      assert.deepEqual(Object.values(kiosks).map((k) => k.did.length), before);
    });

    it('sends each command with an expiry, never retained', async () => {
      const watcher = await connectAsync(broker.url, { username: 'operator', password: USERS.operator, protocolVersion: 5, reconnectPeriod: 0 });
      const seen: Array<{ retain: boolean; expiry: number | undefined; body: Record<string, unknown> }> = [];
      watcher.on('message', (_topic, payload, packet) => seen.push({ retain: packet.retain, expiry: packet.properties?.messageExpiryInterval, body: JSON.parse(payload.toString()) as Record<string, unknown> }));
      await watcher.subscribeAsync(`${PREFIX}/k-3/cmd`, { qos: 1 });
      const sent = await send({ kiosks: ['k-3'] }, { cmd: 'ping' });
      await until(() => seen.length === 1, { realTimeoutMs: WAIT_MS });
      await watcher.endAsync();
      assert.equal(seen[0]!.retain, false);
      assert.ok(seen[0]!.expiry! > 0 && seen[0]!.expiry! <= 120, `expiry ${seen[0]!.expiry}`);
      assert.equal(seen[0]!.body.id, sent.id);
      assert.ok(Date.parse(String(seen[0]!.body.expiresAt)) > Date.now());
    });
  });

  it('a kiosk refuses a command past its expiresAt, unrun, and says so; the console, which never sent it, does not count that answer', async () => {
    const op = await connectAsync(broker.url, { username: 'operator', password: USERS.operator, protocolVersion: 5, reconnectPeriod: 0 });
    const answers: Array<Record<string, unknown>> = [];
    op.on('message', (_topic, payload) => answers.push(JSON.parse(payload.toString()) as Record<string, unknown>));
    await op.subscribeAsync(`${PREFIX}/k-2/cmd/result`, { qos: 1 });
    const before = kiosks['k-2']!.did.length;
    const unsolicited = fleet.state.refusals.count('results', 'unsolicited');
    await op.publishAsync(`${PREFIX}/k-2/cmd`, JSON.stringify({ id: 'stale-1', cmd: 'screenshot', expiresAt: new Date(Date.now() - 1000).toISOString() }), { qos: 1 });
    await until(() => answers.some((a) => a.id === 'stale-1'), { realTimeoutMs: WAIT_MS, message: 'the refusal' });
    await op.endAsync();
    const answer = answers.find((a) => a.id === 'stale-1') as { ok: boolean; error: { code: string; message: string } };
    assert.equal(answer.ok, false);
    assert.equal(answer.error.code, 'expired');
    assert.match(answer.error.message, /^The command expired at .*; it was not run\.$/);
    assert.equal(kiosks['k-2']!.did.length, before);
    await until(() => fleet.state.refusals.count('results', 'unsolicited') === unsolicited + 1, { realTimeoutMs: WAIT_MS, message: 'the console refused the answer to a command it did not send' });
    assert.notEqual(fleet.state.row('k-2')?.lastAnswer?.id, 'stale-1');
  });

  describe('cli fleet (the real CLI process against the console)', () => {
    const env = () => ({ FLEET_CONSOLE_URL: fleet.server.origin, FLEET_CONSOLE_TOKEN: fleet.token! });

    it('list prints every kiosk; a wrong token is refused', async () => {
      const listed = await cli(['fleet', 'list'], env());
      assert.equal(listed.code, 0, listed.stderr);
      const lines = listed.stdout.trim().split('\n');
      assert.match(lines[0]!, /^KIOSK\tSTATUS\tSINCE\tGROUP/);
      assert.deepEqual(lines.slice(1).map((l) => l.split('\t').slice(0, 2).join(' ')), ['k-1 online', 'k-2 online', 'k-3 online']);
      const refused = await cli(['fleet', 'list'], { ...env(), FLEET_CONSOLE_TOKEN: 'wrong-token-123' });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /refused the token/);
    });

    it("send --group prints each kiosk's answer; a refused apply exits 2 with the kiosk's reason", async () => {
      const sent = await cli(['fleet', 'send', '--group', 'shop', 'ping'], env());
      assert.equal(sent.code, 0, sent.stderr);
      assert.equal(sent.stdout, 'k-3\tok\t{"pong":true,"version":"0.1.0"}\n');
      const refused = await cli(['fleet', 'send', 'k-1', 'apply', '{"apiKey":"sk-x"}'], env());
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /"apply" cannot change "apiKey"/);
    });

    it('watch prints a line when a kiosk changes, until interrupted', async () => {
      let asked = false;
      const watched = await cli(['fleet', 'watch'], env(), (line, child) => {
        if (!asked && line.includes('k-3')) {
          asked = true;
          kiosks['k-3']!.startCall();
        }
        if (/\tk-3\tonline\tlive\t/.test(line)) child.kill('SIGINT');
      });
      kiosks['k-3']!.endCall();
      await until(() => fleet.state.spendRows().some((r) => r.kioskId === 'k-3'), { realTimeoutMs: WAIT_MS, message: "k-3's call on the console" });
      assert.equal(watched.code, 0, watched.stderr);
      assert.match(watched.stdout, /\tk-3\tonline\tidle\t-\n[\s\S]*\tk-3\tonline\tlive\t-\n/);
    });

    it("visitors: the day's funnel of a group as the kiosks counted it, thresholded, from the real console", async () => {
      const v1 = start('v-1', 'hall');
      const v2 = start('v-2', 'hall');
      for (let i = 0; i < 8; i++) v1.visitor('walks-past');
      for (let i = 0; i < 6; i++) (v1.startCall(), v1.endCall());
      for (let i = 0; i < 5; i++) (v2.startCall(), v2.endCall());
      for (let i = 0; i < 2; i++) v2.visitor('taps-and-gives-up');
      const noticed = (id: string) => fleet.state.funnels().find((f) => f.kioskId === id)?.visitors?.counts.noticed;
      await until(() => noticed('v-1') === 14 && noticed('v-2') === 7, { realTimeoutMs: WAIT_MS, message: "the hall's funnels on the console" });
      const printed = await cli(['fleet', 'visitors'], env());
      assert.equal(printed.code, 0, printed.stderr);
      // The hall: 21 noticed, 13 stopped, greeted and tapped, 11 live; v-2's 2 who gave up are under 5 (v-1's 0 too).
      const hall = printed.stdout.split('\n').find((l) => l.startsWith('hall\t'));
      assert.equal(hall, 'hall\t2\t13\t11\t38 % of the passers-by noticed did not stop.');
      const json = await cli(['fleet', 'visitors', '--json'], env());
      const view = JSON.parse(json.stdout) as VisitorsView;
      const group = view.groups.find((g) => g.group === 'hall')!;
      assert.deepEqual(
        Object.fromEntries(Object.entries(group.figures).map(([step, f]) => [step, f.text])),
        { noticed: '21', approached: '13', greeted: '13', tapped: '13', refused: 'fewer than 5 at each of 2 kiosks', gaveUp: 'fewer than 5 at each of 2 kiosks', failed: 'fewer than 5 at each of 2 kiosks', live: '11', endedWell: '11', endedBadly: 'fewer than 5 at each of 2 kiosks' },
      );
    });
  });

  describe('settings in waves (a staged apply through the broker)', () => {
    type Staged = { ok: boolean; id?: string; waves?: { first: number; rest: number }; error?: { code: string; message: string } };
    type Record_ = { state: string; ok: number; refused: number; expired: number; notSent: number; note: string | null; waves: Array<{ kiosks: number }> | null };
    const stage = async (group: string, settings: unknown, firstWave: number, expiresInS?: number) => {
      const body = { target: { group }, command: { cmd: 'apply', settings }, firstWave, ...(expiresInS ? { expiresInS } : {}) };
      const res = await http(fleet.server.origin, '/api/command', { method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return JSON.parse(res.body) as Staged;
    };
    const record = async (id: string) => (JSON.parse((await http(fleet.server.origin, `/api/commands/${id}`, { headers: bearer() })).body) as { command: Record_ }).command;
    /** Polls the command's record until it reaches `state`. */
    const settles = async (id: string, state: string, ms = WAIT_MS) => {
      const end = Date.now() + ms;
      for (;;) {
        const r = await record(id);
        if (r.state === state) return r;
        if (Date.now() > end) assert.fail(`command ${id} is still "${r.state}" after ${ms} ms: ${JSON.stringify(r)}`);
        await realDelay(100);
      }
    };
    const applies = (id: string) => kiosks[id]!.did.filter((d) => d === 'apply').length;
    const online = (ids: string[]) => until(() => ids.every((k) => fleet.state.row(k)?.online === true), { realTimeoutMs: WAIT_MS, message: `${ids.join(', ')} online` });

    it('the rest gets it once the first wave ran it; a refusal in the first wave stops it and the rest is never sent it', async () => {
      start('w-1', 'wing', ['ava']); // has no "max": it refuses a cast with "max" in it
      start('w-2', 'wing');
      start('w-3', 'wing');
      await online(['w-1', 'w-2', 'w-3']);

      const good = await stage('wing', { cast: ['ava'] }, 1);
      assert.deepEqual(good.waves, { first: 1, rest: 2 }, JSON.stringify(good));
      const ran = await settles(good.id!, 'done');
      assert.deepEqual([ran.ok, ran.refused, ran.expired, ran.notSent, ran.waves?.map((w) => w.kiosks)], [3, 0, 0, 0, [1, 2]]);
      assert.deepEqual(['w-1', 'w-2', 'w-3'].map(applies), [1, 1, 1]);

      const bad = await stage('wing', { cast: ['max'] }, 1);
      assert.deepEqual(bad.waves, { first: 1, rest: 2 });
      const stopped = await settles(bad.id!, 'stopped');
      assert.match(stopped.note!, /^Stopped after the first wave: w-1 refused \(.*There is no cast member \\?"max\\?" on this kiosk.*\)\. The other 2 kiosks were not sent it\.$/);
      assert.deepEqual([stopped.ok, stopped.refused, stopped.notSent, stopped.waves?.map((w) => w.kiosks)], [0, 1, 2, [1]]);
      await realDelay(1000);
      assert.deepEqual(['w-1', 'w-2', 'w-3'].map(applies), [2, 1, 1], 'w-1 ran it and refused; w-2 and w-3 never got it');
    });

    it('a first-wave kiosk that is offline past the expiry: "expired, never ran", the rest never sent it, and back online it does not run it', async () => {
      for (const k of ['x-1', 'x-2', 'x-3']) start(k, 'yard');
      await online(['x-1', 'x-2', 'x-3']);
      await kiosks['x-2']!.close();
      await kiosks['x-3']!.close();
      await until(() => !fleet.state.row('x-2')!.online && !fleet.state.row('x-3')!.online, { realTimeoutMs: WAIT_MS, message: 'x-2 and x-3 offline' });

      // Online kiosks go first: x-1, then x-2 (offline); x-3 is the rest.
      const sent = await stage('yard', { avatar: { name: 'Yard' } }, 2, 10);
      assert.deepEqual(sent.waves, { first: 2, rest: 1 }, JSON.stringify(sent));
      const stopped = await settles(sent.id!, 'stopped', 30_000); // 10 s expiry + the grace for a late answer
      assert.equal(stopped.note, 'Stopped after the first wave: x-2 expired, never ran. The other 1 kiosk was not sent it.');
      assert.deepEqual([stopped.ok, stopped.expired, stopped.notSent], [1, 1, 1]);
      assert.equal(applies('x-1'), 1);

      start('x-2', 'yard'); // its broker session was kept; the command expired in it
      await online(['x-2']);
      await realDelay(1000);
      assert.equal(applies('x-2'), 0, 'the kiosk back after the expiry did not run it');
    });
  });

  it("keeps a persistent session: calls that end while the console is down reach it when it is back; spend as CSV", async () => {
    kiosks['k-1']!.startCall();
    kiosks['k-1']!.endCall('user_end', 3);
    await until(() => fleet.state.spendRows().some((r) => r.kioskId === 'k-1'), { realTimeoutMs: WAIT_MS, message: 'the first call' });
    await fleet.close();
    kiosks['k-2']!.startCall();
    kiosks['k-2']!.endCall('credit_insufficient', 2);
    kiosks['k-1']!.startCall();
    kiosks['k-1']!.endCall('user_end', 1);
    await until(() => kiosks['k-1']!.link.connected && kiosks['k-2']!.link.connected, { realTimeoutMs: WAIT_MS });
    await realDelay(500); // published to the broker, which holds them for the console's session
    fleet = await consoleOn();
    await until(() => fleet.state.spendRows().filter((r) => r.avatar !== NOT_RECEIVED).reduce((n, r) => n + r.sessions, 0) === 2, { realTimeoutMs: WAIT_MS, message: 'the calls ended while the console was down' });
    assert.equal(fleet.state.row('k-2')!.accountTrouble, 1);
    const csv = await http(fleet.server.origin, '/api/spend.csv', { headers: bearer() });
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-disposition']), /attachment; filename="fleet-spend.csv"/);
    const day = new Date().toISOString().slice(0, 10);
    // The simulated kiosks' calls are demo calls: labelled so in the CSV.
    assert.equal(csv.body, `day,kiosk,avatar,sessions,credits,demo\r\n${day},k-1,ava,1,1,yes\r\n${day},k-2,max,1,2,yes\r\n`);
  });
});
