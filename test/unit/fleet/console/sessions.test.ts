/**
 * The console's browser sessions (sessions.ts) on an injected clock: signing in with a token gives a
 * session id (the cookie) and a page key, neither of them the token; the API opens only to both together
 * (or a bearer token); a token used as a cookie is refused; a session ends when unused for
 * SESSION_IDLE_MS, after SESSION_MAX_MS in all, at sign-out, or when its account is removed; at most
 * MAX_SESSIONS are kept.
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import { accountsFromTokens, type Account, type AccountBook } from '../../../../electron/fleet/console/accounts.ts';
import { consoleSessions, KEY_HEADER, MAX_SESSIONS, PLAIN_COOKIE, SECURE_COOKIE, SESSION_IDLE_MS, SESSION_MAX_MS } from '../../../../electron/fleet/console/sessions.ts';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const OP_TOKEN = 'operator-token-0123456789abcdef';
const VIEWER_TOKEN = 'viewer-token-0123456789abcdef';
const OP: Account = { name: 'ana', role: 'operator' };
const VIEWER: Account = { name: 'wall', role: 'viewer' };

function rig(accounts: AccountBook = accountsFromTokens([{ ...OP, token: OP_TOKEN }, { ...VIEWER, token: VIEWER_TOKEN }])) {
  let now = T0;
  const sessions = consoleSessions(accounts, () => now);
  return { sessions, advance: (ms: number) => void (now += ms) };
}
const withCookie = (id: string, key?: string, name = SECURE_COOKIE): IncomingHttpHeaders => ({ cookie: `${name}=${id}`, ...(key === undefined ? {} : { [KEY_HEADER]: key }) });

describe('consoleSessions', () => {
  it('signing in gives a session id and a page key, neither of them the token; both together open the API, the cookie alone only images', () => {
    const { sessions } = rig();
    const signed = sessions.signIn(OP_TOKEN)!;
    assert.deepEqual(signed.who, OP);
    assert.match(signed.sessionId, /^[A-Za-z0-9_-]{43}$/);
    assert.match(signed.key, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(signed.sessionId !== OP_TOKEN && signed.key !== OP_TOKEN && signed.sessionId !== signed.key);
    assert.deepEqual(sessions.who(withCookie(signed.sessionId, signed.key)), OP);
    assert.deepEqual(sessions.who(withCookie(signed.sessionId, signed.key, PLAIN_COOKIE)), OP);
    assert.equal(sessions.who(withCookie(signed.sessionId)), null, 'the cookie without its key (another server on 127.0.0.1 gets the cookie)');
    assert.equal(sessions.who(withCookie(signed.sessionId, 'wrong')), null);
    assert.equal(sessions.who({ [KEY_HEADER]: signed.key }), null, 'the key without the cookie');
    assert.equal(sessions.who({ authorization: `Bearer ${signed.sessionId}` }), null, 'the session id is no bearer token');
    assert.equal(sessions.who({ authorization: `Bearer ${signed.key}` }), null, 'nor is the key');
    assert.deepEqual(sessions.whoByCookie(withCookie(signed.sessionId)), OP);
    assert.equal(sessions.size, 1);
  });

  it('a token used as a cookie is refused (with a key or not); a wrong token signs nobody in', () => {
    const { sessions } = rig();
    assert.equal(sessions.who(withCookie(OP_TOKEN, OP_TOKEN)), null);
    assert.equal(sessions.who(withCookie(OP_TOKEN, OP_TOKEN, PLAIN_COOKIE)), null);
    assert.equal(sessions.whoByCookie(withCookie(OP_TOKEN)), null);
    assert.equal(sessions.signIn('not-a-token'), null);
    assert.equal(sessions.size, 0);
    // The token itself works only as what it is: a bearer token.
    assert.deepEqual(sessions.who({ authorization: `Bearer ${VIEWER_TOKEN}` }), VIEWER);
    assert.deepEqual(sessions.who({ authorization: `Bearer ${OP_TOKEN}`, cookie: `${SECURE_COOKIE}=junk` }), OP);
  });

  it(`ends a session unused for ${SESSION_IDLE_MS / 3_600_000} hours; use keeps it, up to ${SESSION_MAX_MS / 86_400_000} days in all`, () => {
    const { sessions, advance } = rig();
    const s = sessions.signIn(OP_TOKEN)!;
    const headers = withCookie(s.sessionId, s.key);
    advance(SESSION_IDLE_MS);
    assert.deepEqual(sessions.who(headers), OP, 'exactly the idle time: still on');
    // Used every 11 hours it lives until its 7 days are up.
    let used = SESSION_IDLE_MS;
    while (used + 11 * 3_600_000 <= SESSION_MAX_MS) {
      advance(11 * 3_600_000);
      used += 11 * 3_600_000;
      assert.deepEqual(sessions.who(headers), OP, `used at ${used / 3_600_000} h`);
    }
    advance(SESSION_MAX_MS - used + 1);
    assert.equal(sessions.who(headers), null, 'past 7 days in all');
    assert.equal(sessions.size, 0, 'and it is gone');

    const idle = sessions.signIn(OP_TOKEN)!;
    advance(SESSION_IDLE_MS + 1);
    assert.equal(sessions.who(withCookie(idle.sessionId, idle.key)), null);
    assert.equal(sessions.size, 0);
  });

  it('sign-out ends the session; a removed account ends its sessions', () => {
    let removed = false;
    const base = accountsFromTokens([{ ...OP, token: OP_TOKEN }, { ...VIEWER, token: VIEWER_TOKEN }]);
    const { sessions } = rig({ byToken: (t) => base.byToken(t), byName: (n) => (removed && n === 'wall' ? null : base.byName(n)), list: () => base.list() });
    const a = sessions.signIn(OP_TOKEN)!;
    const b = sessions.signIn(VIEWER_TOKEN)!;
    sessions.signOut(withCookie(a.sessionId));
    assert.equal(sessions.who(withCookie(a.sessionId, a.key)), null);
    assert.deepEqual(sessions.who(withCookie(b.sessionId, b.key)), VIEWER);
    removed = true;
    assert.equal(sessions.who(withCookie(b.sessionId, b.key)), null);
    assert.equal(sessions.size, 0);
  });

  it(`keeps at most ${MAX_SESSIONS} sessions: the oldest goes first`, () => {
    const { sessions } = rig();
    const first = sessions.signIn(OP_TOKEN)!;
    const second = sessions.signIn(OP_TOKEN)!;
    for (let i = 2; i < MAX_SESSIONS; i++) sessions.signIn(OP_TOKEN);
    assert.equal(sessions.size, MAX_SESSIONS);
    sessions.signIn(OP_TOKEN);
    assert.equal(sessions.size, MAX_SESSIONS);
    assert.equal(sessions.who(withCookie(first.sessionId, first.key)), null);
    assert.deepEqual(sessions.who(withCookie(second.sessionId, second.key)), OP);
  });

  it('its cookies: __Host- and Secure where the browser takes them, HttpOnly and SameSite=Strict always; ending one clears it', () => {
    const { sessions } = rig();
    assert.deepEqual(sessions.cookies('ID', true), [`${SECURE_COOKIE}=ID; Secure; HttpOnly; SameSite=Strict; Path=/`]);
    assert.deepEqual(sessions.cookies('ID', false), [`${PLAIN_COOKIE}=ID; HttpOnly; SameSite=Strict; Path=/`]);
    assert.deepEqual(sessions.clearCookies(true), [`${SECURE_COOKIE}=; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`]);
    assert.deepEqual(sessions.clearCookies(false), [`${PLAIN_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`]);
  });
});
