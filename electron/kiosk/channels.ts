/**
 * The channel registry: the one way an IPC call reaches a handler, driven by the contract's table
 * (`KIOSK_API`). Each owner registers its own groups: the kiosk (kiosk/compose.ts) brings `session`,
 * `config` and `attract`; staff operations bring `staff` and `app`, and the staff panel's gate. The
 * hosts' glue (main/ipc.ts, browser/server.ts) dispatches every call through `dispatch`:
 *  1. an unknown channel answers `invalid_request`;
 *  2. a `staff` channel answers `unauthorized` unless the staff panel is unlocked, before its argument is
 *     even looked at (so a new staff channel cannot forget the PIN); and while no staff PIN exists yet
 *     (first-run setup), starting a call or reporting the attract screen answers `invalid_request`;
 *  3. the argument is validated with the channel's schema (`invalid_request` with a human message);
 *  4. the handler runs; a throw becomes a Result with the error's code and message, never a rejection.
 *
 * Why it lives in kiosk/: it is pure (the contract's table and a map of handlers, no Electron, no
 * socket), and kiosk/ is the lowest room that sits above the contract and that every owner and host
 * can import downwards: the kiosk registers into it, operations/ register into it, main/ and browser/
 * dispatch through it. One level higher (operations/ or main/), the kiosk's own registration would
 * point up.
 */
import type { z } from 'zod';
import { channelRow, fail, parseArgs, type ApiGroup, type ApiMethod, type Channel, type KIOSK_API, type Result } from '../contract.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';

type Table = typeof KIOSK_API;
type HandlerOf<S> = S extends { args: infer Z extends z.ZodType; result: infer R } ? (args: z.output<Z>) => Promise<Result<R>> | Result<R> : never;

/** The handlers of one group of the API, one per method: the compiler names a method missing one. */
export type GroupHandlers<G extends ApiGroup> = { [M in ApiMethod<G>]: HandlerOf<Table[G][M]> };
export type HandlerTable = { [G in ApiGroup]: GroupHandlers<G> };

/** Whether the staff panel is unlocked right now; each check also refreshes its idle timeout. */
export interface StaffGate {
  touch(): boolean;
  /** No staff PIN exists yet: the kiosk is in its first-run setup and serves no visitor. */
  setupPending?(): boolean;
}

/** What a visitor does with the service: refused until setup is done, so a kiosk without a PIN cannot be
 *  used as one (its attract screen would let the first visitor choose the PIN); nor are visitors counted. */
const NEEDS_SETUP_DONE = new Set(['session:start', 'attract:report', 'attract:visitorStep']);
export const SETUP_PENDING_MESSAGE = 'This kiosk is not set up yet: an installer must choose the staff PIN first.';

export const STAFF_LOCKED_MESSAGE = 'The staff panel is locked. Enter the PIN.';

/** One IPC call: never rejects; unknown channels and bad arguments answer `invalid_request`. */
export type Dispatch = (channel: string, rawArg: unknown) => Promise<Result<unknown>>;

export interface ChannelRegistry {
  /** Register a group's handlers (once: a second registration of a group is a wiring bug and throws). */
  register<G extends ApiGroup>(group: G, handlers: GroupHandlers<G>): void;
  /** The staff panel's gate (once). Without one, every `staff` channel answers `unauthorized`. */
  setGate(gate: StaffGate): void;
  readonly dispatch: Dispatch;
}

type AnyHandler = (args: unknown) => Promise<Result<unknown>> | Result<unknown>;

export function createChannelRegistry(options: { logger?: Logger } = {}): ChannelRegistry {
  const logger = options.logger ?? silentLogger;
  const groups = new Map<ApiGroup, Record<string, AnyHandler>>();
  let gate: StaffGate | null = null;

  const dispatch: Dispatch = async (channel, rawArg) => {
    const row = channelRow(channel);
    if (!row) return fail('invalid_request', `Unknown channel: ${String(channel).slice(0, 80)}.`);
    const handler = groups.get(row.group)?.[row.method];
    if (!handler) return fail('invalid_request', 'This kiosk does not offer that operation.');
    if (row.spec.access === 'staff' && !gate?.touch()) return fail('unauthorized', STAFF_LOCKED_MESSAGE);
    if (NEEDS_SETUP_DONE.has(`${row.group}:${row.method}`) && gate?.setupPending?.()) return fail('invalid_request', SETUP_PENDING_MESSAGE);
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

  return {
    register(group, handlers) {
      if (groups.has(group)) throw new AvatarError('internal', `The "${group}" channels are registered twice.`);
      groups.set(group, handlers as unknown as Record<string, AnyHandler>);
    },
    setGate(next) {
      if (gate) throw new AvatarError('internal', 'The staff gate is set twice.');
      gate = next;
    },
    dispatch,
  };
}
