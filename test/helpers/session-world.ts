/**
 * A SessionController on a FakeClock with in-memory transports and a scripted service client, for unit
 * tests that need exact control over when the create answers, what the status query says and what each
 * control socket receives. The test plays the service: `answerCreate()`, `transports.last.open()`,
 * `ack()`, and reads what the client did: `events`, `log.lines`, frames on each transport.
 */
import { FakeClock } from './fake-clock.ts';
import { AvatarError } from '../../electron/core/errors.ts';
import type { CreateSessionResponse, LiveRecord } from '../../electron/core/protocol.ts';
import { SessionController, type SessionControllerOptions } from '../../electron/core/session-controller.ts';
import type { SessionEvent, SessionState, StartOptions } from '../../electron/core/session-types.ts';
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

/** One real event-loop turn: lets the async create, socket setup and the like run without moving fake time. */
export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

type Client = SessionControllerOptions['client'];

/** One status query as the world saw it: the session asked about, the how-manyth query, its signal. */
export interface Query {
  id: string;
  call: number;
  signal: AbortSignal | undefined;
  controller: SessionController;
}

export interface WorldOptions {
  controller?: Partial<SessionControllerOptions>;
  /** The clock (default: a FakeClock at T0); one of a FakeClock subclass must also start at T0. */
  clock?: FakeClock;
  /** Live duration the create answers with (seconds). */
  liveDurationS?: number;
  /** Session id the create answers with (default LIVE_ID). */
  liveId?: string;
  /** Hold the create until `answerCreate()`/`failCreate()` (default: answers on the next microtask). */
  manualCreate?: boolean;
  /** What each status query answers (default: a record with `serverStatus`). Queries are counted in `queries` either way. */
  query?: (query: Query) => Promise<LiveRecord>;
  /** Replaces methods of the scripted client outright. */
  client?: Partial<Client>;
}

export function world(options: WorldOptions = {}) {
  const clock = options.clock ?? new FakeClock(T0);
  const created = () => createdResponse(options.liveDurationS, options.liveId ?? LIVE_ID);
  const transports = new FakeTransports();
  const log = recordingLogger();
  const events: SessionEvent[] = [];
  const creates: Array<{ signal: AbortSignal | undefined; answer: Deferred<CreateSessionResponse> }> = [];
  /** Each status query: fake ms since T0. */
  const queries: number[] = [];
  const states = () => events.flatMap((e) => (e.type === 'state' ? [e.state] : []));
  /** The session id of each socket address asked for. */
  const socketRequests: string[] = [];
  const w = {
    clock,
    transports,
    log,
    events,
    creates,
    queries,
    socketRequests,
    /** What the status query answers. */
    serverStatus: 'ended' as string,
    socketRequestError: null as AvatarError | null,
    controller: null as unknown as SessionController,
    answerCreate(response = created()) {
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
    /** The states emitted, in order. */
    states,
    phases: () => states().map((s) => s.phase),
    /** Read through a call: assert.equal narrows `controller.state`, but the controller moves on. */
    phase: (): SessionState['phase'] => w.controller.state.phase,
    /** Starts a call, lets the create answer and the first socket open, and answers its conn_init with `ack`. */
    async startAcked(ack: unknown = ACK_OK, startOptions: StartOptions = AUDIO) {
      const result = w.controller.start(startOptions);
      await tick();
      transports.last.open();
      transports.last.receive(ack);
      return { result };
    },
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
      if (!options.manualCreate) answer.resolve(created());
      return answer.promise;
    },
    querySession: (id, opts): Promise<LiveRecord> => {
      queries.push(clock.now() - T0);
      if (options.query) return options.query({ id, call: queries.length, signal: opts?.signal, controller: w.controller });
      return Promise.resolve({ id, status: w.serverStatus, billed_seconds: 3, credits_cost: 5, created_at: undefined, started_at: undefined, ended_at: undefined });
    },
    socketRequest: (id) => {
      socketRequests.push(id);
      if (w.socketRequestError) throw w.socketRequestError;
      return { url: 'ws://fake/socket', headers: {} };
    },
    ...options.client,
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
