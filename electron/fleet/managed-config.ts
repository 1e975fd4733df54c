/**
 * Managed configuration: an administrator's policy file, the way fleet tools (MDM, Intune,
 * Ansible) configure many kiosks. Same schema as config.json; every key it sets overrides the user's file
 * and the environment, and is "managed" (the staff panel shows it locked). Electron-free.
 *
 * Where: `AVATAR_KIOSK_POLICY` if set, else the system location of the OS (`policyPath`). No file means no
 * policy. A bad file never stops the kiosk: unreadable or non-JSON → the whole policy is ignored and
 * reported; otherwise each setting (a dotted leaf key such as `window.mode`; a list such as `avatars` is
 * one setting) is checked on its own against the config schema, and a bad one is reported and dropped
 * while the good ones apply. A policy may not carry `encryptedApiKey` (ciphertext only this machine's user
 * can decrypt; the key belongs in AVATAR_API_KEY).
 *
 * Only an administrator may write it: a policy sets the PIN hash, the service URL and the window mode, so
 * a file a standard user can write would let them take the kiosk over. On POSIX the file and its folder
 * must be owned by root and writable by nobody else; otherwise the whole policy is refused, saying why.
 * Windows ACLs are not read here: the installer must create the folder with write access for
 * Administrators and SYSTEM only (docs/security.md), since %ProgramData% lets users create files.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, win32 } from 'node:path';
import { configFileSchema } from '../kiosk/config.ts';

export const POLICY_ENV = 'AVATAR_KIOSK_POLICY';
/** Keys a policy may not set. */
const FORBIDDEN_KEYS = new Set(['encryptedApiKey']);
/** Never walked into (JSON.parse makes `__proto__` an own key). */
const UNSAFE_PARTS = new Set(['__proto__', 'constructor', 'prototype']);

export interface PolicyLayer {
  /** Where the policy was looked for. */
  path: string;
  /** Whether a file was there. */
  found: boolean;
  /** The accepted settings, nested like config.json (pass to `resolveConfig(…, {policy})`). */
  policy: Record<string, unknown>;
  /** Dotted keys the policy sets (sorted): the staff panel shows these as managed and locked. */
  managedKeys: string[];
  /** One human line per rejected setting (or for the whole file). */
  problems: string[];
}

/** The policy file's location: `AVATAR_KIOSK_POLICY`, else the OS's system-wide place. */
export function policyPath(env: Record<string, string | undefined> = process.env, platform: NodeJS.Platform = process.platform): string {
  const fromEnv = env[POLICY_ENV]?.trim();
  if (fromEnv) return fromEnv;
  if (platform === 'win32') return win32.join(env.ProgramData?.trim() || 'C:\\ProgramData', 'AvatarKiosk', 'policy.json');
  if (platform === 'darwin') return '/Library/Application Support/AvatarKiosk/policy.json';
  return '/etc/avatar-kiosk/policy.json';
}

/** The dotted leaf keys of a (nested) settings object: objects recurse, anything else (lists too) is one key. */
export function managedKeys(policy: Record<string, unknown>): string[] {
  const out: string[] = [];
  const walk = (value: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(value)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (isRecord(v) && Object.keys(v).length) walk(v, key);
      else out.push(key);
    }
  };
  walk(policy, '');
  return out.sort();
}

/** Check a parsed policy setting by setting. */
export function parsePolicy(raw: unknown, path = 'policy'): PolicyLayer {
  const layer: PolicyLayer = { path, found: true, policy: {}, managedKeys: [], problems: [] };
  if (!isRecord(raw)) {
    layer.problems.push(`The policy file ${path} must hold a JSON object; it was ignored.`);
    return layer;
  }
  for (const key of managedKeys(raw)) {
    const value = getPath(raw, key);
    if (key.split('.').some((part) => UNSAFE_PARTS.has(part))) {
      layer.problems.push(`Policy setting "${key}" was ignored: unknown setting.`);
      continue;
    }
    if (FORBIDDEN_KEYS.has(key.split('.')[0]!)) {
      layer.problems.push(`Policy setting "${key}" was ignored: a policy cannot hold an API key (use AVATAR_API_KEY).`);
      continue;
    }
    const alone = setPath({}, key, value);
    const parsed = configFileSchema.safeParse(alone);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      layer.problems.push(`Policy setting "${key}" was ignored: ${issue?.code === 'unrecognized_keys' ? 'unknown setting' : (issue?.message ?? 'invalid value')}.`);
      continue;
    }
    setPath(layer.policy, key, value);
  }
  layer.managedKeys = managedKeys(layer.policy);
  return layer;
}

/** What `policyWriteProblem` needs of a file's status. */
export interface OwnerAndMode {
  uid: number;
  mode: number;
}

/** Why non-administrators could write the policy at `path` (null when only root can), on POSIX: the file
 *  and its folder must belong to root and be writable by neither group nor others. */
export function policyWriteProblem(path: string, statOf: (path: string) => OwnerAndMode, platform: NodeJS.Platform = process.platform): string | null {
  if (platform === 'win32') return null;
  for (const [what, p] of [['file', path], ['folder', dirname(path)]] as const) {
    let st: OwnerAndMode;
    try {
      st = statOf(p);
    } catch {
      return null; // reading it fails on its own, and says so
    }
    if (st.uid !== 0) return `The policy ${what} ${p} belongs to user id ${st.uid}, not root, so a non-administrator could change it; it was ignored. Make it root's (chown root).`;
    if ((st.mode & 0o022) !== 0) return `The policy ${what} ${p} can be written by other users (mode ${(st.mode & 0o777).toString(8)}); it was ignored. Remove their write access (chmod go-w).`;
  }
  return null;
}

/** Read and check the policy file. Never throws: no file is an empty policy, a bad one is reported.
 *  `readText` alone (tests) skips the owner check; `statOf` gives it one. */
export function loadPolicy(
  options: { path?: string; env?: Record<string, string | undefined>; readText?: (path: string) => string; statOf?: (path: string) => OwnerAndMode; platform?: NodeJS.Platform } = {},
): PolicyLayer {
  const path = options.path ?? policyPath(options.env);
  const readText = options.readText ?? ((p: string) => readFileSync(p, 'utf8'));
  const statOf = options.statOf ?? (options.readText ? null : (p: string) => statSync(p));
  let text: string;
  try {
    text = readText(path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { path, found: false, policy: {}, managedKeys: [], problems: [] };
    return { path, found: true, policy: {}, managedKeys: [], problems: [`The policy file ${path} could not be read (${code ?? 'error'}); it was ignored.`] };
  }
  const writable = statOf ? policyWriteProblem(path, statOf, options.platform) : null;
  if (writable) return { path, found: true, policy: {}, managedKeys: [], problems: [writable] };
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return { path, found: true, policy: {}, managedKeys: [], problems: [`The policy file ${path} is not valid JSON; it was ignored.`] };
  }
  return parsePolicy(raw, path);
}

// ---------------------------------------------------------------------------------------------------

function getPath(obj: Record<string, unknown>, dotted: string): unknown {
  let cur: unknown = obj;
  for (const part of dotted.split('.')) cur = isRecord(cur) ? cur[part] : undefined;
  return cur;
}

function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): Record<string, unknown> {
  const parts = dotted.split('.');
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    if (!isRecord(cur[part])) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts.at(-1)!] = structuredClone(value);
  return obj;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
