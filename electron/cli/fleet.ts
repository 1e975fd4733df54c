/**
 * `cli fleet list | send KIOSK|--group G|--all COMMAND [ARG] | watch | audit | visitors`: the fleet console
 * for scripts. It talks to a running console (`npm run fleet`) over its HTTP API with an account's token,
 * so a script needs no broker login of its own, sees exactly what the page sees, and is named in the audit
 * log; commands get the same checks and refusals (a viewer's token sends nothing). The commands, their
 * one argument and their help lines come from the kiosk's table (fleet/command-table.ts).
 *   --console URL   default http://127.0.0.1:8790 (or FLEET_CONSOLE_URL)
 *   --token-file F  the account's token (or FLEET_CONSOLE_TOKEN)
 * `list` asks the console for one page of the filtered list (it never downloads the whole fleet to filter
 * it here); `send` follows its own command's answers on the console's stream of that command, until every
 * kiosk answered or expired, or --wait seconds.
 * Exit: 0 ok; 1 a kiosk refused or expired, or did not answer within --wait seconds, or a staged command
 * stopped; 2 bad usage, a command the console refused, or unreachable.
 */
import { AvatarError } from '../core/errors.ts';
import { readRegularFile } from '../core/bounded-read.ts';
import { COMMAND_NAMES, commandRow, type CommandName } from '../fleet/command-table.ts';
import { STATUS_FILTERS, type CommandAnswer, type CommandFrame, type CommandRecord, type CommandRequest, type CommandResponse, type CommandTarget, type ConsoleFrame, type KioskPage, type KioskRow, type StatusFilter, type VisitorsView } from '../fleet/console/view.ts';
import { STEP_WORDS, VISITOR_STEPS } from '../fleet/console/visitors.ts';
import type { CliIo } from './probe.ts';
import { cell, jsonLine } from './terminal-safe.ts';

export interface FleetCliOptions {
  consoleUrl: string | undefined;
  tokenFile: string | undefined;
  group: string | undefined;
  all: boolean;
  waitS: number;
  json: boolean;
  /** send: how long the command stays valid for a kiosk that is offline (seconds). */
  expiresS?: number | undefined;
  /** send: a staged command's first wave (kiosks). */
  firstWave?: number | undefined;
  /** list: online, offline, in-call, closed, problems. */
  status?: string | undefined;
  /** list: words in the id, group, version or last error. */
  search?: string | undefined;
  /** list, audit: rows per page (list: 0 for all). */
  limit?: number | undefined;
  offset?: number | undefined;
  /** audit: one command's answers. */
  id?: string | undefined;
}

export const DEFAULT_CONSOLE_URL = 'http://127.0.0.1:8790';
/** `fleet list` prints this many rows unless --limit says. */
export const DEFAULT_LIST_LIMIT = 100;
const PAGE = 10_000;

/** `fleet send`'s list in --help: each command of the table, the name of its one argument, what it does. */
export function fleetCommandHelp(indent = '    ', width = 20): string {
  return COMMAND_NAMES.map((name) => {
    const r = commandRow(name);
    const usage = r.arg ? `${name} ${r.arg.field.toUpperCase()}` : name;
    return `${indent}${usage.padEnd(width)}${r.summary}${r.interrupts ? ' (during a call: "force")' : ''}\n`;
  }).join('');
}

/**
 * The command `fleet send … COMMAND [ARG]` means. ARG is the command's one argument (`set-volume 40`,
 * `update-pin 1.4.2`, `apply '{"avatar":{"name":"Eva"}}'`), or a JSON object of the whole command beside its
 * name (`'{"force":true}'`, `'{"percent":40,"force":true}'`). The console checks the result with the kiosk's
 * own parser, so a wrong value is refused in the table's words.
 */
export function commandFromWords(cmd: string | undefined, word: string | undefined): Record<string, unknown> {
  if (!cmd) throw new AvatarError('invalid_request', `fleet send needs a command: ${COMMAND_NAMES.join(', ')}.`);
  if (word === undefined) return { cmd };
  const arg = (COMMAND_NAMES as readonly string[]).includes(cmd) ? commandRow(cmd as CommandName).arg : null;
  let value: unknown;
  try {
    value = JSON.parse(word);
  } catch {
    // A bare word is the argument itself (`1.4.2`); the kiosk's parser judges it.
    if (arg && arg.kind !== 'json') return { cmd, [arg.field]: word };
    throw new AvatarError('invalid_request', `The command's JSON does not parse: ${word}`);
  }
  const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  // `apply '{"avatar":…}'`: a JSON argument is the argument unless the object already names it.
  if (object && (!arg || arg.kind !== 'json' || arg.field in object)) return { ...object, cmd };
  if (arg && (object || arg.kind !== 'json')) return { cmd, [arg.field]: value };
  throw new AvatarError('invalid_request', `The command's JSON must be an object such as {"force":true}${arg ? ` or {"${arg.field}":…}` : ''}.`);
}

export async function runFleetCommand(args: string[], options: FleetCliOptions, io: CliIo, fetchImpl: typeof fetch = fetch): Promise<number> {
  const [sub, ...rest] = args;
  const base = (options.consoleUrl ?? io.env.FLEET_CONSOLE_URL ?? DEFAULT_CONSOLE_URL).replace(/\/+$/, '');
  let token = io.env.FLEET_CONSOLE_TOKEN?.trim();
  if (options.tokenFile) token = new TextDecoder().decode(await readRegularFile(options.tokenFile, 4096, 'The token file')).trim();
  if (!token) throw new AvatarError('invalid_request', 'The fleet console needs an account\'s token: --token-file PATH or FLEET_CONSOLE_TOKEN (`npm run fleet -- account add NAME --token-file PATH` makes one).');
  const headers = { authorization: `Bearer ${token}` };
  const call = async (path: string, init: RequestInit = {}): Promise<Response> => {
    try {
      const res = await fetchImpl(`${base}${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
      if (res.status === 401) throw new AvatarError('unauthorized', 'The fleet console refused the token.');
      return res;
    } catch (error) {
      if (error instanceof AvatarError) throw error;
      throw new AvatarError('network', `The fleet console at ${base} did not answer (${error instanceof Error ? error.message : String(error)}); is \`npm run fleet\` running?`);
    }
  };
  const get = async <T>(path: string): Promise<T> => {
    const res = await call(path);
    const body = (await res.json()) as T & { ok?: false; error?: { message: string } };
    if (!res.ok) throw new AvatarError(res.status === 404 ? 'not_found' : 'invalid_request', body.error?.message ?? `The console answered HTTP ${res.status}.`);
    return body;
  };

  switch (sub) {
    case 'list':
      return list(get, options, io);
    case 'send': {
      let target: CommandTarget;
      let words = rest;
      if (options.all) target = { fleet: true };
      else if (options.group) target = { group: options.group };
      else {
        const [kiosk, ...more] = rest;
        if (!kiosk) throw new AvatarError('invalid_request', 'fleet send needs a kiosk id, --group GROUP or --all.');
        target = { kiosks: kiosk.split(',') };
        words = more;
      }
      const request: CommandRequest = { target, command: commandFromWords(words[0], words[1]), ...(options.expiresS !== undefined ? { expiresInS: options.expiresS } : {}), ...(options.firstWave !== undefined ? { firstWave: options.firstWave } : {}) };
      const res = (await (await call('/api/command', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) })).json()) as CommandResponse;
      if (!res.ok) throw new AvatarError('invalid_request', res.error.message);
      const followed = await follow(call, res.id, options.waitS * 1000, io);
      const answered = new Set(followed.answers.map((a) => a.kioskId));
      const missing = res.expected.filter((k) => !answered.has(k));
      const record = followed.record;
      if (options.json) io.stdout(`${jsonLine({ id: res.id, answers: followed.answers, missing, state: record?.state ?? 'waiting', note: record?.note ?? null })}\n`);
      else {
        for (const a of followed.answers) io.stdout(`${[a.kioskId, a.expired ? 'expired' : a.ok ? 'ok' : 'refused', a.summary, ...(a.screenshotUrl ? [`${base}${a.screenshotUrl}`] : [])].map(cell).join('\t')}\n`);
        for (const k of missing) io.stdout(`${cell(k)}\tno answer within ${options.waitS} s (offline? the command waits in the broker until ${res.expiresAt})\n`);
        if (res.waves && record) io.stdout(`${cell(`staged: ${record.waves?.length ?? 1} wave(s) sent to ${record.expected} of ${record.expected + record.notSent} kiosks; ${record.note ?? `${record.ok} ok`}`)}\n`);
      }
      const failed = missing.length > 0 || followed.answers.some((a) => !a.ok) || record?.state === 'stopped' || (record !== null && record.notSent > 0);
      return failed ? 1 : 0;
    }
    case 'watch':
      return watch(call, options, io);
    case 'audit':
      return audit(get, options, io);
    case 'visitors': {
      const view = await get<VisitorsView>('/api/visitors');
      if (options.json) io.stdout(`${jsonLine(view)}\n`);
      else io.stdout(visitorsText(view));
      return 0;
    }
    default:
      throw new AvatarError('invalid_request', `fleet needs list, send, watch, audit or visitors (got "${sub ?? ''}").`);
  }
}

type Get = <T>(path: string) => Promise<T>;

/** One page of the filtered list (or every page with --limit 0), in kiosk id order. */
async function list(get: Get, options: FleetCliOptions, io: CliIo): Promise<number> {
  const status = options.status ?? 'all';
  if (!(STATUS_FILTERS as readonly string[]).includes(status)) throw new AvatarError('invalid_request', `--status must be one of ${STATUS_FILTERS.join(', ')} (got "${status}").`);
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  const offset = options.offset ?? 0;
  const query = (from: number, size: number) => {
    const q = new URLSearchParams({ status: status as StatusFilter, offset: String(from), limit: String(size) });
    if (options.group) q.set('group', options.group);
    if (options.search) q.set('search', options.search);
    return `/api/kiosks?${q}`;
  };
  let page = await get<KioskPage>(query(offset, limit === 0 ? PAGE : limit));
  const rows = [...page.kiosks];
  while (limit === 0 && offset + rows.length < page.total && page.kiosks.length > 0) {
    page = await get<KioskPage>(query(offset + rows.length, PAGE));
    rows.push(...page.kiosks);
  }
  if (options.json) io.stdout(`${jsonLine(rows)}\n`);
  else {
    io.stdout(`${['KIOSK', 'STATUS', 'SINCE', 'GROUP', 'PHASE', 'VERSION', 'CALLS', 'CREDITS', 'LAST ERROR'].join('\t')}\n`);
    for (const r of rows) io.stdout(`${[r.kioskId, r.online ? 'online' : 'offline', since(r), r.group ?? '-', r.online ? (r.phase ?? '-') : '-', r.version ?? '-', r.todaySessions, r.todayCredits, r.lastErrorCode ?? '-'].map(cell).join('\t')}\n`);
  }
  if (rows.length < page.total) {
    const next = offset + rows.length;
    io.stderr(`fleet list: kiosks ${rows.length ? `${offset + 1}-${next}` : 'none'} of ${page.total}${next < page.total ? ` (--offset ${next} for the next page, --limit 0 for all)` : ''}\n`);
  }
  return 0;
}

/** "since" as one cell: the time, a window `not-before/at` when the change fell while the console was away, or "-". */
function since(r: KioskRow): string {
  if (!r.sinceAt) return '-';
  return r.sinceNotBefore ? `${r.sinceNotBefore}/${r.sinceAt}` : r.sinceAt;
}

/**
 * The command's own stream on the console: its answers so far, then each as it comes, until it is done
 * (every kiosk answered or expired, no wave pending) or `waitMs` passes.
 */
async function follow(call: (path: string, init?: RequestInit) => Promise<Response>, id: string, waitMs: number, io: CliIo): Promise<{ answers: CommandAnswer[]; record: CommandRecord | null }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), waitMs);
  const off = io.onSignal(() => controller.abort());
  const answers = new Map<string, CommandAnswer>();
  let record: CommandRecord | null = null;
  try {
    const res = await call(`/api/commands/${encodeURIComponent(id)}/stream`, { signal: controller.signal });
    if (!res.ok || !res.body) throw new AvatarError('network', `The console did not stream command ${id} (HTTP ${res.status}).`);
    await readEvents(res.body, controller.signal, (data) => {
      const frame = JSON.parse(data) as CommandFrame;
      if (frame.type === 'answer') answers.set(frame.answer.kioskId, frame.answer);
      else {
        record = frame.command;
        if (frame.type === 'record') for (const a of frame.answers) answers.set(a.kioskId, a);
      }
      return frame.type === 'done';
    });
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    off();
  }
  return { answers: [...answers.values()], record };
}

/** Server-sent events from `body`: `onData` gets each event's data; true from it ends the reading. */
async function readEvents(body: NonNullable<Response['body']>, signal: AbortSignal, onData: (data: string) => boolean): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', cancel);
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '));
        if (data && onData(data.slice(6))) return cancel();
      }
    }
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** The audit log: the latest commands (who, when, what, to whom, how it went), or one command's answers. */
async function audit(get: Get, options: FleetCliOptions, io: CliIo): Promise<number> {
  const outcome = (c: CommandRecord) => `${c.ok} ok, ${c.refused} refused, ${c.expired} expired, of ${c.expected}${c.notSent ? ` (${c.notSent} not sent)` : ''}; ${c.state}${c.note ? `: ${c.note}` : ''}`;
  if (options.id) {
    const one = await get<{ command: CommandRecord; answers: CommandAnswer[] }>(`/api/commands/${encodeURIComponent(options.id)}`);
    if (options.json) io.stdout(`${jsonLine(one)}\n`);
    else {
      const c = one.command;
      io.stdout(`${[c.at, c.by, `${c.cmd} ${c.args}`, c.target, outcome(c)].map(cell).join('\t')}\n`);
      const shown = new Set(one.answers.map((a) => a.kioskId));
      for (const a of [...one.answers, ...c.problems.filter((p) => !shown.has(p.kioskId))]) io.stdout(`${[a.kioskId, a.expired ? 'expired' : a.ok ? 'ok' : 'refused', a.at, a.summary].map(cell).join('\t')}\n`);
    }
    return 0;
  }
  const { commands } = await get<{ commands: CommandRecord[] }>(`/api/commands?limit=${options.limit ?? 20}`);
  if (options.json) io.stdout(`${jsonLine(commands)}\n`);
  else {
    io.stdout(`${['AT', 'BY', 'COMMAND', 'TARGET', 'ID', 'OUTCOME'].join('\t')}\n`);
    for (const c of commands) io.stdout(`${[c.at, c.by, `${c.cmd}${c.args === '{}' ? '' : ` ${c.args}`}`, c.target, c.id, outcome(c)].map(cell).join('\t')}\n`);
  }
  return 0;
}

/**
 * The fleet's funnel of the day for a terminal: one line per step (the console's thresholded words), then
 * the largest drop and one line per group. Group names come from kiosks, so every cell goes through `cell`.
 */
export function visitorsText(view: VisitorsView): string {
  if (view.day === null) return 'No kiosk has sent a visitor funnel yet.\n';
  const out = [`Visitors on ${cell(view.day)} (each kiosk's own day), ${view.fleet.kiosks} ${view.fleet.kiosks === 1 ? 'kiosk' : 'kiosks'}; counts under ${view.threshold} show as "fewer than ${view.threshold}".`];
  for (const s of VISITOR_STEPS) out.push(`${STEP_WORDS[s].padEnd(26)}${view.fleet.figures[s].text}`);
  out.push(view.fleet.largestDrop ? `Largest drop: ${view.fleet.largestDrop}` : 'No drop can be told yet: too few visitors at each step.');
  out.push(['GROUP', 'KIOSKS', 'TAPPED', 'WENT LIVE', 'LARGEST DROP'].join('\t'));
  for (const g of view.groups) out.push([g.group ?? '(none)', g.kiosks, g.figures.tapped.text, g.figures.live.text, g.largestDrop ?? '-'].map(cell).join('\t'));
  if (view.otherDays.length) out.push(`Not added (another day): ${view.otherDays.map((o) => `${cell(o.kioskId)} (${cell(o.day)})`).join(', ')}`);
  return `${out.join('\n')}\n`;
}

/** One line per kiosk change until interrupted (or the console goes away). */
async function watch(call: (path: string) => Promise<Response>, options: FleetCliOptions, io: CliIo): Promise<number> {
  const controller = new AbortController();
  const off = io.onSignal(() => controller.abort());
  const last = new Map<string, string>();
  const line = (r: KioskRow) => {
    const text = options.json ? jsonLine(r) : [new Date().toISOString(), r.kioskId, r.online ? 'online' : `offline (${r.offlineReason ?? '?'})`, r.online ? (r.phase ?? '-') : '-', r.lastErrorCode ?? '-'].map(cell).join('\t');
    const key = options.json ? text : `${r.online}/${r.phase}/${r.lastErrorCode}/${r.offlineReason}`;
    if (last.get(r.kioskId) === key) return;
    last.set(r.kioskId, key);
    io.stdout(`${text}\n`);
  };
  try {
    const res = await call('/api/stream');
    await readEvents(res.body!, controller.signal, (data) => {
      const frame = JSON.parse(data) as ConsoleFrame;
      for (const r of frame.kiosks) line(r);
      return false;
    });
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    off();
  }
  if (!controller.signal.aborted) {
    io.stderr('fleet watch: the console closed the stream.\n');
    return 1;
  }
  return 0;
}
