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
 * - Every payload is read by intake.ts, which checks and bounds each figure and each label's values; a
 *   refused one is counted (by topic and reason, and per kiosk) and dropped, never thrown.
 * - An answer counts only when it answers a command this console sent to that kiosk (sent-commands.ts);
 *   only the answer to a screenshot command it sent can carry a picture, and only a PNG.
 */
import { randomBytes } from 'node:crypto';
import { csvCell } from '../../core/csv.ts';
import { MAX_SCREENSHOT_BYTES } from '../command-table.ts';
import { LabelBudget, readAnswer, readEvent, readPng, readStatus, readVisitors, Refusals, type BoundedLabel, type RefusalReason, type Topic } from './intake.ts';
import type { FleetMemory, RememberedKiosk } from './memory.ts';
import { SentCommands, type SentCommand } from './sent-commands.ts';
import { SpendBook } from './spend.ts';
import type { AnswerView, KioskRow, SpendRow } from './view.ts';
import type { FunnelDay } from '../../core/funnel.ts';
import type { KioskFunnel } from './visitors.ts';

/** Recent event ids kept per kiosk to drop repeats. */
const SEEN_EVENT_IDS = 256;
/** Screenshots kept in memory (the newest); older ones are gone from the page too. */
export const KEPT_SCREENSHOTS = 32;
/** …and at most this many bytes of them. */
export const KEPT_SCREENSHOT_BYTES = 64 * 1024 * 1024;
/** End reasons of a call that went as planned; anything else with an error code counts as an error. */
const NORMAL_ENDS = new Set(['user_end', 'idle', 'max_call', 'operator', 'closing', 'opening_hours']);
/** The service's words for an empty balance (spec: create refused for credits, a credit_insufficient hang-up). */
const ACCOUNT_WORDS = ['credit_insufficient', 'insufficient_credits'];

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
  /** The values this kiosk has used per label (its end reasons, error codes, avatars). */
  labels: LabelBudget;
  /** Its latest day of the visitor funnel (kept apart from the row: the page's frames stay small). */
  visitors: FunnelDay | null;
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
  private shotBytes = 0;
  /** Payloads refused, by topic and reason (intake.ts). */
  readonly refusals = new Refusals();
  /** Payloads refused per kiosk (also before the kiosk has a row). */
  private readonly refusedBy = new Map<string, number>();
  /** The commands this console sent: answers are matched against them. */
  readonly sent: SentCommands;
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
    this.sent = new SentCommands(options.now);
    // Without a memory the record begins with this start: what came before it is not known here.
    this.spend = options.memory?.spend ?? new SpendBook(this.startedAtMs);
    this.awayFromMs = options.memory?.lastAliveAtMs ?? null;
    for (const r of options.memory?.kiosks.values() ?? []) {
      const k = this.kiosk(r.kioskId);
      Object.assign(k.row, r);
      k.counts.lastCallAtMs = r.lastCallAt === null ? null : Date.parse(r.lastCallAt);
    }
  }

  /** Payloads that did not parse or did not have the expected shape, by topic kind. */
  get malformed(): { status: number; events: number; results: number } {
    const n = (topic: Topic) => this.refusals.count(topic, 'malformed');
    return { status: n('status'), events: n('events'), results: n('results') };
  }

  /** A payload refused (`kioskId` null: its topic named no kiosk id). */
  refuse(topic: Topic, reason: RefusalReason, kioskId: string | null): void {
    this.refusals.add(topic, reason);
    if (kioskId === null) return;
    const n = (this.refusedBy.get(kioskId) ?? 0) + 1;
    this.refusedBy.set(kioskId, n);
    const k = this.kiosks.get(kioskId);
    if (k) {
      k.row.refused = n;
      this.dirty.add(kioskId);
    }
  }

  /** Values each kiosk used beyond its budget, counted as `other`, by label. */
  foldedLabels(): Map<BoundedLabel, number> {
    const out = new Map<BoundedLabel, number>();
    for (const k of this.kiosks.values()) for (const [label, n] of k.labels.folded) out.set(label, (out.get(label) ?? 0) + n);
    return out;
  }

  /** A command this console sent (before it leaves: an answer may come back before the broker's ack). */
  commandSent(command: SentCommand): void {
    this.sent.record(command);
  }

  /** The link is connected: until `caughtUp`, what arrives was queued for the console while it was away. */
  linkUp(): void {
    this.linkIsUp = true;
    this.catchingUp = true;
  }

  /** Whether what arrives now is live (the link is up and its subscriptions answered). */
  get isLive(): boolean {
    return this.linkIsUp && !this.catchingUp;
  }

  /** The broker answered the subscriptions: what arrives now is live (retained copies aside). */
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
          todayDemoSessions: 0,
          lastCallAt: null,
          lastCallEnd: null,
          lastErrorCode: null,
          droppedEvents: 0,
          queued: 0,
          policyError: null,
          accountTrouble: 0,
          safety: null,
          auditViolations: 0,
          avatarVolume: null,
          lastAnswer: null,
          refused: this.refusedBy.get(kioskId) ?? 0,
          service: null,
        },
        counts: { sessionsByEnd: new Map(), errorsByCode: new Map(), creditsByAvatar: new Map(), mediaStalls: 0, accountTroubleByReason: new Map(), lastCallAtMs: null },
        seen: [],
        seenSet: new Set(),
        labels: new LabelBudget(),
        visitors: null,
      };
      this.kiosks.set(kioskId, k);
    }
    return k;
  }

  /** A retained status or a last will. `retained`: delivered as the broker's stored copy (at subscribe time). */
  onStatus(kioskId: string, payload: Buffer | string, retained: boolean): void {
    const parsed = readStatus(payload);
    if (!parsed.ok) return this.refuse('status', parsed.reason, kioskId);
    const s = parsed.value;
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
      row.todayDemoSessions = s.today?.demoSessions ?? 0;
      row.lastErrorCode = s.lastErrorCode ?? row.lastErrorCode;
      row.queued = s.queued ?? 0;
      row.droppedEvents = s.droppedEvents ?? 0;
      row.policyError = s.policyError ?? null;
      row.safety = s.safety ? { audience: s.safety.audience, moderation: s.safety.moderation, region: s.safety.region, refusal: s.safety.refusal } : null;
      row.auditViolations = s.safety?.auditViolations ?? 0;
      row.avatarVolume = s.avatarVolume ?? null;
      row.service = s.service ? { status: s.service.status, message: s.service.message, action: s.service.action } : null;
      const visitors = readVisitors(s.visitors);
      // A malformed funnel is dropped and counted; the kiosk then shows none rather than an older day's
      // figures as if they were its latest.
      if (visitors !== undefined && !visitors.ok) this.refuse('status', visitors.reason, kioskId);
      k.visitors = visitors?.ok ? visitors.value : null;
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
    const parsed = readEvent(payload, this.options.now());
    if (!parsed.ok) return this.refuse('events', parsed.reason, kioskId);
    const k = this.kiosk(kioskId);
    const { id: eventId, record } = parsed.value;
    if (k.seenSet.has(eventId) || this.options.memory?.isRepeat(kioskId, eventId)) return;
    k.seen.push(eventId);
    k.seenSet.add(eventId);
    if (k.seen.length > SEEN_EVENT_IDS) k.seenSet.delete(k.seen.shift()!);

    if (record.kind === 'session') {
      const c = k.counts;
      const endReason = k.labels.value('end_reason', record.endReason);
      inc(c.sessionsByEnd, endReason, 1);
      if (c.lastCallAtMs === null || record.endAtMs >= c.lastCallAtMs) {
        c.lastCallAtMs = record.endAtMs;
        k.row.lastCallAt = new Date(record.endAtMs).toISOString();
        k.row.lastCallEnd = record.endReason;
      }
      const failed = record.errorCode ?? (NORMAL_ENDS.has(record.endReason) ? null : record.endReason);
      if (failed) {
        inc(c.errorsByCode, k.labels.value('code', failed), 1);
        k.row.lastErrorCode = failed;
      }
      if (record.endReason === 'media_stalled') c.mediaStalls++;
      const trouble = ACCOUNT_WORDS.find((w) => record.endReason === w || record.errorCode === w);
      if (trouble) {
        inc(c.accountTroubleByReason, trouble, 1);
        k.row.accountTrouble++;
      }
      const avatar = k.labels.value('avatar', record.avatar ?? 'unknown');
      // A demo call (the kiosk's built-in emulator) is play money: never in the credits billed. A demo
      // attempt that never went live was no call: the Spend view's "demo calls" leave it out, as the
      // kiosk's own Status tab and `cli ledger` do.
      if (!record.demo) inc(c.creditsByAvatar, avatar, record.credits);
      if (record.demo && !record.wentLive) {
        this.dirty.add(kioskId);
        return;
      }
      this.spend.addCall(kioskId, record.endAtMs, avatar, record.credits, record.demo);
      this.options.memory?.call(kioskId, eventId, record.endAtMs, avatar, record.credits, record.endReason, record.demo);
      this.dirty.add(kioskId);
      return;
    }
    if (record.status === 'failed') {
      const trouble = ACCOUNT_WORDS.find((w) => record.reason?.includes(w));
      if (trouble) {
        inc(k.counts.accountTroubleByReason, trouble, 1);
        k.row.accountTrouble++;
        this.dirty.add(kioskId);
      }
    }
  }

  /**
   * A command answer from `<kiosk>/cmd/result`, when it answers a command this console sent to that kiosk
   * (else it is refused as unsolicited and null is returned); a screenshot's picture is kept and linked,
   * not inlined.
   */
  onResult(kioskId: string, payload: Buffer | string): AnswerView | null {
    const parsed = readAnswer(payload);
    if (!parsed.ok) {
      this.refuse('results', parsed.reason, kioskId);
      return null;
    }
    const r = parsed.value;
    const claim = this.sent.claim(r.id, r.cmd, kioskId);
    if (!claim.ok) {
      this.refuse('results', 'unsolicited', kioskId);
      return null;
    }
    let screenshotUrl: string | null = null;
    let summary: string;
    if (r.ok) {
      const { png, ...rest } = r.result ?? {};
      if (claim.command.cmd === 'screenshot') {
        const picture = readPng(png, MAX_SCREENSHOT_BYTES);
        if (picture.ok) {
          screenshotUrl = this.keepScreenshot(picture.value, kioskId);
          summary = `screenshot ${String(rest.width)}×${String(rest.height)}`;
        } else {
          this.refuse('results', picture.reason, kioskId);
          summary = `screenshot refused by the console: ${picture.reason === 'too_large' ? `larger than ${MAX_SCREENSHOT_BYTES} bytes` : 'not a PNG picture'}`;
        }
      } else {
        // Any other answer is a line of text: a picture it carries is not shown (nobody asked for one).
        summary = JSON.stringify(rest).slice(0, 200);
      }
    } else {
      summary = r.error ? `${r.error.code}: ${r.error.message}` : 'refused';
    }
    const answer: AnswerView = { id: r.id, cmd: claim.command.cmd, ok: r.ok, summary, screenshotUrl, at: this.iso() };
    this.kiosk(kioskId).row.lastAnswer = answer;
    this.dirty.add(kioskId);
    for (const listener of this.listeners) listener(answer, kioskId);
    return answer;
  }

  private keepScreenshot(png: Buffer, kioskId: string): string {
    // A random name: the page shows it as an image on the session cookie alone (sessions.ts), so the name
    // is learnt only from the keyed API.
    const name = randomBytes(16).toString('hex');
    this.shots.set(name, { png, kioskId });
    this.shotBytes += png.length;
    while (this.shots.size > KEPT_SCREENSHOTS || this.shotBytes > KEPT_SCREENSHOT_BYTES) {
      const [oldest, shot] = this.shots.entries().next().value!;
      this.shots.delete(oldest);
      this.shotBytes -= shot.png.length;
    }
    return `/api/screenshots/${name}.png`;
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

  /** Each kiosk's latest funnel day, with its group (visitors.ts adds them up). */
  funnels(): KioskFunnel[] {
    return [...this.kiosks.values()].map((k) => ({ kioskId: k.row.kioskId, group: k.row.group, visitors: k.visitors }));
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

/** Spend as CSV (RFC 4180, formula-safe: core/csv.ts): one row per kiosk, day and avatar. */
export function spendCsv(rows: SpendRow[]): string {
  const lines = ['day,kiosk,avatar,sessions,credits,demo', ...rows.map((r) => [r.day, r.kioskId, r.avatar, r.sessions, r.credits, r.demo ? 'yes' : 'no'].map(csvCell).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

function inc(map: Map<string, number>, key: string, by: number): void {
  map.set(key, (map.get(key) ?? 0) + by);
}
