/**
 * The Electron side of settings: the config file (electron-store, read through kiosk/config-keeping.ts)
 * and the API key (environment first, else safeStorage ciphertext in the same file).
 *
 * - A bad setting costs that setting only (kiosk/config-keeping.ts, as in the browser mode): the PIN hash
 *   and the rest of the file still apply. A file that cannot be read at all never crashes the kiosk: one
 *   clear line in the log, staff told on the Status tab, safe defaults, and no write into the broken file.
 * - The key is encrypted with safeStorage's async API; only the base64 ciphertext is stored. Reading it
 *   at start-up is bounded (a locked keyring must not hold the kiosk back) and how well it is protected
 *   is reported honestly (`unknown` on Linux): both decided in kiosk/stored-key.ts.
 */
import { app, safeStorage } from 'electron';
import { chmodSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Store from 'electron-store';
import { AvatarError, type ErrorInfo } from '../core/errors.ts';
import { addSecret, type Logger } from '../core/log.ts';
import { keepUnknownKeys, type ConfigEnv, type KioskConfig } from '../kiosk/config.ts';
import { keepConfigFile, type ConfigProblem } from '../kiosk/config-keeping.ts';
import type { ApiKeySource } from '../kiosk/service-key.ts';
import type { SettingsPersistence } from '../operations/settings.ts';
import { loadPolicy, type PolicyLayer } from '../fleet/managed-config.ts';
import type { KeyProtectionWeak } from '../contract.ts';
import { readStoredKey, storedKeyWeak } from '../kiosk/stored-key.ts';
import { unpackagedWindowDefault } from '../kiosk/os-integration.ts';

export interface LoadedSettings {
  config: KioskConfig;
  /** Why the config file was not used at all (null when it could be read). */
  configError: AvatarError | null;
  /** Each setting of the file (or the environment) not used; the rest applies. */
  configProblems: ConfigProblem[];
  apiKey: string | null;
  apiKeySource: ApiKeySource;
  apiKeyWeaklyProtected: KeyProtectionWeak;
  /** Why a stored key was not used (keyring timeout, no secure storage, undecryptable); null otherwise. */
  keyProblem: ErrorInfo | null;
  persistApiKey(key: string | null): Promise<void>;
  /** Where the config file is (for the operator's dialog). */
  configPath: string | null;
  /** The raw config file for the staff panel (reads {} and refuses writes when the file is invalid). */
  persistence: SettingsPersistence;
  /** The administrator's policy: its path, accepted settings, managed (locked) keys and problems. */
  policy: PolicyLayer;
  /** Keys of config.json this version does not know (a newer version's, kept in the file). */
  unknownKeys: string[];
}

export async function loadSettings(options: { env: ConfigEnv & Record<string, string | undefined>; appRoot: string; logger: Logger; isPackaged?: boolean }): Promise<LoadedSettings> {
  const { env, appRoot, logger } = options;
  // The policy's settings win; a bad one is reported and dropped.
  const policyLayer = loadPolicy({ env });
  for (const problem of policyLayer.problems) logger.error('Policy problem', { message: problem });
  if (policyLayer.found) logger.info('Administrator policy applied', { path: policyLayer.path, managed: policyLayer.managedKeys });
  const policy = policyLayer.policy;
  let store: Store<Record<string, unknown>> | null = null;
  let openError: unknown = null;
  try {
    store = new Store<Record<string, unknown>>({
      name: 'config',
      // No schema here: electron-store would refuse the whole file for one bad value (and every read and
      // write after it). The kiosk's own reading (kiosk/config-keeping.ts) drops that setting only.
      clearInvalidConfig: false,
      // It holds the PIN hash, the metrics token and the key's ciphertext: this user only.
      configFileMode: 0o600,
    });
    ownerOnly(store.path, logger);
  } catch (error) {
    openError = error;
  }
  const opened = store;
  const kept = keepConfigFile(
    () => {
      if (!opened) throw openError;
      return unpackagedWindowDefault(opened.store, options.isPackaged ?? true);
    },
    env,
    { appRoot, policy },
  );
  const { config, configError, problems: configProblems, unknownKeys } = kept;
  if (configError) {
    logger.error('Invalid configuration file; running with safe defaults', { message: configError.message, path: store?.path ?? null });
    store = null; // never write into a file we could not read
  }
  for (const problem of configProblems) logger.error('A setting was not used', { line: problem.line, message: problem.message });
  if (unknownKeys.length) logger.warn('The configuration file has settings this version does not know; they are ignored and kept', { keys: unknownKeys, path: store?.path ?? null });

  const weak = storedKeyWeak({ platform: process.platform, passwordStore: app.commandLine.getSwitchValue('password-store') });
  if (weak === true) logger.warn('safeStorage uses its hard-coded key (--password-store=basic): a stored API key is only weakly protected. Prefer AVATAR_API_KEY from a protected environment.');

  let apiKey: string | null = null;
  let apiKeySource: ApiKeySource = 'none';
  let keyProblem: ErrorInfo | null = null;
  const envKey = env.AVATAR_API_KEY?.trim();
  if (envKey) {
    apiKey = envKey;
    apiKeySource = 'env';
  } else if (config.encryptedApiKey) {
    if (weak === 'unknown') logger.info('On Linux Electron does not say whether the stored API key is kept by a keyring or a hard-coded key; prefer AVATAR_API_KEY from a protected environment.');
    const writable = store;
    const read = await readStoredKey({
      cipherBase64: config.encryptedApiKey,
      store: safeStorage,
      logger,
      ...(writable ? { saveCipher: (cipher: string) => writable.set('encryptedApiKey', cipher) } : {}),
    });
    apiKey = read.key;
    keyProblem = read.problem;
    if (apiKey) apiKeySource = 'stored';
  }
  addSecret(apiKey);

  return {
    config,
    configError,
    configProblems,
    apiKey,
    apiKeySource,
    apiKeyWeaklyProtected: weak,
    keyProblem,
    configPath: store?.path ?? null,
    persistence: {
      read: () => (store ? { ...store.store } : {}),
      async write(next) {
        if (!store) throw new AvatarError('invalid_config', 'The configuration file is invalid; fix it (or delete it) before saving settings.');
        // A newer version's settings stay in the file (a rollback must not lose them on the first save).
        store.store = keepUnknownKeys(store.store, next); // staff-ops validated `next`; electron-store writes the file
      },
    },
    policy: policyLayer,
    unknownKeys,
    async persistApiKey(key) {
      if (!store) throw new AvatarError('invalid_config', 'The configuration file is invalid; fix it before storing a key.');
      if (key === null) {
        store.delete('encryptedApiKey');
        return;
      }
      if (!(await safeStorage.isAsyncEncryptionAvailable())) {
        throw new AvatarError('internal', 'Secure storage is not available on this system; set AVATAR_API_KEY instead.');
      }
      const cipher = await safeStorage.encryptStringAsync(key);
      store.set('encryptedApiKey', cipher.toString('base64'));
    },
  };
}

/**
 * config.json at 0600 and the user-data folder at 0700 (POSIX): conf sets the mode on its next write, but
 * a file written by an older version (0644) stays readable by every local user until then, and the
 * folder also holds the ledger, the logs and the lock-out. Windows keeps its per-user ACLs.
 */
function ownerOnly(configPath: string, logger: Logger): void {
  if (process.platform === 'win32') return;
  for (const [path, mode] of [[dirname(configPath), 0o700], [configPath, 0o600]] as const) {
    try {
      if (existsSync(path)) chmodSync(path, mode);
    } catch (error) {
      logger.warn('Could not make a settings path private to this user', { path, error: String(error) });
    }
  }
}
