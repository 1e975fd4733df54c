/**
 * Staff operations on a fake kiosk (only the services and members staff-ops reads), a FakeClock, a recording
 * logger and services answered by fake `fetch`es that log every request: the current client's requests
 * and those made through the connection's own `fetch` (a leftover session's other service) are told apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'node:test';
import type { HangupCause, KioskEvent, PublicConfig, Result, SetApiKeyArgs } from '../../electron/contract.ts';
import { FakeClock } from './fake-clock.ts';
import type { AvatarError } from '../../electron/core/errors.ts';
import { ServiceClient } from '../../electron/core/rest-client.ts';
import type { ServiceTarget } from '../../electron/core/session-types.ts';
import { resolveConfig, type KioskConfig } from '../../electron/kiosk/config.ts';
import { createChannelRegistry } from '../../electron/kiosk/channels.ts';
import { openAvatarVolume } from '../../electron/kiosk/avatar-volume.ts';
import { jsonFilePersistence } from '../../electron/operations/settings.ts';
import { createStaffOps, type PlatformHooks, type StaffKiosk, type StaffOps } from '../../electron/operations/staff-ops.ts';
import { FakeTransport, FakeTransports } from './fake-transport.ts';
import { recordingLogger } from './recording-logger.ts';
import { APP_ROOT, TINY_PNG } from './staff-kiosk.ts';

export interface Request {
  via: 'client' | 'service.fetch';
  method: string;
  url: string;
}

/** A fake service answering the REST API: sessions end at once, nothing billed; voices as given. */
function fakeFetch(via: Request['via'], log: Request[], voices: () => string[], statuses: Map<string, string[]>): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    const method = init?.method ?? 'GET';
    log.push({ via, method, url });
    const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    if (method === 'POST' && /\/voices\/clone$/.test(url)) return json({ voice: (JSON.parse(String(init?.body)) as { voice: string }).voice });
    if (/\/voices$/.test(url)) return json({ voices: voices().map((voice) => ({ voice })) });
    if (method === 'POST') {
      return json({ live: { id: 'check-1', status: 'created', live_duration: 600, call_mode: 'audio' }, rtc: { app_id: 'a', channel_id: 'c', user_id: 'u', token: 't', token_expire_at: 1 } });
    }
    const id = decodeURIComponent(url.split('/').at(-1)!);
    const status = statuses.get(id)?.shift() ?? 'ended';
    if (status === 'hang') return new Promise<Response>(() => {});
    return json({ live: { id, status, ...(status === 'ended' ? { billed_seconds: 0, credits_cost: 0 } : {}) } });
  }) as typeof fetch;
}

/** Control sockets that open at once and close when the client has sent its first frame (the hangup). */
export function autoClosingTransports(): FakeTransports {
  const transports = new FakeTransports();
  const make = transports.factory;
  (transports as { factory: FakeTransports['factory'] }).factory = (url, headers, handlers) => {
    const t = make(url, headers, handlers) as FakeTransport;
    const send = t.send.bind(t);
    t.send = (text: string) => {
      send(text);
      queueMicrotask(() => t.serverClose(1000, ''));
    };
    queueMicrotask(() => t.open());
    return t;
  };
  return transports;
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The handlers, each awaited and callable without its argument where it takes none. */
type Awaitable<T> = { [K in keyof T]: T[K] extends (arg: infer A) => infer R ? (arg?: A) => Promise<Awaited<R>> : never };

export interface WorldOptions {
  mode?: 'demo' | 'direct' | 'gateway';
  /** The current client's target; null: no client (misconfigured). */
  target?: ServiceTarget | null;
  running?: boolean;
  file?: Record<string, unknown>;
  /** The config the fake service says it runs with (defaults to config.json's, resolved). */
  config?: KioskConfig;
  apiKeySource?: PublicConfig['apiKeySource'];
  setApiKeyResult?: Result<void>;
  voices?: string[];
  configError?: AvatarError | null;
  openAtLogin?: boolean | null;
  /** Given to staff-ops itself; otherwise only the connection's transport factory is there. */
  opsTransports?: FakeTransports;
}

export async function staffOpsWorld(options: WorldOptions = {}) {
  const clock = new FakeClock(new Date(2026, 1, 3, 12, 0, 0).getTime());
  const logger = recordingLogger();
  const requests: Request[] = [];
  const voices = options.voices ?? [];
  /** What the service answers for a session id, query after query ('hang': no answer), then `ended`. */
  const statuses = new Map<string, string[]>();
  const hangups: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'kiosk-staff-api-'));
  dirs.push(dataDir);
  const persistence = jsonFilePersistence(join(dataDir, 'config.json'));
  const file = options.file ?? { avatar: { imagePath: TINY_PNG, persona: 'A test persona.' } };
  await persistence.write(file);
  const config = options.config ?? resolveConfig(file, {}, { appRoot: APP_ROOT });
  const client =
    options.target === null ? null : new ServiceClient({ target: options.target ?? { surface: 'gateway', gatewayUrl: 'https://gw.example' }, fetch: fakeFetch('client', requests, () => voices, statuses), clock });
  const serviceTransports = autoClosingTransports();
  const listeners = new Set<(e: KioskEvent) => void>();
  const apiKeyCalls: SetApiKeyArgs[] = [];
  const reconfigured: KioskConfig[] = [];
  let apiKeySource: PublicConfig['apiKeySource'] = options.apiKeySource ?? 'none';
  const state = { running: options.running ?? false, config };
  const hangupCauseListeners = new Set<(cause: HangupCause, liveId: string | null) => void>();
  const avatarVolume = openAvatarVolume({ dir: dataDir, logger });
  const kiosk: StaffKiosk = {
    get config() {
      return state.config;
    },
    avatarVolume,
    async reconfigure(next: KioskConfig) {
      reconfigured.push(next);
      state.config = next;
    },
    events: {
      onEvent(l: (e: KioskEvent) => void) {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    },
    calls: {
      get running() {
        return state.running;
      },
      async hangup() {
        hangups.push('hangup');
        return { ok: true, value: undefined } as Result<void>;
      },
      onHangupCause(l: (cause: HangupCause, liveId: string | null) => void) {
        hangupCauseListeners.add(l);
        return () => hangupCauseListeners.delete(l);
      },
    },
    connection: {
      mode: options.mode ?? 'gateway',
      client,
      transportFactory: serviceTransports.factory,
      fetch: fakeFetch('service.fetch', requests, () => voices, statuses),
    },
    key: {
      get present() {
        return apiKeySource !== 'none';
      },
      get source() {
        return apiKeySource;
      },
      weaklyProtected: false,
      async set(apiKey: string | null) {
        apiKeyCalls.push({ apiKey });
        const r = options.setApiKeyResult ?? ({ ok: true, value: undefined } as Result<void>);
        if (r.ok) apiKeySource = apiKey === null ? 'none' : 'stored';
        return r;
      },
    },
    telemetry: { lastCallQuality: null, lastCallFigures: null, callAvatarId: null },
    appearance: { attention: [] },
    ageGateCounts: () => ({ asked: 0, confirmed: 0, declined: 0 }),
    auditViolations: () => 0,
  } as unknown as StaffKiosk;
  const channels = createChannelRegistry();
  const platformCalls: string[] = [];
  const platform: PlatformHooks = {
    getOpenAtLogin: () => (options.openAtLogin === undefined ? false : options.openAtLogin),
    setOpenAtLogin: (v) => void platformCalls.push(`login:${v}`),
    exitKiosk: () => void platformCalls.push('exit'),
    restart: () => void platformCalls.push('restart'),
  };
  const ops: StaffOps = createStaffOps({
    kiosk,
    channels,
    dataDir,
    persistence,
    env: {},
    appRoot: APP_ROOT,
    clock,
    logger,
    version: 't',
    logTail: () => [],
    platform,
    ...(options.configError !== undefined ? { configError: options.configError } : {}),
    ...(options.opsTransports ? { transportFactory: options.opsTransports.factory } : {}),
  });
  const emit = (event: KioskEvent) => {
    for (const l of [...listeners]) l(event);
  };
  return {
    clock,
    logger,
    requests,
    statuses,
    hangups,
    dataDir,
    persistence,
    kiosk,
    channels,
    client,
    serviceTransports,
    apiKeyCalls,
    reconfigured,
    platformCalls,
    ops,
    staff: ops.handlers.staff as unknown as Awaitable<StaffOps['handlers']['staff']>,
    app: ops.handlers.app as unknown as Awaitable<StaffOps['handlers']['app']>,
    emit,
    state,
    listeners,
    hangupCauseListeners,
  };
}
