/**
 * `cli fleet list | send KIOSK|--group G|--all COMMAND [ARG] | watch | visitors`: the fleet console for scripts.
 * It talks to a running console (`npm run fleet`) over its HTTP API with the operator token, so a
 * script needs no broker login of its own and sees exactly what the page sees; commands get the same
 * checks and refusals. The commands, their one argument and their help lines come from the kiosk's table
 * (fleet/command-table.ts).
 *   --console URL   default http://127.0.0.1:8790 (or FLEET_CONSOLE_URL)
 *   --token-file F  the operator token (or FLEET_CONSOLE_TOKEN)
 * Exit: 0 ok; 1 a kiosk refused, or did not answer within --wait seconds; 2 bad usage or unreachable.
 */
import { AvatarError } from '../core/errors.ts';
import { readRegularFile } from '../core/bounded-read.ts';
import { COMMAND_NAMES, commandRow, type CommandName } from '../fleet/command-table.ts';
import type { CommandResponse, CommandTarget, ConsoleFrame, KioskRow, VisitorsView } from '../fleet/console/view.ts';
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
}

export const DEFAULT_CONSOLE_URL = 'http://127.0.0.1:8790';
/** How often `send` looks for the answers. */
const POLL_MS = 250;

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
  if (!token) throw new AvatarError('invalid_request', 'The fleet console needs its operator token: --token-file PATH or FLEET_CONSOLE_TOKEN (the token is in the address `npm run fleet` printed).');
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
  const kiosks = async () => ((await (await call('/api/kiosks')).json()) as { kiosks: KioskRow[] }).kiosks;

  switch (sub) {
    case 'list': {
      const rows = (await kiosks()).sort((a, b) => a.kioskId.localeCompare(b.kioskId));
      if (options.json) {
        io.stdout(`${jsonLine(rows)}\n`);
        return 0;
      }
      io.stdout(`${['KIOSK', 'STATUS', 'SINCE', 'GROUP', 'PHASE', 'VERSION', 'CALLS', 'CREDITS', 'LAST ERROR'].join('\t')}\n`);
      for (const r of rows) {
        io.stdout(`${[r.kioskId, r.online ? 'online' : 'offline', r.sinceAt ?? '-', r.group ?? '-', r.online ? (r.phase ?? '-') : '-', r.version ?? '-', r.todaySessions, r.todayCredits, r.lastErrorCode ?? '-'].map(cell).join('\t')}\n`);
      }
      return 0;
    }
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
      const command = commandFromWords(words[0], words[1]);
      const res = (await (await call('/api/command', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ target, command }) })).json()) as CommandResponse;
      if (!res.ok) throw new AvatarError('invalid_request', res.error.message);
      const deadline = Date.now() + options.waitS * 1000;
      let answered: KioskRow[] = [];
      for (;;) {
        answered = (await kiosks()).filter((r) => r.lastAnswer?.id === res.id);
        if (answered.length >= res.expected.length || Date.now() >= deadline) break;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      const missing = res.expected.filter((k) => !answered.some((r) => r.kioskId === k));
      if (options.json) io.stdout(`${jsonLine({ id: res.id, answers: answered.map((r) => ({ kiosk: r.kioskId, ...r.lastAnswer })), missing })}\n`);
      else {
        for (const r of answered) io.stdout(`${[r.kioskId, r.lastAnswer!.ok ? 'ok' : 'refused', r.lastAnswer!.summary, ...(r.lastAnswer!.screenshotUrl ? [`${base}${r.lastAnswer!.screenshotUrl}`] : [])].map(cell).join('\t')}\n`);
        for (const k of missing) io.stdout(`${cell(k)}\tno answer within ${options.waitS} s (offline? the command waits in the broker until ${res.expiresAt})\n`);
      }
      return missing.length || answered.some((r) => !r.lastAnswer!.ok) ? 1 : 0;
    }
    case 'watch':
      return watch(call, options, io);
    case 'visitors': {
      const view = (await (await call('/api/visitors')).json()) as VisitorsView;
      if (options.json) io.stdout(`${jsonLine(view)}\n`);
      else io.stdout(visitorsText(view));
      return 0;
    }
    default:
      throw new AvatarError('invalid_request', `fleet needs list, send, watch or visitors (got "${sub ?? ''}").`);
  }
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
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    controller.signal.addEventListener('abort', () => void reader.cancel());
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '));
        if (!data) continue;
        const frame = JSON.parse(data.slice(6)) as ConsoleFrame;
        for (const r of frame.kiosks) line(r);
      }
    }
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
