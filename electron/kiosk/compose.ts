/**
 * The kiosk, wired: the one place that knows all of its services and how they depend on each other.
 * Callers (main/, browser/, operations/, fleet/, tests) take the service they need from the answer:
 *
 *   connection    which service, and how it is reached (service-connection.ts)
 *   key           the API key, its source, storing it (service-key.ts)
 *   availability  opening hours, the hold, what the attract screen may warm up (availability.ts)
 *   telemetry     each call's figures and quality (call-telemetry.ts)
 *   appearance    the page's view of the kiosk: cast, pictures, attention (appearance.ts)
 *   calls         the one running call (call-orchestrator.ts)
 *   spares        pre-warmed sessions (spare.ts)
 *   avatarVolume  how loud the avatar speaks (avatar-volume.ts; staff and the fleet set it)
 *   events        the event stream the renderer and observers hear (events.ts)
 *   health        whether the service answers, checked after each rebuild (service-health.ts)
 *   visitors      the visitor funnel: counts only, by hour (visitor-funnel.ts, docs/analytics.md)
 *
 * Only what crosses all of them is here: applying new settings and shutting down. The kiosk's channels
 * (`session`, `config`, `attract`) are registered into the host's registry (channels.ts).
 *
 * Invariants:
 * - The API key never leaves the kiosk's services: the page gets view models and RTC credentials only.
 * - Shutdown hangs up a running session exactly once, closes an unused spare (type 5), then the warm
 *   connection and the emulator; once it began nothing is built, warmed or started again.
 */
import { ok, type AttentionItem, type KeyProtectionWeak, type LanguageCode } from '../contract.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import type { CallMode } from '../core/protocol.ts';
import type { ProxyResolver } from '../core/proxy.ts';
import { createCachedRequestBuilder } from '../core/request-cache.ts';
import type { KeepAlive } from '../core/keep-alive.ts';
import type { TransportFactory } from '../core/transport.ts';
import type { startEmulator, EmulatorKnobs } from '../emulator/index.ts';
import { createAgeGate } from './age-gate.ts';
import { createAgeGateCounter, type AgeGateCounts } from './age-gate-counts.ts';
import { createAuditCount } from './audit-count.ts';
import { createAppearance, type Appearance } from './appearance.ts';
import { createAvailability, type Availability } from './availability.ts';
import { memoryAvatarVolume, openAvatarVolume, type AvatarVolume } from './avatar-volume.ts';
import { createKeepAliveStore } from './keep-alive-store.ts';
import { createCallOrchestrator, type CallOrchestrator } from './call-orchestrator.ts';
import { liveIdOf } from './call-states.ts';
import { createCallTelemetry, type CallFiguresView } from './call-telemetry.ts';
import { startOptionsFor } from './cast.ts';
import type { ChannelRegistry } from './channels.ts';
import type { CastEntry, KioskConfig } from './config.ts';
import { createEventBus, type KioskEvents } from './events.ts';
import { createServiceConnection, type ServiceConnectionView } from './service-connection.ts';
import { createServiceHealth, type ServiceHealthMonitor } from './service-health.ts';
import { createServiceKey, type ApiKeySource, type ServiceKeyView } from './service-key.ts';
import { SpareManager } from './spare.ts';
import { createVisitorFunnel, systemTimeZone, type VisitorFunnel } from './visitor-funnel.ts';
import { openVisitorFunnelStore, type VisitorFunnelStore } from './visitor-funnel-store.ts';

export interface KioskOptions {
  config: KioskConfig;
  /** The effective key (environment first, else the decrypted stored key), or null for demo mode. */
  apiKey: string | null;
  apiKeySource: ApiKeySource;
  /** How weakly a stored key is protected (kiosk/stored-key.ts `storedKeyWeak`). Default false. */
  apiKeyWeaklyProtected?: KeyProtectionWeak;
  /** Problems found before the kiosk was created (kiosk/attention.ts); cast problems are added here. */
  startupAttention?: AttentionItem[];
  clock?: Clock;
  logger?: Logger;
  /** The emulator to start in demo mode (tests inject knobs through `emulatorKnobs`). */
  startEmulator?: typeof startEmulator;
  emulatorKnobs?: Partial<EmulatorKnobs>;
  /** Store (encrypted) or clear the operator's key. Rejecting makes `key.set` fail. */
  persistApiKey?: (key: string | null) => Promise<void>;
  /** Read the avatar image as a data: URL for the attract screen (null when unavailable). */
  loadAvatarImage?: (path: string) => Promise<string | null>;
  /** Whether the screen is portrait (for the default `video.fit`); default: the configured window's shape. */
  portrait?: boolean;
  /** The control sockets' transport (tests); default: `ws` over the warm keep-alive agent. */
  transportFactory?: TransportFactory;
  /** The venue's proxy (main: Electron's `session.resolveProxy`). Default: none, every connection is direct. */
  proxy?: ProxyResolver;
  /** The keep-alive that works with a service URL, remembered across restarts (kiosk/keep-alive-store.ts).
   *  Default: each client starts with the default keep-alive and adapts in memory only. */
  keepAliveFor?: (serviceUrl: string) => KeepAlive;
  /**
   * RTC first, then billing (default true): conn_init waits until the renderer reports its side of the RTC
   * channel ready (`session.rtcReady`); a join failure ends the session with type 5 before any conn_init.
   * Only a caller with no renderer at all (a node test driving the kiosk alone) turns it off.
   */
  awaitRendererRtc?: boolean;
  /** Bound on the renderer's join before the session is given up (default 30 000 ms). */
  rtcReadyTimeoutMs?: number;
  /** Asked for a synthetic microphone and camera (`--demo-devices`); honoured in demo mode only. */
  demoDevices?: boolean;
  /** The avatar's volume, kept by the host in its data folder (avatar-volume.ts `openAvatarVolume`);
   *  default: 100 %, in memory only. */
  avatarVolume?: AvatarVolume;
  /** Check the service after each rebuild (default true). Off only for a test that counts the connections
   *  the warm-ups open, on a listener that never answers. */
  checkService?: boolean;
  /** Settings given but not used (kiosk/config-keeping.ts): a refused service URL is named by the check. */
  droppedSettings?: ReadonlyArray<{ field: string; source: string; message: string }>;
  /** Where the visitor funnel is kept (visitor-funnel-store.ts `openVisitorFunnelStore` on the data folder);
   *  default: in memory, in the system's time zone. The kiosk closes it on shutdown. */
  visitorStore?: VisitorFunnelStore;
  /** The host's data folder: the avatar's volume, the visitor funnel's counts and the keep-alive each
   *  service accepts are kept there (a restart keeps them); each store given above wins over it. Absent:
   *  all three in memory. */
  dataDir?: string;
  /** Where the kiosk's channels are registered (the host's registry); absent: a kiosk with no page, as in
   *  a test that drives the services directly. */
  channels?: ChannelRegistry;
}

export interface Kiosk {
  /** The configuration in use (the same object; read it, never mutate it). */
  readonly config: KioskConfig;
  readonly events: KioskEvents;
  readonly calls: CallOrchestrator;
  readonly connection: ServiceConnectionView;
  /** The key's source and storing it; the key itself stays inside (the connection reads it). */
  readonly key: ServiceKeyView;
  readonly availability: Availability;
  readonly telemetry: CallFiguresView;
  readonly appearance: Appearance;
  /** Pre-warmed sessions (diagnostics and tests; a settings change drops the spare with `discard`). */
  readonly spares: SpareManager;
  /** The age gate's counts since start (asked, confirmed, declined): staff, /metrics and the fleet read them. */
  ageGateCounts(): AgeGateCounts;
  /** Calls the service's content review ended (`audit_violation`) since start. */
  auditViolations(): number;
  /** The avatar's volume (staff's Status tab, the fleet's `set-volume`): in `PublicConfig`, and each change
   *  is an `avatar-volume` event for the page. */
  readonly avatarVolume: AvatarVolume;
  /** Whether the service answers (checked after each rebuild, again with backoff while it does not). */
  readonly health: Pick<ServiceHealthMonitor, 'current' | 'check'>;
  /** The visitor funnel (staff's Visitors tab, /metrics, the fleet status, `cli visitors`). */
  readonly visitors: VisitorFunnel;
  /** Apply a new configuration without a restart: the next session uses it; the client is rebuilt and the
   *  attract image reloaded. Refused while a session runs, and once shutdown began. */
  reconfigure(next: KioskConfig): Promise<void>;
  /** Hang up a running session (exactly once), close the spare, the connection and the emulator.
   *  Idempotent: later calls share the first. */
  shutdown(): Promise<void>;
}

export async function createKiosk(options: KioskOptions): Promise<Kiosk> {
  const logger = options.logger ?? silentLogger;
  const config = options.config;
  let shutdownPromise: Promise<void> | null = null;
  const closing = () => shutdownPromise !== null;
  const events = createEventBus(logger);
  const emit = events.emit;
  const buildRequest = createCachedRequestBuilder();
  const dir = options.dataDir;
  const avatarVolume = options.avatarVolume ?? (dir ? openAvatarVolume({ dir, logger }) : memoryAvatarVolume());
  const clock = options.clock ?? systemClock;
  const visitorStore = options.visitorStore ?? openVisitorFunnelStore({ ...(dir ? { dir } : {}), timeZone: systemTimeZone(), clock, logger });
  const keepAliveFor = options.keepAliveFor ?? (dir ? createKeepAliveStore({ dir, logger }).keepAliveFor : undefined);
  const visitors = createVisitorFunnel({ store: visitorStore, clock, presence: () => config.presence.cameraEnabled });
  events.onEvent((event) => visitors.onEvent(event));
  // A damaged counts file was kept aside: staff hear of it with the other start-up problems.
  const startupAttention = [...(options.startupAttention ?? [])];
  if (visitorStore.damaged) startupAttention.push({ kind: 'visitors', code: 'invalid_config', message: visitorStore.damaged.message });

  // Built in dependency order; the few callbacks that point back (a rebuild drops the spare and replays
  // the attract report; the key asks whether a call runs) are closures run only after all exist.
  const key = createServiceKey({
    apiKey: options.apiKey,
    apiKeySource: options.apiKeySource,
    ...(options.apiKeyWeaklyProtected !== undefined ? { weaklyProtected: options.apiKeyWeaklyProtected } : {}),
    ...(options.persistApiKey ? { persist: options.persistApiKey } : {}),
    logger,
    closing,
    callRunning: () => calls.running,
    onChange: () => rebuildAndCheck(),
  });
  const connection = createServiceConnection({
    config,
    key: () => key.value,
    closing,
    ...(options.clock ? { clock: options.clock } : {}),
    logger,
    ...(options.startEmulator ? { startEmulator: options.startEmulator } : {}),
    ...(options.emulatorKnobs ? { emulatorKnobs: options.emulatorKnobs } : {}),
    ...(options.transportFactory ? { transportFactory: options.transportFactory } : {}),
    ...(options.proxy ? { proxy: options.proxy } : {}),
    ...(keepAliveFor ? { keepAliveFor } : {}),
    // The old spare's room is closed with the client that made it; no new one until the new client.
    onDropped: () => spares.discard('settings_changed', { unblock: true }),
    // Spares may resume now, with this client.
    onReady: () => availability.replay(),
  });
  const health = createServiceHealth({
    connection,
    keySource: () => key.source,
    configuredUrl: () => (config.service.surface === 'gateway' ? config.service.gatewayUrl : config.service.baseUrl) ?? null,
    droppedUrl: () => options.droppedSettings?.find((p) => p.field === 'service.baseUrl' || p.field === 'service.gatewayUrl' || p.field === 'service') ?? null,
    closing,
    emit,
    logger,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  // The check runs in the background: start-up and a settings change do not wait for the service.
  const rebuildAndCheck = async (): Promise<void> => {
    await connection.rebuild();
    if (options.checkService !== false) void health.check();
  };
  const availability = createAvailability({
    logger,
    emit,
    closing,
    keepWarm: (showing) => connection.keepWarm(showing),
    // An adult kiosk makes no spare: its create body would carry `moderation: "disabled"` before any
    // visitor passed the age gate (docs/safety.md). The manager hears "attract screen not showing".
    spares: { report: (args) => spares.report(config.safety.audience === 'adult' ? { ...args, showing: false } : args), discard: (reason) => spares.discard(reason) },
  });
  const appearance = await createAppearance({
    config,
    logger,
    ...(options.loadAvatarImage ? { loadAvatarImage: options.loadAvatarImage } : {}),
    ...(options.portrait !== undefined ? { portrait: options.portrait } : {}),
    ...(options.demoDevices !== undefined ? { demoDevices: options.demoDevices } : {}),
    startupAttention,
    key,
    connection,
    availability,
    volume: avatarVolume,
    health,
  });
  const startOptions = (callMode: CallMode, member: CastEntry, language: LanguageCode) => startOptionsFor(config, callMode, member, language);
  const spares = new SpareManager({
    settings: config.prewarm,
    getClient: () => connection.client,
    startOptions: () => startOptions(appearance.cast[0]!.callMode, appearance.cast[0]!, config.defaultLanguage),
    emit: (event) => {
      logger.info(`Spare session ${event.status}`, { liveId: event.liveId, callMode: event.callMode, reason: event.reason });
      emit(event);
    },
    ...(options.clock ? { clock: options.clock } : {}),
    logger,
    transportFactory: connection.transportFactory,
    buildRequest,
    keepAlive: () => connection.keepAlive,
  });
  const telemetry = createCallTelemetry({
    clock: options.clock ?? systemClock,
    emit,
    cloudProxy: () => config.rtc.cloudProxy,
    currentLiveId: () => liveIdOf(calls.state),
  });
  const gateCounts = createAgeGateCounter();
  const audits = createAuditCount();
  events.onEvent((event) => audits.observe(event));
  const ageGate = createAgeGate({ posture: () => config.safety, counts: gateCounts, clock: options.clock ?? systemClock });
  const calls = createCallOrchestrator({
    config,
    ...(options.clock ? { clock: options.clock } : {}),
    logger,
    emit,
    closing,
    connection,
    // An adult kiosk's call starts only with a pass from its age gate (age-gate.ts).
    // Each refused tap is counted once, as what refused it (the visitor funnel's `refused`).
    availability: {
      refusal: () => {
        const closed = availability.refusal();
        if (closed) {
          visitors.refused('closed');
          return closed;
        }
        const gate = ageGate.admit();
        if (gate) visitors.refused('ageGate');
        return gate;
      },
    },
    onTap: (tap) => visitors.tap(tap),
    onOutOfOrder: () => visitors.refused('outOfOrder'),
    appearance,
    telemetry,
    spares,
    startOptions,
    buildRequest,
    ...(options.awaitRendererRtc !== undefined ? { awaitRendererRtc: options.awaitRendererRtc } : {}),
    ...(options.rtcReadyTimeoutMs !== undefined ? { rtcReadyTimeoutMs: options.rtcReadyTimeoutMs } : {}),
  });

  options.channels?.register('session', {
    start: (args) => calls.start(args),
    hangup: (args) => calls.hangup(args?.cause),
    getState: () => ok(calls.state),
    setMuted: (args) => calls.setMuted(args),
    reportMediaError: (args) => calls.reportMediaError(args),
    rtcReady: (args) => calls.rtcReady(args),
    reportQuality: (args) => telemetry.reportQuality(args),
    reportMilestone: (args) => telemetry.reportMilestone(args),
    ageGateAsk: () => ok(ageGate.ask()),
    ageGateAnswer: (args) => {
      const answer = ageGate.answer(args.confirmed);
      // The visitor said "no": a tap that created nothing.
      if (!args.confirmed) visitors.refused('ageGate');
      return ok(answer);
    },
    ageGateStaffUnlock: () => ok(ageGate.staffUnlock()),
  });
  options.channels?.register('config', { get: () => appearance.getConfig() });
  options.channels?.register('attract', {
    report: (args) => availability.report(args),
    visitorStep: (args) => ok({ counted: visitors.step(args.step) }),
  });
  // Why a call is hung up decides whether it ended well (the visitor's end, idle) or badly.
  calls.onHangupCause((cause, liveId) => visitors.noteCause(cause, liveId));

  // A call that failed on the service's side (no answer, a refused key) may mean the service changed
  // since the last check: check again, so the attract screen says so before the next visitor taps.
  events.onEvent((event) => {
    if (event.type !== 'state' || event.state.phase !== 'failed' || closing()) return;
    if (['network', 'timeout', 'server', 'unauthorized', 'forbidden', 'connection_lost'].includes(event.state.error.code)) void health.check();
  });

  await rebuildAndCheck();
  // Each change to the page (after shutdown the event listeners are gone: a late change reaches no one).
  avatarVolume.onChange((percent) => emit({ type: 'avatar-volume', percent }));

  return {
    config,
    events,
    calls,
    connection,
    key,
    availability,
    telemetry,
    appearance,
    spares,
    ageGateCounts: () => gateCounts.snapshot(),
    auditViolations: () => audits.count,
    avatarVolume,
    health,
    visitors,
    async reconfigure(next) {
      if (closing()) throw new AvatarError('cancelled', 'The kiosk is shutting down.');
      if (calls.running) throw new AvatarError('invalid_request', 'Hang up the current session before changing the settings.');
      // A setting removed (an optional key absent from `next`, such as the opening hours) goes too.
      for (const k of Object.keys(config)) if (!Object.hasOwn(next, k)) delete (config as Record<string, unknown>)[k];
      Object.assign(config, next);
      await appearance.reload();
      await rebuildAndCheck();
      // The page shows the new name, picture and cast without a reload.
      emit({ type: 'config-changed' });
    },
    shutdown() {
      shutdownPromise ??= (async () => {
        const sparesClosed = spares.close(); // type 5 to an unused spare, exactly once, alongside the hangup
        await calls.shutdown();
        await sparesClosed;
        health.close();
        visitorStore.close();
        events.clear();
        await connection.close();
      })();
      return shutdownPromise;
    },
  };
}
