/**
 * Reading the stored API key at start-up, and saying how well it is protected, without Electron
 * (main/store.ts passes Electron's `safeStorage` in).
 *
 * - Bounded: the async decrypt may wait on the OS keyring, and on an auto-login kiosk a locked GNOME
 *   keyring (or an unsigned macOS build asking for Keychain access) waits for a password nobody types.
 *   After `timeoutMs` the kiosk starts without the key (demo mode) and says why; a late answer is ignored.
 * - Honest about protection: Electron 45's `getSelectedStorageBackend()` names the backend of the
 *   synchronous API, while the async API picks its own provider on Linux (the secret portal, the Secret
 *   Service, KWallet, or a hard-coded key) and does not report which. So on Linux the answer is
 *   `'unknown'`, except when the command line forces the hard-coded key (`--password-store=basic`),
 *   which both APIs obey. macOS (Keychain) and Windows (DPAPI) always use the OS keystore.
 */
import type { KeyProtectionWeak } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { toAvatarError, type ErrorInfo } from '../core/errors.ts';
import { silentLogger, type Logger } from '../core/log.ts';

/** The part of Electron's `safeStorage` (async API) read here. */
export interface AsyncKeyStore {
  isAsyncEncryptionAvailable(): Promise<boolean>;
  decryptStringAsync(encrypted: Buffer): Promise<{ result: string; shouldReEncrypt: boolean }>;
  encryptStringAsync(plainText: string): Promise<Buffer>;
}

/** How long start-up waits for the keyring before going on without the stored key. */
export const KEYRING_TIMEOUT_MS = 5_000;

export interface StoredKeyResult {
  key: string | null;
  /** Why there is no key although one is stored (null when the key was read). */
  problem: ErrorInfo | null;
}

export async function readStoredKey(options: {
  cipherBase64: string;
  store: AsyncKeyStore;
  /** Store the re-encrypted key (the keyring rotated its key); runs after start-up goes on. */
  saveCipher?(cipherBase64: string): void;
  clock?: Clock;
  timeoutMs?: number;
  logger?: Logger;
}): Promise<StoredKeyResult> {
  const { store, logger = silentLogger } = options;
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? KEYRING_TIMEOUT_MS;

  let late = false; // set once start-up has gone on without the key: a late answer changes nothing
  const read = async (): Promise<StoredKeyResult> => {
    if (!(await store.isAsyncEncryptionAvailable())) {
      const message = 'A stored API key exists but secure storage is not available on this system; the kiosk runs in demo mode. Set AVATAR_API_KEY instead.';
      logger.error(message);
      return { key: null, problem: { code: 'invalid_config', message } };
    }
    const { result, shouldReEncrypt } = await store.decryptStringAsync(Buffer.from(options.cipherBase64, 'base64'));
    if (shouldReEncrypt && options.saveCipher && !late) {
      const save = options.saveCipher;
      void store.encryptStringAsync(result).then(
        (cipher) => save(cipher.toString('base64')),
        (error: unknown) => logger.warn('The stored API key could not be re-encrypted; it still works', { error: toAvatarError(error).message }),
      );
    }
    return { key: result.trim() || null, problem: null };
  };

  let timer: ReturnType<Clock['setTimeout']> | null = null;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = clock.setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const outcome = await Promise.race([
    read().catch((error: unknown): StoredKeyResult => {
      const message = 'The stored API key could not be decrypted; the kiosk runs in demo mode. Enter the key again in the staff panel.';
      logger.error(message, { error: toAvatarError(error).message });
      return { key: null, problem: { code: 'invalid_config', message } };
    }),
    timedOut,
  ]);
  if (timer !== null) clock.clearTimeout(timer);
  if (outcome !== 'timeout') return outcome;
  late = true;
  const message = `The keyring did not answer within ${Math.round(timeoutMs / 1000)} s (locked, or waiting for a password), so the kiosk started without the stored API key, in demo mode. Unlock the keyring at login (or set AVATAR_API_KEY) and restart.`;
  logger.error(message, { timeoutMs });
  return { key: null, problem: { code: 'timeout', message } };
}

/** See the module comment. `passwordStore`: the value of the `--password-store` switch ('' when absent). */
export function storedKeyWeak(options: { platform: NodeJS.Platform; passwordStore: string }): KeyProtectionWeak {
  if (options.platform !== 'linux') return false;
  return options.passwordStore === 'basic' ? true : 'unknown';
}
