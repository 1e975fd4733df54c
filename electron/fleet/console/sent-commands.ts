/**
 * The commands this console sent, and who was asked: an answer counts only when it answers one of them,
 * from a kiosk that was asked. Any kiosk can publish an "answer" on its own result topic, naming any id
 * it read on a topic it may read (the fleet's, its group's): without this check one kiosk could answer a
 * command meant for another group and raise "N of M answered", or pass off a picture of its choosing as
 * the screenshot someone asked for.
 *
 * Bounded: the newest MAX_SENT commands, each kept until KEEP_AFTER_EXPIRY_MS after its expiry (a kiosk
 * that was offline answers when it is back, within the expiry). Clock-injected.
 */

/** Commands remembered (the oldest is forgotten first). */
export const MAX_SENT = 1000;
/** How long after its expiry an answer still counts (it may have been sent just before). */
export const KEEP_AFTER_EXPIRY_MS = 10 * 60 * 1000;

export interface SentCommand {
  id: string;
  cmd: string;
  /** The kiosks asked (by name, or a group's or the fleet's members as the console knew them). */
  expected: ReadonlySet<string>;
  expiresAtMs: number;
}

/** Whether an answer belongs to a sent command, and to which; else why not. */
export type Claim = { ok: true; command: SentCommand } | { ok: false; why: 'unknown_id' | 'not_asked' | 'other_command' };

export class SentCommands {
  private readonly sent = new Map<string, SentCommand>();

  constructor(
    private readonly now: () => number,
    private readonly limit = MAX_SENT,
  ) {}

  record(command: SentCommand): void {
    this.prune();
    this.sent.set(command.id, command);
    while (this.sent.size > this.limit) this.sent.delete(this.sent.keys().next().value!);
  }

  /** Forget a command that never left (the broker did not take it). */
  forget(id: string): void {
    this.sent.delete(id);
  }

  /** An answer from `kioskId` naming `id` and `cmd`. A kiosk may answer the same id again (QoS 1 repeats it). */
  claim(id: string | null, cmd: string | null, kioskId: string): Claim {
    const command = id === null ? undefined : this.sent.get(id);
    if (!command || this.now() > command.expiresAtMs + KEEP_AFTER_EXPIRY_MS) return { ok: false, why: 'unknown_id' };
    if (!command.expected.has(kioskId)) return { ok: false, why: 'not_asked' };
    // A kiosk names the command in its answer; one that is not the command sent is not its answer (a
    // refusal of a command it could not parse names none).
    if (cmd !== null && cmd !== command.cmd) return { ok: false, why: 'other_command' };
    return { ok: true, command };
  }

  get size(): number {
    return this.sent.size;
  }

  private prune(): void {
    const now = this.now();
    for (const [id, c] of this.sent) if (now > c.expiresAtMs + KEEP_AFTER_EXPIRY_MS) this.sent.delete(id);
  }
}
