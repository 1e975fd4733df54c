/**
 * Fast start: the visitor's tap already says "use my microphone and camera", so the local
 * devices can open while main is still starting the session, instead of after the credentials arrive.
 * `prefetch()` starts getUserMedia for constraints an engine is known to ask for; the engine's own
 * `getUserMedia` (through `getUserMedia()` here) takes the pending stream when its constraints match,
 * once. Whatever no engine took is stopped by `release()` (the call ended, was cancelled or failed).
 */
export type GetUserMedia = (constraints: MediaStreamConstraints) => Promise<MediaStream>;

export class MediaPrefetch {
  readonly #gum: GetUserMedia;
  #pending = new Map<string, Promise<MediaStream>>();

  constructor(getUserMedia: GetUserMedia) {
    this.#gum = getUserMedia;
  }

  /** Start opening these devices now (drops any earlier prefetch). */
  prefetch(list: MediaStreamConstraints[]): void {
    this.release();
    for (const constraints of list) {
      const pending = this.#gum(constraints);
      pending.catch(() => undefined); // reported to the engine that takes it, if any
      this.#pending.set(JSON.stringify(constraints), pending);
    }
  }

  /** The engines' getUserMedia: a prefetched stream for the same constraints, else a fresh one. */
  readonly getUserMedia: GetUserMedia = (constraints) => {
    const key = JSON.stringify(constraints);
    const pending = this.#pending.get(key);
    if (!pending) return this.#gum(constraints);
    this.#pending.delete(key);
    return pending;
  };

  /** Stop every prefetched stream no engine took. */
  release(): void {
    const left = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of left) void p.then((s) => s.getTracks().forEach((t) => t.stop()), () => undefined);
  }
}
