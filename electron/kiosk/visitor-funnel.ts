/**
 * The visitor funnel, counted (docs/analytics.md): steps from what the kiosk already senses and does,
 * added to hour buckets in the kiosk's local time zone. Counts only: nothing here keeps who, or when
 * within the hour.
 */
import type { VisitorReport } from '../contract.ts';
import { DEFAULT_FUNNEL_THRESHOLD, emptyFunnelCounts } from '../core/funnel.ts';

/** The kiosk's own time zone (the system's), where the hours and days of the funnel are counted. */
export function systemTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** A report with nothing counted yet (a kiosk that has not met a visitor). */
export function emptyVisitorReport(day: string, timeZone: string, presence: boolean): VisitorReport {
  return { timeZone, threshold: DEFAULT_FUNNEL_THRESHOLD, today: { day, counts: emptyFunnelCounts() }, hours: [], days: [], counting: { presence } };
}
