/**
 * The staff PIN pad's state: type the PIN, or on first use choose and confirm one; wrong tries and the
 * lock-out counting down. Main holds the PIN hash, the tries and the unlock; this only asks it and shows
 * the answers. The lock-out ticks on the injected clock; `stop()` leaves no timer.
 */
import type { PinState } from '../../../electron/contract.ts';
import type { RendererClock } from '../sensing/clock.ts';
import type { StaffCalls } from './calls.svelte.ts';

/** `enter`: type the PIN; `choose`/`confirm`: first use. */
export type PinStep = 'enter' | 'choose' | 'confirm';

/** Typing the PIN: an older 4- or 5-digit PIN still opens the panel. */
export const PIN_MIN = 4;
/** Choosing one: at least 6 digits (main refuses fewer). */
export const NEW_PIN_MIN = 6;
export const PIN_MAX = 8;

export interface PinEntryDeps {
  calls: StaffCalls;
  clock: RendererClock;
  /** The panel is open (the pad or the tabs). */
  isOpen: () => boolean;
  /** The pad is what the panel shows. */
  isShowing: () => boolean;
  /** The right PIN was typed (or a new one set), or main still had staff unlocked: show the tabs. */
  onUnlocked: () => void;
}

export class PinEntry {
  readonly #deps: PinEntryDeps;
  #step = $state<PinStep>('enter');
  #pin = $state('');
  #chosenPin = '';
  #message = $state<string | null>(null);
  #lockedUntilMs = $state<number | null>(null);
  #attemptsLeft = $state<number | null>(null);
  #settingsNotUsed = $state<string[]>([]);
  #now = $state(0);
  #lockTicker: unknown = null;

  constructor(deps: PinEntryDeps) {
    this.#deps = deps;
    this.#now = deps.clock.now();
  }

  get step(): PinStep {
    return this.#step;
  }
  /** How many digits are typed (the pad shows dots, never the digits). */
  get length(): number {
    return this.#pin.length;
  }
  get message(): string | null {
    return this.#message;
  }
  /** Whole seconds the pad stays locked (null when not locked). */
  get lockedForS(): number | null {
    if (this.#lockedUntilMs === null) return null;
    const left = Math.ceil((this.#lockedUntilMs - this.#now) / 1000);
    return left > 0 ? left : null;
  }
  get attemptsLeft(): number | null {
    return this.#attemptsLeft;
  }
  /** Settings main did not use (one line each), said on the pad: staff read them without the panel. */
  get settingsNotUsed(): string[] {
    return this.#settingsNotUsed;
  }
  /** The fewest digits this step takes. */
  get minLength(): number {
    return this.#step === 'enter' ? PIN_MIN : NEW_PIN_MIN;
  }

  /** The pad just opened: is a PIN set, is the pad locked, is staff still unlocked? */
  async load(): Promise<void> {
    const state = await this.#deps.calls.call((s) => s.pinState());
    if (!state.ok) {
      this.#message = state.error.message;
      return;
    }
    this.#applyPinState(state.value);
    this.#step = state.value.pinSet ? 'enter' : 'choose';
    if (state.value.unlocked) this.#deps.onUnlocked();
  }

  pressDigit(digit: string): void {
    if (!/^[0-9]$/.test(digit) || this.#pin.length >= PIN_MAX || this.lockedForS !== null) return;
    this.#pin += digit;
    this.#message = null;
  }

  backspace(): void {
    this.#pin = this.#pin.slice(0, -1);
  }

  clear(): void {
    this.#pin = '';
  }

  async submit(): Promise<void> {
    if (this.#deps.calls.busy || !this.#deps.isShowing() || this.lockedForS !== null) return;
    const pin = this.#pin;
    if (pin.length < this.minLength) {
      this.#message = `The PIN has ${this.minLength} to ${PIN_MAX} digits.`;
      return;
    }
    this.#pin = '';
    if (this.#step === 'choose') {
      this.#chosenPin = pin;
      this.#step = 'confirm';
      this.#message = null;
      return;
    }
    if (this.#step === 'confirm') {
      if (pin !== this.#chosenPin) {
        this.#chosenPin = '';
        this.#step = 'choose';
        this.#message = 'The two PINs were different. Choose a PIN again.';
        return;
      }
      this.#chosenPin = '';
      const set = await this.#deps.calls.call((s) => s.setPin({ pin }));
      if (!set.ok) {
        this.#step = 'choose';
        this.#message = set.error.message;
        return;
      }
      this.#applyPinState(set.value);
      if (set.value.unlocked) {
        this.#deps.onUnlocked();
        return;
      }
    }
    const res = await this.#deps.calls.call((s) => s.unlock({ pin }));
    if (res.ok) {
      this.#applyPinState(res.value);
      this.#deps.onUnlocked();
      return;
    }
    // Wrong or locked: main's message says tries left / seconds left; the pad state makes it exact.
    const state = await this.#deps.calls.call((s) => s.pinState());
    if (state.ok) this.#applyPinState(state.value);
    if (res.error.code === 'locked' || this.lockedForS !== null) {
      this.#message = 'Too many wrong tries.';
    } else if (res.error.code === 'unauthorized') {
      const left = this.#attemptsLeft;
      this.#message = left !== null ? `Wrong PIN. ${left} ${left === 1 ? 'try' : 'tries'} left.` : res.error.message;
    } else {
      this.#message = res.error.message;
    }
  }

  /** Empty the pad (and forget a PIN chosen but not confirmed), with this message. */
  reset(message: string | null): void {
    this.#pin = '';
    this.#chosenPin = '';
    this.#message = message;
  }

  /** Main forgot the unlock: ask for the PIN again. */
  relock(message: string): void {
    this.#step = 'enter';
    this.reset(message);
  }

  /** Stop counting the lock-out down (the panel closed or is going away). */
  stop(): void {
    if (this.#lockTicker !== null) this.#deps.clock.clearTimeout(this.#lockTicker);
    this.#lockTicker = null;
  }

  #applyPinState(state: PinState): void {
    this.#attemptsLeft = state.attemptsLeft;
    this.#settingsNotUsed = state.settingsNotUsed ?? [];
    this.#now = this.#deps.clock.now();
    this.#lockedUntilMs = state.lockedForMs > 0 ? this.#now + state.lockedForMs : null;
    if (this.#lockedUntilMs !== null) this.#tickLock();
  }

  /** Count the lock-out down once a second. */
  #tickLock(): void {
    if (this.#lockTicker !== null) return;
    this.#lockTicker = this.#deps.clock.setTimeout(() => {
      this.#lockTicker = null;
      this.#now = this.#deps.clock.now();
      if (this.lockedForS !== null && this.#deps.isOpen()) this.#tickLock();
      else if (this.#lockedUntilMs !== null) {
        this.#lockedUntilMs = null;
        if (this.#deps.isShowing()) this.#message = null;
      }
    }, 1_000);
  }
}
