/**
 * Managed configuration: an administrator's policy file, the way fleet tools (MDM, Intune,
 * Ansible) configure many kiosks. Same schema as config.json; every key it sets overrides the user's file
 * and the environment, and is "managed" (the staff panel shows it locked). Electron-free.
 *
 * Where: `AVATAR_KIOSK_POLICY` if set, else the system location of the OS (`policyPath`). No file means no
 * policy. A bad file never stops the kiosk: unreadable or non-JSON → the whole policy is ignored and
 * reported; otherwise each top-level block (`mqtt`, `schedule`, `window`, `staffPinHash`…) is checked
 * whole against the config schema. Settings only make sense together (a broker's `kioskId` without its
 * `url`, a schedule's `weekly` without its `timeZone`), so a block is never half applied: a bad block is
 * reported, and it stays locked with no value — neither config.json nor a remote `apply` may fill it in,
 * because the administrator meant to set it. A policy may not carry `encryptedApiKey` (ciphertext only
 * this machine's user can decrypt; the key belongs in AVATAR_API_KEY).
 *
 * A refused block is present in `policy` with the value `undefined`: the overlay then replaces the user's
 * block with nothing (the schema's defaults), and `managedKeys` lists it as locked.
 *
 * A policy file that exists always holds the audience (`audience`, `adult`, `region`): the keys it does
 * not set are locked with no value, so a managed kiosk is public unless the policy itself says adult —
 * neither config.json nor a fleet `apply` can change that (kiosk/safety-config.ts). This holds for a
 * file refused whole too: the administrator meant to manage the kiosk.
 *
 * Only an administrator may write it: a policy sets the PIN hash, the service URL and the window mode, so
 * a file a standard user can write would let them take the kiosk over. On POSIX the file and its folder
 * must be owned by root and writable by nobody else; otherwise the whole policy is refused, saying why.
 * Windows ACLs are not read here: the installer must create the folder with write access for
 * Administrators and SYSTEM only (docs/security.md), since %ProgramData% lets users create files.
 */
import { lstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { dirname, win32 } from 'node:path';
import { configFileSchema } from '../kiosk/config.ts';
import { WHOLE_BLOCKS } from '../kiosk/fleet-config.ts';
import { SAFETY_KEYS } from '../kiosk/safety-config.ts';

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
  /** One human line per rejected block (or for the whole file). */
  problems: string[];
  /** Top-level blocks the policy names but that were refused (locked with no value). */
  refusedBlocks: string[];
  /** The policy names a staff PIN (`staffPinHash`), accepted or not. */
  namesStaffPin: boolean;
}

/** Whether `dotted` (e.g. `avatar.name`, `schedule`) is set or locked by the policy: the key itself, a
 *  block above it, or a block below it is in the policy (a refused block counts, with its value undefined). */
export function policyLocks(policy: Record<string, unknown>, dotted: string): boolean {
  let cur: unknown = policy;
  for (const part of dotted.split('.')) {
    if (!isRecord(cur) || !Object.hasOwn(cur, part)) return false;
    cur = cur[part];
    if (!isRecord(cur)) return true;
  }
  return true;
}

/** The policy file's location: `AVATAR_KIOSK_POLICY`, else the OS's system-wide place. */
export function policyPath(env: Record<string, string | undefined> = process.env, platform: NodeJS.Platform = process.platform): string {
  const fromEnv = env[POLICY_ENV]?.trim();
  if (fromEnv) return fromEnv;
  if (platform === 'win32') return win32.join(env.ProgramData?.trim() || 'C:\\ProgramData', 'AvatarKiosk', 'policy.json');
  if (platform === 'darwin') return '/Library/Application Support/AvatarKiosk/policy.json';
  return '/etc/avatar-kiosk/policy.json';
}

/** The dotted leaf keys of a (nested) settings object: objects recurse, anything else (lists too, and the
 *  blocks set as a whole) is one key. */
export function managedKeys(policy: Record<string, unknown>): string[] {
  const out: string[] = [];
  const walk = (value: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(value)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (isRecord(v) && Object.keys(v).length && !(prefix === '' && ([...WHOLE_BLOCKS, ...SAFETY_KEYS] as readonly string[]).includes(k))) walk(v, key);
      else out.push(key);
    }
  };
  walk(policy, '');
  return out.sort();
}

/** Check a parsed policy block by block. */
export function parsePolicy(raw: unknown, path = 'policy'): PolicyLayer {
  const layer: PolicyLayer = { path, found: true, policy: {}, managedKeys: [], problems: [], refusedBlocks: [], namesStaffPin: false };
  if (!isRecord(raw)) {
    layer.problems.push(`The policy file ${path} must hold a JSON object; it was ignored.`);
    return layer;
  }
  layer.namesStaffPin = Object.hasOwn(raw, 'staffPinHash');
  const known = new Set(Object.keys(configFileSchema.shape));
  for (const key of Object.keys(raw).sort()) {
    const value = raw[key];
    if (UNSAFE_PARTS.has(key) || !known.has(key)) {
      layer.problems.push(`Policy setting "${key}" was ignored: unknown setting.`);
      continue;
    }
    if (FORBIDDEN_KEYS.has(key)) {
      layer.problems.push(`Policy setting "${key}" was ignored: a policy cannot hold an API key (use AVATAR_API_KEY).`);
      continue;
    }
    const parsed = configFileSchema.safeParse({ [key]: value });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const keys = issue?.code === 'unrecognized_keys' ? issue.keys : [];
      const at = [...(issue?.path ?? []).map(String), ...(keys.length ? [keys[0]!] : [])].join('.') || key;
      const why = issue?.code === 'unrecognized_keys' ? 'unknown setting' : (issue?.message ?? 'invalid value');
      layer.problems.push(`Policy block "${key}" was refused whole (at "${at}": ${why}); it stays locked with none of its settings applied.`);
      // Locked with no value: the user's file cannot fill in what the administrator meant to set.
      layer.policy[key] = undefined;
      layer.refusedBlocks.push(key);
      continue;
    }
    layer.policy[key] = structuredClone(value);
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
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      // A link at the path (or for its folder) that leads nowhere is a policy someone put there and that is
      // gone or was moved, not "no policy": taken as none, first-run setup would open and let a visitor
      // choose the staff PIN on a managed kiosk.
      const dangling = options.readText ? null : danglingLink(path);
      if (dangling) return refusedFile(path, `The policy file ${path} could not be read: ${dangling}; it was ignored. Restore the file the link points to, or remove the link.`, false);
      return { path, found: false, policy: {}, managedKeys: [], problems: [], refusedBlocks: [], namesStaffPin: false };
    }
    return refusedFile(path, `The policy file ${path} could not be read (${code ?? 'error'}); it was ignored.`, false);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    raw = undefined;
  }
  // Whether the refused file names a PIN still matters: setup must not open in its place.
  const namesStaffPin = isRecord(raw) && Object.hasOwn(raw, 'staffPinHash');
  const writable = statOf ? policyWriteProblem(path, statOf, options.platform) : null;
  if (writable) return refusedFile(path, writable, namesStaffPin);
  if (raw === undefined) return refusedFile(path, `The policy file ${path} is not valid JSON; it was ignored.`, false);
  return withAudienceLocked(parsePolicy(raw, path));
}

/** A found policy holds the audience keys: those it does not set are locked with no value (the schema's
 *  default: public), and listed as managed so the staff panel shows them locked. */
export function withAudienceLocked(layer: PolicyLayer): PolicyLayer {
  if (!layer.found) return layer;
  const policy = { ...layer.policy };
  for (const key of SAFETY_KEYS) if (!Object.hasOwn(policy, key)) policy[key] = undefined;
  return { ...layer, policy, managedKeys: managedKeys(policy) };
}

// ---------------------------------------------------------------------------------------------------

/** The symbolic link at `path` or at its folder that leads nowhere, in words; null when there is none. */
function danglingLink(path: string): string | null {
  for (const p of [path, dirname(path)]) {
    try {
      if (lstatSync(p).isSymbolicLink()) return `${p} is a symbolic link to ${readlinkSync(p)}, which does not exist`;
    } catch {
      // nothing at all there
    }
  }
  return null;
}

function refusedFile(path: string, problem: string, namesStaffPin: boolean): PolicyLayer {
  return withAudienceLocked({ path, found: true, policy: {}, managedKeys: [], problems: [problem], refusedBlocks: [], namesStaffPin });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
