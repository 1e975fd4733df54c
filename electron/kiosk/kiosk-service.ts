/**
 * The main process's behaviour, without Electron: what each IPC channel does, which service the kiosk
 * talks to (demo emulator, direct surface with our key, or a gateway), the one running session, and
 * how it ends. `ipc.ts`/`index.ts` only wire this to Electron, so everything here runs under plain Node
 * (unit and integration tests drive it against the real emulator).
 *
 * Invariants:
 * - The API key never leaves this module: PublicConfig says only `hasApiKey`; the renderer receives RTC
 *   credentials (in the `credentials` event) and view models, nothing else.
 * - At most one session runs at a time; a running session is hung up exactly once on shutdown.
 * - Demo mode (no key, direct surface): the emulator runs in-process on 127.0.0.1, port 0, and the core
 *   talks to it with the emulator's own demo key; the real key does not exist in that mode.
 */
import { extname } from 'node:path';
import {
  CHANNELS,
  fail,
  isKnownChannel,
  ok,
  parseArgs,
  type Channel,
  type ChannelResults,
  type HangupCause,
  type KioskEvent,
  type MediaErrorArgs,
  type MediaErrorKind,
  type PublicConfig,
  type Result,
  type SetApiKeyArgs,
  type SetMutedArgs,
  type StartArgs,
  type RtcReadyArgs,
  type CallFigures,
  type CallMilestoneArgs,
  type CallQualityArgs,
  type LastCallQuality,
  type AttractReportArgs,
  type AttentionItem,
  type KeyProtectionWeak,
  type HoldReason,
  type OpeningInfo,
  type LanguageCode,
} from '../contract.ts';
import { castAttention } from './attention.ts';
import type { Clock } from '../core/clock.ts';
import { readRegularFile } from '../core/bounded-read.ts';
import { AvatarError, toAvatarError, type ErrorCode, type ErrorInfo } from '../core/errors.ts';
import { addSecret, silentLogger, type Logger } from '../core/log.ts';
import { ServiceClient } from '../core/rest-client.ts';
import { SessionController } from '../core/session-controller.ts';
import { KeepAlive } from '../core/keep-alive.ts';
import type { SessionEvent, SessionState, ServiceTarget, StartOptions } from '../core/session-types.ts';
import { parseServiceTarget } from '../core/surface.ts';
import { startEmulator as defaultStartEmulator, type EmulatorHandle, type EmulatorKnobs } from '../emulator/index.ts';
import { personaFor, type CastEntry, type KioskConfig } from './config.ts';
import { checkCast, configuredPortrait, publicCast, resolveVideoFit, usableCast } from './cast.ts';
import type { CallMode } from '../core/protocol.ts';
import type { TransportFactory } from '../core/transport.ts';
import { SpareManager, type TakenSpare } from './spare.ts';
import { createWsTransportFactory, wsTransportFactory } from '../core/transport.ts';
import { nodeFetch, WarmHttp } from '../core/warm-http.ts';
import { proxyAgent, routeFor, type ProxyResolver, type ProxyRoute } from '../core/proxy.ts';
import { createCachedRequestBuilder } from '../core/request-cache.ts';
import { systemClock, type TimerHandle } from '../core/clock.ts';
import { createDispatcher, type Dispatch, type HandlerTable, type StaffGate } from './dispatch.ts';

export type ApiKeySource = 'env' | 'stored' | 'none';
type RunningEmulator = EmulatorHandle;
type TerminalPhase = 'ended' | 'failed';

export interface KioskServiceOptions {
  config: KioskConfig;
  /** The effective key (environment first, else the decrypted stored key), or null for demo mode. */
  apiKey: string | null;
  apiKeySource: ApiKeySource;
  /** How weakly a stored key is protected (kiosk/stored-key.ts `storedKeyWeak`). Default false. */
  apiKeyWeaklyProtected?: KeyProtectionWeak;
  /** Problems found before the service was created (kiosk/attention.ts); cast problems are added here. */
  startupAttention?: AttentionItem[];
  clock?: Clock;
  logger?: Logger;
  /** The emulator to start in demo mode (tests inject knobs through `emulatorKnobs`). */
  startEmulator?: typeof defaultStartEmulator;
  emulatorKnobs?: Partial<EmulatorKnobs>;
  /** Store (encrypted) or clear the operator's key. Rejecting makes `setApiKey` fail. */
  persistApiKey?: (key: string | null) => Promise<void>;
  /** Read the avatar image as a data: URL for the attract screen (null when unavailable). */
  loadAvatarImage?: (path: string) => Promise<string | null>;
  /** Whether the screen is portrait (for the default `video.fit`); default: the configured window's shape. */
  portrait?: boolean;
  /** The control sockets' transport (tests); default: `ws` over the warm keep-alive agent. */
  transportFactory?: TransportFactory;
  /** The venue's proxy (main: Electron's `session.resolveProxy`); asked when the client is built, for the
   *  service's origin. Default: none, every connection is direct. */
  proxy?: ProxyResolver;
  /**
   * RTC first, then billing (default true): conn_init waits until the renderer reports its side of the RTC
   * channel ready (`session.rtcReady`); a join failure ends the session with type 5 before any conn_init.
   * Only a caller with no renderer at all (a node test driving main alone) turns it off.
   */
  awaitRendererRtc?: boolean;
  /** Bound on the renderer's join before the session is given up (default 30 000 ms). */
  rtcReadyTimeoutMs?: number;
  /** Asked for a synthetic microphone and camera (`--demo-devices`); honoured in demo mode only. */
  demoDevices?: boolean;
  /** The keep-alive that works with a service URL, remembered across restarts (kiosk/keep-alive-store.ts).
   *  Default: each client starts with the default keep-alive and adapts in memory only. */
  keepAliveFor?: (serviceUrl: string) => KeepAlive;
}

/** Staff operations, attached after creation (electron/operations/staff-ops.ts): they bring the `staff`
 *  and `app` groups of the API and the staff panel's gate, and hear each hangup request's cause first
 *  (for the ledger). */
export interface KioskExtension {
  readonly handlers: Pick<HandlerTable, 'staff' | 'app'>;
  readonly gate: StaffGate;
  onHangupRequest?(cause: HangupCause, liveId: string | null): void;
}

export interface KioskService {
  /** The single IPC entry point (dispatch.ts): unknown channels and bad arguments answer
   *  `invalid_request`, staff channels need the unlocked panel; nothing throws. */
  handle: Dispatch;
  start(args?: StartArgs): Promise<Result<ChannelResults[typeof CHANNELS.sessionStart]>>;
  /** Hang up (type 5 to the service); `cause` is recorded (the ledger's end reason), default `visitor`. */
  hangup(cause?: HangupCause): Promise<Result<void>>;
  getState(): Promise<Result<SessionState>>;
  setMuted(args: SetMutedArgs): Promise<Result<void>>;
  reportMediaError(args: MediaErrorArgs): Promise<Result<void>>;
  /** The renderer's side of the session's RTC channel is ready: conn_init goes out now. */
  rtcReady(args: RtcReadyArgs): Promise<Result<{ accepted: boolean }>>;
  getConfig(): Promise<Result<PublicConfig>>;
  setApiKey(args: SetApiKeyArgs): Promise<Result<PublicConfig>>;
  /** Session events plus `{type:'muted'}`; returns the unsubscribe function. */
  onEvent(listener: (event: KioskEvent) => void): () => void;
  /** Each hangup the renderer asks for while a session runs, with its cause (the fleet metrics count the
   *  media watchdog's); returns the unsubscribe function. */
  onHangupCause(listener: (cause: HangupCause, liveId: string | null) => void): () => void;
  /** Hang up a running session (exactly once), stop the emulator. Idempotent: later calls share the first. */
  shutdown(): Promise<void>;
  /** The renderer was lost (crash/reload): hang up any session (once) and go back to `idle`, so the
   *  reloaded page starts on its attract screen rather than on the last call's end screen. */
  resetToAttract(): Promise<void>;
  /** The last call's connection figures (null until a call reported some). */
  readonly lastCallQuality: LastCallQuality | null;
  /** The last call's field figures (tap → RTC ready, → conn_init ack, → avatar published, → first media). */
  readonly lastCallFigures: CallFigures | null;
  /** The in-process emulator while in demo mode (null otherwise); for tests and diagnostics. */
  readonly emulator: RunningEmulator | null;
  /** The current session state (synchronous view of `getState`). */
  readonly state: SessionState;
  readonly mode: PublicConfig['mode'];
  attachExtension(extension: KioskExtension): void;
  /** The configuration in use (the same object; read it, never mutate it). */
  readonly config: KioskConfig;
  /** Apply a new configuration without a restart: the next session uses it; the client is rebuilt and the
   *  attract image reloaded. Refused while a session runs, and once shutdown began. */
  reconfigure(next: KioskConfig): Promise<void>;
  /** The client of the current service (null when misconfigured); for voices and recovery. */
  readonly client: ServiceClient | null;
  /** Control sockets as the current client opens them (through the venue's proxy when there is one). */
  readonly transportFactory: TransportFactory;
  /** The keep-alive the current service accepts (shared by its calls and spares). */
  readonly keepAlive: KeepAlive;
  /** A `fetch` for another service URL (a leftover session's), routed like the client (the venue's proxy). */
  readonly fetch: typeof fetch;
  /** How the current client reaches the service (`direct` or the proxy's URL; null before it is built). */
  readonly route: ProxyRoute | null;
  /** Whether a session is running (creating … ending). */
  readonly running: boolean;
  /** Cast members whose image or persona failed the start-up check (each message names the avatar). */
  readonly castProblems: ErrorInfo[];
  /** The cast member (id) of the call started last, for the ledger's spend per avatar; null before any call. */
  readonly callAvatarId: string | null;
  /** Start-up problems that still apply, for staff (the ones given at creation, then the cast's). */
  readonly attention: AttentionItem[];
  /** Drop the spare session (call after a settings change: avatar, voice, call mode). */
  discardSpare(reason: string): void;
  /** The spare-session manager (diagnostics and tests). */
  readonly spares: SpareManager;
  /** Opening hours (fleet/opening-hours.ts decides): while closed, calls are refused and no spare
   *  session is made; the renderer hears an `opening` event. A call already running goes on. */
  setOpening(opening: OpeningInfo): void;
  readonly opening: OpeningInfo;
  /** Hold new calls (an update is about to quit the app) or take them again (null). A call already
   *  running goes on; the renderer hears a `hold` event and shows "back in a moment". */
  setHold(hold: HoldReason | null): void;
  readonly hold: HoldReason | null;
}

/** How long shutdown waits for the hangup (type 5 + query) before it gives up on a slow network. */
export const SHUTDOWN_HANGUP_TIMEOUT_MS = 5_000;
/** While the attract screen shows, the warm connection is checked (and renewed when stale) this often. */
export const WARM_REFRESH_MS = 20_000;
const MAX_ATTRACT_IMAGE_BYTES = 20 * 1024 * 1024;

/** A tap's field figures while its call runs (clock times; see `CallFigures`). */
interface FiguresDraft {
  tapAtMs: number;
  callMode: CallMode;
  liveId: string | null;
  rtcReadyAtMs: number | null;
  ackAtMs: number | null;
  publishedAtMs: number | null;
  firstFrameAtMs: number | null;
  firstAudioAtMs: number | null;
  joinMs: number | null;
  /** Why we hung up when it was not the visitor (idle, max_call, media_stalled…). */
  cause: string | null;
}

interface ActiveSession {
  controller: SessionController;
  /** Settles when the controller's start() settles (the session is over). */
  done: Promise<void>;
  hangupPromise: Promise<void> | null;
  /** Set by reportMediaError: the terminal state is reported as this failure. */
  mediaFailure: ErrorInfo | null;
  /** The UI has been told this session's terminal state. */
  sawTerminal: boolean;
  unsubscribe: () => void;
  /** Resolves with the live id once credentials are out (or null when the session ended before). */
  created: Promise<string | null>;
  resolveCreated: (liveId: string | null) => void;
  /** Resolves once the controller was started (a tap may first wait for its spare). */
  launched: Promise<void>;
  resolveLaunched: () => void;
  /** Events held back while an adopted spare's first conn_init answer is due (null: deliver directly). */
  pending: SessionEvent[] | null;
  taken: TakenSpare | null;
  /** Replaced by a fresh session after its spare failed at the tap: its events and end are not the UI's. */
  superseded: boolean;
}

export async function createKioskService(options: KioskServiceOptions): Promise<KioskService> {
  const logger = options.logger ?? silentLogger;
  const startEmulator = options.startEmulator ?? defaultStartEmulator;
  const persistApiKey = options.persistApiKey ?? (async () => {
    throw new AvatarError('internal', 'This kiosk cannot store an API key.');
  });
  const loadAvatarImage = options.loadAvatarImage ?? readImageAsDataUrl;
  const config = options.config;
  const awaitRendererRtc = options.awaitRendererRtc ?? true;

  // The environment key always wins (contract: clearing the stored key goes back to demo "unless the
  // environment sets one"); the stored key is what setApiKey manages.
  const envApiKey = options.apiKeySource === 'env' ? options.apiKey : null;
  let storedApiKey = options.apiKeySource === 'stored' ? options.apiKey : null;
  // A property of this machine's key store, reported only while the key is a stored one.
  const weaklyProtected = options.apiKeyWeaklyProtected ?? false;
  const startupItems = [...(options.startupAttention ?? [])];
  addSecret(envApiKey);
  addSecret(storedApiKey);

  const listeners = new Set<(event: KioskEvent) => void>();
  let emulator: RunningEmulator | null = null;
  let client: ServiceClient | null = null;
  /** Why no client could be built (bad service config): `start` answers with it. */
  let clientError: AvatarError | null = null;
  let mode: PublicConfig['mode'] = 'demo';
  let state: SessionState = { phase: 'idle' };
  let muted = false;
  /** The last call's connection figures, as the renderer last reported them (staff Status, /metrics). */
  let lastCallQuality: LastCallQuality | null = null;
  /** The field figures of the tap under way (see `CallFigures`), and of the last finished call. */
  let figures: FiguresDraft | null = null;
  let lastCallFigures: CallFigures | null = null;
  let active: ActiveSession | null = null;
  let shutdownPromise: Promise<void> | null = null;
  let imageDataUrl: Promise<string | null> | null = null;
  let extension: KioskExtension | null = null;
  let opening: OpeningInfo = { open: true, nextOpenAt: null, timeZone: null };
  let hold: HoldReason | null = null;
  /** What the attract screen last reported (replayed to the spare manager when the kiosk opens). */
  let lastAttract: AttractReportArgs = { showing: false, present: null };
  // Only a configured `avatars` list is checked up front.
  let castErrors = new Map<string, AvatarError>();
  let callAvatarId: string | null = null;
  let cast = config.cast;
  let castImages: Promise<Map<string, string | null>> | null = null;
  /** (Re)check the cast of the current config (at start and after the staff panel changes settings). */
  async function loadCast(): Promise<void> {
    castErrors = config.avatars ? await checkCast(config.cast) : new Map<string, AvatarError>();
    for (const e of castErrors.values()) logger.error('An avatar of the cast cannot be used', { message: e.message });
    cast = usableCast(config.cast, castErrors);
    castImages = null;
  }
  await loadCast();

  const effectiveKey = (): string | null => envApiKey ?? storedApiKey;
  const apiKeySource = (): ApiKeySource => (envApiKey ? 'env' : storedApiKey ? 'stored' : 'none');

  function emit(event: KioskEvent): void {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (error) {
        logger.warn('An event listener threw', { error: String(error) });
      }
    }
  }

  let warm: WarmHttp | null = null;
  let route: ProxyRoute | null = null;
  let transportFactory: TransportFactory = options.transportFactory ?? wsTransportFactory;
  /** The keep-alive that works with the current service (its calls and spares share it). */
  let keepAlive = new KeepAlive({ logger });
  let warmTimer: TimerHandle | null = null;
  const clock = options.clock ?? systemClock;
  const buildRequest = createCachedRequestBuilder();
  const spares = new SpareManager({
    settings: config.prewarm,
    getClient: () => client,
    startOptions: () => startOptionsFor(cast[0]!.callMode),
    emit: (event) => {
      logger.info(`Spare session ${event.status}`, { liveId: event.liveId, callMode: event.callMode, reason: event.reason });
      emit(event);
    },
    ...(options.clock ? { clock: options.clock } : {}),
    logger,
    transportFactory: (url, headers, handlers) => transportFactory(url, headers, handlers),
    buildRequest,
    keepAlive: () => keepAlive,
  });

  /** While the attract screen shows, keep one connection to the service open and fresh (DNS, TCP, TLS done). */
  function keepWarm(showing: boolean): void {
    if (warmTimer !== null) clock.clearTimeout(warmTimer);
    warmTimer = null;
    if (!showing || shutdownPromise || !warm) return;
    void warm.warm();
    warmTimer = clock.setTimeout(() => {
      warmTimer = null;
      keepWarm(true);
    }, WARM_REFRESH_MS);
  }

  /** (Re)build the client for the current key: gateway by config, direct with a key, else the emulator. */
  async function buildClient(): Promise<void> {
    // Once shutdown began nothing is built again: an emulator, warm connection or client made now would
    // outlive the shutdown (a key being stored, or settings being applied, when the kiosk started to quit).
    if (shutdownPromise) return;
    // No client while it is rebuilt, so the discard's re-evaluation makes no spare with the old key (a tap
    // would take it and the visitor's call would run on the old account). The old spare's room is closed
    // with the client that made it.
    client = null;
    clientError = null;
    spares.discard('settings_changed', { unblock: true });
    const key = effectiveKey();
    const surface = config.service.surface;
    mode = surface === 'gateway' ? 'gateway' : key ? 'direct' : 'demo';
    if (mode !== 'demo' && emulator) {
      const closing = emulator;
      emulator = null;
      await closing.close().catch((error: unknown) => logger.warn('Emulator did not close cleanly', { error: String(error) }));
    }
    let target: ServiceTarget;
    try {
      if (mode === 'demo') {
        if (!emulator) {
          emulator = await startEmulator({ host: '127.0.0.1', port: 0, ...(options.emulatorKnobs ? { knobs: options.emulatorKnobs } : {}) });
          logger.info('Demo mode: no API key configured; using the built-in emulator', { baseUrl: emulator.baseUrl });
        }
        target = parseServiceTarget({ surface: 'direct', baseUrl: emulator.baseUrl, apiKey: emulator.apiKey });
      } else if (mode === 'gateway') {
        const gatewayHeaders = config.service.gatewayHeaders ?? {};
        // A device token, not our key: the gateway adds the service credential itself (spec §5).
        if (key && Object.values(gatewayHeaders).some((v) => v.includes(key))) {
          throw new AvatarError('invalid_config', 'A gateway header holds the service API key; the gateway adds the key itself. Use a per-kiosk token.');
        }
        for (const value of Object.values(gatewayHeaders)) addSecret(value);
        target = parseServiceTarget({ surface: 'gateway', ...(config.service.gatewayUrl ? { gatewayUrl: config.service.gatewayUrl } : {}), gatewayHeaders });
      } else {
        target = parseServiceTarget({ surface: 'direct', ...(config.service.baseUrl ? { baseUrl: config.service.baseUrl } : {}), apiKey: key! });
      }
    } catch (error) {
      clientError = toAvatarError(error, 'invalid_config');
      logger.error('The service configuration is invalid; sessions cannot start until it is fixed', { message: clientError.message });
      return;
    }
    // One warm keep-alive connection for the REST calls and socket handshakes.
    warm?.close();
    const origin = target.surface === 'direct' ? target.baseUrl : target.gatewayUrl;
    route = await routeFor(origin, options.proxy, logger);
    warm = new WarmHttp({ baseUrl: origin, logger, route, ...(options.clock ? { clock: options.clock } : {}) });
    const agent = warm.agent;
    transportFactory = options.transportFactory ?? createWsTransportFactory({ agent });
    client = new ServiceClient({ target, logger, fetch: warm.fetch });
    keepAlive = options.keepAliveFor?.(origin) ?? new KeepAlive({ logger });
    logger.info('Service client ready', { mode });
    // Spares may resume now, with this client.
    if (!shutdownPromise) void attractReport(lastAttract);
  }

  function isRunning(): boolean {
    return active !== null;
  }

  function publicConfig(imageUrl: string | null): PublicConfig {
    return {
      mode,
      hasApiKey: effectiveKey() !== null,
      apiKeySource: apiKeySource(),
      apiKeyWeaklyProtected: apiKeySource() === 'stored' ? weaklyProtected : false,
      callMode: config.callMode,
      allowModeChoice: config.allowModeChoice,
      avatar: { name: config.avatar.name, imageDataUrl: imageUrl, voice: config.avatar.voice, gender: config.avatar.gender },
      windowMode: config.window.mode,
      rtcEngine: config.rtcEngine,
      returnToAttractSeconds: config.returnToAttractSeconds,
      countdownWarningSeconds: config.countdownWarningSeconds,
      idle: { promptSeconds: config.idle.promptSeconds, hangupSeconds: config.idle.hangupSeconds },
      maxCallSeconds: config.maxCallSeconds ?? null,
      cast: [],
      video: { fit: resolveVideoFit(config, options.portrait ?? configuredPortrait(config)) },
      companion: { pushToTalk: config.companion.pushToTalk, shortcut: config.companion.shortcut },
      prewarm: { mode: config.prewarm.mode, prejoin: config.prewarm.prejoin },
      rtc: { cloudProxy: config.rtc.cloudProxy },
      presence: { cameraEnabled: config.presence.cameraEnabled },
      attention: attention().length,
      opening: { ...opening },
      hold,
      languages: [...config.languages],
      defaultLanguage: config.defaultLanguage,
      accessibility: { default: config.accessibility.default, reachBandPercent: config.accessibility.reachBandPercent },
      // Never with a real key: the synthetic devices exist only while the emulator answers calls.
      demoDevices: mode === 'demo' && options.demoDevices === true,
    };
  }

  function attention(): AttentionItem[] {
    return [...startupItems, ...castAttention([...castErrors.values()].map((e) => e.toInfo()))];
  }

  async function getConfig(): Promise<Result<PublicConfig>> {
    imageDataUrl ??= loadAvatarImage(config.avatar.imagePath).catch((error: unknown) => {
      logger.warn('Could not load the avatar image for the attract screen', { error: String(error) });
      return null;
    });
    const pc = publicConfig(await imageDataUrl);
    castImages ??= (async () => {
      const images = new Map<string, string | null>();
      for (const m of cast) {
        images.set(m.id, m.imagePath === config.avatar.imagePath ? await imageDataUrl : await loadAvatarImage(m.imagePath).catch(() => null));
      }
      return images;
    })();
    pc.cast = publicCast(cast, await castImages);
    // PublicConfig.avatar is cast[0] (with one avatar, exactly the `avatar` block as before).
    const first = cast[0]!;
    pc.avatar = { name: first.name, imageDataUrl: pc.cast[0]!.imageDataUrl, voice: first.voice };
    return ok(pc);
  }

  /** Forward a controller event, rewriting the terminal state after a media failure. */
  function forward(session: ActiveSession, event: SessionEvent): void {
    if (active !== session) return; // a finished session's late events are dropped
    if (event.type === 'state') {
      let next = capCallLength(event.state, config.maxCallSeconds);
      if (session.mediaFailure && isTerminal(next.phase)) next = asMediaFailure(next, session.mediaFailure);
      if (isTerminal(next.phase)) session.sawTerminal = true;
      noteFigures(next);
      state = next;
      emit({ type: 'state', state: next, previous: event.previous });
      return;
    }
    // An adopted spare's states are held until its first answer, its credentials are not: the renderer's
    // milestones for this call may arrive before its `connecting` state.
    if (event.type === 'credentials' && figures) figures.liveId = event.liveId;
    emit(event);
  }

  /** What a session is created with: the spare is pre-warmed for the cast's first member in its call mode
   *  and the default language, so a tap on another avatar, mode or language does not match it (the spare
   *  is closed, the normal path runs). The language reaches the avatar as an instruction in its persona. */
  function startOptionsFor(callMode: CallMode, member: CastEntry = cast[0]!, language: LanguageCode = config.defaultLanguage): StartOptions {
    return {
      callMode,
      avatar: { persona: personaFor(config, member.persona, language), image: member.imagePath, name: member.name, voice: member.voice },
      ...(config.moderation ? { moderation: config.moderation } : {}),
      ...(config.extraMotion !== undefined ? { extraMotion: config.extraMotion } : {}),
    };
  }

  async function start(args: StartArgs = {}): Promise<Result<{ liveId: string | null }>> {
    // A session whose end the UI has already been shown is only cleaning up (sockets
    // closing, a hangup socket in flight): wait for that instead of refusing the visitor's next start.
    if (active?.sawTerminal) await active.done;
    if (shutdownPromise) return fail('cancelled', 'The kiosk is shutting down.');
    if (isRunning()) return fail('invalid_request', 'A session is already running.');
    if (!opening.open) return fail('invalid_request', 'The kiosk is closed (outside its opening hours).');
    if (hold) return fail('invalid_request', 'The kiosk is updating; back in a moment.');
    if (!client) {
      const error = clientError ?? new AvatarError('invalid_config', 'The avatar service is not configured.');
      return fail(error.code, error.message);
    }
    const member = args.avatarId === undefined ? cast[0]! : config.cast.find((m) => m.id === args.avatarId);
    if (!member) return fail('invalid_request', `There is no avatar "${args.avatarId}" in the cast.`);
    const castError = castErrors.get(member.id);
    if (castError) return fail(castError.code, castError.message);
    let callMode = member.callMode;
    if (args.callMode && args.callMode !== callMode) {
      if (config.allowModeChoice) callMode = args.callMode;
      else logger.warn('Ignoring the requested call mode: allowModeChoice is off', { requested: args.callMode });
    }
    if (args.language && !config.languages.includes(args.language)) return fail('invalid_request', `The language "${args.language}" is not offered on this kiosk.`);
    const startOptions = startOptionsFor(callMode, member, args.language ?? config.defaultLanguage);
    callAvatarId = member.id;

    figures = {
      tapAtMs: clock.now(),
      callMode,
      liveId: null,
      rtcReadyAtMs: null,
      ackAtMs: null,
      publishedAtMs: null,
      firstFrameAtMs: null,
      firstAudioAtMs: null,
      joinMs: null,
      cause: null,
    };
    const session = newActiveSession();
    active = session;
    if (muted) {
      muted = false;
      emit({ type: 'muted', muted: false });
    }
    // Adopt the spare when it fits, else the normal path.
    spares.setBusy(true);
    const taken = await spares.take(callMode, startOptions).catch((error: unknown) => {
      logger.warn('Could not take the spare session', { error: String(error) });
      return null;
    });
    launch(session, startOptions, taken);

    // Answer once the session exists (credentials issued) or ended before that; failures arrive as
    // state events (one source of truth for the UI).
    return ok({ liveId: await session.created });
  }

  function newActiveSession(): ActiveSession {
    let resolveCreated!: (liveId: string | null) => void;
    let resolveLaunched!: () => void;
    const session: ActiveSession = {
      controller: new SessionController({
        client: client!,
        logger,
        ...(options.clock ? { clock: options.clock } : {}),
        transportFactory: (url, headers, handlers) => transportFactory(url, headers, handlers),
        buildRequest,
        keepAlive,
        awaitRtcReady: awaitRendererRtc,
        ...(options.rtcReadyTimeoutMs !== undefined ? { rtcReadyTimeoutMs: options.rtcReadyTimeoutMs } : {}),
      }),
      done: Promise.resolve(),
      hangupPromise: null,
      mediaFailure: null,
      sawTerminal: false,
      unsubscribe: () => {},
      created: new Promise<string | null>((resolve) => (resolveCreated = resolve)),
      resolveCreated: (liveId) => resolveCreated(liveId),
      launched: new Promise<void>((resolve) => (resolveLaunched = resolve)),
      resolveLaunched: () => resolveLaunched(),
      pending: null,
      taken: null,
      superseded: false,
    };
    return session;
  }

  /** Start the session's controller in the background (adopting `taken` if given); its end clears `active`. */
  function launch(session: ActiveSession, startOptions: StartOptions, taken: TakenSpare | null): void {
    const controller = session.controller;
    session.taken = taken;
    // An adopted spare's events are held until its first conn_init is answered: if that fails, the tap
    // falls back to a fresh session and the renderer never sees the spare.
    session.pending = taken ? [] : null;
    session.unsubscribe = controller.onEvent((event) => {
      observeForSpares(session, event);
      deliver(session, startOptions, event);
    });

    // The session runs in the background; its end (any way) clears `active`.
    session.done = controller
      .start(startOptions, taken ? { adopt: taken.adopt } : {})
      .then((terminal) => {
        // Make sure the final state was seen even if the controller's last event raced the promise.
        if (active === session && !session.sawTerminal) {
          forward(session, { type: 'state', state: terminal, previous: state.phase });
        }
        logger.info('Session finished', { phase: state.phase });
      })
      .catch((error: unknown) => {
        // start() is documented to resolve with a terminal state; treat a throw as a failure anyway.
        const info = toAvatarError(error).toInfo();
        if (active === session && !session.sawTerminal) {
          forward(session, { type: 'state', state: { phase: 'failed', liveId: null, error: info, summary: null }, previous: state.phase });
        }
        logger.error('Session failed unexpectedly', { code: info.code, message: info.message });
      })
      .then(async () => {
        if (!session.superseded) session.resolveCreated(liveIdOf(state));
        session.taken?.settle('expired', 'session_over'); // no-op once settled
        if (active === session) active = null;
        spares.setBusy(active !== null);
        session.unsubscribe();
        // Clears the controller's timers and waits for its sockets to close (nothing leaks).
        await controller.dispose().catch((error: unknown) => logger.warn('Session controller dispose failed', { error: String(error) }));
      });
    session.resolveLaunched();
  }

  /** Route a controller event to the renderer: directly, or held while an adopted spare's first answer is due. */
  function deliver(session: ActiveSession, startOptions: StartOptions, event: SessionEvent): void {
    const pending = session.pending;
    if (!pending || (event.type === 'credentials' && awaitRendererRtc)) {
      // Credentials are never held: the adopted spare's conn_init waits for the renderer's RTC side, which
      // needs them (and the renderer may have pre-joined that channel already).
      if (event.type === 'credentials' && active === session) session.resolveCreated(event.liveId);
      forward(session, event);
      return;
    }
    pending.push(event);
    if (event.type !== 'state') return;
    const next = event.state;
    if (next.phase === 'creating' || next.phase === 'connecting') return;
    const taken = session.taken!;
    const answered = next.phase === 'live' || next.phase === 'ending' || (next.phase === 'warming' && next.notReadyRetries > 0);
    const cancelled = next.phase === 'failed' && next.error.code === 'cancelled';
    if (answered || cancelled) {
      taken.settle(cancelled ? 'expired' : 'used', cancelled ? 'cancelled' : undefined);
      session.pending = null;
      for (const held of pending) deliver(session, startOptions, held);
      return;
    }
    // The spare failed at its first conn_init (LIVE_CONN_INIT_FAILED, socket lost, 404…): drop it quietly
    // and start the normal path for this tap.
    const reason = next.phase === 'failed' ? next.error.code : 'socket_lost';
    logger.warn('The spare session failed at the tap; creating a new session', { reason });
    taken.settle('failed', reason);
    session.pending = null;
    session.superseded = true;
    if (active !== session || shutdownPromise) return;
    void session.controller.hangup().catch(() => {});
    const fresh = newActiveSession();
    active = fresh;
    void fresh.created.then((liveId) => session.resolveCreated(liveId));
    launch(fresh, startOptions, null);
  }

  /** What the spare manager learns from every session: create outcomes (401/402/403 stop spares), credits. */
  function observeForSpares(session: ActiveSession, event: SessionEvent): void {
    if (event.type === 'credentials' && !session.taken) spares.noteCreateOutcome(null);
    if (event.type !== 'state') return;
    const st = event.state;
    if (st.phase === 'failed') {
      if (st.liveId === null && !session.taken) spares.noteCreateOutcome(st.error.code);
      else if (st.error.code === 'insufficient_credits') spares.noteOutOfCredits(); // ran out during the call
    }
    if ((st.phase === 'ended' || st.phase === 'failed') && st.summary?.hangupReason === 'credit_insufficient') spares.noteOutOfCredits();
  }

  /** Hang up the active session once; later calls share the first hangup. */
  function hangupActive(session: ActiveSession, why: string): Promise<void> {
    session.hangupPromise ??= (async () => {
      logger.info('Hanging up the session', { why });
      await session.launched; // a tap still taking its spare starts first, then hangs up
      try {
        await session.controller.hangup();
      } catch (error) {
        logger.warn('Hangup failed', { error: String(error) });
      }
      await session.done;
    })();
    return session.hangupPromise;
  }

  const hangupCauseListeners = new Set<(cause: HangupCause, liveId: string | null) => void>();
  async function hangup(args?: { cause?: HangupCause }): Promise<Result<void>> {
    if (active) {
      const cause = args?.cause ?? 'visitor';
      const liveId = liveIdOf(state);
      if (cause !== 'visitor' && figures) figures.cause ??= cause;
      extension?.onHangupRequest?.(cause, liveId);
      for (const l of [...hangupCauseListeners]) {
        try {
          l(cause, liveId);
        } catch (error) {
          logger.warn('Hangup cause listener failed', { error: String(error) });
        }
      }
      await hangupActive(active, cause === 'visitor' ? 'renderer request' : `renderer request (${cause})`);
    }
    return ok(undefined);
  }

  async function setMuted(args: SetMutedArgs): Promise<Result<void>> {
    if (muted !== args.muted) {
      muted = args.muted;
      emit({ type: 'muted', muted });
    }
    return ok(undefined);
  }

  async function reportMediaError(args: MediaErrorArgs): Promise<Result<void>> {
    const failure = mediaFailureInfo(args.kind);
    logger.warn('The renderer reported a media error', { kind: args.kind, detail: args.message });
    const session = active;
    if (!session) return ok(undefined);
    session.mediaFailure ??= failure;
    // If the controller had already reached a terminal state, rewrite it now.
    if (isTerminal(state.phase)) {
      const previous = state.phase;
      state = asMediaFailure(state, session.mediaFailure);
      emit({ type: 'state', state, previous });
    }
    await hangupActive(session, `media error: ${args.kind}`);
    return ok(undefined);
  }

  async function rtcReady(args: RtcReadyArgs): Promise<Result<{ accepted: boolean }>> {
    const session = active;
    const accepted = session ? session.controller.rtcReady(args.liveId) : false;
    if (accepted && figures && figures.rtcReadyAtMs === null) figures.rtcReadyAtMs = clock.now();
    logger.info(accepted ? 'The renderer joined the RTC channel; sending conn_init' : 'An RTC-ready report for no waiting session was ignored', { liveId: args.liveId });
    return ok({ accepted });
  }

  /** The tap's figures follow the session's states; its terminal state sends them out (once, first). */
  function noteFigures(next: SessionState): void {
    const f = figures;
    if (!f) return;
    if ('liveId' in next && next.liveId) f.liveId = next.liveId;
    if (next.phase === 'live' && f.ackAtMs === null) f.ackAtMs = next.sinceMs;
    if (!isTerminal(next.phase)) return;
    figures = null;
    const summary = next.phase === 'ended' || next.phase === 'failed' ? next.summary : null;
    const from = (atMs: number | null): number | null => (atMs === null ? null : Math.max(0, atMs - f.tapAtMs));
    const endReason = f.cause ?? summary?.hangupReason ?? (next.phase === 'failed' ? next.error.code : 'unknown');
    lastCallFigures = {
      liveId: f.liveId,
      callMode: f.callMode,
      tapToRtcReadyMs: from(f.rtcReadyAtMs),
      tapToConnInitAckMs: from(f.ackAtMs),
      tapToAvatarPublishedMs: from(f.publishedAtMs),
      tapToFirstFrameMs: from(f.firstFrameAtMs),
      tapToFirstAudioMs: from(f.firstAudioAtMs),
      joinMs: f.joinMs,
      proxy: config.rtc.cloudProxy,
      endReason,
    };
    emit({ type: 'call-figures', figures: lastCallFigures });
  }

  /** A field milestone of the running call, timed from the tap on arrival (the first of each counts). */
  function reportMilestone(args: CallMilestoneArgs): Result<{ accepted: boolean }> {
    const f = figures;
    if (!f || f.liveId !== args.liveId) return ok({ accepted: false });
    const now = clock.now();
    switch (args.milestone) {
      case 'joined':
        f.joinMs ??= args.durationMs ?? null;
        break;
      case 'avatar_published':
        f.publishedAtMs ??= now;
        break;
      case 'first_frame':
        f.firstFrameAtMs ??= now;
        break;
      case 'first_audio':
        f.firstAudioAtMs ??= now;
        break;
    }
    return ok({ accepted: true });
  }

  /** Figures for the call on screen (running or just ended); a report for any other live id is ignored,
   *  so a late report of an earlier call never overwrites the current one's. */
  function reportQuality(args: CallQualityArgs): Result<{ accepted: boolean }> {
    const currentLiveId = 'liveId' in state ? state.liveId : null;
    if (currentLiveId !== args.liveId) return ok({ accepted: false });
    const now = clock.now();
    lastCallQuality = {
      bitrateKbps: args.bitrateKbps,
      packetLossPct: args.packetLossPct,
      frameRate: args.frameRate,
      rttMs: args.rttMs,
      level: args.level,
      atMs: now,
      final: args.final ?? false,
    };
    return ok({ accepted: true });
  }

  async function setApiKey(args: SetApiKeyArgs): Promise<Result<PublicConfig>> {
    if (shutdownPromise) return fail('cancelled', 'The kiosk is shutting down.');
    if (isRunning()) return fail('invalid_request', 'Hang up the current session before changing the API key.');
    const key = args.apiKey;
    try {
      await persistApiKey(key);
    } catch (error) {
      const e = toAvatarError(error);
      logger.error('Could not store the API key', { message: e.message });
      return fail(e.code, `Could not store the API key: ${e.message}`);
    }
    addSecret(key);
    storedApiKey = key;
    logger.info(key ? 'API key stored' : 'Stored API key cleared', { source: apiKeySource() });
    await buildClient();
    return getConfig();
  }

  async function shutdown(): Promise<void> {
    shutdownPromise ??= (async () => {
      const sparesClosed = spares.close(); // type 5 to an unused spare, exactly once, alongside the hangup
      const session = active;
      if (session) {
        const hung = hangupActive(session, 'shutdown');
        const clock = options.clock;
        let timer: unknown;
        const timeout = new Promise<void>((resolve) => {
          // Real time on purpose when no clock is injected: a hung network must not block quitting.
          timer = clock ? clock.setTimeout(resolve, SHUTDOWN_HANGUP_TIMEOUT_MS) : setTimeout(resolve, SHUTDOWN_HANGUP_TIMEOUT_MS);
        });
        const outcome = await Promise.race([hung.then(() => 'done' as const), timeout.then(() => 'timeout' as const)]);
        if (clock) clock.clearTimeout(timer as never);
        else clearTimeout(timer as ReturnType<typeof setTimeout>);
        if (outcome === 'timeout') {
          // type 5 went out first thing; only the billing read-back is slow. Stop waiting for it.
          logger.warn('Hangup is slow; disposing the session without waiting for billing figures');
          await session.controller.dispose().catch(() => {});
        }
      }
      await sparesClosed;
      keepWarm(false);
      warm?.close();
      listeners.clear();
      if (emulator) {
        const closing = emulator;
        emulator = null;
        await closing.close().catch((error: unknown) => logger.warn('Emulator did not close cleanly', { error: String(error) }));
      }
    })();
    return shutdownPromise;
  }

  async function attractReport(args: AttractReportArgs): Promise<Result<void>> {
    logger.debug('Attract report', { showing: args.showing, present: args.present });
    lastAttract = args;
    if (!shutdownPromise) {
      keepWarm(args.showing && opening.open && !hold);
      // Closed or held: no spare sessions (nobody can take them).
      spares.report(opening.open && !hold ? args : { showing: false, present: args.present });
    }
    return ok(undefined);
  }

  async function resetToAttract(): Promise<void> {
    if (active) await hangupActive(active, 'renderer lost');
    if (!active && state.phase !== 'idle') {
      const previous = state.phase;
      state = { phase: 'idle' };
      emit({ type: 'state', state, previous });
    }
    if (muted) {
      muted = false;
      emit({ type: 'muted', muted: false });
    }
  }

  /** This service's own groups of the API; staff operations add theirs when they attach. */
  const ownHandlers: Pick<HandlerTable, 'session' | 'config' | 'attract'> = {
    session: {
      start: (args) => start(args),
      hangup: (args) => hangup(args),
      getState: () => ok(state),
      setMuted: (args) => setMuted(args),
      reportMediaError: (args) => reportMediaError(args),
      rtcReady: (args) => rtcReady(args),
      reportQuality: (args) => reportQuality(args),
      reportMilestone: (args) => reportMilestone(args),
    },
    config: { get: () => getConfig() },
    attract: { report: (args) => attractReport(args) },
  };
  const handle = createDispatcher({
    handlers: () => ({ ...ownHandlers, ...extension?.handlers }),
    gate: () => extension?.gate ?? null,
    logger,
  });

  await buildClient();

  return {
    handle,
    start,
    hangup: (cause?: HangupCause) => hangup(cause ? { cause } : undefined),
    getState: async () => ok(state),
    setMuted,
    reportMediaError,
    rtcReady,
    getConfig,
    setApiKey,
    onEvent(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    shutdown,
    resetToAttract,
    get emulator() {
      return emulator;
    },
    get lastCallFigures() {
      return lastCallFigures;
    },
    get lastCallQuality() {
      return lastCallQuality;
    },
    get state() {
      return state;
    },
    get mode() {
      return mode;
    },
    attachExtension(next) {
      extension = next;
    },
    onHangupCause(listener) {
      hangupCauseListeners.add(listener);
      return () => hangupCauseListeners.delete(listener);
    },
    get config() {
      return config;
    },
    async reconfigure(next) {
      if (shutdownPromise) throw new AvatarError('cancelled', 'The kiosk is shutting down.');
      if (isRunning()) throw new AvatarError('invalid_request', 'Hang up the current session before changing the settings.');
      // A setting removed (an optional key absent from `next`, such as the opening hours) goes too.
      for (const key of Object.keys(config)) if (!Object.hasOwn(next, key)) delete (config as Record<string, unknown>)[key];
      Object.assign(config, next);
      imageDataUrl = null;
      await loadCast();
      await buildClient();
      // The page shows the new name, picture and cast without a reload.
      emit({ type: 'config-changed' });
    },
    get client() {
      return client;
    },
    get keepAlive() {
      return keepAlive;
    },
    transportFactory: (url, headers, handlers) => transportFactory(url, headers, handlers),
    fetch: async (input, init) => {
      const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
      const agent = proxyAgent(await routeFor(url.href, options.proxy, logger));
      return nodeFetch(input, init, () => agent ?? undefined);
    },
    get route() {
      return route;
    },
    get running() {
      return isRunning();
    },
    get callAvatarId() {
      return callAvatarId;
    },
    get castProblems() {
      return [...castErrors.values()].map((e) => e.toInfo());
    },
    get attention() {
      return attention();
    },
    discardSpare: (reason) => spares.discard(reason),
    spares,
    setOpening(next) {
      const changed = next.open !== opening.open || next.nextOpenAt !== opening.nextOpenAt || next.timeZone !== opening.timeZone;
      opening = { ...next };
      if (!changed || shutdownPromise) return;
      logger.info(opening.open ? 'Opening hours: open' : 'Opening hours: closed', { nextOpenAt: opening.nextOpenAt });
      // The spare manager hears "not showing" first: dropping the spare while it still thinks a visitor
      // is in front would have it make a new one at once, while the kiosk is closed.
      void attractReport(lastAttract);
      if (!opening.open) spares.discard('closed');
      emit({ type: 'opening', opening: { ...opening } });
    },
    get opening() {
      return { ...opening };
    },
    setHold(next) {
      if (next === hold || shutdownPromise) return;
      hold = next;
      logger.info(hold ? 'New calls held' : 'New calls taken again', { reason: hold });
      // As for closing: "not showing" first, so dropping the spare does not make a new one during the hold.
      void attractReport(lastAttract);
      if (hold) spares.discard('held');
      emit({ type: 'hold', hold });
    },
    get hold() {
      return hold;
    },
  };
}

/** The venue's maximum call length shortens the live state's countdown (`endsAtMs`). */
export function capCallLength(state: SessionState, maxCallSeconds: number | undefined): SessionState {
  if (!maxCallSeconds || (state.phase !== 'live' && state.phase !== 'reconnecting')) return state;
  const cap = state.sinceMs + maxCallSeconds * 1000;
  return cap < state.endsAtMs ? { ...state, endsAtMs: cap } : state;
}

// ---------------------------------------------------------------------------------------------------

function isTerminal(phase: SessionState['phase']): phase is TerminalPhase {
  return phase === 'ended' || phase === 'failed';
}

function liveIdOf(state: SessionState): string | null {
  return 'liveId' in state ? state.liveId : null;
}

const MEDIA_MESSAGES: Record<MediaErrorKind, { code: ErrorCode; message: string }> = {
  microphone_denied: { code: 'media_unavailable', message: 'The microphone could not be used, so the call was ended. Please ask staff to check the microphone.' },
  camera_denied: { code: 'media_unavailable', message: 'The camera could not be used, so the call was ended. Please ask staff to check the camera.' },
  device_missing: { code: 'media_unavailable', message: 'No microphone or camera was found, so the call was ended. Please ask staff for help.' },
  rtc_join_failed: {
    code: 'rtc_failed',
    message: 'The call could not join its audio/video channel: this network seems to block video calls, so the call was ended. Nothing was charged.',
  },
  rtc_disconnected: { code: 'rtc_failed', message: 'The audio/video connection was lost, so the call was ended. Please try again.' },
  engine_unavailable: { code: 'rtc_failed', message: 'The audio/video engine is not available on this kiosk, so the call was ended. Please ask staff for help.' },
  other: { code: 'rtc_failed', message: 'A media problem ended the call. Please try again.' },
};

export function mediaFailureInfo(kind: MediaErrorKind): ErrorInfo {
  return { ...MEDIA_MESSAGES[kind] };
}

/** A terminal state re-expressed as the media failure that caused the hangup (summary kept). */
function asMediaFailure(state: SessionState, error: ErrorInfo): SessionState {
  if (state.phase === 'ended') return { phase: 'failed', liveId: state.liveId, error, summary: state.summary };
  if (state.phase === 'failed') return { phase: 'failed', liveId: state.liveId, error, summary: state.summary };
  return state;
}

const IMAGE_MIME: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp' };

/** Default attract-screen image loader: local files become data: URLs; data: URIs pass; URLs don't. */
export async function readImageAsDataUrl(path: string): Promise<string | null> {
  if (path.startsWith('data:image/')) return path;
  if (/^https?:/i.test(path)) return null; // the CSP allows no remote images; the session still uses it
  const mime = IMAGE_MIME[extname(path).toLowerCase()];
  if (!mime) return null;
  // Sized before it is read: a huge file or a device named as the picture must not fill main's memory.
  const bytes = await readRegularFile(path, MAX_ATTRACT_IMAGE_BYTES, 'The avatar picture');
  return `data:${mime};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
}
