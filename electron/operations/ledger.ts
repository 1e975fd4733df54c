/**
 * The credit ledger, without Electron: append-only JSON lines in the user-data folder
 * (`ledger/ledger-YYYY-MM.jsonl`, one file per month of the record's time, local time), one record per
 * session and one per spare (pre-warmed) session event.
 *
 * Crash safety: each record is ONE write of one line, flushed to disk before the next; records are
 * appended one at a time. A crash can only leave a torn LAST line: the reader skips lines that do not
 * parse, and the next append first ends such a line with a newline so the new record starts clean.
 *
 * `createLedgerRecorder` observes the kiosk's events (it never changes the kiosk): it follows
 * each session from `creating` to its terminal state and writes the record from the SessionSummary.
 */
import { existsSync, mkdirSync, openSync, closeSync, fstatSync, readSync, readdirSync, readFileSync, fsyncSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { CallFigures, HangupCause, KioskEvent, LedgerTotals, LedgerTotalsRow, SpareEvent } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { csvCell } from '../core/csv.ts';
import { AvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { CALL_MODES } from '../core/protocol.ts';
import type { SessionState } from '../core/session-types.ts';

export const LEDGER_DIR = 'ledger';
const FILE_PATTERN = /^ledger-(\d{4})-(\d{2})\.jsonl$/;

const isoTime = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO time');

export const sessionRecordSchema = z.object({
  kind: z.literal('session'),
  v: z.literal(1),
  start_at: isoTime,
  live_at: isoTime.nullable(),
  end_at: isoTime,
  live_id: z.string().nullable(),
  surface: z.enum(['demo', 'direct', 'gateway']),
  call_mode: z.enum(CALL_MODES),
  time_to_live_ms: z.number().nullable(),
  not_ready_retries: z.number().int().min(0),
  reconnects: z.number().int().min(0),
  /** `user_end`, `idle`, `max_call`, `media_stalled` (the media watchdog), a server hangup reason, `app_crash`, or the error code of a failure. */
  end_reason: z.string(),
  ended_by: z.string().nullable(),
  billed_seconds: z.number().nullable(),
  credits_cost: z.union([z.number(), z.literal('unknown')]),
  /** Hung up or read back after a crash, on the next start. */
  recovered: z.boolean(),
  error_code: z.string().optional(),
  /** The cast member (its id) the visitor talked to: spend per avatar. */
  avatar: z.string().max(64).optional(),
  /** The call's field figures (ms from the tap; see contract.ts `CallFigures`), when the renderer reported them. */
  figures: z
    .object({
      tap_to_rtc_ready_ms: z.number().nullable(),
      tap_to_conn_init_ack_ms: z.number().nullable(),
      tap_to_avatar_published_ms: z.number().nullable(),
      tap_to_first_frame_ms: z.number().nullable(),
      tap_to_first_audio_ms: z.number().nullable(),
      join_ms: z.number().nullable(),
      proxy: z.enum(['off', 'udp', 'tcp']),
    })
    .optional(),
});
export type SessionRecord = z.infer<typeof sessionRecordSchema>;

export const spareRecordSchema = z.object({
  kind: z.literal('spare'),
  v: z.literal(1),
  at: isoTime,
  live_id: z.string().nullable(),
  surface: z.enum(['demo', 'direct', 'gateway']),
  call_mode: z.enum(CALL_MODES),
  status: z.enum(['created', 'used', 'expired', 'failed']),
  reason: z.string().optional(),
});
export type SpareRecord = z.infer<typeof spareRecordSchema>;

export type LedgerRecord = SessionRecord | SpareRecord;
const recordSchema = z.discriminatedUnion('kind', [sessionRecordSchema, spareRecordSchema]);

export interface ReadResult {
  records: LedgerRecord[];
  /** Lines that did not parse (a torn last line after a crash, or damage). */
  skipped: number;
}

/** Parse a ledger file's text: one record per line; bad lines are counted and skipped. */
export function parseLedger(text: string): ReadResult {
  const records: LedgerRecord[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = recordSchema.safeParse(JSON.parse(line));
      if (parsed.success) records.push(parsed.data);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { records, skipped };
}

export function readLedgerFile(path: string): ReadResult {
  if (!existsSync(path)) throw new AvatarError('invalid_request', `No ledger file at ${path}.`);
  return parseLedger(readFileSync(path, 'utf8'));
}

export const recordTime = (r: LedgerRecord): number => Date.parse(r.kind === 'session' ? r.end_at : r.at);

export function monthFileName(atMs: number): string {
  const d = new Date(atMs);
  return `ledger-${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}.jsonl`;
}

export interface Ledger {
  readonly dir: string;
  /** Append one record (one line, one write, flushed). Appends are serialised. */
  append(record: LedgerRecord): Promise<void>;
  /** Every record from the monthly files (oldest file first), optionally from `sinceMs` on. */
  read(sinceMs?: number): ReadResult;
  totals(nowMs: number): LedgerTotals;
  csv(sinceMs?: number): string;
  /** Hear each record once it is on disk (the fleet link forwards them); returns the unsubscribe function. */
  onAppend(listener: (record: LedgerRecord) => void): () => void;
}

export function createLedger(options: { dir: string; logger?: Logger }): Ledger {
  const dir = options.dir;
  const logger = options.logger ?? silentLogger;
  let chain: Promise<void> = Promise.resolve();
  const appendListeners = new Set<(record: LedgerRecord) => void>();

  function appendNow(record: LedgerRecord): void {
    const parsed = recordSchema.parse(record); // never write a record the reader would skip
    mkdirSync(dir, { recursive: true });
    const path = join(dir, monthFileName(recordTime(parsed)));
    const fd = openSync(path, 'a+', 0o600);
    try {
      let prefix = '';
      const size = fstatSync(fd).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = '\n'; // a torn line from a crash: end it so ours starts clean
      }
      writeSync(fd, prefix + JSON.stringify(parsed) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    for (const listener of [...appendListeners]) {
      try {
        listener(parsed);
      } catch (error) {
        logger.warn('Ledger: a listener threw', { error: String(error) });
      }
    }
  }

  function files(): string[] {
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((f) => FILE_PATTERN.test(f))
      .sort();
  }

  function read(sinceMs?: number): ReadResult {
    const out: ReadResult = { records: [], skipped: 0 };
    for (const file of files()) {
      const r = parseLedger(readFileSync(join(dir, file), 'utf8'));
      out.skipped += r.skipped;
      for (const rec of r.records) if (sinceMs === undefined || recordTime(rec) >= sinceMs) out.records.push(rec);
    }
    if (out.skipped) logger.warn('Ledger: skipped unreadable lines', { skipped: out.skipped });
    return out;
  }

  return {
    dir,
    append(record) {
      const next = chain.then(() => appendNow(record));
      chain = next.catch((error: unknown) => logger.error('Ledger: could not append a record', { error: String(error) }));
      return next;
    },
    read,
    totals(nowMs) {
      return totalsOf(read(Math.min(startOfMonth(nowMs), startOfDay(nowMs, 6))).records, nowMs);
    },
    csv(sinceMs) {
      return toCsv(read(sinceMs).records);
    },
    onAppend(listener) {
      appendListeners.add(listener);
      return () => void appendListeners.delete(listener);
    },
  };
}

// --- totals and CSV -----------------------------------------------------------------------------------

export function startOfDay(nowMs: number, daysBack = 0): number {
  const d = new Date(nowMs);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() - daysBack).getTime();
}

export function startOfMonth(nowMs: number): number {
  const d = new Date(nowMs);
  return new Date(d.getFullYear(), d.getMonth(), 1).getTime();
}

const emptyRow = (): LedgerTotalsRow => ({ sessions: 0, credits: 0, billedSeconds: 0, unknownCredits: 0, demoSessions: 0 });

/** Add one session to a totals row: a demo call (the built-in emulator's, nobody paid) only to `demoSessions`,
 *  and only once it went live (`live_at`): a demo attempt cancelled or failed while connecting was no call. */
export function addSession(row: LedgerTotalsRow, r: SessionRecord): void {
  if (r.surface === 'demo') {
    if (r.live_at !== null) row.demoSessions += 1;
    return;
  }
  row.sessions += 1;
  row.billedSeconds += r.billed_seconds ?? 0;
  if (r.credits_cost === 'unknown') row.unknownCredits += 1;
  else row.credits += r.credits_cost;
}

/** Today, the last 7 calendar days (today included) and this calendar month, by each record's end. Real
 *  money only: demo calls are counted apart (`demoSessions`). */
export function totalsOf(records: LedgerRecord[], nowMs: number): LedgerTotals {
  const out: LedgerTotals = { today: emptyRow(), last7Days: emptyRow(), month: emptyRow() };
  const bounds: Array<[keyof LedgerTotals, number]> = [
    ['today', startOfDay(nowMs)],
    ['last7Days', startOfDay(nowMs, 6)],
    ['month', startOfMonth(nowMs)],
  ];
  for (const r of records) {
    if (r.kind !== 'session') continue;
    const at = recordTime(r);
    if (at > nowMs) continue;
    for (const [key, from] of bounds) {
      if (at < from) continue;
      addSession(out[key], r);
    }
  }
  return out;
}

export const CSV_COLUMNS = [
  'kind',
  'start_at',
  'live_at',
  'end_at',
  'live_id',
  'surface',
  'call_mode',
  'time_to_live_ms',
  'not_ready_retries',
  'reconnects',
  'end_reason',
  'ended_by',
  'billed_seconds',
  'credits_cost',
  'recovered',
  'spare_status',
] as const;

export function toCsv(records: LedgerRecord[]): string {
  const rows = [CSV_COLUMNS.join(',')];
  for (const r of records) {
    const row: Record<(typeof CSV_COLUMNS)[number], unknown> =
      r.kind === 'session'
        ? { ...r, spare_status: null }
        : {
            kind: 'spare',
            start_at: null,
            live_at: null,
            end_at: r.at,
            live_id: r.live_id,
            surface: r.surface,
            call_mode: r.call_mode,
            time_to_live_ms: null,
            not_ready_retries: null,
            reconnects: null,
            end_reason: r.reason ?? null,
            ended_by: null,
            billed_seconds: 0,
            credits_cost: 0,
            recovered: null,
            spare_status: r.status,
          };
    rows.push(CSV_COLUMNS.map((c) => csvCell(row[c])).join(','));
  }
  return rows.join('\r\n') + '\r\n';
}

// --- the recorder (observes the kiosk's events) -------------------------------------------------------

export type EndCause = HangupCause | 'max_call';

export interface LedgerRecorderOptions {
  ledger: Ledger;
  clock: Clock;
  /** The service mode right now (recorded as `surface`). */
  surface(): SessionRecord['surface'];
  /** The cast member of the call being started (read when it starts). */
  avatar?(): string | null;
  logger?: Logger;
}

export interface LedgerRecorder {
  /** Feed every kiosk event here (`service.onEvent(recorder.onEvent)`). */
  onEvent(event: KioskEvent): void;
  /** The hangup of `liveId` (or of the current session) was asked for this reason. */
  noteCause(cause: EndCause, liveId: string | null): void;
  /** Resolves when every record written so far is on disk. */
  flush(): Promise<void>;
}

interface Tracking {
  startMs: number;
  liveId: string | null;
  callMode: SessionRecord['call_mode'] | null;
  liveAtMs: number | null;
  cause: EndCause | null;
  avatar: string | null;
  figures?: CallFigures;
}

const TERMINAL = new Set<SessionState['phase']>(['ended', 'failed']);

function ledgerFigures(f: CallFigures): NonNullable<SessionRecord['figures']> {
  return {
    tap_to_rtc_ready_ms: f.tapToRtcReadyMs,
    tap_to_conn_init_ack_ms: f.tapToConnInitAckMs,
    tap_to_avatar_published_ms: f.tapToAvatarPublishedMs,
    tap_to_first_frame_ms: f.tapToFirstFrameMs,
    tap_to_first_audio_ms: f.tapToFirstAudioMs,
    join_ms: f.joinMs,
    proxy: f.proxy,
  };
}

export function createLedgerRecorder(options: LedgerRecorderOptions): LedgerRecorder {
  const { ledger, clock } = options;
  const logger = options.logger ?? silentLogger;
  let current: Tracking | null = null;
  let pending: Promise<void> = Promise.resolve();

  const write = (record: LedgerRecord) => {
    pending = ledger.append(record).catch((error: unknown) => logger.error('Ledger: record lost', { error: String(error) }));
  };

  function onState(state: SessionState): void {
    if (state.phase === 'idle') return;
    if (state.phase === 'creating' || !current) {
      current = { startMs: clock.now(), liveId: null, callMode: null, liveAtMs: null, cause: null, avatar: options.avatar?.() ?? null };
    }
    if ('liveId' in state && state.liveId) current.liveId = state.liveId;
    if (state.phase === 'live' && current.liveAtMs === null) current.liveAtMs = state.sinceMs;
    if (!TERMINAL.has(state.phase)) return;
    const t = current;
    current = null;
    const summary = state.phase === 'ended' || state.phase === 'failed' ? state.summary : null;
    const error = state.phase === 'failed' ? state.error : null;
    const liveAtMs = t.liveAtMs;
    let endReason: string = summary?.hangupReason ?? error?.code ?? 'unknown';
    // A call that failed on our side (no microphone, the media stopped) was hung up by us with type 5
    // user_end, but the visitor did not end it: its reason is the failure's code.
    if (error && summary?.endedBy === 'client') endReason = error.code;
    // Our own hangup (type 5 user_end) says why we hung up: the idle prompt or the venue's maximum length.
    if (t.cause && t.cause !== 'visitor' && (summary?.endedBy === 'client' || summary === null)) endReason = t.cause;
    // Nothing is billed before the avatar went live (spec §3: billing starts at on_live).
    const neverLive = liveAtMs === null && !summary?.wentLive;
    const record: SessionRecord = {
      kind: 'session',
      v: 1,
      start_at: new Date(t.startMs).toISOString(),
      live_at: liveAtMs === null ? null : new Date(liveAtMs).toISOString(),
      end_at: new Date(clock.now()).toISOString(),
      live_id: summary?.liveId ?? t.liveId,
      surface: options.surface(),
      call_mode: summary?.callMode ?? t.callMode ?? 'video',
      time_to_live_ms: summary?.timingsMs.live ?? (liveAtMs === null ? null : liveAtMs - t.startMs),
      not_ready_retries: summary?.notReadyRetries ?? 0,
      reconnects: summary?.reconnects ?? 0,
      end_reason: endReason,
      ended_by: summary?.endedBy ?? null,
      billed_seconds: summary?.billedSeconds ?? (neverLive ? 0 : null),
      credits_cost: summary?.creditsCost ?? (neverLive ? 0 : 'unknown'),
      recovered: false,
      ...(error ? { error_code: error.code } : {}),
      ...(t.avatar ? { avatar: t.avatar } : {}),
      ...(t.figures ? { figures: ledgerFigures(t.figures) } : {}),
    };
    write(record);
  }

  function onSpare(event: SpareEvent): void {
    write({
      kind: 'spare',
      v: 1,
      at: new Date(clock.now()).toISOString(),
      live_id: event.liveId,
      surface: options.surface(),
      call_mode: event.callMode,
      status: event.status,
      ...(event.reason ? { reason: event.reason } : {}),
    });
  }

  return {
    onEvent(event) {
      if (event.type === 'state') onState(event.state);
      else if (event.type === 'credentials') {
        current ??= { startMs: clock.now(), liveId: null, callMode: null, liveAtMs: null, cause: null, avatar: options.avatar?.() ?? null };
        current.liveId = event.liveId;
        current.callMode = event.callMode;
      } else if (event.type === 'spare') onSpare(event);
      else if (event.type === 'call-figures' && current) current.figures = event.figures; // just before the terminal state
    },
    noteCause(cause, liveId) {
      if (!current) return;
      if (liveId !== null && current.liveId !== null && current.liveId !== liveId) return;
      current.cause ??= cause;
    },
    flush: () => pending,
  };
}
