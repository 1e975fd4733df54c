/**
 * Simulated kiosks for the console's demo, its benchmark and its tests: each runs the real kiosk link
 * (mqtt-link.ts, its own on-disk event queue) against a pretend kiosk that goes through calls, writes
 * ledger-shaped records, answers every command of the table (command-table.ts) with the host's every
 * capability — a picture for `screenshot`, a volume for `set-volume`, a pretend update feed — and counts its
 * visitors' funnel of the day (core/funnel.ts) into its status as a kiosk does. Electron-free.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../core/clock.ts';
import { AvatarError } from '../../core/errors.ts';
import { CALL_LENGTH_BOUNDS_S, CALL_LENGTH_BUCKETS, emptyFunnelCounts, type FunnelCounts, type TapsAndLive } from '../../core/funnel.ts';
import { mqttSchema } from '../../kiosk/fleet-config.ts';
import { memoryAvatarVolume } from '../../kiosk/avatar-volume.ts';
import { localDayBounds } from '../../kiosk/call-figures.ts';
import type { FleetControl } from '../command-table.ts';
import { startMqttLink, type MqttLink } from '../mqtt-link.ts';
import type { UpdateStatus } from '../safe-updates.ts';

export interface SimulatedKioskOptions {
  url: string;
  kioskId: string;
  group?: string;
  username?: string;
  password?: string;
  topicPrefix: string;
  dataDir: string;
  clock: Clock;
  /** A PNG returned for `screenshot`. */
  screenshotPng: Buffer;
  version?: string;
  avatars?: string[];
  reconnectMs?: number;
  /** The ledger surface of its calls: `demo` (the default: the demo fleet's calls are no real money), or
   *  `direct` where a test stands it in for a kiosk on the real service (its credits count). */
  surface?: 'demo' | 'direct';
}

/** What a pretend visitor does in front of the kiosk, short of a conversation (startCall/endCall are those). */
export type PretendVisitor = 'walks-past' | 'stops-and-leaves' | 'taps-and-gives-up' | 'taps-and-fails' | 'is-refused';

/** Where the kiosk says it stands with its service (the status' `service`). */
export interface PretendService {
  status: string;
  message: string;
  action: string | null;
}

export interface SimulatedKiosk {
  readonly link: MqttLink;
  readonly inCall: boolean;
  /** Start a pretend call (phase live). */
  startCall(): void;
  /** End the call as a visitor would, with a ledger record (`end_reason`, credits). */
  endCall(endReason?: string, credits?: number, errorCode?: string): void;
  /** The next call's event is counted in the day's totals but never sent (as when a full queue drops it). */
  dropNextEvent(): void;
  /** A visitor who does not reach a conversation, counted in the day's funnel. */
  visitor(kind: PretendVisitor): void;
  /** The day's funnel so far, as the status carries it. */
  readonly visitors: { day: string; counts: FunnelCounts };
  /** Say another service status (unreachable, refused key…). */
  setService(service: PretendService): void;
  /** The pretend avatar volume (`set-volume`), 0–100. */
  readonly avatarVolume: number;
  /** Commands run here, in order (`end-call`, `apply`…). */
  readonly did: string[];
  close(): Promise<void>;
}

export function startSimulatedKiosk(options: SimulatedKioskOptions): SimulatedKiosk {
  const { clock } = options;
  const avatars = options.avatars ?? ['ava'];
  let phase = 'idle';
  let callStartMs: number | null = null;
  let open = true;
  // Today's totals, as the kiosk's ledger counts them: per local day of its clock.
  let sessions = 0;
  let credits = 0;
  let day = localDayBounds(clock.now()).day;
  const roll = () => {
    const now = localDayBounds(clock.now()).day;
    if (now === day) return;
    day = now;
    sessions = 0;
    credits = 0;
  };
  // As a kiosk's ledger counts its day: real calls in `sessions` and `credits`, demo calls (surface
  // `demo`, the default here: the demo fleet's calls are no real money) apart in `demoSessions`.
  const today = () => {
    roll();
    const bounds = localDayBounds(clock.now());
    return (options.surface ?? 'demo') === 'demo' ? { sessions: 0, credits: 0, demoSessions: sessions, ...bounds } : { sessions, credits, demoSessions: 0, ...bounds };
  };
  let dropNext = false;
  let name = 'Ava';
  const did: string[] = [];
  let service: PretendService =
    (options.surface ?? 'demo') === 'demo'
      ? { status: 'demo', message: 'Demo mode: the built-in emulator, no key needed.', action: null }
      : { status: 'connected', message: 'A simulated kiosk standing in for one that reaches its service.', action: null };
  // The funnel of the kiosk's day (the clock's UTC day here), started afresh when the day turns.
  let funnel = { day: dayOf(clock.now()), counts: emptyFunnelCounts() };
  const count = (steps: ReadonlyArray<'noticed' | 'approached' | 'greeted' | 'tapped' | 'gaveUp' | 'failed' | 'live' | 'endedWell' | 'endedBadly'>) => {
    const today = dayOf(clock.now());
    if (today !== funnel.day) funnel = { day: today, counts: emptyFunnelCounts() };
    for (const step of steps) funnel.counts[step]++;
    return funnel.counts;
  };
  /** A tap that went live, in a breakdown. */
  const tappedAndLive = (r: Record<string, TapsAndLive>, key: string) => {
    const t = (r[key] ??= { tapped: 0, live: 0 });
    t.tapped++;
    t.live++;
  };
  const volume = memoryAvatarVolume();
  volume.onChange(() => link.statusChanged());
  // A pretend feed for the update commands (the status leaves it out: nothing is ever installed here).
  const update: UpdateStatus = { phase: 'idle', model: 'not-packaged', off: 'a simulated kiosk installs nothing', ready: null, pinned: null, floor: null, installWhenIdle: false, lastCheckAt: null, lastError: null };
  const settings = mqttSchema.parse({
    url: options.url,
    kioskId: options.kioskId,
    topicPrefix: options.topicPrefix,
    ...(options.group ? { group: options.group } : {}),
    ...(options.username ? { username: options.username, password: options.password } : {}),
  });
  const record = (endReason: string, cost: number, errorCode?: string) => {
    const end = clock.now();
    const start = callStartMs ?? end - 60_000;
    roll();
    sessions++;
    credits += cost;
    return {
      kind: 'session',
      v: 1,
      start_at: new Date(start).toISOString(),
      live_at: new Date(start + 1000).toISOString(),
      end_at: new Date(end).toISOString(),
      live_id: null,
      surface: options.surface ?? 'demo',
      call_mode: 'video',
      time_to_live_ms: 1000,
      not_ready_retries: 0,
      reconnects: 0,
      end_reason: endReason,
      ended_by: 'client',
      billed_seconds: Math.round((end - start) / 1000),
      credits_cost: cost,
      recovered: false,
      avatar: avatars[sessions % avatars.length],
      ...(errorCode ? { error_code: errorCode } : {}),
    };
  };
  const link = startMqttLink({
    settings,
    kioskId: options.kioskId,
    dataDir: options.dataDir,
    clock,
    reconnectMs: options.reconnectMs ?? 2000,
    status: () => ({
      version: options.version ?? '0.1.0',
      mode: 'simulated',
      phase,
      cast: avatars,
      open,
      nextChangeAt: null,
      today: today(),
      lastErrorCode: null,
      avatarVolume: volume.percent,
      service,
      visitors: { day: funnel.day, counts: structuredClone(funnel.counts) },
    }),
    control: {
      inCall: () => phase === 'live',
      async endCall() {
        did.push('end-call');
        finish('operator', 1);
      },
      reload: () => void did.push('reload'),
      restart: () => void did.push('restart'),
      async screenshot() {
        did.push('screenshot');
        return { png: options.screenshotPng, width: pngWidth(options.screenshotPng), height: pngHeight(options.screenshotPng) };
      },
      async apply(s) {
        did.push('apply');
        if (s.cast?.some((c) => !avatars.includes(c))) throw new AvatarError('invalid_config', `There is no cast member "${s.cast.find((c) => !avatars.includes(c))}" on this kiosk.`);
        if (s.avatar?.name) name = s.avatar.name;
        if (s.schedule !== undefined) open = s.schedule === null || Object.keys(s.schedule.weekly).length > 0;
        const applied = Object.entries(s).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) && k !== 'schedule' ? Object.keys(v).map((sub) => `${k}.${sub}`) : [k]));
        return { applied: applied.sort(), name };
      },
      volume: {
        get percent() {
          return volume.percent;
        },
        async set(percent) {
          did.push('set-volume');
          return volume.set(percent);
        },
      },
      updates: () => ({
        get status() {
          return { ...update };
        },
        async check() {
          did.push('update-check');
          update.lastCheckAt = new Date(clock.now()).toISOString();
        },
        installWhenIdle() {
          did.push('update-install');
          update.installWhenIdle = true;
        },
        async pin(version) {
          did.push('update-pin');
          update.pinned = version;
        },
      }),
    } satisfies Required<Omit<FleetControl, 'lacks'>>,
  });
  function finish(endReason: string, cost: number, errorCode?: string): void {
    if (phase !== 'live') return;
    const lengthS = (clock.now() - (callStartMs ?? clock.now())) / 1000;
    const counts = count([NORMAL_ENDS.has(endReason) && !errorCode ? 'endedWell' : 'endedBadly']);
    counts.callLength[CALL_LENGTH_BUCKETS.find((b) => lengthS < CALL_LENGTH_BOUNDS_S[b])!]++;
    const r = record(endReason, cost, errorCode);
    if (dropNext) dropNext = false;
    else link.publishRecord(r);
    phase = 'idle';
    callStartMs = null;
    link.statusChanged();
  }
  return {
    link,
    get inCall() {
      return phase === 'live';
    },
    startCall() {
      // A visitor who stopped, was greeted and tapped; the call went live.
      const counts = count(['noticed', 'approached', 'greeted', 'tapped', 'live']);
      tappedAndLive(counts.byLanguage, 'en');
      tappedAndLive(counts.byCallMode, 'video');
      // The avatar its ledger record will name (record() counts the session first).
      tappedAndLive(counts.byAvatar, avatars[(sessions + 1) % avatars.length]!);
      phase = 'live';
      callStartMs = clock.now();
      link.statusChanged();
    },
    endCall(endReason = 'user_end', cost = 2, errorCode) {
      finish(endReason, cost, errorCode);
    },
    dropNextEvent() {
      dropNext = true;
    },
    visitor(kind) {
      if (kind === 'walks-past') count(['noticed']);
      else if (kind === 'stops-and-leaves') count(['noticed', 'approached', 'greeted']);
      else if (kind === 'is-refused') {
        count(['noticed', 'approached', 'greeted', 'tapped']).refused.closed++;
      } else count(['noticed', 'approached', 'greeted', 'tapped', kind === 'taps-and-gives-up' ? 'gaveUp' : 'failed']);
      link.statusChanged();
    },
    get visitors() {
      return { day: funnel.day, counts: structuredClone(funnel.counts) };
    },
    setService(next) {
      service = next;
      link.statusChanged();
    },
    get avatarVolume() {
      return volume.percent;
    },
    did,
    close: () => link.close(),
  };
}

/** End reasons of a call that went as the visitor wanted (the kiosk's own split of ended well / badly). */
const NORMAL_ENDS = new Set(['user_end', 'idle', 'max_call', 'closing', 'opening_hours']);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The demo's screenshot: the demo avatar's picture. */
export function demoScreenshot(appRoot: string): Buffer {
  return readFileSync(join(appRoot, 'resources', 'demo-avatar.png'));
}

// PNG IHDR: width and height are the first two 32-bit fields after the 8-byte signature and chunk header.
const pngWidth = (png: Buffer) => (png.length >= 24 ? png.readUInt32BE(16) : 0);
const pngHeight = (png: Buffer) => (png.length >= 24 ? png.readUInt32BE(20) : 0);
