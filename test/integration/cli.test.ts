/**
 * The CLI as a user runs it: a child process (`tsx electron/cli/index.ts …`), real HTTP and WebSocket
 * traffic on 127.0.0.1, against the embedded emulator or a standalone one started here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startEmulator, type EmulatorHandle } from '../../electron/emulator/index.ts';
import { ROOT, startCli } from '../helpers/cli-process.ts';

const runCli = (args: string[], env: Record<string, string> = {}) => startCli(args, env).done;

function onlyJson(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1, `expected exactly one line on stdout, got: ${stdout}`);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

async function until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('cli probe on the embedded emulator (no URL given)', () => {
  it('runs a whole audio session and prints exactly one JSON report', async () => {
    const run = await runCli(['probe', '--json', '--mode', 'audio', '--hold', '1']);
    assert.equal(run.code, 0, run.stderr);
    const report = onlyJson(run.stdout);
    assert.equal(typeof report.live_id, 'string');
    assert.equal(report.call_mode, 'audio');
    assert.equal(report.went_live, true);
    assert.equal(report.hangup_reason, 'user_end');
    assert.equal(report.final_status, 'ended');
    // 1 s hold (plus a few ms) rounds up to 2 s: 3 credits (spec §8).
    assert.equal(report.billed_seconds, 2);
    assert.equal(report.credits_cost, 3);
    assert.equal(report.not_ready_retries, 0);
    assert.equal(report.reconnects, 0);
    assert.equal('error' in report, false);
    const t = report.timings_ms as Record<string, number>;
    assert.ok(t.create! >= 0 && t.create! <= t.socket_open! && t.socket_open! <= t.live! && t.live! < t.ended!, JSON.stringify(t));
    assert.ok(t.ended! - t.live! >= 1000, `held at least 1 s: ${JSON.stringify(t)}`);
  });

  it('waits out NOT_READY in video mode (the default) and says so in a human timeline', async () => {
    const run = await runCli(['probe', '--hold', '0']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /NOT_READY #1/);
    assert.match(run.stdout, /live: the avatar is in the room/);
    assert.match(run.stdout, /final status ended; billed \d+ s, \d+ credits; [1-9]\d* NOT_READY retr/);
  });
});

describe('cli probe against a standalone emulator', () => {
  let emulator: EmulatorHandle;
  before(async () => {
    emulator = await startEmulator({ knobs: { warmupMs: { audio: 0, video: 0 } } });
  });
  after(async () => {
    await emulator.close();
  });

  it('uses the direct surface with the key from AVATAR_API_KEY', async () => {
    const run = await runCli(['probe', '--json', '--mode', 'video', '--hold', '0', '--base-url', emulator.baseUrl], { AVATAR_API_KEY: emulator.apiKey });
    assert.equal(run.code, 0, run.stderr);
    const report = onlyJson(run.stdout);
    assert.equal(report.call_mode, 'video');
    assert.equal(emulator.getSession(report.live_id as string)?.status, 'ended');
  });

  it('uses the gateway surface with no key at all', async () => {
    const run = await runCli(['probe', '--json', '--mode', 'audio', '--hold', '0', '--gateway-url', emulator.gatewayUrl]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(onlyJson(run.stdout).hangup_reason, 'user_end');
  });

  it('asks for moderation "strict" unless told otherwise, and says which it sent (the gateway would default to disabled)', async () => {
    const strict = await runCli(['probe', '--mode', 'audio', '--hold', '0', '--gateway-url', emulator.gatewayUrl]);
    assert.equal(strict.code, 0, strict.stderr);
    assert.match(strict.stdout, /creating an audio session on .*, moderation strict\n/);
    const told = await runCli(['probe', '--json', '--mode', 'audio', '--hold', '0', '--moderation', 'disabled', '--gateway-url', emulator.gatewayUrl]);
    assert.equal(told.code, 0, told.stderr);
    const sent = (id: string) => (emulator.getSession(id)!.receivedRequest as { moderation?: string }).moderation;
    assert.equal(sent(onlyJson(told.stdout).live_id as string), 'disabled');
    const last = emulator.listSessions().sort((a, b) => a.createdAtMs - b.createdAtMs);
    assert.deepEqual(last.slice(-2).map((s) => (s.receivedRequest as { moderation?: string }).moderation), ['strict', 'disabled']);
  });

  it('exits non-zero with one human line and no report when the key is rejected', async () => {
    const run = await runCli(['probe', '--json', '--mode', 'audio', '--base-url', emulator.baseUrl, '--api-key', 'wrong-key-123456']);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    const lines = run.stderr.trim().split('\n').filter((l) => l.startsWith('probe:'));
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0]!, /\[unauthorized\]/);
    assert.doesNotMatch(run.stderr, /wrong-key-123456/, 'the key never appears in output');
    assert.doesNotMatch(run.stderr, /\bat .*\.ts:\d+/, 'no stack trace');
  });

  it('reports a forced hangup as a failure with the server reason, and does not reconnect', async () => {
    const probe = startCli(['probe', '--json', '--mode', 'audio', '--hold', '30', '--base-url', emulator.baseUrl, '--api-key', emulator.apiKey]);
    await until(() => emulator.listSessions().some((s) => s.status === 'on_live'), 'the session to go live');
    const live = emulator.listSessions().find((s) => s.status === 'on_live')!;
    emulator.forceHangup(live.id, 'audit_violation');
    const run = await probe.done;
    assert.equal(run.code, 1, run.stderr);
    const report = onlyJson(run.stdout);
    assert.equal(report.live_id, live.id);
    assert.equal(report.went_live, true);
    assert.equal(report.hangup_reason, 'audit_violation');
    assert.equal(report.final_status, 'ended');
    assert.equal(emulator.getSession(live.id)?.socketsOpened, 1, 'no reconnect after audit_violation (spec §6 rule 6)');
    assert.equal(run.stderr.trim().split('\n').filter((l) => l.startsWith('probe:')).length, 1);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`hangs up, prints the report and exits non-zero on ${signal} while live`, async () => {
      const probe = startCli(['probe', '--json', '--mode', 'audio', '--hold', '30', '--base-url', emulator.baseUrl, '--api-key', emulator.apiKey]);
      const before = new Set(emulator.listSessions().map((s) => s.id));
      await until(() => emulator.listSessions().some((s) => !before.has(s.id) && s.status === 'on_live'), 'the session to go live');
      const live = emulator.listSessions().find((s) => !before.has(s.id))!;
      probe.child.kill(signal);
      const run = await probe.done;
      assert.equal(run.code, signal === 'SIGINT' ? 130 : 143, run.stderr);
      const report = onlyJson(run.stdout);
      assert.equal(report.live_id, live.id);
      assert.equal(report.hangup_reason, 'user_end');
      const session = emulator.getSession(live.id)!;
      assert.equal(session.hangupReason, 'user_end');
      assert.equal(session.status, 'ended');
      assert.deepEqual(
        session.clientMessages.filter((m) => m.type === 5).length,
        1,
        'exactly one hangup (type 5) was sent',
      );
      assert.equal(emulator.liveCount(), 0);
    });
  }

  it('on SIGTERM while the create is in flight: waits for its answer, closes the room with type 5 and never sends conn_init', async () => {
    emulator.knobs.createDelayMs = 1_500;
    try {
      const before = new Set(emulator.listSessions().map((s) => s.id));
      const probe = startCli(['probe', '--json', '--mode', 'audio', '--hold', '30', '--base-url', emulator.baseUrl, '--api-key', emulator.apiKey]);
      // The room exists on the service as soon as the request arrives; its answer is still 1.5 s away.
      await until(() => emulator.listSessions().some((s) => !before.has(s.id)), 'the create request to arrive');
      const room = emulator.listSessions().find((s) => !before.has(s.id))!;
      probe.child.kill('SIGTERM');
      const run = await probe.done;
      assert.equal(run.code, 143, run.stderr);
      // The CLI may exit before this process's emulator has read the frame it sent last (a loaded machine).
      await until(() => emulator.getSession(room.id)!.clientMessages.length > 0, 'the hangup to reach the service', 5_000);
      const session = emulator.getSession(room.id)!;
      assert.equal(session.connInits, 0, 'no conn_init: the avatar never went live, nothing was billed');
      assert.deepEqual(session.clientMessages.map((m) => m.type), [5], 'exactly one frame: the hangup');
      assert.equal(session.hangupReason, 'user_end');
      assert.notEqual(session.status, 'waiting', 'no room is left waiting');
      assert.equal(session.billedSeconds, 0);
      assert.equal(JSON.parse(run.stdout.trim()).live_id, room.id, 'the report names the room it closed');
    } finally {
      emulator.knobs.createDelayMs = 0;
    }
  });

  it('clones and lists voices', async () => {
    const common = ['--base-url', emulator.baseUrl, '--api-key', emulator.apiKey];
    const clone = await runCli(['voices', 'clone', '--audio-url', 'https://example.test/sample.mp3', '--voice', 'Concierge', '--json', ...common]);
    assert.equal(clone.code, 0, clone.stderr);
    assert.deepEqual(onlyJson(clone.stdout), { voice: 'Concierge' });
    const list = await runCli(['voices', 'list', '--json', ...common]);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(onlyJson(list.stdout), { voices: [{ voice: 'Concierge' }] });
  });
});

describe('cli usage errors', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['both surfaces', ['probe', '--base-url', 'http://127.0.0.1:9', '--gateway-url', 'http://127.0.0.1:9'], /either --base-url .* or --gateway-url/],
    ['a direct URL with no key', ['probe', '--base-url', 'http://127.0.0.1:9'], /needs an API key/],
    ['a bad mode', ['probe', '--mode', 'hologram'], /--mode must be one of audio, video/],
    ['a negative hold', ['probe', '--hold=-3'], /--hold must be a number/],
    ['an unknown option', ['probe', '--colour', 'red'], /Unknown option '--colour'/],
    ['an unknown command', ['dance'], /unknown command "dance"/],
    ['a non-http URL', ['probe', '--gateway-url', 'ftp://127.0.0.1/x'], /http/i],
  ];
  for (const [what, args, message] of cases) {
    it(`rejects ${what} with exit 2 and one line`, async () => {
      const run = await runCli(args);
      assert.equal(run.code, 2, run.stderr + run.stdout);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    });
  }

  it('rejects an image that is not PNG, JPEG or WEBP before creating anything', async () => {
    const run = await runCli(['probe', '--json', '--mode', 'audio', '--image', join(ROOT, 'package.json')]);
    assert.notEqual(run.code, 0);
    assert.equal(run.stdout, '', 'no session was created, so no report');
    assert.match(run.stderr, /invalid_request/);
  });
});

describe('cli emulator', () => {
  it('prints its URLs and demo key, serves, and stops on SIGTERM', async () => {
    const proc = startCli(['emulator', '--json']);
    await until(() => proc.output().includes('\n'), 'the emulator to print its URLs');
    const info = JSON.parse(proc.output().split('\n')[0]!) as { base_url: string; gateway_url: string; api_key: string };
    assert.match(info.base_url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${info.base_url}/live/v1/voices`, { headers: { Authorization: `Token ${info.api_key}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { voices: [] });
    proc.child.kill('SIGTERM');
    const run = await proc.done;
    assert.equal(run.code, 0, run.stderr);
  });
});
