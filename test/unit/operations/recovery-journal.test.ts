/**
 * The crash journal (recovery.ts): `current-session.json` exists exactly while a session the service may
 * bill is running, holds when it was created and when it went live, and is removed when the session is
 * over. `readLeftover` reads it back on the next start. Fed kiosk events by hand, on a FakeClock.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KioskEvent } from '../../../electron/contract.ts';
import { FakeClock } from '../../helpers/fake-clock.ts';
import type { SessionState } from '../../../electron/core/session-types.ts';
import { createSessionJournal, readLeftover, type CurrentSession } from '../../../electron/operations/recovery.ts';
import { recordingLogger } from '../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const T0 = 1_700_000_000_000;
const tempDir = tempDirsRemovedAfterEach('kiosk-journal-');

const state = (s: SessionState): KioskEvent => ({ type: 'state', state: s, previous: 'idle' });
const credentials = (liveId = 'live-1'): KioskEvent => ({
  type: 'credentials',
  liveId,
  callMode: 'video',
  liveDurationS: 120,
  rtc: {} as never,
});
const summary = {} as never;

function journal(options: { surface?: CurrentSession['surface']; path?: string } = {}) {
  const dir = tempDir();
  const path = options.path ?? join(dir, 'current-session.json');
  const clock = new FakeClock(T0);
  const logger = recordingLogger();
  const j = createSessionJournal({ path, clock, surface: () => options.surface ?? 'direct', serviceUrl: () => 'https://svc.test', logger });
  const read = () => JSON.parse(readFileSync(path, 'utf8')) as CurrentSession;
  return { dir, path, clock, logger, j, read };
}

describe('session journal', () => {
  it('records the moment the create began as the start, not the moment the credentials came', async () => {
    const { j, clock, read, logger } = journal();
    j.onEvent(state({ phase: 'creating' }));
    await clock.advance(1_500);
    j.onEvent(credentials());
    assert.deepEqual(read(), { v: 1, liveId: 'live-1', surface: 'direct', serviceUrl: 'https://svc.test', callMode: 'video', startAtMs: T0, liveAtMs: null });
    assert.deepEqual(logger.lines, []);
  });

  it('a state event between the create and the credentials does not move the start', async () => {
    const { j, clock, read } = journal();
    j.onEvent(state({ phase: 'creating' }));
    await clock.advance(700);
    j.onEvent(state({ phase: 'connecting', liveId: 'live-1', attempt: 1 }));
    await clock.advance(800);
    j.onEvent(credentials());
    assert.equal(read().startAtMs, T0);
  });

  it('without a creating state the start is the time the credentials came', async () => {
    const { j, clock, read } = journal();
    await clock.advance(2_000);
    j.onEvent(credentials());
    assert.equal(read().startAtMs, T0 + 2_000);
  });

  it('writes nothing before there is a session, and ignores events that are not session states', () => {
    const { j, path, logger } = journal();
    j.onEvent({ type: 'muted', muted: true });
    j.onEvent({ type: 'warning', message: 'a long name' });
    j.onEvent(state({ phase: 'creating' }));
    j.onEvent(state({ phase: 'live', liveId: 'live-1', sinceMs: T0, endsAtMs: T0 + 120_000 }));
    assert.equal(existsSync(path), false);
    assert.deepEqual(logger.lines, []);
  });

  it('adds the live time once live, and only a state that is live sets it', () => {
    const { j, read } = journal();
    j.onEvent(state({ phase: 'creating' }));
    j.onEvent(credentials());
    j.onEvent(state({ phase: 'connecting', liveId: 'live-1', attempt: 1 }));
    j.onEvent(state({ phase: 'warming', liveId: 'live-1', notReadyRetries: 1, retryInMs: 1000, retryAtMs: T0 + 1000 }));
    assert.equal(read().liveAtMs, null);
    j.onEvent(state({ phase: 'live', liveId: 'live-1', sinceMs: T0 + 4_000, endsAtMs: T0 + 124_000 }));
    assert.equal(read().liveAtMs, T0 + 4_000);
  });

  it('keeps the first live time when the session is live again after a reconnect', () => {
    const { j, read } = journal();
    j.onEvent(credentials());
    j.onEvent(state({ phase: 'live', liveId: 'live-1', sinceMs: T0 + 4_000, endsAtMs: T0 + 124_000 }));
    j.onEvent(state({ phase: 'reconnecting', liveId: 'live-1', attempt: 1, sinceMs: T0 + 4_000, endsAtMs: T0 + 124_000 }));
    j.onEvent(state({ phase: 'live', liveId: 'live-1', sinceMs: T0 + 9_000, endsAtMs: T0 + 129_000 }));
    assert.equal(read().liveAtMs, T0 + 4_000);
  });

  for (const end of [
    { phase: 'ended', liveId: 'live-1', summary },
    { phase: 'failed', liveId: 'live-1', error: { code: 'network', message: 'x' } as never, summary: null },
    { phase: 'idle' },
  ] as SessionState[]) {
    it(`removes the file when the session is over (${end.phase}), and the next session starts afresh`, async () => {
      const { j, path, clock, read } = journal();
      j.onEvent(state({ phase: 'creating' }));
      j.onEvent(credentials());
      j.onEvent(state(end));
      assert.equal(existsSync(path), false);
      await clock.advance(3_000);
      j.onEvent(credentials('live-2'));
      assert.deepEqual([read().liveId, read().startAtMs], ['live-2', T0 + 3_000]);
    });
  }

  it('does not remove a leftover of the last run when there is no session of its own', () => {
    const { j, path } = journal();
    writeFileSync(path, '{"left":"over"}');
    j.onEvent(state({ phase: 'idle' }));
    j.onEvent(state({ phase: 'failed', liveId: null, error: { code: 'network', message: 'x' } as never, summary: null }));
    assert.equal(readFileSync(path, 'utf8'), '{"left":"over"}');
  });

  it('a file already gone when the session ends is not an error', () => {
    const { j, path, logger } = journal();
    j.onEvent(credentials());
    rmSync(path);
    j.onEvent(state({ phase: 'ended', liveId: 'live-1', summary }));
    assert.deepEqual(logger.lines, []);
  });

  it('logs, and does not throw, when the file cannot be written', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'not-a-folder'), '');
    const { j, logger } = journal({ path: join(dir, 'not-a-folder', 'current-session.json') });
    j.onEvent(credentials());
    assert.equal(logger.lines.length, 1);
    const [line] = logger.lines;
    assert.deepEqual([line!.level, line!.message], ['error', 'Could not update the current-session file']);
    assert.match(String(line!.data?.error), /Error: E(NOTDIR|EXIST)/);
  });
});

describe('readLeftover', () => {
  const leftover: CurrentSession = { v: 1, liveId: 'g-1', surface: 'gateway', serviceUrl: 'https://gw.test', callMode: 'audio', startAtMs: T0, liveAtMs: T0 + 3_000 };

  it('reads back a gateway session', () => {
    const path = join(tempDir(), 'current-session.json');
    writeFileSync(path, JSON.stringify(leftover));
    assert.deepEqual(readLeftover(path), leftover);
  });

  it('no file: null, and nothing logged', () => {
    const logger = recordingLogger();
    assert.equal(readLeftover(join(tempDir(), 'current-session.json'), logger), null);
    assert.deepEqual(logger.lines, []);
  });

  it('an unreadable file: a warning with the reason, the file removed, null', () => {
    const path = join(tempDir(), 'current-session.json');
    writeFileSync(path, JSON.stringify({ ...leftover, surface: 'elsewhere' }));
    const logger = recordingLogger();
    assert.equal(readLeftover(path, logger), null);
    assert.equal(existsSync(path), false);
    assert.equal(logger.lines.length, 1);
    const [line] = logger.lines;
    assert.deepEqual([line!.level, line!.message], ['warn', 'Ignoring an unreadable current-session file']);
    assert.match(String(line!.data?.error), /surface/);
  });

  it('an unreadable file that another process removes meanwhile is not an error', () => {
    const path = join(tempDir(), 'current-session.json');
    writeFileSync(path, 'not json');
    // The warning is written just before the removal: removing the file there stands for a second
    // instance (or a person) deleting it at that moment.
    const logger = { ...recordingLogger(), warn: () => rmSync(path) };
    assert.equal(readLeftover(path, logger), null);
  });

  it('a folder where the file should be (a bad copy or restore): two warnings, no throw, the folder left alone', () => {
    const path = join(tempDir(), 'current-session.json');
    mkdirSync(join(path, 'inside'), { recursive: true });
    const logger = recordingLogger();
    assert.equal(readLeftover(path, logger), null);
    assert.deepEqual(
      logger.lines.map((l) => [l.level, l.message]),
      [
        ['warn', 'Ignoring an unreadable current-session file'],
        ['warn', 'Could not remove the unreadable current-session file'],
      ],
    );
    assert.match(String(logger.lines[0]!.data?.error), /EISDIR/);
    assert.match(String(logger.lines[1]!.data?.error), /EISDIR/);
    assert.equal(existsSync(join(path, 'inside')), true);
  });
});
