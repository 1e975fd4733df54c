/**
 * The staff PIN pad's rules, without Electron:
 * - The PIN is kept only as a salted scrypt hash (`scrypt$N$r$p$<salt b64>$<hash b64>`), set on first use
 *   or given in config.json (`staffPinHash`, made with `npm run --silent cli -- pin-hash`).
 * - 5 wrong tries lock the pad for 60 s; the tries come back after the lock-out.
 * - Unlocking is refused while a session runs (the panel never opens during a call).
 * - An unlocked panel is forgotten 60 s after the last staff call (each staff call refreshes it).
 *
 * Time comes from the injected clock and is only compared, never waited on: nothing is left pending.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { PinState } from '../contract.ts';
import type { Clock } from '../core/clock.ts';
import { AvatarError } from '../core/errors.ts';

export const MAX_PIN_ATTEMPTS = 5;
export const PIN_LOCKOUT_MS = 60_000;
export const STAFF_IDLE_MS = 60_000;
const PIN_PATTERN = /^[0-9]{4,8}$/;
/** scrypt cost: N = 2^14 (≈16 MB, tens of ms), r = 8, p = 1; 16-byte salt, 32-byte hash. */
const SCRYPT = { N: 16_384, r: 8, p: 1, keyLen: 32, saltLen: 16 } as const;

function scrypt(pin: string, salt: Buffer, keyLen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(pin, salt, keyLen, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** A new salted hash of `pin` (random salt each time). */
export async function hashPin(pin: string): Promise<string> {
  if (!PIN_PATTERN.test(pin)) throw new AvatarError('invalid_request', 'The PIN must be 4 to 8 digits.');
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
  /** The stored hash (config `staffPinHash`), or null before first use. */
  loadHash(): string | null;
  /** Persist a new hash (settings store). */
  saveHash(hash: string): Promise<void>;
  /** A session is running (creating … ending): the panel must not open. */
  isSessionRunning(): boolean;
}

export interface StaffPin {
  state(): PinState;
  /** First use: anyone may set it. Later: only with the panel unlocked. */
  setPin(pin: string): Promise<PinState>;
  /** Throws `unauthorized` (wrong PIN, says tries left), `locked` (says seconds left) or
   *  `invalid_request` (no PIN yet / a call is running). */
  unlock(pin: string): Promise<PinState>;
  lock(): void;
  /** Is the panel unlocked right now? A true answer refreshes the 60 s (call it for every staff call). */
  touch(): boolean;
}

export function createStaffPin(options: StaffPinOptions): StaffPin {
  const { clock } = options;
  let attemptsLeft = MAX_PIN_ATTEMPTS;
  let lockedUntilMs = 0;
  let unlockedAtMs: number | null = null; // time of the last staff call while unlocked
  let checking = false;

  const hasPin = () => {
    const stored = options.loadHash();
    return stored !== null && parsePinHash(stored) !== null;
  };

  function lockedForMs(): number {
    const left = lockedUntilMs - clock.now();
    if (left > 0) return left;
    if (lockedUntilMs !== 0) {
      // The lock-out is over: the tries come back.
      lockedUntilMs = 0;
      attemptsLeft = MAX_PIN_ATTEMPTS;
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
    return { pinSet: hasPin(), unlocked: isUnlocked(), lockedForMs: locked, attemptsLeft: locked > 0 ? 0 : attemptsLeft };
  }

  return {
    state,
    async setPin(pin) {
      if (hasPin() && !isUnlocked()) throw new AvatarError('unauthorized', 'Unlock the staff panel before changing the PIN.');
      if (!PIN_PATTERN.test(pin)) throw new AvatarError('invalid_request', 'The PIN must be 4 to 8 digits.');
      const first = !hasPin();
      await options.saveHash(await hashPin(pin));
      // Choosing the first PIN opens the panel (the person just proved nothing, but nothing was protected yet).
      if (first) unlockedAtMs = clock.now();
      else if (unlockedAtMs !== null) unlockedAtMs = clock.now();
      attemptsLeft = MAX_PIN_ATTEMPTS;
      return state();
    },
    async unlock(pin) {
      if (options.isSessionRunning()) throw new AvatarError('invalid_request', 'The staff panel cannot open during a call. Wait until the call has ended.');
      const locked = lockedForMs();
      if (locked > 0) throw new AvatarError('locked', `Too many wrong PINs. Try again in ${Math.ceil(locked / 1000)} s.`);
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
        attemptsLeft = MAX_PIN_ATTEMPTS;
        unlockedAtMs = clock.now();
        return state();
      }
      attemptsLeft -= 1;
      if (attemptsLeft <= 0) {
        lockedUntilMs = clock.now() + PIN_LOCKOUT_MS;
        attemptsLeft = 0;
        throw new AvatarError('locked', `Too many wrong PINs. The pad is locked for ${PIN_LOCKOUT_MS / 1000} s.`);
      }
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
  };
}
