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
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import {
  CHANNELS,
  fail,
  isKnownChannel,
  ok,
  parseArgs,
  type Channel,
  type ChannelResults,
  type KioskEvent,
  type MediaErrorArgs,
  type MediaErrorKind,
  type PublicConfig,
  type Result,
  type SetApiKeyArgs,
  type SetMutedArgs,
  type StartArgs,
} from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { AvatarError, toAvatarError, type ErrorCode, type ErrorInfo } from '../core/errors.ts';
import { addSecret, silentLogger, type Logger } from '../core/log.ts';
import { ServiceClient } from '../core/rest-client.ts';
import { SessionController } from '../core/session-controller.ts';
import type { SessionEvent, SessionState, ServiceTarget, StartOptions } from '../core/session-types.ts';
import { parseServiceTarget } from '../core/surface.ts';
import { startEmulator as defaultStartEmulator, type EmulatorHandle, type EmulatorKnobs } from '../emulator/index.ts';
import type { KioskConfig } from './config.ts';

export type ApiKeySource = 'env' | 'stored' | 'none';
type RunningEmulator = EmulatorHandle;
type TerminalPhase = 'ended' | 'failed';

export interface KioskServiceOptions {
  config: KioskConfig;
  /** The effective key (environment first, else the decrypted stored key), or null for demo mode. */
  apiKey: string | null;
  apiKeySource: ApiKeySource;
  /** The stored key is only weakly protected (Linux `basic_text` safeStorage backend). */
  apiKeyWeaklyProtected?: boolean;
  clock?: Clock;
  logger?: Logger;
  /** The emulator to start in demo mode (tests inject knobs through `emulatorKnobs`). */
  startEmulator?: typeof defaultStartEmulator;
  emulatorKnobs?: Partial<EmulatorKnobs>;
  /** Store (encrypted) or clear the operator's key. Rejecting makes `setApiKey` fail. */
  persistApiKey?: (key: string | null) => Promise<void>;
  /** Read the avatar image as a data: URL for the attract screen (null when unavailable). */
  loadAvatarImage?: (path: string) => Promise<string | null>;
}

export interface KioskService {
  /** The single IPC entry point: validates `rawArg` with the contract's schema, then dispatches.
   *  Unknown channels and bad arguments answer `invalid_request`; nothing throws. */
  handle(channel: string, rawArg: unknown): Promise<Result<unknown>>;
  start(args?: StartArgs): Promise<Result<ChannelResults[typeof CHANNELS.sessionStart]>>;
  hangup(): Promise<Result<void>>;
  getState(): Promise<Result<SessionState>>;
  setMuted(args: SetMutedArgs): Promise<Result<void>>;
  reportMediaError(args: MediaErrorArgs): Promise<Result<void>>;
  getConfig(): Promise<Result<PublicConfig>>;
  setApiKey(args: SetApiKeyArgs): Promise<Result<PublicConfig>>;
  /** Session events plus `{type:'muted'}`; returns the unsubscribe function. */
  onEvent(listener: (event: KioskEvent) => void): () => void;
  /** Hang up a running session (exactly once), stop the emulator. Idempotent: later calls share the first. */
  shutdown(): Promise<void>;
  /** The renderer was lost (crash/reload): hang up any session (once) and go back to `idle`, so the
   *  reloaded page starts on its attract screen rather than on the last call's end screen. */
  resetToAttract(): Promise<void>;
  /** The in-process emulator while in demo mode (null otherwise); for tests and diagnostics. */
  readonly emulator: RunningEmulator | null;
  /** The current session state (synchronous view of `getState`). */
  readonly state: SessionState;
  readonly mode: PublicConfig['mode'];
}

/** How long shutdown waits for the hangup (type 5 + query) before it gives up on a slow network. */
export const SHUTDOWN_HANGUP_TIMEOUT_MS = 5_000;
const MAX_ATTRACT_IMAGE_BYTES = 20 * 1024 * 1024;

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
}

export async function createKioskService(options: KioskServiceOptions): Promise<KioskService> {
  const logger = options.logger ?? silentLogger;
  const startEmulator = options.startEmulator ?? defaultStartEmulator;
  const persistApiKey = options.persistApiKey ?? (async () => {
    throw new AvatarError('internal', 'This kiosk cannot store an API key.');
  });
  const loadAvatarImage = options.loadAvatarImage ?? readImageAsDataUrl;
  const config = options.config;

  // The environment key always wins (contract: clearing the stored key goes back to demo "unless the
  // environment sets one"); the stored key is what setApiKey manages.
  const envApiKey = options.apiKeySource === 'env' ? options.apiKey : null;
  let storedApiKey = options.apiKeySource === 'stored' ? options.apiKey : null;
  // A property of this machine's key store (Linux basic_text), reported only while the key is a stored one.
  const weaklyProtected = options.apiKeyWeaklyProtected ?? false;
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
  let active: ActiveSession | null = null;
  let shutdownPromise: Promise<void> | null = null;
  let imageDataUrl: Promise<string | null> | null = null;

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

  /** (Re)build the client for the current key: gateway by config, direct with a key, else the emulator. */
  async function buildClient(): Promise<void> {
    client = null;
    clientError = null;
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
        target = parseServiceTarget({ surface: 'gateway', ...(config.service.gatewayUrl ? { gatewayUrl: config.service.gatewayUrl } : {}) });
      } else {
        target = parseServiceTarget({ surface: 'direct', ...(config.service.baseUrl ? { baseUrl: config.service.baseUrl } : {}), apiKey: key! });
      }
    } catch (error) {
      clientError = toAvatarError(error, 'invalid_config');
      logger.error('The service configuration is invalid; sessions cannot start until it is fixed', { message: clientError.message });
      return;
    }
    client = new ServiceClient({ target, logger });
    logger.info('Service client ready', { mode });
  }

  function isRunning(): boolean {
    return active !== null;
  }

  function publicConfig(imageUrl: string | null): PublicConfig {
    return {
      mode,
      hasApiKey: effectiveKey() !== null,
      apiKeySource: apiKeySource(),
      apiKeyWeaklyProtected: apiKeySource() === 'stored' && weaklyProtected,
      callMode: config.callMode,
      allowModeChoice: config.allowModeChoice,
      avatar: { name: config.avatar.name, imageDataUrl: imageUrl, voice: config.avatar.voice },
      windowMode: config.window.mode,
      rtcEngine: config.rtcEngine,
      returnToAttractSeconds: config.returnToAttractSeconds,
      countdownWarningSeconds: config.countdownWarningSeconds,
    };
  }

  async function getConfig(): Promise<Result<PublicConfig>> {
    imageDataUrl ??= loadAvatarImage(config.avatar.imagePath).catch((error: unknown) => {
      logger.warn('Could not load the avatar image for the attract screen', { error: String(error) });
      return null;
    });
    return ok(publicConfig(await imageDataUrl));
  }

  /** Forward a controller event, rewriting the terminal state after a media failure. */
  function forward(session: ActiveSession, event: SessionEvent): void {
    if (active !== session) return; // a finished session's late events are dropped
    if (event.type === 'state') {
      let next = event.state;
      if (session.mediaFailure && isTerminal(next.phase)) next = asMediaFailure(next, session.mediaFailure);
      if (isTerminal(next.phase)) session.sawTerminal = true;
      state = next;
      emit({ type: 'state', state: next, previous: event.previous });
      return;
    }
    emit(event);
  }

  async function start(args: StartArgs = {}): Promise<Result<{ liveId: string | null }>> {
    // --- proof (issue 9): a session whose end the UI has already been shown is only cleaning up (sockets
    // closing, a hangup socket in flight): wait for that instead of refusing the visitor's next start.
    if (active?.sawTerminal) await active.done;
    // --- end proof (issue 9)
    if (shutdownPromise) return fail('cancelled', 'The kiosk is shutting down.');
    if (isRunning()) return fail('invalid_request', 'A session is already running.');
    if (!client) {
      const error = clientError ?? new AvatarError('invalid_config', 'The avatar service is not configured.');
      return fail(error.code, error.message);
    }
    let callMode = config.callMode;
    if (args.callMode && args.callMode !== config.callMode) {
      if (config.allowModeChoice) callMode = args.callMode;
      else logger.warn('Ignoring the requested call mode: allowModeChoice is off', { requested: args.callMode });
    }
    const startOptions: StartOptions = {
      callMode,
      avatar: { persona: config.avatar.persona, image: config.avatar.imagePath, name: config.avatar.name, voice: config.avatar.voice },
      ...(config.moderation ? { moderation: config.moderation } : {}),
      ...(config.extraMotion !== undefined ? { extraMotion: config.extraMotion } : {}),
    };

    const controller = new SessionController({ client, logger, ...(options.clock ? { clock: options.clock } : {}) });
    let resolveCreated!: (liveId: string | null) => void;
    const created = new Promise<string | null>((resolve) => (resolveCreated = resolve));
    const session: ActiveSession = {
      controller,
      done: Promise.resolve(),
      hangupPromise: null,
      mediaFailure: null,
      sawTerminal: false,
      unsubscribe: () => {},
    };
    session.unsubscribe = controller.onEvent((event) => {
      if (event.type === 'credentials') resolveCreated(event.liveId);
      forward(session, event);
    });
    active = session;
    if (muted) {
      muted = false;
      emit({ type: 'muted', muted: false });
    }

    // The session runs in the background; its end (any way) clears `active`.
    session.done = controller
      .start(startOptions)
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
        resolveCreated(liveIdOf(state));
        if (active === session) active = null;
        session.unsubscribe();
        // Clears the controller's timers and waits for its sockets to close (nothing leaks).
        await controller.dispose().catch((error: unknown) => logger.warn('Session controller dispose failed', { error: String(error) }));
      });

    // Answer once the session exists (credentials issued) or ended before that; failures arrive as
    // state events (one source of truth for the UI).
    return ok({ liveId: await created });
  }

  /** Hang up the active session once; later calls share the first hangup. */
  function hangupActive(session: ActiveSession, why: string): Promise<void> {
    session.hangupPromise ??= (async () => {
      logger.info('Hanging up the session', { why });
      try {
        await session.controller.hangup();
      } catch (error) {
        logger.warn('Hangup failed', { error: String(error) });
      }
      await session.done;
    })();
    return session.hangupPromise;
  }

  async function hangup(): Promise<Result<void>> {
    if (active) await hangupActive(active, 'renderer request');
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
      listeners.clear();
      if (emulator) {
        const closing = emulator;
        emulator = null;
        await closing.close().catch((error: unknown) => logger.warn('Emulator did not close cleanly', { error: String(error) }));
      }
    })();
    return shutdownPromise;
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

  async function handle(channel: string, rawArg: unknown): Promise<Result<unknown>> {
    if (!isKnownChannel(channel)) return fail('invalid_request', `Unknown channel: ${String(channel).slice(0, 80)}.`);
    try {
      return await dispatch(channel, rawArg);
    } catch (error) {
      const e = toAvatarError(error);
      logger.error('Handler failed', { channel, code: e.code, message: e.message });
      return fail(e.code, e.message);
    }
  }

  async function dispatch(channel: Channel, rawArg: unknown): Promise<Result<unknown>> {
    switch (channel) {
      case CHANNELS.sessionStart: {
        const a = parseArgs(channel, rawArg);
        return a.ok ? start(a.value) : a;
      }
      case CHANNELS.sessionHangup: {
        const a = parseArgs(channel, rawArg);
        return a.ok ? hangup() : a;
      }
      case CHANNELS.sessionGetState: {
        const a = parseArgs(channel, rawArg);
        return a.ok ? ok(state) : a;
      }
      case CHANNELS.sessionSetMuted: {
        const a = parseArgs(channel, rawArg);
        return a.ok ? setMuted(a.value) : a;
      }
      case CHANNELS.sessionReportMediaError: {
        const a = parseArgs(channel, rawArg);
        return a.ok ? reportMediaError(a.value) : a;
      }
      case CHANNELS.configGet: {
        const a = parseArgs(channel, rawArg);
        return a.ok ? getConfig() : a;
      }
      case CHANNELS.configSetApiKey: {
        const a = parseArgs(channel, rawArg);
        return a.ok ? setApiKey(a.value) : a;
      }
      default: {
        const unreachable: never = channel;
        return fail('invalid_request', `Unknown channel: ${String(unreachable)}.`);
      }
    }
  }

  await buildClient();

  return {
    handle,
    start,
    hangup,
    getState: async () => ok(state),
    setMuted,
    reportMediaError,
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
    get state() {
      return state;
    },
    get mode() {
      return mode;
    },
  };
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
  rtc_join_failed: { code: 'rtc_failed', message: 'The call could not connect to the audio/video channel, so it was ended. Please try again.' },
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
  const bytes = await readFile(path);
  if (bytes.byteLength > MAX_ATTRACT_IMAGE_BYTES) return null;
  return `data:${mime};base64,${bytes.toString('base64')}`;
}
