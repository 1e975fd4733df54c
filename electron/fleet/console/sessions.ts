/**
 * Who is asking the fleet console: an account's token (`Authorization: Bearer …`: the CLI, Prometheus,
 * scripts), or a browser session made when someone signed in on the page with a token.
 *
 * A browser session is two secrets, neither of them the token:
 *  - a session id in an HttpOnly, SameSite=Strict cookie, named `__Host-fleet_console` (Secure, Path=/,
 *    no Domain) wherever the browser takes a Secure cookie — over https, and on http://127.0.0.1 or
 *    localhost, which browsers count as secure — else `fleet_console`;
 *  - a page key the page keeps in its own sessionStorage and sends as `X-Fleet-Key` with every request.
 * Browsers scope cookies by host, not by port: any other server on 127.0.0.1 the operator's browser
 * visits receives the cookie. Storage is scoped by origin, port included, so that server never sees the
 * key, and a cookie without its key opens nothing. Only the screenshots, which the page shows as
 * images (no header can go with them), are served on the cookie alone — under names that are random and
 * learnt only through the keyed API, and with headers that refuse any other origin.
 *
 * Sessions are kept in memory: a restarted console asks everyone to sign in again. One ends after
 * SESSION_IDLE_MS unused or SESSION_MAX_MS in all, when its account is removed, or at sign-out.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Account, AccountBook } from './accounts.ts';

export const SECURE_COOKIE = '__Host-fleet_console';
export const PLAIN_COOKIE = 'fleet_console';
export const KEY_HEADER = 'x-fleet-key';
export const SESSION_IDLE_MS = 12 * 60 * 60_000;
export const SESSION_MAX_MS = 7 * 24 * 60 * 60_000;
/** Sessions kept at most (the oldest goes first). */
export const MAX_SESSIONS = 1_000;

interface Session {
  keyHash: Buffer;
  name: string;
  createdMs: number;
  lastMs: number;
}

export interface SignedIn {
  who: Account;
  /** The cookie's value. */
  sessionId: string;
  /** What the page sends as `X-Fleet-Key`. */
  key: string;
}

export interface ConsoleSessions {
  /** Sign in with a token: a new session, or null when the token is no account's. */
  signIn(token: string): SignedIn | null;
  signOut(headers: IncomingHttpHeaders): void;
  /** The bearer token's account, or the session's when the cookie comes with its key. */
  who(headers: IncomingHttpHeaders): Account | null;
  /** The bearer token's account, or the session's from the cookie alone (images only). */
  whoByCookie(headers: IncomingHttpHeaders): Account | null;
  /** The Set-Cookie values that start a session (`secure`: the browser takes a Secure cookie here). */
  cookies(sessionId: string, secure: boolean): string[];
  /** The Set-Cookie values that end one. */
  clearCookies(secure: boolean): string[];
  readonly size: number;
}

const sha = (s: string) => createHash('sha256').update(s).digest();

export function consoleSessions(accounts: AccountBook, now: () => number): ConsoleSessions {
  const sessions = new Map<string, Session>();

  const bearer = (headers: IncomingHttpHeaders): Account | null => {
    const auth = headers.authorization;
    return auth?.startsWith('Bearer ') ? accounts.byToken(auth.slice(7).trim()) : null;
  };
  const cookieSession = (headers: IncomingHttpHeaders): { id: string; session: Session } | null => {
    for (const part of (headers.cookie ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0) continue;
      const name = part.slice(0, eq).trim();
      if (name !== SECURE_COOKIE && name !== PLAIN_COOKIE) continue;
      const id = part.slice(eq + 1).trim();
      const session = sessions.get(id);
      if (!session) continue;
      const t = now();
      if (t - session.lastMs > SESSION_IDLE_MS || t - session.createdMs > SESSION_MAX_MS) {
        sessions.delete(id);
        continue;
      }
      return { id, session };
    }
    return null;
  };
  const accountOf = (found: { id: string; session: Session }): Account | null => {
    const account = accounts.byName(found.session.name);
    if (!account) {
      sessions.delete(found.id);
      return null;
    }
    found.session.lastMs = now();
    return account;
  };

  return {
    signIn(token) {
      const who = accounts.byToken(token);
      if (!who) return null;
      while (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      const sessionId = randomBytes(32).toString('base64url');
      const key = randomBytes(32).toString('base64url');
      sessions.set(sessionId, { keyHash: sha(key), name: who.name, createdMs: now(), lastMs: now() });
      return { who, sessionId, key };
    },
    signOut(headers) {
      const found = cookieSession(headers);
      if (found) sessions.delete(found.id);
    },
    who(headers) {
      const byToken = bearer(headers);
      if (byToken) return byToken;
      const found = cookieSession(headers);
      const key = headers[KEY_HEADER];
      if (!found || typeof key !== 'string' || !timingSafeEqual(sha(key), found.session.keyHash)) return null;
      return accountOf(found);
    },
    whoByCookie(headers) {
      const byToken = bearer(headers);
      if (byToken) return byToken;
      const found = cookieSession(headers);
      return found ? accountOf(found) : null;
    },
    cookies(sessionId, secure) {
      return secure ? [`${SECURE_COOKIE}=${sessionId}; Secure; HttpOnly; SameSite=Strict; Path=/`] : [`${PLAIN_COOKIE}=${sessionId}; HttpOnly; SameSite=Strict; Path=/`];
    },
    clearCookies(secure) {
      const gone = 'HttpOnly; SameSite=Strict; Path=/; Max-Age=0';
      return secure ? [`${SECURE_COOKIE}=; Secure; ${gone}`] : [`${PLAIN_COOKIE}=; ${gone}`];
    },
    get size() {
      return sessions.size;
    },
  };
}
