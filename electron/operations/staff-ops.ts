/**
 * Staff operations, without Electron: the `staff` and `app` groups of the API, registered with the PIN
 * gate into the host's channel registry (kiosk/channels.ts), plus the observers that hang off the kiosk's
 * event stream (credit ledger, current-session journal for crash recovery, the venue's maximum call
 * length, the last 20 errors) — what an unattended kiosk needs so staff can run it without a keyboard or
 * a terminal.
 *
 * main wires it with electron-store, electron-log and `app`; tests and the E2E harness wire it with a JSON
 * file, an array of log lines and fakes. The contract marks which channels need the unlocked panel
 * (staff-pin.ts); the dispatcher enforces it and each such call refreshes the 60 s idle.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ok,
  type KioskEvent,
  type PinState,
  type Result,
  type SaveSettingsResult,
  type StaffSettings,
  type StaffStatus,
  type VoiceList,
} from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';
import { FREE_VOICE_CLONES, VOICE_CLONE_COST } from '../core/protocol.ts';
import { ServiceClient } from '../core/rest-client.ts';
import { parseServiceTarget } from '../core/surface.ts';
import type { TransportFactory } from '../core/transport.ts';
import type { ConfigEnv } from '../kiosk/config.ts';
import { runDoctor } from './doctor.ts';
import { createNetworkCheck } from './network-check.ts';
import { runWireCheck } from './wire-check.ts';
import type { ChannelRegistry, HandlerTable } from '../kiosk/channels.ts';
import type { Kiosk } from '../kiosk/compose.ts';
import { LEDGER_DIR, createLedger, createLedgerRecorder, startOfDay, type Ledger, type LedgerRecorder } from './ledger.ts';
import { CURRENT_SESSION_FILE, createSessionJournal, recoverLeftover, type CurrentSession, type RecoveryOutcome } from './recovery.ts';
import { editableFromFile, envManagedKeys, storePickedImage, validateSettings, type SettingsPersistence } from './settings.ts';
import { createStaffPin, type StaffPin } from './staff-pin.ts';
import { emptyVisitorReport, systemTimeZone } from '../kiosk/visitor-funnel.ts';

/** Built-in voices we know of: the spec names only the default; its 56 others are "not shown". */
export const BUILT_IN_VOICES = ['Tina'] as const;
export const MAX_RECENT_ERRORS = 20;
/** The staff PIN's lock-out, in the user-data folder. */
export const PIN_LOCKOUT_FILE = 'pin-lockout.json';

export interface PlatformHooks {
  /** Start at login: read (null where unsupported) and set. */
  getOpenAtLogin(): boolean | null;
  setOpenAtLogin(enabled: boolean): void;
  /** Quit to the desktop (the lifecycle hangs up first). */
  exitKiosk(): Promise<void> | void;
  /** app.relaunch + quit. Absent where the host cannot start itself again (the browser mode): the panel
   *  then offers no Restart, rather than a button that stops the kiosk for good. */
  restart?(): Promise<void> | void;
  /** Where no key can be stored: the sentence saying what to set instead (shown in place of the key field). */
  noKeyStorage?: string;
}

/** The kiosk's services staff operations use. */
export type StaffKiosk = Pick<Kiosk, 'config' | 'reconfigure' | 'events' | 'calls' | 'connection' | 'key' | 'telemetry' | 'appearance' | 'avatarVolume' | 'ageGateCounts' | 'auditViolations'> & Partial<Pick<Kiosk, 'health' | 'visitors'>>;

export interface StaffOpsOptions {
  kiosk: StaffKiosk;
  /** Where the `staff` and `app` channels and the staff panel's gate are registered. */
  channels: Pick<ChannelRegistry, 'register' | 'setGate'>;
  /** The user-data folder: ledger/, current-session.json, a picked avatar image. */
  dataDir: string;
  persistence: SettingsPersistence;
  env: ConfigEnv;
  appRoot: string;
  clock: Clock;
  logger?: Logger;
  version: string;
  /** Why the config file was not used at start (null when it was fine). */
  configError?: AvatarError | null;
  /** Settings not used, one line each, said on the PIN pad (kiosk/config-keeping.ts `ConfigProblem.line`). */
  settingsNotUsed?: readonly string[];
  /** The last lines of the main log, already redacted. */
  logTail(): string[];
  platform: PlatformHooks;
  transportFactory?: TransportFactory;
  /** The administrator's policy (managed-config.ts): its keys win and show as managed in the panel; a
   *  policy file that exists (or names a PIN) keeps first-run setup closed. */
  policy?: { policy: Record<string, unknown>; managedKeys: string[]; path?: string; found?: boolean; problems?: readonly string[]; namesStaffPin?: boolean };
}

export interface StaffOps {
  /** The `staff` and `app` groups as registered (tests call them directly). */
  readonly handlers: Pick<HandlerTable, 'staff' | 'app'>;
  readonly ledger: Ledger;
  readonly recorder: LedgerRecorder;
  readonly pin: StaffPin;
  /** Check and hang up a session left over by a crash (run before the attract screen). */
  recover(): Promise<RecoveryOutcome | null>;
  /** `recover`, waited for at most `timeoutMs`: a slow service must not keep the attract screen away
   *  (the recovery goes on in the background). Never rejects. */
  recoverWithin(timeoutMs?: number): Promise<void>;
  /** Stop observing (timers cleared). */
  dispose(): void;
}

/** How long start-up waits for crash recovery before showing the kiosk anyway. */
export const RECOVERY_TIMEOUT_MS = 20_000;

export function createStaffOps(options: StaffOpsOptions): StaffOps {
  const { kiosk, clock, persistence } = options;
  const { calls, connection } = kiosk;
  const logger = options.logger ?? silentLogger;
  const startedAtMs = clock.now();
  const ledger = createLedger({ dir: join(options.dataDir, LEDGER_DIR), logger });
  const surface = () => connection.mode;
  const serviceUrl = (): string | null => {
    if (connection.mode === 'demo') return null;
    const t = connection.client?.target;
    return t ? (t.surface === 'direct' ? t.baseUrl : t.gatewayUrl) : null;
  };
  const recorder = createLedgerRecorder({ ledger, clock, surface, avatar: () => kiosk.telemetry.callAvatarId, logger });
  const journal = createSessionJournal({ path: join(options.dataDir, CURRENT_SESSION_FILE), clock, surface, serviceUrl, logger });
  const errors: StaffStatus['errors'] = [];
  let maxCallTimer: ReturnType<Clock['setTimeout']> | null = null;
  let maxCallLiveId: string | null = null;
  const pushError = (code: string, message: string) => {
    errors.push({ atMs: clock.now(), code, message: message.slice(0, 500) });
    if (errors.length > MAX_RECENT_ERRORS) errors.splice(0, errors.length - MAX_RECENT_ERRORS);
  };

  const readFile = (): Record<string, unknown> => {
    try {
      return persistence.read();
    } catch (error) {
      logger.warn('Could not read the settings store', { error: String(error) });
      return {};
    }
  };

  // The policy's hash wins over config.json's: the administrator, not whoever edits the kiosk, sets it.
  const policyPinHash = (): string | null => {
    const h = options.policy?.policy.staffPinHash;
    return typeof h === 'string' && h.length > 0 ? h : null;
  };
  // A refused policy PIN stays locked: config.json's hash does not stand in for the administrator's.
  const policyPinLocked = () => options.policy !== undefined && Object.hasOwn(options.policy.policy, 'staffPinHash');
  const outOfOrderReason = (): string | null => {
    // A settings file that exists but cannot be read may hold the PIN's hash: setup would only end in
    // "fix the file before saving" behind a PIN nobody can enter, so the kiosk is out of order until it is fixed.
    const configError = options.configError;
    if (configError && !policyPinHash()) {
      return `No staff PIN could be read: config.json in ${options.dataDir} was not used (${configError.message.replace(/\.$/, '')}). First-run setup does not open over a settings file that cannot be read: fix config.json (or move it away to start afresh) and restart.`;
    }
    const p = options.policy;
    if (!p || (!p.found && !p.namesStaffPin)) return null;
    const where = p.path ?? 'the policy file';
    if (p.problems?.length) {
      return `No staff PIN is set, and the administrator's policy file ${where} was not applied as written: ${p.problems.join(' ')} First-run setup does not open on a managed kiosk: fix the policy file (staffPinHash) and restart.`;
    }
    return `No staff PIN is set: the administrator's policy file ${where} sets no staffPinHash, and first-run setup does not open on a managed kiosk. Add staffPinHash to the policy file and restart.`;
  };
  const pin = createStaffPin({
    clock,
    setupBlocked: outOfOrderReason,
    loadHash: () => {
      const managed = policyPinHash();
      if (managed !== null) return managed;
      if (policyPinLocked()) return null;
      const h = readFile().staffPinHash;
      return typeof h === 'string' ? h : null;
    },
    managedByPolicy: () => policyPinHash() !== null,
    // Persisted so a relaunch (pulling the plug) does not give a guesser fresh tries.
    loadLockout: () => {
      try {
        return JSON.parse(readFileSync(join(options.dataDir, PIN_LOCKOUT_FILE), 'utf8')) as unknown;
      } catch {
        return null;
      }
    },
    saveLockout: (record) => writeFileSync(join(options.dataDir, PIN_LOCKOUT_FILE), JSON.stringify(record), { mode: 0o600 }),
    saveHash: async (hash) => {
      await persistence.write({ ...readFile(), staffPinHash: hash });
    },
    isSessionRunning: () => calls.running,
  });

  function clearMaxCall(): void {
    if (maxCallTimer !== null) clock.clearTimeout(maxCallTimer);
    maxCallTimer = null;
    maxCallLiveId = null;
  }

  /** The venue's maximum call length: hang up at live start + maxCallSeconds (below live_duration). */
  function watchMaxCall(event: KioskEvent): void {
    if (event.type !== 'state') return;
    const s = event.state;
    if (s.phase === 'live') {
      const max = kiosk.config.maxCallSeconds;
      if (!max || maxCallLiveId === s.liveId) return;
      clearMaxCall();
      maxCallLiveId = s.liveId;
      const endsAt = s.sinceMs + max * 1000;
      maxCallTimer = clock.setTimeout(() => {
        maxCallTimer = null;
        logger.info('Maximum call length reached; hanging up', { maxCallSeconds: max });
        recorder.noteCause('max_call', s.liveId);
        // The venue's limit, not the visitor, ended it: the funnel counts it as ended badly.
        kiosk.visitors?.noteCause('max_call', s.liveId);
        void calls.hangup();
      }, endsAt - clock.now());
    } else if (s.phase === 'ended' || s.phase === 'failed' || s.phase === 'idle') {
      clearMaxCall();
    }
  }

  const unsubscribe = kiosk.events.onEvent((event) => {
    recorder.onEvent(event);
    journal.onEvent(event);
    watchMaxCall(event);
    if (event.type === 'state' && event.state.phase === 'failed') pushError(event.state.error.code, event.state.error.message);
  });

  function staffSettings(): StaffSettings {
    return {
      settings: editableFromFile(readFile()),
      hasApiKey: kiosk.key.present,
      apiKeySource: kiosk.key.source,
      ...(options.platform.noKeyStorage ? { apiKeyNotStorable: options.platform.noKeyStorage } : {}),
      managed: [...new Set([...envManagedKeys(options.env), ...(options.policy?.managedKeys ?? [])])].sort(),
    };
  }

  function status(): StaffStatus {
    const today = ledger.totals(clock.now()).today;
    const { telemetry } = kiosk;
    return {
      mode: connection.mode,
      serviceUrl: serviceUrl(),
      hasApiKey: kiosk.key.present,
      apiKeySource: kiosk.key.source,
      apiKeyWeaklyProtected: kiosk.key.weaklyProtected,
      attention: kiosk.appearance.attention,
      ...(kiosk.health ? { service: kiosk.health.current } : {}),
      errors: [...errors],
      version: options.version,
      uptimeS: Math.floor((clock.now() - startedAtMs) / 1000),
      today: { sessions: today.sessions, credits: today.credits, unknownCredits: today.unknownCredits, demoSessions: today.demoSessions },
      openAtLogin: options.platform.getOpenAtLogin(),
      canRestart: options.platform.restart !== undefined,
      ...(pin.pinTooShort ? { pinTooShort: true } : {}),
      ...(telemetry.lastCallQuality ? { lastCall: { ...telemetry.lastCallQuality } } : {}),
      ...(telemetry.lastCallFigures ? { lastCallFigures: { ...telemetry.lastCallFigures } } : {}),
      avatarVolume: kiosk.avatarVolume.percent,
      safety: {
        audience: kiosk.config.safety.audience,
        moderation: kiosk.config.safety.moderation,
        region: kiosk.config.safety.region,
        refusal: kiosk.config.safety.refusal,
        ageGate: kiosk.config.safety.ageGate ? kiosk.ageGateCounts() : null,
        auditViolations: kiosk.auditViolations(),
      },
    };
  }

  async function saveSettings(next: StaffSettings['settings']): Promise<SaveSettingsResult> {
    if (calls.running) throw new AvatarError('invalid_request', 'Hang up the current session before changing the settings.');
    const current = readFile();
    let v = validateSettings(current, next, { env: options.env, appRoot: options.appRoot, ...(options.policy ? { policy: options.policy.policy } : {}) });
    if (!v.ok) return { saved: false, fieldErrors: v.fieldErrors };
    if (/^data:/i.test(next.avatar.imagePath)) {
      v = validateSettings(current, storePickedImage(next, options.dataDir), { env: options.env, appRoot: options.appRoot, ...(options.policy ? { policy: options.policy.policy } : {}) });
      if (!v.ok) return { saved: false, fieldErrors: v.fieldErrors };
    }
    // The key is bound to the service it was entered for: whoever has the PIN must not be able to point
    // the kiosk at their own server and receive it in the Authorization header.
    const originChanged = urlOrigin(kiosk.config.service.baseUrl) !== urlOrigin(v.config.service.baseUrl);
    if (originChanged && kiosk.key.source === 'env') {
      return {
        saved: false,
        fieldErrors: { 'service.baseUrl': 'The API key comes from the environment (AVATAR_API_KEY), so the service URL must come from there too (AVATAR_BASE_URL) or from the policy file.' },
      };
    }
    let apiKeyCleared = false;
    if (originChanged && kiosk.key.source === 'stored') {
      // Dropped before the new URL is used, so no request to the new origin ever carries it.
      const cleared = await kiosk.key.set(null);
      if (!cleared.ok) throw new AvatarError(cleared.error.code, cleared.error.message);
      delete v.file.encryptedApiKey;
      apiKeyCleared = true;
      logger.warn('The service URL moved to another origin: the stored API key was removed and must be entered again');
    }
    await persistence.write(v.file);
    // Restart-only keys stay as the running window was built until the restart (RESTART_KEYS).
    await kiosk.reconfigure({ ...v.config, window: kiosk.config.window, rtcEngine: kiosk.config.rtcEngine });
    logger.info('Settings saved', { restartRequired: v.restartRequired });
    return { saved: true, settings: staffSettings(), restartRequired: v.restartRequired, ...(apiKeyCleared ? { apiKeyCleared: true } : {}) };
  }

  async function listVoices(): Promise<VoiceList> {
    const client = connection.client;
    if (!client) throw new AvatarError('invalid_config', 'The avatar service is not configured, so custom voices cannot be listed.');
    const res = await client.listVoices();
    const custom = [...new Set(res.voices.map((v) => v.voice).filter((v) => v && !(BUILT_IN_VOICES as readonly string[]).includes(v)))];
    return { builtIn: [...BUILT_IN_VOICES], custom, current: kiosk.config.avatar.voice };
  }

  const networkCheck = createNetworkCheck({ clock, logger, transportFactory: options.transportFactory ?? connection.transportFactory });

  async function doctor() {
    if (calls.running) throw new AvatarError('invalid_request', 'Diagnostics cannot run during a call.');
    const report = await runDoctor({
      mode: connection.mode,
      config: kiosk.config,
      configError: options.configError ?? null,
      client: connection.client,
      clock,
      logger,
      transportFactory: options.transportFactory ?? connection.transportFactory,
    });
    for (const c of report.checks) if (c.ok === false) pushError(`doctor_${c.id}`, c.message);
    return { ok: report.ok, checks: report.checks };
  }

  function ledgerCsv(since: string | undefined) {
    const sinceMs = since ? new Date(`${since}T00:00:00`).getTime() : undefined;
    if (sinceMs !== undefined && Number.isNaN(sinceMs)) throw new AvatarError('invalid_request', `Not a date: ${since}.`);
    const day = new Date(startOfDay(clock.now()));
    const stamp = `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
    return { fileName: `avatar-kiosk-ledger-${since ? `${since}-to-` : ''}${stamp}.csv`, csv: ledger.csv(sinceMs) };
  }

  /** The staff panel's back end. The channel registry (kiosk/channels.ts) has already checked the PIN for
   *  every `staff` channel of the contract and validated the argument. */
  const handlers: StaffOps['handlers'] = {
    staff: {
      pinState: () => ok<PinState>({ ...pin.state(), ...(options.settingsNotUsed?.length ? { settingsNotUsed: [...options.settingsNotUsed] } : {}) }),
      setPin: async ({ pin: next }) => ok(await pin.setPin(next)),
      unlock: async ({ pin: tried }) => ok(await pin.unlock(tried)),
      lock: () => (pin.lock(), ok(undefined)),
      status: () => ok(status()),
      getSettings: () => ok(staffSettings()),
      saveSettings: async ({ settings }) => ok(await saveSettings(settings)),
      // The key's write path: the settings screen → here → the key service (stored, then the connection rebuilt).
      setApiKey: async ({ apiKey }) => {
        const r = await kiosk.key.set(apiKey);
        return r.ok ? ok(staffSettings()) : r;
      },
      listVoices: async () => ok(await listVoices()),
      cloneVoice: async ({ audioUrl, voice, language }) => {
        const client = connection.client;
        if (!client) throw new AvatarError('invalid_config', 'The avatar service is not configured, so a voice cannot be cloned.');
        logger.info(`Cloning a voice (may cost ${VOICE_CLONE_COST} credits after the first ${FREE_VOICE_CLONES} clones)`, { voice });
        const res = await client.cloneVoice({ audio_url: audioUrl, voice, ...(language ? { language } : {}) });
        return ok({ voice: res.voice });
      },
      runDoctor: async () => ok(await doctor()),
      networkCheckStart: async () => {
        if (calls.running) throw new AvatarError('invalid_request', 'The video network cannot be checked during a call.');
        return ok(await networkCheck.start(connection.client, kiosk.config));
      },
      wireReport: async () => {
        if (calls.running) throw new AvatarError('invalid_request', 'The wire report cannot be recorded during a call.');
        const result = await runWireCheck({
          client: connection.client,
          config: kiosk.config,
          dataDir: options.dataDir,
          transportFactory: options.transportFactory ?? connection.transportFactory,
          keepAlive: connection.keepAlive,
          clock,
          logger,
        });
        if (!result.ok) pushError('wire_report', result.message);
        return ok(result);
      },
      networkCheckFinish: async ({ checkId, outcome }) => {
        const report = await networkCheck.finish(checkId, outcome);
        if (!report.ok) pushError('network_check', report.message);
        return ok(report);
      },
      ledgerTotals: () => ok(ledger.totals(clock.now())),
      ledgerCsv: ({ since }) => ok(ledgerCsv(since)),
      visitors: () => ok(kiosk.visitors?.report() ?? emptyVisitorReport(new Date(clock.now()).toISOString().slice(0, 10), systemTimeZone(), kiosk.config.presence.cameraEnabled)),
      logTail: () => ok({ lines: options.logTail().slice(-200) }),
      setAvatarVolume: async ({ percent }) => {
        const now = await kiosk.avatarVolume.set(percent);
        logger.info('Staff: avatar volume', { percent: now });
        return ok({ percent: now });
      },
      setOpenAtLogin: ({ enabled }) => {
        if (options.platform.getOpenAtLogin() === null) throw new AvatarError('invalid_request', 'Starting at login is not supported on this system.');
        options.platform.setOpenAtLogin(enabled);
        return ok(undefined);
      },
      exitKiosk: async () => {
        logger.info('Staff: exit to the desktop');
        pin.lock();
        await options.platform.exitKiosk();
        return ok(undefined);
      },
      restart: async () => {
        const restart = options.platform.restart;
        if (!restart) throw new AvatarError('invalid_request', 'This kiosk cannot restart itself: exit, then start it again.');
        logger.info('Staff: restart');
        pin.lock();
        await restart();
        return ok(undefined);
      },
    },
    app: {
      reportError: ({ message, source, stack }) => {
        logger.error('Renderer error', { message, source: source ?? null, stack: stack?.slice(0, 4000) ?? null });
        pushError('renderer', message);
        return ok(undefined);
      },
    },
  };

  // Each hangup's cause (the visitor's, idle, max_call, the operator's…) is the ledger's end reason.
  const offHangupCause = calls.onHangupCause((cause, liveId) => recorder.noteCause(cause, liveId));

  const ext: StaffOps = {
    ledger,
    recorder,
    pin,
    handlers,
    recover() {
      return recoverLeftover({
        path: join(options.dataDir, CURRENT_SESSION_FILE),
        ledger,
        clock,
        logger,
        clientFor: (leftover) => clientFor(leftover, connection, logger),
        transportFactory: options.transportFactory ?? connection.transportFactory,
      });
    },
    async recoverWithin(timeoutMs = RECOVERY_TIMEOUT_MS) {
      let timer: ReturnType<Clock['setTimeout']> | undefined;
      await Promise.race([
        ext.recover().catch((e: unknown) => logger.error('Crash recovery failed', { error: String(e) })),
        new Promise<void>((resolve) => (timer = clock.setTimeout(() => (logger.warn('Crash recovery is slow; showing the kiosk anyway'), resolve()), timeoutMs))),
      ]);
      if (timer !== undefined) clock.clearTimeout(timer);
    },
    dispose() {
      clearMaxCall();
      unsubscribe();
      offHangupCause();
      // A check still open ends with type 5 now rather than at its timeout.
      void networkCheck.dispose().catch((error: unknown) => logger.warn('Network check: closing the test session failed', { error: String(error) }));
    },
  };
  options.channels.register('staff', handlers.staff);
  options.channels.register('app', handlers.app);
  options.channels.setGate(pin);
  return ext;
}

/** `scheme://host:port` of a URL, or null (no URL, or not one). */
function urlOrigin(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** A client for a leftover session: the current one if it points at the same service; demo sessions
 *  died with the in-process emulator. */
function clientFor(leftover: CurrentSession, connection: StaffKiosk['connection'], logger: Logger): ServiceClient | null {
  if (leftover.surface === 'demo' || !leftover.serviceUrl) return null;
  const current = connection.client?.target;
  if (current) {
    const url = current.surface === 'direct' ? current.baseUrl : current.gatewayUrl;
    if (current.surface === leftover.surface && url === leftover.serviceUrl) return connection.client;
  }
  // The settings changed since the crash: the gateway needs no key; the direct surface needs ours.
  try {
    if (leftover.surface === 'gateway') return new ServiceClient({ target: parseServiceTarget({ surface: 'gateway', gatewayUrl: leftover.serviceUrl }), logger, fetch: connection.fetch });
  } catch {
    return null;
  }
  return null;
}
