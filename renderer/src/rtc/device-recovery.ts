/**
 * Devices that come and go during a call (a microphone or camera unplugged, replugged, or another one
 * plugged in). Shared by the engines: each tells this object when its device was lost (the track ended,
 * or the SDK/browser says the device went inactive) and when the devices changed; it tries to re-acquire
 * a device (the replugged one or any other) at once and every `retryMs`, tells the visitor, and gives up
 * after `graceMs`: for the microphone that ends the call (the avatar cannot hear, and billing runs), for
 * the camera it only leaves the notice (the call goes on without the visitor's picture).
 *
 * Pure and timer-injected; `reacquire` does the engine-specific switch and resolves true when it worked.
 */
import type { MediaDevice, VisitorNotice } from './engine.ts';

/** How long a call may run with no microphone before it is ended (the visitor is told meanwhile). */
export const MICROPHONE_GRACE_MS = 5_000;
/** How often a lost device is looked for again (besides every device change). */
export const DEVICE_RETRY_MS = 1_000;

export interface DeviceRecoveryOptions {
  device: MediaDevice;
  /** Switch to a device now (the replugged one, or another). True when the call has one again. */
  reacquire: () => Promise<boolean>;
  notice: (notice: VisitorNotice, message: string) => void;
  /** No device within the grace time (the microphone only): end the call. */
  giveUp: () => void;
  graceMs?: number;
  retryMs?: number;
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
}

export class DeviceRecovery {
  readonly #o: Required<Omit<DeviceRecoveryOptions, 'setTimeout' | 'clearTimeout'>>;
  readonly #setTimeout: (fn: () => void, ms: number) => unknown;
  readonly #clearTimeout: (handle: unknown) => void;
  /** Non-null while the device is lost (the value is unused: elapsed time is counted in `#elapsedMs`). */
  #lostAtMs: number | null = null;
  #elapsedMs = 0;
  #timer: unknown = null;
  #trying = false;
  #stopped = false;

  constructor(options: DeviceRecoveryOptions) {
    this.#o = {
      device: options.device,
      reacquire: options.reacquire,
      notice: options.notice,
      giveUp: options.giveUp,
      graceMs: options.graceMs ?? MICROPHONE_GRACE_MS,
      retryMs: options.retryMs ?? DEVICE_RETRY_MS,
    };
    this.#setTimeout = options.setTimeout ?? ((fn, ms) => setTimeout(fn, ms));
    this.#clearTimeout = options.clearTimeout ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  }

  /** The device is without a working device right now. */
  get isLost(): boolean {
    return this.#lostAtMs !== null;
  }

  /** The device in use went away (track ended, device inactive). Repeats while lost are harmless. */
  lost(): void {
    if (this.#stopped || this.#lostAtMs !== null) return;
    this.#lostAtMs = 0;
    this.#elapsedMs = 0;
    const what = this.#o.device === 'microphone' ? 'microphone' : 'camera';
    this.#o.notice(this.#o.device === 'microphone' ? 'microphoneLost' : 'cameraLost', `The ${what} was disconnected; looking for another.`);
    void this.#attempt();
  }

  /** The devices changed (one plugged in or out): if ours is lost, try again now. */
  devicesChanged(): void {
    if (this.#lostAtMs !== null) void this.#attempt();
  }

  /** The call ended: no more attempts. Idempotent. */
  stop(): void {
    this.#stopped = true;
    this.#clearTimer();
  }

  async #attempt(): Promise<void> {
    if (this.#trying || this.#stopped) return;
    this.#trying = true;
    let ok = false;
    try {
      ok = await this.#o.reacquire();
    } catch {
      ok = false;
    } finally {
      this.#trying = false;
    }
    if (this.#stopped || this.#lostAtMs === null) return;
    if (ok) {
      this.#lostAtMs = null;
      this.#clearTimer();
      const what = this.#o.device === 'microphone' ? 'microphone' : 'camera';
      this.#o.notice(this.#o.device === 'microphone' ? 'microphoneBack' : 'cameraBack', `A ${what} is connected again.`);
      return;
    }
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    if (this.#timer !== null) return;
    const leftMs = this.#o.graceMs - this.#elapsedMs;
    if (leftMs <= 0) {
      if (this.#o.device === 'microphone') {
        this.#stopped = true;
        this.#o.giveUp();
      }
      return; // the camera: the call goes on without it; a device change may still bring one back
    }
    const stepMs = Math.min(this.#o.retryMs, leftMs);
    this.#timer = this.#setTimeout(() => {
      this.#timer = null;
      this.#elapsedMs += stepMs;
      void this.#attempt(); // past the grace time this is the last look before giving up
    }, stepMs);
  }

  #clearTimer(): void {
    if (this.#timer !== null) this.#clearTimeout(this.#timer);
    this.#timer = null;
  }
}
