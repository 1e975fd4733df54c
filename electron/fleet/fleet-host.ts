/**
 * The fleet features of a running kiosk, without Electron: opening hours (told to the kiosk's availability,
 * counted in /metrics) and, when `mqtt` is configured, the link to the operator's broker with its status,
 * ledger events and remote commands. The fleet-link feature (features/fleet-link.ts) starts it for both
 * hosts; each host gives the few actions only it can do (reload, restart, screenshot), and says in its own
 * words why it lacks one (`actions.lacks`). Every host has the avatar's volume (the kiosk's).
 */
import { Gauge, type Registry } from 'prom-client';
import type { LedgerTotals, OpeningInfo, ServiceHealth } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { overlay, resolveConfig, type ConfigEnv } from '../kiosk/config.ts';
import { DayFigures, localDayBounds } from '../kiosk/call-figures.ts';
import type { Kiosk } from '../kiosk/compose.ts';
import { policyLocks } from './managed-config.ts';
import { METRIC_PREFIX } from './metrics.ts';
import { APPLY_KEYS, type ApplySettings, type FleetControl } from './command-table.ts';
import type { ProxyRoute } from '../core/proxy.ts';
import { defaultKioskId, startMqttLink, type MqttLink } from './mqtt-link.ts';
import type { SafeUpdates } from './safe-updates.ts';
import { localLabel, watchOpeningHours, type OpeningState, type OpeningWatch } from './opening-hours.ts';

/** What the fleet needs of the credit ledger (operations/ledger.ts satisfies it). */
export interface LedgerFeed {
  totals(nowMs: number): LedgerTotals;
  onAppend(listener: (record: unknown) => void): () => void;
}

/** Where config.json is read and written (operations/settings.ts `SettingsPersistence`). */
export interface ConfigFileAccess {
  read(): Record<string, unknown>;
  write(next: Record<string, unknown>): Promise<void>;
}

/** The kiosk's services the fleet uses. */
export type FleetKiosk = Pick<Kiosk, 'config' | 'reconfigure' | 'events' | 'calls' | 'connection' | 'availability' | 'avatarVolume' | 'ageGateCounts' | 'auditViolations'> & Partial<Pick<Kiosk, 'health' | 'visitors'>>;

export interface FleetHostOptions {
  kiosk: FleetKiosk;
  /** Null when the staff operations (and their ledger) are not running. */
  ledger: LedgerFeed | null;
  dataDir: string;
  version: string;
  clock: Clock;
  logger?: Logger;
  /** For `apply`: the config file, the environment and the policy it is resolved with. */
  configFile: ConfigFileAccess;
  env: ConfigEnv;
  policy: Record<string, unknown>;
  appRoot: string;
  /** The metrics registry, when /metrics runs: an `avatar_kiosk_open` gauge is added to it. */
  registry?: Registry | null;
  /** The host's own actions (command-table.ts `HostCapabilities`): a host leaves out what it cannot do, and
   *  may say why in `lacks` (commands needing it are refused before any call is touched). */
  actions: Pick<FleetControl, 'reload' | 'restart' | 'screenshot' | 'lacks'> & { afterApply?: () => void };
  /** Why the administrator's policy was not applied as written (its problems), for the fleet status. */
  policyError?: string | null;
  /** Last error code seen (the metrics' health), for the status. */
  lastErrorCode?: () => string | null;
  /** Test hook: the link's reconnect delay. */
  reconnectMs?: number;
  /** How to reach the MQTT broker (the venue's proxy, core/proxy.ts); default direct. */
  mqttRoute?: ProxyRoute;
  /** Whether Chromium's sandbox is on, for the status (absent: not reported). */
  sandbox?: boolean;
  /** The running safe updates (they start after the host), for the status and the update commands. */
  updates?: () => SafeUpdates | null;
}

export interface FleetHost {
  readonly link: MqttLink | null;
  readonly opening: OpeningState;
  close(): Promise<void>;
}

function openingInfo(state: OpeningState, timeZone: string | null): OpeningInfo {
  return { open: state.open, nextOpenAt: state.nextOpenAtMs === null ? null : new Date(state.nextOpenAtMs).toISOString(), timeZone };
}

export function startFleetHost(options: FleetHostOptions): FleetHost {
  const { kiosk, clock } = options;
  const { calls } = kiosk;
  const logger = options.logger ?? silentLogger;
  const openGauge = options.registry
    ? new Gauge({ name: `${METRIC_PREFIX}open`, help: '1 inside the opening hours (or with none set), 0 while the kiosk is closed.', registers: [options.registry] })
    : null;
  let link: MqttLink | null = null;
  let lastFailure: string | null = null;
  /** The day's field figures of real calls, for the status (p50/p95). */
  const dayFigures = new DayFigures();

  const watch: OpeningWatch = watchOpeningHours({
    schedule: kiosk.config.schedule,
    clock,
    onChange: (state) => {
      const tz = kiosk.config.schedule?.timeZone ?? null;
      if (kiosk.config.schedule) {
        logger.info(state.open ? 'Opening hours: open' : 'Opening hours: closed', {
          next: state.nextChangeAtMs === null || !tz ? null : localLabel(state.nextChangeAtMs, tz),
        });
      }
      kiosk.availability.setOpening(openingInfo(state, tz));
      openGauge?.set(state.open ? 1 : 0);
      link?.statusChanged();
    },
  });

  const inCall = () => calls.running;
  const { afterApply: _afterApply, ...hostActions } = options.actions;
  const control: FleetControl = {
    inCall,
    async endCall() {
      // Recorded as the operator's hang-up, not the visitor's.
      await calls.hangup('operator');
    },
    ...hostActions,
    volume: kiosk.avatarVolume,
    updates: () => {
      const updates = options.updates?.() ?? null;
      if (!updates) return null;
      return {
        get status() {
          return updates.status;
        },
        check: () => updates.check(),
        installWhenIdle: () => updates.installWhenIdle(),
        async pin(version) {
          // Below the signer's floor: refused before anything is kept.
          updates.assertPinAllowed(version);
          await persistUpdatePin(version, options);
          logger.info('Updates: pin changed by the operator', { version });
          updates.pin(version);
        },
      };
    },
    async apply(settings) {
      const applied = await applyRemoteSettings(settings, options);
      watch.setSchedule(kiosk.config.schedule);
      options.actions.afterApply?.();
      return { applied };
    },
  };

  const mqtt = kiosk.config.mqtt;
  if (mqtt) {
    const kioskId = mqtt.kioskId ?? defaultKioskId();
    try {
      link = startMqttLink({
        settings: mqtt,
        kioskId,
        dataDir: options.dataDir,
        clock,
        logger,
        control,
        ...(options.reconnectMs !== undefined ? { reconnectMs: options.reconnectMs } : {}),
        ...(options.mqttRoute ? { route: options.mqttRoute } : {}),
        status: () => {
          const totals = options.ledger?.totals(clock.now()).today;
          const state = watch.state;
          return {
            version: options.version,
            mode: kiosk.connection.mode,
            phase: calls.state.phase,
            cast: kiosk.config.cast.map((m) => m.id),
            open: state.open,
            nextChangeAt: state.nextChangeAtMs === null ? null : new Date(state.nextChangeAtMs).toISOString(),
            today: { sessions: totals?.sessions ?? 0, credits: totals?.credits ?? 0, demoSessions: totals?.demoSessions ?? 0, ...localDayBounds(clock.now()) },
            lastErrorCode: options.lastErrorCode?.() ?? lastFailure,
            policyError: options.policyError ?? null,
            safety: {
              audience: kiosk.config.safety.audience,
              moderation: kiosk.config.safety.moderation,
              region: kiosk.config.safety.region,
              refusal: kiosk.config.safety.refusal,
              ageGate: kiosk.ageGateCounts(),
              auditViolations: kiosk.auditViolations(),
            },
            ...(kiosk.health ? { service: serviceOf(kiosk.health.current) } : {}),
            ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
            update: options.updates?.()?.status ?? null,
            ...(dayFigures.summary(clock.now()).calls > 0 ? { callFigures: dayFigures.summary(clock.now()) } : {}),
            avatarVolume: kiosk.avatarVolume.percent,
            // The day's funnel so far; it changes with the call states that republish the status.
            ...(kiosk.visitors ? { visitors: kiosk.visitors.today() } : {}),
          };
        },
      });
    } catch (error) {
      logger.error('The fleet link could not start; the kiosk runs without it', { message: toAvatarError(error, 'invalid_config').message });
    }
  }
  const offEvents = kiosk.events.onEvent((event) => {
    if (event.type === 'call-figures') {
      dayFigures.add(event.figures, clock.now());
      link?.statusChanged();
    }
    if (event.type === 'state' && event.state.phase === 'failed') lastFailure = event.state.error.code;
    if (event.type === 'state' || event.type === 'opening' || event.type === 'avatar-volume' || event.type === 'service') link?.statusChanged();
  });
  const offLedger = options.ledger?.onAppend((record) => {
    link?.publishRecord(record);
    link?.statusChanged();
  });

  return {
    get link() {
      return link;
    },
    get opening() {
      return watch.state;
    },
    async close() {
      offEvents();
      offLedger?.();
      watch.dispose();
      if (openGauge && options.registry) options.registry.removeSingleMetric(`${METRIC_PREFIX}open`);
      await link?.close();
    },
  };
}

/**
 * An operator's pin (null: none) into config.json: after the pinned version is installed and started, it
 * must still be pinned, or it would update straight back. Refused when the policy sets the pin (the
 * administrator's file wins, so the change would do nothing).
 */
export async function persistUpdatePin(version: string | null, options: Pick<FleetHostOptions, 'configFile' | 'policy'>): Promise<void> {
  if (isRecord(options.policy.update) && options.policy.update.pinVersion !== undefined) {
    throw new AvatarError('forbidden', 'The administrator\'s policy sets update.pinVersion; change it there.');
  }
  const current = options.configFile.read();
  const update = isRecord(current.update) ? { ...current.update } : {};
  if (version) update.pinVersion = version;
  else delete update.pinVersion;
  await options.configFile.write({ ...current, update });
}

/**
 * Apply an operator's allowed settings: into config.json (so they survive a restart), resolved with the
 * environment and the policy as at start-up, then into the running kiosk. A setting the policy
 * manages is refused (the administrator's file wins, so the change would do nothing).
 */
export async function applyRemoteSettings(
  settings: ApplySettings,
  options: Pick<FleetHostOptions, 'kiosk' | 'configFile' | 'env' | 'policy' | 'appRoot'>,
): Promise<string[]> {
  const { kiosk } = options;
  const patch: Record<string, unknown> = {};
  const applied: string[] = [];
  if (settings.avatar) {
    patch.avatar = { ...settings.avatar };
    applied.push(...Object.keys(settings.avatar).map((k) => `avatar.${k}`));
  }
  if (settings.idle) {
    patch.idle = { ...settings.idle };
    applied.push(...Object.keys(settings.idle).map((k) => `idle.${k}`));
  }
  if (settings.cast) {
    patch.castSelection = settings.cast;
    applied.push('cast');
  }
  if (settings.schedule !== undefined) applied.push('schedule');
  for (const key of applied) {
    const top = key === 'cast' ? 'castSelection' : key;
    // A block the policy refused is locked too: the administrator meant to set it.
    if (policyLocks(options.policy, top)) throw new AvatarError('invalid_request', `"${key}" is set by the administrator's policy file on this kiosk; change it there.`);
  }
  if (applied.length === 0) throw new AvatarError('invalid_request', `Nothing to apply; "apply" may change ${APPLY_KEYS.join(', ')}.`);
  const current = options.configFile.read();
  const next = overlay(current, patch);
  if (settings.schedule === null) delete next.schedule;
  else if (settings.schedule) next.schedule = settings.schedule;
  // The same checks as at start-up; a bad combination (a cast id that does not exist) is refused whole.
  const config = resolveConfig(next, options.env, { appRoot: options.appRoot, policy: options.policy });
  if (kiosk.calls.running) throw new AvatarError('invalid_request', 'A call started meanwhile; send the command again.');
  await options.configFile.write(next);
  await kiosk.reconfigure({ ...config, window: kiosk.config.window, rtcEngine: kiosk.config.rtcEngine });
  return applied.sort();
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function serviceOf(health: ServiceHealth): { status: string; message: string; action: string | null } {
  return { status: health.status, message: health.message, action: health.action };
}
