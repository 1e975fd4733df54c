/**
 * What the fleet console's page receives and sends: plain types and pure functions only, no imports, so
 * the page (renderer/fleet-console) can share them without pulling Node code into its bundle. The list
 * filter is here so the page, the server's `/api/kiosks` and the CLI's `fleet list` filter alike.
 */

/** One kiosk as the console sees it. Times are ISO strings from the console's clock unless said otherwise. */
export interface KioskRow {
  kioskId: string;
  online: boolean;
  /** When the console saw it go online or offline; null: it was already so when the console first saw it. */
  sinceAt: string | null;
  /** Set when the change happened while the console did not hear the broker: the earliest it can have
   *  been (the console last heard the broker then); `sinceAt` is then the latest. */
  sinceNotBefore: string | null;
  /** Why it is offline (`connection lost`, `stopped`), as the kiosk or its last will said. */
  offlineReason: string | null;
  group: string | null;
  phase: string | null;
  open: boolean | null;
  version: string | null;
  mode: string | null;
  /** The kiosk's update state, when its status carries one (`update.state`). */
  update: string | null;
  /** Today's real calls and their credits (whole numbers), as the kiosk reports them. */
  todaySessions: number;
  todayCredits: number;
  /** Today's demo calls (the kiosk's built-in emulator, nobody paid), apart from the real ones. */
  todayDemoSessions: number;
  /** The end of the last call the console received (the kiosk's own time), its end reason. */
  lastCallAt: string | null;
  lastCallEnd: string | null;
  lastErrorCode: string | null;
  /** Events the kiosk dropped from its full queue (the status' `droppedEvents`). */
  droppedEvents: number;
  /** Events waiting on the kiosk's disk. */
  queued: number;
  policyError: string | null;
  /** Account trouble seen from this kiosk (a create refused for balance, a credit_insufficient hang-up). */
  accountTrouble: number;
  /** Who the kiosk is for, as its status says (null: an older kiosk that does not say). */
  safety: { audience: 'public' | 'adult'; moderation: 'strict' | 'disabled'; region: string | null; refusal: string | null } | null;
  /** Calls the service's content review ended (audit_violation) since the kiosk started, as its status says. */
  auditViolations: number;
  /** The avatar's volume on this kiosk (0–100 %), when its status says. */
  avatarVolume: number | null;
  /** The last command answer from this kiosk (only answers to commands this console sent it). */
  lastAnswer: AnswerView | null;
  /** Payloads from this kiosk the console refused: figures out of bounds, answers to nothing it was asked. */
  refused: number;
  /** Whether the kiosk reaches its service, as its status says (`connected`, `unreachable`, `demo`, …, with what
   *  is the case and what to do); null: an older kiosk that does not say. */
  service: { status: string; message: string; action: string | null } | null;
}

export interface AnswerView {
  id: string | null;
  cmd: string | null;
  ok: boolean;
  /** A short line: the result or the refusal's message. */
  summary: string;
  /** A screenshot's address on the console (same origin), when the answer carried one. */
  screenshotUrl: string | null;
  at: string;
}

/**
 * The one argument a command takes, as the console's page asks for it and the CLI reads it (the kiosk's
 * table, electron/fleet/command-table.ts, says which; the page gets the list in its first frame).
 */
export type CommandArgView =
  /** A whole number in [min, max] (an `<input type=number>`; the CLI's word `40`). */
  | { field: string; kind: 'integer'; label: string; min: number; max: number; example: number }
  /** A JSON object (a text area; the CLI's JSON word). */
  | { field: string; kind: 'json'; label: string; example: string }
  /** A line of text; an empty one sends null (the CLI's word `null`). */
  | { field: string; kind: 'text'; label: string; example: string };

/** One fleet command as the console's page shows it: a button, or a field and a button. */
export interface CommandView {
  cmd: string;
  /** The button's words. */
  label: string;
  /** One line: what it does (the button's hint, the CLI's help, the docs' table). */
  summary: string;
  /** Refused during a visitor's call unless sent with force. */
  interrupts: boolean;
  arg: CommandArgView | null;
}

/** Where a command goes. */
export type CommandTarget = { kiosks: string[] } | { group: string } | { fleet: true };

export interface CommandRequest {
  target: CommandTarget;
  /** The command without id/expiresAt: `{ "cmd": "apply", "settings": {…} }`. */
  command: Record<string, unknown>;
  /** How long it stays valid for a kiosk that is offline (seconds; default 120, at most 24 h). */
  expiresInS?: number;
  /** Send it to this many kiosks first (online ones first); the rest only if every one of them ran it. */
  firstWave?: number;
}

export type CommandResponse =
  | { ok: true; id: string; expected: string[]; expiresAt: string; waves?: { first: number; rest: number } }
  | { ok: false; error: { code: string; message: string } };

/** Who is signed in (or whose token a request carries). */
export interface Me {
  name: string;
  /** `operator` sends commands; `viewer` only looks. */
  role: 'operator' | 'viewer';
}

/** One kiosk's answer to a command, as the command's record keeps it. */
export interface CommandAnswer {
  kioskId: string;
  ok: boolean;
  /** The kiosk never ran it: its expiry passed first (no answer by then, or the kiosk said "expired"). */
  expired: boolean;
  summary: string;
  screenshotUrl: string | null;
  at: string;
}

/** A command as the audit log keeps it: who sent what to whom, when, and how it went. */
export interface CommandRecord {
  id: string;
  at: string;
  by: string;
  cmd: string;
  /** Its arguments, short (`{"percent":40}`); `force` included. */
  args: string;
  /** `kiosks lobby-1, lobby-2`, `group lobby`, `the fleet`. */
  target: string;
  /** When the last wave sent expires. */
  expiresAt: string;
  /** Kiosks it was sent to so far (every wave). */
  expected: number;
  ok: number;
  refused: number;
  /** "Expired, never ran". */
  expired: number;
  /** `waiting` for answers; `done`; `stopped` (a wave failed, or the console restarted before the next). */
  state: 'waiting' | 'done' | 'stopped';
  /** Staged: each wave's size and time; null when sent at once. */
  waves: Array<{ kiosks: number; sentAt: string; expiresAt: string }> | null;
  /** Kiosks of a staged command not sent it (yet, or ever). */
  notSent: number;
  /** Why it stopped, or what is pending. */
  note: string | null;
  /** The refusals and expiries (at most 50), for the page. */
  problems: CommandAnswer[];
}

/** A command the console refused to send, in the audit log. */
export interface RefusedCommand {
  at: string;
  by: string;
  cmd: string;
  target: string;
  code: string;
  message: string;
}

/** `/api/commands/<id>/stream` frames (event name `command`). */
export type CommandFrame =
  | { type: 'record'; command: CommandRecord; answers: CommandAnswer[] }
  | { type: 'answer'; answer: CommandAnswer }
  /** Every kiosk answered or expired and no wave is pending; the stream ends. */
  | { type: 'done'; command: CommandRecord };

/** The list's filters (the page's, `/api/kiosks`' query, `cli fleet list`'s flags). */
export type StatusFilter = 'all' | 'online' | 'offline' | 'in-call' | 'closed' | 'problems';
export const STATUS_FILTERS: readonly StatusFilter[] = ['all', 'online', 'offline', 'in-call', 'closed', 'problems'];

export interface KioskFilter {
  status?: StatusFilter;
  group?: string;
  /** Words found in the kiosk id, group, version or last error. */
  search?: string;
}

/** Whether a row passes the filter. */
export function kioskMatches(r: KioskRow, filter: KioskFilter): boolean {
  const q = (filter.search ?? '').trim().toLowerCase();
  if (q && !`${r.kioskId} ${r.group ?? ''} ${r.version ?? ''} ${r.lastErrorCode ?? ''}`.toLowerCase().includes(q)) return false;
  if (filter.group && r.group !== filter.group) return false;
  switch (filter.status ?? 'all') {
    case 'online':
      return r.online;
    case 'offline':
      return !r.online;
    case 'in-call':
      return r.online && r.phase === 'live';
    case 'closed':
      return r.open === false;
    case 'problems':
      return !r.online || r.lastErrorCode !== null || r.droppedEvents > 0 || r.policyError !== null || r.accountTrouble > 0 || r.auditViolations > 0 || r.safety?.refusal != null;
    default:
      return true;
  }
}

/** A page of `/api/kiosks`. */
export interface KioskPage {
  consoleStartedAt: string;
  connected: boolean;
  /** Rows that pass the filter (all pages). */
  total: number;
  offset: number;
  kiosks: KioskRow[];
}

/** The avatar of a spend row made from a kiosk's day counter: calls the kiosk counted whose events never came (spend.ts). */
export const NOT_RECEIVED = '(not received)';
/** The avatar of a spend row made from the counter of a kiosk-day that began before the console kept count (spend.ts). */
export const BEFORE_RECORD = '(before the console kept count)';

export interface SpendRow {
  kioskId: string;
  /** The day of the session's end, YYYY-MM-DD (UTC); for a `(not received)` row, the kiosk's own day. */
  day: string;
  /** The cast member, or `(not received)`: calls the kiosk's day counter has that never arrived as events. */
  avatar: string;
  sessions: number;
  /** Whole credits (the service bills whole credits). */
  credits: number;
  /** Calls on a kiosk's built-in emulator (demo mode): play money, never in the real totals. */
  demo: boolean;
}

/** The console's broker link as the page shows it (link-health.ts). */
export interface LinkView {
  /** Since when the broker has been unreachable (ISO): every row is then its last known state. */
  lostAt: string | null;
  /** Messages the broker dropped at its limits since it started ($SYS); null until it said. */
  droppedMessages: number | null;
  /** The latest problem with the console's own session (taken over, lost), in words. */
  notice: { at: string; message: string } | null;
}

/** Server-sent frames (`/api/stream`, event name `fleet`). */
export type ConsoleFrame =
  /** The first frame; `commands`: every fleet command the kiosks take, in the table's order; `log`: the
   *  latest commands sent (newest first), as the audit log has them; `link`: the broker link's state. */
  | { type: 'snapshot'; consoleStartedAt: string; broker: string; connected: boolean; link: LinkView; me: Me; kiosks: KioskRow[]; commands: CommandView[]; log: CommandRecord[] }
  /** `log`: the command records that changed. */
  | { type: 'rows'; connected: boolean; link: LinkView; kiosks: KioskRow[]; log: CommandRecord[] };

/** The steps of the visitor funnel the console shows (core/funnel.ts; `refused` adds up its kinds). */
export type VisitorStep = 'noticed' | 'approached' | 'greeted' | 'tapped' | 'refused' | 'gaveUp' | 'failed' | 'live' | 'endedWell' | 'endedBadly';

/**
 * One figure of a funnel as it may leave the console. A kiosk's count under the threshold has no value,
 * only its words ("fewer than 5"). A total adds up only the kiosks' counts it may show: `leftOut` kiosks had
 * fewer than the threshold and are not in `value` (docs/analytics.md, its fleet section, says why), and `text` says so.
 */
export interface VisitorFigure {
  value: number | null;
  leftOut: number;
  /** What the page, the CSV and the CLI print: `42`, `fewer than 5`, `at least 42 (2 kiosks with fewer than 5 not added)`. */
  text: string;
}

/** The conversion from one step to the next, in whole percent (null: a figure is not shown, or nobody reached `from`). */
export interface VisitorConversion {
  from: VisitorStep;
  to: VisitorStep;
  percent: number | null;
}

/** One funnel line: a kiosk, a group or the fleet. */
export interface VisitorLine {
  figures: Record<VisitorStep, VisitorFigure>;
  conversions: VisitorConversion[];
  /** The largest drop as a sentence ("38 % of taps gave up while connecting."), or null when none can be told. */
  largestDrop: string | null;
}

/** The visitors view (`/api/visitors`): the day's funnel per kiosk, per group and for the fleet. */
export interface VisitorsView {
  /** The day added up (the latest any kiosk reported, its own calendar day); null: no kiosk reported one. */
  day: string | null;
  threshold: number;
  kiosks: Array<VisitorLine & { kioskId: string; group: string | null }>;
  /** Groups of the kiosks that reported the day; `group` null: kiosks with none. */
  groups: Array<VisitorLine & { group: string | null; kiosks: number }>;
  fleet: VisitorLine & { kiosks: number };
  /** Kiosks whose latest funnel is of another day: not added up (a kiosk offline since, another time zone). */
  otherDays: Array<{ kioskId: string; day: string }>;
  /** Kiosks that sent no funnel (an older kiosk, or its malformed one was refused). */
  silent: number;
}
