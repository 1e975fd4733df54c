/**
 * The staff PIN (staff-pin.ts): a salted scrypt hash, and which stored hashes count as one; the first PIN
 * chosen once, on the setup screen, and setup that must stay shut afterwards; changing the PIN; unlocking,
 * the panel's 60 s, and a panel that must not reopen by itself; lock-outs that grow with each run of wrong
 * PINs and survive a relaunch, with the exact wording at their boundaries; old PINs shorter than today's
 * rule. Hashes made by `hashPin` use the production cost; `hashOf` uses scrypt's cheapest accepted cost
 * (N = 1024, r = 1) so each check takes about a millisecond.
 */
import { scryptSync } from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../helpers/fake-clock.ts';
import { AvatarError } from '../../../electron/core/errors.ts';
import {
  createStaffPin,
  guessablePinReason,
  hashPin,
  parsePinHash,
  verifyPin,
  PIN_LOCKOUT_MS,
  STAFF_IDLE_MS,
  type LockoutRecord,
  type StaffPinOptions,
} from '../../../electron/operations/staff-pin.ts';

/** A hash made before new PINs needed 6 digits (hashPin refuses 4 digits now). */
function legacyHash(pin: string): string {
  const salt = Buffer.from('0123456789abcdef');
  return ['scrypt', 16384, 8, 1, salt.toString('base64'), scryptSync(pin, salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64')].join('$');
}

interface HashShape {
  N?: number;
  r?: number;
  p?: number;
  saltBytes?: number;
  hashBytes?: number;
}

/** A stored hash as an installer's tool would write it (any PIN text, any accepted cost). */
function hashOf(pin: string, shape: HashShape = {}): string {
  const { N = 1024, r = 1, p = 1, saltBytes = 16, hashBytes = 32 } = shape;
  const salt = Buffer.alloc(saltBytes, 7);
  return ['scrypt', N, r, p, salt.toString('base64'), scryptSync(pin, salt, hashBytes, { N, r, p }).toString('base64')].join('$');
}

/** A hash of the right form whose digest is just `hashBytes` bytes (parse checks only, never verified). */
function shaped(shape: HashShape): string {
  const { N = 1024, r = 1, p = 1, saltBytes = 16, hashBytes = 32 } = shape;
  return ['scrypt', N, r, p, Buffer.alloc(saltBytes, 1).toString('base64'), Buffer.alloc(hashBytes, 2).toString('base64')].join('$');
}

/** A StaffPin over a stored hash, with an in-memory lock-out store only when one is given. */
function setup(initialHash: string | null = null, lockout?: { record: LockoutRecord | null }) {
  const clock = new FakeClock();
  let stored: string | null = initialHash;
  let running = false;
  const saved: string[] = [];
  const pin = createStaffPin({
    clock,
    loadHash: () => stored,
    saveHash: async (h) => {
      stored = h;
      saved.push(h);
    },
    isSessionRunning: () => running,
    ...(lockout
      ? {
          loadLockout: () => lockout.record,
          saveLockout: (r: LockoutRecord) => void (lockout.record = { ...r }),
        }
      : {}),
  });
  return { clock, pin, saved, setRunning: (v: boolean) => (running = v), stored: () => stored, setStored: (h: string | null) => (stored = h) };
}

/** A StaffPin whose hash, lock-out record and options the test chooses; it counts lock-out writes. */
function setupWith(over: Partial<StaffPinOptions> & { hash?: string | null; record?: LockoutRecord | null; startMs?: number } = {}) {
  const { hash = null, record = null, startMs, ...rest } = over;
  const clock = new FakeClock(startMs);
  const store = { hash, record, lockoutWrites: 0 };
  let running = false;
  const pin = createStaffPin({
    clock,
    loadHash: () => store.hash,
    saveHash: async (h) => void (store.hash = h),
    isSessionRunning: () => running,
    loadLockout: () => store.record,
    saveLockout: (r) => {
      store.lockoutWrites += 1;
      store.record = { ...r };
    },
    ...rest,
  });
  return { clock, pin, store, setRunning: (v: boolean) => (running = v) };
}

async function rejects(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof AvatarError && e.code === code && message.test(e.message));
}

/** The code and message of a rejection, for exact comparison. */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AvatarError, String(e));
    return `${e.code}: ${e.message}`;
  }
  assert.fail('expected a rejection');
}

describe('the stored PIN hash', () => {
  it('is salted scrypt: the same PIN hashes differently, verifies, and the PIN is not in it', async () => {
    const a = await hashPin('246813');
    const b = await hashPin('246813');
    assert.notEqual(a, b);
    assert.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.ok(!a.includes('246813'));
    assert.equal(await verifyPin('246813', a), true);
    assert.equal(await verifyPin('246814', a), false);
    assert.equal(await verifyPin('246813', b), true);
  });
  it('verifies at the cost the hash names, not at a default cost', async () => {
    // N = 1024, r = 1 also needs the memory allowance to be above what scrypt uses, never below zero.
    const stored = hashOf('482915');
    assert.equal(await verifyPin('482915', stored), true);
    assert.equal(await verifyPin('482916', stored), false);
    const wide = hashOf('482915', { N: 2048, r: 2, p: 2, saltBytes: 8, hashBytes: 16 });
    assert.equal(await verifyPin('482915', wide), true);
  });
  it('refuses malformed or hostile stored hashes (never unlocks)', async () => {
    for (const bad of ['', '246813', 'scrypt$16384$8$1$c2FsdA==', 'bcrypt$16384$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==', 'scrypt$1073741824$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==', 'scrypt$1000$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==']) {
      assert.equal(parsePinHash(bad), null, bad);
      assert.equal(await verifyPin('246813', bad), false);
    }
  });
  it('accepts the cheapest and the dearest cost it allows, and their exact salt and digest sizes', () => {
    assert.deepEqual(parsePinHash(shaped({ N: 1024, r: 1, p: 1 })), { N: 1024, r: 1, p: 1, salt: Buffer.alloc(16, 1), hash: Buffer.alloc(32, 2) });
    const dear = parsePinHash(shaped({ N: 1 << 20, r: 32, p: 16 }));
    assert.deepEqual([dear?.N, dear?.r, dear?.p], [1 << 20, 32, 16]);
    assert.equal(parsePinHash(shaped({ saltBytes: 8 }))?.salt.length, 8);
    assert.equal(parsePinHash(shaped({ hashBytes: 16 }))?.hash.length, 16);
    assert.equal(parsePinHash(shaped({ hashBytes: 64 }))?.hash.length, 64);
  });
  it('refuses costs outside the bounds (a hostile config must not ask for gigabytes) and short salts or odd digests', () => {
    const refused: Record<string, HashShape> = {
      'N below 1024': { N: 512 },
      'N not a power of two': { N: 3072 },
      'N a fraction': { N: 1024.5 },
      'N above 2^20': { N: 1 << 21 },
      'r zero': { r: 0 },
      'r negative': { r: -1 },
      'r above 32': { r: 33 },
      'p zero': { p: 0 },
      'p above 16': { p: 17 },
      'p a fraction': { p: 1.5 },
      'salt of 7 bytes': { saltBytes: 7 },
      'digest of 15 bytes': { hashBytes: 15 },
      'digest of 65 bytes': { hashBytes: 65 },
    };
    for (const [why, shape] of Object.entries(refused)) assert.equal(parsePinHash(shaped(shape)), null, why);
  });
  it('rejects new PINs that are not 6–8 digits (4 digits fall to a USB key injector in about a day)', async () => {
    for (const bad of ['123', '1234', '12345', '123456789', '12a456', '']) await rejects(hashPin(bad), 'invalid_request', /^The PIN must be 6 to 8 digits\.$/);
  });
  it('only 4 to 8 digits are ever tried, even when the stored hash was made from something else', async () => {
    // The pad has digits only; a hash hand-made from other text must not open it through IPC.
    for (const typed of ['123456789', 'ab123456', '1234567\n', ' 1234']) {
      assert.equal(await verifyPin(typed, hashOf(typed)), false, JSON.stringify(typed));
    }
    assert.equal(await verifyPin('1234', hashOf('1234')), true);
    assert.equal(await verifyPin('12345678', hashOf('12345678')), true);
  });
});

describe('StaffPin', () => {
  describe('setting the first PIN (setup)', () => {
    it('first use: no PIN, setting one stores only a hash and opens the panel', async () => {
      const { pin, saved } = setup();
      assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
      await rejects(pin.unlock('470258'), 'invalid_request', /No staff PIN is set/);
      const s = await pin.setPin('470258');
      assert.deepEqual(s, { pinSet: true, unlocked: true, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
      assert.equal(saved.length, 1);
      assert.equal(await verifyPin('470258', saved[0]!), true);
    });
    it('refuses a guessable PIN at setup and says why: repeats, runs, repeated blocks, the most common ones', async () => {
      const { pin, saved } = setup();
      const refusals: Array<[string, string]> = [];
      for (const guessable of ['123456', '111111', '00000000', '654321', '7890123', '98765432', '121212', '123123', '12341234', '112233', '159753', '696969']) {
        try {
          await pin.setPin(guessable);
          refusals.push([guessable, 'accepted']);
        } catch (error) {
          refusals.push([guessable, (error as Error).message.replace(/^This PIN is easy to guess: (.*)\. Choose 6 to 8 digits with no pattern\.$/, '$1')]);
        }
      }
      assert.deepEqual(refusals, [
        ['123456', 'it is a run of digits'],
        ['111111', 'it is one digit repeated'],
        ['00000000', 'it is one digit repeated'],
        ['654321', 'it is a run of digits'],
        ['7890123', 'it is a run of digits'],
        ['98765432', 'it is a run of digits'],
        ['121212', 'it repeats a short block of digits'],
        ['123123', 'it repeats a short block of digits'],
        ['12341234', 'it repeats a short block of digits'],
        ['112233', 'it is one of the most common PINs'],
        ['159753', 'it is one of the most common PINs'],
        ['696969', 'it repeats a short block of digits'],
      ]);
      assert.equal(saved.length, 0, 'nothing stored');
      assert.equal(guessablePinReason('470258'), null);
      assert.equal(guessablePinReason('246813'), null);
      await pin.setPin('470258');
      assert.equal(saved.length, 1);
    });
    it('a first PIN of the wrong length is refused as invalid, and setup stays open for a good one', async () => {
      const { pin, store } = setupWith();
      assert.equal(await failure(pin.setPin('12345')), 'invalid_request: The PIN must be 6 to 8 digits.');
      assert.equal(store.hash, null);
      assert.equal(pin.setupPending(), true);
    });
    it('a stored value that is not a hash is no PIN: setup stays pending and unlock asks for one, counting no try', async () => {
      const { pin, store } = setupWith({ hash: 'scrypt$oops' });
      assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
      assert.equal(pin.setupPending(), true);
      assert.equal(await failure(pin.unlock('123456')), 'invalid_request: No staff PIN is set yet: choose one first.');
      assert.equal(pin.state().attemptsLeft, 5);
      assert.equal(store.lockoutWrites, 0);
    });
    it('setup is open only until a PIN first exists: afterwards a missing PIN cannot be chosen without the old one', async () => {
      // A visitor who could choose the PIN would own the kiosk; the attract screen shows only once a PIN
      // exists, so a PIN vanishing later (config.json edited, the policy's hash removed) must not reopen setup.
      const { pin, saved, setStored } = setup();
      assert.equal(pin.setupPending(), true);
      await pin.setPin('246813');
      assert.equal(pin.setupPending(), false);
      pin.lock();
      setStored(null);
      assert.equal(pin.setupPending(), false, 'setup does not reopen');
      await rejects(pin.setPin('111111'), 'unauthorized', /can only be chosen on the setup screen at start/);
      assert.equal(saved.length, 1);
      assert.equal(pin.state().unlocked, false);
    });
    it('choosing the first PIN closes setup for good, even if the store then loses it', async () => {
      const { pin } = setupWith({ saveHash: async () => undefined }); // a store that keeps nothing
      const s = await pin.setPin('246802');
      assert.equal(s.pinSet, false);
      assert.equal(s.unlocked, true, 'the installer goes on to the settings');
      assert.equal(pin.setupPending(), false);
      pin.lock();
      assert.match(await failure(pin.setPin('111111')), /^unauthorized: No staff PIN is set, and a PIN can only be chosen/);
    });
    it('a kiosk that starts with a PIN never offers setup, even if the PIN later goes missing', async () => {
      const { pin, saved, setStored } = setup(await hashPin('999999'));
      assert.equal(pin.setupPending(), false);
      setStored(null);
      await rejects(pin.setPin('135790'), 'unauthorized', /can only be chosen on the setup screen at start/);
      assert.equal(saved.length, 0);
      assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
    });
    it('with setup blocked and no PIN, the kiosk is out of order: setup is pending, and choosing a PIN is forbidden with the reason', async () => {
      const why = 'A policy file exists, but names no staff PIN.';
      const { pin, store } = setupWith({ setupBlocked: () => why });
      assert.equal(pin.setupPending(), true);
      assert.deepEqual(pin.state(), { pinSet: false, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: why });
      assert.equal(await failure(pin.setPin('246802')), `forbidden: ${why}`);
      assert.equal(store.hash, null);
    });
    it('setup blocked at start does not open later when the block goes away (the kiosk may have served visitors)', async () => {
      let why: string | null = 'A policy file exists.';
      const { pin, store } = setupWith({ setupBlocked: () => why });
      assert.equal(pin.setupPending(), true);
      why = null;
      assert.equal(pin.setupPending(), false);
      assert.equal(await failure(pin.setPin('246802')), 'unauthorized: No staff PIN is set, and a PIN can only be chosen on the setup screen at start. Set staffPinHash in the configuration and restart the kiosk.');
      assert.equal(store.hash, null);
    });
  });

  describe('changing the PIN', () => {
    it('a PIN from config unlocks; changing it later needs the panel unlocked', async () => {
      const { pin, saved } = setup(await hashPin('999999'));
      await rejects(pin.setPin('583016'), 'unauthorized', /Unlock the staff panel/);
      assert.equal(saved.length, 0);
      assert.equal((await pin.unlock('999999')).unlocked, true);
      await pin.setPin('583016');
      assert.equal(await verifyPin('583016', saved[0]!), true);
      pin.lock();
      assert.equal(pin.state().unlocked, false);
    });
    it('a policy-managed PIN cannot be changed here, even with the panel open', async () => {
      const { pin, store } = setupWith({ hash: hashOf('135799'), managedByPolicy: () => true });
      await pin.unlock('135799');
      const before = store.hash;
      assert.equal(await failure(pin.setPin('246802')), "forbidden: The staff PIN is set by the administrator's policy file; change it there.");
      assert.equal(store.hash, before);
    });
    it('changing the PIN refreshes the panel\'s 60 s', async () => {
      const { pin, clock } = setupWith({ hash: hashOf('246802') });
      await pin.unlock('246802');
      await clock.advance(59_000);
      await pin.setPin('13579135');
      await clock.advance(59_000);
      assert.equal(pin.state().unlocked, true, '59 s after the change');
      await clock.advance(1_000);
      assert.equal(pin.state().unlocked, false, '60 s after the change');
    });
    it('a panel locked while the new PIN is being saved stays locked', async () => {
      const { pin, store } = setupWith({ hash: hashOf('246802') });
      await pin.unlock('246802');
      const changing = pin.setPin('13579135');
      pin.lock(); // staff walked away (or the idle timer closed it) during the save
      const s = await changing;
      assert.equal(s.unlocked, false);
      assert.equal(await verifyPin('13579135', store.hash!), true);
      assert.equal(pin.touch(), false);
    });
  });

  describe('unlocking', () => {
    it('a fresh kiosk is not unlocked even when its clock reads near zero', () => {
      // A monotonic clock starts at 0: "never unlocked" must not read as "unlocked a moment ago".
      const { pin } = setupWith({ hash: hashOf('246802'), startMs: 0 });
      assert.equal(pin.state().unlocked, false);
      assert.equal(pin.touch(), false);
    });
    it('a right PIN resets the count of wrong tries', async () => {
      const { pin } = setup(await hashPin('246813'));
      await assert.rejects(pin.unlock('1111'));
      await assert.rejects(pin.unlock('1111'));
      assert.equal(pin.state().attemptsLeft, 3);
      await pin.unlock('246813');
      assert.equal(pin.state().attemptsLeft, 5);
    });
    it('a right PIN after wrong tries clears the stored count; a right PIN with none writes nothing', async () => {
      const { pin, store } = setupWith({ hash: hashOf('246802') });
      await pin.unlock('246802');
      assert.deepEqual([store.lockoutWrites, store.record], [0, null], 'nothing to clear');
      pin.lock();
      await assert.rejects(pin.unlock('000000'));
      await assert.rejects(pin.unlock('000000'));
      assert.deepEqual(store.record, { failures: 2, level: 0, lockedUntilMs: 0 });
      await pin.unlock('246802');
      assert.deepEqual(store.record, { failures: 0, level: 0, lockedUntilMs: 0 });
      assert.equal(store.lockoutWrites, 3);
    });
    it('two PIN checks at once: the second is turned away without costing a try', async () => {
      const { pin } = setupWith({ hash: hashOf('246802') });
      const first = pin.unlock('000000');
      assert.equal(await failure(pin.unlock('111111')), 'invalid_request: A PIN is being checked; try again.');
      assert.equal(await failure(first), 'unauthorized: Wrong PIN. 4 tries left.');
      // Once the first check is over, the next one is heard.
      assert.equal(await failure(pin.unlock('111111')), 'unauthorized: Wrong PIN. 3 tries left.');
    });
    it('unlocking is refused during a call, and a call starting closes the panel', async () => {
      const { pin, setRunning } = setup(await hashPin('246813'));
      setRunning(true);
      await rejects(pin.unlock('246813'), 'invalid_request', /cannot open during a call/);
      assert.equal(pin.state().attemptsLeft, 5, 'a refused unlock is not a wrong try');
      setRunning(false);
      await pin.unlock('246813');
      setRunning(true);
      assert.equal(pin.touch(), false);
      setRunning(false);
      assert.equal(pin.touch(), false, 'stays locked after the call');
    });
    it('the unlock is forgotten 60 s after the last staff call; each call refreshes it', async () => {
      const { pin, clock } = setup(await hashPin('246813'));
      await pin.unlock('246813');
      await clock.advance(STAFF_IDLE_MS - 1);
      assert.equal(pin.touch(), true);
      await clock.advance(STAFF_IDLE_MS - 1);
      assert.equal(pin.state().unlocked, true);
      await clock.advance(1);
      assert.equal(pin.state().unlocked, false);
      assert.equal(pin.touch(), false);
    });
  });

  describe('lock-out after wrong PINs', () => {
    it('5 wrong tries lock the pad for 60 s, saying tries and seconds left; then the tries come back', async () => {
      const { pin, clock } = setup(await hashPin('246813'));
      const messages: string[] = [];
      for (let i = 0; i < 4; i++) {
        await assert.rejects(pin.unlock('0000'), (e: AvatarError) => (messages.push(`${e.code}: ${e.message}`), true));
      }
      assert.deepEqual(messages, [
        'unauthorized: Wrong PIN. 4 tries left.',
        'unauthorized: Wrong PIN. 3 tries left.',
        'unauthorized: Wrong PIN. 2 tries left.',
        'unauthorized: Wrong PIN. 1 try left.',
      ]);
      await rejects(pin.unlock('0000'), 'locked', /locked for 60 s/);
      assert.deepEqual(pin.state(), { pinSet: true, unlocked: false, lockedForMs: PIN_LOCKOUT_MS, attemptsLeft: 0, outOfOrder: null });
      // Even the right PIN is refused while locked.
      await clock.advance(20_500);
      await rejects(pin.unlock('246813'), 'locked', /Try again in 40 s/);
      await clock.advance(39_500);
      assert.deepEqual(pin.state(), { pinSet: true, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
      assert.equal((await pin.unlock('246813')).unlocked, true);
      assert.equal(clock.pendingCount, 0);
    });
    it('each lock-out in a row is longer: 1 min, 5 min, 30 min, 2 h (then 2 h again); a right PIN starts over', async () => {
      const store = { record: null as LockoutRecord | null };
      const { pin, clock } = setup(await hashPin('246813'), store);
      const lockFor = async (): Promise<string> => {
        for (let i = 0; i < 4; i++) await assert.rejects(pin.unlock('0000'));
        let message = '';
        await assert.rejects(pin.unlock('0000'), (e: AvatarError) => ((message = e.message), e.code === 'locked'));
        return message;
      };
      const seen: Array<[string, number]> = [];
      for (let i = 0; i < 5; i++) {
        const message = await lockFor();
        const lockedForMs = pin.state().lockedForMs;
        seen.push([message, lockedForMs]);
        await clock.advance(lockedForMs);
      }
      assert.deepEqual(seen, [
        ['Too many wrong PINs. The pad is locked for 60 s.', 60_000],
        ['Too many wrong PINs. The pad is locked for 5 min.', 300_000],
        ['Too many wrong PINs. The pad is locked for 30 min.', 1_800_000],
        ['Too many wrong PINs. The pad is locked for 2 h.', 7_200_000],
        ['Too many wrong PINs. The pad is locked for 2 h.', 7_200_000],
      ]);
      assert.equal((await pin.unlock('246813')).unlocked, true);
      assert.deepEqual(store.record, { failures: 0, level: 0, lockedUntilMs: 0 });
      pin.lock();
      assert.equal(await lockFor(), 'Too many wrong PINs. The pad is locked for 60 s.');
    });
    it('the wait is said in seconds under 2 min and in whole minutes from 2 min', async () => {
      const { clock } = setupWith();
      const now = clock.now();
      const said = async (leftMs: number): Promise<string> => {
        const { pin } = setupWith({ hash: hashOf('246802'), record: { failures: 5, level: 2, lockedUntilMs: now + leftMs } });
        return failure(pin.unlock('246802'));
      };
      assert.equal(await said(300_000), 'locked: Too many wrong PINs. Try again in 5 min.');
      assert.equal(await said(120_001), 'locked: Too many wrong PINs. Try again in 3 min.');
      assert.equal(await said(120_000), 'locked: Too many wrong PINs. Try again in 2 min.');
      assert.equal(await said(119_999), 'locked: Too many wrong PINs. Try again in 120 s.');
      assert.equal(await said(1), 'locked: Too many wrong PINs. Try again in 1 s.');
    });
    it('the lock-out survives a relaunch (a new StaffPin over the same store), and so do the wrong tries', async () => {
      const hash = await hashPin('246813');
      const store = { record: null as LockoutRecord | null };
      const first = setup(hash, store);
      for (let i = 0; i < 3; i++) await assert.rejects(first.pin.unlock('0000'));
      // Pulling the plug does not give the guesser fresh tries.
      const second = setup(hash, store); // its clock starts where the first one stands
      assert.equal(second.clock.now(), first.clock.now());
      assert.equal(second.pin.state().attemptsLeft, 2);
      await assert.rejects(second.pin.unlock('0000'));
      await rejects(second.pin.unlock('0000'), 'locked', /locked for 60 s/);
      const third = setup(hash, store);
      await third.clock.advance(10_000);
      assert.deepEqual(third.pin.state(), { pinSet: true, unlocked: false, lockedForMs: 50_000, attemptsLeft: 0, outOfOrder: null });
      await rejects(third.pin.unlock('246813'), 'locked', /Try again in 50 s/);
    });
    it('a relaunch inside a lock-out shows no tries left, whatever the stored count of wrong tries', () => {
      const { clock } = setupWith();
      const { pin } = setupWith({ hash: hashOf('246802'), record: { failures: 2, level: 1, lockedUntilMs: clock.now() + 30_000 } });
      assert.deepEqual(pin.state(), { pinSet: true, unlocked: false, lockedForMs: 30_000, attemptsLeft: 0, outOfOrder: null });
    });
    it('a stored lock-out that is not ours counts as none; a clock set back cannot stretch it past its step', async () => {
      const hash = await hashPin('246813');
      const broken = setup(hash, { record: { failures: 'x' } as never });
      assert.deepEqual(broken.pin.state(), { pinSet: true, unlocked: false, lockedForMs: 0, attemptsLeft: 5, outOfOrder: null });
      const far = setup(hash, { record: { failures: 5, level: 2, lockedUntilMs: 10 ** 13 } });
      assert.equal(far.pin.state().lockedForMs, 300_000, 'at most the 5 min of its step');
    });
  });

  describe('PINs shorter than today\'s rule', () => {
    it('a 4-digit PIN from before still unlocks, and is flagged so staff change it', async () => {
      const { pin } = setup(legacyHash('4321'));
      assert.equal(pin.pinTooShort, false);
      assert.equal((await pin.unlock('4321')).unlocked, true);
      assert.equal(pin.pinTooShort, true);
      await pin.setPin('43219876');
      assert.equal(pin.pinTooShort, false);
    });
    it('a 6-digit PIN is long enough; a 5-digit one from before is flagged', async () => {
      const six = setupWith({ hash: hashOf('246802') });
      await six.pin.unlock('246802');
      assert.equal(six.pin.pinTooShort, false);
      const five = setupWith({ hash: hashOf('24680') });
      await five.pin.unlock('24680');
      assert.equal(five.pin.pinTooShort, true);
    });
  });
});
