/**
 * The fleet's on-disk event queue seen from outside: what a restart finds, what the operator is warned
 * about, how big the file may grow, and who may read it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Logger } from '../../../electron/core/log.ts';
import { ACK_FILE, openEventQueue, QUEUE_FILE } from '../../../electron/fleet/event-queue.ts';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ak-queue-'));
  dirs.push(d);
  return d;
};
const queueLines = (dir: string) => readFileSync(join(dir, QUEUE_FILE), 'utf8').split('\n').filter((l) => l.trim());
const epochOf = (id: string) => id.split('-')[0];

function recordingLogger() {
  const warnings: Array<[string, Record<string, unknown> | undefined]> = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, data) => void warnings.push([message, data]) };
  return { logger, warnings };
}

describe('fleet event queue', () => {
  it('names each event by the epoch and its number, and keeps the epoch across a restart with nothing acknowledged', () => {
    const dir = tempDir();
    const first = openEventQueue({ dir, limit: 5 }).push({ n: 1 }, 0);
    assert.match(first.id, /^[0-9a-f]{8}-1$/);
    const again = openEventQueue({ dir, limit: 5 });
    assert.equal(again.peek()?.id, first.id);
    assert.equal(epochOf(again.push({ n: 2 }, 0).id), epochOf(first.id));
  });

  it('a damaged epoch in the acknowledgement file is replaced by a fresh one', () => {
    for (const epoch of ['xyz-0123abcd', '0123abcd-xyz']) {
      const dir = tempDir();
      writeFileSync(join(dir, ACK_FILE), JSON.stringify({ epoch, acked: 0 }));
      const id = openEventQueue({ dir, limit: 5 }).push({ n: 1 }, 0).id;
      assert.match(id, /^[0-9a-f]{8}-1$/, epoch);
    }
  });

  it('warns on the first dropped event and on every hundredth, with the limit and the count', () => {
    const { logger, warnings } = recordingLogger();
    const q = openEventQueue({ dir: tempDir(), limit: 2, logger });
    for (let n = 0; n < 2 + 201; n++) q.push({ n }, 0);
    assert.equal(q.dropped, 201);
    const text = 'Fleet events: the queue is full; the oldest waiting event was dropped (the ledger keeps it)';
    assert.deepEqual(warnings, [
      [text, { limit: 2, dropped: 1 }],
      [text, { limit: 2, dropped: 100 }],
      [text, { limit: 2, dropped: 200 }],
    ]);
  });

  it('an event dropped for room stays dropped after a restart', () => {
    const dir = tempDir();
    const q = openEventQueue({ dir, limit: 2 });
    for (let n = 1; n <= 3; n++) q.push({ n }, 0);
    const again = openEventQueue({ dir, limit: 2 });
    assert.equal(again.size, 2);
    assert.deepEqual(again.peek()?.record, { n: 2 });
  });

  it('the file never holds more than twice the limit, however many events pass', () => {
    const dir = tempDir();
    const q = openEventQueue({ dir, limit: 3 });
    for (let n = 0; n < 50; n++) {
      q.push({ n }, 0);
      assert.ok(queueLines(dir).length <= 6, `after ${n + 1} events: ${queueLines(dir).length} lines`);
    }
  });

  it('a restart rewrites the file to the events still waiting', () => {
    const dir = tempDir();
    const q = openEventQueue({ dir, limit: 10 });
    for (let n = 1; n <= 3; n++) q.push({ n }, 1_000 * n);
    q.ack(2);
    assert.equal(queueLines(dir).length, 3, 'acknowledging does not rewrite while events wait');
    const again = openEventQueue({ dir, limit: 10 });
    const waiting = queueLines(dir).map((l) => JSON.parse(l) as { seq: number; record: unknown; at: string });
    assert.deepEqual(
      waiting.map((e) => [e.seq, e.record, e.at]),
      [[3, { n: 3 }, new Date(3_000).toISOString()]],
    );
    assert.equal(again.size, 1);
  });

  it('only the kiosk user may read the queue and the acknowledgement', { skip: process.platform === 'win32' ? 'POSIX modes' : false }, () => {
    const dir = tempDir();
    const q = openEventQueue({ dir, limit: 1 });
    q.push({ n: 1 }, 0);
    q.push({ n: 2 }, 0); // drops one: the acknowledgement is rewritten
    q.push({ n: 3 }, 0); // three lines over a limit of one: the queue is rewritten
    assert.equal(statSync(join(dir, ACK_FILE)).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, QUEUE_FILE)).mode & 0o777, 0o600);
  });
});
