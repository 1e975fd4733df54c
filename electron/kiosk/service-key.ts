/**
 * The service key: which API key the kiosk calls the service with, where it came from, and the staff
 * panel's way to store or clear it. The key never leaves the kiosk's services: the page hears only
 * whether there is one and its source (PublicConfig, StaffSettings).
 *
 * - The environment key always wins (contract: clearing the stored key goes back to demo "unless the
 *   environment sets one"); the stored key is what `set` manages.
 * - How weakly a stored key is protected is a property of this machine's key store, reported only while
 *   the key in use is a stored one.
 * - A change is stored first (`persist`: main's encrypted store), then the connection is rebuilt with it
 *   (`onChange`): settings screen → staff operations → here → persist → connection rebuild.
 */
import { fail, ok, type KeyProtectionWeak, type Result } from '../contract.ts';
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { addSecret, type Logger } from '../core/log.ts';

export type ApiKeySource = 'env' | 'stored' | 'none';

export interface ServiceKeyOptions {
  /** The effective key at start-up (environment first, else the decrypted stored key), or null. */
  apiKey: string | null;
  apiKeySource: ApiKeySource;
  /** How weakly a stored key is protected (kiosk/stored-key.ts `storedKeyWeak`). Default false. */
  weaklyProtected?: KeyProtectionWeak;
  /** Store (encrypted) or clear the operator's key. Rejecting makes `set` fail. Default: refuses. */
  persist?: (key: string | null) => Promise<void>;
  logger: Logger;
  /** The kiosk is shutting down: a change is refused. */
  closing(): boolean;
  /** A call is running: a change is refused (the call would go on with the old key). */
  callRunning(): boolean;
  /** The key changed: rebuild the connection with it. */
  onChange(): Promise<void>;
}

/** What the rest of the kiosk and its features see of the key: never the key itself. */
export interface ServiceKeyView {
  /** Whether there is a key in use (the page's `hasApiKey`). */
  readonly present: boolean;
  readonly source: ApiKeySource;
  /** How weakly the key in use is protected: false unless it is a stored one. */
  readonly weaklyProtected: KeyProtectionWeak;
  /** Store (or clear, with null) the operator's key, then rebuild the connection with it. */
  set(key: string | null): Promise<Result<void>>;
}

export interface ServiceKey extends ServiceKeyView {
  /** The key in use (the environment's, else the stored one), or null. Only the connection reads it. */
  readonly value: string | null;
}

export function createServiceKey(options: ServiceKeyOptions): ServiceKey {
  const { logger } = options;
  const persist = options.persist ?? (async () => {
    throw new AvatarError('internal', 'This kiosk cannot store an API key.');
  });
  const envKey = options.apiKeySource === 'env' ? options.apiKey : null;
  let storedKey = options.apiKeySource === 'stored' ? options.apiKey : null;
  const weaklyProtected = options.weaklyProtected ?? false;
  addSecret(envKey);
  addSecret(storedKey);
  const source = (): ApiKeySource => (envKey ? 'env' : storedKey ? 'stored' : 'none');

  return {
    get value() {
      return envKey ?? storedKey;
    },
    get present() {
      return (envKey ?? storedKey) !== null;
    },
    get source() {
      return source();
    },
    get weaklyProtected() {
      return source() === 'stored' ? weaklyProtected : false;
    },
    async set(key) {
      if (options.closing()) return fail('cancelled', 'The kiosk is shutting down.');
      if (options.callRunning()) return fail('invalid_request', 'Hang up the current session before changing the API key.');
      try {
        await persist(key);
      } catch (error) {
        const e = toAvatarError(error);
        logger.error('Could not store the API key', { message: e.message });
        return fail(e.code, `Could not store the API key: ${e.message}`);
      }
      addSecret(key);
      storedKey = key;
      logger.info(key ? 'API key stored' : 'Stored API key cleared', { source: source() });
      await options.onChange();
      return ok(undefined);
    },
  };
}
