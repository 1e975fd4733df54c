/**
 * The page's view of the fleet: rows from the console's server-sent stream (`/api/stream`), the
 * operator's filters, sort and selection, the commands the kiosks take (from the first frame: the kiosks'
 * own table, so the page names none itself), and the commands sent with their answers. The rows array is
 * `$state.raw` and replaced per frame: 1,000 deeply proxied rows would make every frame slow.
 */
import { kioskMatches, type AnswerView, type CommandRecord, type CommandResponse, type CommandTarget, type CommandView, type ConsoleFrame, type KioskRow, type LinkView, type Me, type StatusFilter } from '../../../electron/fleet/console/view.ts';
import { api, readEvents } from './session.ts';

export type SortKey = 'kioskId' | 'status' | 'group' | 'phase' | 'version' | 'todaySessions' | 'todayCredits' | 'lastCallAt' | 'lastErrorCode' | 'droppedEvents' | 'avatarVolume';
export type { StatusFilter };

export interface SentCommand {
  id: string;
  cmd: string;
  targetLabel: string;
  expected: string[];
  sentAt: number;
}

const STATUS_ORDER = (r: KioskRow) => (r.online ? (r.phase === 'live' ? 0 : 1) : 2);

export class Fleet {
  rows = $state.raw<KioskRow[]>([]);
  connected = $state(false);
  streamUp = $state(false);
  broker = $state('');
  consoleStartedAt = $state<string | null>(null);
  /** The broker link: since when it is lost (rows are then stale), messages the broker dropped, a session problem. */
  link = $state.raw<LinkView>({ lostAt: null, droppedMessages: null, notice: null });
  search = $state('');
  status = $state<StatusFilter>('all');
  group = $state('');
  sortKey = $state<SortKey>('status');
  sortAsc = $state(true);
  selected = $state.raw<ReadonlySet<string>>(new Set());
  sent = $state.raw<SentCommand[]>([]);
  /** Every command the kiosks take, in their table's order (the snapshot frame's). */
  commands = $state.raw<CommandView[]>([]);
  /** Ticks every second so "since" stays current. */
  nowMs = $state(Date.now());
  private index = new Map<string, number>();
  /** Who is signed in (the stream's first frame); null until then. */
  me = $state.raw<Me | null>(null);
  /** The session ended or never began: the page asks for a token. */
  signedOut = $state(false);
  /** The latest commands as the audit log keeps them (who, what, to whom, how it went), newest first. */
  log = $state.raw<CommandRecord[]>([]);

  groups = $derived.by(() => [...new Set(this.rows.map((r) => r.group).filter((g): g is string => g !== null))].sort());

  counts = $derived.by(() => {
    let online = 0;
    let inCall = 0;
    for (const r of this.rows) {
      if (r.online) online++;
      if (r.online && r.phase === 'live') inCall++;
    }
    return { total: this.rows.length, online, offline: this.rows.length - online, inCall };
  });

  visible = $derived.by(() => {
    // The same filter as the console's /api/kiosks and `cli fleet list` (view.ts).
    const filter = { status: this.status, ...(this.group ? { group: this.group } : {}), search: this.search };
    const filtered = this.rows.filter((r) => kioskMatches(r, filter));
    const key = this.sortKey;
    const dir = this.sortAsc ? 1 : -1;
    const value = (r: KioskRow): string | number => (key === 'status' ? STATUS_ORDER(r) : (r[key] ?? ''));
    return filtered.sort((a, b) => {
      const va = value(a);
      const vb = value(b);
      const c = typeof va === 'number' && typeof vb === 'number' ? va - vb : String(va).localeCompare(String(vb));
      return c * dir || a.kioskId.localeCompare(b.kioskId);
    });
  });

  /** Reads the console's stream (again after 2 s when it drops) until the returned function is called. */
  connect(): () => void {
    const stop = new AbortController();
    const run = async () => {
      while (!stop.signal.aborted) {
        const status = await readEvents('/api/stream', 'fleet', (data) => this.apply(JSON.parse(data) as ConsoleFrame), stop.signal, () => (this.streamUp = true)).catch(() => 0);
        this.streamUp = false;
        if (status === 401) {
          this.signedOut = true;
          return;
        }
        await new Promise((r) => setTimeout(r, 2000));
      }
    };
    this.signedOut = false;
    void run();
    const tick = setInterval(() => (this.nowMs = Date.now()), 1000);
    return () => {
      clearInterval(tick);
      stop.abort();
    };
  }

  apply(frame: ConsoleFrame): void {
    this.connected = frame.connected;
    this.link = frame.link;
    if (frame.type === 'snapshot') {
      this.me = frame.me;
      this.log = frame.log;
      this.broker = frame.broker;
      this.consoleStartedAt = frame.consoleStartedAt;
      this.commands = frame.commands;
      this.index = new Map(frame.kiosks.map((r, i) => [r.kioskId, i]));
      this.rows = frame.kiosks;
      return;
    }
    if (frame.log.length) {
      const changed = new Map(frame.log.map((c) => [c.id, c]));
      this.log = [...frame.log.filter((c) => !this.log.some((o) => o.id === c.id)), ...this.log.map((c) => changed.get(c.id) ?? c)].slice(0, 50);
    }
    const next = this.rows.slice();
    for (const row of frame.kiosks) {
      const at = this.index.get(row.kioskId);
      if (at === undefined) {
        this.index.set(row.kioskId, next.length);
        next.push(row);
      } else next[at] = row;
    }
    this.rows = next;
  }

  sortBy(key: SortKey): void {
    if (this.sortKey === key) this.sortAsc = !this.sortAsc;
    else {
      this.sortKey = key;
      this.sortAsc = true;
    }
  }

  toggle(kioskId: string): void {
    const next = new Set(this.selected);
    if (next.has(kioskId)) next.delete(kioskId);
    else next.add(kioskId);
    this.selected = next;
  }

  selectVisible(on: boolean): void {
    this.selected = on ? new Set(this.visible.map((r) => r.kioskId)) : new Set();
  }

  /** The answers that came back for a command, by kiosk. */
  answersFor(id: string): Array<{ kioskId: string; answer: AnswerView }> {
    const out: Array<{ kioskId: string; answer: AnswerView }> = [];
    for (const r of this.rows) if (r.lastAnswer?.id === id) out.push({ kioskId: r.kioskId, answer: r.lastAnswer });
    return out;
  }

  async send(target: CommandTarget, command: Record<string, unknown>, targetLabel: string, options: { expiresInS?: number; firstWave?: number } = {}): Promise<CommandResponse> {
    let response: CommandResponse;
    try {
      const res = await api('/api/command', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ target, command, ...options }) });
      response = (await res.json()) as CommandResponse;
    } catch (error) {
      response = { ok: false, error: { code: 'network', message: `The console did not answer: ${error instanceof Error ? error.message : String(error)}` } };
    }
    if (response.ok) this.sent = [{ id: response.id, cmd: String(command.cmd), targetLabel, expected: response.expected, sentAt: Date.now() }, ...this.sent].slice(0, 20);
    return response;
  }
}

/** "14:03:12" today, else "23 Nov 14:03". */
export function clockTime(iso: string | null, nowMs: number): string {
  if (!iso) return '—';
  const d = new Date(iso);
  const sameDay = new Date(nowMs).toDateString() === d.toDateString();
  return sameDay ? d.toLocaleTimeString(undefined, { hour12: false }) : d.toLocaleString(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hour12: false });
}

/** "3 min", "2 h 5 min", "12 s". */
export function ago(iso: string | null, nowMs: number): string {
  if (!iso) return '';
  const s = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h ${m % 60} min` : `${Math.floor(h / 24)} days`;
}
