/**
 * What the console remembers across a restart (memory.ts under FleetState, over one data folder): a new
 * console over the same folder shows yesterday's and today's spend, each kiosk's "since" as it was, and a
 * change that fell while it was away as a window (not before the last time it heard the broker); an event
 * the broker hands over again is not counted twice; a torn last line loses that record only and says so;
 * the journal is rewritten as one snapshot once it outgrows its bound.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MEMORY_NAME, openFleetMemory, type FleetMemory } from '../../../../electron/fleet/console/memory.ts';
import { BEFORE_RECORD, NOT_RECEIVED } from '../../../../electron/fleet/console/spend.ts';
import { FleetState } from '../../../../electron/fleet/console/state.ts';
import { FakeClock } from '../../../helpers/fake-clock.ts';
import { eventPayload, offlineStatus, onlineStatus } from '../../../helpers/fleet-payloads.ts';
import { recordingLogger } from '../../../helpers/recording-logger.ts';
import { tempDirsRemovedAfterEach } from '../../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-fleet-memory-');
const YESTERDAY = Date.parse('2026-11-23T15:00:00Z');
const TODAY = Date.parse('2026-11-24T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** A real (billed) call that ended at `endMs`, as a kiosk's ledger event carries it. */
const call = (id: string, endMs: number, credits: number, avatar = 'ava') =>
  eventPayload(id, { kind: 'session', v: 1, start_at: iso(endMs - 60_000), end_at: iso(endMs), end_reason: 'user_end', credits_cost: credits, surface: 'direct', avatar });

/** A console's state over the folder's memory, connected and caught up with the broker. */
function consoleOver(dir: string, clock: FakeClock, logger = recordingLogger()): { memory: FleetMemory; state: FleetState; logger: ReturnType<typeof recordingLogger> } {
  const memory = openFleetMemory({ dir, clock, logger });
  const state = new FleetState({ now: () => clock.now(), memory });
  return { memory, state, logger };
}

/** Yesterday a call; today a call and the kiosk going offline at 10:05; the console last hears the broker at 10:06. */
async function aDayAndABit(dir: string, clock: FakeClock): Promise<{ memory: FleetMemory; state: FleetState }> {
  const { memory, state } = consoleOver(dir, clock);
  state.linkUp();
  state.caughtUp();
  state.onStatus('k', onlineStatus(), false);
  state.onEvent('k', call('0000000a-1', YESTERDAY - 60_000, 2));
  memory.alive();
  await clock.advance(TODAY - clock.now());
  state.onEvent('k', call('0000000a-2', TODAY, 3, 'max'));
  await clock.advance(5 * 60_000);
  state.onStatus('k', offlineStatus('connection lost'), false);
  await clock.advance(60_000);
  memory.alive();
  return { memory, state };
}

const SPEND = [
  { kioskId: 'k', day: '2026-11-23', avatar: 'ava', sessions: 1, credits: 2, demo: false },
  { kioskId: 'k', day: '2026-11-24', avatar: 'max', sessions: 1, credits: 3, demo: false },
];

describe('the fleet console\'s memory', () => {
  it("a restarted console (a new instance over the same folder) shows yesterday's and today's spend and the kiosk's \"since\"", async () => {
    const dir = tempDir();
    const clock = new FakeClock(YESTERDAY);
    const first = await aDayAndABit(dir, clock);
    assert.deepEqual(first.state.spendRows(), SPEND);
    const offlineAt = iso(TODAY + 5 * 60_000);
    assert.equal(first.state.row('k')!.sinceAt, offlineAt);
    first.memory.close(first.state.remembered());
    assert.equal(clock.pendingCount, 0, 'closing leaves no timer');

    await clock.advance(60 * 60_000);
    const { memory, state, logger } = consoleOver(dir, clock);
    assert.deepEqual(state.spendRows(), SPEND);
    const row = state.row('k')!;
    assert.deepEqual(
      { online: row.online, sinceAt: row.sinceAt, sinceNotBefore: row.sinceNotBefore, offlineReason: row.offlineReason, group: row.group, version: row.version, lastCallAt: row.lastCallAt, lastCallEnd: row.lastCallEnd },
      { online: false, sinceAt: offlineAt, sinceNotBefore: null, offlineReason: 'connection lost', group: 'lobby', version: '1.2.3', lastCallAt: iso(TODAY), lastCallEnd: 'user_end' },
    );
    assert.equal(memory.lastAliveAtMs, TODAY + 6 * 60_000);
    assert.equal(memory.skipped, 0);
    assert.deepEqual(logger.lines, []);

    // The broker hands today's event over again (QoS 1 after the restart): counted once.
    state.onEvent('k', call('0000000a-2', TODAY, 3, 'max'));
    assert.deepEqual(state.spendRows(), SPEND);
    // The kiosk came back while the console was away: its queued status says so while the console catches
    // up. When is known only as a window: not before the console last heard the broker, at the latest now.
    state.linkUp();
    state.onStatus('k', onlineStatus(), false);
    assert.deepEqual({ sinceAt: state.row('k')!.sinceAt, sinceNotBefore: state.row('k')!.sinceNotBefore }, { sinceAt: iso(clock.now()), sinceNotBefore: iso(TODAY + 6 * 60_000) });
    memory.close(state.remembered());
  });

  it('after a crash (no snapshot, the journal alone) the new console shows the same', async () => {
    const dir = tempDir();
    const clock = new FakeClock(YESTERDAY);
    const first = await aDayAndABit(dir, clock);
    first.memory.flush();
    // No close: the process died here.
    const { memory, state } = consoleOver(dir, clock);
    assert.deepEqual(state.spendRows(), SPEND);
    assert.equal(state.row('k')!.sinceAt, iso(TODAY + 5 * 60_000));
    assert.equal(memory.skipped, 0);
    memory.close(state.remembered());
    first.memory.close([]);
  });

  /** A console after a crash whose journal ends with `line` (its last record torn or not valid). */
  async function restartedAfter(line: string) {
    const dir = tempDir();
    const clock = new FakeClock(YESTERDAY);
    const first = await aDayAndABit(dir, clock);
    first.memory.flush();
    appendFileSync(join(dir, `${MEMORY_NAME}.jsonl`), line);
    const again = consoleOver(dir, clock);
    return { ...again, dir, done: () => (again.memory.close(again.state.remembered()), first.memory.close([])) };
  }

  it('a crash mid-write (a torn last line) loses that record only, and says how many were skipped', async () => {
    const { memory, state, logger, dir, done } = await restartedAfter('{"s":99,"t":"call","k":"k","id":"0000000a-3","end":17');
    assert.deepEqual(state.spendRows(), SPEND, 'everything before the torn line is there');
    assert.equal(memory.skipped, 1);
    assert.deepEqual(logger.lines.map((l) => [l.level, l.message, l.data]), [
      ['warn', 'Fleet console: lines of the store that did not parse were skipped (a write cut short)', { file: join(dir, `${MEMORY_NAME}.jsonl`), skipped: 1 }],
      ['warn', 'Fleet console: some remembered records were skipped', { skipped: 1 }],
    ]);
    done();
  });

  it('a record that parses but does not validate is skipped and counted, the others kept', async () => {
    const { memory, state, done } = await restartedAfter('{"s":99,"t":"call","k":"k","id":"x","end":-1,"av":"ava","cr":1,"why":"user_end"}\n');
    assert.equal(memory.skipped, 1);
    assert.deepEqual(state.spendRows(), SPEND);
    done();
  });

  it('stays bounded: once the journal outgrows its bound (and the last snapshot) it is rewritten as one snapshot', async () => {
    const dir = tempDir();
    const clock = new FakeClock(YESTERDAY);
    const memory = openFleetMemory({ dir, clock, compactAfterBytes: 2_000 });
    const state = new FleetState({ now: () => clock.now(), memory });
    state.linkUp();
    state.caughtUp();
    state.onStatus('k', onlineStatus(), false);
    const journal = join(dir, `${MEMORY_NAME}.jsonl`);
    let compacted = 0;
    for (let i = 1; i <= 40; i++) {
      state.onEvent('k', call(`0000000a-${i}`, YESTERDAY + i * 1000, 1));
      memory.flush();
      const before = statSync(journal).size;
      memory.compactIfLarge(() => state.remembered());
      if (statSync(journal).size < before) compacted++;
      assert.ok(statSync(journal).size < 2_000, `the journal stays under its bound (${statSync(journal).size} bytes)`);
    }
    assert.ok(compacted >= 1, 'it was rewritten');
    memory.close(state.remembered());
    const again = openFleetMemory({ dir, clock });
    assert.deepEqual(again.spend.rows(), [{ kioskId: 'k', day: '2026-11-23', avatar: 'ava', sessions: 40, credits: 40, demo: false }]);
    assert.equal(readFileSync(journal, 'utf8'), '', 'close leaves everything in the snapshot');
    again.close([]);
  });

  it('a console restarted without its memory does not call the calls its earlier run received "(not received)"', async () => {
    const clock = new FakeClock(TODAY);
    // The kiosk's status with its count of the day (a UTC day here) and nothing queued.
    const counted = (sessions: number, credits: number) => onlineStatus({ today: { sessions, credits, day: '2026-11-24', from: '2026-11-24T00:00:00.000Z', to: '2026-11-25T00:00:00.000Z' } });
    const first = new FleetState({ now: () => clock.now() });
    first.onEvent('k', call('0000000a-1', TODAY, 3));
    first.onStatus('k', counted(1, 3), false);
    assert.deepEqual(first.spendRows(), [{ kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 3, demo: false }]);
    await clock.advance(60 * 60_000);
    // Restarted with no data folder: the first call's event was acknowledged to the earlier run, so it never
    // comes again; the kiosk's retained status counts it; the call made meanwhile arrives.
    const second = new FleetState({ now: () => clock.now() });
    second.onStatus('k', counted(2, 5), true);
    second.onEvent('k', call('0000000a-2', TODAY + 30 * 60_000, 2));
    assert.deepEqual(second.spendRows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: BEFORE_RECORD, sessions: 1, credits: 3, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 1, credits: 2, demo: false },
    ]);
  });

  it('with its memory the restarted console has every call, and a call lost after its record began is "(not received)"', async () => {
    const dir = tempDir();
    const clock = new FakeClock(Date.parse('2026-11-23T20:00:00Z'));
    const counted = (sessions: number, credits: number) => onlineStatus({ today: { sessions, credits, day: '2026-11-24', from: '2026-11-24T00:00:00.000Z', to: '2026-11-25T00:00:00.000Z' } });
    const first = consoleOver(dir, clock);
    await clock.advance(TODAY - clock.now());
    first.state.onEvent('k', call('0000000a-1', TODAY, 3));
    first.state.onStatus('k', counted(1, 3), false);
    first.memory.close(first.state.remembered());
    await clock.advance(60 * 60_000);
    const { memory, state } = consoleOver(dir, clock);
    state.onStatus('k', counted(3, 9), true);
    state.onEvent('k', call('0000000a-3', TODAY + 30 * 60_000, 2));
    assert.equal(memory.spend.recordBegan, Date.parse('2026-11-23T20:00:00Z'), 'the record began with the folder, not with this start');
    assert.deepEqual(state.spendRows(), [
      { kioskId: 'k', day: '2026-11-24', avatar: NOT_RECEIVED, sessions: 1, credits: 4, demo: false },
      { kioskId: 'k', day: '2026-11-24', avatar: 'ava', sessions: 2, credits: 5, demo: false },
    ]);
    memory.close(state.remembered());
  });
});
