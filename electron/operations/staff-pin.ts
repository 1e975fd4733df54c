/**
 * The staff PIN pad's rules, without Electron:
 * - The PIN is kept only as a salted scrypt hash (`scrypt$N$r$p$<salt b64>$<hash b64>`): from the
 *   administrator's policy file (it wins), config.json (`staffPinHash`, made with `npm run --silent cli --
 *   pin-hash`), or chosen on the first-run setup screen.
 * - Choosing a PIN without the old one is possible only during setup: from start until a PIN first exists.
 *   The renderer shows no attract screen until then (and the dispatcher refuses calls), so setup is an
 *   installer's step; once the kiosk has served visitors, a missing PIN never reopens it (a visitor who
 *   could choose the PIN would own the kiosk).
 * - 5 wrong tries lock the pad; each lock-out in a row is longer (1 min, 5 min, 30 min, then 2 h), and a
 *   right PIN starts again from 1 min. The lock-out is persisted, so a relaunch does not reset it: at
 *   5 guesses per 2 h a USB key injector needs decades for a 6-digit PIN, not a day.
 * - New PINs have 6 to 8 digits; a 4- or 5-digit hash from before still unlocks, and the staff status
 *   says to change it.
 * - Unlocking is refused while a session runs (the panel never opens during a call).
 * - An unlocked panel is forgotten 60 s after the last staff call (each staff call refreshes it).
 *
 * Time comes from the injected clock and is only compared, never waited on: nothing is left pending.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { z } from 'zod';
import type { PinState } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';

export const MAX_PIN_ATTEMPTS = 5;
/** The lock-outs in a row without a right PIN; the last one repeats. */
export const PIN_LOCKOUT_STEPS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 60 * 60_000] as const;
export const PIN_LOCKOUT_MS = PIN_LOCKOUT_STEPS_MS[0];
export const STAFF_IDLE_MS = 60_000;
export const NEW_PIN_MIN_DIGITS = 6;
/** What unlock accepts: a hash made before PINs needed 6 digits may hold 4 or 5. */
const PIN_PATTERN = /^[0-9]{4,8}$/;
/** What a new PIN must be. */
const NEW_PIN_PATTERN = /^[0-9]{6,8}$/;
const NEW_PIN_MESSAGE = 'The PIN must be 6 to 8 digits.';

/** The lock-out as persisted (pin-lockout.json): wrong tries in this round, lock-outs in a row, until when. */
export const lockoutRecordSchema = z.strictObject({
  failures: z.number().int().min(0).max(100),
  level: z.number().int().min(0).max(100),
  lockedUntilMs: z.number().int().min(0),
});
export type LockoutRecord = z.infer<typeof lockoutRecordSchema>;
/** The most common 6-8 digit PINs beyond repeats and runs (keyboard and keypad patterns, doubled pairs, well-known
 *  numbers), from published PIN-frequency studies: a guesser tries these first. */
const COMMON_PINS = new Set([
  '121212', '123123', '112233', '696969', '159753', '147258', '258369', '789456', '147852', '123321', '100200', '159357',
  '131313', '102030', '112211', '520520', '123654', '147369', '741852', '852456', '456123', '987654', '101010', '202020',
  '000001', '111222', '232323', '252525', '777888', '142536', '198400', '199000', '200000', '212121', '010203',
  '1212121', '1231234', '12121212', '12341234', '11223344', '11112222', '12344321', '14725836', '19841984', '20002000',
  '87654321', '98765432', '13579246', '24682468', '01234567', '12312312', '69696969', '11221122', '00001111',
]);

/** Why a new PIN is easy to guess (all one digit, a run up or down, a short block repeated, a common PIN), or null. */
export function guessablePinReason(pin: string): string | null {
  if (/^(\d)\1+$/.test(pin)) return 'it is one digit repeated';
  const steps = [...pin].slice(1).map((d, i) => (Number(d) - Number(pin[i]) + 10) % 10);
  if (steps.every((s) => s === 1) || steps.every((s) => s === 9)) return 'it is a run of digits';
  if (/^(\d{1,4})\1+$/.test(pin)) return 'it repeats a short block of digits';
  if (COMMON_PINS.has(pin)) return 'it is one of the most common PINs';
  return null;
}

/**
 * Refuse a new PIN that is not 6 to 8 digits or is easy to guess, in the words setup uses (the CLI's
 * `pin-hash` says the same). Whoever stands at the screen can try a few PINs before the lock-out: those
 * few must not include this one.
 */
export function checkNewPin(pin: string): void {
  if (!NEW_PIN_PATTERN.test(pin)) throw new AvatarError('invalid_request', NEW_PIN_MESSAGE);
  const guessable = guessablePinReason(pin);
  if (guessable) throw new AvatarError('invalid_request', `This PIN is easy to guess: ${guessable}. Choose 6 to 8 digits with no pattern.`);
}

/** scrypt cost: N = 2^14 (≈16 MB, tens of ms), r = 8, p = 1; 16-byte salt, 32-byte hash. */
const SCRYPT = { N: 16_384, r: 8, p: 1, keyLen: 32, saltLen: 16 } as const;

function scrypt(pin: string, salt: Buffer, keyLen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(pin, salt, keyLen, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** A new salted hash of `pin` (random salt each time). */
export async function hashPin(pin: string): Promise<string> {
  if (!NEW_PIN_PATTERN.test(pin)) throw new AvatarError('invalid_request', NEW_PIN_MESSAGE);
  const salt = randomBytes(SCRYPT.saltLen);
  const hash = await scrypt(pin, salt, SCRYPT.keyLen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

/** Parse a stored hash; null when it is not one of ours (a config typo must not unlock anything). */
export function parsePinHash(stored: string): ParsedHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map((v) => Number(v)) as [number, number, number];
  const ok = (v: number, max: number) => Number.isInteger(v) && v >= 1 && v <= max;
  // Bounds keep a hostile config from asking for gigabytes of memory.
  if (!ok(N, 1 << 20) || (N & (N - 1)) !== 0 || N < 1024 || !ok(r, 32) || !ok(p, 16)) return null;
  const salt = Buffer.from(parts[4]!, 'base64');
  const hash = Buffer.from(parts[5]!, 'base64');
  if (salt.length < 8 || hash.length < 16 || hash.length > 64) return null;
  return { N, r, p, salt, hash };
}

export async function verifyPin(pin: string, stored: string): Promise<boolean> {
  const parsed = parsePinHash(stored);
  if (!parsed || !PIN_PATTERN.test(pin)) return false;
  const candidate = await scrypt(pin, parsed.salt, parsed.hash.length, { N: parsed.N, r: parsed.r, p: parsed.p, maxmem: 256 * parsed.N * parsed.r + 1024 * 1024 });
  return timingSafeEqual(candidate, parsed.hash);
}

export interface StaffPinOptions {
  clock: Clock;
  /** The hash in force (the policy's `staffPinHash`, else config.json's), or null before setup. */
  loadHash(): string | null;
  /** Persist a new hash (settings store). */
  saveHash(hash: string): Promise<void>;
  /** The administrator's policy sets the PIN: it cannot be changed here. */
  managedByPolicy?(): boolean;
  /** Why first-run setup may not open on this kiosk (a policy file exists, or names a PIN), else null:
   *  without a PIN the kiosk is then out of order rather than open to whoever stands at the screen. */
  setupBlocked?(): string | null;
  /** A session is running (creating … ending): the panel must not open. */
  isSessionRunning(): boolean;
  /** The persisted lock-out (anything unreadable counts as none), and where to keep it. Without them
   *  the lock-out lives in memory only (tests). */
  loadLockout?(): unknown;
  saveLockout?(record: LockoutRecord): void;
}

export interface StaffPin {
  state(): PinState;
  /** During setup (no PIN yet since start): sets it and opens the panel. Later: only with the panel unlocked. */
  setPin(pin: string): Promise<PinState>;
  /** No PIN has existed since start (or none exists and setup is blocked): the kiosk must not serve
   *  visitors — it shows the setup screen, or the out-of-order screen when setup is blocked. */
  setupPending(): boolean;
  /** Throws `unauthorized` (wrong PIN, says tries left), `locked` (says seconds left) or
   *  `invalid_request` (no PIN yet / a call is running). */
  unlock(pin: string): Promise<PinState>;
  lock(): void;
  /** Is the panel unlocked right now? A true answer refreshes the 60 s (call it for every staff call). */
  touch(): boolean;
  /** The last right PIN had fewer than 6 digits: staff should choose a new one. */
  readonly pinTooShort: boolean;
}

export function createStaffPin(options: StaffPinOptions): StaffPin {
  const { clock } = options;
  const loaded = lockoutRecordSchema.safeParse(options.loadLockout?.() ?? null);
  const record: LockoutRecord = loaded.success ? loaded.data : { failures: 0, level: 0, lockedUntilMs: 0 };
  // A clock set back must not turn a lock-out into years: never longer than its own step from now.
  if (record.lockedUntilMs > 0) {
    const step = PIN_LOCKOUT_STEPS_MS[Math.min(Math.max(record.level, 1), PIN_LOCKOUT_STEPS_MS.length) - 1]!;
    record.lockedUntilMs = Math.min(record.lockedUntilMs, clock.now() + step);
  }
  let attemptsLeft = Math.max(0, MAX_PIN_ATTEMPTS - record.failures);
  let lockedUntilMs = record.lockedUntilMs;
  let level = record.level;
  let pinTooShort = false;
  const persist = () => {
    try {
      options.saveLockout?.({ failures: MAX_PIN_ATTEMPTS - attemptsLeft, level, lockedUntilMs });
    } catch {
      // Keep counting in memory: a full disk must not open the pad.
    }
  };
  let unlockedAtMs: number | null = null; // time of the last staff call while unlocked
  let checking = false;
  const blocked = () => options.setupBlocked?.() ?? null;
  // Setup is open from start until a PIN first exists; it never reopens in this run. A managed kiosk
  // never opens it: its PIN comes from the administrator.
  let setupOpen = blocked() === null;

  const hasPin = () => {
    const stored = options.loadHash();
    const present = stored !== null && parsePinHash(stored) !== null;
    if (present) setupOpen = false;
    return present;
  };
  hasPin();

  function lockedForMs(): number {
    const left = lockedUntilMs - clock.now();
    if (left > 0) return left;
    if (lockedUntilMs !== 0) {
      // The lock-out is over: the tries come back (the next lock-out will be longer).
      lockedUntilMs = 0;
      attemptsLeft = MAX_PIN_ATTEMPTS;
      persist();
    }
    return 0;
  }

  function isUnlocked(): boolean {
    if (unlockedAtMs === null) return false;
    if (options.isSessionRunning() || clock.now() - unlockedAtMs >= STAFF_IDLE_MS) {
      unlockedAtMs = null;
      return false;
    }
    return true;
  }

  function state(): PinState {
    const locked = lockedForMs();
    const pinSet = hasPin();
    return { pinSet, unlocked: isUnlocked(), lockedForMs: locked, attemptsLeft: locked > 0 ? 0 : attemptsLeft, outOfOrder: pinSet ? null : blocked() };
  }

  return {
    state,
    setupPending() {
      return !hasPin() && (setupOpen || blocked() !== null);
    },
    async setPin(pin) {
      if (options.managedByPolicy?.()) throw new AvatarError('forbidden', "The staff PIN is set by the administrator's policy file; change it there.");
      const first = !hasPin();
      const why = first ? blocked() : null;
      if (why !== null) throw new AvatarError('forbidden', why);
      if (first && !setupOpen) {
        throw new AvatarError('unauthorized', 'No staff PIN is set, and a PIN can only be chosen on the setup screen at start. Set staffPinHash in the configuration and restart the kiosk.');
      }
      if (!first && !isUnlocked()) throw new AvatarError('unauthorized', 'Unlock the staff panel before changing the PIN.');
      checkNewPin(pin);
      await options.saveHash(await hashPin(pin));
      // Choosing the first PIN opens the panel: only the installer sees the setup screen, and goes on to
      // the settings. From here on the kiosk serves visitors, so setup closes for good.
      setupOpen = false;
      if (first) unlockedAtMs = clock.now();
      else if (unlockedAtMs !== null) unlockedAtMs = clock.now();
      attemptsLeft = MAX_PIN_ATTEMPTS;
      pinTooShort = false;
      return state();
    },
    async unlock(pin) {
      if (options.isSessionRunning()) throw new AvatarError('invalid_request', 'The staff panel cannot open during a call. Wait until the call has ended.');
      const locked = lockedForMs();
      if (locked > 0) throw new AvatarError('locked', `Too many wrong PINs. Try again in ${locked < 120_000 ? `${Math.ceil(locked / 1000)} s` : `${Math.ceil(locked / 60_000)} min`}.`);
      const stored = options.loadHash();
      if (stored === null || parsePinHash(stored) === null) throw new AvatarError('invalid_request', 'No staff PIN is set yet: choose one first.');
      // One check at a time: parallel guesses must not each see the same tries left.
      if (checking) throw new AvatarError('invalid_request', 'A PIN is being checked; try again.');
      checking = true;
      let good: boolean;
      try {
        good = await verifyPin(pin, stored);
      } finally {
        checking = false;
      }
      if (good) {
        const hadFailures = attemptsLeft !== MAX_PIN_ATTEMPTS || level !== 0;
        attemptsLeft = MAX_PIN_ATTEMPTS;
        level = 0;
        if (hadFailures) persist();
        unlockedAtMs = clock.now();
        pinTooShort = pin.length < NEW_PIN_MIN_DIGITS;
        return state();
      }
      attemptsLeft -= 1;
      if (attemptsLeft <= 0) {
        level = Math.min(level + 1, PIN_LOCKOUT_STEPS_MS.length);
        const stepMs = PIN_LOCKOUT_STEPS_MS[level - 1]!;
        lockedUntilMs = clock.now() + stepMs;
        attemptsLeft = 0;
        persist();
        throw new AvatarError('locked', `Too many wrong PINs. The pad is locked for ${describeMs(stepMs)}.`);
      }
      persist();
      throw new AvatarError('unauthorized', `Wrong PIN. ${attemptsLeft} ${attemptsLeft === 1 ? 'try' : 'tries'} left.`);
    },
    lock() {
      unlockedAtMs = null;
    },
    touch() {
      if (!isUnlocked()) return false;
      unlockedAtMs = clock.now();
      return true;
    },
    get pinTooShort() {
      return pinTooShort;
    },
  };
}

/** 60 s, 5 min, 2 h: how long a lock-out lasts, in words. */
function describeMs(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 2 * 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}
