/**
 * Which service the CLI talks to. Neither --base-url nor --gateway-url: the embedded emulator starts
 * in-process on 127.0.0.1 and is used with its demo key (the embedded default, so a new user sees the
 * whole flow with no account). The API key comes from AVATAR_API_KEY, --api-key-file or --api-key and is only ever
 * sent as a header (spec §5).
 */
import { AvatarError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import type { ServiceTarget } from '../core/session-types.ts';
import { parseServiceTarget } from '../core/surface.ts';
import { startEmulator, type EmulatorHandle } from '../emulator/index.ts';
import { apiKeyFromEnv } from '../kiosk/config.ts';

/** Where the CLI takes the key from, as said to its user (the environment first: out of ps and history). */
export const KEY_SOURCES = 'set AVATAR_API_KEY in the environment, or give --api-key-file PATH (a file readable by you only, e.g. chmod 600)';

export interface TargetOptions {
  baseUrl?: string | undefined;
  gatewayUrl?: string | undefined;
  apiKey?: string | undefined;
}

export interface ResolvedTarget {
  target: ServiceTarget;
  /** Set when the embedded emulator was started; the caller must close it. */
  emulator: EmulatorHandle | null;
  /** A short description for people: "the embedded emulator (http://…)", "https://… (direct)". */
  label: string;
}

export async function resolveTarget(options: TargetOptions, env: Record<string, string | undefined>, logger: Logger): Promise<ResolvedTarget> {
  const apiKey = options.apiKey ?? apiKeyFromEnv(env) ?? undefined;
  if (options.baseUrl && options.gatewayUrl) {
    throw new AvatarError('invalid_config', 'Give either --base-url (direct surface) or --gateway-url (gateway surface), not both.');
  }
  if (options.gatewayUrl) {
    if (options.apiKey) {
      throw new AvatarError('invalid_config', 'The gateway surface takes no API key (the gateway injects it); drop the key (--api-key, --api-key-file) or use --base-url.');
    }
    const target = parseServiceTarget({ surface: 'gateway', gatewayUrl: options.gatewayUrl });
    return { target, emulator: null, label: `${options.gatewayUrl} (gateway)` };
  }
  if (options.baseUrl) {
    if (!apiKey) {
      throw new AvatarError('invalid_config', `The direct surface needs an API key: ${KEY_SOURCES}.`);
    }
    const target = parseServiceTarget({ surface: 'direct', baseUrl: options.baseUrl, apiKey });
    return { target, emulator: null, label: `${options.baseUrl} (direct)` };
  }
  const emulator = await startEmulator({ host: '127.0.0.1', port: 0, logger });
  const target = parseServiceTarget({ surface: 'direct', baseUrl: emulator.baseUrl, apiKey: emulator.apiKey });
  return { target, emulator, label: `the embedded emulator (${emulator.baseUrl})` };
}
