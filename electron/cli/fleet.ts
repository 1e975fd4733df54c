/**
 * `cli fleet list | send KIOSK|--group G|--all COMMAND [ARG] | watch`: the fleet console for scripts.
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
import type { CommandResponse, CommandTarget, ConsoleFrame, KioskRow } from '../fleet/console/view.ts';
import type { CliIo } from './probe.ts';

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
        io.stdout(`${JSON.stringify(rows)}\n`);
        return 0;
      }
      io.stdout(`${['KIOSK', 'STATUS', 'SINCE', 'GROUP', 'PHASE', 'VERSION', 'CALLS', 'CREDITS', 'LAST ERROR'].join('\t')}\n`);
      for (const r of rows) {
        io.stdout(`${[r.kioskId, r.online ? 'online' : 'offline', r.sinceAt ?? '-', r.group ?? '-', r.online ? (r.phase ?? '-') : '-', r.version ?? '-', r.todaySessions, r.todayCredits, r.lastErrorCode ?? '-'].join('\t')}\n`);
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
      if (options.json) io.stdout(`${JSON.stringify({ id: res.id, answers: answered.map((r) => ({ kiosk: r.kioskId, ...r.lastAnswer })), missing })}\n`);
      else {
        for (const r of answered) io.stdout(`${r.kioskId}\t${r.lastAnswer!.ok ? 'ok' : 'refused'}\t${r.lastAnswer!.summary}${r.lastAnswer!.screenshotUrl ? `\t${base}${r.lastAnswer!.screenshotUrl}` : ''}\n`);
        for (const k of missing) io.stdout(`${k}\tno answer within ${options.waitS} s (offline? the command waits in the broker until ${res.expiresAt})\n`);
      }
      return missing.length || answered.some((r) => !r.lastAnswer!.ok) ? 1 : 0;
    }
    case 'watch':
      return watch(call, options, io);
    default:
      throw new AvatarError('invalid_request', `fleet needs list, send or watch (got "${sub ?? ''}").`);
  }
}

/** One line per kiosk change until interrupted (or the console goes away). */
async function watch(call: (path: string) => Promise<Response>, options: FleetCliOptions, io: CliIo): Promise<number> {
  const controller = new AbortController();
  const off = io.onSignal(() => controller.abort());
  const last = new Map<string, string>();
  const line = (r: KioskRow) => {
    const text = options.json ? JSON.stringify(r) : `${new Date().toISOString()}\t${r.kioskId}\t${r.online ? 'online' : `offline (${r.offlineReason ?? '?'})`}\t${r.online ? (r.phase ?? '-') : '-'}\t${r.lastErrorCode ?? '-'}`;
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
