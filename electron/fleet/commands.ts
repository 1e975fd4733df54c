/**
 * Remote commands from the operator (MQTT `<prefix>/<kioskId>/cmd`): their schema and their parser,
 * both derived from the table of commands (command-table.ts). Electron-free.
 *
 * `apply` carries only an allow-list of harmless settings (persona, name, cast selection, opening hours,
 * idle timings). The service URL, the API key, the PIN, the RTC engine, the broker settings and anything
 * else are refused by name: whoever can publish on the broker must not be able to point the kiosk at
 * another service, read its key or lock staff out.
 */
import { z } from 'zod';
import { APPLY_KEYS, COMMAND_NAMES, FLEET_COMMANDS, type CommandName, type CommandRow, type FleetCommandTable } from './command-table.ts';

export { APPLY_KEYS, applySettingsSchema, COMMAND_NAMES, type ApplySettings, type CommandName } from './command-table.ts';

/** Commands that would cut a live call short: refused during one unless `force`. */
export const INTERRUPTING: ReadonlySet<CommandName> = new Set(COMMAND_NAMES.filter((name) => FLEET_COMMANDS[name].interrupts));

const id = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1-64 letters, digits, ".", "_", ":" or "-"');
/** When the command stops being valid (ISO time with a zone); see command-guard.ts. */
const expiresAt = z.iso.datetime({ offset: true, message: 'must be an ISO time such as "2026-11-24T18:00:00Z"' });
const base = { id, force: z.boolean().optional(), expiresAt: expiresAt.optional() };

/** One command as parsed: the fields every command has, its name, and its own arguments (its row's). */
type ArgsOf<K extends CommandName> = FleetCommandTable[K] extends CommandRow<infer S> ? z.output<z.ZodObject<S>> : never;
type CommandOf<K extends CommandName> = z.output<z.ZodObject<typeof base>> & { cmd: K } & ArgsOf<K>;
export type Command = { [K in CommandName]: CommandOf<K> }[CommandName];

export const commandSchema = z.discriminatedUnion(
  'cmd',
  COMMAND_NAMES.map((name) => z.strictObject({ ...base, cmd: z.literal(name), ...FLEET_COMMANDS[name].args })) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<Command>;

export type CommandResult =
  | { id: string; cmd: CommandName; ok: true; result: Record<string, unknown>; at: string }
  | { id: string | null; cmd: string | null; ok: false; error: { code: string; message: string }; at: string };

/** Parse a command payload, or say in words what is wrong with it (never a stack trace). The id of a
 *  command that fails is echoed whenever it can be read (command-guard.ts `readCommandId`). */
export function parseCommand(payload: Buffer | string): { ok: true; command: Command } | { ok: false; id: string | null; cmd: string | null; message: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof payload === 'string' ? payload : payload.toString('utf8'));
  } catch {
    return { ok: false, id: readCommandId(payload), cmd: null, message: 'The command is not JSON.' };
  }
  const rec = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
  const given = readCommandId(payload);
  const cmd = rec && typeof rec.cmd === 'string' ? rec.cmd.slice(0, 32) : null;
  if (!rec) return { ok: false, id: null, cmd: null, message: 'The command must be a JSON object such as {"id":"1","cmd":"ping"}.' };
  if (cmd !== null && !(COMMAND_NAMES as readonly string[]).includes(cmd)) {
    return { ok: false, id: given, cmd, message: `Unknown command "${cmd}"; known: ${COMMAND_NAMES.join(', ')}.` };
  }
  const parsed = commandSchema.safeParse(raw);
  if (parsed.success) return { ok: true, command: parsed.data };
  const issue = parsed.error.issues[0]!;
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const path = [...issue.path.map(String), ...(keys.length ? [keys[0]!] : [])];
  // A key `apply` does not allow (inside its settings); a stray `settings` on another command is an unknown key.
  if (cmd === 'apply' && issue.path[0] === 'settings' && keys.length) {
    const key = path.slice(1).join('.');
    return { ok: false, id: given, cmd, message: `"apply" cannot change "${key}"; it may change only ${APPLY_KEYS.join(', ')}.` };
  }
  const field = path.join('.') || '(command)';
  return { ok: false, id: given, cmd, message: `Invalid command at "${field}": ${issue.message}.` };
}

/** The command id in a payload that did not parse as a command, when it can be read at all (a string or
 *  a number in a JSON object, or `"id":"…"` in text that is not JSON), cut to 64 characters. */
export function readCommandId(payload: Buffer | string): string | null {
  const text = (typeof payload === 'string' ? payload : payload.subarray(0, 64 * 1024).toString('utf8')).slice(0, 64 * 1024);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    const m = /"id"\s*:\s*("((?:[^"\\]|\\.){1,64})"|(-?\d{1,20}))/.exec(text);
    return m ? clean(m[2] ?? m[3] ?? '') : null;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const id = (raw as Record<string, unknown>).id;
  if (typeof id === 'string') return clean(id);
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  return null;
}

function clean(id: string): string | null {
  // Printable characters only: an answer must not carry control characters into the operator's logs.
  const out = id.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 64);
  return out.length ? out : null;
}
