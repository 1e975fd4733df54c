/**
 * A SessionController on a FakeClock with in-memory transports and a scripted service client, for unit
 * tests that need exact control over when the create answers, what the status query says and what each
 * control socket receives. The test plays the service: `answerCreate()`, `transports.last.open()`,
 * `ack()`, and reads what the client did: `events`, `log.lines`, frames on each transport.
 */
import { FakeClock } from '../../electron/core/clock.ts';
import { AvatarError } from '../../electron/core/errors.ts';
import type { CreateSessionResponse, LiveRecord } from '../../electron/core/protocol.ts';
import { SessionController, type SessionControllerOptions } from '../../electron/core/session-controller.ts';
import type { SessionEvent, StartOptions } from '../../electron/core/session-types.ts';
import { FakeTransports, type FakeTransport } from './fake-transport.ts';
import { recordingLogger } from './recording-logger.ts';

export const T0 = 1_700_000_000_000;
export const LIVE_ID = 'live-1';
export const AUDIO: StartOptions = { callMode: 'audio', avatar: { persona: 'p', image: 'https://x.test/a.png' } };

export function createdResponse(liveDurationS = 120, id = LIVE_ID): CreateSessionResponse {
  return {
    live: { id, status: 'waiting', live_duration: liveDurationS, call_mode: 'audio' },
    rtc: { app_id: 'a', channel_id: 'c', user_id: 'u', token: 'tok-world-0000', token_expire_at: '1700003600' },
  };
}

export const ACK_OK = { type: 2, payload: { conn_init_ack: { success: true } } };
export const ACK_NOT_READY = { type: 2, payload: { conn_init_ack: { success: false, error_code: 'NOT_READY' } } };
export const ACK_FAILED = { type: 2, payload: { conn_init_ack: { success: false, error_code: 'LIVE_CONN_INIT_FAILED' } } };

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

export interface WorldOptions {
  controller?: Partial<SessionControllerOptions>;
  /** Live duration the create answers with (seconds). */
  liveDurationS?: number;
  /** Hold the create until `answerCreate()`/`failCreate()` (default: answers on the next microtask). */
  manualCreate?: boolean;
}

export function world(options: WorldOptions = {}) {
  const clock = new FakeClock(T0);
  const transports = new FakeTransports();
  const log = recordingLogger();
  const events: SessionEvent[] = [];
  const creates: Array<{ signal: AbortSignal | undefined; answer: Deferred<CreateSessionResponse> }> = [];
  const queries: number[] = [];
  const w = {
    clock,
    transports,
    log,
    events,
    creates,
    queries,
    /** What the status query answers. */
    serverStatus: 'ended' as string,
    socketRequestError: null as AvatarError | null,
    controller: null as unknown as SessionController,
    answerCreate(response = createdResponse(options.liveDurationS)) {
      const c = creates.at(-1);
      if (!c) throw new Error('no create in flight');
      c.answer.resolve(response);
    },
    failCreate(error: unknown) {
      const c = creates.at(-1);
      if (!c) throw new Error('no create in flight');
      c.answer.reject(error);
    },
    /** Events as short strings: `state:<phase>`, `credentials`, `warning`. */
    trail: () => events.map((e) => (e.type === 'state' ? `state:${e.state.phase}` : e.type)),
    /** Types of the frames the client sent on transport `i`. */
    types: (t: FakeTransport) => t.frames().map((f) => f.type),
    logged: (message: string) => log.lines.filter((l) => l.message === message),
    settle: () => clock.advance(0),
    /** Disposes, moving fake time on so that sockets still bounded by a timer (a hangup-only socket) end. */
    async dispose() {
      let done = false;
      const disposed = w.controller.dispose().then(() => (done = true));
      for (let i = 0; i < 100 && !done; i++) await clock.advance(500);
      await disposed;
    },
  };
  const client: SessionControllerOptions['client'] = {
    createSession: (_request, opts) => {
      const answer = deferred<CreateSessionResponse>();
      creates.push({ signal: opts?.signal, answer });
      opts?.signal?.addEventListener('abort', () => answer.reject(new AvatarError('cancelled', 'The operation was cancelled.')), { once: true });
      if (!options.manualCreate) answer.resolve(createdResponse(options.liveDurationS));
      return answer.promise;
    },
    querySession: async (id): Promise<LiveRecord> => {
      queries.push(clock.now() - T0);
      return { id, status: w.serverStatus, billed_seconds: 3, credits_cost: 5, created_at: undefined, started_at: undefined, ended_at: undefined };
    },
    socketRequest: () => {
      if (w.socketRequestError) throw w.socketRequestError;
      return { url: 'ws://fake/socket', headers: {} };
    },
  };
  w.controller = new SessionController({
    client,
    clock,
    logger: log,
    transportFactory: transports.factory,
    buildRequest: async () => ({ request: { call_mode: 'audio', avatar: { persona: 'p', image_uri: 'https://x.test/a.png' } }, warnings: [] }),
    ...options.controller,
  });
  w.controller.onEvent((e) => events.push(e));
  return w;
}

export type World = ReturnType<typeof world>;
