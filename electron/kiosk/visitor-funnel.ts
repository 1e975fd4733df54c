/**
 * The visitor funnel, counted (docs/analytics.md): steps from what the kiosk already senses and does, added
 * to hour buckets in the kiosk's local time zone (visitor-funnel-store.ts). Counts only: nothing here keeps
 * who, or when within the hour.
 *
 *   noticed / approached / greeted   the page's presence sensing says so (`attract:visitor-step`); main
 *                                    holds them to what a real attract screen can produce, so a hostile
 *                                    page cannot inflate them: at most one `noticed` a second, one
 *                                    `approached` and one `greeted` per `noticed`, and none with the
 *                                    camera off
 *   tapped                           a session created for a tap, or a tap refused (`refused`)
 *   gaveUp / failed / live           how a created session went before it was live; `live` goes into the
 *                                    hour the avatar went live, as the ledger's `live_at` does
 *   endedWell / endedBadly           well: the visitor's own end, or the idle hang-up after a conversation
 */
import { CALL_LENGTH_BUCKETS, CALL_LENGTH_BOUNDS_S, DEFAULT_FUNNEL_THRESHOLD, emptyFunnelCounts, type CallLengthBucket, type FunnelCounts, type FunnelDay, type RefusalKind } from '../core/funnel.ts';
import type { Clock } from '../core/clock.ts';
import type { KioskEvent, VISITOR_STEPS, VisitorReport } from '../contract.ts';
import { addCounts, dayNumber, dayOfNumber, localDay, type FunnelBuckets, type VisitorFunnelStore } from './visitor-funnel-store.ts';

export type PresenceStep = (typeof VISITOR_STEPS)[number];
/** At most one `noticed` in this long (a flickering detector, or a page that makes them up). */
export const NOTICED_MIN_GAP_MS = 1_000;
/** The staff report's hour-by-hour part covers this many local days (today included). */
export const REPORT_HOUR_DAYS = 7;
/** A breakdown keeps at most this many keys (the shared schema's bound); the rest are counted as `other`. */
const MAX_BREAKDOWN_KEYS = 63;
const BREAKDOWN_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/** The kiosk's own time zone (the system's), where the hours and days of the funnel are counted. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** A report with nothing counted yet (a kiosk that has not met a visitor). */
export function emptyVisitorReport(day: string, timeZone: string, presence: boolean): VisitorReport {
  return { timeZone, threshold: DEFAULT_FUNNEL_THRESHOLD, today: { day, counts: emptyFunnelCounts() }, hours: [], days: [], counting: { presence } };
}

/** The bucket of a conversation `seconds` long. */
export function callLengthBucket(seconds: number): CallLengthBucket {
  return CALL_LENGTH_BUCKETS.find((b) => seconds < CALL_LENGTH_BOUNDS_S[b]) ?? 'over10m';
}

export interface TapFacts {
  callMode: string;
  avatarId: string;
  language: string;
}

export interface VisitorFunnel {
  /** The page's presence step; false when it was not counted (camera off, too soon, no `noticed` before). */
  step(step: PresenceStep): boolean;
  /** A tap that created a session (the orchestrator launched it). */
  tap(facts: TapFacts): void;
  /** A tap that created nothing. */
  refused(kind: RefusalKind): void;
  /** Why the running call is being hung up (the first cause counts: it decides ended well or badly). */
  noteCause(cause: string, liveId: string | null): void;
  /** Every kiosk event (the call's states). */
  onEvent(event: KioskEvent): void;
  /** The staff panel's report. */
  report(): VisitorReport;
  /** Today's local day so far (the fleet status carries it). */
  today(): FunnelDay;
  /** Everything counted since this process started (/metrics counters: they only go up). */
  sinceStart(): FunnelCounts;
}

export interface VisitorFunnelOptions {
  store: VisitorFunnelStore;
  clock: Clock;
  /** Whether presence detection is on now (noticed and approached are counted only then). */
  presence(): boolean;
  threshold?: number;
}

interface Call {
  facts: TapFacts;
  liveId: string | null;
  liveAtMs: number | null;
  cause: string | null;
}

/** Causes of a hang-up that end a conversation well: the visitor's own end, the idle hang-up after it. */
const WELL = new Set(['visitor', 'idle']);

export function createVisitorFunnel(options: VisitorFunnelOptions): VisitorFunnel {
  const { store, clock } = options;
  const threshold = options.threshold ?? DEFAULT_FUNNEL_THRESHOLD;
  const started = emptyFunnelCounts();
  let lastNoticedMs = -Infinity;
  let mayApproach = false;
  let mayGreet = false;
  let call: Call | null = null;

  const count = (atMs: number, fn: (c: FunnelCounts) => void) => {
    store.add(atMs, fn);
    fn(started);
  };
  const breakdownKey = (group: Record<string, unknown>, key: string) => {
    const k = BREAKDOWN_KEY.test(key) ? key : 'other';
    return Object.hasOwn(group, k) || Object.keys(group).length < MAX_BREAKDOWN_KEYS ? k : 'other';
  };
  const bump = (c: FunnelCounts, facts: TapFacts, field: 'tapped' | 'live') => {
    for (const [group, key] of [
      [c.byLanguage, facts.language],
      [c.byCallMode, facts.callMode],
      [c.byAvatar, facts.avatarId],
    ] as const) {
      const row = (group[breakdownKey(group, key)] ??= { tapped: 0, live: 0 });
      row[field] += 1;
    }
  };

  function onState(event: Extract<KioskEvent, { type: 'state' }>): void {
    const s = event.state;
    if (!call) return;
    if ('liveId' in s && s.liveId) call.liveId = s.liveId;
    if (s.phase === 'live' && call.liveAtMs === null) {
      const facts = call.facts;
      call.liveAtMs = s.sinceMs;
      count(s.sinceMs, (c) => {
        c.live += 1;
        bump(c, facts, 'live');
      });
      return;
    }
    if (s.phase !== 'ended' && s.phase !== 'failed') return;
    const done = call;
    call = null;
    const now = clock.now();
    const wentLive = done.liveAtMs !== null || s.summary?.wentLive === true;
    if (!wentLive) {
      // Before live, the visitor's own end (or walking away) is giving up; anything else is a failure.
      count(now, (c) => (done.cause !== null && WELL.has(done.cause) ? (c.gaveUp += 1) : (c.failed += 1)));
      return;
    }
    if (done.liveAtMs === null) {
      // Live in the service's summary, but its live state never reached us: count it now so that
      // live = endedWell + endedBadly holds.
      done.liveAtMs = now;
      count(now, (c) => {
        c.live += 1;
        bump(c, done.facts, 'live');
      });
    }
    const well = s.phase === 'ended' && done.cause !== null && WELL.has(done.cause);
    const bucket = callLengthBucket(Math.max(0, now - done.liveAtMs) / 1000);
    count(now, (c) => {
      if (well) c.endedWell += 1;
      else c.endedBadly += 1;
      c.callLength[bucket] += 1;
    });
  }

  return {
    step(step) {
      if (!options.presence()) return false;
      const now = clock.now();
      if (step === 'noticed') {
        if (now - lastNoticedMs < NOTICED_MIN_GAP_MS) return false;
        lastNoticedMs = now;
        mayApproach = true;
        mayGreet = true;
        count(now, (c) => (c.noticed += 1));
        return true;
      }
      if (step === 'approached') {
        if (!mayApproach) return false;
        mayApproach = false;
        count(now, (c) => (c.approached += 1));
        return true;
      }
      if (!mayGreet) return false;
      mayGreet = false;
      count(now, (c) => (c.greeted += 1));
      return true;
    },
    tap(facts) {
      call = { facts, liveId: null, liveAtMs: null, cause: null };
      count(clock.now(), (c) => {
        c.tapped += 1;
        bump(c, facts, 'tapped');
      });
    },
    refused(kind) {
      count(clock.now(), (c) => {
        c.tapped += 1;
        c.refused[kind] += 1;
      });
    },
    noteCause(cause, liveId) {
      if (!call) return;
      if (liveId !== null && call.liveId !== null && liveId !== call.liveId) return;
      call.cause ??= cause;
    },
    onEvent(event) {
      if (event.type === 'state') onState(event);
      else if (event.type === 'credentials' && call) call.liveId = event.liveId;
    },
    report() {
      const now = clock.now();
      store.compact(now);
      return buildVisitorReport(store, store.timeZone, now, options.presence(), threshold);
    },
    today() {
      const day = localDay(clock.now(), store.timeZone);
      return { day, counts: daySum(store, day) };
    },
    sinceStart: () => structuredClone(started),
  };
}

function daySum(buckets: FunnelBuckets, day: string): FunnelCounts {
  const sum = emptyFunnelCounts();
  for (const [key, counts] of buckets.hours) if (key.startsWith(day)) addCounts(sum, counts);
  const rolled = buckets.days.get(day);
  if (rolled) addCounts(sum, rolled);
  return sum;
}

/** The staff report from the buckets (the kiosk's own, or the file the CLI read): copies, never the store's. */
export function buildVisitorReport(buckets: FunnelBuckets, timeZone: string, nowMs: number, presence: boolean, threshold = DEFAULT_FUNNEL_THRESHOLD): VisitorReport {
  const today = localDay(nowMs, timeZone);
  const firstHourDay = dayOfNumber(dayNumber(today) - (REPORT_HOUR_DAYS - 1));
  const hours: VisitorReport['hours'] = [];
  // One pass over the buckets: each day's sum, and the last week's hours.
  const sums = new Map<string, FunnelCounts>();
  const sumOf = (day: string) => {
    let sum = sums.get(day);
    if (!sum) sums.set(day, (sum = emptyFunnelCounts()));
    return sum;
  };
  for (const [key, counts] of buckets.hours) {
    const day = key.slice(0, 10);
    if (day > today) continue;
    addCounts(sumOf(day), counts);
    if (day >= firstHourDay) hours.push({ hour: key, counts: structuredClone(counts) });
  }
  for (const [day, counts] of buckets.days) if (day <= today) addCounts(sumOf(day), counts);
  hours.sort((a, b) => (a.hour < b.hour ? -1 : 1));
  const days = [...sums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, counts]) => ({ day, counts }));
  return { timeZone, threshold, today: { day: today, counts: structuredClone(sums.get(today) ?? emptyFunnelCounts()) }, hours, days, counting: { presence } };
}
