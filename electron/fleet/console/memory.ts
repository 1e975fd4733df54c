/**
 * What the fleet console remembers across restarts and crashes, in its data folder (journal.ts:
 * `fleet.jsonl` and `fleet.snapshot.json`): each kiosk's online/offline and since when, its group,
 * version and last call; spend (spend.ts) with the kiosks' day counters; the last event received from
 * each kiosk (so an event the broker hands over again after a restart is not counted twice); and when the
 * console last heard the broker, which bounds when a change it missed can have happened.
 *
 * Written as it happens (appended, flushed within 250 ms; an event that adds to spend is flushed before
 * the broker is told it arrived, see link.ts), rewritten as one snapshot once the journal outgrows the
 * last snapshot. Everything read back is validated: a record that does not fit is skipped and counted.
 */
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import { silentLogger, type Logger } from '../../core/log.ts';
import { openJournal, type Journal } from './journal.ts';
import { SpendBook, type DayCount, type SpendSnapshot } from './spend.ts';
import type { KioskRow } from './view.ts';

export const MEMORY_NAME = 'fleet';
/** The journal is rewritten as a snapshot once it is larger than this and than the last snapshot. */
export const COMPACT_AFTER_BYTES = 8 * 1024 * 1024;

/** What is kept of a kiosk's row (the rest comes with its next status). */
export type RememberedKiosk = Pick<KioskRow, 'kioskId' | 'online' | 'sinceAt' | 'sinceNotBefore' | 'offlineReason' | 'group' | 'version' | 'mode' | 'lastCallAt' | 'lastCallEnd'>;

const text = (max: number) => z.string().max(max);
const iso = z.string().max(40).refine((s) => !Number.isNaN(Date.parse(s)), 'an ISO time');
const kioskId = z.string().min(1).max(64);
const rememberedSchema = z.strictObject({
  kioskId,
  online: z.boolean(),
  sinceAt: iso.nullable(),
  sinceNotBefore: iso.nullable(),
  offlineReason: text(200).nullable(),
  group: text(64).nullable(),
  version: text(64).nullable(),
  mode: text(40).nullable(),
  lastCallAt: iso.nullable(),
  lastCallEnd: text(64).nullable(),
});
const ms = z.number().int().min(0).max(8.64e15);
const amount = z.number().finite().min(0).max(1e12);
const dayCountSchema = z.strictObject({ day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), fromMs: ms, toMs: ms, sessions: z.number().int().min(0).max(1e9), credits: amount, queued: z.number().int().min(0).max(1e9) });
// `demo` came with demo calls kept apart; a row written before it is a real one.
const spendRowSchema = z.strictObject({ kioskId, day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), avatar: text(64), sessions: z.number().int().min(0), credits: amount, demo: z.boolean().default(false) });
const snapshotSchema = z.strictObject({
  v: z.literal(1),
  /** When the console last heard the broker, as of the snapshot (ms), or null. */
  alive: ms.nullable(),
  /** Since when this folder has kept count (spend.ts); absent in a snapshot from before it was kept. */
  began: ms.optional(),
  kiosks: z.array(rememberedSchema),
  spend: z.strictObject({
    rows: z.array(spendRowSchema),
    slots: z.array(z.tuple([kioskId, z.number().int(), z.number().int().min(0), amount])),
    counts: z.array(z.tuple([kioskId, dayCountSchema])),
  }),
  seen: z.array(z.tuple([kioskId, z.string().max(32), z.number().int().min(0)])),
});
const recordSchema = z.discriminatedUnion('t', [
  z.strictObject({ t: z.literal('call'), k: kioskId, id: text(80), end: ms, av: text(64), cr: amount, why: text(64), demo: z.literal(true).optional() }),
  z.strictObject({ t: z.literal('kiosk'), row: rememberedSchema }),
  z.strictObject({ t: z.literal('day'), k: kioskId, count: dayCountSchema }),
  z.strictObject({ t: z.literal('alive'), at: ms }),
  z.strictObject({ t: z.literal('began'), at: ms }),
]);
type MemoryRecord = z.infer<typeof recordSchema>;

/** A kiosk's event ids are `<epoch>-<seq>` (event-queue.ts), sent in order one at a time. */
const EVENT_ID = /^([0-9a-f]{8,32})-(\d{1,15})$/;

export interface FleetMemory {
  /** The kiosks as remembered at start. */
  readonly kiosks: ReadonlyMap<string, RememberedKiosk>;
  /** Spend as remembered; FleetState adds to this same book. */
  readonly spend: SpendBook;
  /** When the console last heard the broker before this start (ms), or null (never, or nothing kept). */
  readonly lastAliveAtMs: number | null;
  /** Records that were skipped when read back (torn or invalid). */
  readonly skipped: number;
  /** The broker handed over an event already counted (before a restart). */
  isRepeat(kioskId: string, eventId: string): boolean;
  /** A call counted (spend and the row's last call). */
  call(kioskId: string, eventId: string, endMs: number, avatar: string, credits: number, endReason: string, demo: boolean): void;
  kiosk(row: RememberedKiosk): void;
  dayCount(kioskId: string, count: DayCount): void;
  /** The console hears the broker now. */
  alive(): void;
  /** Write what is pending and wait for the disk. */
  flush(): void;
  /** Rewrite the journal as a snapshot if it has outgrown the last one (`kiosks`: every row now). */
  compactIfLarge(kiosks: () => RememberedKiosk[]): void;
  /** A snapshot now, then close. */
  close(kiosks: RememberedKiosk[]): void;
}

export function openFleetMemory(options: { dir: string; clock: Clock; logger?: Logger; compactAfterBytes?: number }): FleetMemory {
  const { clock } = options;
  const logger = options.logger ?? silentLogger;
  const journal: Journal = openJournal({ dir: options.dir, name: MEMORY_NAME, clock, logger });
  const kiosks = new Map<string, RememberedKiosk>();
  const spend = new SpendBook(clock.now());
  let began: number | null = null;
  const seen = new Map<string, { epoch: string; seq: number }>();
  let lastAliveAtMs: number | null = null;
  let skipped = journal.skipped;

  if (journal.snapshot !== null) {
    const parsed = snapshotSchema.safeParse(journal.snapshot);
    if (parsed.success) {
      const s = parsed.data;
      for (const k of s.kiosks) kiosks.set(k.kioskId, k);
      spend.restore(s.spend as SpendSnapshot);
      for (const [k, epoch, seq] of s.seen) seen.set(k, { epoch, seq });
      lastAliveAtMs = s.alive;
      began = s.began ?? null;
    } else {
      skipped++;
      logger.error('Fleet console: the remembered fleet (snapshot) does not validate; starting from the journal alone', { issue: parsed.error.issues[0]?.message });
    }
  }
  const remember = (k: string, eventId: string) => {
    const m = EVENT_ID.exec(eventId);
    if (!m) return;
    const was = seen.get(k);
    const seq = Number(m[2]);
    if (!was || was.epoch !== m[1] || seq > was.seq) seen.set(k, { epoch: m[1]!, seq });
  };
  const apply = (r: MemoryRecord) => {
    switch (r.t) {
      case 'call': {
        spend.addCall(r.k, r.end, r.av, r.cr, r.demo === true);
        remember(r.k, r.id);
        const row = kiosks.get(r.k);
        const at = new Date(r.end).toISOString();
        if (row && (row.lastCallAt === null || at >= row.lastCallAt)) {
          row.lastCallAt = at;
          row.lastCallEnd = r.why;
        }
        return;
      }
      case 'kiosk':
        kiosks.set(r.row.kioskId, { ...r.row });
        return;
      case 'day':
        spend.dayCount(r.k, r.count);
        return;
      case 'alive':
        lastAliveAtMs = Math.max(lastAliveAtMs ?? 0, r.at);
        return;
      case 'began':
        began = began === null ? r.at : Math.min(began, r.at);
    }
  };
  for (const raw of journal.records) {
    const r = recordSchema.safeParse(raw);
    if (r.success) apply(r.data);
    else skipped++;
  }
  if (skipped) logger.warn('Fleet console: some remembered records were skipped', { skipped });
  const startAliveAtMs = lastAliveAtMs;
  let latestAliveMs = lastAliveAtMs;

  const snapshotOf = (rows: RememberedKiosk[]) => ({ v: 1, alive: latestAliveMs, began: spend.recordBegan, kiosks: rows, spend: spend.snapshot(), seen: [...seen].map(([k, s]) => [k, s.epoch, s.seq]) });
  const write = (record: MemoryRecord) => journal.append(record as unknown as Record<string, unknown>);
  // A new folder (or one from before this was kept) begins its record now: differences in a kiosk-day that
  // began earlier are not claimed as calls that never came (spend.ts).
  if (began === null) {
    began = clock.now();
    write({ t: 'began', at: began });
  }
  spend.recordBegan = began;

  return {
    kiosks,
    spend,
    lastAliveAtMs: startAliveAtMs,
    skipped,
    isRepeat(k, eventId) {
      const m = EVENT_ID.exec(eventId);
      const was = seen.get(k);
      return !!m && !!was && was.epoch === m[1] && Number(m[2]) <= was.seq;
    },
    call(k, eventId, endMs, avatar, credits, endReason, demo) {
      remember(k, eventId);
      write({ t: 'call', k, id: eventId, end: endMs, av: avatar, cr: credits, why: endReason, ...(demo ? { demo: true as const } : {}) });
    },
    kiosk(row) {
      write({ t: 'kiosk', row: { ...row } });
    },
    dayCount(k, count) {
      write({ t: 'day', k, count: { ...count } });
    },
    alive() {
      latestAliveMs = clock.now();
      write({ t: 'alive', at: latestAliveMs });
    },
    flush: () => journal.flush(),
    compactIfLarge(rows) {
      if (journal.bytes < Math.max(options.compactAfterBytes ?? COMPACT_AFTER_BYTES, journal.snapshotBytes)) return;
      journal.compact(snapshotOf(rows()));
    },
    close(rows) {
      journal.compact(snapshotOf(rows));
      journal.close();
    },
  };
}
