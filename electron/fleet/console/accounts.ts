/**
 * The fleet console's accounts: each operator has a name, a role and a token of their own, so the audit
 * log says who sent what and a read-only viewer (a manager, a wall screen, Prometheus) cannot send.
 *
 *  - `operator`: sees everything and sends commands;
 *  - `viewer`: sees everything (the page, the API, `/metrics`), sends nothing.
 *
 * They live in `accounts.json` in the console's data folder (0600), which keeps only each token's SHA-256:
 * a token is 192 random bits, so its hash needs no slow KDF and a copy of the file opens nothing. A
 * token is shown once, when it is made (`npm run fleet -- account add`, or the console's first start),
 * and never logged. The running console notices a changed file (an account added or removed) within
 * a second. Electron-free.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { AvatarError } from '../../core/errors.ts';
import { addSecret, silentLogger, type Logger } from '../../core/log.ts';

export const ROLES = ['operator', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const ACCOUNTS_FILE = 'accounts.json';
/** The account the console makes on its first start, when there is none. */
export const FIRST_ACCOUNT = 'admin';
/** How often the running console looks whether the file changed (at most). */
export const RELOAD_CHECK_MS = 1_000;

export interface Account {
  name: string;
  role: Role;
}

export const accountNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/, 'must be 1-64 letters, digits, ".", "_", "@" or "-", starting with a letter or digit');
const fileSchema = z.strictObject({
  v: z.literal(1),
  accounts: z
    .array(z.strictObject({ name: accountNameSchema, role: z.enum(ROLES), tokenSha256: z.string().regex(/^[0-9a-f]{64}$/), createdAt: z.string().max(40) }))
    .max(1000),
});
type AccountsFile = z.infer<typeof fileSchema>;

/** Who a token belongs to. */
export interface AccountBook {
  /** The account whose token this is, or null. */
  byToken(token: string): Account | null;
  /** The account of that name as it is now (its role may have changed), or null once removed. */
  byName(name: string): Account | null;
  list(): Account[];
}

/** A new token: 192 random bits, base64url. */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

function book(entries: Array<Account & { tokenSha256: string }>): AccountBook {
  // Looking a token up by its hash leaks nothing useful through timing: nobody can aim at a hash's prefix.
  const byHash = new Map(entries.map((e) => [e.tokenSha256, { name: e.name, role: e.role }]));
  const byName = new Map(entries.map((e) => [e.name, { name: e.name, role: e.role }]));
  return {
    byToken: (token) => (token ? (byHash.get(hashOf(token)) ?? null) : null),
    byName: (name) => byName.get(name) ?? null,
    list: () => [...byName.values()],
  };
}

/** Accounts given as tokens in memory (tests, the in-process console). */
export function accountsFromTokens(list: Array<Account & { token: string }>): AccountBook {
  for (const a of list) addSecret(a.token);
  return book(list.map((a) => ({ name: a.name, role: a.role, tokenSha256: hashOf(a.token) })));
}

function readFile(path: string): AccountsFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new AvatarError('invalid_config', `The accounts file ${path} could not be read: ${error instanceof Error ? error.message : String(error)}.`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AvatarError('invalid_config', `The accounts file ${path} is not valid at "${issue.path.join('.')}": ${issue.message}.`);
  }
  const names = new Set<string>();
  for (const a of parsed.data.accounts) {
    if (names.has(a.name)) throw new AvatarError('invalid_config', `The accounts file ${path} names "${a.name}" twice.`);
    names.add(a.name);
  }
  return parsed.data;
}

function writeFile(path: string, file: AccountsFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

/**
 * The accounts in `path`, read again when the file changes (checked at most every RELOAD_CHECK_MS). A
 * file that becomes unreadable or invalid keeps the accounts last read, and says so in the log.
 */
export function openAccountsFile(path: string, options: { now?: () => number; logger?: Logger } = {}): AccountBook {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  let current = book(readFile(path).accounts);
  let stamp = fileStamp(path);
  let checkedMs = now();
  const fresh = () => {
    if (now() - checkedMs < RELOAD_CHECK_MS) return current;
    checkedMs = now();
    const s = fileStamp(path);
    if (s === stamp) return current;
    stamp = s;
    try {
      current = book(readFile(path).accounts);
      logger.warn('Fleet console: the accounts file changed; read again', { accounts: current.list().length });
    } catch (error) {
      logger.error('Fleet console: the accounts file changed and cannot be used; the accounts read before stay', { error: error instanceof Error ? error.message : String(error) });
    }
    return current;
  };
  return {
    byToken: (token) => fresh().byToken(token),
    byName: (name) => fresh().byName(name),
    list: () => fresh().list(),
  };
}

function fileStamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.mtimeMs}/${s.size}/${s.ino}`;
  } catch {
    return 'missing';
  }
}

/** The accounts in the file (none when there is no file). */
export function listAccounts(path: string): Account[] {
  if (!existsSync(path)) return [];
  return readFile(path).accounts.map((a) => ({ name: a.name, role: a.role }));
}

/** Add an account with a new token; answers the token (shown once, never stored). */
export function addAccount(path: string, name: string, role: Role, nowMs: number): string {
  const checked = accountNameSchema.safeParse(name);
  if (!checked.success) throw new AvatarError('invalid_request', `The account name "${name}" ${checked.error.issues[0]!.message}.`);
  const file: AccountsFile = existsSync(path) ? readFile(path) : { v: 1, accounts: [] };
  if (file.accounts.some((a) => a.name === name)) throw new AvatarError('invalid_request', `There is already an account "${name}"; remove it first to give it a new token.`);
  const token = newToken();
  file.accounts.push({ name, role, tokenSha256: hashOf(token), createdAt: new Date(nowMs).toISOString() });
  writeFile(path, file);
  return token;
}

/** Remove an account (its token and its browser sessions stop working). False when there was none. */
export function removeAccount(path: string, name: string): boolean {
  if (!existsSync(path)) return false;
  const file = readFile(path);
  const left = file.accounts.filter((a) => a.name !== name);
  if (left.length === file.accounts.length) return false;
  writeFile(path, { ...file, accounts: left });
  return true;
}
