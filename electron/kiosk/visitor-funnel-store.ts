/**
 * Where the visitor funnel is kept (docs/analytics.md): hour buckets in the kiosk's local time zone for the
 * last 90 days, then one bucket per day, nothing older than 13 months. One JSON file in the kiosk's data
 * folder, written atomically (a temporary file, then a rename) half a minute after a change and on close,
 * read back through the shared schema. A damaged file is kept aside and the kiosk starts counting afresh;
 * staff are told (an attention item), visitors never notice.
 *
 * Bounded: at most 90 × 25 hour buckets (a DST day has 25 hours) and about 400 day buckets, each a fixed
 * set of counts plus breakdowns of at most 64 keys; zero counts are left out of the file.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Clock, TimerHandle } from '../core/clock.ts';
import { emptyFunnelCounts, type FunnelCounts } from '../core/funnel.ts';
import { funnelCountsSchema } from '../core/funnel-schema.ts';
import { silentLogger, type Logger } from '../core/log.ts';

export const VISITOR_FUNNEL_FILE = 'visitor-funnel.json';
/** Hour buckets are kept for this many local days (today included), then rolled up to days. */
export const HOURLY_DAYS = 90;
/** Day buckets older than this many calendar months are dropped. */
export const KEEP_MONTHS = 13;
/** A change is written this long after it: a crash loses at most these seconds of counts, never the file
 *  (a busy year's file takes about 0.2 s to write: not after every tap). */
export const SAVE_DELAY_MS = 30_000;
/** A file bigger than this is not one we wrote: it is treated as damaged. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

const HOUR_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}$/;
const DAY_KEY = /^\d{4}-\d{2}-\d{2}$/;

// --- local time ---------------------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit' });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The local hour `YYYY-MM-DDTHH` of the instant `ms` in `timeZone` (the repeated hour of an autumn DST
 *  change is one bucket; the skipped hour of a spring one never has a bucket). */
export function localHour(ms: number, timeZone: string): string {
  // Zone offsets and their changes fall on quarter hours (UTC): one reading serves its quarter hour.
  const quarter = Math.floor(ms / 900_000);
  const cached = lastHour.get(timeZone);
  if (cached && cached.quarter === quarter) return cached.key;
  const key = readHour(ms, timeZone);
  lastHour.set(timeZone, { quarter, key });
  return key;
}
const lastHour = new Map<string, { quarter: number; key: string }>();

function readHour(ms: number, timeZone: string): string {
  const p: Record<string, string> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(ms))) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day}T${p.hour === '24' ? '00' : p.hour}`;
}

export function localDay(ms: number, timeZone: string): string {
  return localHour(ms, timeZone).slice(0, 10);
}

/** Days since 1970-01-01 of a calendar date `YYYY-MM-DD` (no time zone: a calendar date is a date). */
export function dayNumber(day: string): number {
  return Math.round(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) / 86_400_000);
}

export function dayOfNumber(n: number): string {
  return new Date(n * 86_400_000).toISOString().slice(0, 10);
}

/** The first calendar date still kept on `today`: the same date `KEEP_MONTHS` months earlier. */
export function keepSince(today: string): string {
  const y = Number(today.slice(0, 4));
  const m = Number(today.slice(5, 7)) - 1 - KEEP_MONTHS;
  const d = Number(today.slice(8, 10));
  // The 31st of a shorter month: its last day.
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return new Date(Date.UTC(y, m, Math.min(d, last))).toISOString().slice(0, 10);
}

// --- counts ---------------------------------------------------------------------------------------------

/** Add `b` into `a` (every field, breakdowns key by key). */
export function addCounts(a: FunnelCounts, b: FunnelCounts): FunnelCounts {
  for (const k of ['noticed', 'approached', 'greeted', 'tapped', 'gaveUp', 'failed', 'live', 'endedWell', 'endedBadly'] as const) a[k] += b[k];
  for (const k of Object.keys(a.refused) as Array<keyof FunnelCounts['refused']>) a.refused[k] += b.refused[k];
  for (const k of Object.keys(a.callLength) as Array<keyof FunnelCounts['callLength']>) a.callLength[k] += b.callLength[k];
  for (const group of ['byLanguage', 'byCallMode', 'byAvatar'] as const) {
    for (const [key, v] of Object.entries(b[group])) {
      const row = (a[group][key] ??= { tapped: 0, live: 0 });
      row.tapped += v.tapped;
      row.live += v.live;
    }
  }
  return a;
}

/** Counts without their zeros (the file's form; `fromSparse` restores them). */
export function toSparse(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const s = toSparse(v);
    if (s === 0 || (typeof s === 'object' && s !== null && Object.keys(s).length === 0)) continue;
    out[k] = s;
  }
  return out;
}

function fromSparse(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const base = emptyFunnelCounts() as unknown as Record<string, unknown>;
  const v = value as Record<string, unknown>;
  const out: Record<string, unknown> = { ...base, ...v };
  for (const k of ['refused', 'callLength'] as const) {
    if (typeof v[k] === 'object' && v[k] !== null) out[k] = { ...(base[k] as object), ...(v[k] as object) };
  }
  for (const k of ['byLanguage', 'byCallMode', 'byAvatar'] as const) {
    if (typeof v[k] === 'object' && v[k] !== null && !Array.isArray(v[k])) {
      out[k] = Object.fromEntries(Object.entries(v[k] as Record<string, unknown>).map(([key, row]) => [key, typeof row === 'object' && row !== null ? { tapped: 0, live: 0, ...row } : row]));
    }
  }
  return out;
}

const sparseCounts = z.preprocess(fromSparse, funnelCountsSchema);
const fileSchema = z.strictObject({
  v: z.literal(1),
  timeZone: z.string().min(1).max(64),
  hours: z.record(z.string().regex(HOUR_KEY), sparseCounts).refine((r) => Object.keys(r).length <= (HOURLY_DAYS + 1) * 25, 'too many hours'),
  days: z.record(z.string().regex(DAY_KEY), sparseCounts).refine((r) => Object.keys(r).length <= 31 * (KEEP_MONTHS + 1), 'too many days'),
});

// --- the store --------------------------------------------------------------------------------------------

export interface FunnelBuckets {
  /** Hour buckets by `YYYY-MM-DDTHH` (local), the last `HOURLY_DAYS` days. */
  readonly hours: ReadonlyMap<string, FunnelCounts>;
  /** Day buckets by `YYYY-MM-DD` (local) for the days rolled up (older than `HOURLY_DAYS`). */
  readonly days: ReadonlyMap<string, FunnelCounts>;
}

export interface VisitorFunnelStore extends FunnelBuckets {
  readonly timeZone: string;
  /** Why the file was not used at start (it is kept aside at `keptAs`), or null. */
  readonly damaged: { message: string; keptAs: string | null } | null;
  /** Count into the local hour of `atMs`. */
  add(atMs: number, count: (counts: FunnelCounts) => void): void;
  /** Roll hours older than `HOURLY_DAYS` up into days, drop days older than `KEEP_MONTHS`. */
  compact(nowMs: number): void;
  /** Write now (if anything changed). */
  flush(): void;
  /** Flush and stop the pending write. */
  close(): void;
}

export interface VisitorFunnelStoreOptions {
  /** The kiosk's data folder; absent: in memory only (a test, a kiosk with no page). */
  dir?: string;
  timeZone: string;
  clock: Clock;
  logger?: Logger;
}

export function openVisitorFunnelStore(options: VisitorFunnelStoreOptions): VisitorFunnelStore {
  const { clock, timeZone } = options;
  const logger = options.logger ?? silentLogger;
  const path = options.dir ? join(options.dir, VISITOR_FUNNEL_FILE) : null;
  const hours = new Map<string, FunnelCounts>();
  const days = new Map<string, FunnelCounts>();
  let damaged: VisitorFunnelStore['damaged'] = null;
  let timer: TimerHandle | null = null;
  let dirty = false;

  if (path && existsSync(path)) {
    const read = readFile(path);
    if (read.ok) {
      for (const [k, v] of Object.entries(read.file.hours)) hours.set(k, v);
      for (const [k, v] of Object.entries(read.file.days)) days.set(k, v);
    } else {
      const keptAs = `${path}.damaged-${clock.now()}`;
      let kept: string | null = keptAs;
      try {
        renameSync(path, keptAs);
      } catch {
        kept = null;
      }
      damaged = { message: `The visitor counts file ${path} could not be read (${read.message}); counting starts afresh${kept ? `, the damaged file is kept as ${kept}` : ''}.`, keptAs: kept };
      logger.warn('Visitor counts: file not used', { message: read.message, keptAs: kept });
    }
  }

  function write(): void {
    if (!path || !dirty) return;
    dirty = false;
    const text = JSON.stringify({ v: 1, timeZone, hours: sparseMap(hours), days: sparseMap(days) }) + '\n';
    try {
      mkdirSync(options.dir!, { recursive: true, mode: 0o700 });
      const temp = `${path}.${process.pid}.tmp`;
      writeFileSync(temp, text, { mode: 0o600 });
      renameSync(temp, path);
    } catch (error) {
      dirty = true; // tried again with the next change
      logger.warn('Visitor counts: could not write the file', { error: String(error) });
    }
  }

  const store: VisitorFunnelStore = {
    timeZone,
    hours,
    days,
    get damaged() {
      return damaged;
    },
    add(atMs, count) {
      const key = localHour(atMs, timeZone);
      let counts = hours.get(key);
      if (!counts) {
        counts = emptyFunnelCounts();
        hours.set(key, counts);
      }
      count(counts);
      dirty = true;
      if (path && timer === null) {
        timer = clock.setTimeout(() => {
          timer = null;
          store.compact(clock.now());
          write();
        }, SAVE_DELAY_MS);
      }
    },
    compact(nowMs) {
      const today = localDay(nowMs, timeZone);
      const firstHourly = dayNumber(today) - (HOURLY_DAYS - 1);
      for (const [key, counts] of [...hours]) {
        const day = key.slice(0, 10);
        if (dayNumber(day) >= firstHourly) continue;
        hours.delete(key);
        const rolled = days.get(day) ?? emptyFunnelCounts();
        days.set(day, addCounts(rolled, counts));
        dirty = true;
      }
      const since = keepSince(today);
      for (const day of [...days.keys()]) {
        if (day < since) {
          days.delete(day);
          dirty = true;
        }
      }
      for (const key of [...hours.keys()]) {
        if (key.slice(0, 10) < since) {
          hours.delete(key);
          dirty = true;
        }
      }
    },
    flush: write,
    close() {
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      store.compact(clock.now());
      write();
    },
  };
  store.compact(clock.now());
  return store;
}

function sparseMap(map: ReadonlyMap<string, FunnelCounts>): Record<string, unknown> {
  return Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, toSparse(v)]));
}

type ReadOutcome = { ok: true; file: z.infer<typeof fileSchema> } | { ok: false; message: string };

/** Read and validate the store file (the CLI reads it too). */
export function readFile(path: string): ReadOutcome {
  try {
    if (statSync(path).size > MAX_FILE_BYTES) return { ok: false, message: `it is larger than ${MAX_FILE_BYTES} bytes` };
    const parsed = fileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { ok: false, message: `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'unexpected value'}` };
    }
    return { ok: true, file: parsed.data };
  } catch (error) {
    return { ok: false, message: error instanceof SyntaxError ? 'it is not JSON' : String(error) };
  }
}
