/**
 * The fleet's commands as one table. Each row says: the command's arguments (zod), whether it would
 * interrupt a visitor's call (refused during one unless `force`), what it needs of the host (a host that
 * lacks it answers `unsupported` before anything else happens), a one-line summary, how the console's
 * page and the CLI take its one argument, and its handler. Everything else follows from this table:
 *  - the kiosk's parser and schema (commands.ts) and its dispatcher (mqtt-link.ts `runCommand`);
 *  - the console: its checks (the same parser, console/link.ts) and its buttons (`commandViews()`, sent to
 *    the page in its first frame);
 *  - the CLI's parser and help (cli/fleet.ts);
 *  - the simulated kiosk (console/simulated.ts answers every row);
 *  - the table in docs/fleet-commands.md (test/unit/project/docs-match-code.test.ts holds it to this one).
 *
 * Adding a command: one row here with its handler (docs/architecture.md, "Adding a fleet command").
 * Electron-free.
 */
import { z } from 'zod';
import { AVATAR_VOLUME_MAX, AVATAR_VOLUME_MIN, avatarVolumeSchema } from '../contract.ts';
import type { AvatarVolume } from '../kiosk/avatar-volume.ts';
import { scheduleSchema } from '../kiosk/fleet-config.ts';
import type { CommandArgView, CommandView } from './console/view.ts';
import type { UpdateStatus } from './safe-updates.ts';

// ---------------------------------------------------------------------------------------------------
// What commands act on

/** A screenshot larger than this is refused rather than published (brokers cap message sizes). */
export const MAX_SCREENSHOT_BYTES = 8 * 1024 * 1024;

export interface Screenshot {
  png: Buffer;
  width: number;
  height: number;
}

/** What only some hosts can do. A command that needs one the host lacks is answered `unsupported`. */
export interface HostCapabilities {
  /** Reload the kiosk page. */
  reload(): Promise<void> | void;
  /** Restart the kiosk; called after the answer has reached the broker. */
  restart(): Promise<void> | void;
  /** The kiosk window as PNG, without the visitor's camera preview. */
  screenshot(): Promise<Screenshot>;
  /** The avatar's volume, kept across restarts (kiosk/avatar-volume.ts). */
  volume: Pick<AvatarVolume, 'percent' | 'set'>;
}
export type HostCapability = keyof HostCapabilities;

/** The refusal when a host lacks a capability and does not say why itself (`FleetControl.lacks`). */
export const MISSING_CAPABILITY: Record<HostCapability, string> = {
  reload: 'This kiosk cannot reload its page from afar.',
  restart: 'This kiosk cannot restart itself from afar.',
  screenshot: 'This kiosk has no window to capture.',
  volume: 'This kiosk cannot change the avatar\'s volume.',
};

/** What the update commands need (fleet-host.ts builds it on safe-updates.ts). */
export interface FleetUpdates {
  readonly status: UpdateStatus;
  check(): Promise<void>;
  installWhenIdle(): void;
  /** Pin (or unpin, null) and keep it across restarts; throws `forbidden` when the policy sets the pin. */
  pin(version: string | null): Promise<void>;
}

/** What remote commands act on; the host implements it (fleet-host.ts builds it for both hosts). */
export interface FleetControl extends Partial<HostCapabilities> {
  /** A visitor's call is under way (a command that would interrupt it needs `force`). */
  inCall(): boolean;
  /** Hang up the call (type 5 to the service); resolves when it is over. */
  endCall(): Promise<void>;
  /** Apply allowed settings (validated already); answers what changed. */
  apply(settings: ApplySettings): Promise<{ applied: string[] }>;
  /** The update commands act on this; null when the kiosk has no update feed. */
  updates?(): FleetUpdates | null;
  /** Why this host lacks a capability, in its own words (default: `MISSING_CAPABILITY`). */
  lacks?: Partial<Record<HostCapability, string>>;
}

// ---------------------------------------------------------------------------------------------------
// Arguments

/** The settings `apply` may change (dotted, as the operator writes them). */
export const APPLY_KEYS = ['avatar.name', 'avatar.persona', 'cast', 'schedule', 'idle.promptSeconds', 'idle.hangupSeconds'] as const;

export const applySettingsSchema = z.strictObject({
  avatar: z.strictObject({ name: z.string().min(1).max(64).optional(), persona: z.string().min(1).max(20_000).optional() }).optional(),
  /** Which configured cast members the attract screen offers, in this order (ids from `avatars`). */
  cast: z.array(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i)).min(1).max(12).optional(),
  /** Opening hours; null removes them (always open). */
  schedule: scheduleSchema.nullable().optional(),
  idle: z.strictObject({ promptSeconds: z.number().int().min(10).max(600).optional(), hangupSeconds: z.number().int().min(5).max(120).optional() }).optional(),
});
export type ApplySettings = z.infer<typeof applySettingsSchema>;

const versionSchema = z.string().regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, 'must be a version such as "1.4.2", or null').nullable();

// ---------------------------------------------------------------------------------------------------
// The rows

/** A handler's answer: the `result` of an ok answer, or a refusal with its code. */
export type CommandOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; code: string; message: string };

/** What a handler gets besides its arguments. */
export interface CommandContext<N extends HostCapability | null> {
  control: FleetControl;
  /** The capability the row needs (present: the link refused the command otherwise). */
  host: N extends HostCapability ? HostCapabilities[N] : undefined;
  /** The kiosk's version (its status). */
  version: string;
  /** The largest message the broker takes (its CONNACK), or null when it did not say. */
  brokerMaxPacket: number | null;
}

export interface CommandRow<S extends z.ZodRawShape = z.ZodRawShape, N extends HostCapability | null = HostCapability | null> {
  /** One line: what it does (the console's hint, the CLI's help, the docs' table). */
  summary: string;
  /** The console's button. */
  label: string;
  /** Its fields beside `id`, `force` and `expiresAt`. */
  args: S;
  /** The one argument the console and the CLI ask for (a field of `args`), or null. */
  arg: CommandArgView | null;
  /** Would cut a live call short: refused during one unless `force` (then the call is ended first). */
  interrupts: boolean;
  needs: N;
  /** One at a time: a second one while the first runs is answered `busy` with this. */
  oneAtATime?: string;
  run(args: z.output<z.ZodObject<S>>, ctx: CommandContext<N>): Promise<CommandOutcome> | CommandOutcome;
  /** After the answer has been published (a restart must not cut its own answer off). */
  afterAnswer?(ctx: CommandContext<N>): Promise<void> | void;
}

/** Types a row (the compiler checks its handler against its own arguments and capability). */
const row = <S extends z.ZodRawShape, N extends HostCapability | null>(r: CommandRow<S, N>): CommandRow<S, N> => r;
const done = (result: Record<string, unknown>): CommandOutcome => ({ ok: true, result });
const NO_UPDATES: CommandOutcome = { ok: false, code: 'unavailable', message: 'Updates are not set up on this kiosk (no update.url in its settings).' };
/** An update command's handler: `act` on the kiosk's updates, answered with their status (none: `unavailable`). */
const withUpdates =
  <A>(act: (updates: FleetUpdates, args: A) => Promise<void> | void) =>
  async (args: A, { control }: CommandContext<null>): Promise<CommandOutcome> => {
    const updates = control.updates?.() ?? null;
    if (!updates) return NO_UPDATES;
    await act(updates, args);
    return done({ update: updates.status });
  };

export const FLEET_COMMANDS = {
  ping: row({
    summary: 'Is it there? Answers with its version.',
    label: 'Ping',
    args: {},
    arg: null,
    interrupts: false,
    needs: null,
    run: (_args, { version }) => done({ pong: true, version }),
  }),
  reload: row({
    summary: 'Reload the kiosk page.',
    label: 'Reload',
    args: {},
    arg: null,
    interrupts: true,
    needs: 'reload',
    async run(_args, { host }) {
      await host();
      return done({ reloaded: true });
    },
  }),
  restart: row({
    summary: 'Restart the kiosk app, once the answer is sent.',
    label: 'Restart',
    args: {},
    arg: null,
    interrupts: true,
    needs: 'restart',
    run: () => done({ restarting: true }),
    afterAnswer: ({ host }) => host(),
  }),
  'end-call': row({
    summary: 'Hang up a call in progress (recorded as the operator\'s).',
    label: 'End call',
    args: {},
    arg: null,
    interrupts: false,
    needs: null,
    async run(_args, { control }) {
      const was = control.inCall();
      if (was) await control.endCall();
      return done({ ended: was });
    },
  }),
  screenshot: row({
    summary: 'A picture of the kiosk screen, without the camera preview.',
    label: 'Screenshot',
    args: {},
    arg: null,
    interrupts: false,
    needs: 'screenshot',
    oneAtATime: 'A screenshot is being taken; ask again when it has been answered.',
    async run(_args, { host, brokerMaxPacket }) {
      const shot = await host();
      // Base64 makes it 4/3 as large; the broker's own limit (CONNACK) is respected too.
      const packetBytes = Math.ceil(shot.png.length / 3) * 4 + 1024;
      const overBroker = brokerMaxPacket !== null && packetBytes > brokerMaxPacket;
      if (shot.png.length > MAX_SCREENSHOT_BYTES || overBroker) {
        return { ok: false, code: 'too_large', message: `The screenshot is ${shot.png.length} bytes, more than ${overBroker ? `the broker takes (${brokerMaxPacket} bytes a message)` : MAX_SCREENSHOT_BYTES}.` };
      }
      return done({ mime: 'image/png', width: shot.width, height: shot.height, png: shot.png.toString('base64') });
    },
  }),
  apply: row({
    summary: 'Change allowed settings, kept in config.json.',
    label: 'Apply settings',
    args: { settings: applySettingsSchema },
    arg: { field: 'settings', kind: 'json', label: 'Settings to apply (avatar.name, avatar.persona, cast, schedule, idle)', example: '{\n  "avatar": { "name": "Ava" }\n}' },
    interrupts: true,
    needs: null,
    run: async ({ settings }, { control }) => done(await control.apply(settings)),
  }),
  // Updates (fleet/safe-updates.ts): check the feed now; install at the next moment without a call (never
  // during one, so no `force`); stay on (or go back to) a version, null to follow the channel again.
  'update-check': row({
    summary: 'Check the update feed now.',
    label: 'Check for updates',
    args: {},
    arg: null,
    interrupts: false,
    needs: null,
    run: withUpdates((updates) => updates.check()),
  }),
  'update-install': row({
    summary: 'Install the waiting update at the next moment without a call.',
    label: 'Install update',
    args: {},
    arg: null,
    interrupts: false,
    needs: null,
    run: withUpdates((updates) => updates.installWhenIdle()),
  }),
  'update-pin': row({
    summary: 'Stay on (or go back to) a version; null follows the channel again.',
    label: 'Pin version',
    args: { version: versionSchema },
    arg: { field: 'version', kind: 'text', label: 'Version to pin (empty: follow the channel)', example: '1.4.2' },
    interrupts: false,
    needs: null,
    run: withUpdates<{ version: string | null }>((updates, { version }) => updates.pin(version)),
  }),
  'set-volume': row({
    summary: 'Turn the avatar up or down: a whole percent, 0 to 100, kept across restarts.',
    label: 'Set volume',
    args: { percent: avatarVolumeSchema },
    arg: { field: 'percent', kind: 'integer', label: `Avatar volume (${AVATAR_VOLUME_MIN}–${AVATAR_VOLUME_MAX} %)`, min: AVATAR_VOLUME_MIN, max: AVATAR_VOLUME_MAX, example: 80 },
    interrupts: false,
    needs: 'volume',
    run: async ({ percent }, { host }) => done({ avatarVolume: await host.set(percent) }),
  }),
} as const;

export type FleetCommandTable = typeof FLEET_COMMANDS;
export type CommandName = keyof FleetCommandTable & string;

/** The command names, in the table's order. */
export const COMMAND_NAMES = Object.keys(FLEET_COMMANDS) as CommandName[];

/** A row, by name, for code that handles every command alike (the link's dispatcher). */
export function commandRow(name: CommandName): CommandRow {
  return FLEET_COMMANDS[name] as unknown as CommandRow;
}

/** The commands as the console's page shows them (plain data: it carries no code to the page). */
export function commandViews(): CommandView[] {
  return COMMAND_NAMES.map((cmd) => {
    const r = commandRow(cmd);
    return { cmd, label: r.label, summary: r.summary, interrupts: r.interrupts, arg: r.arg };
  });
}
