/**
 * The fleet as the console knows it, built only from what arrives over MQTT: each kiosk's retained
 * status (and the last will that replaces it), its ledger events and its command answers. Electron-free
 * and clock-injected; the MQTT side (link.ts) feeds it, the server and the metrics read it.
 *
 * - Online/offline carry the console's own time of the change ("since"): a last will has no time of
 *   its own, so the console stamps it when it arrives. A change that happened while the console did not
 *   hear the broker (it was stopped, or the broker was away) arrives when it is back — queued for its
 *   session, or as the retained status — and is shown as a window: not before the console last heard
 *   the broker (`sinceNotBefore`), not after it heard of it (`sinceAt`). A kiosk the console never knew
 *   whose retained status it finds has no known time (`sinceAt: null`: "since before the console started").
 * - With a memory (memory.ts) the rows, spend and the last event of each kiosk outlive a restart.
 * - Events may arrive twice (QoS 1, a persistent session): each kiosk's recent event ids are kept and
 *   a repeat is not counted again.
 * - Every payload is validated; a malformed one is counted and dropped, never thrown.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { FleetMemory, RememberedKiosk } from './memory.ts';
import { SpendBook } from './spend.ts';
import type { AnswerView, KioskRow, SpendRow } from './view.ts';

/** Recent event ids kept per kiosk to drop repeats. */
const SEEN_EVENT_IDS = 256;
/** Screenshots kept in memory (the newest); older ones are gone from the page too. */
export const KEPT_SCREENSHOTS = 32;
/** End reasons of a call that went as planned; anything else with an error code counts as an error. */
const NORMAL_ENDS = new Set(['user_end', 'idle', 'max_call', 'operator', 'closing', 'opening_hours']);
/** The service's words for an empty balance (spec: create refused for credits, a credit_insufficient hang-up). */
const ACCOUNT_WORDS = ['credit_insufficient', 'insufficient_credits'];

const statusSchema = z.looseObject({
  online: z.boolean(),
  kioskId: z.string().max(64).optional(),
  reason: z.string().max(200).optional(),
  group: z.string().max(64).nullable().optional(),
  phase: z.string().max(40).optional(),
  open: z.boolean().optional(),
  version: z.string().max(64).optional(),
  mode: z.string().max(40).optional(),
  // `day`, `from`, `to`: the kiosk's local day the counters are for (a kiosk before these fields sends none).
  today: z.object({ sessions: z.number().nonnegative(), credits: z.number().nonnegative(), day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(), from: z.string().max(40).optional(), to: z.string().max(40).optional() }).optional(),
  lastErrorCode: z.string().max(64).nullable().optional(),
  queued: z.number().int().nonnegative().optional(),
  droppedEvents: z.number().int().nonnegative().optional(),
  policyError: z.string().max(2000).nullable().optional(),
  // The kiosk's safe-updates status (safe-updates.ts `UpdateStatus`): its phase and the version waiting.
  update: z
    .looseObject({ phase: z.string().max(40), ready: z.string().max(64).nullable().optional(), pinned: z.string().max(64).nullable().optional(), off: z.string().max(500).nullable().optional(), floor: z.string().max(64).nullable().optional() })
    .nullable()
    .optional(),
  avatarVolume: z.number().int().min(0).max(100).optional(),
  at: z.string().max(40).optional(),
});

const sessionSchema = z.looseObject({
  kind: z.literal('session'),
  end_at: z.string().max(40),
  end_reason: z.string().max(64),
  credits_cost: z.union([z.number(), z.literal('unknown')]).optional(),
  error_code: z.string().max(64).optional(),
  avatar: z.string().max(64).optional(),
});
const spareSchema = z.looseObject({ kind: z.literal('spare'), status: z.string().max(20), reason: z.string().max(200).optional() });
const eventSchema = z.object({ id: z.string().max(80), kioskId: z.string().max(64).optional(), at: z.string().max(40).optional(), record: z.unknown() });

const resultSchema = z.looseObject({
  id: z.string().max(64).nullable(),
  cmd: z.string().max(32).nullable(),
  ok: z.boolean(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.string().max(64), message: z.string().max(2000) }).optional(),
  at: z.string().max(40).optional(),
});

/** Figures the metrics count per kiosk (monotonic while the console runs). */
export interface KioskCounts {
  sessionsByEnd: Map<string, number>;
  errorsByCode: Map<string, number>;
  creditsByAvatar: Map<string, number>;
  mediaStalls: number;
  accountTroubleByReason: Map<string, number>;
  /** The kiosk's time of its last call's end (ms), for "no calls in opening hours". */
  lastCallAtMs: number | null;
}

interface Kiosk {
  row: KioskRow;
  counts: KioskCounts;
  seen: string[];
  seenSet: Set<string>;
}

export interface Screenshot {
  png: Buffer;
  kioskId: string;
}

export interface FleetStateOptions {
  now(): number;
  /** What the console remembers on disk: the rows and spend start from it, and every change goes to it. */
  memory?: FleetMemory;
}

/** One short cell: the phase, the version waiting, a pin. */
function updateText(u: { phase: string; ready?: string | null | undefined; pinned?: string | null | undefined }): string {
  return [u.phase, u.ready ?? null, u.pinned ? `pinned ${u.pinned}` : null].filter((x) => x !== null).join(' ');
}

export class FleetState {
  private readonly kiosks = new Map<string, Kiosk>();
  private readonly dirty = new Set<string>();
  private readonly spend: SpendBook;
  private readonly shots = new Map<string, Screenshot>();
  /** Each kiosk's floor for update-pin (its status' `update.floor`: the lowest version the signer allows). */
  private readonly floors = new Map<string, string>();
  /** Payloads that did not validate, by topic kind. */
  readonly malformed = { status: 0, events: 0, results: 0 };
  private readonly listeners = new Set<(answer: AnswerView, kioskId: string) => void>();

  /** When the console started (ms): what "since before" refers to. */
  readonly startedAtMs: number;
  /** When the console last heard the broker before the current connection (ms), or null (never known). */
  private awayFromMs: number | null;
  private linkIsUp = false;
  /** Between a connect and the answer to its subscriptions: what arrives was queued while away. */
  private catchingUp = false;

  constructor(private readonly options: FleetStateOptions) {
    this.startedAtMs = options.now();
    this.spend = options.memory?.spend ?? new SpendBook();
    this.awayFromMs = options.memory?.lastAliveAtMs ?? null;
    for (const r of options.memory?.kiosks.values() ?? []) {
      const k = this.kiosk(r.kioskId);
      Object.assign(k.row, r);
      k.counts.lastCallAtMs = r.lastCallAt === null ? null : Date.parse(r.lastCallAt);
    }
  }

  /** The link is connected: until `caughtUp`, what arrives was queued for the console while it was away. */
  linkUp(): void {
    this.linkIsUp = true;
    this.catchingUp = true;
  }

  /** The broker answered the subscriptions: what arrives now is live (retained copies aside). */
  /** Whether what arrives now is live (the link is up and its subscriptions answered). */
  get isLive(): boolean {
    return this.linkIsUp && !this.catchingUp;
  }

  caughtUp(): void {
    this.catchingUp = false;
  }

  /** The link is down: changes that arrive after it is back happened after now at the earliest. */
  linkDown(): void {
    if (!this.linkIsUp) return;
    this.linkIsUp = false;
    this.catchingUp = false;
    this.awayFromMs = this.options.now();
  }

  private iso(): string {
    return new Date(this.options.now()).toISOString();
  }

  private kiosk(kioskId: string): Kiosk {
    let k = this.kiosks.get(kioskId);
    if (!k) {
      k = {
        row: {
          kioskId,
          online: false,
          sinceAt: null,
          sinceNotBefore: null,
          offlineReason: null,
          group: null,
          phase: null,
          open: null,
          version: null,
          mode: null,
          update: null,
          todaySessions: 0,
          todayCredits: 0,
          lastCallAt: null,
          lastCallEnd: null,
          lastErrorCode: null,
          droppedEvents: 0,
          queued: 0,
          policyError: null,
          accountTrouble: 0,
          avatarVolume: null,
          lastAnswer: null,
        },
        counts: { sessionsByEnd: new Map(), errorsByCode: new Map(), creditsByAvatar: new Map(), mediaStalls: 0, accountTroubleByReason: new Map(), lastCallAtMs: null },
        seen: [],
        seenSet: new Set(),
      };
      this.kiosks.set(kioskId, k);
    }
    return k;
  }

  /** A retained status or a last will. `retained`: delivered as the broker's stored copy (at subscribe time). */
  onStatus(kioskId: string, payload: Buffer | string, retained: boolean): void {
    const parsed = statusSchema.safeParse(parseJson(payload));
    if (!parsed.success) {
      this.malformed.status++;
      return;
    }
    const s = parsed.data;
    const k = this.kiosk(kioskId);
    const row = k.row;
    const isNew = row.sinceAt === null && !row.online && row.phase === null && row.offlineReason === null && !this.options.memory?.kiosks.has(kioskId);
    const before = remembered(row);
    if (s.online !== row.online || isNew) this.since(row, isNew, retained);
    row.online = s.online;
    if (!s.online) {
      row.offlineReason = s.reason ?? 'offline';
    } else {
      row.offlineReason = null;
      row.group = s.group ?? null;
      row.phase = s.phase ?? null;
      row.open = s.open ?? null;
      row.version = s.version ?? null;
      row.mode = s.mode ?? null;
      row.update = s.update ? updateText(s.update) : null;
      if (s.update?.floor) this.floors.set(kioskId, s.update.floor);
      else this.floors.delete(kioskId);
      row.todaySessions = s.today?.sessions ?? 0;
      row.todayCredits = s.today?.credits ?? 0;
      row.lastErrorCode = s.lastErrorCode ?? row.lastErrorCode;
      row.queued = s.queued ?? 0;
      row.droppedEvents = s.droppedEvents ?? 0;
      row.policyError = s.policyError ?? null;
      row.avatarVolume = s.avatarVolume ?? null;
      this.dayCount(kioskId, s.today, s.queued ?? 0);
    }
    const now = remembered(row);
    if (JSON.stringify(now) !== JSON.stringify(before)) this.options.memory?.kiosk(now);
    this.dirty.add(kioskId);
  }

  /** Since when the row's online/offline holds (see the header: exact, a window, or unknown). */
  private since(row: KioskRow, isNew: boolean, retained: boolean): void {
    const live = !retained && !this.catchingUp;
    if (live) {
      row.sinceAt = this.iso();
      row.sinceNotBefore = null;
    } else if (this.awayFromMs === null || (retained && isNew)) {
      // A stored copy of a kiosk never seen tells nothing about when it changed.
      row.sinceAt = null;
      row.sinceNotBefore = null;
    } else {
      row.sinceAt = this.iso();
      row.sinceNotBefore = new Date(Math.min(this.awayFromMs, this.options.now())).toISOString();
    }
  }

  /** The kiosk's own count of its day, for the calls whose events never came (spend.ts). */
  private dayCount(kioskId: string, today: { sessions: number; credits: number; day?: string | undefined; from?: string | undefined; to?: string | undefined } | undefined, queued: number): void {
    if (!today?.day || !today.from || !today.to) return;
    const fromMs = Date.parse(today.from);
    const toMs = Date.parse(today.to);
    if (Number.isNaN(fromMs) || Number.isNaN(toMs) || toMs <= fromMs) return;
    const count = { day: today.day, fromMs, toMs, sessions: Math.floor(today.sessions), credits: today.credits, queued };
    if (this.spend.dayCount(kioskId, count)) this.options.memory?.dayCount(kioskId, count);
  }

  /** Every row as the memory keeps it (its snapshot). */
  remembered(): RememberedKiosk[] {
    return [...this.kiosks.values()].map((k) => remembered(k.row));
  }

  /** One ledger record from `<kiosk>/events`. */
  onEvent(kioskId: string, payload: Buffer | string): void {
    const envelope = eventSchema.safeParse(parseJson(payload));
    if (!envelope.success) {
      this.malformed.events++;
      return;
    }
    const k = this.kiosk(kioskId);
    const eventId = envelope.data.id;
    if (k.seenSet.has(eventId) || this.options.memory?.isRepeat(kioskId, eventId)) return;
    k.seen.push(eventId);
    k.seenSet.add(eventId);
    if (k.seen.length > SEEN_EVENT_IDS) k.seenSet.delete(k.seen.shift()!);

    const session = sessionSchema.safeParse(envelope.data.record);
    if (session.success) {
      const r = session.data;
      const c = k.counts;
      inc(c.sessionsByEnd, r.end_reason, 1);
      const endMs = Date.parse(r.end_at);
      if (!Number.isNaN(endMs) && (c.lastCallAtMs === null || endMs >= c.lastCallAtMs)) {
        c.lastCallAtMs = endMs;
        k.row.lastCallAt = new Date(endMs).toISOString();
        k.row.lastCallEnd = r.end_reason;
      }
      const failed = r.error_code ?? (NORMAL_ENDS.has(r.end_reason) ? null : r.end_reason);
      if (failed) {
        inc(c.errorsByCode, failed, 1);
        k.row.lastErrorCode = failed;
      }
      if (r.end_reason === 'media_stalled') c.mediaStalls++;
      const trouble = ACCOUNT_WORDS.find((w) => r.end_reason === w || r.error_code === w);
      if (trouble) {
        inc(c.accountTroubleByReason, trouble, 1);
        k.row.accountTrouble++;
      }
      const avatar = r.avatar ?? 'unknown';
      const credits = typeof r.credits_cost === 'number' ? r.credits_cost : 0;
      inc(c.creditsByAvatar, avatar, credits);
      if (!Number.isNaN(endMs)) {
        this.spend.addCall(kioskId, endMs, avatar, credits);
        this.options.memory?.call(kioskId, eventId, endMs, avatar, credits, r.end_reason);
      }
      this.dirty.add(kioskId);
      return;
    }
    const spare = spareSchema.safeParse(envelope.data.record);
    if (spare.success && spare.data.status === 'failed') {
      const trouble = ACCOUNT_WORDS.find((w) => spare.data.reason?.includes(w));
      if (trouble) {
        inc(k.counts.accountTroubleByReason, trouble, 1);
        k.row.accountTrouble++;
        this.dirty.add(kioskId);
      }
      return;
    }
    if (!spare.success) this.malformed.events++;
  }

  /** A command answer from `<kiosk>/cmd/result`; a screenshot's picture is kept and linked, not inlined. */
  onResult(kioskId: string, payload: Buffer | string): AnswerView | null {
    const parsed = resultSchema.safeParse(parseJson(payload));
    if (!parsed.success) {
      this.malformed.results++;
      return null;
    }
    const r = parsed.data;
    let screenshotUrl: string | null = null;
    let summary: string;
    if (r.ok) {
      const result = r.result ?? {};
      if (typeof result.png === 'string') {
        const png = Buffer.from(result.png, 'base64');
        // A random name: the page shows it as an image on the session cookie alone (sessions.ts), so the
        // name is learnt only from the keyed API.
        const name = randomBytes(16).toString('hex');
        this.shots.set(name, { png, kioskId });
        while (this.shots.size > KEPT_SCREENSHOTS) this.shots.delete(this.shots.keys().next().value!);
        screenshotUrl = `/api/screenshots/${name}.png`;
        summary = `screenshot ${String(result.width)}×${String(result.height)}`;
      } else {
        summary = JSON.stringify(result).slice(0, 200);
      }
    } else {
      summary = r.error ? `${r.error.code}: ${r.error.message}` : 'refused';
    }
    const answer: AnswerView = { id: r.id, cmd: r.cmd, ok: r.ok, summary, screenshotUrl, at: this.iso() };
    this.kiosk(kioskId).row.lastAnswer = answer;
    this.dirty.add(kioskId);
    for (const listener of this.listeners) listener(answer, kioskId);
    return answer;
  }

  onAnswer(listener: (answer: AnswerView, kioskId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  screenshot(name: string): Screenshot | null {
    return this.shots.get(name) ?? null;
  }

  rows(): KioskRow[] {
    return [...this.kiosks.values()].map((k) => k.row);
  }

  row(kioskId: string): KioskRow | null {
    return this.kiosks.get(kioskId)?.row ?? null;
  }

  counts(): Array<{ row: KioskRow; counts: KioskCounts }> {
    return [...this.kiosks.values()].map((k) => ({ row: k.row, counts: k.counts }));
  }

  /** The lowest version a kiosk says its fleet's signer allows (update-pin below it is refused), or null. */
  updateFloor(kioskId: string): string | null {
    return this.floors.get(kioskId) ?? null;
  }

  /** Kiosks in a group (as their last status said), or every kiosk the console knows. */
  members(target: { group: string } | { fleet: true }): string[] {
    return this.rows()
      .filter((r) => ('fleet' in target ? true : r.group === target.group))
      .map((r) => r.kioskId);
  }

  /** The rows changed since the last call (and forget them). */
  takeChanged(): KioskRow[] {
    const rows = [...this.dirty].map((id) => this.kiosks.get(id)!.row);
    this.dirty.clear();
    return rows;
  }

  /** Spend per kiosk, day and avatar, with what the kiosks counted but never sent (spend.ts). */
  spendRows(): SpendRow[] {
    return this.spend.rows();
  }

  /** Drop spend beyond its bounds (spend.ts); run now and then. */
  pruneSpend(): void {
    this.spend.prune(this.options.now());
  }
}

/** What the memory keeps of a row. */
function remembered(row: KioskRow): RememberedKiosk {
  return {
    kioskId: row.kioskId,
    online: row.online,
    sinceAt: row.sinceAt,
    sinceNotBefore: row.sinceNotBefore,
    offlineReason: row.offlineReason,
    group: row.group,
    version: row.version,
    mode: row.mode,
    lastCallAt: row.lastCallAt,
    lastCallEnd: row.lastCallEnd,
  };
}

/** Spend as CSV (RFC 4180): one row per kiosk, day and avatar. */
export function spendCsv(rows: SpendRow[]): string {
  const cell = (v: string | number) => {
    const s = String(v);
    // A leading =, +, - or @ would be a formula in a spreadsheet: quote it with a leading apostrophe.
    const safe = /^[=+\-@]/.test(s) && typeof v === 'string' ? `'${s}` : s;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  const lines = ['day,kiosk,avatar,sessions,credits', ...rows.map((r) => [r.day, r.kioskId, r.avatar, r.sessions, round(r.credits)].map(cell).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

function inc(map: Map<string, number>, key: string, by: number): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function parseJson(payload: Buffer | string): unknown {
  try {
    return JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));
  } catch {
    return undefined;
  }
}
