/**
 * `cli doctor`, `cli ledger` and `cli pin-hash` as an installer meets them: a child process, against a
 * standalone emulator started here (direct surface) or the embedded one. What the CLI says about its API key
 * is in cli-key.test.ts (one file each keeps either well inside the per-file time limit on a loaded machine).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyPin } from '../../electron/operations/staff-pin.ts';
import type { SessionRecord } from '../../electron/operations/ledger.ts';
import { cliRunner, standaloneEmulator } from '../helpers/cli-process.ts';

const cli = cliRunner();

const emulator = standaloneEmulator();

describe('cli doctor', () => {
  it('direct surface with a good key: all checks pass, exit 0, and the test session billed nothing', async () => {
    const r = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key', emulator.apiKey, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.ok, true);
    assert.equal(report.mode, 'direct');
    assert.deepEqual(report.checks.map((c: { id: string; ok: boolean | null }) => [c.id, c.ok]), [
      ['config', true],
      ['key', true],
      ['service', true],
      ['microphone', null],
      ['camera', null],
    ]);
    const s = emulator.getSession(report.probe.liveId)!;
    assert.deepEqual([s.status, s.connInits, s.billedSeconds, s.creditsCost], ['ended', 0, 0, 0]);
    assert.deepEqual([report.probe.billedSeconds, report.probe.creditsCost], [0, 0]);
  });

  it('a refused key fails the key check: exit 1, and says so in words', async () => {
    const r = await cli(['doctor', '--base-url', emulator.baseUrl, '--api-key', 'sk-wrong-000000000000']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /FAIL key\s+The service refused the API key \(HTTP 401\)/);
    assert.match(r.stdout, /Some checks failed\./);
    assert.ok(
      r.stdout.includes('The video-network check (join time, connection, cloud proxy; nothing charged) runs on the kiosk screen: Staff → Diagnostics → Check the video network.'),
      'says where the video-network check runs',
    );
    assert.ok(!r.stdout.includes('sk-wrong-000000000000') && !r.stderr.includes('sk-wrong-000000000000'), 'the key is never printed');
  });

  it('an unreachable service fails the service check: exit 1', async () => {
    const r = await cli(['doctor', '--base-url', 'http://127.0.0.1:9', '--api-key', 'sk-any-0000000000', '--json']);
    assert.equal(r.code, 1);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.checks.slice(0, 3).map((c: { ok: boolean | null }) => c.ok), [true, null, false]);
  });

  it('an invalid config file: exit 2 with the field named; bad usage: exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-cli-cfg-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ idle: { promptSeconds: 2 } }));
    const r = await cli(['doctor', '--config', join(dir, 'config.json'), '--json']);
    assert.equal(r.code, 2);
    const report = JSON.parse(r.stdout);
    assert.equal(report.checks[0].ok, false);
    assert.match(report.checks[0].message, /idle\.promptSeconds/);
    const both = await cli(['doctor', '--base-url', 'http://a', '--gateway-url', 'http://b']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /either --base-url or --gateway-url/);
    const missing = await cli(['doctor', '--config', join(dir, 'nope.json')]);
    assert.equal(missing.code, 2);
  });

  it('with no configuration it checks the built-in emulator (demo mode): exit 0', async () => {
    const r = await cli(['doctor']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /demo mode/);
    assert.match(r.stdout, /ok {3}service {4}The service is reachable/);
  });
});

describe('cli ledger', () => {
  const now = new Date();
  // Each record at the very start of its day, so that "today" holds it whenever the test runs (a later
  // time of day would lie in the future for a run just after midnight).
  const iso = (daysBack: number) => new Date(now.getFullYear(), now.getMonth(), now.getDate() - daysBack, 0, 0, 0, 0).toISOString();
  const rec = (daysBack: number, over: Partial<SessionRecord> = {}) =>
    JSON.stringify({
      kind: 'session', v: 1, start_at: iso(daysBack), live_at: iso(daysBack), end_at: iso(daysBack), live_id: `L${daysBack}`, surface: 'direct', call_mode: 'audio',
      time_to_live_ms: 900, not_ready_retries: 0, reconnects: 0, end_reason: 'user_end', ended_by: 'client', billed_seconds: 20, credits_cost: 30, recovered: false, ...over,
    });

  it('reads the data folder named by AVATAR_KIOSK_DATA (as the browser mode does), not ~/.config: ledger and doctor', async () => {
    const data = mkdtempSync(join(tmpdir(), 'kiosk-cli-data-'));
    mkdirSync(join(data, 'ledger'));
    writeFileSync(join(data, 'ledger', 'ledger-2026-11.jsonl'), `${rec(0)}\n`);
    writeFileSync(join(data, 'config.json'), JSON.stringify({ callMode: 'audio' }));
    const ledger = await cli(['ledger'], { AVATAR_KIOSK_DATA: data });
    assert.equal(ledger.code, 0, ledger.stderr);
    assert.equal(ledger.stdout.split('\n')[0], `Credit ledger (${join(data, 'ledger')})`);
    assert.match(ledger.stdout, /today\s+1\s+30\s+20\s+0/);
    const doctor = await cli(['doctor', '--json'], { AVATAR_KIOSK_DATA: data });
    assert.equal(JSON.parse(doctor.stdout).config_path, join(data, 'config.json'), doctor.stderr);
  });

  it('prints totals, a CSV, and --since, from a ledger file with a torn last line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kiosk-cli-ledger-'));
    const file = join(dir, 'ledger.jsonl');
    writeFileSync(file, [rec(0), rec(0, { credits_cost: 'unknown', billed_seconds: null }), rec(3), '{"kind":"sess'].join('\n'));
    const json = await cli(['ledger', '--file', file, '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.match(json.stderr, /skipped 1 unreadable line/);
    const t = JSON.parse(json.stdout);
    assert.deepEqual(t.today, { sessions: 2, credits: 30, billedSeconds: 20, unknownCredits: 1, demoSessions: 0 });
    assert.deepEqual(t.last7Days, { sessions: 3, credits: 60, billedSeconds: 40, unknownCredits: 1, demoSessions: 0 });

    const csv = await cli(['ledger', '--file', file, '--csv']);
    assert.equal(csv.code, 0);
    const lines = csv.stdout.trim().split('\r\n');
    assert.equal(lines.length, 4);
    assert.match(lines[0]!, /^kind,start_at,live_at,end_at,live_id,/);

    const d = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
    const since = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    const sinceCsv = await cli(['ledger', '--file', file, '--csv', '--since', since]);
    assert.equal(sinceCsv.stdout.trim().split('\r\n').length, 3);
    const human = await cli(['ledger', '--file', file, '--since', since]);
    assert.match(human.stdout, new RegExp(`since ${since}\\s+2\\s+30\\s+20\\s+0\\s+\\(\\+1 with unknown cost\\)`));
    assert.match(human.stdout, /today\s+2\s+30\s+20/);
  });

  it('bad dates and missing files exit 2', async () => {
    assert.equal((await cli(['ledger', '--file', '/nonexistent/ledger.jsonl'])).code, 2);
    const bad = await cli(['ledger', '--file', '/nonexistent/ledger.jsonl', '--since', '2026-02-30']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--since must be a date as YYYY-MM-DD/);
  });
});

describe('cli pin-hash', () => {
  it('reads the PIN from standard input (out of ps and the shell history) and prints a hash the kiosk accepts', async () => {
    const r = await cli(['pin-hash'], {}, '582914\n');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.equal(await verifyPin('582914', r.stdout.trim()), true);
    assert.ok(!r.stdout.includes('582914'));
    const short = await cli(['pin-hash'], {}, '1234\n');
    assert.deepEqual([short.code, short.stderr.trim()], [2, 'cli: The PIN must be 6 to 8 digits.']);
    assert.equal((await cli(['pin-hash'], {}, '')).code, 2);
  });

  it('still takes the PIN as an argument, with a warning', async () => {
    const r = await cli(['pin-hash', '582914']);
    assert.equal(r.code, 0);
    assert.match(r.stderr, /^cli: warning: a PIN on the command line shows in the process list and shell history/);
    assert.equal(await verifyPin('582914', r.stdout.trim()), true);
  });

  it('refuses a guessable PIN in the words setup uses, and prints no hash', async () => {
    const answers: Array<[string, number, string, string]> = [];
    for (const pin of ['123456', '777777', '121212', '654321', '12341234']) {
      const r = await cli(['pin-hash'], {}, `${pin}\n`);
      answers.push([pin, r.code ?? -1, r.stdout, r.stderr.trim()]);
    }
    const easy = (why: string) => `cli: This PIN is easy to guess: ${why}. Choose 6 to 8 digits with no pattern.`;
    assert.deepEqual(answers, [
      ['123456', 2, '', easy('it is a run of digits')],
      ['777777', 2, '', easy('it is one digit repeated')],
      ['121212', 2, '', easy('it repeats a short block of digits')],
      ['654321', 2, '', easy('it is a run of digits')],
      ['12341234', 2, '', easy('it repeats a short block of digits')],
    ]);
  });
});
