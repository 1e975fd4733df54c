/**
 * The console's command log, its audit log (command-log.ts), on an injected clock over a real folder:
 * who sent what to whom and each kiosk's answer; a kiosk that has not answered EXPIRY_GRACE_MS after the
 * expiry is "expired, never ran" (a later answer replaces the mark); only the kiosks a command went to
 * count, once; a follower gets the answers then `done`; a new log over the same folder shows the same
 * records; a torn last line loses that record only; KEPT_COMMANDS commands kept; a staged command whose
 * console stopped before its next wave is reported as stopped.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AUDIT_NAME, EXPIRY_GRACE_MS, KEPT_COMMANDS, openCommandLog, type SentCommand } from '../../../../electron/fleet/console/command-log.ts';
import type { AnswerView, CommandFrame } from '../../../../electron/fleet/console/view.ts';
import { FakeClock } from '../../../helpers/fake-clock.ts';
import { recordingLogger } from '../../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-fleet-audit-');
const T0 = Date.parse('2026-11-24T10:00:00Z');
const TTL_MS = 120_000;
const iso = (ms: number) => new Date(ms).toISOString();

const sent = (id: string, kiosks: string[], extra: Partial<SentCommand> = {}): SentCommand => ({ id, by: 'ana', cmd: 'reload', args: '{}', target: `kiosks ${kiosks.join(', ')}`, kiosks, sentAtMs: T0, expiresAtMs: T0 + TTL_MS, ...extra });
/** A kiosk's answer as the console's state hands it on (a refusal's summary is `<code>: <message>`). */
const answer = (id: string, ok: boolean, summary: string, atMs = T0 + 1_000): AnswerView => ({ id, cmd: 'reload', ok, summary, screenshotUrl: null, at: iso(atMs) });

describe('the command log (audit log)', () => {
  it("records who sent what to whom and each kiosk's answer, on disk, and a new log over the folder shows the same", async () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const log = openCommandLog({ dir, clock });
    log.sent(sent('c-1', ['k-1', 'k-2']));
    assert.deepEqual(log.recent(10).map((c) => [c.id, c.by, c.cmd, c.target, c.expected, c.state]), [['c-1', 'ana', 'reload', 'kiosks k-1, k-2', 2, 'waiting']]);
    log.answer('k-1', answer('c-1', true, '{}'));
    log.answer('k-2', answer('c-1', false, 'busy: A call is on.'));
    const record = log.get('c-1')!;
    assert.deepEqual(
      { ...record.command, problems: record.command.problems.map((p) => p.kioskId) },
      { id: 'c-1', at: iso(T0), by: 'ana', cmd: 'reload', args: '{}', target: 'kiosks k-1, k-2', expiresAt: iso(T0 + TTL_MS), expected: 2, ok: 1, refused: 1, expired: 0, state: 'done', waves: null, notSent: 0, note: null, problems: ['k-2'] },
    );
    log.refused({ at: iso(T0), by: 'wall', cmd: 'reload', target: 'the fleet', code: 'forbidden', message: 'read-only' });
    log.signedIn('ana', 'operator');
    log.close();
    assert.equal(clock.pendingCount, 0, 'close leaves no timer');
    const lines = readFileSync(join(dir, `${AUDIT_NAME}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines.map((l) => [l.t, l.by ?? l.k]), [['sent', 'ana'], ['answer', 'k-1'], ['answer', 'k-2'], ['refused', 'wall'], ['signin', 'ana']]);

    const again = openCommandLog({ dir, clock });
    assert.deepEqual(again.get('c-1')!.command, record.command);
    assert.deepEqual(again.get('c-1')!.answers.map((a) => [a.kioskId, a.ok, a.summary]), [['k-1', true, '{}'], ['k-2', false, 'busy: A call is on.']]);
    again.close();
  });

  it(`marks a kiosk with no answer ${EXPIRY_GRACE_MS / 1000} s after the expiry "expired, never ran"; a kiosk's own "expired" refusal counts the same`, async () => {
    const clock = new FakeClock(T0);
    const log = openCommandLog({ dir: tempDir(), clock });
    log.sent(sent('c-1', ['k-1', 'k-2', 'k-3']));
    log.answer('k-3', answer('c-1', false, 'expired: The command expired before it could run.'));
    await clock.advance(TTL_MS + EXPIRY_GRACE_MS - 1);
    assert.equal(log.get('c-1')!.command.state, 'waiting');
    log.answer('k-1', answer('c-1', true, '{}', clock.now()));
    await clock.advance(1);
    const { command } = log.get('c-1')!;
    assert.deepEqual([command.ok, command.refused, command.expired, command.state], [1, 0, 2, 'done']);
    assert.deepEqual(command.problems.map((p) => [p.kioskId, p.expired, p.summary]), [
      ['k-3', true, 'expired: The command expired before it could run.'],
      ['k-2', true, `expired, never ran (no answer by ${iso(T0 + TTL_MS)})`],
    ]);
    // The kiosk's clock ran behind: its answer still comes, and replaces the mark.
    log.answer('k-2', answer('c-1', true, '{}', clock.now()));
    assert.deepEqual(log.get('c-1')!.command.problems.map((p) => p.kioskId), ['k-3']);
    assert.deepEqual([log.get('c-1')!.command.ok, log.get('c-1')!.command.expired], [2, 1]);
    log.close();
  });

  it('counts only the kiosks a command went to, each once; an answer to an unknown command counts for nothing', () => {
    const clock = new FakeClock(T0);
    const log = openCommandLog({ clock });
    log.sent(sent('c-1', ['k-1']));
    log.answer('k-9', answer('c-1', true, '{}'));
    log.answer('k-1', answer('c-1', false, 'busy: A call is on.'));
    log.answer('k-1', answer('c-1', true, '{}'));
    log.answer('k-1', answer('c-404', true, '{}'));
    const { command, answers } = log.get('c-1')!;
    assert.deepEqual([command.ok, command.refused, answers.length], [0, 1, 1]);
    log.close();
  });

  it('a follower gets each answer as it comes, then done', async () => {
    const clock = new FakeClock(T0);
    const log = openCommandLog({ clock });
    log.sent(sent('c-1', ['k-1', 'k-2']));
    const frames: CommandFrame[] = [];
    const stop = log.follow('c-1', (f) => frames.push(f));
    log.answer('k-1', answer('c-1', true, '{}'));
    await clock.advance(TTL_MS + EXPIRY_GRACE_MS);
    stop();
    assert.deepEqual(frames.map((f) => (f.type === 'answer' ? `answer ${f.answer.kioskId} ${f.answer.expired ? 'expired' : f.answer.ok ? 'ok' : 'refused'}` : `${f.type} ${f.command.state}`)), ['answer k-1 ok', 'answer k-2 expired', 'done done']);
    log.close();
  });

  it('a torn last line (a crash mid-write) loses that record only, and says so', () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const log = openCommandLog({ dir, clock });
    log.sent(sent('c-1', ['k-1']));
    log.answer('k-1', answer('c-1', true, '{}'));
    log.close();
    appendFileSync(join(dir, `${AUDIT_NAME}.jsonl`), '{"s":3,"t":"sent","id":"c-2","at":17');
    const logger = recordingLogger();
    const again = openCommandLog({ dir, clock, logger });
    assert.deepEqual(again.recent(10).map((c) => [c.id, c.ok, c.state]), [['c-1', 1, 'done']]);
    assert.deepEqual(logger.lines.map((l) => [l.level, l.message, l.data]), [['warn', 'Fleet console: lines of the store that did not parse were skipped (a write cut short)', { file: join(dir, `${AUDIT_NAME}.jsonl`), skipped: 1 }]]);
    again.close();
  });

  it(`keeps the latest ${KEPT_COMMANDS} commands in memory, and the same after a restart`, () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const log = openCommandLog({ dir, clock });
    for (let i = 1; i <= KEPT_COMMANDS + 5; i++) log.sent(sent(`c-${i}`, ['k-1']));
    const ids = log.recent(1_000).map((c) => c.id);
    assert.equal(ids.length, KEPT_COMMANDS);
    assert.deepEqual([ids[0], ids.at(-1), log.get('c-5'), log.get('c-6')?.command.id], [`c-${KEPT_COMMANDS + 5}`, 'c-6', null, 'c-6']);
    log.close();
    const again = openCommandLog({ dir, clock });
    assert.deepEqual(again.recent(1_000).map((c) => c.id), ids);
    again.close();
  });

  it('a staged command whose console stopped before the next wave is reported stopped, with the kiosks never sent it', () => {
    const dir = tempDir();
    const clock = new FakeClock(T0);
    const log = openCommandLog({ dir, clock });
    log.sent(sent('c-1', ['k-1'], { rest: 3 }));
    assert.equal(log.get('c-1')!.command.note, '3 more kiosks once this wave has run.');
    log.close();
    const again = openCommandLog({ dir, clock });
    const { command } = again.get('c-1')!;
    assert.deepEqual([command.state, command.notSent, command.note], ['stopped', 3, 'The console stopped before the rest (3 kiosks) was sent; they were not sent it.']);
    again.close();
  });
});
