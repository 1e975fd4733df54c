/** A spare's service client for unit tests: creates wait until a test answers them (`answer`). */
import assert from 'node:assert/strict';
import { flushMicrotasks } from '../../electron/core/clock.ts';
import type { CreateSessionRequest, CreateSessionResponse } from '../../electron/core/protocol.ts';
import type { SpareClient } from '../../electron/kiosk/spare.ts';

export interface PendingCreate {
  request: CreateSessionRequest;
  signal: AbortSignal | undefined;
  resolve(res: CreateSessionResponse): void;
  reject(error: unknown): void;
}

export class ScriptedClient implements SpareClient {
  readonly creates: PendingCreate[] = [];
  /** `rejectOnAbort`: a create fails when its signal aborts, as a real fetch does. `host`: where its sockets go
   *  (default `service.test`), to tell two clients' sockets apart. */
  constructor(private readonly options: { rejectOnAbort?: boolean; host?: string } = {}) {}
  createSession(request: CreateSessionRequest, opts: { signal?: AbortSignal } = {}): Promise<CreateSessionResponse> {
    return new Promise((resolve, reject) => {
      if (this.options.rejectOnAbort) opts.signal?.addEventListener('abort', () => reject(opts.signal!.reason), { once: true });
      this.creates.push({ request, signal: opts.signal, resolve, reject });
    });
  }
  socketRequest(liveId: string): { url: string; headers: Record<string, string> } {
    return { url: `ws://${this.options.host ?? 'service.test'}/live/ws/live/connect?live_id=${liveId}`, headers: { authorization: 'Token k' } };
  }
  /** Answer create #i with a room `liveId`. */
  async answer(i: number, liveId: string): Promise<void> {
    const c = this.creates[i];
    assert.ok(c, `create #${i} was made`);
    c.resolve({
      live: { id: liveId, status: 'waiting', live_duration: 600, call_mode: c.request.call_mode },
      rtc: { app_id: 'app', channel_id: `ch-${liveId}`, user_id: `u-${liveId}`, token: `tok-${liveId}`, token_expire_at: '9999999999' },
    });
    await flushMicrotasks();
  }
}
