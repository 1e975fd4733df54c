/**
 * The media watchdog's decision logic, pure and clock-injected: while a call is live, the avatar's media
 * must keep arriving (new video frames in a video call, remote audio in a voice-only call). The control
 * socket can stay up while the media path is dead, and the call would bill to its end with a frozen face.
 *
 * - nothing new for `noticeMs` (8 s) → `notice` (a calm "Reconnecting the picture…") and `resubscribe`
 *   (one re-subscription of the remote tracks for this stall);
 * - media back before `hangupMs` → `clear`;
 * - still nothing `hangupMs` (20 s) after the last media → `hangup` (once; the watchdog then stops).
 *
 * Feed it observations (`media`) and `tick`s; nothing counts before `live()` or after `stop()`.
 * The renderer wiring lives in `MediaWatch.svelte.ts`.
 */
import type { CallMode } from '../../../electron/contract.ts';
import type { RemoteMediaProgress } from '../rtc/engine.ts';

/** Two readings of the avatar's media: the one before this (counters, bytes) and the oldest of a short
 *  window (freeze times, which the SDK moves in steps), with the time since it. */
export interface MediaReadings {
  previous: RemoteMediaProgress;
  now: RemoteMediaProgress;
  window: { progress: RemoteMediaProgress; elapsedMs: number };
}

/**
 * Is the avatar's media healthy now? What counts, by signal:
 * - video (video calls): frames decoded or rendered (frame rates above 0) and the freeze time not grown by
 *   most of the window; packets alone say nothing of a frozen decoder. Engines that cannot tell fall back
 *   to their frame/packet counter.
 * - the connection: connected and bytes still arriving (any bytes: RTCP and keep-alives arrive while the
 *   avatar is silent).
 * - audio, only where silence cannot explain it: its freeze time growing (gaps while it speaks). A
 *   voice-only call is judged by the connection, not by the avatar's voice (it may listen, silent, for
 *   long); only an engine that tells nothing of the connection falls back to its audio counter.
 * Stats move in steps (about once a second), so one healthy reading a second keeps a call alive, and the
 * watchdog acts only after seconds without one.
 */
export function judgeMedia(mode: CallMode, { previous, now, window }: MediaReadings): boolean {
  const frozenOverWindow = (before: number | null | undefined, after: number | null | undefined): boolean =>
    typeof before === 'number' && typeof after === 'number' && window.elapsedMs > 0 && after - before >= window.elapsedMs * 0.8;
  const audioOk = !frozenOverWindow(window.progress.audioFreezeMs, now.audioFreezeMs);
  const connectionOk =
    now.connection && previous.connection ? now.connection.connected && now.connection.bytesReceived > previous.connection.bytesReceived : null;
  if (mode === 'video') {
    const frames = now.videoFrames;
    const videoOk = frames
      ? (frames.decodeFps > 0 || frames.renderFps > 0) && !frozenOverWindow(window.progress.videoFrames?.freezeMs, frames.freezeMs)
      : now.video > previous.video;
    return videoOk && audioOk && connectionOk !== false;
  }
  return (connectionOk ?? now.audio > previous.audio) && audioOk;
}

export interface WatchdogTiming {
  /** No media for this long: show the notice and re-subscribe once. */
  noticeMs: number;
  /** No media for this long (from the last media, not from the notice): hang up. */
  hangupMs: number;
}

export const MEDIA_WATCHDOG_TIMING: Readonly<WatchdogTiming> = Object.freeze({ noticeMs: 8_000, hangupMs: 20_000 });

export type WatchdogAction = 'notice' | 'resubscribe' | 'clear' | 'hangup';
/** What an observation saw: new avatar video frames, or remote audio. */
export type MediaKind = 'video' | 'audio';

export interface MediaWatchdogOptions {
  /** The call's mode: video calls are watched on frames, voice-only calls on audio. */
  mode: CallMode;
  now: () => number;
  emit: (action: WatchdogAction) => void;
  timing?: WatchdogTiming;
}

type Phase = 'off' | 'watching' | 'stalled' | 'done';

export class MediaWatchdog {
  readonly #mode: CallMode;
  readonly #now: () => number;
  readonly #emit: (action: WatchdogAction) => void;
  readonly #timing: WatchdogTiming;
  #phase: Phase = 'off';
  #lastMediaMs = 0;

  constructor(options: MediaWatchdogOptions) {
    const timing = options.timing ?? MEDIA_WATCHDOG_TIMING;
    if (!(timing.noticeMs > 0 && timing.hangupMs > timing.noticeMs)) {
      throw new RangeError(`media watchdog timing must have 0 < noticeMs < hangupMs (got ${timing.noticeMs}, ${timing.hangupMs})`);
    }
    this.#mode = options.mode;
    this.#now = options.now;
    this.#emit = options.emit;
    this.#timing = { ...timing };
  }

  /** `off` before live, `watching`, `stalled` (notice shown), `done` (hung up). */
  get phase(): Phase {
    return this.#phase;
  }

  /** The call went live: media is expected from now on (the clock starts here). */
  live(): void {
    if (this.#phase !== 'off') return;
    this.#phase = 'watching';
    this.#lastMediaMs = this.#now();
  }

  /** Fresh media was seen. Only the call mode's kind counts (a voice-only call has no frames to wait for). */
  media(kind: MediaKind): void {
    if (kind !== this.#mode) return;
    if (this.#phase === 'watching') this.#lastMediaMs = this.#now();
    else if (this.#phase === 'stalled') {
      this.#lastMediaMs = this.#now();
      this.#phase = 'watching';
      this.#emit('clear');
    }
  }

  /** Time passed: decide. */
  tick(): void {
    const silentMs = this.#now() - this.#lastMediaMs;
    if (this.#phase === 'watching' && silentMs >= this.#timing.noticeMs) {
      this.#phase = 'stalled';
      this.#emit('notice');
      this.#emit('resubscribe');
    }
    if (this.#phase === 'stalled' && silentMs >= this.#timing.hangupMs) {
      this.#phase = 'done';
      this.#emit('hangup');
    }
  }

  /** The call is over (or no longer live): nothing counts any more. Idempotent. */
  stop(): void {
    this.#phase = this.#phase === 'done' ? 'done' : 'off';
  }
}
