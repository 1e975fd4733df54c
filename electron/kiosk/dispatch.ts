/**
 * The one way an IPC call reaches a handler, driven by the contract's table (`KIOSK_API`):
 *  1. an unknown channel answers `invalid_request`;
 *  2. a `staff` channel answers `unauthorized` unless the staff panel is unlocked, before its argument is
 *     even looked at (so a new staff channel cannot forget the PIN); and while no staff PIN exists yet
 *     (first-run setup), starting a call or reporting the attract screen answers `invalid_request`;
 *  3. the argument is validated with the channel's schema (`invalid_request` with a human message);
 *  4. the handler runs; a throw becomes a Result with the error's code and message, never a rejection.
 *
 * Handlers are grouped as the `KioskApi` is: the kiosk service brings `session`, `config` and `attract`;
 * staff operations bring `staff` and `app` (and the gate) when they attach.
 */
import type { z } from 'zod';
import { channelRow, fail, parseArgs, type ApiGroup, type ApiMethod, type Channel, type KIOSK_API, type Result } from '../contract.ts';
import { toAvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';

type Table = typeof KIOSK_API;
type HandlerOf<S> = S extends { args: infer Z extends z.ZodType; result: infer R } ? (args: z.output<Z>) => Promise<Result<R>> | Result<R> : never;

/** The handlers of one group of the API, one per method. */
export type GroupHandlers<G extends ApiGroup> = { [M in ApiMethod<G>]: HandlerOf<Table[G][M]> };
export type HandlerTable = { [G in ApiGroup]: GroupHandlers<G> };

/** Whether the staff panel is unlocked right now; each check also refreshes its idle timeout. */
export interface StaffGate {
  touch(): boolean;
  /** No staff PIN exists yet: the kiosk is in its first-run setup and serves no visitor. */
  setupPending?(): boolean;
}

/** What a visitor does with the service: refused until setup is done, so a kiosk without a PIN cannot be
 *  used as one (its attract screen would let the first visitor choose the PIN). */
const NEEDS_SETUP_DONE = new Set(['session:start', 'attract:report']);
export const SETUP_PENDING_MESSAGE = 'This kiosk is not set up yet: an installer must choose the staff PIN first.';

export const STAFF_LOCKED_MESSAGE = 'The staff panel is locked. Enter the PIN.';

export interface DispatcherOptions {
  /** The handlers in place now (the staff groups appear once staff operations attach). */
  handlers: () => Partial<HandlerTable>;
  /** The staff panel's gate, or null when this kiosk has no staff operations. */
  gate: () => StaffGate | null;
  logger?: Logger;
}

export type Dispatch = (channel: string, rawArg: unknown) => Promise<Result<unknown>>;

export function createDispatcher(options: DispatcherOptions): Dispatch {
  const logger = options.logger ?? silentLogger;
  return async (channel, rawArg) => {
    const row = channelRow(channel);
    if (!row) return fail('invalid_request', `Unknown channel: ${String(channel).slice(0, 80)}.`);
    const group = options.handlers()[row.group] as Record<string, (args: unknown) => Promise<Result<unknown>> | Result<unknown>> | undefined;
    const handler = group?.[row.method];
    if (!handler) return fail('invalid_request', 'This kiosk does not offer that operation.');
    if (row.spec.access === 'staff' && !options.gate()?.touch()) return fail('unauthorized', STAFF_LOCKED_MESSAGE);
    if (NEEDS_SETUP_DONE.has(`${row.group}:${row.method}`) && options.gate()?.setupPending?.()) return fail('invalid_request', SETUP_PENDING_MESSAGE);
    const parsed = parseArgs(row.spec.channel as Channel, rawArg);
    if (!parsed.ok) return parsed;
    try {
      return await handler(parsed.value);
    } catch (error) {
      const e = toAvatarError(error);
      if (e.code !== 'unauthorized' && e.code !== 'locked') logger.warn('IPC call failed', { channel, code: e.code, message: e.message });
      return fail(e.code, e.message);
    }
  };
}
