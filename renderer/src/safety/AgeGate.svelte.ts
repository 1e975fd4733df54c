/**
 * The age gate's screen state (adult kiosks; main's kiosk/age-gate.ts decides). A tap on "Tap to talk"
 * opens it (main counts the visitor as asked); "yes" (or staff's PIN, `ageCheck: staff`) gets a pass for
 * one call and starts it; "no" goes back to the start; a gate left alone for `GATE_IDLE_MS` goes back to
 * the start too. Main refuses a call without a pass, so nothing here can skip the gate.
 */
import type { AgeGateTicket, KioskApi } from '../../../electron/contract.ts';

/** How long the gate waits for an answer before it returns to the start (the next visitor's screen). */
export const GATE_IDLE_MS = 30_000;
export const STAFF_PIN_MAX = 8;

export class AgeGate {
  readonly #kiosk: () => KioskApi | null;
  readonly #onPassed: () => void;
  #ticket = $state<Extract<AgeGateTicket, { required: true }> | null>(null);
  #pin = $state('');
  #wrongPin = $state(false);
  #busy = $state(false);
  #passed = false;
  #idle: ReturnType<typeof setTimeout> | null = null;

  constructor(options: { kiosk: () => KioskApi | null; onPassed: () => void }) {
    this.#kiosk = options.kiosk;
    this.#onPassed = options.onPassed;
  }

  get isOpen(): boolean {
    return this.#ticket !== null;
  }
  get ticket(): Extract<AgeGateTicket, { required: true }> | null {
    return this.#ticket;
  }
  get pin(): string {
    return this.#pin;
  }
  get wrongPin(): boolean {
    return this.#wrongPin;
  }
  get busy(): boolean {
    return this.#busy;
  }

  /** The start may go on: a pass was just granted (used once). */
  takePass(): boolean {
    const passed = this.#passed;
    this.#passed = false;
    return passed;
  }

  /** The visitor tapped to talk: ask main whether a gate applies; true when it opened. */
  async open(): Promise<boolean> {
    const kiosk = this.#kiosk();
    if (!kiosk || this.#ticket) return this.#ticket !== null;
    const r = await kiosk.session.ageGateAsk();
    if (!r.ok || !r.value.required) return false;
    this.#ticket = r.value;
    this.#pin = '';
    this.#wrongPin = false;
    this.touch();
    return true;
  }

  /** Any touch or key on the gate: the visitor is still there. */
  touch(): void {
    if (this.#idle) clearTimeout(this.#idle);
    // A test-only page hook shortens the wait (as `__kioskTestMediaWatchdog` does for the media watchdog).
    const idleMs = (globalThis as { __kioskTestGateIdleMs?: number }).__kioskTestGateIdleMs ?? GATE_IDLE_MS;
    this.#idle = this.#ticket ? setTimeout(() => this.close(), idleMs) : null;
  }

  async answer(confirmed: boolean): Promise<void> {
    const kiosk = this.#kiosk();
    if (!kiosk || !this.#ticket || this.#busy) return;
    this.#busy = true;
    try {
      const r = await kiosk.session.ageGateAnswer({ confirmed });
      this.close();
      if (r.ok && r.value.passed) this.#pass();
    } finally {
      this.#busy = false;
    }
  }

  typeDigit(digit: string): void {
    this.touch();
    this.#wrongPin = false;
    if (/^\d$/.test(digit) && this.#pin.length < STAFF_PIN_MAX) this.#pin += digit;
  }
  eraseDigit(): void {
    this.touch();
    this.#pin = this.#pin.slice(0, -1);
  }

  /** `ageCheck: staff`: the PIN unlocks the staff gate for one call (the panel's own rate limits apply), and
   *  the panel locks again at once. */
  async unlock(): Promise<void> {
    const kiosk = this.#kiosk();
    if (!kiosk || !this.#ticket || this.#busy || !this.#pin) return;
    this.#busy = true;
    try {
      const opened = await kiosk.staff.unlock({ pin: this.#pin });
      this.#pin = '';
      if (!opened.ok || !opened.value.unlocked) {
        this.#wrongPin = true;
        return;
      }
      const r = await kiosk.session.ageGateStaffUnlock();
      await kiosk.staff.lock();
      this.close();
      if (r.ok && r.value.passed) this.#pass();
    } finally {
      this.#busy = false;
    }
  }

  close(): void {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    this.#ticket = null;
    this.#pin = '';
  }

  #pass(): void {
    this.#passed = true;
    this.#onPassed();
  }
}
