/**
 * What a remote command must get past before it runs, without Electron or a broker: a rate limit, an
 * expiry, and the ids already run, kept on disk so that nothing runs twice — not after a reconnect, not
 * after a restart, not when the broker delivers a QoS 1 message again.
 *
 * Why each one:
 *  - the command channel is a broker anyone with the operator's login (or a bug in a script) can flood:
 *    the rate limit keeps a burst of thousands of commands from each doing work;
 *  - the persistent session (mqtt-link.ts) makes the broker keep commands for an offline kiosk: without an
 *    expiry a `restart` sent last week would run at the next connect. A command carries its expiry as
 *    MQTT 5 message expiry (the broker drops it when due) and/or `expiresAt` in its body (checked here
 *    against the kiosk's clock); one with neither is refused;
 *  - the answers remembered per id carry no bulky bodies (a screenshot's picture is sent once, never kept).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Clock } from '../core/clock.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import type { CommandResult } from './commands.ts';

/** A command may be valid at most this long (an `expiresAt` further ahead, or a longer message expiry, is refused). */
export const MAX_COMMAND_LIFETIME_MS = 24 * 60 * 60_000;
/** Commands that may run at once after a quiet spell… */
export const COMMAND_BURST = 10;
/** …and then one per this many milliseconds. */
export const COMMAND_REFILL_MS = 1000;
/** Ids (and their compact answers) remembered on disk. */
export const REMEMBERED_IDS = 500;
export const COMMANDS_FILE = 'fleet-commands.json';

/** A token bucket on an injected clock. */
export interface RateLimiter {
  /** Take one token; false when the bucket is empty. */
  take(): boolean;
}

export function createRateLimiter(clock: Clock, burst = COMMAND_BURST, refillMs = COMMAND_REFILL_MS): RateLimiter {
  let tokens = burst;
  let lastMs = clock.now();
  return {
    take() {
      const now = clock.now();
      const earned = Math.floor((now - lastMs) / refillMs);
      if (earned > 0) {
        tokens = Math.min(burst, tokens + earned);
        lastMs = tokens === burst ? now : lastMs + earned * refillMs;
      }
      if (tokens <= 0) return false;
      tokens--;
      return true;
    },
  };
}

/** Why a command is refused for its expiry (null when it may run). `messageExpirySeconds` is what the
 *  broker says is left of the MQTT 5 message expiry, when the publisher set one. */
export function expiryProblem(expiresAt: string | undefined, messageExpirySeconds: number | undefined, nowMs: number): { code: 'expired' | 'invalid_request'; message: string } | null {
  if (expiresAt === undefined && messageExpirySeconds === undefined) {
    return {
      code: 'invalid_request',
      message: 'The command carries no expiry: set "expiresAt" (an ISO time) in it, or publish it with an MQTT 5 message expiry interval, so a command kept for an offline kiosk cannot run long after it was meant.',
    };
  }
  if (messageExpirySeconds !== undefined && messageExpirySeconds * 1000 > MAX_COMMAND_LIFETIME_MS) {
    return { code: 'invalid_request', message: `The command's message expiry (${messageExpirySeconds} s) is longer than the ${MAX_COMMAND_LIFETIME_MS / 3_600_000} h a command may wait.` };
  }
  if (expiresAt !== undefined) {
    const atMs = Date.parse(expiresAt);
    if (atMs <= nowMs) return { code: 'expired', message: `The command expired at ${expiresAt} (the kiosk's clock says ${new Date(nowMs).toISOString()}); it was not run.` };
    if (atMs - nowMs > MAX_COMMAND_LIFETIME_MS) return { code: 'invalid_request', message: `"expiresAt" (${expiresAt}) is more than ${MAX_COMMAND_LIFETIME_MS / 3_600_000} h ahead.` };
  }
  return null;
}

const entrySchema = z.strictObject({
  id: z.string().max(64),
  cmd: z.string().max(32),
  atMs: z.number().int().min(0),
  /** The compact answer; absent while the command is running (or when the kiosk stopped during it). */
  answer: z.record(z.string(), z.unknown()).optional(),
});
type Entry = z.infer<typeof entrySchema>;
const fileSchema = z.strictObject({ v: z.literal(1), done: z.array(z.unknown()).max(10_000) });

/** The ids of commands already started, with their compact answers, kept on disk. */
export interface CommandLog {
  /** The remembered answer for `id`: the first answer (compact), or a refusal when it was started but
   *  never answered (the kiosk stopped during it); null for a new id. */
  earlier(id: string, nowIso: string): CommandResult | null;
  /** Remember that `id` starts now (written to disk before it runs). */
  started(id: string, cmd: string): void;
  /** Remember its answer, without bulky bodies. */
  finished(result: CommandResult): void;
}

export function openCommandLog(options: { dir: string; clock: Clock; logger?: Logger; limit?: number }): CommandLog {
  const logger = options.logger ?? silentLogger;
  const limit = options.limit ?? REMEMBERED_IDS;
  const path = join(options.dir, COMMANDS_FILE);
  const entries = new Map<string, Entry>();
  try {
    const file = fileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (file.success) {
      for (const item of file.data.done) {
        const e = entrySchema.safeParse(item);
        if (e.success) entries.set(e.data.id, e.data);
      }
    }
  } catch {
    // first start, or a damaged file: start with none (a damaged file cannot be trusted either way)
  }
  const save = () => {
    while (entries.size > limit) entries.delete(entries.keys().next().value!);
    try {
      mkdirSync(options.dir, { recursive: true });
      const tmp = `${path}.tmp`;
      writeFileSync(tmp, JSON.stringify({ v: 1, done: [...entries.values()] }), { mode: 0o600 });
      renameSync(tmp, path);
    } catch (error) {
      logger.error('Fleet link: the list of commands already run could not be saved', { error: String(error) });
    }
  };
  return {
    earlier(id, nowIso) {
      const e = entries.get(id);
      if (!e) return null;
      if (e.answer) return e.answer as unknown as CommandResult;
      return {
        id,
        cmd: e.cmd,
        ok: false,
        error: { code: 'duplicate', message: `Command "${id}" (${e.cmd}) was started at ${new Date(e.atMs).toISOString()} and never answered (the kiosk stopped during it); it is not run again. Send a new id to run it.` },
        at: nowIso,
      };
    },
    started(id, cmd) {
      entries.delete(id);
      entries.set(id, { id, cmd, atMs: options.clock.now() });
      save();
    },
    finished(result) {
      if (result.id === null) return;
      const e = entries.get(result.id);
      if (!e) return;
      e.answer = compactAnswer(result) as unknown as Record<string, unknown>;
      save();
    },
  };
}

/** The answer as remembered: a screenshot's picture is left out (it was sent once; a repeat says so). */
export function compactAnswer(result: CommandResult): CommandResult {
  if (!result.ok || typeof result.result.png !== 'string') return result;
  const { png: _png, ...rest } = result.result;
  return { ...result, result: { ...rest, png: null, note: 'The picture was sent with the first answer; send a new id for a new screenshot.' } };
}
