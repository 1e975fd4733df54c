/**
 * The visitor funnel's shape (docs/analytics.md): what a kiosk counts about the people in front of it,
 * counts only, nothing finer than the hour. Shared by the kiosk that counts (kiosk/visitor-funnel*.ts),
 * its staff panel and /metrics, the fleet status that carries the day's funnel, and the console that adds
 * kiosks up. No identifier, no image, no time within the hour has a field here, so none can travel.
 *
 * The steps, in the order a visitor meets them:
 *   noticed      someone was seen in front of the screen (presence detection, where it is on)
 *   approached   someone stayed in front for a few seconds
 *   greeted      the attract screen greeted someone (the avatar's hello)
 *   tapped       someone asked for a conversation ("Tap to talk", a key)
 *   refused      a tap that created nothing: the age gate declined, the kiosk closed, out of order
 *   gaveUp       a created session the visitor left before it went live (cancelled while connecting)
 *   failed       a created session that failed before it went live
 *   live         a conversation began (equals the ledger's live sessions for the same hour)
 *   endedWell    a live conversation ended by the visitor, or by the idle hang-up after it
 *   endedBadly   a live conversation ended by an error, a stall or a forced hang-up
 * tapped = (sessions created) + refused; (sessions created) = gaveUp + failed + live (+ still connecting).
 *
 * No package import here: the staff panel bundles this file, and the schemas a receiver checks a funnel
 * with live in funnel-schema.ts so zod stays out of the renderer.
 */
export const REFUSAL_KINDS = ['ageGate', 'closed', 'outOfOrder'] as const;
export type RefusalKind = (typeof REFUSAL_KINDS)[number];

/** Call length of the conversations that went live, in four buckets (upper bounds exclusive). */
export const CALL_LENGTH_BUCKETS = ['under1m', 'from1to3m', 'from3to10m', 'over10m'] as const;
export type CallLengthBucket = (typeof CALL_LENGTH_BUCKETS)[number];
export const CALL_LENGTH_BOUNDS_S: Readonly<Record<CallLengthBucket, number>> = { under1m: 60, from1to3m: 180, from3to10m: 600, over10m: Infinity };

/** A breakdown's counts: taps and conversations (per language, call mode, avatar). */
export interface TapsAndLive {
  tapped: number;
  live: number;
}

export interface FunnelCounts {
  noticed: number;
  approached: number;
  greeted: number;
  tapped: number;
  refused: Record<RefusalKind, number>;
  gaveUp: number;
  failed: number;
  live: number;
  endedWell: number;
  endedBadly: number;
  callLength: Record<CallLengthBucket, number>;
  /** Keyed by the visitor's language code, the call mode (`video`/`audio`), the cast member's id. */
  byLanguage: Record<string, TapsAndLive>;
  byCallMode: Record<string, TapsAndLive>;
  byAvatar: Record<string, TapsAndLive>;
}

/** The kiosk's own count of one day (its local calendar day, `YYYY-MM-DD`), as the fleet status carries it. */
export interface FunnelDay {
  day: string;
  counts: FunnelCounts;
}

/** Counts below this are shown as "fewer than N" wherever the funnel leaves the kiosk's own store. */
export const DEFAULT_FUNNEL_THRESHOLD = 5;

/** A count from 1 to `threshold` − 1 is not shown as itself ("fewer than N"); 0 is (nobody to point at). */
export function hiddenCount(n: number, threshold: number): boolean {
  return n > 0 && n < threshold;
}

/** Whole percent of `part` in `whole`, or null when either count is hidden (or `whole` is under the
 *  threshold): a percentage would give a hidden count back. */
export function shareOf(part: number, whole: number, threshold: number): number | null {
  if (whole <= 0 || whole < threshold || hiddenCount(part, threshold)) return null;
  return Math.round((part / whole) * 100);
}

export function emptyFunnelCounts(): FunnelCounts {
  return {
    noticed: 0,
    approached: 0,
    greeted: 0,
    tapped: 0,
    refused: { ageGate: 0, closed: 0, outOfOrder: 0 },
    gaveUp: 0,
    failed: 0,
    live: 0,
    endedWell: 0,
    endedBadly: 0,
    callLength: { under1m: 0, from1to3m: 0, from3to10m: 0, over10m: 0 },
    byLanguage: {},
    byCallMode: {},
    byAvatar: {},
  };
}
