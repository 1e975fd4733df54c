/**
 * A spare's service client for unit tests: creates wait until a test answers them (`answer`). With it, the
 * steps the spare tests share: bringing a spare to ready, the frame types a socket sent, and fake time
 * passing while the server pings.
 */
import assert from 'node:assert/strict';
import { flushMicrotasks, type FakeClock } from './fake-clock.ts';
import type { CreateSessionRequest, CreateSessionResponse, LiveRecord } from '../../electron/core/protocol.ts';
import type { SpareClient, SpareManager } from '../../electron/kiosk/spare.ts';
import type { FakeTransport, FakeTransports } from './fake-transport.ts';

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
  /** A used spare's call reads its billing here; a spare itself never asks. */
  readonly queries: string[] = [];
  querySession(liveId: string): Promise<LiveRecord> {
    this.queries.push(liveId);
    return Promise.resolve({ id: liveId, status: 'ended', billed_seconds: 0, credits_cost: 0, created_at: undefined, started_at: undefined, ended_at: undefined });
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

/** What the shared steps need of a spare test's harness: the manager and the fakes it was built on. */
export interface SpareRig {
  clock: FakeClock;
  client: ScriptedClient;
  transports: FakeTransports;
  spares: SpareManager;
}

/** Someone approaches → create #`index` answered with room `liveId` → socket open. Returns the spare's socket. */
export async function readySpare(h: SpareRig, liveId = 'L1', index = 0): Promise<FakeTransport> {
  h.spares.report({ showing: true, present: true });
  await flushMicrotasks();
  await h.client.answer(index, liveId);
  const t = h.transports.last;
  t.open();
  await flushMicrotasks();
  return t;
}

/** The types of the frames the kiosk sent on `t`, in order. */
export const types = (t: FakeTransport) => t.frames().map((f) => f.type);

/** The server's keep-alive ping (type 3). */
export const PING = { type: 3, payload: { ping: { ts: 1 } } };

/**
 * Let `ms` of fake time pass while the server pings every 5 s (as it does, spec §6 rule 4), so a held
 * socket stays alive.
 */
export async function withPings(h: SpareRig, t: FakeTransport, ms: number): Promise<void> {
  let left = ms;
  while (left > 0) {
    const step = Math.min(5_000, left);
    await h.clock.advance(step);
    left -= step;
    if (t.isOpen) t.receive(PING);
  }
}
