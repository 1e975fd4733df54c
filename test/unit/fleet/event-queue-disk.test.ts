/**
 * What the fleet event queue does to the disk: which operation rewrites which file (a kiosk's flash
 * storage should see appends, not a rewrite per event), what a rewritten file holds, and that no file
 * descriptor stays open after a push. A rewrite replaces the file by a new one (write, then rename), so
 * a changed inode number is how a test sees that a file was rewritten rather than appended to.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ACK_FILE, openEventQueue, QUEUE_FILE } from '../../../electron/fleet/event-queue.ts';
import { openFilesCounterOrSkip } from '../../helpers/open-files.ts';
import { tempDirsRemovedAfterEach } from '../../helpers/temp-dirs.ts';

const tempDir = tempDirsRemovedAfterEach('ak-queue-disk-');
const inode = (path: string) => statSync(path).ino;
const eventLines = (dir: string) =>
  readFileSync(join(dir, QUEUE_FILE), 'utf8')
    .split('\n')
    .filter((l) => l.trim());
const ackOf = (dir: string) => JSON.parse(readFileSync(join(dir, ACK_FILE), 'utf8')) as { epoch: string; acked: number; dropped: number };

describe('fleet event queue on disk', () => {
  it('a push appends; the file is rewritten only once it holds more than twice the limit, and then holds exactly the waiting events', () => {
    const dir = tempDir();
    const queuePath = join(dir, QUEUE_FILE);
    const q = openEventQueue({ dir, limit: 2 });
    q.push({ n: 1 }, 1_000);
    const appendedTo = inode(queuePath);
    for (let n = 2; n <= 4; n++) {
      q.push({ n }, n * 1_000);
      assert.equal(inode(queuePath), appendedTo, `push ${n} appends`);
      assert.equal(eventLines(dir).length, n, `push ${n}: one line per event so far`);
    }
    q.push({ n: 5 }, 5_000); // five lines over a limit of two: rewritten
    assert.notEqual(inode(queuePath), appendedTo);
    const kept = eventLines(dir).map((l) => JSON.parse(l) as { seq: number; id: string; at: string; record: unknown });
    assert.deepEqual(
      kept.map((e) => [e.seq, e.at, e.record]),
      [
        [4, new Date(4_000).toISOString(), { n: 4 }],
        [5, new Date(5_000).toISOString(), { n: 5 }],
      ],
    );
    const again = openEventQueue({ dir, limit: 2 });
    assert.equal(again.size, 2);
    assert.deepEqual(again.peek(), kept[0]);
  });

  it('a push that drops nothing leaves the acknowledgement file alone; the one that drops rewrites it with the count', () => {
    const dir = tempDir();
    const ackPath = join(dir, ACK_FILE);
    const q = openEventQueue({ dir, limit: 3 });
    const before = { ino: inode(ackPath), text: readFileSync(ackPath, 'utf8') };
    for (let n = 1; n <= 3; n++) q.push({ n }, 0);
    assert.deepEqual({ ino: inode(ackPath), text: readFileSync(ackPath, 'utf8') }, before);
    q.push({ n: 4 }, 0);
    assert.notEqual(inode(ackPath), before.ino);
    const { epoch } = ackOf(dir);
    assert.deepEqual(ackOf(dir), { epoch, acked: 1, dropped: 1 });
  });

  it('an acknowledgement arriving for an event already dropped for room (it was being sent) writes nothing', () => {
    const dir = tempDir();
    const q = openEventQueue({ dir, limit: 1 });
    const sending = q.push({ n: 1 }, 0);
    q.push({ n: 2 }, 0); // drops event 1 while the link still waits for the broker's answer to it
    const files = () => ({ ack: inode(join(dir, ACK_FILE)), ackText: readFileSync(join(dir, ACK_FILE), 'utf8'), queue: inode(join(dir, QUEUE_FILE)) });
    const before = files();
    q.ack(sending.seq);
    assert.deepEqual(files(), before);
    assert.equal(q.size, 1);
    assert.deepEqual(q.peek()?.record, { n: 2 });
  });

  it('reopening with nothing acknowledged rewrites neither file (blank and whitespace-only lines are not events)', () => {
    const dir = tempDir();
    openEventQueue({ dir, limit: 10 }).push({ n: 1 }, 0);
    openEventQueue({ dir, limit: 10 }).push({ n: 2 }, 0);
    appendFileSync(join(dir, QUEUE_FILE), '   \n');
    const snapshot = () =>
      [QUEUE_FILE, ACK_FILE].map((name) => ({ name, ino: inode(join(dir, name)), text: readFileSync(join(dir, name), 'utf8') }));
    const before = snapshot();
    const again = openEventQueue({ dir, limit: 10 });
    assert.deepEqual(snapshot(), before);
    assert.equal(again.size, 2);
    assert.deepEqual(again.peek()?.record, { n: 1 });
  });

  it('a push leaves no file descriptor open', (t) => {
    const openFiles = openFilesCounterOrSkip(t);
    if (!openFiles) return;
    const q = openEventQueue({ dir: tempDir(), limit: 100 });
    const before = openFiles();
    for (let n = 0; n < 20; n++) q.push({ n }, 0);
    assert.equal(openFiles(), before);
  });
});
