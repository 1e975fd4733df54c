/**
 * The page's half of its browser session (electron/fleet/console/sessions.ts): signing in with an account's
 * token gives an HttpOnly cookie (the browser keeps it; the page never sees it) and a page key, which the
 * page keeps in this tab's sessionStorage and sends as `X-Fleet-Key` with every request. The cookie alone
 * opens nothing but screenshots (another server on 127.0.0.1 receives the cookie, never the key), so every
 * call goes through `api()`; the live stream is read with fetch (an EventSource cannot send a header).
 * The token itself is sent once, to /api/sign-in, and never stored.
 */
import type { Me } from '../../../electron/fleet/console/view.ts';

const KEY = 'fleet-console-key';
export const KEY_HEADER = 'X-Fleet-Key';

export function pageKey(): string | null {
  return sessionStorage.getItem(KEY);
}

/** A request with the page key; a 401 forgets it (the session ended) so the page asks to sign in. */
export async function api(path: string, init: RequestInit = {}): Promise<Response> {
  const key = pageKey();
  const headers = new Headers(init.headers);
  if (key) headers.set(KEY_HEADER, key);
  const res = await fetch(path, { ...init, headers, credentials: 'same-origin' });
  if (res.status === 401) sessionStorage.removeItem(KEY);
  return res;
}

/** Sign in with a token: the account, or the console's reason why not. */
export async function signIn(token: string): Promise<{ ok: true; me: Me } | { ok: false; message: string }> {
  try {
    const res = await fetch('/api/sign-in', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token }), credentials: 'same-origin' });
    const body = (await res.json()) as { ok: true; me: Me; key: string } | { ok: false; error: { message: string } };
    if (!body.ok) return { ok: false, message: body.error.message };
    sessionStorage.setItem(KEY, body.key);
    return { ok: true, me: body.me };
  } catch (error) {
    return { ok: false, message: `The console did not answer: ${error instanceof Error ? error.message : String(error)}` };
  }
}

export async function signOut(): Promise<void> {
  await api('/api/sign-out', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }).catch(() => undefined);
  sessionStorage.removeItem(KEY);
}

/** The token in the address (`/#token=…`, the console's first-start link), taken out of the address at once. */
export function tokenFromAddress(): string | null {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!m) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return decodeURIComponent(m[1]!);
}

/**
 * Server-sent events read with fetch: each `data:` line of event `name` to `onData`, until the stream ends
 * or `signal` aborts. Resolves with the response's status (200 when the stream ran and ended).
 */
export async function readEvents(path: string, name: string, onData: (data: string) => void, signal: AbortSignal, onOpen?: () => void): Promise<number> {
  const res = await api(path, { signal });
  if (!res.ok || !res.body) return res.status;
  onOpen?.();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return 200;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const event = block.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = block.find((l) => l.startsWith('data: '));
      if (event === name && data) onData(data.slice(6));
    }
  }
}

/** Download `path` as the file `name`: fetched with the page key (a plain link would carry none), then handed to the browser. */
export async function download(path: string, name: string): Promise<{ ok: true } | { ok: false; status: number }> {
  const res = await api(path);
  if (!res.ok) return { ok: false, status: res.status };
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return { ok: true };
}
