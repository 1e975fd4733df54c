/**
 * The media watchdog in the page: reads the engine's media progress a few times a second while the call
 * is live and feeds what changed to the pure `MediaWatchdog` (media-watchdog.ts), then carries out what
 * it decides: the notice (a rune the live screen reads), one re-subscription, the hang-up (KioskApp's
 * callback, which ends the call through the ordinary hangup channel with cause `media_stalled`).
 */
import type { CallMode } from '../../../electron/contract.ts';
import type { RemoteMediaProgress } from '../rtc/engine.ts';
import { browserClock, type RendererClock } from '../sensing/clock.ts';
import { judgeMedia, MEDIA_WATCHDOG_TIMING, MediaWatchdog, type WatchdogAction, type WatchdogTiming } from './media-watchdog.ts';

export const MEDIA_WATCH_POLL_MS = 250;
/** Readings kept to judge the media over (8 × 250 ms = 2 s). */
export const JUDGE_WINDOW_POLLS = 8;

export interface MediaWatchDeps {
  /** The engine's counters now (LiveCall), or null before the avatar's tracks exist. */
  progress: () => RemoteMediaProgress | null;
  resubscribe: () => Promise<void>;
  /** Nothing arrived for the hang-up time: end the call. */
  onHangup: () => void;
  clock?: RendererClock;
}

/** What the watchdog did in this page (for the E2E and diagnostics, as the pre-join's `__rtcPreJoin`). */
export interface MediaWatchStats {
  notices: number;
  resubscribes: number;
  clears: number;
  hangups: number;
}

export class MediaWatch {
  readonly #deps: MediaWatchDeps;
  readonly #clock: RendererClock;
  #dog: MediaWatchdog | null = null;
  #timer: unknown = null;
  /** The last readings (at most `JUDGE_WINDOW_POLLS`), oldest first. */
  #history: Array<{ progress: RemoteMediaProgress; atMs: number }> = [];
  #mode: CallMode = 'video';
  #notice = $state(false);
  #endedCall = $state(false);
  readonly #stats: MediaWatchStats = { notices: 0, resubscribes: 0, clears: 0, hangups: 0 };

  constructor(deps: MediaWatchDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? browserClock;
  }

  /** The "Reconnecting the picture…" notice is up. */
  get noticeShown(): boolean {
    return this.#notice;
  }
  /** The watchdog hung up the last call (the ended screen says why). */
  get endedCall(): boolean {
    return this.#endedCall;
  }
  get isRunning(): boolean {
    return this.#dog !== null;
  }

  /** The call went live: watch it. */
  start(mode: CallMode): void {
    this.stop();
    this.#endedCall = false;
    this.#mode = mode;
    const dog = new MediaWatchdog({ mode, now: () => this.#clock.now(), emit: (a) => this.#act(a), timing: testTiming() ?? MEDIA_WATCHDOG_TIMING });
    this.#dog = dog;
    dog.live();
    this.#schedule();
  }

  /** The call is no longer live: stop watching, take the notice down. Keeps `endedCall`. Idempotent. */
  stop(): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#dog?.stop();
    this.#dog = null;
    this.#history = [];
    this.#notice = false;
  }

  /** A new call starts: forget why the last one ended. */
  reset(): void {
    this.#endedCall = false;
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = null;
      this.#poll();
      if (this.#dog) this.#schedule();
    }, MEDIA_WATCH_POLL_MS);
  }

  #poll(): void {
    const dog = this.#dog;
    if (!dog) return;
    const now = this.#deps.progress();
    // Judged against the reading before (counters, bytes) and the oldest of a 2 s window (freeze times,
    // which the SDK moves in steps). The first reading is only a baseline: counters say what arrived
    // ever, not now.
    const oldest = this.#history[0];
    const previous = this.#history.at(-1);
    if (now && oldest && previous) {
      const window = { progress: oldest.progress, elapsedMs: this.#clock.now() - oldest.atMs };
      if (judgeMedia(this.#mode, { previous: previous.progress, now, window })) dog.media(this.#mode);
    }
    if (now) {
      this.#history.push({ progress: now, atMs: this.#clock.now() });
      if (this.#history.length > JUDGE_WINDOW_POLLS) this.#history.shift();
    }
    dog.tick();
  }

  #act(action: WatchdogAction): void {
    switch (action) {
      case 'notice':
        this.#stats.notices++;
        this.#notice = true;
        break;
      case 'resubscribe':
        this.#stats.resubscribes++;
        void this.#deps.resubscribe().catch((err: unknown) => console.warn('re-subscribe failed', err instanceof Error ? err.message : String(err)));
        break;
      case 'clear':
        this.#stats.clears++;
        this.#notice = false;
        break;
      case 'hangup':
        this.#stats.hangups++;
        this.#endedCall = true;
        this.stop();
        this.#deps.onHangup();
        break;
    }
    (globalThis as { __mediaWatch?: MediaWatchStats }).__mediaWatch = { ...this.#stats };
  }
}

/**
 * Test-only: the E2E harness shortens the watchdog (a page init script sets `__kioskTestMediaWatchdog`
 * before the app loads), so a frozen avatar is hung up in seconds. Nothing in the app sets it; anything
 * malformed is ignored and the real timing applies.
 */
function testTiming(): WatchdogTiming | null {
  const t = (globalThis as { __kioskTestMediaWatchdog?: unknown }).__kioskTestMediaWatchdog;
  if (typeof t !== 'object' || t === null) return null;
  const { noticeMs, hangupMs } = t as Record<string, unknown>;
  if (typeof noticeMs !== 'number' || typeof hangupMs !== 'number') return null;
  if (!(Number.isFinite(noticeMs) && Number.isFinite(hangupMs) && noticeMs > 0 && hangupMs > noticeMs)) return null;
  return { noticeMs, hangupMs };
}
