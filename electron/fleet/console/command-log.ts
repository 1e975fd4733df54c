/**
 * The fleet console's command log, which is also its audit log: who sent which command to whom and
 * when, each kiosk's answer, the kiosks whose copy expired before they ran it ("expired, never ran"),
 * the waves of a staged command and why one stopped, the commands the console refused to send (and to
 * whom), and who signed in. On disk as `audit.jsonl` in the console's data folder (journal.ts: appended,
 * flushed within 250 ms, a command itself before its answer is given), renamed aside at
 * ROTATE_AFTER_BYTES with KEEP_ROTATED old files kept; the latest KEPT_COMMANDS commands are read back
 * at start, so the page and `cli fleet audit` show them after a restart. Electron-free, clock-injected.
 *
 * An answer counts for a command only from a kiosk it was sent to, once (the first); a kiosk's refusal
 * with code `expired` counts as expired. A wave's kiosks that have not answered EXPIRY_GRACE_MS after its
 * expiry are marked expired: the broker drops a command at its expiry (MQTT 5 message expiry) and the
 * kiosk refuses one past its `expiresAt`, so it never ran. An answer that still comes later replaces the
 * mark (the kiosk's clock may run behind).
 *
 * Bounded: KEPT_COMMANDS commands in memory; of each, every kiosk that answered (its id), the first
 * KEPT_ANSWERS answers in full and up to KEPT_PROBLEMS refusals and expiries.
 */
import { z } from 'zod';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import { silentLogger, type Logger } from '../../core/log.ts';
import { openJournal, readJournalFile, type Journal } from './journal.ts';
import type { AnswerView, CommandAnswer, CommandFrame, CommandRecord, RefusedCommand } from './view.ts';

export const AUDIT_NAME = 'audit';
export const ROTATE_AFTER_BYTES = 16 * 1024 * 1024;
export const KEEP_ROTATED = 8;
export const KEPT_COMMANDS = 100;
export const KEPT_ANSWERS = 1_000;
export const KEPT_PROBLEMS = 50;
/** An answer sent just before the expiry has this long to arrive before the kiosk is marked expired. */
export const EXPIRY_GRACE_MS = 5_000;

interface Wave {
  kiosks: string[];
  sentAtMs: number;
  expiresAtMs: number;
  timer: TimerHandle | null;
}

interface Entry {
  id: string;
  atMs: number;
  by: string;
  cmd: string;
  args: string;
  target: string;
  waves: Wave[];
  staged: boolean;
  /** Kiosks of a staged command not sent it yet. */
  notSent: number;
  stopped: string | null;
  expected: Set<string>;
  answered: Set<string>;
  expiredSet: Set<string>;
  ok: number;
  refused: number;
  answers: CommandAnswer[];
  problems: CommandAnswer[];
  followers: Set<(frame: CommandFrame) => void>;
  waiters: Array<{ kiosks: string[]; resolve: (failed: CommandAnswer[]) => void }>;
}

export interface SentCommand {
  id: string;
  by: string;
  cmd: string;
  args: string;
  target: string;
  kiosks: string[];
  sentAtMs: number;
  expiresAtMs: number;
  /** A staged command: how many kiosks wait for the next wave. */
  rest?: number;
}

export interface CommandLog {
  sent(command: SentCommand): void;
  /** The next wave of a staged command went out. */
  wave(id: string, kiosks: string[], sentAtMs: number, expiresAtMs: number): void;
  /** A staged command stops: the kiosks not sent it yet never will be. */
  stopped(id: string, reason: string): void;
  refused(refusal: RefusedCommand): void;
  signedIn(by: string, role: string): void;
  /** A kiosk's answer (state.ts `onAnswer`). */
  answer(kioskId: string, answer: AnswerView): void;
  /** A command's record and its answers kept, or null when it is not (or no longer) kept. */
  get(id: string): { command: CommandRecord; answers: CommandAnswer[] } | null;
  /** The latest commands, newest first. */
  recent(limit: number): CommandRecord[];
  /** The records that changed since the last call. */
  takeChanged(): CommandRecord[];
  /** Frames for one command as they happen (an answer, a change, done); returns the way to stop. */
  follow(id: string, listener: (frame: CommandFrame) => void): () => void;
  /** Resolves once each of `kiosks` answered or expired, with the refusals and expiries among them. */
  settled(id: string, kiosks: string[]): Promise<CommandAnswer[]>;
  close(): void;
}

const text = (max: number) => z.string().max(max);
const ms = z.number().int().min(0).max(8.64e15);
const ids = z.array(z.string().max(64)).max(100_000);
const recordSchema = z.discriminatedUnion('t', [
  z.strictObject({ t: z.literal('sent'), id: text(64), at: ms, by: text(64), cmd: text(32), args: text(400), target: text(200), kiosks: ids, exp: ms, rest: z.number().int().min(0).optional() }),
  z.strictObject({ t: z.literal('wave'), id: text(64), at: ms, kiosks: ids, exp: ms }),
  z.strictObject({ t: z.literal('answer'), id: text(64), k: text(64), at: ms, ok: z.boolean(), expired: z.boolean(), summary: text(400) }),
  z.strictObject({ t: z.literal('expired'), id: text(64), at: ms, kiosks: ids }),
  z.strictObject({ t: z.literal('stopped'), id: text(64), at: ms, reason: text(2000) }),
  z.strictObject({ t: z.literal('refused'), at: ms, by: text(64), cmd: text(32), target: text(200), code: text(64), message: text(2000) }),
  z.strictObject({ t: z.literal('signin'), at: ms, by: text(64), role: text(16) }),
]);
type AuditRecord = z.infer<typeof recordSchema>;

export function openCommandLog(options: { dir?: string; clock: Clock; logger?: Logger }): CommandLog {
  const { clock } = options;
  const logger = options.logger ?? silentLogger;
  const journal: Journal | null = options.dir ? openJournal({ dir: options.dir, name: AUDIT_NAME, clock, logger }) : null;
  const entries = new Map<string, Entry>();
  const changed = new Set<string>();
  let replaying = true;
  const iso = (t: number) => new Date(t).toISOString();

  const write = (record: AuditRecord, now = false) => {
    if (!journal || replaying) return;
    journal.append(record as unknown as Record<string, unknown>);
    if (now) journal.flush();
    if (journal.bytes > ROTATE_AFTER_BYTES) journal.rotate(KEEP_ROTATED);
  };

  const view = (e: Entry): CommandRecord => {
    const last = e.waves.at(-1);
    const waiting = e.stopped === null && (e.notSent > 0 || [...e.expected].some((k) => !e.answered.has(k) && !e.expiredSet.has(k)));
    return {
      id: e.id,
      at: iso(e.atMs),
      by: e.by,
      cmd: e.cmd,
      args: e.args,
      target: e.target,
      expiresAt: iso(last?.expiresAtMs ?? e.atMs),
      expected: e.expected.size,
      ok: e.ok,
      refused: e.refused,
      expired: e.expiredSet.size,
      state: e.stopped !== null ? 'stopped' : waiting ? 'waiting' : 'done',
      waves: e.staged ? e.waves.map((w) => ({ kiosks: w.kiosks.length, sentAt: iso(w.sentAtMs), expiresAt: iso(w.expiresAtMs) })) : null,
      notSent: e.notSent,
      note: e.stopped ?? (e.notSent > 0 ? `${e.notSent} more kiosk${e.notSent === 1 ? '' : 's'} once this wave has run.` : null),
      problems: e.problems.slice(0, KEPT_PROBLEMS),
    };
  };

  /** Something changed: followers get `answers` (each kiosk's new answer or expiry), then `done` once
   *  nothing is awaited, else the record when nothing else says what changed (a wave, a stop). */
  const touch = (e: Entry, answers: CommandAnswer[] = []) => {
    changed.add(e.id);
    if (replaying) return;
    if (e.followers.size) {
      const record = view(e);
      for (const f of e.followers) {
        for (const answer of answers) f({ type: 'answer', answer });
        if (record.state !== 'waiting') f({ type: 'done', command: record });
        else if (!answers.length) f({ type: 'record', command: record, answers: [] });
      }
    }
    checkWaiters(e);
  };

  const checkWaiters = (e: Entry) => {
    for (const w of e.waiters.splice(0)) {
      if (e.stopped !== null || w.kiosks.every((k) => e.answered.has(k) || e.expiredSet.has(k))) w.resolve(failuresAmong(e, w.kiosks));
      else e.waiters.push(w);
    }
  };

  const failuresAmong = (e: Entry, kiosks: string[]) => {
    const set = new Set(kiosks);
    return e.problems.filter((p) => set.has(p.kioskId));
  };

  const keep = (e: Entry) => {
    entries.set(e.id, e);
    while (entries.size > KEPT_COMMANDS) {
      const oldest = entries.values().next().value!;
      for (const w of oldest.waves) if (w.timer !== null) clock.clearTimeout(w.timer);
      entries.delete(oldest.id);
      changed.delete(oldest.id);
    }
  };

  const schedule = (e: Entry, w: Wave) => {
    if (w.timer !== null) clock.clearTimeout(w.timer);
    w.timer = clock.setTimeout(() => expire(e, w), Math.max(0, w.expiresAtMs + EXPIRY_GRACE_MS - clock.now()));
  };

  const expire = (e: Entry, w: Wave) => {
    w.timer = null;
    const late = w.kiosks.filter((k) => !e.answered.has(k) && !e.expiredSet.has(k));
    if (!late.length) return;
    const marked = markExpired(e, late, clock.now(), `expired, never ran (no answer by ${iso(w.expiresAtMs)})`);
    write({ t: 'expired', id: e.id, at: clock.now(), kiosks: late });
    touch(e, marked);
  };

  const markExpired = (e: Entry, kiosks: string[], atMs: number, summary: string): CommandAnswer[] =>
    kiosks.map((k) => {
      e.expiredSet.add(k);
      const a: CommandAnswer = { kioskId: k, ok: false, expired: true, summary, screenshotUrl: null, at: iso(atMs) };
      if (e.problems.length < KEPT_PROBLEMS * 20) e.problems.push(a);
      return a;
    });

  const addAnswer = (e: Entry, a: CommandAnswer) => {
    if (e.expiredSet.delete(a.kioskId)) e.problems = e.problems.filter((p) => p.kioskId !== a.kioskId);
    e.answered.add(a.kioskId);
    if (a.expired) e.expiredSet.add(a.kioskId);
    else if (a.ok) e.ok++;
    else e.refused++;
    if (e.answers.length < KEPT_ANSWERS) e.answers.push(a);
    if (!a.ok && e.problems.length < KEPT_PROBLEMS * 20) e.problems.push(a);
  };

  const newEntry = (c: SentCommand): Entry => ({
    id: c.id,
    atMs: c.sentAtMs,
    by: c.by,
    cmd: c.cmd,
    args: c.args,
    target: c.target,
    waves: [{ kiosks: c.kiosks, sentAtMs: c.sentAtMs, expiresAtMs: c.expiresAtMs, timer: null }],
    staged: c.rest !== undefined,
    notSent: c.rest ?? 0,
    stopped: null,
    expected: new Set(c.kiosks),
    answered: new Set(),
    expiredSet: new Set(),
    ok: 0,
    refused: 0,
    answers: [],
    problems: [],
    followers: new Set(),
    waiters: [],
  });

  const log: CommandLog = {
    sent(c) {
      const e = newEntry(c);
      keep(e);
      write({ t: 'sent', id: c.id, at: c.sentAtMs, by: c.by, cmd: c.cmd, args: c.args, target: c.target, kiosks: c.kiosks, exp: c.expiresAtMs, ...(c.rest !== undefined ? { rest: c.rest } : {}) }, true);
      if (!replaying) schedule(e, e.waves[0]!);
      touch(e);
    },
    wave(id, kiosks, sentAtMs, expiresAtMs) {
      const e = entries.get(id);
      if (!e) return;
      const w: Wave = { kiosks, sentAtMs, expiresAtMs, timer: null };
      e.waves.push(w);
      for (const k of kiosks) e.expected.add(k);
      e.notSent = Math.max(0, e.notSent - kiosks.length);
      write({ t: 'wave', id, at: sentAtMs, kiosks, exp: expiresAtMs }, true);
      if (!replaying) schedule(e, w);
      touch(e);
    },
    stopped(id, reason) {
      const e = entries.get(id);
      if (!e || e.stopped !== null) return;
      e.stopped = reason;
      write({ t: 'stopped', id, at: clock.now(), reason }, true);
      touch(e);
    },
    refused(r) {
      write({ t: 'refused', at: Date.parse(r.at), by: r.by, cmd: r.cmd.slice(0, 32), target: r.target.slice(0, 200), code: r.code.slice(0, 64), message: r.message.slice(0, 2000) }, true);
    },
    signedIn(by, role) {
      write({ t: 'signin', at: clock.now(), by, role });
    },
    answer(kioskId, answer) {
      const e = answer.id === null ? undefined : entries.get(answer.id);
      // Only a kiosk the command went to counts, and only its first answer.
      if (!e || !e.expected.has(kioskId) || e.answered.has(kioskId)) return;
      // A refusal's summary is `<code>: <message>` (state.ts); the kiosk's code for a stale command is `expired`.
      const expired = !answer.ok && answer.summary.startsWith('expired:');
      const a: CommandAnswer = { kioskId, ok: answer.ok, expired, summary: answer.summary, screenshotUrl: answer.screenshotUrl, at: answer.at };
      addAnswer(e, a);
      write({ t: 'answer', id: e.id, k: kioskId, at: Date.parse(answer.at) || clock.now(), ok: a.ok, expired, summary: a.summary.slice(0, 400) });
      touch(e, [a]);
    },
    get(id) {
      const e = entries.get(id);
      return e ? { command: view(e), answers: [...e.answers] } : null;
    },
    recent(limit) {
      return [...entries.values()].slice(-limit).reverse().map(view);
    },
    takeChanged() {
      const out = [...changed].flatMap((id) => (entries.has(id) ? [view(entries.get(id)!)] : []));
      changed.clear();
      return out;
    },
    follow(id, listener) {
      const e = entries.get(id);
      if (!e) return () => undefined;
      e.followers.add(listener);
      return () => e.followers.delete(listener);
    },
    settled(id, kiosks) {
      const e = entries.get(id);
      if (!e) return Promise.resolve([]);
      return new Promise((resolve) => {
        e.waiters.push({ kiosks, resolve });
        checkWaiters(e);
      });
    },
    close() {
      for (const e of entries.values()) for (const w of e.waves) if (w.timer !== null) clock.clearTimeout(w.timer);
      journal?.close();
    },
  };

  // Read back the latest commands (the rotated file before the current one when the current is short).
  if (journal) {
    const current = journal.records;
    const older = journal.rotated()[0];
    const records = [...(older && current.length < KEPT_COMMANDS * 4 ? readJournalFile(older) : []), ...current];
    let skipped = 0;
    for (const raw of records) {
      const r = recordSchema.safeParse(raw);
      if (!r.success) {
        skipped++;
        continue;
      }
      replay(r.data);
    }
    if (skipped) logger.warn('Fleet console: audit records that did not validate were skipped', { skipped });
  }
  replaying = false;
  // What the console missed while it was down: expiries passed, waves it can no longer send.
  for (const e of entries.values()) {
    if (e.notSent > 0 && e.stopped === null) log.stopped(e.id, `The console stopped before the rest (${e.notSent} kiosk${e.notSent === 1 ? '' : 's'}) was sent; they were not sent it.`);
    for (const w of e.waves) schedule(e, w);
  }
  changed.clear();
  return log;

  function replay(r: AuditRecord): void {
    switch (r.t) {
      case 'sent':
        log.sent({ id: r.id, by: r.by, cmd: r.cmd, args: r.args, target: r.target, kiosks: r.kiosks, sentAtMs: r.at, expiresAtMs: r.exp, ...(r.rest !== undefined ? { rest: r.rest } : {}) });
        return;
      case 'wave':
        log.wave(r.id, r.kiosks, r.at, r.exp);
        return;
      case 'answer': {
        const e = entries.get(r.id);
        if (e && e.expected.has(r.k) && !e.answered.has(r.k)) addAnswer(e, { kioskId: r.k, ok: r.ok, expired: r.expired, summary: r.summary, screenshotUrl: null, at: iso(r.at) });
        return;
      }
      case 'expired': {
        const e = entries.get(r.id);
        if (e) markExpired(e, r.kiosks.filter((k) => !e.answered.has(k) && !e.expiredSet.has(k)), r.at, 'expired, never ran (no answer by its expiry)');
        return;
      }
      case 'stopped':
        log.stopped(r.id, r.reason);
        return;
      default:
        return;
    }
  }
}
