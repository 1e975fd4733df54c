/**
 * Reading config.json so that one mistake costs one setting: a bad value drops that setting only (the
 * rest of the file and the environment are kept, the staff PIN's hash above all) and is named, with what is
 * used instead, in a line staff can read on the PIN screen. An environment variable is named as such, never
 * blamed on config.json.
 */
import { AvatarError, toAvatarError } from '../core/errors.ts';
import { defaultConfig, envFieldSource, resolveConfig, unknownConfigKeys, type ConfigEnv, type KioskConfig, type ResolveOptions } from './config.ts';

/** One setting that was not used: where it came from, which key, why, and what is used instead. */
export interface ConfigProblem {
  /** `config.json`, or the environment variable that set it. */
  source: string;
  /** The dotted key (`callMode`, `service.baseUrl`). */
  field: string;
  /** The validator's sentence (as `resolveConfig` throws it). */
  message: string;
  /** One line for staff: "config.json: callMode is invalid, using video". */
  line: string;
}

/**
 * As `resolveConfig`, but a bad setting drops that setting only: the rest of the file (the staff PIN's hash
 * above all: it is read from the file itself) and of the environment is kept. Each dropped setting is
 * named, with the value used instead. Only a file that is not a JSON object falls back to the defaults.
 */
export function resolveConfigKeeping(raw: unknown, env: ConfigEnv = {}, options: ResolveOptions = {}): { config: KioskConfig; problems: ConfigProblem[] } {
  const problems: Array<Omit<ConfigProblem, 'line'>> = [];
  const input: Record<string, unknown> = isRecordValue(raw) ? structuredClone(raw) : {};
  if (raw !== undefined && raw !== null && !isRecordValue(raw)) problems.push({ source: 'config.json', field: '(root)', message: 'the file must hold a JSON object' });
  const envLeft: ConfigEnv = { ...env };
  let config: KioskConfig | null = null;
  // Each round drops one bad setting; a file has far fewer settings than this.
  for (let round = 0; round < 64 && config === null; round++) {
    try {
      config = resolveConfig(input, envLeft, options);
    } catch (error) {
      const field = error instanceof AvatarError && typeof error.details?.field === 'string' ? error.details.field : '(root)';
      const message = error instanceof Error ? error.message : String(error);
      const fromEnv = envFieldSource(field, envLeft);
      if (fromEnv) {
        delete (envLeft as Record<string, unknown>)[fromEnv];
        problems.push({ source: fromEnv, field, message });
      } else if (field !== '(root)' && dropSetting(input, field)) {
        problems.push({ source: 'config.json', field, message });
      } else {
        problems.push({ source: 'config.json', field, message });
        break;
      }
    }
  }
  config ??= defaultConfig(envLeft, options);
  const used = config as unknown as Record<string, unknown>;
  return {
    config,
    problems: problems.map((p) => {
      const value = p.field === '(root)' ? undefined : valueAt(used, p.field);
      const instead = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? `using ${String(value)}` : value === undefined ? 'not set' : 'using the default';
      if (p.field === '(root)') return { ...p, line: `${p.source}: ${p.message}; using the defaults` };
      // A variable names one setting: "AVATAR_BASE_URL is invalid, not used".
      if (p.source !== 'config.json') return { ...p, line: `${p.source} is invalid, ${value === undefined ? 'not used' : instead}` };
      return { ...p, line: `${p.source}: ${p.field} is invalid, ${instead}` };
    }),
  };
}

/** What a kiosk starts with, read from its config file: the same for the Electron app and the browser mode. */
export interface KeptConfigFile {
  config: KioskConfig;
  /** Why the file was not used at all (it cannot be read or parsed); null when it was read. */
  configError: AvatarError | null;
  /** Each setting not used (the rest of the file applies). */
  problems: ConfigProblem[];
  /** Keys of the file this version does not know (a newer version's, kept in the file). */
  unknownKeys: string[];
}

/**
 * Read the config file through `read` (which throws when the file cannot be read or parsed) and keep what
 * can be kept: only an unreadable file costs every setting (then `configError` says why and nothing may be
 * written over it); a bad setting costs that setting only (`resolveConfigKeeping`).
 */
export function keepConfigFile(read: () => unknown, env: ConfigEnv = {}, options: ResolveOptions = {}): KeptConfigFile {
  let raw: unknown;
  try {
    raw = read();
  } catch (error) {
    const configError = unreadableFile(error);
    const kept = resolveConfigKeeping({}, env, options);
    return { config: kept.config, configError, problems: kept.problems, unknownKeys: [] };
  }
  const kept = resolveConfigKeeping(raw, env, options);
  return { config: kept.config, configError: null, problems: kept.problems, unknownKeys: unknownConfigKeys(raw) };
}

/** Why a config file could not be used at all, as one sentence with the parser's or the system's reason. */
function unreadableFile(error: unknown): AvatarError {
  if (error instanceof AvatarError) return error;
  const reason = toAvatarError(error).message;
  // electron-store already says so in a sentence that names the file; JSON.parse gives a position only.
  if (error instanceof SyntaxError && /not valid JSON/.test(reason)) return new AvatarError('invalid_config', reason, { cause: error });
  const what = error instanceof SyntaxError ? 'is not valid JSON' : 'cannot be read';
  return new AvatarError('invalid_config', `The configuration file ${what} (${reason}).`, { cause: error });
}

/** Remove the setting at a dotted path (within a list, the whole list's setting); false when nothing was there. */
function dropSetting(cfg: Record<string, unknown>, field: string): boolean {
  const parts = field.split('.');
  const listAt = parts.findIndex((p) => /^\d+$/.test(p));
  const path = listAt >= 0 ? parts.slice(0, listAt) : parts;
  let node: unknown = cfg;
  for (const key of path.slice(0, -1)) {
    if (!isRecordValue(node)) return false;
    node = node[key];
  }
  const last = path.at(-1);
  if (!isRecordValue(node) || last === undefined || !Object.hasOwn(node, last)) {
    // A rule between two settings (the named one is absent): drop the block it lives in.
    if (path.length > 1 && Object.hasOwn(cfg, path[0]!)) {
      delete cfg[path[0]!];
      return true;
    }
    return false;
  }
  delete node[last];
  return true;
}

function valueAt(cfg: Record<string, unknown>, field: string): unknown {
  let node: unknown = cfg;
  for (const key of field.split('.')) {
    if (!isRecordValue(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function isRecordValue(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
