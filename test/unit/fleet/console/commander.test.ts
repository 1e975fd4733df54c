/**
 * Sending commands (commander.ts) with the real command log and fleet state, a scripted broker link and
 * an injected clock: a viewer is refused (the message, nothing sent, the refusal in the audit log); a
 * staged command goes to its first wave (online kiosks first) and to the rest only once all of them ran
 * it; a refusal or an expiry in the first wave stops it, and the log says why and how many were never
 * sent it; an operator's expiry goes with the command.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AUDIT_NAME, EXPIRY_GRACE_MS, openCommandLog } from '../../../../electron/fleet/console/command-log.ts';
import { createCommander } from '../../../../electron/fleet/console/commander.ts';
import type { ConsoleLink, SendOptions } from '../../../../electron/fleet/console/link.ts';
import { FleetState } from '../../../../electron/fleet/console/state.ts';
import type { AnswerView, CommandResponse, CommandTarget } from '../../../../electron/fleet/console/view.ts';
import { FakeClock } from '../../../helpers/fake-clock.ts';
import { onlineStatus } from '../../../helpers/fleet-payloads.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-fleet-commander-');
const T0 = Date.parse('2026-11-24T10:00:00Z');
const DEFAULT_TTL_S = 120;
const iso = (ms: number) => new Date(ms).toISOString();
const OPERATOR = { name: 'ana', role: 'operator' as const };
const VIEWER = { name: 'wall', role: 'viewer' as const };

/** The broker link: each send as asked (target, command, options), answered as the real link does: it tells
 *  `onSending` of the command before publishing it. A kiosk may answer before the broker's acknowledgement
 *  (`answerBeforeAck`), and the publish may then fail (`failAfterSending`). */
class ScriptedLink implements Pick<ConsoleLink, 'send'> {
  sent: Array<{ target: CommandTarget; command: Record<string, unknown>; options: Omit<SendOptions, 'onSending'> | undefined }> = [];
  answerBeforeAck: ((id: string, kiosks: string[]) => void) | null = null;
  failAfterSending: { code: string; message: string } | null = null;
  constructor(private readonly clock: FakeClock) {}
  send(target: CommandTarget, command: Record<string, unknown>, options?: SendOptions): Promise<CommandResponse> {
    const { onSending, ...kept } = options ?? {};
    this.sent.push({ target, command, options: options ? kept : undefined });
    const kiosks = 'kiosks' in target ? target.kiosks : [];
    const id = options?.id ?? `c-${this.sent.length}`;
    const expiresAtMs = this.clock.now() + (options?.ttlS ?? DEFAULT_TTL_S) * 1000;
    onSending?.({ id, expected: kiosks, expiresAtMs });
    this.answerBeforeAck?.(id, kiosks);
    if (this.failAfterSending) return Promise.resolve({ ok: false, error: this.failAfterSending });
    return Promise.resolve({ ok: true, id, expected: kiosks, expiresAt: iso(expiresAtMs) });
  }
}

function rig() {
  const dir = tempDir();
  const clock = new FakeClock(T0);
  const state = new FleetState({ now: () => clock.now() });
  // Four kiosks of the lobby; lobby-1 is offline.
  for (const k of ['lobby-1', 'lobby-2', 'lobby-3', 'lobby-4']) state.onStatus(k, onlineStatus({ kioskId: k }), false);
  state.onStatus('lobby-1', JSON.stringify({ online: false, kioskId: 'lobby-1', reason: 'connection lost' }), false);
  const log = openCommandLog({ dir, clock });
  const link = new ScriptedLink(clock);
  const commander = createCommander({ link: link as unknown as ConsoleLink, state, log, now: () => clock.now() });
  const answer = (kioskId: string, id: string, ok: boolean, summary: string) => log.answer(kioskId, { id, cmd: 'apply', ok, summary, screenshotUrl: null, at: iso(clock.now()) } satisfies AnswerView);
  return { dir, clock, state, log, link, commander, answer, close: () => (commander.close(), log.close()) };
}
const auditLines = (dir: string) => readFileSync(join(dir, `${AUDIT_NAME}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('createCommander', () => {
  it('refuses a read-only viewer: the message, nothing sent, and the refusal with who asked in the audit log', async () => {
    const r = rig();
    const res = await r.commander.send({ target: { group: 'lobby' }, command: { cmd: 'reload' } }, VIEWER);
    assert.deepEqual(res, { ok: false, error: { code: 'forbidden', message: '"wall" is a read-only account (viewer): it cannot send commands. An operator account can.' } });
    assert.deepEqual(r.link.sent, []);
    assert.deepEqual(r.log.recent(10), []);
    assert.deepEqual(auditLines(r.dir).map(({ s: _s, ...l }) => l), [{ t: 'refused', at: T0, by: 'wall', cmd: 'reload', target: 'group lobby', code: 'forbidden', message: '"wall" is a read-only account (viewer): it cannot send commands. An operator account can.' }]);
    r.close();
  });

  it("sends an operator's command with the expiry the operator chose, and logs who sent it", async () => {
    const r = rig();
    const res = await r.commander.send({ target: { kiosks: ['lobby-2'] }, command: { cmd: 'set-volume', volume: 40 }, expiresInS: 600 }, OPERATOR);
    assert.deepEqual(res, { ok: true, id: 'c-1', expected: ['lobby-2'], expiresAt: iso(T0 + 600_000) });
    assert.deepEqual(r.link.sent, [{ target: { kiosks: ['lobby-2'] }, command: { cmd: 'set-volume', volume: 40 }, options: { ttlS: 600 } }]);
    assert.deepEqual(r.log.recent(1).map((c) => [c.by, c.cmd, c.args, c.target, c.expiresAt]), [['ana', 'set-volume', '{"volume":40}', 'kiosk lobby-2', iso(T0 + 600_000)]]);
    r.close();
  });

  it('a staged command goes to the rest only once every kiosk of the first wave ran it (online kiosks first)', async () => {
    const r = rig();
    const res = await r.commander.send({ target: { group: 'lobby' }, command: { cmd: 'apply', avatar: 'max' }, firstWave: 2 }, OPERATOR);
    assert.ok(res.ok);
    const id = res.id;
    assert.deepEqual({ expected: res.expected, waves: res.waves }, { expected: ['lobby-2', 'lobby-3'], waves: { first: 2, rest: 2 } });
    assert.deepEqual(r.link.sent.map((s) => [s.target, s.options]), [[{ kiosks: ['lobby-2', 'lobby-3'] }, { id }]]);
    r.answer('lobby-2', id, true, '{}');
    await r.clock.advance(0);
    assert.equal(r.link.sent.length, 1, 'not before the whole first wave ran it');
    r.answer('lobby-3', id, true, '{}');
    await r.clock.advance(0);
    assert.deepEqual(r.link.sent.map((s) => s.target), [{ kiosks: ['lobby-2', 'lobby-3'] }, { kiosks: ['lobby-4', 'lobby-1'] }]);
    assert.equal(r.link.sent[1]!.options?.id, id, 'the same command, its second wave');
    const record = r.log.get(id)!.command;
    assert.deepEqual([record.state, record.expected, record.notSent, record.waves?.map((w) => w.kiosks), record.note], ['waiting', 4, 0, [2, 2], null]);
    r.close();
  });

  it('a refusal in the first wave stops it: the rest is never sent, and the log says why', async () => {
    const r = rig();
    const res = await r.commander.send({ target: { group: 'lobby' }, command: { cmd: 'apply', avatar: 'max' }, firstWave: 2 }, OPERATOR);
    assert.ok(res.ok);
    r.answer('lobby-2', res.id, true, '{}');
    r.answer('lobby-3', res.id, false, 'invalid_request: No avatar "max" in this kiosk\'s cast.');
    await r.clock.advance(0);
    assert.equal(r.link.sent.length, 1, 'the second wave is not sent');
    const record = r.log.get(res.id)!.command;
    assert.deepEqual([record.state, record.ok, record.refused, record.notSent, record.note], [
      'stopped', 1, 1, 2,
      'Stopped after the first wave: lobby-3 refused (invalid_request: No avatar "max" in this kiosk\'s cast.). The other 2 kiosks were not sent it.',
    ]);
    assert.deepEqual(auditLines(r.dir).map((l) => l.t), ['sent', 'answer', 'answer', 'stopped']);
    r.close();
  });

  it('a first-wave kiosk that never ran it (expired) stops the rest too: "expired, never ran"', async () => {
    const r = rig();
    const res = await r.commander.send({ target: { group: 'lobby' }, command: { cmd: 'apply', avatar: 'max' }, firstWave: 1, expiresInS: 60 }, OPERATOR);
    assert.ok(res.ok);
    assert.deepEqual(res.expected, ['lobby-2']);
    await r.clock.advance(60_000 + EXPIRY_GRACE_MS);
    const record = r.log.get(res.id)!.command;
    assert.deepEqual([record.state, record.expired, record.notSent, record.note], ['stopped', 1, 3, 'Stopped after the first wave: lobby-2 expired, never ran. The other 3 kiosks were not sent it.']);
    assert.deepEqual(record.problems.map((p) => [p.kioskId, p.summary]), [['lobby-2', `expired, never ran (no answer by ${iso(T0 + 60_000)})`]]);
    assert.equal(r.link.sent.length, 1);
    r.close();
  });

  it('counts an answer that comes back before the broker acknowledged the publish, in either wave and unstaged', async () => {
    const r = rig();
    r.link.answerBeforeAck = (id, kiosks) => kiosks.forEach((k) => r.answer(k, id, true, '{}'));
    const staged = await r.commander.send({ target: { group: 'lobby' }, command: { cmd: 'apply', avatar: 'max' }, firstWave: 2 }, OPERATOR);
    assert.ok(staged.ok);
    await r.clock.advance(0);
    const record = r.log.get(staged.id)!.command;
    assert.deepEqual([record.state, record.ok, record.expired, record.notSent, record.waves?.map((w) => w.kiosks)], ['done', 4, 0, 0, [2, 2]]);
    const once = await r.commander.send({ target: { kiosks: ['lobby-2'] }, command: { cmd: 'reload' } }, OPERATOR);
    assert.ok(once.ok);
    assert.deepEqual([r.log.get(once.id)!.command.state, r.log.get(once.id)!.command.ok], ['done', 1]);
    r.close();
  });

  it('a publish that fails once the command is in the log: the record stops with the reason and keeps the answers; no second refusal line', async () => {
    const r = rig();
    const problem = { code: 'timeout', message: 'The broker did not confirm the command within 10 s.' };
    r.link.failAfterSending = problem;
    r.link.answerBeforeAck = (id) => r.answer('lobby-2', id, true, '{}');
    const res = await r.commander.send({ target: { kiosks: ['lobby-2', 'lobby-3'] }, command: { cmd: 'reload' } }, OPERATOR);
    assert.deepEqual(res, { ok: false, error: problem });
    const [record] = r.log.recent(1);
    assert.deepEqual([record!.state, record!.by, record!.ok, record!.note], ['stopped', 'ana', 1, problem.message]);
    assert.deepEqual(auditLines(r.dir).map((l) => l.t), ['sent', 'answer', 'stopped']);
    r.close();
  });

  it('a second wave whose publish fails stops the command with the reason', async () => {
    const r = rig();
    const res = await r.commander.send({ target: { group: 'lobby' }, command: { cmd: 'apply', avatar: 'max' }, firstWave: 2 }, OPERATOR);
    assert.ok(res.ok);
    r.link.failAfterSending = { code: 'network', message: 'The console is not connected to the broker.' };
    r.answer('lobby-2', res.id, true, '{}');
    r.answer('lobby-3', res.id, true, '{}');
    await r.clock.advance(0);
    const record = r.log.get(res.id)!.command;
    assert.deepEqual([record.state, record.note], ['stopped', 'The first wave ran; the rest (2 kiosks) could not be sent: The console is not connected to the broker.']);
    r.close();
  });

  it('refuses a first wave that is not one, saying why', async () => {
    const r = rig();
    assert.deepEqual(await r.commander.send({ target: { group: 'lobby' }, command: { cmd: 'reload' }, firstWave: 0 }, OPERATOR), { ok: false, error: { code: 'invalid_request', message: 'The first wave must be a whole number of kiosks, 1 or more (got 0).' } });
    assert.deepEqual(await r.commander.send({ target: { group: 'lobby' }, command: { cmd: 'reload' }, firstWave: 4 }, OPERATOR), { ok: false, error: { code: 'invalid_request', message: 'A first wave of 4 needs more than 4 kiosks; group lobby has 4. Send it to all at once instead.' } });
    assert.deepEqual(r.link.sent, []);
    r.close();
  });
});
