/**
 * The events waiting for the broker, on disk, so a broker that is away (or a kiosk restarted meanwhile)
 * loses none: `fleet-events.jsonl` holds one line per event, appended and flushed; `fleet-events.ack`
 * says up to which sequence number the broker has acknowledged. Sent in order, one at a time; each
 * event's id (`<epoch>-<seq>`, the epoch chosen once per data folder) lets the receiver drop a repeat
 * (an event acknowledged by the broker just as the kiosk died is sent again).
 *
 * Bounded: beyond `limit` waiting events the oldest is dropped (the ledger on the kiosk still has it)
 * and counted. A torn last line after a crash is skipped. Electron-free.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { silentLogger, type Logger } from '../core/log.ts';

export interface QueuedEvent {
  seq: number;
  /** Unique per data folder: receivers drop a repeat by it. */
  id: string;
  /** ISO time it was queued. */
  at: string;
  record: unknown;
}

export interface EventQueue {
  /** Queue one event (written and flushed before this returns). */
  push(record: unknown, atMs: number): QueuedEvent;
  /** The oldest event not yet acknowledged. */
  peek(): QueuedEvent | undefined;
  /** The broker acknowledged `seq` (and everything before it). */
  ack(seq: number): void;
  readonly size: number;
  /** Events dropped because the queue was full (kept across restarts in the ack file, so a kiosk that
   *  restarts before it reconnects still reports them). */
  readonly dropped: number;
}

const ackSchema = z.strictObject({ epoch: z.string().regex(/^[0-9a-f]{8,32}$/), acked: z.number().int().min(0), dropped: z.number().int().min(0).optional() });
const lineSchema = z.strictObject({ seq: z.number().int().min(1), id: z.string(), at: z.string(), record: z.unknown() });

export const QUEUE_FILE = 'fleet-events.jsonl';
export const ACK_FILE = 'fleet-events.ack';

export function openEventQueue(options: { dir: string; limit: number; logger?: Logger }): EventQueue {
  const { dir, limit } = options;
  const logger = options.logger ?? silentLogger;
  mkdirSync(dir, { recursive: true });
  const queuePath = join(dir, QUEUE_FILE);
  const ackPath = join(dir, ACK_FILE);

  let epoch = randomBytes(4).toString('hex');
  let acked = 0;
  let dropped = 0;
  try {
    const parsed = ackSchema.safeParse(JSON.parse(readFileSync(ackPath, 'utf8')));
    if (parsed.success) ({ epoch, acked, dropped = 0 } = parsed.data);
  } catch {
    // first start (or a damaged file): a new epoch keeps the new ids apart from any old ones
  }
  const pending: QueuedEvent[] = [];
  let lastSeq = acked;
  let lines = 0;
  if (existsSync(queuePath)) {
    for (const line of readFileSync(queuePath, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      lines++;
      try {
        const parsed = lineSchema.safeParse(JSON.parse(line));
        if (!parsed.success) continue;
        lastSeq = Math.max(lastSeq, parsed.data.seq);
        if (parsed.data.seq > acked) pending.push(parsed.data as QueuedEvent);
      } catch {
        // a line torn by a crash
      }
    }
  }
  const writeAck = () => {
    const tmp = `${ackPath}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ epoch, acked, dropped })}\n`, { mode: 0o600 });
    renameSync(tmp, ackPath);
  };
  /** Keep the file to the waiting events (it only ever grows otherwise). */
  const compact = () => {
    const tmp = `${queuePath}.tmp`;
    writeFileSync(tmp, pending.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
    renameSync(tmp, queuePath);
    lines = pending.length;
  };
  if (!existsSync(ackPath)) writeAck();
  if (lines > pending.length) compact();

  return {
    push(record, atMs) {
      const seq = ++lastSeq;
      const event: QueuedEvent = { seq, id: `${epoch}-${seq}`, at: new Date(atMs).toISOString(), record };
      const fd = openSync(queuePath, 'a', 0o600);
      try {
        // A torn line left by a crash has no newline: the leading one keeps ours whole.
        writeSync(fd, `\n${JSON.stringify(event)}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      lines++;
      pending.push(event);
      let droppedNow = false;
      while (pending.length > limit) {
        const oldest = pending.shift()!;
        acked = oldest.seq;
        dropped++;
        droppedNow = true;
        if (dropped === 1 || dropped % 100 === 0) logger.warn('Fleet events: the queue is full; the oldest waiting event was dropped (the ledger keeps it)', { limit, dropped });
      }
      if (droppedNow) writeAck();
      if (lines > 2 * limit) compact();
      return event;
    },
    peek: () => pending[0],
    ack(seq) {
      let changed = false;
      while (pending.length && pending[0]!.seq <= seq) {
        pending.shift();
        changed = true;
      }
      if (seq > acked) acked = seq;
      if (!changed) return;
      writeAck();
      if (pending.length === 0) compact();
    },
    get size() {
      return pending.length;
    },
    get dropped() {
      return dropped;
    },
  };
}
