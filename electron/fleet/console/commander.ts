/**
 * What happens when an operator sends a command from the page, the API or the CLI: the account's role
 * is checked (a viewer sends nothing), the command goes out through the broker link with the expiry the
 * operator chose, and the audit log (command-log.ts) records it — or records the refusal, with who
 * asked. A staged command (`firstWave`) goes to that many kiosks first, online ones first; the rest get
 * it only once every kiosk of the first wave ran it: a refusal, an error or an expiry there stops it, and
 * the log says why and how many kiosks were never sent it. Each command (and each wave) is in the log before
 * it is published, so an answer that beats the broker's acknowledgement still counts. Electron-free.
 */
import { silentLogger, type Logger } from '../../core/log.ts';
import type { Account } from './accounts.ts';
import type { CommandLog } from './command-log.ts';
import { newCommandId, type ConsoleLink } from './link.ts';
import type { FleetState } from './state.ts';
import type { CommandAnswer, CommandRequest, CommandResponse, CommandTarget } from './view.ts';

export interface Commander {
  send(request: CommandRequest, who: Account): Promise<CommandResponse>;
  close(): void;
}

export function createCommander(options: { link: ConsoleLink; state: FleetState; log: CommandLog; now(): number; logger?: Logger }): Commander {
  const { link, state, log, now } = options;
  const logger = options.logger ?? silentLogger;
  let closed = false;

  const nextWave = async (id: string, first: string[], rest: string[], command: Record<string, unknown>, ttlS: number | undefined) => {
    const failed = await log.settled(id, first);
    if (closed) return;
    if (failed.length) {
      log.stopped(id, `Stopped after the first wave: ${describe(failed)}. The other ${rest.length} kiosk${rest.length === 1 ? ' was' : 's were'} not sent it.`);
      return;
    }
    // The wave is in the log before it is published: an answer may come back before the broker's acknowledgement.
    const res = await link.send({ kiosks: rest }, command, { id, ...(ttlS !== undefined ? { ttlS } : {}), onSending: (s) => log.wave(id, rest, now(), s.expiresAtMs) });
    if (!res.ok) log.stopped(id, `The first wave ran; the rest (${rest.length} kiosk${rest.length === 1 ? '' : 's'}) could not be sent: ${res.error.message}`);
  };

  return {
    async send(request, who) {
      const cmd = typeof request.command.cmd === 'string' ? request.command.cmd.slice(0, 32) : '?';
      const target = targetLabel(request.target);
      const refuse = (code: string, message: string): CommandResponse => {
        log.refused({ at: new Date(now()).toISOString(), by: who.name, cmd, target, code, message });
        logger.warn('Fleet console: a command was refused', { by: who.name, cmd, target, code });
        return { ok: false, error: { code, message } };
      };
      if (who.role !== 'operator') return refuse('forbidden', `"${who.name}" is a read-only account (viewer): it cannot send commands. An operator account can.`);
      const ttl = request.expiresInS !== undefined ? { ttlS: request.expiresInS } : {};
      const args = argsText(request.command);
      // The command's id once it is in the log (the link calls onSending just before it publishes).
      let logged: string | null = null;
      /** A send that failed: a refusal when nothing went out; else the logged command stops with the reason
       *  (its answers, if the broker did pass it on, still count). */
      const unsent = (res: Extract<CommandResponse, { ok: false }>): CommandResponse => {
        if (logged === null) return refuse(res.error.code, res.error.message);
        log.stopped(logged, res.error.message);
        logger.warn('Fleet console: a command was not confirmed by the broker', { id: logged, code: res.error.code });
        return res;
      };

      if (request.firstWave === undefined) {
        const res = await link.send(request.target, request.command, {
          ...ttl,
          onSending: (s) => {
            logged = s.id;
            log.sent({ id: s.id, by: who.name, cmd, args, target, kiosks: s.expected, sentAtMs: now(), expiresAtMs: s.expiresAtMs });
          },
        });
        if (!res.ok) return unsent(res);
        logger.info('Fleet console: command sent', { id: res.id, by: who.name, cmd, target, expected: res.expected.length });
        return res;
      }

      const members = 'kiosks' in request.target ? [...new Set(request.target.kiosks)] : state.members(request.target);
      const n = request.firstWave;
      if (!Number.isInteger(n) || n < 1) return refuse('invalid_request', `The first wave must be a whole number of kiosks, 1 or more (got ${n}).`);
      if (members.length <= n) return refuse('invalid_request', `A first wave of ${n} needs more than ${n} kiosks; ${target} has ${members.length}. Send it to all at once instead.`);
      // Online kiosks first, so the first wave answers now rather than at its expiry.
      const online = (k: string) => state.row(k)?.online === true;
      const ordered = [...members].sort((a, b) => Number(online(b)) - Number(online(a)) || a.localeCompare(b));
      const first = ordered.slice(0, n);
      const rest = ordered.slice(n);
      const id = newCommandId(now());
      const res = await link.send({ kiosks: first }, request.command, {
        id,
        ...ttl,
        onSending: (s) => {
          logged = id;
          log.sent({ id, by: who.name, cmd, args, target, kiosks: first, sentAtMs: now(), expiresAtMs: s.expiresAtMs, rest: rest.length });
        },
      });
      if (!res.ok) return unsent(res);
      logger.info('Fleet console: staged command sent', { id, by: who.name, cmd, target, first: first.length, rest: rest.length });
      void nextWave(id, first, rest, request.command, request.expiresInS).catch((error: unknown) => log.stopped(id, `The next wave failed: ${error instanceof Error ? error.message : String(error)}`));
      return { ...res, waves: { first: first.length, rest: rest.length } };
    },
    close() {
      closed = true;
    },
  };
}

/** `kiosks lobby-1, lobby-2`, `group lobby`, `the fleet`. */
export function targetLabel(target: CommandTarget): string {
  if ('group' in target) return `group ${target.group}`;
  if ('fleet' in target) return 'the fleet';
  const shown = target.kiosks.slice(0, 5).join(', ');
  return `kiosk${target.kiosks.length === 1 ? '' : 's'} ${shown}${target.kiosks.length > 5 ? ` and ${target.kiosks.length - 5} more` : ''}`;
}

/** The command's arguments as one short line (a persona is long: the line is cut). */
function argsText(command: Record<string, unknown>): string {
  const { cmd: _cmd, ...rest } = command;
  const text = JSON.stringify(rest);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

function describe(failed: CommandAnswer[]): string {
  const shown = failed.slice(0, 3).map((a) => `${a.kioskId} ${a.expired ? 'expired, never ran' : `refused (${a.summary})`}`);
  return `${shown.join('; ')}${failed.length > 3 ? ` and ${failed.length - 3} more` : ''}`;
}
