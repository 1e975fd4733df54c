/**
 * Opening hours: whether the kiosk is open at an instant, and when that next changes, in the venue's own
 * time zone (Intl does the zone arithmetic, daylight-saving changes included; no date library needed).
 * Pure and electron-free; `watchOpeningHours` drives it from an injected clock.
 *
 * Outside the hours the kiosk shows a "closed" screen with the next opening time, refuses calls and
 * spare sessions, and lets the display sleep (the keep-awake blocker only holds during a call). A call
 * that is live at closing time is not cut off: it ends as it would have.
 */
import type { Clock, TimerHandle } from '../core/clock.ts';
import { rangeMinutes, WEEKDAYS, type Schedule } from '../kiosk/fleet-config.ts';

export interface OpeningState {
  open: boolean;
  /** When `open` next flips (ms since the epoch); null when it never does within the look-ahead. */
  nextChangeAtMs: number | null;
  /** While closed: the next opening (ms), or null when none within the look-ahead. */
  nextOpenAtMs: number | null;
}

/** How far ahead the next change is looked for (a venue closed for a season has no next opening). */
export const LOOKAHEAD_DAYS = 35;

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock reading in `timeZone` at `ms`. */
export function localParts(ms: number, timeZone: string): LocalParts {
  const out: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return { year: out.year!, month: out.month!, day: out.day!, hour: out.hour! % 24, minute: out.minute!, second: out.second! };
}

/** The zone's offset from UTC at `ms`, in ms. */
function offsetAt(ms: number, timeZone: string): number {
  const p = localParts(ms, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - (ms - (((ms % 1000) + 1000) % 1000));
}

/** The instant a wall-clock time in `timeZone` happens. A time skipped by a spring-forward change is
 *  moved on by the gap (02:30 becomes 03:30); a repeated autumn time is its first occurrence. */
export function zonedTimeToMs(year: number, month: number, day: number, minutes: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day, 0, minutes);
  // The offsets a day before and a day after bracket any change on this date. (Reading the offset at the
  // wall time itself misses an autumn repeat: it lands on the later reading, which maps back too.)
  const candidates = [wall - offsetAt(wall - DAY_MS, timeZone), wall - offsetAt(wall + DAY_MS, timeZone)].sort((a, b) => a - b);
  // The earlier reading that maps back to this wall time, else (skipped) the later one: moved on by the gap.
  return candidates.find((c) => c + offsetAt(c, timeZone) === wall) ?? candidates[1]!;
}

const DAY_MS = 86_400_000;

/** The opening intervals [start, end) in ms of the local days around `nowMs`, merged where they touch. */
export function openingIntervals(schedule: Schedule, nowMs: number, days = LOOKAHEAD_DAYS): Array<[number, number]> {
  const tz = schedule.timeZone;
  const today = localParts(nowMs, tz);
  const closed = new Set(schedule.closedDates ?? []);
  const raw: Array<[number, number]> = [];
  for (let i = -1; i <= days; i++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + i));
    const y = date.getUTCFullYear();
    const m = date.getUTCMonth() + 1;
    const d = date.getUTCDate();
    const iso = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
    if (closed.has(iso)) continue;
    const weekday = WEEKDAYS[(date.getUTCDay() + 6) % 7]!;
    for (const range of schedule.weekly[weekday] ?? []) {
      const mins = rangeMinutes(range);
      if (!mins) continue;
      raw.push([zonedTimeToMs(y, m, d, mins[0], tz), zonedTimeToMs(y, m, d, mins[1], tz)]);
    }
  }
  raw.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [s, e] of raw) {
    const last = merged.at(-1);
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else if (e > s) merged.push([s, e]);
  }
  return merged;
}

/** Open or closed at `nowMs`, and when that changes. No schedule: always open. */
export function openingState(schedule: Schedule | undefined, nowMs: number): OpeningState {
  if (!schedule) return { open: true, nextChangeAtMs: null, nextOpenAtMs: null };
  const intervals = openingIntervals(schedule, nowMs);
  const current = intervals.find(([s, e]) => s <= nowMs && nowMs < e);
  if (current) return { open: true, nextChangeAtMs: current[1], nextOpenAtMs: null };
  const next = intervals.find(([s]) => s > nowMs);
  return { open: false, nextChangeAtMs: next?.[0] ?? null, nextOpenAtMs: next?.[0] ?? null };
}

/** "Mon 09:00" style label of an instant in the venue's zone (for logs and the status message). */
export function localLabel(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(ms));
}

export interface OpeningWatch {
  readonly state: OpeningState;
  /** The schedule changed (config, policy or a remote `apply`): evaluate again now. */
  setSchedule(schedule: Schedule | undefined): void;
  dispose(): void;
}

/** Longest single wait: a clock that jumps (NTP, suspend) is caught up with within this. */
export const MAX_WAIT_MS = 60_000;

/** Tell `onChange` whenever the kiosk opens or closes (and once at the start). */
export function watchOpeningHours(options: { schedule: Schedule | undefined; clock: Clock; onChange: (state: OpeningState) => void }): OpeningWatch {
  const { clock, onChange } = options;
  let schedule = options.schedule;
  let state = openingState(schedule, clock.now());
  let timer: TimerHandle | null = null;
  let disposed = false;

  const arm = () => {
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
    if (disposed || !schedule) return;
    const wait = state.nextChangeAtMs === null ? MAX_WAIT_MS : Math.min(MAX_WAIT_MS, Math.max(0, state.nextChangeAtMs - clock.now()));
    timer = clock.setTimeout(() => {
      timer = null;
      evaluate();
    }, wait);
  };
  const evaluate = (force = false) => {
    const next = openingState(schedule, clock.now());
    const changed = next.open !== state.open || next.nextChangeAtMs !== state.nextChangeAtMs;
    state = next;
    if (changed || force) onChange(state);
    arm();
  };
  onChange(state);
  arm();
  return {
    get state() {
      return state;
    },
    setSchedule(next) {
      schedule = next;
      evaluate(true);
    },
    dispose() {
      disposed = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
    },
  };
}
