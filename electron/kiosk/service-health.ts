/**
 * Service health: whether the kiosk can reach its service, said truthfully. Checked when the connection is
 * (re)built (start-up, a new key, new settings) with a read that creates nothing and bills nothing (the
 * list of custom voices, spec §4.5: authenticated like every call, answered by the real service only), then
 * again with backoff while it fails, so an unreachable service clears by itself once it answers.
 *
 * A setting that no request can fix (an http:// URL, a key with no URL) is not re-checked: only a settings
 * change (a rebuild) checks again. Each change of status is logged and emitted (`service` event): the
 * terminal, the Status tab, the fleet status and the visitor's out-of-order screen follow it.
 */
import type { ServiceHealth, ServiceHealthStatus } from '../contract.ts';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.ts';
import { toAvatarError, type AvatarError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import type { KioskEvent } from '../contract.ts';
import type { ServiceConnectionView } from './service-connection.ts';
import type { ApiKeySource } from './service-key.ts';

/** Re-checks while the service fails: 5 s, 10 s, 20 s, 40 s, then every minute. */
export const HEALTH_RECHECK_MS = [5_000, 10_000, 20_000, 40_000, 60_000] as const;

export interface ServiceHealthOptions {
  connection: Pick<ServiceConnectionView, 'client' | 'clientError' | 'mode'>;
  /** Where the key came from, to say where a refused one is fixed. */
  keySource(): ApiKeySource;
  /** The configured service URL (direct) or gateway URL, as written (null when absent). */
  configuredUrl(): string | null;
  /** A service or gateway URL that was given but not used (kiosk/config-keeping.ts): what, from where, why. */
  droppedUrl?(): { source: string; message: string } | null;
  closing(): boolean;
  emit(event: KioskEvent): void;
  logger: Logger;
  clock?: Clock;
}

export interface ServiceHealthMonitor {
  readonly current: ServiceHealth;
  /** Check now (after a rebuild); resolves with the outcome. A check already running is superseded. */
  check(): Promise<ServiceHealth>;
  /** Stop re-checking (shutdown). */
  close(): void;
}

const CHECKING: ServiceHealth = { status: 'checking', ok: true, message: 'Checking the service…', action: null, checkedAtMs: null, nextCheckAtMs: null };

/** What a configuration problem (no client could be built) means for the operator. */
export function healthOfConfigError(
  error: AvatarError,
  mode: 'direct' | 'gateway',
  configuredUrl: string | null,
  dropped: { source: string; message: string } | null = null,
): Pick<ServiceHealth, 'status' | 'message' | 'action'> {
  const field = typeof error.details?.field === 'string' ? error.details.field : null;
  const urlVar = mode === 'gateway' ? 'AVATAR_GATEWAY_URL (or service.gatewayUrl in config.json)' : 'AVATAR_BASE_URL (or service.baseUrl in config.json)';
  // A URL was given but refused when the settings were read (an http:// address): say that, naming where
  // it came from, rather than "no URL".
  if ((field === 'baseUrl' || field === 'gatewayUrl') && !configuredUrl && dropped) {
    const scheme = /https:\/\//.test(dropped.message);
    return {
      status: scheme ? 'wrong_scheme' : 'misconfigured',
      message: `${dropped.source}: ${dropped.message}`,
      action: scheme ? `Set ${dropped.source === 'config.json' ? 'service.baseUrl in config.json' : dropped.source} to the https:// address; http:// is only for this computer.` : `Fix ${dropped.source} and start again.`,
    };
  }
  if ((field === 'baseUrl' || field === 'gatewayUrl') && !configuredUrl) {
    return {
      status: 'no_url',
      message: mode === 'gateway' ? 'No gateway URL is set, so the kiosk cannot reach its gateway.' : 'An API key is set but no service URL, so the kiosk cannot reach the service.',
      action: `Set ${urlVar} to the https:// address ${mode === 'gateway' ? 'of your gateway' : 'the service provider gave you'}.`,
    };
  }
  if ((field === 'baseUrl' || field === 'gatewayUrl') && configuredUrl && !/^https:\/\//i.test(configuredUrl.trim())) {
    return { status: 'wrong_scheme', message: error.message, action: `Set ${urlVar} to the https:// address; http:// is only for this computer.` };
  }
  return { status: 'misconfigured', message: error.message, action: 'Fix that setting (config.json, the environment or Settings), then restart or save the settings.' };
}

/** What a failed check (the request was sent) means for the operator. */
export function healthOfProbeError(error: AvatarError, mode: 'direct' | 'gateway', origin: string, keySource: ApiKeySource): Pick<ServiceHealth, 'status' | 'message' | 'action'> {
  if (error.code === 'unauthorized' || error.code === 'forbidden') {
    if (mode === 'gateway') {
      return {
        status: 'refused_key',
        message: `The gateway at ${origin} refused this kiosk (HTTP ${error.status ?? (error.code === 'unauthorized' ? 401 : 403)}).`,
        action: 'Check the device token in service.gatewayHeaders with your integrator.',
      };
    }
    return {
      status: 'refused_key',
      message: `The service at ${origin} refused the API key (HTTP ${error.status ?? (error.code === 'unauthorized' ? 401 : 403)}).`,
      action:
        keySource === 'env'
          ? 'Set AVATAR_API_KEY to the key from the provider\'s workbench (the one for this service URL) and start again.'
          : 'Enter the key from the provider\'s workbench again in Settings (the one for this service URL).',
    };
  }
  if (error.code === 'network' || error.code === 'timeout' || error.code === 'server') {
    return {
      status: 'unreachable',
      message: `The service at ${origin} could not be reached: ${error.message}`,
      action: 'Check the address, the network and the venue\'s proxy or firewall; the kiosk checks again by itself.',
    };
  }
  return {
    status: 'not_service',
    message: `Something answered at ${origin}, but not as the avatar service: ${error.message}`,
    action: `Check the ${mode === 'gateway' ? 'gateway URL' : 'service URL'}: the root address you were given (without /live/v1 or /api).`,
  };
}

function originOf(client: NonNullable<ServiceConnectionView['client']>): string {
  return client.target.surface === 'direct' ? client.target.baseUrl : client.target.gatewayUrl;
}

export function createServiceHealth(options: ServiceHealthOptions): ServiceHealthMonitor {
  const { connection, logger } = options;
  const clock = options.clock ?? systemClock;
  let current: ServiceHealth = CHECKING;
  let timer: TimerHandle | null = null;
  let failures = 0;
  /** Each check's number: an answer that comes after a newer check began is dropped. */
  let generation = 0;

  function set(next: Omit<ServiceHealth, 'ok'>): ServiceHealth {
    const ok = next.status === 'connected' || next.status === 'demo' || next.status === 'checking';
    const before = current;
    current = { ...next, ok };
    if (before.status !== current.status || before.message !== current.message) {
      const line = `Service: ${current.status}`;
      if (ok) logger.info(line, { message: current.message });
      else logger.warn(line, { message: current.message, action: current.action });
      if (!options.closing()) options.emit({ type: 'service', service: { ...current } });
    }
    return current;
  }

  function cancelTimer(): void {
    if (timer !== null) clock.clearTimeout(timer);
    timer = null;
  }

  async function check(): Promise<ServiceHealth> {
    cancelTimer();
    const mine = ++generation;
    if (options.closing()) return current;
    const now = clock.now();
    const mode = connection.mode;
    if (mode === 'demo') {
      failures = 0;
      return set({ status: 'demo', message: 'Demo mode: the built-in emulator, no key needed.', action: null, checkedAtMs: now, nextCheckAtMs: null });
    }
    const client = connection.client;
    if (!client) {
      const error = connection.clientError;
      const dropped = options.droppedUrl?.() ?? null;
      const what = error
        ? healthOfConfigError(error, mode, options.configuredUrl(), dropped)
        : { status: 'misconfigured' as ServiceHealthStatus, message: 'The service is not configured.', action: 'Set the service URL and key.' };
      // Only a settings change can fix it: no timer.
      return set({ ...what, checkedAtMs: now, nextCheckAtMs: null });
    }
    const origin = originOf(client);
    try {
      await client.listVoices();
      if (mine !== generation) return current;
      failures = 0;
      return set({
        status: 'connected',
        message: mode === 'gateway' ? `Connected: the gateway at ${origin} answered.` : `Connected: the service at ${origin} answered and accepted the key.`,
        action: null,
        checkedAtMs: clock.now(),
        nextCheckAtMs: null,
      });
    } catch (raw) {
      if (mine !== generation || options.closing()) return current;
      const error = toAvatarError(raw);
      const delay = HEALTH_RECHECK_MS[Math.min(failures, HEALTH_RECHECK_MS.length - 1)]!;
      failures += 1;
      const at = clock.now();
      timer = clock.setTimeout(() => {
        timer = null;
        void check();
      }, delay);
      return set({ ...healthOfProbeError(error, mode, origin, options.keySource()), checkedAtMs: at, nextCheckAtMs: at + delay });
    }
  }

  return {
    get current() {
      return { ...current };
    },
    check,
    close() {
      cancelTimer();
      generation += 1;
    },
  };
}

/** One line for a terminal: the status, what is the case, and what to do. */
export function healthLine(health: ServiceHealth): string {
  if (health.status === 'checking') return 'Service: checking…';
  if (health.ok) return `Service: ${health.message}`;
  return `Service: NOT CONNECTED. ${health.message}${health.action ? ` What to do: ${health.action}` : ''}${health.nextCheckAtMs !== null ? ' (checked again by itself)' : ''}`;
}
